// SPDX-License-Identifier: GPL-2.0
/*
 * iw_cm's ops for iwarp devices: TCP connections made in the kernel (no
 * iwpmd: IW_F_NO_PORT_MAP), the MPA Request/Reply exchange of RFC 5044
 * with RFC 6581's IRD/ORD words (kernel/proto/iwarp_mpa.h), then the
 * socket handed to the data path (iwarp_dp_attach) and the QP to RTS.
 *
 * A connection endpoint (struct iwarp_cep) is one TCP socket: a listener
 * (one per local address a cm_id listens on), a passive end from accept()
 * until its QP is connected or it is rejected, or an active end.  All that
 * sleeps happens in the cep's work item or in the iw_cm op itself, under
 * cep->mutex; the socket callbacks only queue the work.  Lock order:
 * cep->mutex, then qp->mutex.  The QP side (iwarp_cm_qp_leaving, called
 * under qp->mutex, and iwarp_cm_conn_lost, any context) never takes
 * cep->mutex: it sets an event bit and queues the work.
 *
 * Every wait on the peer is bounded: the MPA frame must arrive within
 * IWARP_MPA_TIMEOUT of the TCP connection (a silent or hostile client
 * cannot hold a socket), a frame is at most MPA_MAX_RR_LEN bytes and is
 * read exactly, nothing of the FPDUs behind it.
 */
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/tcp.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <rdma/iw_cm.h>

#include "iwarp.h"
#include "limits.h"

static bool mpa_crc;
module_param(mpa_crc, bool, 0644);
MODULE_PARM_DESC(mpa_crc, "iWARP: ask peers for MPA CRC32c (on if either end asks)");

static bool mpa_p2p;
module_param(mpa_p2p, bool, 0644);
MODULE_PARM_DESC(mpa_p2p, "iWARP: initiators ask for an RFC 6581 RTR message");

#define IWARP_MPA_TIMEOUT	(10 * HZ)

static struct workqueue_struct *iwarp_cm_wq;

/* Every endpoint, so that a device going away can close its own. */
static LIST_HEAD(iwarp_ceps);
static DEFINE_SPINLOCK(iwarp_ceps_lock);
static atomic_t iwarp_nceps = ATOMIC_INIT(0);

enum iwarp_cep_state {
	CEP_IDLE,
	CEP_LISTEN,
	CEP_TCP_CONNECTING,	/* active: connect() in progress */
	CEP_MPA_REP_WAIT,	/* active: Request sent */
	CEP_MPA_REQ_WAIT,	/* passive: reading the Request */
	CEP_MPA_REQ_RCVD,	/* passive: CONNECT_REQUEST delivered */
	CEP_CONNECTED,		/* the socket is the QP's data path's */
	CEP_CLOSED,
};

/* cep->events: what the work item has to look at. */
enum {
	CEP_EV_SOCK,		/* data or a state change on the socket */
	CEP_EV_TIMEOUT,		/* the MPA frame did not come in time */
	CEP_EV_LEAVE,		/* the QP left RTS, or is being destroyed */
	CEP_EV_ABORT,		/* with LEAVE: reset, do not close gracefully */
	CEP_EV_LOST,		/* the data path lost the connection */
};

struct iwarp_cep {
	refcount_t ref;
	struct mutex mutex;
	enum iwarp_cep_state state;
	struct softrnic_dev *sdev;
	struct socket *sock;
	struct iw_cm_id *cm_id;		/* with cm_id->add_ref */
	struct softrnic_qp *qp;		/* with a QP reference */
	struct iwarp_cep *listener;	/* passive end: its listener, ref */
	struct list_head all;		/* on iwarp_ceps */
	unsigned long events;
	int lost_err;
	struct work_struct work;
	struct delayed_work timeout;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	struct mpa_local loc;
	struct mpa_params req;		/* active: the Request sent */
	u32 got;			/* bytes of the MPA frame read */
	u8 frame[MPA_MAX_RR_LEN];
	u16 pd_len;			/* active: the Request's private data */
	u8 pd[MPA_MAX_PD_LEN];
};

/*
 * cm_id->provider_data of a listening cm_id: its listener, or none if
 * another device holds the port (softrnic_iw_create_listen()).
 */
struct iwarp_listen {
	struct iwarp_cep *cep;
};

static void iwarp_cep_work(struct work_struct *work);
static void iwarp_cep_timeout(struct work_struct *work);

static struct iwarp_cep *iwarp_cep_new(struct softrnic_dev *sdev)
{
	struct iwarp_cep *cep = kzalloc(sizeof(*cep), GFP_KERNEL_ACCOUNT);

