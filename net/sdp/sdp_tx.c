// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the RDMA transport's send queue: posting, credits, completions.
 *
 * Its ->sendmsg() (sdp_rdma_send.c) copies the application's bytes into
 * the connection's send buffers: it fills the last queued buffer up to
 * the largest message the peer accepts (its receive buffer size), then
 * takes a free one.  Filled
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
#include "sdp_zcopy.h"

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
	    sdp_tx_credits(conn) <= sdp_ctrl_floor(mid))
		return -EAGAIN;

	buf = list_first_entry(&conn->ctrl_free, struct sdp_buf, list);
	list_del_init(&buf->list);
	buf->mid = mid;
	buf->flags = 0;
	buf->len = sizeof(struct sdp_bsdh);
	if (mid == SDP_MID_RDMA_RD_COMPL || mid == SDP_MID_RDMA_WR_COMPL ||
	    mid == SDP_MID_CH_RCV_BUF || mid == SDP_MID_CH_RCV_BUF_ACK ||
	    mid == SDP_MID_REGION_REVOKE ||
	    mid == SDP_MID_REGION_REVOKE_ACK) {
		struct sdp_size_hdr *sz = buf->data + sizeof(struct sdp_bsdh);

		sz->size = cpu_to_be32(size);
		buf->len += sizeof(*sz);
	} else if (mid == SDP_MID_SINK_AVAIL) {
		sdp_zc_fill_sinkavail(conn, buf->data + sizeof(struct sdp_bsdh));
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
	    buf->len >= sdp_tx_room(conn, buf) || buf->flags ||
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
 * @conn: the child's connection, its Hello taken
 *
 * MPA has the connection's initiator send the first message, and
 * Soft-iWARP's initiator fails the connection when ours arrives together
 * with the MPA reply, before its QP took the socket.  An active side
 * that says so in its Hello (SDP_CAP_INIT_FIRST) sends a credit update
 * as soon as it is established; until it is here, or for SDP_INIT_WAIT
 * in case it got lost (a stock siw's, see sdp.rst), ours wait.
 */
void sdp_tx_init_wait(struct sdp_conn *conn)
{
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
		sdp_zc_sink_posted(conn, SDP_MID_SINK_AVAIL);
	}
	if (conn->zc_sink_cancel && !conn->zc_sinkavail &&
	    !sdp_send_ctrl(ssk, SDP_MID_SINK_AVAIL_CANCEL, 0)) {
		conn->zc_sink_cancel = false;
		sdp_zc_sink_posted(conn, SDP_MID_SINK_AVAIL_CANCEL);
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
		if (sdp_tx_credits(conn) < 1) {
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
		sdp_win_progress(conn);
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
	       list_empty(&conn->tx_queue) && sdp_tx_credits(conn) > 0 &&
	       !test_bit(SDP_F_DISCONN_PEND, &ssk->flags) &&
	       !test_bit(SDP_F_DISCONN_SENT, &ssk->flags) &&
	       !sdp_send_ctrl(ssk, SDP_MID_DATA, 0))
		;
}

/**
 * sdp_tx_owe - send a control message with a size header once a control
 *	buffer is free, after those owed before
 * @ssk: the socket, locked
 * @mid: its id (RegionRevoke, RegionRevokeAck)
 * @size: its size header's value, below 2^24
 *
 * Return: 0, or -ENOSPC with SDP_CTRL_OWED owed already.
 */
int sdp_tx_owe(struct sdp_sock *ssk, u8 mid, u32 size)
{
	struct sdp_conn *conn = ssk->conn;

	sdp_assert_locked(ssk);

	if (conn->nctrl_owed == SDP_CTRL_OWED)
		return -ENOSPC;
	conn->ctrl_owed[conn->nctrl_owed++] = (u32)mid << 24 | size;
	sdp_tx_flush(ssk);
	return 0;
}

/**
 * sdp_tx_owed - is this control message owed, not yet posted?
 * @ssk: the socket, locked
 * @mid: its id
 * @size: its size header's value
 *
 * Return: true if a message @mid of @size is queued and not posted yet.
 */
bool sdp_tx_owed(struct sdp_sock *ssk, u8 mid, u32 size)
{
	struct sdp_conn *conn = ssk->conn;
	int i;

	sdp_assert_locked(ssk);

	for (i = 0; i < conn->nctrl_owed; i++)
		if (conn->ctrl_owed[i] == ((u32)mid << 24 | size))
			return true;
	return false;
}

/* The control messages owed (sdp_tx_owe()), while control buffers last. */
static void sdp_tx_flush_owed(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	u32 m;

	while (conn->nctrl_owed) {
		m = conn->ctrl_owed[0];
		if (sdp_send_ctrl(ssk, m >> 24, m & 0xffffff))
			return;
		memmove(conn->ctrl_owed, conn->ctrl_owed + 1,
			--conn->nctrl_owed * sizeof(conn->ctrl_owed[0]));
	}
}

/**
 * sdp_tx_post - post what may be posted now
 * @ssk: the socket, locked
 * @push: corked data too
 *
 * The ZCopy control messages first, then queued data while the credits
 * last, then a pending DisConn once all data is out, else a credit update
 * if the peer is running low.
 */
void sdp_tx_post(struct sdp_sock *ssk, bool push)
{
	struct sdp_conn *conn = ssk->conn;

	if (!sdp_conn_usable(ssk) || sdp_tx_init_held(ssk))
		return;

	if (!sdp_tx_flush_zc_ctrl(ssk))
		return;
	/* buffer sizes (sdp_mem.c) */
	if (conn->tx_req_send &&
	    !sdp_send_ctrl(ssk, SDP_MID_CH_RCV_BUF, conn->tx_req))
		conn->tx_req_send = false;
	if (sdp_rx_ack_due(ssk) &&
	    !sdp_send_ctrl(ssk, SDP_MID_CH_RCV_BUF_ACK, conn->rcv_size))
		sdp_rx_ack_sent(conn);
	sdp_tx_flush_owed(ssk);

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
	sdp_tx_post(ssk, false);
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
static void sdp_tx_rtt(struct sdp_conn *conn, struct sdp_buf *buf)
{
	struct sdp_conn_stats *st = &conn->st;
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
			sdp_tx_rtt(conn, buf);
		}
		list_add(&buf->list, &conn->tx_free);
		WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree + 1);
	}

	sdp_tx_flush(ssk);
	if (buf->kind == SDP_BUF_TX)
		sk->sk_write_space(sk);
}

