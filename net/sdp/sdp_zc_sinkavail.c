// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: ZCopy, write-based (SinkAvail), at both ends.
 *
 * A blocking recv() of at least the threshold, with nothing queued to
 * read, registers its buffer for the peer to write (REMOTE_WRITE over
 * exactly its bytes) and sends a SinkAvail.  A source that has sent no
 * data since the sink's mseq_ack (the SinkAvail's BSDH) and now sends at
 * least the threshold RDMA-WRITEs from its pinned pages straight into
 * that buffer and sends RdmaWrCompl behind the writes.  If data comes
 * another way first, or the reader is interrupted, the sink sends
 * SinkAvailCancel and waits for SinkCancelAck (a RdmaWrCompl may come
 * before it: those bytes are delivered); an offer that could not even be
 * sent yet is simply dropped.  A RdmaWrCompl or SinkCancelAck must
 * acknowledge the SinkAvail or SinkAvailCancel it answers (its mseq_ack):
 * a peer cannot answer what it never received.  The sink's key is
 * invalidated before recv() returns.  A reader whose offers keep being
 * overtaken by copied data stops offering for a while.
 *
 * Everything runs under the socket lock; the RDMA waits drop it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>

#include "sdp.h"
#include "sdp_zcopy.h"

/**
 * sdp_zc_sink_want - should this reader offer its buffer to the peer?
 * @ssk: the socket, locked
 * @msg: the reader's message
 * @len: bytes it still wants
 * @flags: recvmsg() flags
 * @timeo: its time left (a SinkAvail only for a reader that may wait)
 *
 * Return: true if a SinkAvail should be sent for this reader.
 */
bool sdp_zc_sink_want(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		      int flags, long timeo)
{
	struct sdp_conn *conn = ssk->conn;
	u32 thresh = READ_ONCE(ssk->zcopy_thresh);

	sdp_assert_locked(ssk);

	return thresh && timeo && len >= thresh &&
	       !(flags & (MSG_PEEK | MSG_TRUNC | MSG_OOB)) &&
	       (conn->peer_caps & SDP_CAP_SINK_AVAIL) &&
	       (iter_is_iovec(&msg->msg_iter) || iter_is_ubuf(&msg->msg_iter)) &&
	       iov_iter_single_seg_count(&msg->msg_iter) >= thresh &&
	       sdp_zc_all_read(ssk) && sdp_conn_usable(ssk) &&
	       !(ssk->sk.sk_shutdown & RCV_SHUTDOWN) &&
	       !(conn->zc && conn->zc->sink_state != SDP_ZC_SINK_NONE);
}

/* After SDP_ZC_SINK_MISSES offers in a row that the data overtook (the
 * source copies: its sends are small, or it found BCopy faster), the
 * next SDP_ZC_SINK_SKIP readers that would offer do not: each offer
 * costs a registration and a cancel's round trip before the reader may
 * take the copied bytes.
 */
static bool sdp_zc_sink_backoff(struct sdp_conn *conn)
{
	struct sdp_zc *zc = conn->zc;

	if (!zc || !zc->sink_skip)
		return false;
	zc->sink_skip--;
	return true;
}

static void sdp_zc_sink_count(struct sdp_sock *ssk, struct sdp_zc *zc,
			      u32 wrote)
{
	if (wrote || ssk->rcv_nxt == ssk->copied_seq) {
		/* written, or ended by time, a signal, a failure */
		if (wrote)
			zc->sink_misses = 0;
		return;
	}
	if (++zc->sink_misses >= SDP_ZC_SINK_MISSES) {
		zc->sink_misses = 0;
		zc->sink_skip = SDP_ZC_SINK_SKIP;
	}
}

/* The RDMA transport's sink: a SinkAvail, if ZCopy would take it. */
int sdp_rdma_sink(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		  int flags, long *timeo)
{
	if (!sdp_zc_sink_want(ssk, msg, len, flags, *timeo) ||
	    sdp_zc_sink_backoff(ssk->conn))
		return -EOPNOTSUPP;
	return sdp_zc_sink(ssk, msg, timeo);
}

