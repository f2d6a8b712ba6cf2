// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the receive ring, inbound validation and recvmsg().
 *
 * Every receive buffer of the ring is posted at connection setup.  A
 * completed message is validated in the order of Documentation/wire.rst
 * (byte count, header, length for its id, sequence, acknowledgment and
 * credits against what is possible), its header's credits are taken, and
 * then:
 *  - Data with a payload stays in its buffer, queued on ->rx_queue, until
 *    recvmsg() has copied all of it out; only then is the buffer posted
 *    again.  The buffers holding unread data are thus the receive window:
 *    a reader that stops reading stops the sender's credits.  Received
 *    bytes are numbered as a stream (->rcv_nxt, ->copied_seq, and each
 *    buffer's ->seq), as TCP numbers them.
 *  - A SrcAvail stands in the queue for the peer's bytes it advertises
 *    until they are read by RDMA (sdp_zc_read.c); the bytes read ahead into
 *    kernel memory wait in bounce buffers queued in front of it.
 *  - Urgent data (MSG_OOB) is the last byte of a Data message flagged
 *    OOB_PRES.  It follows tcp_check_urg()/tcp_recvmsg(): SIGURG to the
 *    owner, reads stop at the mark, the byte is skipped unless
 *    SO_OOBINLINE and read with recv(MSG_OOB), and a later urgent byte
 *    replaces one not yet read.
 *  - Data without a payload (a credit update), DisConn and Abort are
 *    handled at once and their buffer is posted again.
 * Any violation aborts the connection, counts a protocol error and logs a
 * rate-limited line; nothing from the peer is trusted.
 *
 * When buffers are posted again and the peer's credits, as it last heard
 * of them, run low, a credit update goes out (sdp_tx_flush()).
 *
 * Everything here runs under the socket lock (see sdp.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <net/tcp.h>

#include "sdp.h"

/* The peer's credits as it knows them: the bufs we last advertised less
 * the messages of its we have received since.
 */
static s32 sdp_peer_credits(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = ssk->conn;

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
 * waiting to be told.
 *
 * The peer's bare updates do not count towards that quarter when its data
 * came with them: the reply the data usually asks for carries the credits.
 * Otherwise one request sent as two messages (a header, then a body) sets
 * off an update before the reply, which is a second message the peer
 * answers with an update before its next request, and so on for as long
 * as the connection lives: two messages each way per round trip.
 */
bool sdp_need_credit_update(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = ssk->conn;
	s32 peer = sdp_peer_credits(ssk);
	s32 more = (s32)sdp_rx_adv(ssk) - peer;

	sdp_assert_locked(ssk);

	if (more < 2)
		return false;
	if (peer <= 2)
		return true;
	if (conn->rx_mseq - conn->adv_ack > conn->rx_upd)
		more -= conn->rx_upd;
	return more >= max_t(s32, 2, conn->rx_size / 4);
}

void sdp_rx_repost(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	int err;

	if (!sdp_conn_usable(ssk))
		return;
	err = sdp_rx_post_or_defer(ssk, buf);
	if (err) {
		net_warn_ratelimited("post recv failed: %d\n", err);
		sdp_conn_abort(ssk, ECONNRESET, false);
	}
}

static void sdp_proto_error(struct sdp_sock *ssk, const char *what, u32 val)
{
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id = ssk->cm_id;

	SDP_INC_STATS(sock_net(sk), SDP_MIB_PROTO_ERRORS);
	trace_sdp_proto_error(sk, what, val);
	if (id)
		net_warn_ratelimited("protocol error from %pISpc: %s (%u), connection aborted\n",
				     &id->route.addr.dst_addr, what, val);
	else
		net_warn_ratelimited("protocol error: %s (%u), connection aborted\n",
				     what, val);
	sdp_conn_abort(ssk, ECONNRESET, true);
}

/* Header checks; returns what is wrong, or NULL. */
static const char *sdp_rx_check(struct sdp_sock *ssk, struct sdp_buf *buf,
				u32 *val)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_bsdh *h = buf->data;
	u32 len, mseq, ack, bufs, min;

	*val = buf->len;
	if (buf->len < sizeof(*h))
		return "short message";
	len = be32_to_cpu(h->len);
	*val = len;
	if (len != buf->len)
		return "length differs from bytes received";
	*val = h->mid;
	min = sdp_mid_min_len(h->mid);
	if (!min || len < min)
		return "unexpected message id";
	switch (h->mid) {
	case SDP_MID_DATA:
	case SDP_MID_DISCONN:
	case SDP_MID_ABORT:
		break;
	case SDP_MID_SRC_AVAIL:
	case SDP_MID_SRC_AVAIL_CANCEL:
	case SDP_MID_RDMA_RD_COMPL:
		/* read-based ZCopy, if both sides said they have it */
		if (!(conn->peer_caps & SDP_CAP_SRC_AVAIL))
			return "message id not negotiated";
		break;
	case SDP_MID_SINK_AVAIL:
	case SDP_MID_SINK_AVAIL_CANCEL:
	case SDP_MID_SINK_CANCEL_ACK:
	case SDP_MID_RDMA_WR_COMPL:
		/* write-based ZCopy, likewise */
		if (!(conn->peer_caps & SDP_CAP_SINK_AVAIL))
			return "message id not negotiated";
		break;
	case SDP_MID_CH_RCV_BUF:
	case SDP_MID_CH_RCV_BUF_ACK:
		if (!(conn->peer_caps & SDP_CAP_RESIZE))
			return "message id not negotiated";
		break;
	default:
		return "message id not negotiated";
	}
	if (h->mid != SDP_MID_DATA && len != min)
		return "payload on a control message";
	*val = h->flags;
	if (h->flags & ~(SDP_OOB_PRES | SDP_OOB_PEND))
		return "unknown flags";
	if (h->flags && h->mid != SDP_MID_DATA)
		return "urgent flags on a control message";
	if ((h->flags & SDP_OOB_PRES) && len == sizeof(*h))
		return "urgent flag without a byte";
	mseq = be32_to_cpu(h->mseq);
	*val = mseq;
	if (mseq != conn->rx_mseq + 1)
		return "out of sequence";
	ack = be32_to_cpu(h->mseq_ack);
	*val = ack;
	if ((s32)(ack - conn->remote_ack) < 0 || (s32)(conn->tx_mseq - ack) < 0)
		return "acknowledges a message never sent";
	bufs = be16_to_cpu(h->bufs);
	*val = bufs;
	if (bufs > conn->remote_max_bufs)
		return "more buffers than announced";
	return NULL;
}

/* Bytes of the stream a receive-queue entry holds: a Data message's
 * payload, a bounce buffer's bytes, or a SrcAvail's bytes not yet read.
 */
static u32 sdp_buf_payload(const struct sdp_buf *buf)
{
	if (buf->kind != SDP_BUF_RX)	/* bounce, spill, local */
		return buf->len;
	if (buf->mid == SDP_MID_SRC_AVAIL)
		return buf->zc_len;
	return buf->len - sizeof(struct sdp_bsdh);
}

static void *sdp_buf_bytes(const struct sdp_buf *buf)
{
	return buf->kind != SDP_BUF_RX ? buf->data :
	       buf->data + sizeof(struct sdp_bsdh);
}

/* Drop everything received and not read, with the connection. */
void sdp_rx_purge(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, &conn->rx_queue, list) {
		list_del_init(&buf->list);
		if (buf->kind == SDP_BUF_BOUNCE)
			sdp_bounce_free(buf);
		else if (buf->kind == SDP_BUF_SPILL)
			sdp_rx_spill_free(ssk, conn, buf);
		else if (buf->kind == SDP_BUF_LOCAL)
			sdp_local_rx_done(ssk, buf);
	}
	conn->rx_held = 0;
	conn->zc_bounce = 0;
	conn->zc_rx_count = 0;
	__clear_bit(SDP_F_ZC_HURRY, &ssk->flags);
}

/**
 * sdp_rdma_rx_done - the RDMA transport's release of a buffer read whole
 * @ssk: the socket, locked
 * @buf: a receive buffer, posted again, or a bounce buffer, freed
 */
void sdp_rdma_rx_done(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	sdp_assert_locked(ssk);
	switch (buf->kind) {
	case SDP_BUF_BOUNCE:
		ssk->conn->zc_bounce -= buf->len;
		sdp_bounce_free(buf);
		sdp_zc_rx_done(ssk);
		return;
	case SDP_BUF_SPILL:
		sdp_rx_spill_done(ssk, buf);
		sdp_zc_rx_done(ssk);	/* room for read-ahead too */
		return;
	}
	ssk->conn->rx_held--;
	sdp_rx_repost(ssk, buf);
}

/* Hand back to the transport the entries every byte of which was read. */
static void sdp_rx_release(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf;
	bool released = false;

	while (!list_empty(&conn->rx_queue)) {
		buf = list_first_entry(&conn->rx_queue, struct sdp_buf, list);
		/* a SrcAvail leaves the queue once read (sdp_zc_read.c) */
		if (buf->mid == SDP_MID_SRC_AVAIL && buf->kind == SDP_BUF_RX)
			break;
		if ((s32)(ssk->copied_seq - (buf->seq + sdp_buf_payload(buf))) < 0)
			break;
		list_del_init(&buf->list);
		ssk->tp->rx_done(ssk, buf);
		released = true;
	}
	/* credits for the peer, or room for its writers */
	if (released)
		ssk->tp->flush(ssk, false);
}

/* Urgent data at stream offset @ptr arrives (tcp_check_urg()), before its
 * message's payload is added to the stream.
 */
static void sdp_rx_urg_mark(struct sdp_sock *ssk, u32 ptr)
{
	struct sock *sk = &ssk->sk;

	SDP_INC_STATS(sock_net(sk), SDP_MIB_RX_URGENT);
	sk_send_sigurg(sk);
	/* The reader stands on an older urgent byte it has not read: step
	 * over it now, or it would be read as data once the mark moves.
	 */
	if (ssk->urg_seq == ssk->copied_seq && ssk->urg_data &&
	    !sock_flag(sk, SOCK_URGINLINE) && ssk->copied_seq != ssk->rcv_nxt) {
		WRITE_ONCE(ssk->copied_seq, ssk->copied_seq + 1);
		sdp_rx_release(ssk);
	}
	WRITE_ONCE(ssk->urg_seq, ptr);
}

void sdp_rx_disconn(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	__set_bit(SDP_F_DISCONN_RCVD, &ssk->flags);
	sock_set_flag(sk, SOCK_DONE);
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | RCV_SHUTDOWN);
	switch (sk->sk_state) {
	case TCP_ESTABLISHED:
		sdp_set_state(sk, TCP_CLOSE_WAIT);
		break;
	case TCP_FIN_WAIT1:
		sdp_set_state(sk, TCP_CLOSING);
		break;
	}
	sk->sk_state_change(sk);
	sdp_close_if_done(ssk);
	if (sk->sk_shutdown == SHUTDOWN_MASK || sk->sk_state == TCP_CLOSE)
		sk_wake_async(sk, SOCK_WAKE_WAITD, POLL_HUP);
	else
		sk_wake_async(sk, SOCK_WAKE_WAITD, POLL_IN);
}