	if (!cep)
		return NULL;
	refcount_set(&cep->ref, 1);
	mutex_init(&cep->mutex);
	cep->sdev = sdev;
	INIT_WORK(&cep->work, iwarp_cep_work);
	INIT_DELAYED_WORK(&cep->timeout, iwarp_cep_timeout);
	atomic_inc(&iwarp_nceps);
	spin_lock(&iwarp_ceps_lock);
	list_add_tail(&cep->all, &iwarp_ceps);
	spin_unlock(&iwarp_ceps_lock);
	return cep;
}

static void iwarp_cep_put(struct iwarp_cep *cep)
{
	if (!refcount_dec_and_test(&cep->ref))
		return;
	WARN_ON(cep->sock || cep->cm_id || cep->qp);
	spin_lock(&iwarp_ceps_lock);
	list_del(&cep->all);
	spin_unlock(&iwarp_ceps_lock);
	if (cep->listener)
		iwarp_cep_put(cep->listener);
	kfree(cep);
	if (atomic_dec_and_test(&iwarp_nceps))
		wake_up_var(&iwarp_nceps);
}

/* Queue the work for @ev; the queued work holds a reference. */
static void iwarp_cep_kick(struct iwarp_cep *cep, int ev)
{
	set_bit(ev, &cep->events);
	refcount_inc(&cep->ref);
	if (!queue_work(iwarp_cm_wq, &cep->work))
		iwarp_cep_put(cep);
}

/* ------------------------------------------------------------------ */
/* Socket callbacks: in softirq, only queue the work. */

static void iwarp_cep_sk_event(struct sock *sk)
{
	struct iwarp_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep)
		iwarp_cep_kick(cep, CEP_EV_SOCK);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void iwarp_cep_sk_install(struct iwarp_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	cep->saved_data_ready = sk->sk_data_ready;
	cep->saved_state_change = sk->sk_state_change;
	sk->sk_user_data = cep;
	sk->sk_data_ready = iwarp_cep_sk_event;
	sk->sk_state_change = iwarp_cep_sk_event;
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Give the socket its own callbacks back.  Afterwards no callback of
 * ours runs any more (they run under sk_callback_lock).
 */
static void iwarp_cep_sk_restore(struct iwarp_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == cep) {
		sk->sk_user_data = NULL;
		sk->sk_data_ready = cep->saved_data_ready;
		sk->sk_state_change = cep->saved_state_change;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}

/* Close and release the socket; @abort resets the connection. */
static void iwarp_cep_sock_close(struct iwarp_cep *cep, bool abort)
{
	struct socket *sock = cep->sock;

	if (!sock)
		return;
	iwarp_cep_sk_restore(cep);
	cep->sock = NULL;
	if (abort)
		sock_no_linger(sock->sk);	/* RST instead of FIN */
	else
		kernel_sock_shutdown(sock, SHUT_RDWR);
	sock_release(sock);
}

/* ------------------------------------------------------------------ */
/* Sending and reading MPA frames */

/* Send all of @len bytes; the socket is fresh, so this is short. */
static int iwarp_cep_send(struct iwarp_cep *cep, const void *buf, size_t len)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	int n;

	n = kernel_sendmsg(cep->sock, &msg, &iov, 1, len);
	if (n < 0)
		return n;
	return n == len ? 0 : -EIO;
}

/*
 * Read what has arrived of the MPA frame, never beyond its end.
 * 1 when it is complete (cep->got bytes), 0 to wait for more, -errno.
 */
static int iwarp_cep_read_frame(struct iwarp_cep *cep, bool reply)
{
	for (;;) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		size_t want = MPA_RR_HDR_LEN;
		struct kvec iov;
		int n;

		if (cep->got >= MPA_RR_HDR_LEN) {
			n = mpa_rr_frame_len(cep->frame, cep->got, reply);
			if (n < 0)
				return -EPROTO;
			want = n;
			if (cep->got == want)
				return 1;
		}
		iov.iov_base = cep->frame + cep->got;
		iov.iov_len = want - cep->got;
		n = kernel_recvmsg(cep->sock, &msg, &iov, 1, iov.iov_len,
				   MSG_DONTWAIT);
		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return n;
		if (n == 0)
			return -ECONNRESET;	/* closed before the frame */
		cep->got += n;
	}
}

/* ------------------------------------------------------------------ */
/* Events to iw_cm */

static void iwarp_cep_addrs(struct iwarp_cep *cep, struct iw_cm_event *ev)
{
	if (!cep->sock)
		return;
	kernel_getsockname(cep->sock, (struct sockaddr *)&ev->local_addr);
	kernel_getpeername(cep->sock, (struct sockaddr *)&ev->remote_addr);
}

