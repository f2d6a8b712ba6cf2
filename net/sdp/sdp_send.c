// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the socket's send call, and waking its writers.
 *
 * sendmsg() waits for the connection as TCP does (or connects, for
 * MSG_FASTOPEN), holds the connection it sends on across every sleep
 * (struct sdp_send.conn, sdp_conn_get()), takes a MSG_ZEROCOPY
 * notification for the call, and hands the bytes to the transport that
 * carries the connection (->sendmsg()).  sendfile()'s and splice()'s
 * pages go by reference where the transport can (sdp_sendmsg_pages()).
 *
 * sk_write_space wakes writers and poll()ers waiting for room, when the
 * transport says there is enough (->wake_due()).
 *
 * Locks: sendmsg() takes the socket lock; the transport's ->sendmsg()
 * runs under it and may release it only while it waits.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_az.h"

/* sk_write_space: wake writers that ran out of send room once there is
 * enough again (sdp_tx_wake_due()), so that a streaming writer is not
 * woken per message.
 */
void sdp_write_space(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct socket *sock = sk->sk_socket;
	const struct sdp_transport *tp;

	if (!sock || !test_bit(SOCK_NOSPACE, &sock->flags))
		return;
	tp = READ_ONCE(ssk->tp);
	if (test_bit(SDP_F_CONN, &ssk->flags) && tp->wake_due &&
	    !tp->wake_due(ssk))
		return;
	clear_bit(SOCK_NOSPACE, &sock->flags);
	sdp_wake_space(sk);
}

/* Wake writers and poll()ers waiting for room, as sk_stream_write_space()
 * does; the caller decided there is some.
 */
void sdp_wake_space(struct sock *sk)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_sync_poll(&wq->wait, EPOLLOUT |
						EPOLLWRNORM | EPOLLWRBAND);
	if (wq && wq->fasync_list && !(sk->sk_shutdown & SEND_SHUTDOWN))
		sock_wake_async(wq, SOCK_WAKE_SPACE, POLL_OUT);
	rcu_read_unlock();
}

/**
 * sdp_send_stall - a send found no room: count it, and may it wait?
 * @sk: the socket, locked
 * @timeo: the time the send has left
 *
 * What every transport's send wait begins with, as
 * sk_stream_wait_memory() does.
 *
 * Return: 0 to wait, -EAGAIN with no time left, or the errno of a pending
 * signal.
 */