/* A Data message with a payload, or a local peer's bytes. */
void sdp_rx_data(struct sdp_sock *ssk, struct sdp_buf *buf, u8 flags)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);
	u32 payload = sdp_buf_payload(buf);

	if (test_bit(SDP_F_DISCONN_RCVD, &ssk->flags)) {
		sdp_proto_error(ssk, "data after DisConn", payload);
		return;
	}
	SDP_INC_STATS(net, SDP_MIB_RX_DATA);
	SDP_ADD_STATS(net, SDP_MIB_RX_BYTES, payload);
	conn->st.data_segs_in++;
	conn->st.bytes_received += payload;
	conn->st.last_data_recv = jiffies;
	if (sock_flag(sk, SOCK_DEAD)) {
		/* closed by its owner: nobody will read (TCP resets) */
		sdp_conn_abort(ssk, 0, true);
		return;
	}
	if (flags & SDP_OOB_PRES)
		sdp_rx_urg_mark(ssk, ssk->rcv_nxt + payload - 1);
	buf->seq = ssk->rcv_nxt;
	list_add_tail(&buf->list, &conn->rx_queue);
	WRITE_ONCE(ssk->rcv_nxt, ssk->rcv_nxt + payload);
	if (flags & SDP_OOB_PRES)
		WRITE_ONCE(ssk->urg_data, TCP_URG_VALID |
			   ((u8 *)buf->data)[buf->len - 1]);
	if (buf->kind == SDP_BUF_RX)
		sdp_rx_held_add(ssk);	/* the peer's credit, held */
	sk->sk_data_ready(sk);
}