/* For a wait without the lock: @arg is the connection the offer was made
 * on, held by the reader; gone, or replaced, the offer is over too.
 */
static bool sdp_zc_sink_settled(struct sdp_sock *ssk, void *arg)
{
	struct sdp_conn *conn = arg;
	struct sdp_zc *zc = conn->zc;

	if (!sdp_conn_usable(ssk) || !sdp_conn_same(ssk, conn))
		return true;
	return zc->sink_state == SDP_ZC_SINK_OUT ? zc->sink_done :
						   zc->sink_acked;
}

/* For sdp_zc_wait(): our key to @arg (the SinkAvail's registration) is
 * dead, by our LOCAL_INV or by the teardown.
 */
static bool sdp_zc_sink_dead(void *arg)
{
	struct sdp_zc_reg *reg = arg;

	return READ_ONCE(reg->state) == SDP_ZC_REG_INVALIDATED ||
	       READ_ONCE(reg->state) == SDP_ZC_REG_FREE;
}

/* The reader stops waiting and the peer wrote nothing: withdraw the
 * offer.  One not sent yet (no control buffer was free) is dropped; one
 * sent is cancelled, and the peer must answer within
 * SDP_ZC_CANCEL_TIMEOUT (a fatal signal does not wait for that).
 */
static void sdp_zc_sink_withdraw(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;	/* held by recvmsg() */
	struct sdp_zc *zc = conn->zc;
	struct sock *sk = &ssk->sk;
	long grace = SDP_ZC_CANCEL_TIMEOUT;

	if (!zc->sink_sent) {
		conn->zc_sinkavail = false;
		return;
	}
	zc->sink_state = SDP_ZC_SINK_CANCEL;
	conn->zc_sink_cancel = true;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_SINK_CANCELS);
	trace_sdp_zcopy(sk, "sinkavail-cancel", 0);
	sdp_tx_flush(ssk);
	while (!sdp_zc_sink_settled(ssk, conn) && grace > 0) {
		release_sock(sk);
		grace = wait_event_killable_timeout(ssk->zc_wait,
						    sdp_zc_sink_settled(ssk, conn),
						    grace);
		lock_sock(sk);
	}
	if (!sdp_zc_sink_settled(ssk, conn)) {
		/* killed while waiting: reset as before; a silent peer:
		 * ETIMEDOUT, as TCP's for one
		 */
		if (grace < 0) {
			sdp_conn_abort(ssk, ECONNRESET, true);
			return;
		}
		SDP_INC_STATS(sock_net(sk), SDP_MIB_STALL_TIMEOUTS);
		net_warn_ratelimited("peer did not answer a SinkAvailCancel, connection timed out\n");
		sdp_conn_abort(ssk, ETIMEDOUT, true);
	}
}

/* The offer is over: our key dies before the buffer is the reader's
 * again.  Ours to release once our LOCAL_INV is done; otherwise (the
 * connection failed) the teardown deregisters the MR, then releases it:
 * never the pages while a key to them may work.
 */
static void sdp_zc_sink_end(struct sdp_sock *ssk, struct sdp_zc_reg *reg)
{
	if (reg->state == SDP_ZC_REG_ADVERTISED && sdp_conn_usable(ssk) &&
	    sdp_zc_inv_post(ssk, reg))
		sdp_conn_abort(ssk, ECONNRESET, false);
	sdp_zc_wait(ssk, sdp_zc_sink_dead, reg);
	if (reg->state == SDP_ZC_REG_INVALIDATED)
		sdp_zc_reg_finish(ssk, reg, true);
}

/* @reg, @len bytes of the reader's buffer registered, offered on @conn:
 * the SinkAvail goes out with the next flush.
 */
static void sdp_zc_sink_offer(struct sdp_sock *ssk, struct sdp_conn *conn,
			      struct sdp_zc *zc, struct sdp_zc_reg *reg,
			      ssize_t len)
{
	zc->sink = reg;
	zc->sink_state = SDP_ZC_SINK_OUT;
	zc->sink_sent = false;
	zc->cancel_sent = false;
	zc->sink_done = false;
	zc->sink_acked = false;
	zc->sink_wrote = 0;
	conn->zc_sinkavail = true;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_SINKAVAIL);
	trace_sdp_zcopy(&ssk->sk, "sinkavail", len);
	sdp_tx_flush(ssk);
}

