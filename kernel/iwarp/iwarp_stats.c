// SPDX-License-Identifier: GPL-2.0
/*
 * Counters of the iWARP wire (`rdma statistic`), counted by the data path
 * with softrnic_qp_count(): per device, and per QP in a counter group.
 */
#include "iwarp.h"

const struct rdma_stat_desc iwarp_stat_descs[IWARP_CNT_NR] = {
	[IWARP_CNT_TX_FPDUS].name = "tx_fpdus",
	[IWARP_CNT_TX_BYTES].name = "tx_bytes",
	[IWARP_CNT_TX_ZCOPY_FPDUS].name = "tx_zcopy_fpdus",
	[IWARP_CNT_RX_FPDUS].name = "rx_fpdus",
	[IWARP_CNT_RX_BYTES].name = "rx_bytes",
	[IWARP_CNT_RX_CRC_ERRORS].name = "rx_crc_errors",
	[IWARP_CNT_RX_BAD_SEGMENTS].name = "rx_bad_segments",
	[IWARP_CNT_TERM_SENT].name = "terminates_sent",
	[IWARP_CNT_TERM_RCVD].name = "terminates_received",
	[IWARP_CNT_READ_RESPONSES].name = "read_responses_sent",
	[IWARP_CNT_ATOMICS].name = "atomics_executed",
	[IWARP_CNT_CONN_LOST].name = "connections_lost",
	[IWARP_CNT_MPA_BAD_FRAMES].name = "mpa_bad_frames",
	[IWARP_CNT_MPA_REFUSED].name = "mpa_refused",
};
