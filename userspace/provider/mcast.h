// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* UD multicast attach/detach (RoCE): verbs_context_ops entries. */
#ifndef SOFTRNIC_PROVIDER_MCAST_H
#define SOFTRNIC_PROVIDER_MCAST_H

#include <cstdint>

#include "verbs_provider_abi.h"

namespace softrnic
{

int attach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid) noexcept;
int detach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid) noexcept;

} // namespace softrnic

#endif