static void sdp_rx_message(struct sdp_sock *ssk, struct sdp_buf *buf);

/* Receive completion (or flush) of a receive buffer. */
void sdp_rx_complete(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);

	conn->rx_posted--;
	buf->posted = false;
	if (buf->status != IB_WC_SUCCESS) {
		if (buf->status != IB_WC_WR_FLUSH_ERR) {
			SDP_INC_STATS(net, SDP_MIB_CQ_ERRORS);
			net_dbg_ratelimited("receive completion error %s\n",
					    ib_wc_status_msg(buf->status));
			sdp_conn_abort(ssk, ECONNRESET, false);
		} else {
			sdp_flushed(ssk);
		}
		return;
	}
	if (conn->sdev)
		ib_dma_sync_single_for_cpu(conn->sdev->ibdev, buf->dma,
					   buf->len, DMA_FROM_DEVICE);

	/* Already reset: what follows does not matter. */
	if (test_bit(SDP_F_RESET, &ssk->flags))
		return;
	/* The peer may send as soon as it has accepted, and its message may
	 * complete here before rdma_cm has told us of the HelloAck with its
	 * credits: keep it until sdp_rx_early() (at most the ring).
	 */
	if (unlikely(sk->sk_state == TCP_SYN_SENT)) {
		list_add_tail(&buf->list, &conn->rx_early);
		return;
	}
	sdp_rx_message(ssk, buf);
}

