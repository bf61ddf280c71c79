// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP data path: taking over the CM's connected socket and giving it
 * back.  While attached, the socket's data_ready, write_space and
 * state_change callbacks are ours; they queue the receive or the
 * transmit work item (iwarp_rx.c, iwarp_tx.c), except that data_ready
 * reads a short message in TCP's receive softirq itself.
 *
 * Teardown is deterministic: detach swaps the CM's callbacks back under
 * sk_callback_lock (a callback of ours that already runs holds it for
 * reading and sees IWARP_DP_STOP), then cancels both work items; after
 * that nothing of the data path touches the socket or the QP.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "iwarp.h"

#define IWARP_TXBUF_SIZE	(MPA_LEN_FIELD + MPA_MAX_ULPDU + 3 + \
				 IW_CRC32C_LEN)

/*
 * Our callbacks run with the socket's callbacks possibly just swapped
 * back: sk_user_data is ours only while our callback is installed, which
 * is checked under sk_callback_lock (detach swaps under its write side).
 */
static struct iwarp_qp *iwarp_sk_qp(struct sock *sk,
				    void (*mine)(struct sock *sk))
{
	struct iwarp_qp *iwqp = NULL;

	if (sk->sk_state_change == mine || sk->sk_data_ready == mine ||
	    sk->sk_write_space == mine)
		iwqp = sk->sk_user_data;
	if (iwqp && test_bit(IWARP_DP_STOP, &iwqp->dp.flags))
		iwqp = NULL;
	return iwqp;
}

