// SPDX-License-Identifier: GPL-2.0
/*
 * The counters of the RoCE transport: their names, for `rdma statistic
 * show` and the port's hw_counters, and which of them a QP has, for
 * `rdma statistic qp` (kernel/counters.c does the counting and summing).
 */
#include "roce.h"

const struct rdma_stat_desc roce_stat_descs[ROCE_CNT_NR] = {
	[ROCE_CNT_TX_PKTS].name = "tx_packets",
	[ROCE_CNT_TX_BYTES].name = "tx_bytes",
	[ROCE_CNT_RX_PKTS].name = "rx_packets",
	[ROCE_CNT_RX_BYTES].name = "rx_bytes",
	[ROCE_CNT_DROP_ICRC].name = "rx_drop_bad_icrc",
	[ROCE_CNT_DROP_TRUNCATED].name = "rx_drop_truncated",
	[ROCE_CNT_DROP_TRANSPORT].name = "rx_drop_transport",
	[ROCE_CNT_DROP_OPCODE].name = "rx_drop_opcode",
	[ROCE_CNT_DROP_TVER].name = "rx_drop_tver",
	[ROCE_CNT_DROP_PAD].name = "rx_drop_pad",
	[ROCE_CNT_DROP_LENGTH].name = "rx_drop_length",
	[ROCE_CNT_DROP_UNKNOWN_QP].name = "rx_drop_unknown_qp",
	[ROCE_CNT_DROP_BAD_ADDR].name = "rx_drop_bad_address",
	[ROCE_CNT_DROP_OUT_OF_WINDOW].name = "rx_drop_out_of_window",
	[ROCE_CNT_DROP_NO_ROUTE].name = "tx_drop_no_route",
	[ROCE_CNT_DUP_REQUESTS].name = "duplicate_requests",
	[ROCE_CNT_RETRANSMITS].name = "retransmits",
	[ROCE_CNT_TIMEOUTS].name = "retransmit_timeouts",
	[ROCE_CNT_SEQ_NAKS_SENT].name = "seq_naks_sent",
	[ROCE_CNT_SEQ_NAKS_RCVD].name = "seq_naks_rcvd",
	[ROCE_CNT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[ROCE_CNT_RNR_NAKS_RCVD].name = "rnr_naks_rcvd",
	[ROCE_CNT_NAKS_SENT].name = "naks_sent",
	[ROCE_CNT_NAKS_RCVD].name = "naks_rcvd",
	[ROCE_CNT_ACKS_SENT].name = "acks_sent",
	[ROCE_CNT_READ_RESPONSES].name = "read_responses_sent",
	[ROCE_CNT_ATOMICS].name = "atomics_executed",
	[ROCE_CNT_RX_STEERED].name = "rx_steered",
	[ROCE_CNT_DROP_STEER_FULL].name = "rx_drop_steer_full",
	[ROCE_CNT_TX_BATCHES].name = "tx_batches",
	[ROCE_CNT_TX_LOOPED].name = "tx_looped",
	[ROCE_CNT_DROP_LOOP_FULL].name = "tx_drop_loop_full",
	[ROCE_CNT_DROP_OUTPUT].name = "tx_drop_output",
	[ROCE_CNT_UD_SENDS].name = "ud_sends",
	[ROCE_CNT_UD_RECVS].name = "ud_recvs",
	[ROCE_CNT_DROP_QKEY].name = "rx_drop_bad_qkey",
	[ROCE_CNT_DROP_NO_RECV].name = "rx_drop_no_recv_wqe",
	[ROCE_CNT_DROP_QP_STATE].name = "rx_drop_qp_state",
	[ROCE_CNT_DROP_PKEY].name = "rx_drop_bad_pkey",
};

static_assert(ROCE_CNT_NR <= 64, "ROCE_QP_STATS is one u64");