/**
 * sdp_rx_early - handle the messages that came before the HelloAck
 * @ssk: the socket, locked, just established (the HelloAck taken)
 */
void sdp_rx_early(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf;

	sdp_assert_locked(ssk);

	while (!list_empty(&conn->rx_early) &&
	       !test_bit(SDP_F_RESET, &ssk->flags)) {
		buf = list_first_entry(&conn->rx_early, struct sdp_buf, list);
		list_del_init(&buf->list);
		sdp_rx_message(ssk, buf);
	}
	INIT_LIST_HEAD(&conn->rx_early);
}

/* A message received on an established connection. */
static void sdp_rx_message(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);
	struct sdp_bsdh *h = buf->data;
	const char *bad;
	u32 val;

	bad = sdp_rx_check(ssk, buf, &val);
	if (bad) {
		sdp_proto_error(ssk, bad, val);
		return;
	}
	conn->rx_mseq = be32_to_cpu(h->mseq);
	conn->remote_ack = be32_to_cpu(h->mseq_ack);
	conn->remote_bufs = be16_to_cpu(h->bufs);
	conn->st.segs_in++;
	conn->st.last_recv = jiffies;
	conn->ka_probes = 0;
	conn->init_wait = false;	/* the initiator has sent first */

	switch (h->mid) {
	case SDP_MID_DATA:
		/* OOB_PEND alone announces an urgent byte still to come:
		 * tell the owner now, as TCP does when it first sees the
		 * urgent pointer.  ib_sdp itself never sends it.
		 */
		if ((h->flags & (SDP_OOB_PEND | SDP_OOB_PRES)) == SDP_OOB_PEND)
			sk_send_sigurg(sk);
		if (buf->len == sizeof(*h)) {
			SDP_INC_STATS(net, SDP_MIB_RX_CREDIT_UPDATE);
			conn->rx_upd++;
			sdp_rx_repost(ssk, buf);
			break;
		}
		sdp_rx_data(ssk, buf, h->flags);
		if (test_bit(SDP_F_RESET, &ssk->flags))
			return;
		break;
	case SDP_MID_DISCONN:
		SDP_INC_STATS(net, SDP_MIB_RX_DISCONN);
		sdp_rx_repost(ssk, buf);
		conn->fin_ack_owed = conn->iwarp;
		sdp_rx_disconn(ssk);
		break;
	case SDP_MID_ABORT:
		SDP_INC_STATS(net, SDP_MIB_RX_ABORT);
		/* as tcp_reset(): after the peer's DisConn, a write fails */
		sdp_conn_abort(ssk, sdp_reset_errno(sk), false);
		return;
	case SDP_MID_SRC_AVAIL:
		if (test_bit(SDP_F_DISCONN_RCVD, &ssk->flags)) {
			sdp_proto_error(ssk, "SrcAvail after DisConn", 0);
			return;
		}
		if (sock_flag(sk, SOCK_DEAD)) {
			sdp_conn_abort(ssk, 0, true);	/* nobody will read */
			return;
		}
		if (sdp_zc_rx_srcavail(ssk, buf)) {
			sdp_proto_error(ssk, "SrcAvail length or count",
					be32_to_cpu(((struct sdp_avail_hdr *)
						     (h + 1))->len));
			return;
		}
		break;
	case SDP_MID_RDMA_RD_COMPL:
		val = be32_to_cpu(((struct sdp_size_hdr *)(h + 1))->size);
		sdp_rx_repost(ssk, buf);
		if (sdp_zc_rx_rdcompl(ssk, val)) {
			sdp_proto_error(ssk, "RdmaRdCompl beyond what was advertised",
					val);
			return;
		}
		break;
	case SDP_MID_SRC_AVAIL_CANCEL:
		sdp_rx_repost(ssk, buf);
		sdp_zc_rx_cancel(ssk);
		break;
	case SDP_MID_SINK_AVAIL:
		bad = sdp_zc_rx_sinkavail(ssk, buf) ? "SinkAvail length" : NULL;
		sdp_rx_repost(ssk, buf);
		if (bad) {
			sdp_proto_error(ssk, bad, 0);
			return;
		}
		break;
	case SDP_MID_SINK_AVAIL_CANCEL:
		sdp_rx_repost(ssk, buf);
		if (sdp_zc_rx_sink_cancel(ssk)) {
			sdp_proto_error(ssk, "SinkAvailCancel without a SinkAvail", 0);
			return;
		}
		break;
	case SDP_MID_RDMA_WR_COMPL:
		val = be32_to_cpu(((struct sdp_size_hdr *)(h + 1))->size);
		sdp_rx_repost(ssk, buf);
		if (test_bit(SDP_F_DISCONN_RCVD, &ssk->flags) ||
		    sdp_zc_rx_wrcompl(ssk, val)) {
			sdp_proto_error(ssk, "RdmaWrCompl without a SinkAvail",
					val);
			return;
		}
		break;
	case SDP_MID_SINK_CANCEL_ACK:
		sdp_rx_repost(ssk, buf);
		if (sdp_zc_rx_cancel_ack(ssk)) {
			sdp_proto_error(ssk, "SinkCancelAck without a cancel", 0);
			return;
		}
		break;
	case SDP_MID_CH_RCV_BUF:
		val = be32_to_cpu(((struct sdp_size_hdr *)(h + 1))->size);
		/* the new size first, so that this buffer is posted again
		 * at it: the peer's returns after a shrink count on every
		 * buffer that is posted
		 */
		sdp_rx_chrcvbuf(ssk, val);
		sdp_rx_repost(ssk, buf);
		break;
	case SDP_MID_CH_RCV_BUF_ACK:
		val = be32_to_cpu(((struct sdp_size_hdr *)(h + 1))->size);
		sdp_rx_repost(ssk, buf);
		if (sdp_tx_chrcvbuf_ack(ssk, val)) {
			sdp_proto_error(ssk, "ChRcvBufAck not asked for", val);
			return;
		}
		break;
	}

	if (conn->iwarp)
		sdp_disconn_acked(ssk);
	/* new credits may release queued data; reposts may need telling */
	sdp_tx_flush(ssk);
}