static void iwarp_cep_event(struct iwarp_cep *cep, enum iw_cm_event_type type,
			    int status, const void *pd, u8 pd_len,
			    u32 ird, u32 ord)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
		.private_data = (void *)pd,
		.private_data_len = pd_len,
		.ird = ird,
		.ord = ord,
	};
	struct iw_cm_id *cm_id = cep->cm_id;

	if (!cm_id)
		return;
	iwarp_cep_addrs(cep, &ev);
	cm_id->event_handler(cm_id, &ev);
}

/* Let go of the cm_id after its last event. */
static void iwarp_cep_drop_cm_id(struct iwarp_cep *cep)
{
	struct iw_cm_id *cm_id = cep->cm_id;

	if (!cm_id)
		return;
	cep->cm_id = NULL;
	if (cm_id->provider_data == cep) {
		cm_id->provider_data = NULL;
		iwarp_cep_put(cep);		/* the cm_id's reference */
	}
	cm_id->rem_ref(cm_id);
}

/* Unbind the QP (its data path already detached); cep->mutex held. */
static void iwarp_cep_drop_qp(struct iwarp_cep *cep)
{
	struct softrnic_qp *qp = cep->qp;
	struct iwarp_qp *iwqp;

	if (!qp)
		return;
	mutex_lock(&qp->mutex);
	iwqp = iwarp_qp(qp);
	if (iwqp && iwqp->cep == cep) {
		iwarp_dp_detach(iwqp, true);
		iwqp->cep = NULL;
		iwarp_cep_put(cep);		/* the QP's reference */
	}
	mutex_unlock(&qp->mutex);
	cep->qp = NULL;
	softrnic_qp_put(qp);
}

/*
 * The endpoint is done: its timeout stopped and the reference it held on
 * itself since it was made dropped (the caller holds another one).
 */
static void iwarp_cep_set_closed(struct iwarp_cep *cep)
{
	if (cep->state == CEP_CLOSED)
		return;
	cep->state = CEP_CLOSED;
	cancel_delayed_work_sync(&cep->timeout);
	iwarp_cep_put(cep);
}

/*
 * The end of an endpoint that was connecting or connected: the QP goes
 * to ERR (its WQEs flushed), the socket is closed and iw_cm hears the
 * last event.  cep->mutex held.
 */
static void iwarp_cep_finish(struct iwarp_cep *cep, int status, bool abort)
{
	enum iwarp_cep_state state = cep->state;

	iwarp_cep_set_closed(cep);
	if (cep->qp && state != CEP_MPA_REQ_RCVD)
		softrnic_qp_error(cep->qp, false);
	iwarp_cep_drop_qp(cep);
	iwarp_cep_sock_close(cep, abort);
	switch (state) {
	case CEP_TCP_CONNECTING:
	case CEP_MPA_REP_WAIT:
		iwarp_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY,
				status ? status : -ECONNRESET, NULL, 0, 0, 0);
		break;
	case CEP_CONNECTED:
		if (!abort && !status)
			iwarp_cep_event(cep, IW_CM_EVENT_DISCONNECT, 0, NULL,
					0, 0, 0);
		iwarp_cep_event(cep, IW_CM_EVENT_CLOSE, status, NULL, 0, 0, 0);
		break;
	default:
		break;
	}
	iwarp_cep_drop_cm_id(cep);
}

/* ------------------------------------------------------------------ */
/* Connected: the data path takes the socket, the QP goes to RTS. */