/* The reader's wait for its SinkAvail is over: the peer wrote, the
 * connection ended or was replaced (@conn is the one offered on), data
 * came another way, or an error or a shutdown.
 */
static bool sdp_zc_sink_over(struct sdp_sock *ssk, struct sdp_conn *conn,
			     struct sdp_zc *zc)
{
	struct sock *sk = &ssk->sk;

	return zc->sink_done || !sdp_conn_usable(ssk) ||
	       !sdp_conn_same(ssk, conn) ||
	       ssk->rcv_nxt != ssk->copied_seq || sk->sk_err ||
	       (sk->sk_shutdown & RCV_SHUTDOWN);
}

/**
 * sdp_zc_sink - offer the reader's buffer to the peer, and wait
 * @ssk: the socket, locked, with nothing queued to read
 * @msg: the reader's message: its iterator moves past what the peer wrote
 * @timeo: the reader's time left
 *
 * Return: bytes the peer wrote into the buffer (read, as far as the stream
 * goes), 0 when it wrote none (data came another way, the time is up, a
 * signal: the caller goes on as without a SinkAvail), -EOPNOTSUPP when no
 * SinkAvail could be offered (the caller waits as usual), or another
 * negative errno.
 */
int sdp_zc_sink(struct sdp_sock *ssk, struct msghdr *msg, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_conn *conn = ssk->conn;	/* held by recvmsg() */
	struct sock *sk = &ssk->sk;
	struct sdp_zc_reg *reg;
	struct sdp_zc *zc;
	u32 wrote;
	ssize_t n;

	sdp_assert_locked(ssk);

	zc = sdp_zc_get(ssk);
	if (!zc || sdp_zc_mrs(conn, zc))
		return -EOPNOTSUPP;
	reg = sdp_zc_free_reg(zc);
	if (!reg)
		return -EOPNOTSUPP;
	reg->sink = true;
	n = sdp_zc_register(ssk, zc, reg, &msg->msg_iter, NULL,
			    IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE);
	if (n < 0) {
		reg->sink = false;
		if (n == -ENOBUFS) {
			SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_FALLBACKS);
			trace_sdp_zcopy(sk, "fallback-no-mr", 0);
		}
		return n == -EFAULT ? n : -EOPNOTSUPP;
	}
	sdp_zc_sink_offer(ssk, conn, zc, reg, n);

	/* the peer writes, or data comes another way, or we give up */
	add_wait_queue(sk_sleep(sk), &wait);
	ssk->zc_readers++;
	while (!sdp_zc_sink_over(ssk, conn, zc) && *timeo &&
	       !signal_pending(current))
		sk_wait_event(sk, timeo, sdp_zc_sink_over(ssk, conn, zc), &wait);
	ssk->zc_readers--;
	remove_wait_queue(sk_sleep(sk), &wait);

	/* replaced while we slept: its teardown ended the offer, and
	 * nothing of the new connection is ours to touch
	 */
	if (!sdp_conn_same(ssk, conn)) {
		zc->sink = NULL;
		iov_iter_revert(&msg->msg_iter, n);
		return 0;
	}
	if (!zc->sink_done && sdp_conn_usable(ssk))
		sdp_zc_sink_withdraw(ssk);
	wrote = zc->sink_done ? zc->sink_wrote : 0;
	sdp_zc_sink_count(ssk, zc, wrote);
	zc->sink_state = SDP_ZC_SINK_NONE;
	zc->sink = NULL;
	conn->zc_sinkavail = false;
	sdp_zc_sink_end(ssk, reg);
	iov_iter_revert(&msg->msg_iter, n - wrote);
	if (wrote)
		SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_ZC_SINK_BYTES, wrote);
	conn->st.zc_sink_recv += wrote;
	trace_sdp_zcopy(sk, "sink-filled", wrote);
	return wrote;
}

