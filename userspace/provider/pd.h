// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains. */
#ifndef SOFTRNIC_PD_H
#define SOFTRNIC_PD_H

#include <cstdint>

#include "object.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

class pd final : public verbs_object<pd, ibv_pd>
{
public:
	pd() noexcept = default;

	/* the kernel's PD number (softrnic_alloc_pd_resp::pdn), for
	 * diagnostics and the later MR/QP verbs */
	uint32_t pdn() const noexcept { return pdn_; }
	void set_pdn(uint32_t pdn) noexcept { pdn_ = pdn; }

private:
	uint32_t pdn_ = 0;
};

ibv_pd *alloc_pd(ibv_context *ctx) noexcept;
int dealloc_pd(ibv_pd *ibpd) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_PD_H */
