// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions and memory windows.  The kernel owns the key tables; the
 * provider only runs the commands.  Binding a type 1 window (ibv_bind_mw)
 * is a BIND_MW send WQE on the QP, as in rdma-core's software providers:
 * the window's new rkey keeps its index and gets the next key byte
 * (ibv_inc_rkey), and mw->rkey takes that value as soon as the WQE is
 * posted; an application that gets an error completion for the bind has
 * to undo it, as the verbs documentation says.
 */
#ifndef SOFTRNIC_MR_H
#define SOFTRNIC_MR_H

#include <cstddef>
#include <cstdint>

#include "object.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

class mr final : public verbs_object<mr, verbs_mr>
{
public:
	mr() noexcept = default;
};

class mw final : public verbs_object<mw, ibv_mw>
{
public:
	mw() noexcept = default;
};

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access) noexcept;
int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr, size_t length, int access) noexcept;
int dereg_mr(verbs_mr *vmr) noexcept;
ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type) noexcept;
int dealloc_mw(ibv_mw *ibmw) noexcept;
int bind_mw(ibv_qp *ibqp, ibv_mw *ibmw, ibv_mw_bind *bind) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_MR_H */