int sdp_send_stall(struct sock *sk, long timeo)
{
	SDP_INC_STATS(sock_net(sk), SDP_MIB_SNDBUF_STALLS);
	if (!timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(timeo);
	return 0;
}

/* As sk_stream_wait_connect(): wait for a connection in progress. */
static int sdp_wait_connect(struct sock *sk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	int done;

	do {
		if (sk->sk_err)
			return sock_error(sk);
		if ((1 << sk->sk_state) & ~(TCPF_SYN_SENT | TCPF_SYN_RECV))
			return -EPIPE;
		if (!*timeo)
			return -EAGAIN;
		if (signal_pending(current))
			return sock_intr_errno(*timeo);

		add_wait_queue(sk_sleep(sk), &wait);
		done = sk_wait_event(sk, timeo,
				     !sk->sk_err &&
				     !((1 << sk->sk_state) &
				       ~(TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)),
				     &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	} while (!done);
	return 0;
}

/* MSG_ZEROCOPY on a socket with SDP_ZEROCOPY: TCP's notification.  Past
 * RLIMIT_MEMLOCK the send is copied, and the notification says so.
 */
static int sdp_zc_uarg(struct sdp_sock *ssk, size_t size,
		       struct ubuf_info **uargp)
{
	struct sock *sk = &ssk->sk;
	struct ubuf_info *uarg;

	uarg = msg_zerocopy_realloc(sk, size, NULL);
	if (!uarg) {
		uarg = msg_zerocopy_realloc(sk, 0, NULL);
		if (!uarg)
			return -ENOBUFS;
		uarg_to_msgzc(uarg)->zerocopy = 0;
		SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_FALLBACKS);
		trace_sdp_zcopy(sk, "fallback-optmem", size);
	}
	*uargp = uarg;
	return 0;
}

/* The send's notification, if it wants one: io_uring's (msg_ubuf: its
 * SEND_ZC, whatever SDP_ZEROCOPY says, as TCP), or MSG_ZEROCOPY's.
 */
static int sdp_send_uarg(struct sdp_sock *ssk, struct msghdr *msg,
			 size_t size, struct sdp_send *s)
{
	int err;

	if (!size)
		return 0;
	if (msg->msg_ubuf) {
		s->uarg = msg->msg_ubuf;
		s->ubuf = true;
		net_zcopy_get(s->uarg);
	} else if ((s->flags & MSG_ZEROCOPY) &&
		   sock_flag(&ssk->sk, SOCK_ZEROCOPY)) {
		err = sdp_zc_uarg(ssk, size, &s->uarg);
		if (err)
			return err;
		s->no_zc = !uarg_to_msgzc(s->uarg)->zerocopy;
	}
	return 0;
}

/* The send call is over: its reference on the notification goes (an AZ
 * op's goes in sdp_az_end()).
 */
static void sdp_send_uarg_done(struct sdp_send *s)
{
	if (s->ubuf) {
		net_zcopy_put(s->uarg);	/* io_uring holds its own */
	} else if (s->uarg && !s->az) {
		if (!s->zc_used)
			uarg_to_msgzc(s->uarg)->zerocopy = 0;
		if (s->copied)
			net_zcopy_put(s->uarg);
		else
			msg_zerocopy_put_abort(s->uarg, true);
	}
}

/* sendto(MSG_FASTOPEN) on a socket not connected yet: connect, as TCP
 * does when TCP Fast Open has no cookie for the peer (the data then goes
 * once the connection is up: at once for a blocking socket, else the
 * call says EINPROGRESS).  Disabled as net.ipv4.tcp_fastopen disables
 * it for TCP, and refused for AF_UNSPEC, as tcp_sendmsg_fastopen().
 */
static int sdp_sendmsg_fastopen(struct socket *sock, struct msghdr *msg)
{
	struct sockaddr *uaddr = msg->msg_name;
	struct net *net = sock_net(sock->sk);

	if (!(READ_ONCE(net->ipv4.sysctl_tcp_fastopen) & TFO_CLIENT_ENABLE) ||
	    (msg->msg_namelen >= sizeof(uaddr->sa_family) &&
	     uaddr->sa_family == AF_UNSPEC))
		return -EOPNOTSUPP;
	return sdp_connect(sock, uaddr, msg->msg_namelen,
			   msg->msg_flags & MSG_DONTWAIT ? O_NONBLOCK : 0);
}

int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t size)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_send s = { .flags = msg->msg_flags };
	struct sdp_az_op *az = NULL;
	struct sdp_rdma rop;
	struct sdp_conn *conn;
	int err, rdma;

	/* sendfile()'s and splice()'s pages: by reference where we can */
	if ((s.flags & MSG_SPLICE_PAGES) && iov_iter_is_bvec(&msg->msg_iter))
		return sdp_sendmsg_pages(sock, msg, false);
	if (unlikely((s.flags & MSG_FASTOPEN) && msg->msg_name)) {
		err = sdp_sendmsg_fastopen(sock, msg);
		if (err)
			return err == -EINPROGRESS ? err :
			       sk_stream_error(sk, s.flags, err);
	}

	rdma = sdp_region_cmsg(msg, &rop);	/* a one-sided op? */
	if (rdma < 0)
		return rdma;

	lock_sock(sk);
	conn = sdp_conn_get(ssk);	/* what we hold stays while we sleep */
	s.timeo = sock_sndtimeo(sk, s.flags & MSG_DONTWAIT);
	if (ssk->az_chan && !rdma) {
		/* an AZ send: its record comes whatever happens now */
		err = sdp_az_begin(ssk, msg, &az);
		if (err)
			goto out;
	}

	if (!((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT))) {
		err = sdp_wait_connect(sk, &s.timeo);
		if (err)
			goto out;
		/* the connection made while we waited: hold that one */
		sdp_conn_put(conn);
		conn = sdp_conn_get(ssk);
	}
	s.conn = conn;
	err = sdp_send_uarg(ssk, msg, size, &s);
	if (err)
		goto out;
	if (az)
		sdp_az_prepare(az, &s);
	if (rdma) {
		err = sdp_region_send(ssk, msg, &rop, &s);
		sdp_send_uarg_done(&s);
		goto out;
	}
	ssk->more = !!(s.flags & MSG_MORE);
	/* the connection made while we waited, if we did */
	err = ssk->tp->sendmsg(ssk, msg, &s);
	sdp_send_uarg_done(&s);