static int iwarp_cep_connected(struct iwarp_cep *cep, const struct mpa_conn *conn,
			       bool initiator)
{
	struct softrnic_qp *qp = cep->qp;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	struct iwarp_qp *iwqp;
	int err;

	iwarp_cep_sk_restore(cep);
	mutex_lock(&qp->mutex);
	iwqp = iwarp_qp(qp);
	err = -EINVAL;
	/* an active end bound the QP at connect, a passive one binds it now */
	if (iwqp && (!iwqp->cep || iwqp->cep == cep) &&
	    !test_bit(SOFTRNIC_QP_DYING, &qp->flags))
		err = iwarp_dp_attach(iwqp, cep->sock, conn, initiator);
	if (!err && !iwqp->cep) {
		refcount_inc(&cep->ref);
		iwqp->cep = cep;
	}
	mutex_unlock(&qp->mutex);
	if (err)
		return err;
	cep->state = CEP_CONNECTED;
	err = softrnic_modify_qp(&qp->ibqp, &attr, IB_QP_STATE, NULL);
	if (err)
		return err;
	/* What came behind the frame before the data path was there. */
	cep->sock->sk->sk_data_ready(cep->sock->sk);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The work item: everything that sleeps. */

static void iwarp_cep_passive_step(struct iwarp_cep *cep)
{
	struct iwarp_cep *lcep = cep->listener;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CONNECT_REQUEST };
	struct mpa_rr rr;
	int ret;

	ret = iwarp_cep_read_frame(cep, false);
	if (!ret)
		return;
	if (ret < 0 || mpa_rr_parse(cep->frame, cep->got, false, &rr)) {
		softrnic_count(cep->sdev, IWARP_CNT_MPA_BAD_FRAMES, 1);
		iwarp_cep_finish(cep, ret < 0 ? ret : -EPROTO, true);
		return;
	}
	cancel_delayed_work(&cep->timeout);
	ev.private_data = (void *)rr.pd;
	ev.private_data_len = rr.pd_len;
	ev.ird = rr.p.enhanced ? rr.p.ird : SOFTRNIC_MAX_RD_ATOMIC;
	ev.ord = rr.p.enhanced ? rr.p.ord : SOFTRNIC_MAX_RD_ATOMIC;
	iwarp_cep_addrs(cep, &ev);
	/* iw_cm makes a cm_id for it, with provider_data = the cep. */
	refcount_inc(&cep->ref);
	ev.provider_data = cep;
	cep->state = CEP_MPA_REQ_RCVD;
	/* a listener's mutex inside one of its passive ends' */
	mutex_lock_nested(&lcep->mutex, SINGLE_DEPTH_NESTING);
	if (lcep->cm_id && lcep->state == CEP_LISTEN)
		ret = lcep->cm_id->event_handler(lcep->cm_id, &ev);
	else
		ret = -ENODEV;
	mutex_unlock(&lcep->mutex);
	if (ret) {
		iwarp_cep_put(cep);
		iwarp_cep_finish(cep, ret, true);
	}
}

static void iwarp_cep_active_step(struct iwarp_cep *cep)
{
	struct sock *sk = cep->sock->sk;
	struct mpa_conn conn;
	struct mpa_rr rr;
	size_t len;
	int ret;

	if (cep->state == CEP_TCP_CONNECTING) {
		if (sk->sk_state == TCP_SYN_SENT)
			return;
		if (sk->sk_state != TCP_ESTABLISHED) {
			iwarp_cep_finish(cep, sock_error(sk) ?: -ECONNREFUSED,
					 true);
			return;
		}
		len = mpa_rr_build(cep->frame, sizeof(cep->frame), false,
				   false, &cep->req, cep->pd, cep->pd_len);
		ret = -EINVAL;
		if (len)
			ret = iwarp_cep_send(cep, cep->frame, len);
		if (ret) {
			iwarp_cep_finish(cep, ret, true);
			return;
		}
		cep->got = 0;
		cep->state = CEP_MPA_REP_WAIT;
		mod_delayed_work(iwarp_cm_wq, &cep->timeout, IWARP_MPA_TIMEOUT);
	}
	ret = iwarp_cep_read_frame(cep, true);
	if (!ret)
		return;
	if (ret < 0 || mpa_rr_parse(cep->frame, cep->got, true, &rr)) {
		softrnic_count(cep->sdev, IWARP_CNT_MPA_BAD_FRAMES, 1);
		iwarp_cep_finish(cep, ret < 0 ? ret : -EPROTO, true);
		return;
	}
	cancel_delayed_work(&cep->timeout);
	ret = mpa_connected(&cep->req, &rr, &cep->loc, &conn);
	if (ret) {
		softrnic_count(cep->sdev, IWARP_CNT_MPA_REFUSED, 1);
		/* rdma_cm: a rejection is REJECTED with the peer's data */
		iwarp_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY, -ECONNREFUSED,
				rr.pd, rr.pd_len, 0, 0);
		cep->state = CEP_IDLE;		/* that was the last event */
		iwarp_cep_finish(cep, -ECONNREFUSED, ret != MPA_NEG_REJECTED);
		return;
	}
	ret = iwarp_cep_connected(cep, &conn, true);
	if (ret) {
		iwarp_cep_finish(cep, ret, true);
		return;
	}
	iwarp_cep_event(cep, IW_CM_EVENT_CONNECT_REPLY, 0, rr.pd, rr.pd_len,
			conn.ird, conn.ord);
}

static void iwarp_listen_accept(struct iwarp_cep *lcep);

