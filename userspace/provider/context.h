// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The per-open-device context.
 *
 * libibverbs allocates the memory that holds its verbs_context (it must, to
 * initialise its private part before we run), so the context is split:
 *
 *   context_shell   plain C record, calloc()ed by _verbs_init_and_alloc_context,
 *                   freed by us: the verbs_context plus a pointer to
 *   context         an ordinary C++ object (new/delete, RAII members) holding
 *                   everything the provider keeps per context: what the
 *                   kernel told us at GET_CONTEXT now; later the ring mmap
 *                   bookkeeping for CQs/QPs/SRQs.
 *
 * context::from_ibv() gets from any ibv_context libibverbs gives us back to
 * our object.
 */
#ifndef SOFTRNIC_CONTEXT_H
#define SOFTRNIC_CONTEXT_H

#include <cstdint>
#include <memory>

#include "attr.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

class context;

struct context_shell {
	verbs_context vctx; /* first: _verbs_init_and_alloc_context is told offset 0 */
	context *self;
};

/* Undoes a context_shell in the right order: our object, then libibverbs'
 * part (closes cmd_fd/async_fd, drops the device reference), then memory. */
struct context_shell_deleter {
	void operator()(context_shell *shell) const noexcept;
};
using context_shell_ptr = std::unique_ptr<context_shell, context_shell_deleter>;

class context
{
public:
	context(context_shell &shell, const ucontext_params &params) noexcept;
	context(const context &) = delete;
	context &operator=(const context &) = delete;

	static context *from_ibv(ibv_context *ctx) noexcept;
	static context_shell *shell_of(ibv_context *ctx) noexcept;

	verbs_context *vctx() noexcept { return &shell_.vctx; }
	ibv_context *ibv() noexcept { return &shell_.vctx.context; }

	link_type link() const noexcept { return params_.link; }
	uint32_t page_size() const noexcept { return params_.page_size; }

private:
	context_shell &shell_;
	ucontext_params params_;
};

/* verbs_device_ops::alloc_context */
verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd, void *private_data) noexcept;

/* verbs_context_ops members implemented in context.cpp */
void free_context(ibv_context *ctx) noexcept;
int query_device_ex(ibv_context *ctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, size_t attr_size) noexcept;
int query_port(ibv_context *ctx, uint8_t port_num, ibv_port_attr *port_attr) noexcept;

/* The full operation table (ops.cpp). */
extern const verbs_context_ops context_ops;

} // namespace softrnic

#endif /* SOFTRNIC_CONTEXT_H */