/* The buffer holding stream offset @seq and the offset in its payload. */
static struct sdp_buf *sdp_rx_find(struct sdp_sock *ssk, u32 seq, u32 *off)
{
	struct sdp_buf *buf;

	list_for_each_entry(buf, &ssk->conn->rx_queue, list) {
		u32 o = seq - buf->seq;

		if (o < sdp_buf_payload(buf)) {
			*off = o;
			return buf;
		}
	}
	return NULL;
}

/* Clip a read of @used bytes at *@seq (*@off into its buffer) to the
 * urgent mark: stop before the mark, or step over the urgent byte when it
 * is read out of line.  Returns the bytes to copy, 0 when only the urgent
 * byte was stepped over.
 */
static size_t sdp_rx_urg_clip(struct sdp_sock *ssk, u32 *seq, u32 *off,
			      size_t used, u32 *urg_hole)
{
	u32 urg_offset = ssk->urg_seq - *seq;

	if (likely(!ssk->urg_data) || urg_offset >= used)
		return used;
	if (urg_offset)
		return urg_offset;
	if (sock_flag(&ssk->sk, SOCK_URGINLINE))
		return used;
	WRITE_ONCE(*seq, *seq + 1);
	(*urg_hole)++;
	(*off)++;
	return used - 1;
}

