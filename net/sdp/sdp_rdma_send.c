// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the RDMA transport's ->sendmsg().
 *
 * sdp_rdma_sendmsg() (called by sendmsg(), sdp_send.c, under the socket
 * lock) picks, per round, how the next part of the message goes: into a
 * SinkAvail the peer posted (RDMA WRITE), by SrcAvail (the peer READs
 * it), or copied into the connection's send buffers (BCopy: sdp_tx.c
 * posts them while the peer has credits).  A blocking ZCopy send returns
 * once the peer has its bytes.  It waits for a send buffer, or for
 * memory, with the socket lock released (sk_wait_event()); the caller
 * holds the connection it sends on (struct sdp_send.conn), and every
 * round checks it is still the socket's (sdp_conn_same()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_az.h"

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
	int err;

	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	err = sdp_send_stall(sk, *timeo);
	if (err)
		return err;
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
	int err;

	err = sdp_send_stall(sk, *timeo);
	if (err)
		return err;
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
			/* no MRs, past RLIMIT_MEMLOCK, or no send buffer
			 * for a SrcAvail: copy the rest
			 */
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

	if (sink_ok && sdp_zc_peer_sink_usable(s->conn) &&
	    list_empty(&ssk->conn->tx_queue) && !ssk->zc_src_count &&
	    sdp_zc_want(ssk, msg, s->flags))
		n = sdp_zc_write(ssk, msg);
	/* an AZ send: only the range its caller protects goes so */
	if (!n && !s->no_zc && sdp_zc_want(ssk, msg, s->flags) &&
	    (!s->az || sdp_az_covers(s, msg)))
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
		if (buf->len < sdp_tx_room(s->conn, buf) && !buf->flags &&
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

/* Choose, for a blocking send, the way this connection has found faster
 * (sdp_zc_adapt.c).  Return: may a SinkAvail the peer posted take it?
 */
static bool sdp_send_choose(struct sdp_sock *ssk, struct msghdr *msg,
			    struct sdp_send *s)
{
	/* A blocking ZCopy send waits for its peer; without time, copy -
	 * but into a SinkAvail the peer has posted, which waits only for
	 * our own WRITEs to complete, never for the peer.  Whatever the
	 * choice by cost below: the reader is waiting, and copying would
	 * only make it cancel its offer first.
	 */
	bool sink_ok = !s->uarg && !s->no_zc;

	if (!s->uarg && !s->timeo)
		s->no_zc = true;
	/* an AZ send, AZ or BCopy; MSG_ZEROCOPY's, as asked */
	if (!s->no_zc && (!s->uarg || s->az) && sdp_zc_adapt_on(ssk) &&
	    sdp_zc_want(ssk, msg, s->flags)) {
		s->zc_adapt = true;
		s->no_zc = !sdp_zc_adapt_pick(ssk, msg_data_left(msg),
					      s->az ? SDP_ZCA_AZ :
					      SDP_ZCA_ZCOPY);
		s->shallow = s->no_zc && sdp_zc_adapt_probing(ssk);
	}
	return sink_ok;
}

/* Copy the next part of @msg into @buf (BCopy); post it once full.
 * Return: 0 or -EFAULT.
 */
static int sdp_send_copy(struct sdp_sock *ssk, struct msghdr *msg,
			 struct sdp_send *s, struct sdp_buf *buf)
{
	size_t n = min_t(size_t, msg_data_left(msg),
			 sdp_tx_room(s->conn, buf) - buf->len);

	if (copy_from_iter(buf->data + buf->len, n, &msg->msg_iter) != n)
		return -EFAULT;
	buf->len += n;
	ssk->tx_queued += n;
	s->copied += n;
	if ((s->flags & MSG_OOB) && !msg_data_left(msg)) {
		/* the last byte of this send is urgent */
		buf->flags = SDP_OOB_PRES;
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_URGENT);
	}
	if (buf->len >= sdp_tx_room(s->conn, buf))
		sdp_tx_flush(ssk);
	return 0;
}

/* One round of sdp_rdma_sendmsg(): ZCopy, else BCopy.  Return: 0 (go on)
 * or a negative errno.
 */
static int sdp_send_round(struct sdp_sock *ssk, struct msghdr *msg,
			  struct sdp_send *s, bool sink_ok)
{
	struct sock *sk = &ssk->sk;
	struct sdp_buf *buf;
	ssize_t n;

	if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) ||
	    !sdp_conn_usable(ssk) || !sdp_conn_same(ssk, s->conn))
		return -EPIPE;
	n = sdp_send_zc_round(ssk, msg, s, sink_ok);
	if (n)
		return n < 0 ? n : 0;
	buf = sdp_send_buf(ssk, msg, s);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	return buf ? sdp_send_copy(ssk, msg, s, buf) : 0;
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
	size_t size = msg_data_left(msg);
	bool sink_ok;
	int err = 0;

	sdp_assert_locked(ssk);

	sdp_zc_page_flush(ssk);	/* sendfile()'s pages go first */
	sink_ok = sdp_send_choose(ssk, msg, s);
	while (msg_data_left(msg) && !err)
		err = sdp_send_round(ssk, msg, s, sink_ok);
	sdp_tx_flush(ssk);
	/* A blocking ZCopy send returns once the peer has its bytes.  If the
	 * connection fails first, what was advertised counts as sent, as a
	 * TCP send returns what it queued when the reset comes: the next
	 * send reports the error.
	 */
	if (s->zc_used && !s->uarg && sdp_zc_send_wait(ssk, &s->timeo))
		size = 0;	/* interrupted: not a figure of its way */
	if (s->zc_adapt)
		sdp_zc_adapt_done(ssk, size, !s->zc_used ? SDP_ZCA_BCOPY :
				  s->az ? SDP_ZCA_AZ : SDP_ZCA_ZCOPY,
				  !err && size && s->copied == size);
	return err;
}

/* The RDMA transport's flush: sendfile()'s pages gathered so far go
 * before a DisConn (shutdown(), close()) and once held too long
 * (MSG_MORE and the cork timer), then whatever may be posted.
 */
void sdp_rdma_flush(struct sdp_sock *ssk, bool push)
{
	if (push || test_bit(SDP_F_DISCONN_PEND, &ssk->flags))
		sdp_zc_page_flush(ssk);
	sdp_tx_post(ssk, push);
}
