// SPDX-License-Identifier: GPL-2.0
/*
 * User contexts: the handshake that tells libsoftrnic which ABI and which
 * wire it talks to.
 */
#include <rdma/uverbs_ioctl.h>

#include "softrnic.h"

int softrnic_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibuc->device);
	struct softrnic_alloc_ucontext_resp resp = {
		.abi_version = SOFTRNIC_UVERBS_ABI_VERSION,
		.link_type = sdev->wire->type,
		.page_size = PAGE_SIZE,
	};

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

void softrnic_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Device removal with the process still holding the device: ib_core has
 * already zapped every user mapping made through rdma_user_mmap_*; the
 * objects themselves are destroyed by ib_core afterwards, so nothing is
 * left for us to cut here.
 */
void softrnic_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}
