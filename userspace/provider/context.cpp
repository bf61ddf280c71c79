// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "context.h"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "entry.h"
#include "log.h"
#include "softrnic-abi.h"
#include "uverbs_cmd.h"

namespace softrnic
{

static_assert(std::is_standard_layout_v<context_shell>);
static_assert(offsetof(context_shell, vctx) == 0);

void context_shell_deleter::operator()(context_shell *shell) const noexcept
{
	delete shell->self;
	shell->self = nullptr;
	verbs_uninit_context(&shell->vctx);
	std::free(shell);
}

context::context(context_shell &shell, const ucontext_params &params) noexcept
    : shell_(shell), params_(params)
{
}

context_shell *context::shell_of(ibv_context *ctx) noexcept
{
	/* ibv_context is the last member of the standard-layout verbs_context,
	 * which is the first member of context_shell */
	auto *vctx = reinterpret_cast<verbs_context *>(reinterpret_cast<char *>(ctx) -
						       offsetof(verbs_context, context));
	return reinterpret_cast<context_shell *>(vctx);
}

context *context::from_ibv(ibv_context *ctx) noexcept
{
	return shell_of(ctx)->self;
}

verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd, void * /*private_data*/) noexcept
{
	return guard_ptr([&]() -> verbs_context * {
		/* From here on cmd_fd belongs to the shell: libibverbs closes it
		 * itself if this fails, verbs_uninit_context() otherwise. */
		void *mem = _verbs_init_and_alloc_context(
		    ibdev, cmd_fd, sizeof(context_shell),
		    reinterpret_cast<verbs_context *>(offsetof(context_shell, vctx)),
		    SOFTRNIC_DRIVER_ID);
		if (!mem)
			return nullptr;
		context_shell_ptr shell(static_cast<context_shell *>(mem));

		cmd::get_context_req req{};
		cmd::get_context_resp resp{};
		/* The write() path copies async_fd out of the response, and
		 * verbs_uninit_context() closes it: never let a response the
		 * kernel did not fill make that fd 0. */
		resp.async_fd = static_cast<__u32>(-1);
		int ret = ibv_cmd_get_context(&shell->vctx, &req.core, sizeof(req), resp.core(),
					      sizeof(resp));
		if (ret) {
			log_msg(verbs_abi::log_err, "%s: GET_CONTEXT failed: %s", ibdev->name,
				std::strerror(ret));
			errno = ret;
			return nullptr;
		}

		ucontext_params params;
		const char *why = nullptr;
		ret = parse_ucontext_resp(resp.drv, params, &why);
		if (ret) {
			complain("%s: refusing context: %s (abi %u, link type %u, page size %u)",
				 ibdev->name, why, resp.drv.abi_version, resp.drv.link_type,
				 resp.drv.page_size);
			errno = ret;
			return nullptr;
		}

		shell->self = new context(*shell, params);
		verbs_set_ops(&shell->vctx, &context_ops);
		log_msg(verbs_abi::log_debug,
			"%s: context open (%s, page size %u, %d comp vectors)", ibdev->name,
			link_type_name(params.link), params.page_size,
			shell->vctx.context.num_comp_vectors);
		return &shell.release()->vctx;
	});
}

void free_context(ibv_context *ctx) noexcept
{
	guard_void([&] { context_shell_ptr shell(context::shell_of(ctx)); });
}

int query_device_ex(ibv_context *ctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, size_t attr_size) noexcept
{
	return guard_errno([&] {
		ib_uverbs_ex_query_device_resp resp{};
		size_t resp_size = sizeof(resp);
		const int ret =
		    ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp, &resp_size);
		if (ret)
			return ret;
		/* the library copies everything but fw_ver, which is ours to
		 * render; it lives in orig_attr, always within attr_size */
		format_fw_ver(resp.base.fw_ver, attr->orig_attr.fw_ver,
			      sizeof(attr->orig_attr.fw_ver));
		return 0;
	});
}

int query_port(ibv_context *ctx, uint8_t port_num, ibv_port_attr *port_attr) noexcept
{
	return guard_errno([&] {
		struct ibv_query_port req {
		};
		return ibv_cmd_query_port(ctx, port_num, port_attr, &req, sizeof(req));
	});
}

} // namespace softrnic