static void iwarp_cep_work(struct work_struct *work)
{
	struct iwarp_cep *cep = container_of(work, struct iwarp_cep, work);

	mutex_lock(&cep->mutex);
	if (test_and_clear_bit(CEP_EV_LOST, &cep->events) &&
	    cep->state == CEP_CONNECTED) {
		clear_bit(CEP_EV_LEAVE, &cep->events);
		iwarp_cep_finish(cep, cep->lost_err, cep->lost_err != 0);
	}
	if (test_and_clear_bit(CEP_EV_LEAVE, &cep->events)) {
		bool abort = test_and_clear_bit(CEP_EV_ABORT, &cep->events);

		if (cep->state != CEP_CLOSED && cep->state != CEP_LISTEN)
			iwarp_cep_finish(cep, abort ? -ECONNRESET : 0, abort);
	}
	if (test_and_clear_bit(CEP_EV_TIMEOUT, &cep->events) &&
	    (cep->state == CEP_MPA_REQ_WAIT || cep->state == CEP_MPA_REP_WAIT ||
	     cep->state == CEP_TCP_CONNECTING)) {
		if (cep->state != CEP_TCP_CONNECTING)
			softrnic_count(cep->sdev, IWARP_CNT_MPA_BAD_FRAMES, 1);
		iwarp_cep_finish(cep, -ETIMEDOUT, true);
	}
	if (test_and_clear_bit(CEP_EV_SOCK, &cep->events)) {
		switch (cep->state) {
		case CEP_LISTEN:
			iwarp_listen_accept(cep);
			break;
		case CEP_MPA_REQ_WAIT:
			iwarp_cep_passive_step(cep);
			break;
		case CEP_TCP_CONNECTING:
		case CEP_MPA_REP_WAIT:
			iwarp_cep_active_step(cep);
			break;
		case CEP_MPA_REQ_RCVD:
			/* the peer gave up before the accept: noticed there */
		default:
			break;
		}
	}
	mutex_unlock(&cep->mutex);
	iwarp_cep_put(cep);
}

static void iwarp_cep_timeout(struct work_struct *work)
{
	struct iwarp_cep *cep = container_of(to_delayed_work(work),
					     struct iwarp_cep, timeout);

	iwarp_cep_kick(cep, CEP_EV_TIMEOUT);
}

/* ------------------------------------------------------------------ */
/* Listening */

/* Accept every connection that is waiting; lcep->mutex held. */
static void iwarp_listen_accept(struct iwarp_cep *lcep)
{
	struct socket *nsock;
	struct iwarp_cep *cep;
	int err;

	while (lcep->state == CEP_LISTEN) {
		err = kernel_accept(lcep->sock, &nsock, O_NONBLOCK);
		if (err)
			return;
		cep = iwarp_cep_new(lcep->sdev);
		if (!cep) {
			sock_release(nsock);
			continue;
		}
		tcp_sock_set_nodelay(nsock->sk);
		refcount_inc(&lcep->ref);
		cep->listener = lcep;
		cep->sock = nsock;
		/* Not seen by anyone before its callbacks are installed. */
		cep->state = CEP_MPA_REQ_WAIT;
		iwarp_cep_sk_install(cep);
		mod_delayed_work(iwarp_cm_wq, &cep->timeout, IWARP_MPA_TIMEOUT);
		/* the Request may be there already */
		iwarp_cep_kick(cep, CEP_EV_SOCK);
		/* its own reference lasts until iwarp_cep_set_closed() */
	}
}

static struct socket *iwarp_sock_create(struct softrnic_dev *sdev, int family)
{
	struct socket *sock;
	int err;

	err = sock_create_kern(dev_net(sdev->netdev), family, SOCK_STREAM,
			       IPPROTO_TCP, &sock);
	return err ? ERR_PTR(err) : sock;
}

/*
 * A wildcard address is bound to the device's netdev (SO_BINDTODEVICE):
 * the device accepts what arrives at its port, as an RNIC does, including
 * connections to the netdev's own addresses from this host (the route
 * of a local address names its device), on addresses added later too.
 * Another device's wildcard listener on the same port (siw, which binds
 * its own to its netdev in the listening process's namespace; rdma_cm
 * hands a wildcard listen to every device) then does not clash with ours.
 */
static bool iwarp_addr_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static int iwarp_listen_on(struct iw_cm_id *cm_id, struct iwarp_listen *l,
			   const struct sockaddr *addr, int backlog)
{
	struct softrnic_dev *sdev = to_sdev(cm_id->device);
	struct iwarp_cep *cep;
	struct socket *sock;
	int len = addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
		  sizeof(struct sockaddr_in6);
	int err;

	sock = iwarp_sock_create(sdev, addr->sa_family);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	sock_set_reuseaddr(sock->sk);
	if (addr->sa_family == AF_INET6)
		ip6_sock_set_v6only(sock->sk);
	err = iwarp_addr_any(addr) ?
	      sock_bindtoindex(sock->sk, sdev->netdev->ifindex, true) : 0;
	if (!err)
		err = kernel_bind(sock, (struct sockaddr *)addr, len);
	if (!err)
		err = kernel_listen(sock, backlog);
	if (err) {
		sock_release(sock);
		return err;
	}
	cep = iwarp_cep_new(sdev);
	if (!cep) {
		sock_release(sock);
		return -ENOMEM;
	}
	cep->sock = sock;
	cep->state = CEP_LISTEN;
	cm_id->add_ref(cm_id);
	cep->cm_id = cm_id;
	l->cep = cep;
	iwarp_cep_sk_install(cep);
	/* a connection that came before the callbacks were there */
	iwarp_cep_kick(cep, CEP_EV_SOCK);
	return 0;
}

