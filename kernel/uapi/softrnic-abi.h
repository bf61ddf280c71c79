/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * softrnic user/kernel ABI: the one header shared by softrnic.ko and the
 * libsoftrnic provider.  Only fixed-width types, every struct padded to a
 * multiple of 8 bytes so 32- and 64-bit layouts agree.
 */
#ifndef SOFTRNIC_ABI_H
#define SOFTRNIC_ABI_H

#include <linux/types.h>

/*
 * Our driver id for RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID and the uverbs ioctl
 * header.  Deliberately outside the kernel's enum rdma_driver_id: an
 * in-tree id would let another provider claim our devices, and
 * RDMA_DRIVER_UNKNOWN would make matching depend on device names.
 */
#define SOFTRNIC_DRIVER_ID 0x5352

/* uverbs ABI version; bumped on any incompatible change below. */
#define SOFTRNIC_UVERBS_ABI_VERSION 1

enum softrnic_link_type {
	SOFTRNIC_LINK_ROCE = 1,
	SOFTRNIC_LINK_IWARP = 2,
};

/* Returned by ib_uverbs GET_CONTEXT in the driver-specific response. */
struct softrnic_alloc_ucontext_resp {
	__u32 abi_version;	/* SOFTRNIC_UVERBS_ABI_VERSION */
	__u32 link_type;	/* enum softrnic_link_type */
	__u32 page_size;	/* kernel PAGE_SIZE, ring mmap granularity */
	__u32 reserved;
};

struct softrnic_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

#endif /* SOFTRNIC_ABI_H */