out:
	if (az)
		sdp_az_end(ssk, az, s.az && s.zc_used);
	sdp_conn_put(conn);
	if (s.copied) {
		release_sock(sk);
		return s.copied;
	}
	err = sk_stream_error(sk, s.flags, err);
	release_sock(sk);
	return err;
}

/* The page at a bvec iterator: *@off in it, *@len bytes there. */
static struct page *sdp_iter_page(const struct iov_iter *iter, size_t *off,
				  size_t *len)
{
	const struct bio_vec *bv = iter->bvec;
	size_t at = bv->bv_offset + iter->iov_offset;

	*off = offset_in_page(at);
	*len = min3(bv->bv_len - iter->iov_offset, PAGE_SIZE - *off,
		    iov_iter_count(iter));
	return nth_page(bv->bv_page, at >> PAGE_SHIFT);
}

/* Pages of @msg by reference, on the socket's connection, for as long as
 * its transport takes them whole.  Return: bytes taken (0: copy the next
 * page), or a negative errno if none was.
 */
static ssize_t sdp_sendmsg_refs(struct sock *sk, struct msghdr *msg,
				bool notlast)
{
	struct iov_iter *iter = &msg->msg_iter;
	size_t taken = 0, off, len;
	struct sdp_conn *conn;
	struct page *page;
	ssize_t n = 0;
	bool more;

	lock_sock(sk);
	conn = sdp_conn_get(sdp_sk(sk));	/* kept while we sleep */
	while (conn->tp->send_page && iov_iter_count(iter)) {
		page = sdp_iter_page(iter, &off, &len);
		more = notlast || iov_iter_count(iter) > len;
		n = conn->tp->send_page(sdp_sk(sk), conn, page, off, len,
					msg->msg_flags, more);
		if (n <= 0)
			break;
		iov_iter_advance(iter, n);
		taken += n;
		if (n < len)
			break;
	}
	sdp_conn_put(conn);
	release_sock(sk);
	return taken ?: n;
}

/**
 * sdp_sendmsg_pages - sendmsg(MSG_SPLICE_PAGES): sendfile()'s or
 *	splice()'s pages
 * @sock: the socket
 * @msg: a bvec iterator over the pages, referenced while we hold them
 * @notlast: more pages follow at once after these (sendpage() before 6.5)
 *
 * Each page is taken by reference, or else copied by sdp_sendmsg() (with
 * MSG_MORE while more follow), in order.
 *
 * Return: bytes taken or a negative errno.
 */
ssize_t sdp_sendmsg_pages(struct socket *sock, struct msghdr *msg,
			  bool notlast)
{
	int flags = msg->msg_flags & ~MSG_SPLICE_PAGES;
	struct iov_iter *iter = &msg->msg_iter;
	size_t copied = 0, off, len, rest;
	bool more;
	ssize_t n;

	while (iov_iter_count(iter)) {
		n = sdp_sendmsg_refs(sock->sk, msg, notlast);
		if (n > 0) {
			copied += n;
			continue;
		}
		if (n < 0)
			return copied ?: n;
		/* copied, this page only */
		sdp_iter_page(iter, &off, &len);
		more = notlast || iov_iter_count(iter) > len;
		rest = iov_iter_count(iter) - len;
		msg->msg_flags = flags | (more ? MSG_MORE : 0);
		iov_iter_truncate(iter, len);
		n = sdp_sendmsg(sock, msg, len);
		iov_iter_reexpand(iter, iov_iter_count(iter) + rest);
		msg->msg_flags = flags | MSG_SPLICE_PAGES;
		if (n <= 0)
			return copied ?: n;
		copied += n;
		if (n < len)
			break;
	}
	return copied;
}

/**
 * sdp_splice_eof - proto_ops->splice_eof: sendfile() found its input
 *	shorter than asked, after pages it sent with MSG_MORE
 * @sock: the socket
 *
 * Push what was held for more: a run of pages being gathered, and data
 * held back as corked.
 */
void sdp_splice_eof(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);

	lock_sock(sk);
	ssk->tp->flush(ssk, true);
	release_sock(sk);
}