static void iwarp_listen_close(struct iwarp_cep *cep)
{
	refcount_inc(&cep->ref);
	mutex_lock(&cep->mutex);
	iwarp_cep_set_closed(cep);
	iwarp_cep_sock_close(cep, false);
	iwarp_cep_drop_cm_id(cep);
	mutex_unlock(&cep->mutex);
	if (cancel_work_sync(&cep->work))
		iwarp_cep_put(cep);		/* the queued work's */
	iwarp_cep_put(cep);
}

int softrnic_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	struct iwarp_listen *l = cm_id->provider_data;

	if (!l)
		return 0;
	if (l->cep)
		iwarp_listen_close(l->cep);
	cm_id->provider_data = NULL;
	kfree(l);
	return 0;
}

int softrnic_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	const struct sockaddr *sa = (struct sockaddr *)&cm_id->m_local_addr;
	struct iwarp_listen *l;
	int err;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		return -ENOMEM;
	cm_id->provider_data = l;
	err = iwarp_listen_on(cm_id, l, sa, backlog);
	/*
	 * Our netdev's port is another device's already (siw on the same
	 * netdev of this namespace, which rdma_cm's wildcard listen reached
	 * first): that device serves it, and the listen does not fail.
	 */
	if (err == -EADDRINUSE && iwarp_addr_any(sa))
		err = 0;
	if (err)
		softrnic_iw_destroy_listen(cm_id);
	return err;
}

/* ------------------------------------------------------------------ */
/* The QPs */

void softrnic_iw_add_ref(struct ib_qp *ibqp)
{
	refcount_inc(&to_sqp(ibqp)->ref);
}

void softrnic_iw_rem_ref(struct ib_qp *ibqp)
{
	softrnic_qp_put(to_sqp(ibqp));
}

/* iw_cm holds ib_core's reference on the QP's uobject while it asks. */
struct ib_qp *softrnic_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct softrnic_qp *qp;

	if (qpn < 0)
		return NULL;
	qp = softrnic_qp_get(to_sdev(ibdev), qpn);
	if (!qp)
		return NULL;
	/* the caller takes its own reference with iw_add_ref */
	softrnic_qp_put(qp);
	return &qp->ibqp;
}

/* An RC QP of this device that no connection has: referenced. */
static struct softrnic_qp *iwarp_cm_qp(struct iw_cm_id *cm_id, u32 qpn)
{
	struct softrnic_qp *qp = softrnic_qp_get(to_sdev(cm_id->device), qpn);

	if (!qp)
		return NULL;
	if (qp->kind != SR_QP_RC || !qp->wire_priv ||
	    READ_ONCE(iwarp_qp(qp)->cep)) {
		softrnic_qp_put(qp);
		return NULL;
	}
	return qp;
}

static void iwarp_cm_local(struct mpa_local *loc, u32 ird, u32 ord)
{
	memset(loc, 0, sizeof(*loc));
	loc->crc = READ_ONCE(mpa_crc);
	loc->markers_ok = false;
	loc->enhanced = true;
	loc->p2p = READ_ONCE(mpa_p2p);
	loc->rtr = MPA_RTR_ALL;
	loc->ird = min_t(u32, ird, SOFTRNIC_MAX_RD_ATOMIC);
	loc->ord = min_t(u32, ord, SOFTRNIC_MAX_RD_ATOMIC);
	loc->max_ird = SOFTRNIC_MAX_RD_ATOMIC;
	loc->large_fpdu = true;
	loc->rdmap_ext = IWARP_DP_RDMAP_EXT;
}