static void iwarp_sk_data_ready(struct sock *sk)
{
	struct iwarp_qp *iwqp;

	read_lock_bh(&sk->sk_callback_lock);
	iwqp = iwarp_sk_qp(sk, iwarp_sk_data_ready);
	if (iwqp)
		iwarp_rx_data_ready(iwqp, sk);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void iwarp_sk_write_space(struct sock *sk)
{
	struct iwarp_qp *iwqp;

	read_lock_bh(&sk->sk_callback_lock);
	iwqp = iwarp_sk_qp(sk, iwarp_sk_write_space);
	/* as sk_stream_write_space: only once there is room again */
	if (iwqp && sk_stream_is_writeable(sk)) {
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		softrnic_dp_queue_work(-1, &iwqp->dp.tx_work);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* FIN, RST or an error: the receive work drains what came, then sees it. */
static void iwarp_sk_state_change(struct sock *sk)
{
	struct iwarp_qp *iwqp;

	read_lock_bh(&sk->sk_callback_lock);
	iwqp = iwarp_sk_qp(sk, iwarp_sk_state_change);
	if (iwqp)
		softrnic_dp_queue_work(-1, &iwqp->dp.rx_work);
	read_unlock_bh(&sk->sk_callback_lock);
}

int iwarp_dp_init(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	gfp_t gfp = softrnic_gfp(iwqp->qp->user);

	memset(dp, 0, sizeof(*dp));
	spin_lock_init(&dp->lock);
	mutex_init(&dp->tx_mutex);
	INIT_WORK(&dp->rx_work, iwarp_rx_work);
	INIT_WORK(&dp->tx_work, iwarp_tx_work);
	dp->msg.wqe = kmalloc(sizeof(*dp->msg.wqe), gfp);
	dp->txbuf = kvmalloc(IWARP_TXBUF_SIZE, gfp);
	if (!dp->msg.wqe || !dp->txbuf) {
		iwarp_dp_fini(iwqp);
		return -ENOMEM;
	}
	return 0;
}

void iwarp_dp_fini(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;

	WARN_ON_ONCE(dp->sock);
	kfree(dp->msg.wqe);
	dp->msg.wqe = NULL;
	kvfree(dp->txbuf);
	dp->txbuf = NULL;
	mutex_destroy(&dp->tx_mutex);
}

/* Our credits: what was negotiated, at most what the device announces. */
static u32 iwarp_depth(u16 v)
{
	return clamp_t(u32, v, 1, SOFTRNIC_MAX_RD_ATOMIC);
}

int iwarp_dp_attach(struct iwarp_qp *iwqp, struct socket *sock,
		    const struct mpa_conn *conn, bool initiator)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct softrnic_qp *qp = iwqp->qp;
	gfp_t gfp = softrnic_gfp(qp->user);
	struct sock *sk = sock->sk;
	struct iwarp_orq_ent *orq;
	struct iwarp_irq_ent *irq;

	lockdep_assert_held(&qp->mutex);
	if (dp->sock)
		return -EBUSY;
	if (conn->markers_tx || conn->markers_rx)
		return -EINVAL;		/* refused at the negotiation */
	if (!dp->txbuf || !dp->msg.wqe)
		return -ENOMEM;

	orq = kvcalloc(iwarp_depth(conn->ord), sizeof(*orq), gfp);
	irq = kvcalloc(iwarp_depth(conn->ird), sizeof(*irq), gfp);
	if (!orq || !irq) {
		kvfree(orq);
		kvfree(irq);
		return -ENOMEM;
	}

	dp->conn = *conn;
	dp->initiator = initiator;
	dp->flags = 0;
	dp->lost_err = 0;
	dp->orq = orq;
	dp->orq_size = iwarp_depth(conn->ord);
	dp->orq_head = dp->orq_count = 0;
	dp->irq = irq;
	dp->irq_size = iwarp_depth(conn->ird);
	dp->irq_head = dp->irq_count = 0;
	dp->term_pending = false;
	dp->rtr_wait = !initiator && conn->rtr_send;

	dp->tx_len = dp->tx_sent = 0;
	dp->tx_bv_nr = dp->tx_bv_len = dp->tx_bv_sent = 0;
	dp->tx_tail_len = dp->tx_tail_sent = 0;
	dp->tx_done = IWARP_TXD_NONE;
	dp->tx_rtr = initiator && conn->rtr_send;
	dp->tx_rresp_turn = false;
	dp->tx_msn[0] = dp->tx_msn[1] = dp->tx_msn[2] = 1;
	dp->tx_atomic_id = 0;
	dp->msg.active = false;
	dp->msg.zc = NULL;
	dp->sq_stalled = false;
	/* without it (no memory) every payload is copied */
	dp->zc_owner = iwarp_zc_owner_new(qp, gfp);

	mpa_rx_init(&dp->rx, conn->crc, false, MPA_MAX_ULPDU);
	dp->rx_pkt_ok = false;
	dp->rx_rtr = false;
	dp->rx_msn[0] = dp->rx_msn[1] = dp->rx_msn[2] = 1;
	dp->have_rqe = false;
	dp->rcv_len = 0;
	dp->rx_imm_pending = false;
	dp->rx_imm = 0;
	dp->rx_wr_acc = dp->rx_wr_len = 0;

	dp->sock = sock;
	write_lock_bh(&sk->sk_callback_lock);
	dp->saved_data_ready = sk->sk_data_ready;
	dp->saved_write_space = sk->sk_write_space;
	dp->saved_state_change = sk->sk_state_change;
	dp->saved_user_data = sk->sk_user_data;
	sk->sk_user_data = iwqp;
	sk->sk_data_ready = iwarp_sk_data_ready;
	sk->sk_write_space = iwarp_sk_write_space;
	sk->sk_state_change = iwarp_sk_state_change;
	write_unlock_bh(&sk->sk_callback_lock);

	/* What arrived behind the MPA frame, and the RTR. */
	softrnic_dp_queue_work(-1, &dp->rx_work);
	if (dp->tx_rtr)
		iwarp_tx_schedule(iwqp);
	return 0;
}

void iwarp_dp_detach(struct iwarp_qp *iwqp, bool flush)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct softrnic_qp *qp = iwqp->qp;
	struct socket *sock = dp->sock;
	struct iwarp_orq_ent *orq;
	struct iwarp_irq_ent *irq;
	struct sock *sk;
	unsigned long flags;

	lockdep_assert_held(&qp->mutex);
	if (!sock)
		return;
	sk = sock->sk;
	write_lock_bh(&sk->sk_callback_lock);
	set_bit(IWARP_DP_STOP, &dp->flags);
	sk->sk_data_ready = dp->saved_data_ready;
	sk->sk_write_space = dp->saved_write_space;
	sk->sk_state_change = dp->saved_state_change;
	sk->sk_user_data = dp->saved_user_data;
	write_unlock_bh(&sk->sk_callback_lock);

	/* The receive work queues the transmit one: in this order. */
	cancel_work_sync(&dp->rx_work);
	cancel_work_sync(&dp->tx_work);
	/* sq_xmit cannot run (qp->mutex); a push in flight ends here. */
	mutex_lock(&dp->tx_mutex);
	dp->msg.active = false;		/* the core flushes or discards it */
	dp->tx_len = dp->tx_sent = 0;
	iwarp_tx_zc_release(dp);
	dp->tx_bv_len = dp->tx_bv_sent = 0;
	dp->tx_tail_len = dp->tx_tail_sent = 0;
	/*
	 * Zero-copy WQEs TCP still holds pages of are in flight for the core
	 * like the rest: their ubufs complete nothing from here on.
	 */
	iwarp_zc_owner_detach(dp->zc_owner);
	dp->zc_owner = NULL;
	if (dp->msg.zc) {
		iwarp_zc_sent(dp->msg.zc, true);
		dp->msg.zc = NULL;
	}
	mutex_unlock(&dp->tx_mutex);

	if (dp->have_rqe) {
		if (flush)
			softrnic_rq_complete(qp, &dp->rqe, IB_WC_WR_FLUSH_ERR,
					     SOFTRNIC_WC_RECV, 0, 0, 0, false);
		dp->have_rqe = false;
	}

	spin_lock_irqsave(&dp->lock, flags);
	orq = dp->orq;
	dp->orq = NULL;
	dp->orq_count = 0;
	irq = dp->irq;
	dp->irq = NULL;
	dp->irq_count = 0;
	dp->term_pending = false;
	spin_unlock_irqrestore(&dp->lock, flags);
	kvfree(orq);
	kvfree(irq);
	dp->sock = NULL;
}

void iwarp_dp_lost(struct iwarp_qp *iwqp, int err)
{
	struct iwarp_dp *dp = &iwqp->dp;

	if (test_and_set_bit(IWARP_DP_LOST, &dp->flags))
		return;
	dp->lost_err = err;
	softrnic_qp_count(iwqp->qp, IWARP_CNT_CONN_LOST, 1);
	iwarp_cm_conn_lost(iwqp->qp, err);
}
