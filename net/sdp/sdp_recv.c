// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the socket's receive queue as a byte stream, and recvmsg().
 *
 * Objects: a connection's receive queue (conn->rx_queue) holds what the
 * transport received, in order: struct sdp_buf entries whose bytes are
 * numbered as a stream (->rcv_nxt, ->copied_seq, each entry's ->seq), as
 * TCP numbers them.  A transport adds an entry with sdp_rx_data() and
 * the peer's end of the stream with sdp_rx_disconn(); recvmsg() copies
 * the bytes out and hands every entry read whole back to the transport
 * (->rx_done()), and, with nothing to read, offers the reader's buffer
 * to the transport to fill straight (->sink()) before it sleeps.
 *
 * Urgent data (MSG_OOB) follows tcp_check_urg()/tcp_recvmsg(): SIGURG to
 * the owner, reads stop at the mark, the byte is skipped unless
 * SO_OOBINLINE and read with recv(MSG_OOB), and a later urgent byte
 * replaces one not yet read.
 *
 * Locks: everything here runs under the socket lock.  recvmsg() holds
 * the connection of each round across its sleeps (sdp_conn_get()), see
 * sdp.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_az.h"

void sdp_proto_error(struct sdp_sock *ssk, const char *what, u32 val)
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

/* Hand back to the transport the entries every byte of which was read. */
static void sdp_rx_release(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf;
	bool released = false;

	while (!list_empty(&conn->rx_queue)) {
		buf = list_first_entry(&conn->rx_queue, struct sdp_buf, list);
		/* the peer's bytes leave the queue once read (->read_remote) */
		if (sdp_buf_remote(buf))
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

/**
 * sdp_rx_data - a transport received bytes of the stream
 * @ssk: the socket, locked
 * @buf: a Data message with a payload, or a local peer's bytes
 * @flags: its SDP_OOB_* flags: the last byte is urgent
 *
 * Return: true if @buf is queued for the reader; false if not (after the
 * peer's DisConn, or the socket closed: the connection is aborted).
 */
bool sdp_rx_data(struct sdp_sock *ssk, struct sdp_buf *buf, u8 flags)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);
	u32 payload = sdp_buf_payload(buf);

	if (test_bit(SDP_F_DISCONN_RCVD, &ssk->flags)) {
		sdp_proto_error(ssk, "data after DisConn", payload);
		return false;
	}
	SDP_INC_STATS(net, SDP_MIB_RX_DATA);
	SDP_ADD_STATS(net, SDP_MIB_RX_BYTES, payload);
	conn->st.data_segs_in++;
	conn->st.bytes_received += payload;
	conn->st.last_data_recv = jiffies;
	if (sock_flag(sk, SOCK_DEAD)) {
		/* closed by its owner: nobody will read (TCP resets) */
		sdp_conn_abort(ssk, 0, true);
		return false;
	}
	if (flags & SDP_OOB_PRES)
		sdp_rx_urg_mark(ssk, ssk->rcv_nxt + payload - 1);
	buf->seq = ssk->rcv_nxt;
	list_add_tail(&buf->list, &conn->rx_queue);
	WRITE_ONCE(ssk->rcv_nxt, ssk->rcv_nxt + payload);
	if (flags & SDP_OOB_PRES)
		WRITE_ONCE(ssk->urg_data, TCP_URG_VALID |
			   ((u8 *)buf->data)[buf->len - 1]);
	sk->sk_data_ready(sk);
	return true;
}

/* The buffer holding stream offset @seq and the offset in its payload. */
static struct sdp_buf *sdp_rx_find(struct sdp_conn *conn, u32 seq, u32 *off)
{
	struct sdp_buf *buf;

	list_for_each_entry(buf, &conn->rx_queue, list) {
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
		/* what wants this CPU may be what brings the data (a
		 * software device's work, 6.12's rxe): give way, then
		 * watch on until the time is up
		 */
		if (need_resched())
			cond_resched();
		else
			cpu_relax();
	} while (local_clock() < end);
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

/* Copy @len bytes of @buf's payload, @off bytes into it, to @to: from its
 * bytes, or by its transport from the pages it holds (SDP_BUF_PAGES).
 * Return: bytes copied.
 */
static size_t sdp_buf_copy_to_iter(struct sdp_sock *ssk,
				   const struct sdp_buf *buf, u32 off,
				   size_t len, struct iov_iter *to)
{
	if (buf->kind == SDP_BUF_PAGES)
		return ssk->tp->copy_pages(buf, off, len, to);
	return copy_to_iter(sdp_buf_bytes(buf) + off, len, to);
}

/* Read from the receive-queue entry @buf, @off bytes into it, at most
 * @len bytes, at the reader's position *@seq.  Return: bytes read into
 * @msg (0: an urgent byte skipped, or the peer's pages to look at again),
 * or a negative errno.
 */
static int sdp_recv_entry(struct sdp_sock *ssk, struct msghdr *msg,
			  struct sdp_buf *buf, u32 off, size_t len, int flags,
			  u32 *seq, u32 *urg_hole)
{
	size_t used = min_t(size_t, sdp_buf_payload(buf) - off, len);

	used = sdp_rx_urg_clip(ssk, seq, &off, used, urg_hole);
	/* the peer's pages: the transport reads them */
	if (sdp_buf_remote(buf))
		return ssk->tp->read_remote(ssk, buf, msg, used, flags, seq);
	if (used && !(flags & MSG_TRUNC) &&
	    sdp_buf_copy_to_iter(ssk, buf, off, used, &msg->msg_iter) != used)
		return -EFAULT;
	WRITE_ONCE(*seq, *seq + used);
	if (unlikely(ssk->urg_data) &&
	    (s32)(ssk->copied_seq - ssk->urg_seq) > 0)
		WRITE_ONCE(ssk->urg_data, 0);
	if (!(flags & MSG_PEEK))
		sdp_rx_release(ssk);
	return used;
}

/* Nothing to read at the reader's position, @copied bytes read so far:
 * return now, as tcp_recvmsg() would?  Return: 0 to wait, 1 to return
 * @copied, or a negative errno to return (nothing was read).
 */
static int sdp_recv_nowait(struct sock *sk, int copied, int target,
			   long timeo)
{
	int err;

	if (copied >= target)
		return 1;
	if (copied)
		return !timeo || sk->sk_err || sk->sk_state == TCP_CLOSE ||
		       (sk->sk_shutdown & RCV_SHUTDOWN) ||
		       signal_pending(current);
	if (sock_flag(sk, SOCK_DONE))
		return 1;
	if (sk->sk_err) {
		err = sock_error(sk);
		return err ?: 1;
	}
	if (sk->sk_shutdown & RCV_SHUTDOWN)
		return 1;
	if (sk->sk_state == TCP_CLOSE)
		return -ENOTCONN;	/* never connected, or disconnected */
	if (!timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(timeo);
	return 0;
}

/* Still nothing to read: offer the reader's buffer to the peer (the
 * transport's sink sleeps on the connection recvmsg() holds), else sleep
 * until something comes.  Return: bytes the peer placed, 0 to look
 * again (data, time, a signal), or a negative errno.
 */
static int sdp_recv_wait(struct sdp_sock *ssk, struct msghdr *msg,
			 size_t len, int flags, long *timeo, u32 *seq)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	int n;

	n = ssk->tp->sink(ssk, msg, len, flags, timeo);
	if (n != -EOPNOTSUPP)
		return n;
	add_wait_queue(sk_sleep(sk), &wait);
	ssk->zc_readers++;
	sk_wait_event(sk, timeo,
		      ssk->rcv_nxt != *seq || sk->sk_err ||
		      (sk->sk_shutdown & RCV_SHUTDOWN) ||
		      sk->sk_state == TCP_CLOSE, &wait);
	ssk->zc_readers--;
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

/* A connection made or replaced while we slept: hold the one we use now,
 * so that what a sleep below keeps (a transport's link, ZCopy state)
 * stays.
 */
static void sdp_recv_hold(struct sdp_sock *ssk, struct sdp_conn **conn)
{
	if (unlikely(!sdp_conn_same(ssk, *conn))) {
		sdp_conn_put(*conn);
		*conn = sdp_conn_get(ssk);
	}
}

/* At urgent data: stop if anything was read, or for a signal (*@copied
 * becomes its errno).  Return: stop?
 */
static bool sdp_recv_urg_stop(struct sdp_sock *ssk, u32 seq, int *copied,
			      long timeo)
{
	if (likely(!ssk->urg_data) || ssk->urg_seq != seq)
		return false;
	if (*copied)
		return true;
	if (signal_pending(current)) {
		*copied = timeo ? sock_intr_errno(timeo) : -EAGAIN;
		return true;
	}
	return false;
}

/* recvmsg() of the stream, as tcp_recvmsg_locked(), over the receive
 * queue: the socket locked, *@conn its connection, held (replaced by the
 * new one's when a new connection is made while we sleep).  Return: bytes
 * read, or a negative errno.
 */
static int sdp_recv_stream(struct sdp_sock *ssk, struct msghdr *msg,
			   size_t len, int flags, struct sdp_conn **conn)
{
	struct sock *sk = &ssk->sk;
	u32 peek_seq, *seq, off, urg_hole = 0;
	int copied = 0, target, n;
	struct sdp_buf *buf;
	bool polled = false;
	long timeo;

	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	seq = &ssk->copied_seq;
	if (flags & MSG_PEEK) {
		peek_seq = ssk->copied_seq;
		seq = &peek_seq;
	}
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);

	do {
		sdp_recv_hold(ssk, conn);
		if (sdp_recv_urg_stop(ssk, *seq, &copied, timeo))
			break;

		buf = sdp_rx_find(ssk->conn, *seq, &off);
		if (buf) {
			n = sdp_recv_entry(ssk, msg, buf, off, len, flags, seq,
					   &urg_hole);
			if (n < 0) {
				/* READs that failed with the connection:
				 * its error (ETIMEDOUT when the peer is
				 * gone), reported once, as TCP does
				 */
				if (!copied)
					copied = n == -ECONNRESET && sk->sk_err ?
						 sock_error(sk) : n;
				break;
			}
			copied += n;
			len -= n;
			continue;
		}

		n = sdp_recv_nowait(sk, copied, target, timeo);
		if (n) {
			if (n < 0)
				copied = n;
			break;
		}
		/* nothing to read: watch for it a moment */
		if (!polled) {
			polled = true;
			if (sdp_recv_busy_poll(ssk, *seq))
				continue;
		}
		/* the poll slept: look again at what is ours */
		if (unlikely(!sdp_conn_same(ssk, *conn)))
			continue;

		n = sdp_recv_wait(ssk, msg, len, flags, &timeo, seq);
		if (n < 0) {
			if (!copied)
				copied = n;
			break;
		}
		copied += n;
		len -= n;
		if ((flags & MSG_PEEK) &&
		    peek_seq - copied - urg_hole != ssk->copied_seq) {
			/* another reader took data meanwhile */
			peek_seq = ssk->copied_seq;
		}
	} while (len > 0);
	if (ssk->tp->reader_done)
		ssk->tp->reader_done(ssk);
	return copied;
}

int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		int flags)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_conn *conn;
	int ret;

	if (flags & MSG_ERRQUEUE)
		return sock_recv_errqueue(sk, msg, len, SOL_IP, IP_RECVERR);
	ret = sdp_az_recv_wait(sk, msg);	/* before we hold the lock */
	if (ret)
		return ret;

	lock_sock(sk);
	conn = sdp_conn_get(ssk);	/* what we hold stays while we sleep */
	if (sk->sk_state == TCP_LISTEN)
		ret = -ENOTCONN;
	else if (flags & MSG_OOB)
		ret = sdp_recv_urg(ssk, msg, len, flags);
	else
		ret = sdp_recv_stream(ssk, msg, len, flags, &conn);
	sdp_conn_put(conn);
	release_sock(sk);
	return ret;
}
