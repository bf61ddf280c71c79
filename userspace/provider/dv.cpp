// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnicdv.h: the provider's only exported symbols (version node
 * SOFTRNICDV_1.0 in libsoftrnic.map).  Built into the plugin module, not
 * into softrnic_provider_core: the logic is there (qp.cpp, send_queue.cpp,
 * covered by the unit tests), this is the C entry point.
 */
#include "softrnicdv.h"

#include "qp.h"

extern "C" __attribute__((visibility("default"))) void
softrnicdv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
		    uint8_t type, uint8_t level)
{
	softrnic::dv_wr_flush(qp, rkey, remote_addr, uint64_t{len}, type, level);
}