/**
 * sdp_sq_posted - a signaled work request went on the send queue
 * @ssk: the socket, locked
 *
 * The stall watchdog (sdp_timer.c) watches the send queue while anything
 * is on it: a peer that stops answering, or stops taking our messages
 * (the transport retries RNR for ever), ends in ETIMEDOUT.
 */
void sdp_sq_posted(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	if (!ssk->conn->tx_wrs++) {
		ssk->conn->tx_wr_stamp = jiffies;
		sdp_stall_arm(ssk);
	}
}

/**
 * sdp_post_send - post a message whose payload is already in @buf
 * @ssk: the socket, locked, with a usable connection and a credit
 * @buf: a send or control buffer; ->mid and ->len are set, the header is
 *	 filled in here with the current credits and sequence numbers
 *
 * Return: 0 or a negative errno (the message was not sent).
 */
int sdp_post_send(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_bsdh *h = buf->data;
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= buf->len,
		.lkey	= conn->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	int err;

	sdp_assert_locked(ssk);

	h->mid = buf->mid;
	h->flags = buf->flags;
	h->bufs = cpu_to_be16(sdp_rx_adv(conn));
	h->len = cpu_to_be32(buf->len);
	h->mseq = cpu_to_be32(conn->tx_mseq + 1);
	h->mseq_ack = cpu_to_be32(conn->rx_mseq);

	if (buf->mid == SDP_MID_ABORT)
		wr.send_flags |= IB_SEND_FENCE;	/* behind sdp_zc_revoke() */
	if (buf->len <= conn->max_inline) {
		/* the device copies inline data from the CPU's address,
		 * not the buffer's DMA one (which software devices alone
		 * have equal)
		 */
		sge.addr = (uintptr_t)buf->data;
		wr.send_flags |= IB_SEND_INLINE;
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_INLINE);
	}
	ib_dma_sync_single_for_device(conn->sdev->ibdev, buf->dma, buf->len,
				      DMA_TO_DEVICE);
	buf->posted_ns = ktime_get_ns();
	err = sdp_qp_post_send(conn->qp, &wr, NULL);
	if (err)
		return err;
	sdp_sq_posted(ssk);
	conn->st.segs_out++;
	conn->tx_mseq++;
	if (conn->tx_returns)
		conn->tx_returns--;	/* it takes one of the peer's buffers */
	if (buf->mid == SDP_MID_SRC_AVAIL)	/* may now be read */
		conn->zc_adv_posted += be32_to_cpu(((struct sdp_avail_hdr *)
						   (h + 1))->len);
	/* a SinkAvail the peer sent before seeing this is stale */
	if ((buf->mid == SDP_MID_DATA && buf->len > sizeof(*h)) ||
	    buf->mid == SDP_MID_SRC_AVAIL || buf->mid == SDP_MID_RDMA_WR_COMPL)
		conn->zc_data_mseq = conn->tx_mseq;
	conn->adv_bufs = sdp_rx_adv(conn);
	conn->adv_ack = conn->rx_mseq;
	conn->rx_upd = 0;
	return 0;
}

