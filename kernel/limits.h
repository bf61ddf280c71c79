/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device limits reported by query_device and enforced by the verbs core.
 * One place, so that what we advertise is what we honour; the same table
 * is documented in Documentation/device-attributes.md.
 */
#ifndef SOFTRNIC_LIMITS_H
#define SOFTRNIC_LIMITS_H

#include <linux/sizes.h>

/*
 * No IEEE OUI of our own.  0 is not an option: libibverbs users (rdma-core's
 * own tests among them) take a zero vendor_id for a device that failed to
 * report one.  0xffffff is outside the assignable OUI space (its group bit
 * is set), so it cannot name a real vendor; rdma_rxe reports the same.
 */
#define SOFTRNIC_VENDOR_ID		0xffffff
#define SOFTRNIC_VENDOR_PART_ID		0x5352
#define SOFTRNIC_HW_VER			1
/* fw_ver is major << 32 | minor << 16 | sub, as providers print it. */
#define SOFTRNIC_FW_VER			((0ULL << 32) | (1ULL << 16) | 0)
#define SOFTRNIC_FW_VER_STR		"0.1.0"

#define SOFTRNIC_MAX_PD			(1 << 16)
#define SOFTRNIC_MAX_QP			(1 << 16)
#define SOFTRNIC_MAX_QP_WR		(1 << 14)
#define SOFTRNIC_MAX_SGE		32
#define SOFTRNIC_MAX_SGE_RD		32
#define SOFTRNIC_MAX_INLINE		512
#define SOFTRNIC_MAX_CQ			(1 << 16)
#define SOFTRNIC_MAX_CQE		(1 << 16)
#define SOFTRNIC_MAX_MR			(1 << 18)
#define SOFTRNIC_MAX_MR_SIZE		(1ULL << 40)
#define SOFTRNIC_MAX_MW			(1 << 16)
#define SOFTRNIC_MAX_SRQ		(1 << 16)
#define SOFTRNIC_MAX_SRQ_WR		(1 << 14)
#define SOFTRNIC_MAX_SRQ_SGE		32
#define SOFTRNIC_MAX_AH			(1 << 16)
/* RoCE UD multicast: groups per device, QPs per group, attachments. */
#define SOFTRNIC_MAX_MCAST_GRP		1024
#define SOFTRNIC_MAX_MCAST_QP_ATTACH	64
#define SOFTRNIC_MAX_TOTAL_MCAST_QP_ATTACH	16384
#define SOFTRNIC_MAX_RD_ATOMIC		128
#define SOFTRNIC_MAX_FAST_REG_PAGES	512
#define SOFTRNIC_MAX_MSG_SIZE		(1U << 31)

/* RoCE: GID table filled by ib_core from the netdev's addresses. */
#define SOFTRNIC_ROCE_GID_TBL_LEN	1024
#define SOFTRNIC_PKEY_TBL_LEN		1

#endif /* SOFTRNIC_LIMITS_H */