/* Sink: RdmaWrCompl, the peer wrote @size bytes into our SinkAvail.  Its
 * mseq_ack (now ssk->conn->remote_ack) must show that it had our SinkAvail.
 */
int sdp_zc_rx_wrcompl(struct sdp_sock *ssk, u32 size)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_zc *zc = conn->zc;

	/* the source may write only bytes that come next in the stream:
	 * nothing can be queued before them
	 */
	if (!zc || zc->sink_state == SDP_ZC_SINK_NONE || !zc->sink_sent ||
	    (s32)(conn->remote_ack - zc->sink_mseq) < 0 || zc->sink_done ||
	    !size || size > zc->sink->len || ssk->rcv_nxt != ssk->copied_seq)
		return -EPROTO;
	zc->sink_done = true;
	zc->sink_wrote = size;
	/* those bytes were read the moment they landed */
	WRITE_ONCE(ssk->rcv_nxt, ssk->rcv_nxt + size);
	WRITE_ONCE(ssk->copied_seq, ssk->copied_seq + size);
	conn->st.bytes_received += size;
	conn->st.last_data_recv = jiffies;
	sdp_zc_wake(&ssk->sk);
	return 0;
}

/* Sink: SinkCancelAck, the peer will not write into our SinkAvail; it
 * must acknowledge our SinkAvailCancel.
 */
int sdp_zc_rx_cancel_ack(struct sdp_sock *ssk)
{
	struct sdp_zc *zc = ssk->conn->zc;

	if (!zc || zc->sink_state != SDP_ZC_SINK_CANCEL || !zc->cancel_sent ||
	    (s32)(ssk->conn->remote_ack - zc->cancel_mseq) < 0 || zc->sink_acked)
		return -EPROTO;
	zc->sink_acked = true;
	sdp_zc_wake(&ssk->sk);
	return 0;
}

/* Source: the peer offers a buffer (SinkAvail, with its BSDH's mseq_ack):
 * usable if it had received every data-bearing message we sent.
 */
int sdp_zc_rx_sinkavail(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_bsdh *h = buf->data;
	struct sdp_avail_hdr *a = (struct sdp_avail_hdr *)(h + 1);
	u32 len = be32_to_cpu(a->len);

	if (!len || len > SDP_ZC_ADV_MAX)
		return -EPROTO;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_SINKAVAIL);
	conn->zc_peer_sink.addr = be64_to_cpu(a->addr);
	conn->zc_peer_sink.rkey = be32_to_cpu(a->rkey);
	conn->zc_peer_sink.len = len;
	conn->zc_peer_sink.ack = be32_to_cpu(h->mseq_ack);
	conn->zc_peer_sink.valid = true;
	conn->zc_peer_sink.open = true;
	return 0;
}

/* The peer's SinkAvail may be written into only while the peer had
 * received every data-bearing message we have sent: checked when it is
 * used, for we may have sent data since it came.
 */
bool sdp_zc_peer_sink_usable(const struct sdp_conn *conn)
{
	return conn->zc_peer_sink.valid &&
	       (s32)(conn->zc_peer_sink.ack - conn->zc_data_mseq) >= 0;
}

/* Source: SinkAvailCancel; answered once whatever we wrote is reported.
 * Only for a SinkAvail not withdrawn yet: each cancel costs us a control
 * message.
 */
int sdp_zc_rx_sink_cancel(struct sdp_conn *conn)
{
	if (!conn->zc_peer_sink.open)
		return -EPROTO;
	conn->zc_peer_sink.open = false;
	conn->zc_peer_sink.valid = false;
	conn->zc_cancel_ack = true;
	return 0;
}

/* Post up to SDP_ZC_RW_OPS RDMA WRITEs of [*pos, len) of the SinkAvail.
 * Return: ops posted; *stop when the rest must be copied (or the
 * connection was reset).
 */
static int sdp_zc_write_batch(struct sdp_sock *ssk, struct sdp_zc *zc,
			      struct msghdr *msg, u32 len, u32 *pos, bool *stop)
{
	int n, posted = 0;

