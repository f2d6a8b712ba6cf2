// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the RDMA transport's BCopy send path and send credits.
 *
 * Its ->sendmsg() (sdp_rdma_sendmsg(), called by sendmsg(), sdp_send.c)
 * copies the application's bytes into the connection's send
 * buffers: it fills the last queued buffer up to the largest message the
 * peer accepts (its receive buffer size), then takes a free one.  Filled
 * buffers wait on ->tx_queue and are posted as Data messages, in order,
 * while the peer has credits.  A partly filled buffer is held back, as TCP
 * holds a small segment, while data is in flight (Nagle, unless
 * TCP_NODELAY), or for at most 200 ms while TCP_CORK is set or after
 * MSG_MORE.  send(MSG_OOB) ends its message with the urgent byte, flags it
 * OOB_PRES and posts it at once, as TCP's urgent mode overrides Nagle and
 * the cork.
 *
 * Credits (Documentation/wire.rst): the peer's posted receive buffers that
 * our messages may still fill, mseq_ack - mseq + bufs from its last
 * header.  Data, SrcAvail and the like are posted only while credits
 * last.  Control messages (credit updates, DisConn, Abort, RdmaRdCompl,
 * SrcAvailCancel) need none: every peer posts SDP_CTRL_BUFS receive
 * buffers beyond those it advertises, which only control messages fill,
 * up to SDP_CTRL_BUFS of them past our credits (sdp_send_ctrl()).  So a
 * side can always tell the other what it needs to go on: both may fill
 * each other's windows and neither deadlocks.  Control messages use their own
 * few buffers.  A send completion returns the buffer, posts whatever was
 * waiting and wakes writers.  On iWARP a passive side posts nothing
 * until the initiator's first message is in (sdp_tx_init_wait()).
 *
 * Everything here runs under the socket lock (see sdp.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <net/tcp.h>

#include "sdp.h"

bool sdp_writable(const struct sdp_sock *ssk)
{
	u32 lowat = READ_ONCE(ssk->notsent_lowat);

	if (!test_bit(SDP_F_CONN, &ssk->flags))
		return true;
	return sdp_tx_buf_avail(ssk) &&
	       (!lowat || READ_ONCE(ssk->tx_queued) < lowat);
}

/* The credits a control message @mid needs more than: how many of the
 * peer's unadvertised buffers it may take.
 */
static int sdp_ctrl_floor(u8 mid)
{
	if (mid == SDP_MID_DATA || mid == SDP_MID_ABORT)
		return -SDP_CTRL_BUFS;
	return -(SDP_CTRL_BUFS - 1);
}

/**
 * sdp_send_ctrl - post a control message
 * @ssk: the socket, locked
 * @mid: SDP_MID_DATA (a credit update), SDP_MID_DISCONN, SDP_MID_ABORT,
 *	 a ZCopy control message (SrcAvailCancel, SinkAvail, SinkAvailCancel,
 *	 SinkCancelAck), or RdmaRdCompl / RdmaWrCompl / ChRcvBuf /
 *	 ChRcvBufAck with @size
 * @size: the size header's value
 *
 * Control messages need no credit: they fill the receive buffers the peer
 * keeps beyond those it advertises (Documentation/wire.rst), SDP_CTRL_BUFS
 * of them, and no more until its next header: credits go down to
 * -SDP_CTRL_BUFS at most, so no message ever finds the peer's receive
 * queue empty (which the transport would retry after an RNR delay).  The
 * last of those buffers is kept for a credit update or an Abort, which
 * ask nothing of the peer: two peers short of credits can always tell
 * each other of the buffers they posted again.
 *
 * Return: 0, -EAGAIN without a free control buffer or a peer's buffer, or
 * another negative errno.
 */
int sdp_send_ctrl(struct sdp_sock *ssk, u8 mid, u32 size)
{
	struct sdp_conn *conn = ssk->conn;
	struct net *net = sock_net(&ssk->sk);
	struct sdp_buf *buf;
	int err;

	sdp_assert_locked(ssk);

	if (!sdp_conn_usable(ssk))
		return -ENOTCONN;
	if (list_empty(&conn->ctrl_free) ||
	    sdp_tx_credits(ssk) <= sdp_ctrl_floor(mid))
		return -EAGAIN;

	buf = list_first_entry(&conn->ctrl_free, struct sdp_buf, list);
	list_del_init(&buf->list);
	buf->mid = mid;
	buf->flags = 0;
	buf->len = sizeof(struct sdp_bsdh);
	if (mid == SDP_MID_RDMA_RD_COMPL || mid == SDP_MID_RDMA_WR_COMPL ||
	    mid == SDP_MID_CH_RCV_BUF || mid == SDP_MID_CH_RCV_BUF_ACK) {
		struct sdp_size_hdr *sz = buf->data + sizeof(struct sdp_bsdh);

		sz->size = cpu_to_be32(size);
		buf->len += sizeof(*sz);
	} else if (mid == SDP_MID_SINK_AVAIL) {
		sdp_zc_fill_sinkavail(ssk, buf->data + sizeof(struct sdp_bsdh));
		buf->len += sizeof(struct sdp_avail_hdr);
	}
	err = sdp_post_send(ssk, buf);
	if (err) {
		list_add(&buf->list, &conn->ctrl_free);
		return err;
	}
	switch (mid) {
	case SDP_MID_DATA:
		SDP_INC_STATS(net, SDP_MIB_TX_CREDIT_UPDATE);
		break;
	case SDP_MID_DISCONN:
		SDP_INC_STATS(net, SDP_MIB_TX_DISCONN);
		break;
	case SDP_MID_ABORT:
		SDP_INC_STATS(net, SDP_MIB_TX_ABORT);
		break;
	case SDP_MID_RDMA_RD_COMPL:
		SDP_INC_STATS(net, SDP_MIB_TX_RDCOMPL);
		break;
	}
	return 0;
}

/* Hold back a partly filled last buffer?  @push: the cork's time is up. */
static bool sdp_tx_hold(struct sdp_sock *ssk, const struct sdp_buf *buf,
			bool push)
{
	struct sdp_conn *conn = ssk->conn;

	if (buf->mid != SDP_MID_DATA ||
	    buf->len >= sdp_tx_room(ssk, buf) || buf->flags ||
	    !list_is_last(&buf->list, &conn->tx_queue) ||
	    test_bit(SDP_F_DISCONN_PEND, &ssk->flags))
		return false;
	if (ssk->cork || ssk->more) {
		if (push)
			return false;
		sdp_cork_timer_arm(ssk);
		return true;
	}
	/* Nagle: data in flight that neither its send completion nor the
	 * peer's mseq_ack has shown to be received yet
	 */
	return !ssk->nodelay && conn->tx_inflight &&
	       conn->remote_ack != conn->tx_mseq;
}

/**
 * sdp_tx_init_wait - iWARP's passive side: send nothing before the peer
 * @ssk: the child, locked, its Hello taken
 *
 * MPA has the connection's initiator send the first message, and
 * Soft-iWARP's initiator fails the connection when ours arrives together
 * with the MPA reply, before its QP took the socket.  An active side
 * that says so in its Hello (SDP_CAP_INIT_FIRST) sends a credit update
 * as soon as it is established; until it is here, or for SDP_INIT_WAIT
 * in case it got lost (a stock siw's, see sdp.rst), ours wait.
 */
void sdp_tx_init_wait(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	if (!conn->iwarp || !(conn->peer_caps & SDP_CAP_INIT_FIRST))
		return;
	conn->init_wait = true;
	conn->init_end = jiffies + SDP_INIT_WAIT;
}

/* Under the socket lock: must our messages wait for the peer's first? */
static bool sdp_tx_init_held(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	if (likely(!conn->init_wait))
		return false;
	if (time_after_eq(jiffies, conn->init_end)) {
		conn->init_wait = false;
		return false;
	}
	sdp_cork_timer_arm(ssk);	/* to look again */
	return true;
}

/* The ZCopy control messages the peer waits for, first; RdmaWrCompl
 * before any data (its bytes come first in the stream) and before
 * SinkCancelAck.  Return: false while an RdmaWrCompl waits for a control
 * buffer (data waits behind it).
 */
static bool sdp_tx_flush_zc_ctrl(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	if (conn->zc_rdcompl &&
	    !sdp_send_ctrl(ssk, SDP_MID_RDMA_RD_COMPL, conn->zc_rdcompl))
		conn->zc_rdcompl = 0;
	if (conn->zc_cancel && !sdp_send_ctrl(ssk, SDP_MID_SRC_AVAIL_CANCEL, 0))
		conn->zc_cancel = false;
	if (conn->zc_wrcompl &&
	    !sdp_send_ctrl(ssk, SDP_MID_RDMA_WR_COMPL, conn->zc_wrcompl))
		conn->zc_wrcompl = 0;
	if (conn->zc_cancel_ack && !conn->zc_wrcompl && !conn->zc_writing &&
	    !sdp_send_ctrl(ssk, SDP_MID_SINK_CANCEL_ACK, 0))
		conn->zc_cancel_ack = false;
	if (conn->zc_sinkavail && sdp_zc_sink_pending(ssk) &&
	    !sdp_send_ctrl(ssk, SDP_MID_SINK_AVAIL, 0)) {
		conn->zc_sinkavail = false;
		sdp_zc_sink_posted(ssk, SDP_MID_SINK_AVAIL);
	}
	if (conn->zc_sink_cancel && !conn->zc_sinkavail &&
	    !sdp_send_ctrl(ssk, SDP_MID_SINK_AVAIL_CANCEL, 0)) {
		conn->zc_sink_cancel = false;
		sdp_zc_sink_posted(ssk, SDP_MID_SINK_AVAIL_CANCEL);
	}
	return !conn->zc_wrcompl;
}

/* Post the send queue's messages while the send queue and the peer's
 * credits let us.  Return: false if posting failed (the connection is
 * reset).
 */
static bool sdp_tx_flush_queue(struct sdp_sock *ssk, bool push)
{
	struct sdp_conn *conn = ssk->conn;
	struct net *net = sock_net(&ssk->sk);
	struct sdp_buf *buf;
	u32 payload;
	int err;

	while (!list_empty(&conn->tx_queue)) {
		buf = list_first_entry(&conn->tx_queue, struct sdp_buf, list);
		if (sdp_tx_hold(ssk, buf, push)) {
			SDP_INC_STATS(net, SDP_MIB_NAGLE_HOLDS);
			break;
		}
		/* what the send queue was sized for (sdp_qp_caps()) */
		if (conn->tx_inflight >= conn->tx_size)
			break;
		if (sdp_tx_credits(ssk) < 1) {
			SDP_INC_STATS(net, SDP_MIB_CREDIT_STALLS);
			conn->st.credit_stalls++;
			trace_sdp_credit_stall(&ssk->sk, ssk->tx_queued,
					       conn->tx_inflight);
			sdp_win_wait(ssk);
			break;
		}
		payload = buf->mid == SDP_MID_DATA ?
			  buf->len - sizeof(struct sdp_bsdh) : 0;
		/* off the queue first: its completion may use ->list at once */
		list_del_init(&buf->list);
		err = sdp_post_send(ssk, buf);
		if (err) {
			list_add(&buf->list, &conn->tx_queue);
			net_warn_ratelimited("post send failed: %d\n",
					     err);
			sdp_conn_abort(ssk, ECONNRESET, false);
			return false;
		}
		ssk->tx_queued -= payload;
		conn->tx_inflight++;
		ssk->tx_inflight_bytes += payload;
		sdp_win_progress(ssk);
		if (!payload)
			continue;	/* a SrcAvail */
		conn->st.data_segs_out++;
		conn->st.bytes_sent += payload;
		conn->st.last_data_sent = jiffies;
		SDP_INC_STATS(net, SDP_MIB_TX_DATA);
		SDP_ADD_STATS(net, SDP_MIB_TX_BYTES, payload);
	}
	return true;
}

/* After the data: a pending DisConn, the acknowledgment of the peer's,
 * credit updates, and the returns of the peer's large buffers.
 */
static void sdp_tx_flush_tail(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	if (test_bit(SDP_F_DISCONN_PEND, &ssk->flags) &&
	    list_empty(&conn->tx_queue) &&
	    !sdp_send_ctrl(ssk, SDP_MID_DISCONN, 0)) {
		__clear_bit(SDP_F_DISCONN_PEND, &ssk->flags);
		__set_bit(SDP_F_DISCONN_SENT, &ssk->flags);
		conn->fin_mseq = conn->tx_mseq;
		conn->fin_ack_owed = false;	/* its header acknowledges */
		return;
	}
	/* iWARP: the peer waits to hear that its DisConn arrived */
	if (conn->fin_ack_owed &&
	    !test_bit(SDP_F_DISCONN_PEND, &ssk->flags) &&
	    !sdp_send_ctrl(ssk, SDP_MID_DATA, 0))
		conn->fin_ack_owed = false;
	/* Even with data waiting for credits: the peer may be waiting for
	 * ours before it can send what gives us credits.
	 */
	if (sdp_need_credit_update(ssk))
		sdp_send_ctrl(ssk, SDP_MID_DATA, 0);
	/* the peer's large buffers, once we asked it to shrink */
	while (conn->tx_returns && !conn->tx_req_send &&
	       list_empty(&conn->tx_queue) && sdp_tx_credits(ssk) > 0 &&
	       !test_bit(SDP_F_DISCONN_PEND, &ssk->flags) &&
	       !test_bit(SDP_F_DISCONN_SENT, &ssk->flags) &&
	       !sdp_send_ctrl(ssk, SDP_MID_DATA, 0))
		;
}

/* Post what may be posted now: the ZCopy control messages, queued data
 * while the credits last, then a pending DisConn once all data is out,
 * else a credit update if the peer is running low.  @push: corked data
 * too.
 */
static void __sdp_tx_flush(struct sdp_sock *ssk, bool push)
{
	struct sdp_conn *conn = ssk->conn;

	if (!sdp_conn_usable(ssk) || sdp_tx_init_held(ssk))
		return;

	if (!sdp_tx_flush_zc_ctrl(ssk))
		return;
	/* sendfile()'s pages: before a DisConn (shutdown(), close()), and
	 * once held too long (MSG_MORE and the cork timer)
	 */
	if (push || test_bit(SDP_F_DISCONN_PEND, &ssk->flags))
		sdp_zc_page_flush(ssk);
	/* buffer sizes (sdp_mem.c) */
	if (conn->tx_req_send &&
	    !sdp_send_ctrl(ssk, SDP_MID_CH_RCV_BUF, conn->tx_req))
		conn->tx_req_send = false;
	if (sdp_rx_ack_due(ssk) &&
	    !sdp_send_ctrl(ssk, SDP_MID_CH_RCV_BUF_ACK, conn->rcv_size))
		sdp_rx_ack_sent(ssk);

	if (sdp_tx_flush_queue(ssk, push))
		sdp_tx_flush_tail(ssk);
}

/**
 * sdp_tx_flush - post what may be posted now
 * @ssk: the socket, locked
 */
void sdp_tx_flush(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	__sdp_tx_flush(ssk, false);
}

/**
 * sdp_tx_push - post what may be posted now, corked data included
 * @ssk: the socket, locked
 */
void sdp_tx_push(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	__sdp_tx_flush(ssk, true);
}

/* The RDMA transport's flush. */
void sdp_rdma_flush(struct sdp_sock *ssk, bool push)
{
	__sdp_tx_flush(ssk, push);
}

/**
 * sdp_tx_status - fail the connection on a send that completed in error
 * @ssk: the socket, locked
 * @buf: the completed send (any kind but receive)
 *
 * The transport giving up after its retries means the peer is gone, as
 * TCP's retransmission timeout: ETIMEDOUT.  Anything else but a flush is
 * a reset.
 */
void sdp_tx_status(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct net *net = sock_net(&ssk->sk);

	sdp_assert_locked(ssk);

	switch (buf->status) {
	case IB_WC_SUCCESS:
		return;
	case IB_WC_WR_FLUSH_ERR:
		sdp_flushed(ssk);
		return;
	case IB_WC_RETRY_EXC_ERR:
	case IB_WC_RNR_RETRY_EXC_ERR:
		SDP_INC_STATS(net, SDP_MIB_TRANSPORT_TIMEOUTS);
		sdp_conn_abort(ssk, ETIMEDOUT, false);
		return;
	default:
		SDP_INC_STATS(net, SDP_MIB_CQ_ERRORS);
		net_dbg_ratelimited("send completion error %s\n",
				    ib_wc_status_msg(buf->status));
		sdp_conn_abort(ssk, ECONNRESET, false);
		return;
	}
}

/* A round trip: from posting a message to its completion, which the RC
 * transport reports once the peer's device has acknowledged it.
 */
static void sdp_tx_rtt(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn_stats *st = &ssk->conn->st;
	u32 rtt = div_u64(ktime_get_ns() - buf->posted_ns, NSEC_PER_USEC);
	s32 delta;

	rtt = max(rtt, 1U);
	if (!st->srtt_us) {
		st->srtt_us = rtt;
		st->rttvar_us = rtt / 2;
	} else {
		delta = rtt - st->srtt_us;
		st->srtt_us += delta / 8;
		st->rttvar_us += (abs(delta) - (s32)st->rttvar_us) / 4;
	}
	if (!st->min_rtt_us || rtt < st->min_rtt_us)
		st->min_rtt_us = rtt;
}

/* Send completion (or flush) of a data or control buffer. */
void sdp_tx_complete(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;

	sdp_tx_status(ssk, buf);

	if (buf->kind == SDP_BUF_CTRL) {
		list_add(&buf->list, &conn->ctrl_free);
		/* on iWARP, only the peer's mseq_ack tells (sdp_close.c) */
		if (buf->mid == SDP_MID_DISCONN &&
		    buf->status == IB_WC_SUCCESS && !conn->iwarp)
			sdp_disconn_done(ssk);
	} else {
		u32 payload = buf->mid == SDP_MID_DATA ?
			      buf->len - sizeof(struct sdp_bsdh) : 0;

		conn->tx_inflight--;
		ssk->tx_inflight_bytes -= payload;
		if (buf->status == IB_WC_SUCCESS) {
			conn->st.bytes_acked += payload;
			sdp_tx_rtt(ssk, buf);
		}
		list_add(&buf->list, &conn->tx_free);
		WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree + 1);
	}

	sdp_tx_flush(ssk);
	if (buf->kind == SDP_BUF_TX)
		sk->sk_write_space(sk);
}