int softrnic_iw_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param)
{
	struct softrnic_dev *sdev = to_sdev(cm_id->device);
	struct sockaddr *laddr = (struct sockaddr *)&cm_id->m_local_addr;
	struct sockaddr *raddr = (struct sockaddr *)&cm_id->m_remote_addr;
	int alen = raddr->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
		   sizeof(struct sockaddr_in6);
	struct softrnic_qp *qp;
	struct iwarp_cep *cep;
	struct socket *sock;
	int err;

	if (raddr->sa_family != AF_INET && raddr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (param->private_data_len > MPA_MAX_PD_LEN - MPA_V2_CTRL_LEN)
		return -EINVAL;
	qp = iwarp_cm_qp(cm_id, param->qpn);
	if (!qp)
		return -EINVAL;
	sock = iwarp_sock_create(sdev, raddr->sa_family);
	if (IS_ERR(sock)) {
		softrnic_qp_put(qp);
		return PTR_ERR(sock);
	}
	tcp_sock_set_nodelay(sock->sk);
	err = kernel_bind(sock, laddr, alen);
	cep = err ? NULL : iwarp_cep_new(sdev);
	if (!cep) {
		sock_release(sock);
		softrnic_qp_put(qp);
		return err ?: -ENOMEM;
	}
	cep->sock = sock;
	iwarp_cm_local(&cep->loc, param->ird, param->ord);
	mpa_request_params(&cep->loc, &cep->req);
	memcpy(cep->pd, param->private_data, param->private_data_len);
	cep->pd_len = param->private_data_len;

	refcount_inc(&cep->ref);		/* ours, until the end */
	mutex_lock(&cep->mutex);
	cep->qp = qp;
	cm_id->add_ref(cm_id);
	cep->cm_id = cm_id;
	refcount_inc(&cep->ref);
	cm_id->provider_data = cep;
	mutex_lock(&qp->mutex);
	refcount_inc(&cep->ref);
	iwarp_qp(qp)->cep = cep;
	mutex_unlock(&qp->mutex);
	cep->state = CEP_TCP_CONNECTING;
	iwarp_cep_sk_install(cep);
	mod_delayed_work(iwarp_cm_wq, &cep->timeout, IWARP_MPA_TIMEOUT);
	err = kernel_connect(sock, raddr, alen, O_NONBLOCK);
	if (err == -EINPROGRESS)
		err = 0;
	if (err) {
		/* iw_cm takes a failed connect as the end: no event */
		cep->state = CEP_IDLE;
		iwarp_cep_finish(cep, err, true);
	}
	mutex_unlock(&cep->mutex);
	if (!err)
		iwarp_cep_kick(cep, CEP_EV_SOCK);
	iwarp_cep_put(cep);
	return err;
}

/* Answer the Request with a Reply; cep->mutex held. */
static int iwarp_cep_reply(struct iwarp_cep *cep, bool reject,
			   const struct mpa_params *rep, const void *pd,
			   u8 pd_len)
{
	u8 buf[MPA_MAX_RR_LEN];
	size_t len;

	len = mpa_rr_build(buf, sizeof(buf), true, reject, rep, pd, pd_len);
	if (!len)
		return -EINVAL;
	return iwarp_cep_send(cep, buf, len);
}

/*
 * The cm_id of a passive end lets go of it: after a reject or a failed
 * accept, iw_cm calls nothing more of ours for it.
 */
static void iwarp_cep_drop_passive_id(struct iwarp_cep *cep,
				      struct iw_cm_id *cm_id)
{
	if (cm_id->provider_data == cep) {
		cm_id->provider_data = NULL;
		iwarp_cep_put(cep);
	}
}

int softrnic_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param)
{
	struct iwarp_cep *cep = cm_id->provider_data;
	struct softrnic_qp *qp = NULL;
	struct mpa_params rep;
	struct mpa_conn conn;
	struct mpa_rr rr;
	int err;

	if (!cep)
		return -EINVAL;
	refcount_inc(&cep->ref);
	mutex_lock(&cep->mutex);
	err = -ECONNRESET;
	if (cep->state != CEP_MPA_REQ_RCVD || !cep->sock)
		goto fail;
	err = -EINVAL;
	if (param->private_data_len > MPA_MAX_PD_LEN - MPA_V2_CTRL_LEN ||
	    mpa_rr_parse(cep->frame, cep->got, false, &rr))
		goto fail;
	qp = iwarp_cm_qp(cm_id, param->qpn);
	if (!qp)
		goto fail;
	cep->qp = qp;
	iwarp_cm_local(&cep->loc, param->ird, param->ord);
	if (mpa_accept(&rr, &cep->loc, &rep, &conn)) {
		/* what the peer asked cannot be given: refuse it */
		softrnic_count(cep->sdev, IWARP_CNT_MPA_REFUSED, 1);
		iwarp_cep_reply(cep, true, &rep, NULL, 0);
		goto fail;
	}
	err = iwarp_cep_reply(cep, false, &rep, param->private_data,
			      param->private_data_len);
	if (err)
		goto fail;
	cm_id->add_ref(cm_id);
	cep->cm_id = cm_id;
	err = iwarp_cep_connected(cep, &conn, false);
	if (err) {
		/* iw_cm takes a failed accept as the end: no event */
		cep->cm_id = NULL;
		cm_id->rem_ref(cm_id);
		goto fail;
	}
	iwarp_cep_event(cep, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0, 0, 0);
	mutex_unlock(&cep->mutex);
	iwarp_cep_put(cep);
	return 0;

fail:
	cep->state = CEP_IDLE;
	iwarp_cep_finish(cep, err, true);
	iwarp_cep_drop_passive_id(cep, cm_id);
	mutex_unlock(&cep->mutex);
	iwarp_cep_put(cep);
	return err;
}

