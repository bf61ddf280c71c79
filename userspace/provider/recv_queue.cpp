// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "recv_queue.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

namespace softrnic
{

static_assert(sizeof(softrnic_rqe) == 16 && sizeof(softrnic_sge) == sizeof(ibv_sge));

recv_queue::recv_queue(ring r, uint32_t max_sge) noexcept : prod_(std::move(r))
{
	const uint32_t slot = prod_.get().slot_size();
	const uint32_t room = slot > sizeof(softrnic_rqe) ? slot - sizeof(softrnic_rqe) : 0;

	max_sge_ = std::min<uint32_t>(max_sge, room / sizeof(softrnic_sge));
}

int recv_queue::post(ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	int err = 0;

	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > max_sge_) {
			err = EINVAL;
			break;
		}
		void *slot = prod_.reserve();
		if (!slot) {
			err = ENOMEM;
			break;
		}
		auto *h = new (slot) softrnic_rqe{};
		h->wr_id = wr->wr_id;
		h->num_sge = static_cast<uint16_t>(wr->num_sge);
		if (wr->num_sge)
			std::memcpy(h + 1, wr->sg_list, wr->num_sge * sizeof(softrnic_sge));
		prod_.commit();
	}
	prod_.publish();
	if (err)
		*bad_wr = wr;
	return err;
}

} // namespace softrnic