/* recv(MSG_OOB), as tcp_recv_urg(): never blocks. */
static int sdp_recv_urg(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
			int flags)
{
	struct sock *sk = &ssk->sk;
	u16 urg = ssk->urg_data;
	char c;

	if (sock_flag(sk, SOCK_URGINLINE) || !urg || urg == TCP_URG_READ)
		return -EINVAL;
	if (sk->sk_state == TCP_CLOSE && !sock_flag(sk, SOCK_DONE))
		return -ENOTCONN;
	if (urg & TCP_URG_VALID) {
		c = urg;
		if (!(flags & MSG_PEEK))
			WRITE_ONCE(ssk->urg_data, TCP_URG_READ);
		msg->msg_flags |= MSG_OOB;
		if (!len) {
			msg->msg_flags |= MSG_TRUNC;
			return 0;
		}
		if (!(flags & MSG_TRUNC) && memcpy_to_msg(msg, &c, 1))
			return -EFAULT;
		return 1;
	}
	if (sk->sk_state == TCP_CLOSE || (sk->sk_shutdown & RCV_SHUTDOWN))
		return 0;
	return -EAGAIN;
}

/* Before a reader sleeps, it watches for data a little while (the module
 * parameter recv_poll, in microseconds), the socket unlocked so that
 * completions are handled at once: being put to sleep and woken costs more
 * than a reply that is about to come.  Once per recvmsg().  A reader that
 * polls in vain SDP_RECV_POLL_MISSES times in a row, its peer slower than
 * that, stops polling for its next 32, 64, ... 1024 waits, so that idle
 * and slow connections cost no CPU; one success ends that.  SO_BUSY_POLL
 * set on the socket gives the time instead, and always polls, as on TCP.
 * True if data (or an error, the end, a signal) came.
 */
static bool sdp_recv_busy_poll(struct sdp_sock *ssk, u32 seq)
{
	struct sock *sk = &ssk->sk;
	unsigned int us = clamp_t(int, READ_ONCE(sdp_recv_poll), 0,
				  SDP_RECV_POLL_MAX);
	bool got = false, asked = false;
	u64 end;

#ifdef CONFIG_NET_RX_BUSY_POLL
	if (READ_ONCE(sk->sk_ll_usec)) {
		us = min_t(unsigned int, READ_ONCE(sk->sk_ll_usec),
			   SDP_RECV_POLL_MAX);
		asked = true;
	}
#endif
	if (!us)
		return false;
	if (ssk->poll_skip && !asked) {
		ssk->poll_skip--;
		return false;
	}
	SDP_INC_STATS(sock_net(sk), SDP_MIB_RECV_POLLS);
	end = local_clock() + (u64)us * NSEC_PER_USEC;
	release_sock(sk);
	do {
		if (READ_ONCE(ssk->rcv_nxt) != seq || READ_ONCE(sk->sk_err) ||
		    (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) ||
		    signal_pending(current)) {
			got = true;
			break;
		}
		cpu_relax();
	} while (!need_resched() && local_clock() < end);
	lock_sock(sk);
	if (got) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_RECV_POLL_HITS);
		ssk->poll_misses = 0;
		ssk->poll_backoff = 0;
	} else if (++ssk->poll_misses >= SDP_RECV_POLL_MISSES) {
		ssk->poll_misses = 0;
		ssk->poll_skip = 32U << ssk->poll_backoff;
		if (ssk->poll_backoff < 5)
			ssk->poll_backoff++;
	}
	return got;
}