/* The peer's credits as it knows them: the bufs we last advertised less
 * the messages of its we have received since.
 */
static s32 sdp_peer_credits(const struct sdp_conn *conn)
{
	return (s32)conn->adv_bufs - (s32)(conn->rx_mseq - conn->adv_ack);
}

/**
 * sdp_need_credit_update - should a header-only update go out now?
 * @ssk: the socket, locked
 *
 * Only when it grants at least two more credits than the peer knows of,
 * so that two peers never answer each other's updates for ever (each
 * update costs the peer a buffer, which it posts again: one short of
 * answering); and only when the peer runs low or a quarter of the ring is
 * waiting to be told, half of it while the peer answers data of ours.
 * Half there: a reply of two messages (a header, then a body, as a web
 * server writes them) leaves its reader owing two credits, which its next
 * request carries; an update for them would be a second message per round
 * trip for the server to take in.  A quarter otherwise: a reader of a
 * one-way stream tells the writer of freed buffers early, before the
 * writer runs dry in a round trip longer than its sends.
 *
 * The peer's bare updates do not count towards that share when its data
 * came with them: the reply the data usually asks for carries the credits.
 * Otherwise one request sent as two messages sets off an update before
 * the reply, which is a second message the peer answers with an update
 * before its next request, and so on for as long as the connection lives:
 * two messages each way per round trip.
 *
 * Return: true if a credit update should be posted now.
 */
bool sdp_need_credit_update(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = ssk->conn;
	s32 peer = sdp_peer_credits(conn);
	s32 more = (s32)sdp_rx_adv(conn) - peer;
	/* our last message carried bytes: the peer's now likely answer it */
	bool asked = conn->tx_mseq && conn->zc_data_mseq == conn->tx_mseq;

	sdp_assert_locked(ssk);

	if (more < 2)
		return false;
	if (peer <= 2)
		return true;
	if (conn->rx_mseq - conn->adv_ack > conn->rx_upd)
		more -= conn->rx_upd;
	return more >= max_t(s32, 2, conn->rx_size / (asked ? 2 : 4));
}
