// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles (RoCE UD).  The kernel keeps the address vector; a UD
 * send WQE names it by the AH number it returned at create_ah.
 */
#ifndef SOFTRNIC_AH_H
#define SOFTRNIC_AH_H

#include <cstdint>

#include "object.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

class ah final : public verbs_object<ah, ibv_ah>
{
public:
	explicit ah(uint32_t ah_num = 0) noexcept : ah_num_(ah_num) {}

	/* softrnic_create_ah_resp::ah_num, what UD WQEs carry */
	uint32_t ah_num() const noexcept { return ah_num_; }
	void set_ah_num(uint32_t n) noexcept { ah_num_ = n; }

private:
	uint32_t ah_num_;
};

ibv_ah *create_ah(ibv_pd *pd, ibv_ah_attr *attr) noexcept;
int destroy_ah(ibv_ah *ibah) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_AH_H */