	while (*pos < len && posted < SDP_ZC_RW_OPS) {
		struct sdp_zc_rw *rw = &zc->wr[posted];

		n = sdp_zc_rw_prep(ssk, rw, &msg->msg_iter,
				   min_t(u32, len - *pos, SDP_ZC_CHUNK),
				   ssk->conn->zc_peer_sink.addr + *pos,
				   ssk->conn->zc_peer_sink.rkey);
		if (n < 0 && rw->stuck) {
			/* what it uses goes after the teardown's drain */
			net_warn_ratelimited("RDMA WRITE posted in part (%d), connection reset\n",
					     n);
			sdp_conn_abort(ssk, ECONNRESET, false);
			*stop = true;
			return posted + 1;
		}
		if (n < 0) {
			*stop = true;
			break;
		}
		*pos += n;
		posted++;
	}
	return posted;
}

/* Wait for @posted WRITEs; return the bytes they moved, or -EPIPE: the
 * connection failed, and the send reports its error (sk_stream_error():
 * ETIMEDOUT when the transport gave up), as TCP's does.
 */
static int sdp_zc_write_reap(struct sdp_sock *ssk, struct sdp_zc *zc,
			     int posted)
{
	bool failed = false;
	u32 good = 0;
	int i;

	sdp_zc_wait(ssk, sdp_zc_rw_idle, zc->wr);
	for (i = 0; i < posted; i++) {
		struct sdp_zc_rw *rw = &zc->wr[i];
		bool ok = !failed && rw->b.status == IB_WC_SUCCESS;

		sdp_zc_rw_release(rw, NULL, ok);
		if (ok)
			good += rw->len;
		else
			failed = true;
	}
	return failed ? -EPIPE : good;
}

/* Queue the RdmaWrCompl of @pos bytes behind the writes, before any data. */
static void sdp_zc_write_done(struct sdp_sock *ssk, u32 pos)
{
	ssk->conn->zc_writing = false;
	if (sdp_conn_usable(ssk)) {
		ssk->conn->zc_wrcompl = pos;
		sdp_tx_flush(ssk);
	}
}

/**
 * sdp_zc_write - write the next part of a send into the peer's SinkAvail
 * @ssk: the socket, locked, with a usable SinkAvail of the peer's and
 *	 nothing queued before it
 * @msg: the send; its iterator moves past what was written
 *
 * RDMA-WRITEs from the sender's pinned pages, SDP_ZC_RW_OPS at a time,
 * queues RdmaWrCompl behind the last of them and waits for them (their
 * pages are pinned).
 *
 * Return: bytes written, or a negative errno.
 */
ssize_t sdp_zc_write(struct sdp_sock *ssk, struct msghdr *msg)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;
	struct sdp_zc *zc = sdp_zc_get(ssk);
	u32 len, pos = 0, good = 0;
	bool stop = false, last;
	int posted, n;

	sdp_assert_locked(ssk);

	if (!zc)
		return -ENOMEM;
	len = min_t(size_t, iov_iter_single_seg_count(&msg->msg_iter),
		    conn->zc_peer_sink.len);
	/* no SinkCancelAck before the RdmaWrCompl of what is written */
	conn->zc_writing = true;
	do {
		posted = sdp_zc_write_batch(ssk, zc, msg, len, &pos, &stop);
		if (!posted && !good) {
			conn->zc_writing = false;
			return 0;	/* copy instead */
		}
		conn->zc_peer_sink.valid = false;
		last = stop || pos >= len;
		if (last)
			sdp_zc_write_done(ssk, pos);
		n = posted ? sdp_zc_write_reap(ssk, zc, posted) : 0;
		if (n < 0) {
			conn->zc_writing = false;
			return good ? good : n;	/* the connection is gone */
		}
		good += n;
		/* withdrawn while we wrote: what is written is all */
		if (!last && !conn->zc_peer_sink.open) {
			sdp_zc_write_done(ssk, pos);
			break;
		}
	} while (!last);
	SDP_ADD_STATS(sock_net(sk), SDP_MIB_TX_ZC_WRITE_BYTES, good);
	conn->st.zc_write_sent += good;
	trace_sdp_zcopy(sk, "write", good);
	return good;
}