int softrnic_iw_reject(struct iw_cm_id *cm_id, const void *pdata, u8 pdata_len)
{
	struct iwarp_cep *cep = cm_id->provider_data;
	struct mpa_params rep = {};
	struct mpa_rr rr;

	if (!cep)
		return -EINVAL;
	refcount_inc(&cep->ref);
	mutex_lock(&cep->mutex);
	if (cep->state == CEP_MPA_REQ_RCVD && cep->sock &&
	    !mpa_rr_parse(cep->frame, cep->got, false, &rr)) {
		rep.rev = rr.p.rev;
		rep.enhanced = rr.p.enhanced;
		iwarp_cep_reply(cep, true, &rep, pdata, pdata_len);
	}
	cep->state = CEP_IDLE;
	iwarp_cep_finish(cep, -ECONNREFUSED, false);
	iwarp_cep_drop_passive_id(cep, cm_id);
	mutex_unlock(&cep->mutex);
	iwarp_cep_put(cep);
	return 0;
}

/* ------------------------------------------------------------------ */
/* From the QP side */

void iwarp_cm_qp_leaving(struct softrnic_qp *qp, bool abort)
{
	struct iwarp_qp *iwqp = iwarp_qp(qp);
	struct iwarp_cep *cep = iwqp->cep;

	lockdep_assert_held(&qp->mutex);
	if (!cep)
		return;
	iwarp_dp_detach(iwqp, abort);
	iwqp->cep = NULL;
	if (abort)
		set_bit(CEP_EV_ABORT, &cep->events);
	iwarp_cep_kick(cep, CEP_EV_LEAVE);
	iwarp_cep_put(cep);		/* the QP's reference */
}

void iwarp_cm_conn_lost(struct softrnic_qp *qp, int err)
{
	struct iwarp_qp *iwqp = iwarp_qp(qp);
	struct iwarp_cep *cep = READ_ONCE(iwqp->cep);

	/* The data path calls this only while attached: cep is there. */
	if (WARN_ON_ONCE(!cep))
		return;
	cep->lost_err = err;
	iwarp_cep_kick(cep, CEP_EV_LOST);
}

/*
 * @sdev is going away: end its endpoints now, while their sockets' network
 * namespace surely exists (a passive end that has not been handed to
 * iw_cm would otherwise wait for its timeout).  Listeners and connections
 * iw_cm knows of were closed by it already, when rdma_cm let go of the
 * device.
 */
void iwarp_cm_dev_gone(struct softrnic_dev *sdev)
{
	struct iwarp_cep *cep;

	for (;;) {
		struct iwarp_cep *found = NULL;

		spin_lock(&iwarp_ceps_lock);
		list_for_each_entry(cep, &iwarp_ceps, all) {
			if (cep->sdev == sdev && cep->state != CEP_CLOSED &&
			    refcount_inc_not_zero(&cep->ref)) {
				found = cep;
				break;
			}
		}
		spin_unlock(&iwarp_ceps_lock);
		if (!found)
			return;
		mutex_lock(&found->mutex);
		if (found->state == CEP_LISTEN) {
			iwarp_cep_set_closed(found);
			iwarp_cep_sock_close(found, true);
		} else if (found->state != CEP_CLOSED) {
			iwarp_cep_finish(found, -ENODEV, true);
		}
		found->state = CEP_CLOSED;
		mutex_unlock(&found->mutex);
		iwarp_cep_put(found);
	}
}

int iwarp_cm_init(void)
{
	iwarp_cm_wq = alloc_workqueue("softrnic_iwcm", WQ_MEM_RECLAIM, 0);
	return iwarp_cm_wq ? 0 : -ENOMEM;
}

void iwarp_cm_exit(void)
{
	/* every device is gone: what is left ends by itself */
	wait_var_event(&iwarp_nceps, !atomic_read(&iwarp_nceps));
	destroy_workqueue(iwarp_cm_wq);
}