/* As tcp_recvmsg_locked(), over the receive buffers. */
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		int flags)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	u32 peek_seq, *seq, off, urg_hole = 0;
	int copied = 0, target, n;
	struct sdp_conn *conn;
	struct sdp_buf *buf;
	bool polled = false;
	size_t used;
	long timeo;

	if (flags & MSG_ERRQUEUE)
		return sock_recv_errqueue(sk, msg, len, SOL_IP, IP_RECVERR);

	lock_sock(sk);
	conn = sdp_conn_get(ssk);	/* what we hold stays while we sleep */
	if (sk->sk_state == TCP_LISTEN) {
		copied = -ENOTCONN;
		goto out;
	}
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	if (flags & MSG_OOB) {
		copied = sdp_recv_urg(ssk, msg, len, flags);
		goto out;
	}

	seq = &ssk->copied_seq;
	if (flags & MSG_PEEK) {
		peek_seq = ssk->copied_seq;
		seq = &peek_seq;
	}
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);

	do {
		/* a connection made or replaced while we slept: hold the
		 * one we use now, so that what a sleep below keeps (a
		 * transport's link, ZCopy state) stays
		 */
		if (unlikely(!sdp_conn_same(ssk, conn))) {
			sdp_conn_put(conn);
			conn = sdp_conn_get(ssk);
		}
		/* at urgent data: stop if anything was read */
		if (unlikely(ssk->urg_data) && ssk->urg_seq == *seq) {
			if (copied)
				break;
			if (signal_pending(current)) {
				copied = timeo ? sock_intr_errno(timeo) : -EAGAIN;
				break;
			}
		}

		buf = sdp_rx_find(ssk, *seq, &off);
		if (buf) {
			used = min_t(size_t, sdp_buf_payload(buf) - off, len);
			used = sdp_rx_urg_clip(ssk, seq, &off, used, &urg_hole);
			if (buf->kind == SDP_BUF_RX &&
			    buf->mid == SDP_MID_SRC_AVAIL) {
				/* the peer's pages: read them (sdp_zc_read.c) */
				n = sdp_zc_recv(ssk, buf, msg, used, flags, seq);
				if (n < 0) {
					/* READs that failed with the connection:
					 * its error (ETIMEDOUT when the peer is
					 * gone), reported once, as TCP does
					 */
					if (!copied)
						copied = n == -ECONNRESET &&
							 sk->sk_err ?
							 sock_error(sk) : n;
					break;
				}
				copied += n;
				len -= n;
				continue;
			}
			if (used && !(flags & MSG_TRUNC) &&
			    copy_to_iter(sdp_buf_bytes(buf) + off, used,
					 &msg->msg_iter) != used) {
				if (!copied)
					copied = -EFAULT;
				break;
			}
			WRITE_ONCE(*seq, *seq + used);
			copied += used;
			len -= used;
			if (unlikely(ssk->urg_data) &&
			    (s32)(ssk->copied_seq - ssk->urg_seq) > 0)
				WRITE_ONCE(ssk->urg_data, 0);
			if (!(flags & MSG_PEEK))
				sdp_rx_release(ssk);
			continue;
		}

		if (copied >= target)
			break;
		if (copied) {
			if (!timeo || sk->sk_err || sk->sk_state == TCP_CLOSE ||
			    (sk->sk_shutdown & RCV_SHUTDOWN) ||
			    signal_pending(current))
				break;
		} else {
			if (sock_flag(sk, SOCK_DONE))
				break;
			if (sk->sk_err) {
				copied = sock_error(sk);
				break;
			}
			if (sk->sk_shutdown & RCV_SHUTDOWN)
				break;
			if (sk->sk_state == TCP_CLOSE) {
				/* never connected, or disconnected */
				copied = -ENOTCONN;
				break;
			}
			if (!timeo) {
				copied = -EAGAIN;
				break;
			}
			if (signal_pending(current)) {
				copied = sock_intr_errno(timeo);
				break;
			}
		}

		/* nothing to read: watch for it a moment */
		if (!polled) {
			polled = true;
			if (sdp_recv_busy_poll(ssk, *seq))
				continue;
		}

		/* the poll slept: look again at what is ours */
		if (unlikely(!sdp_conn_same(ssk, conn)))
			continue;
		/* still nothing: offer the buffer to the peer (the
		 * transport's sink sleeps on @conn, which we hold)
		 */
		n = ssk->tp->sink(ssk, msg, len, flags, &timeo);
		if (n > 0) {
			copied += n;
			len -= n;
			continue;
		}
		if (n < 0 && n != -EOPNOTSUPP) {
			if (!copied)
				copied = n;
			break;
		}
		if (!n)
			continue;	/* look again: data, time, signal */

		add_wait_queue(sk_sleep(sk), &wait);
		ssk->zc_readers++;
		sk_wait_event(sk, &timeo,
			      ssk->rcv_nxt != *seq || sk->sk_err ||
			      (sk->sk_shutdown & RCV_SHUTDOWN) ||
			      sk->sk_state == TCP_CLOSE, &wait);
		ssk->zc_readers--;
		remove_wait_queue(sk_sleep(sk), &wait);

		if ((flags & MSG_PEEK) &&
		    peek_seq - copied - urg_hole != ssk->copied_seq) {
			/* another reader took data meanwhile */
			peek_seq = ssk->copied_seq;
		}
	} while (len > 0);
	sdp_zc_rx_done(ssk);

out:
	sdp_conn_put(conn);
	release_sock(sk);
	return copied;
}