/* May a send take one more send buffer?  @shallow: no more than tx_size
 * messages' worth held (sdp_zc_adapt_probing()).
 */
static bool sdp_tx_may_take(struct sdp_sock *ssk, bool shallow)
{
	struct sdp_conn *conn = ssk->conn;

	if (shallow && sdp_tx_held(ssk) >= conn->tx_size * conn->tx_msg_max)
		return false;
	return sdp_tx_buf_avail(ssk);
}

/* Wait until a send may take a send buffer; called when it may not. */
static int sdp_wait_tx_buf(struct sock *sk, long *timeo, bool shallow)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_sock *ssk = sdp_sk(sk);

	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	SDP_INC_STATS(sock_net(sk), SDP_MIB_SNDBUF_STALLS);
	if (!*timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(*timeo);

	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, timeo,
		      sdp_tx_may_take(ssk, shallow) || sk->sk_err ||
		      !sdp_conn_usable(ssk) ||
		      (sk->sk_shutdown & SEND_SHUTDOWN), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

/* No memory for a send buffer (sdp_tx_buf_take()): wait for a send to
 * complete and give its buffer back, or, with none on its way, a while
 * for memory, as sk_stream_wait_memory() waits.
 */
static int sdp_wait_tx_mem(struct sock *sk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_sock *ssk = sdp_sk(sk);
	long vm_wait, left;

	SDP_INC_STATS(sock_net(sk), SDP_MIB_SNDBUF_STALLS);
	if (!*timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(*timeo);

	add_wait_queue(sk_sleep(sk), &wait);
	if (sdp_tx_buf_ready(ssk)) {
		vm_wait = min_t(long, *timeo, get_random_u32_below(HZ / 5) + 2);
		left = vm_wait;
		sk_wait_event(sk, &left, sk->sk_err || !sdp_conn_usable(ssk) ||
			      (sk->sk_shutdown & SEND_SHUTDOWN), &wait);
		if (*timeo != MAX_SCHEDULE_TIMEOUT)
			*timeo -= vm_wait - left;
	} else {
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		__set_bit(SDP_F_TX_MEM_WAIT, &ssk->flags);
		sk_wait_event(sk, timeo, sdp_tx_buf_ready(ssk) || sk->sk_err ||
			      !sdp_conn_usable(ssk) ||
			      (sk->sk_shutdown & SEND_SHUTDOWN), &wait);
		__clear_bit(SDP_F_TX_MEM_WAIT, &ssk->flags);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

/* Try to send the next part of @msg by ZCopy (sdp_zcopy.c).  Returns the
 * bytes advertised, 0 to copy this part instead, or a negative errno.
 */
static ssize_t sdp_sendmsg_zc(struct sdp_sock *ssk, struct msghdr *msg,
			      struct ubuf_info *uarg, long *timeo, bool *no_zc)
{
	struct sock *sk = &ssk->sk;
	size_t n = 0;
	int err;

	for (;;) {
		err = sdp_zc_send(ssk, msg, uarg, timeo, &n);
		if (!err)
			return n;
		if (err == -ENOBUFS) {
			/* no MRs, or past RLIMIT_MEMLOCK: copy the rest */
			SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_FALLBACKS);
			trace_sdp_zcopy(sk, "fallback-no-mr",
					msg_data_left(msg));
			*no_zc = true;
			return 0;
		}
		if (err != -EAGAIN)
			return err;
		/* No room for another SrcAvail now.  A non-blocking send
		 * copies instead, unless it is MSG_ZEROCOPY: TCP never mixes
		 * copied and zero-copy completions for want of room, it says
		 * EAGAIN (or returns what it took).
		 */
		if (!*timeo)
			return uarg ? -EAGAIN : 0;
		err = sdp_zc_wait_reg(ssk, timeo);
		if (err)
			return err;
		if (sk->sk_err || !sdp_conn_usable(ssk))
			return -EPIPE;
	}
}

/* This round's ZCopy: into a SinkAvail the peer posted, else by
 * SrcAvail.  Return: bytes sent so, 0 to copy them, or a negative errno.
 */
static ssize_t sdp_send_zc_round(struct sdp_sock *ssk, struct msghdr *msg,
				 struct sdp_send *s, bool sink_ok)
{
	ssize_t n = 0;

	if (sink_ok && sdp_zc_peer_sink_usable(ssk) &&
	    list_empty(&ssk->conn->tx_queue) && !ssk->zc_src_count &&
	    sdp_zc_want(ssk, msg, s->flags))
		n = sdp_zc_write(ssk, msg);
	if (!n && !s->no_zc && sdp_zc_want(ssk, msg, s->flags))
		n = sdp_sendmsg_zc(ssk, msg, s->uarg, &s->timeo, &s->no_zc);
	if (n > 0) {
		s->copied += n;
		s->zc_used = true;
	}
	return n;
}

/* The Data buffer this round copies into: the last queued one while it
 * has room, else a new one.  Return: the buffer, NULL after a wait for
 * one (look again), or an ERR_PTR.
 */
static struct sdp_buf *sdp_send_buf(struct sdp_sock *ssk, struct msghdr *msg,
				    struct sdp_send *s)
{
	struct sdp_buf *buf;
	int err;

	if (!list_empty(&ssk->conn->tx_queue)) {
		buf = list_last_entry(&ssk->conn->tx_queue, struct sdp_buf,
				      list);
		/* not full, Data, not ending with urgent data */
		if (buf->len < sdp_tx_room(ssk, buf) && !buf->flags &&
		    buf->mid == SDP_MID_DATA)
			return buf;
	}
	if (msg_data_left(msg) >= 2 * ssk->conn->tx_msg_max ||
	    ssk->tx_queued >= 2 * ssk->conn->tx_msg_max)
		sdp_tx_want_grow(ssk);
	buf = sdp_tx_may_take(ssk, s->shallow) ? sdp_tx_buf_take(ssk) : NULL;
	if (IS_ERR_OR_NULL(buf)) {
		sdp_tx_flush(ssk);
		/* no memory: degraded, not failed; or no buffer: wait */
		err = IS_ERR(buf) ? sdp_wait_tx_mem(&ssk->sk, &s->timeo) :
		      sdp_wait_tx_buf(&ssk->sk, &s->timeo, s->shallow);
		return err ? ERR_PTR(err) : NULL;
	}
	buf->mid = SDP_MID_DATA;
	buf->len = sizeof(struct sdp_bsdh);
	buf->flags = 0;
	return buf;
}

/**
 * sdp_rdma_sendmsg - the RDMA transport's sendmsg(): BCopy, and ZCopy for
 *	large sends (into the peer's SinkAvail, or by SrcAvail)
 * @ssk: the socket, locked and connected
 * @msg: what to send
 * @s: sendmsg()'s state
 *
 * Return: 0 or a negative errno (@s->copied says what was taken).
 */
int sdp_rdma_sendmsg(struct sdp_sock *ssk, struct msghdr *msg,
		     struct sdp_send *s)
{
	struct sock *sk = &ssk->sk;
	size_t size = msg_data_left(msg);
	int flags = s->flags;
	struct sdp_buf *buf;
	bool sink_ok;
	int err;

	sdp_assert_locked(ssk);

	sdp_zc_page_flush(ssk);	/* sendfile()'s pages go first */
	/* A blocking ZCopy send waits for its peer; without time, copy -
	 * but into a SinkAvail the peer has posted, which waits only for
	 * our own WRITEs to complete, never for the peer.  Whatever the
	 * choice by cost below: the reader is waiting, and copying would
	 * only make it cancel its offer first.
	 */
	sink_ok = !s->uarg && !s->no_zc;
	if (!s->uarg && !s->timeo)
		s->no_zc = true;
	/* blocking: the way this connection has found faster */
	if (!s->no_zc && !s->uarg && sdp_zc_adapt_on(ssk) &&
	    sdp_zc_want(ssk, msg, flags)) {
		s->zc_adapt = true;
		s->no_zc = !sdp_zc_adapt_pick(ssk, size);
		s->shallow = s->no_zc && sdp_zc_adapt_probing(ssk);
	}

	while (msg_data_left(msg)) {
		ssize_t n;

		err = -EPIPE;
		if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) ||
		    !sdp_conn_usable(ssk) || !sdp_conn_same(ssk, s->conn))
			goto out;

		n = sdp_send_zc_round(ssk, msg, s, sink_ok);
		if (n < 0) {
			err = n;
			goto out;
		}
		if (n)
			continue;

		buf = sdp_send_buf(ssk, msg, s);
		if (IS_ERR(buf)) {
			err = PTR_ERR(buf);
			goto out;
		}
		if (!buf)
			continue;

		n = min_t(size_t, msg_data_left(msg),
			  sdp_tx_room(ssk, buf) - buf->len);
		if (copy_from_iter(buf->data + buf->len, n, &msg->msg_iter) != n) {
			err = -EFAULT;
			goto out;
		}
		buf->len += n;
		ssk->tx_queued += n;
		s->copied += n;
		if ((flags & MSG_OOB) && !msg_data_left(msg)) {
			/* the last byte of this send is urgent */
			buf->flags = SDP_OOB_PRES;
			SDP_INC_STATS(sock_net(sk), SDP_MIB_TX_URGENT);
		}
		if (buf->len >= sdp_tx_room(ssk, buf))
			sdp_tx_flush(ssk);
	}
	err = 0;
out:
	sdp_tx_flush(ssk);
	/* A blocking ZCopy send returns once the peer has its bytes.  If the
	 * connection fails first, what was advertised counts as sent, as a
	 * TCP send returns what it queued when the reset comes: the next
	 * send reports the error.
	 */
	if (s->zc_used && !s->uarg && sdp_zc_send_wait(ssk, &s->timeo))
		size = 0;	/* interrupted: not a figure of its way */
	if (s->zc_adapt)
		sdp_zc_adapt_done(ssk, size, s->zc_used,
				  !err && size && s->copied == size);
	return err;
}
