// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: an IPPROTO_SDP connect that finds no SDP peer goes on by TCP.
 *
 * A program moved onto SDP without knowing it (an sdp_bpf(8) policy
 * turned its socket(AF_INET, SOCK_STREAM, 0) into IPPROTO_SDP) must
 * still reach a server that only speaks TCP, as libsdp's "both" rule
 * does.  So when connect() on an IPPROTO_SDP socket starts
 * (sdp_inet_connect()), a TCP socket of the same family is made
 * alongside, in the caller's context (its credentials, namespace,
 * cgroup and LSM checks), with the options set so far.  If the SDP
 * attempt then fails for want of an SDP peer - refused (no SDP listener),
 * ENODEV (no RDMA device reaches the address), unreachable, timed out -
 * sdp_fallback_take() starts TCP's connect to the same address instead
 * of reporting the failure; the socket looks as connecting meanwhile
 * (ssk->fb_pending: poll says nothing).  Once TCP's connect succeeds the
 * socket's file becomes TCP's (file->private_data), as SMC's fallback
 * does: from then on every call on the descriptor, the socket core's
 * SOL_SOCKET options and SO_ERROR included, is TCP's own.  If TCP's
 * connect fails too, its error is the SDP socket's, and the descriptor
 * stays an SDP socket that the program may connect again (SDP first,
 * again).  The module parameter ipproto_fallback=0 turns this off, and
 * SDP_FALLBACK per socket (sdp_fallback_on()).
 *
 * Waiters that queued on the SDP socket before the switch (a blocking
 * poll, an epoll set) are woken by TCP's events too: TCP's socket
 * callbacks are wrapped (under sk_callback_lock) to wake the SDP
 * socket's wait queue after their own, until close.  close() releases
 * the SDP socket (the file's inode is still its), which restores TCP's
 * callbacks before it releases TCP's socket, so no wrapper outlives
 * either socket.
 *
 * Objects: struct sdp_fallback, per connect() attempt, until close or the
 * next attempt, with a reference for ssk->fb and one for a connect()
 * that waits on TCP's connect without the socket lock (another thread's
 * connect() may replace ssk->fb meanwhile); ssk->fb and ssk->fb_take are
 * set and cleared under the socket lock; fb->state moves PENDING -> FILE or FAILED by cmpxchg, in
 * TCP's state-change callback (softirq) or in the blocking connect().  A
 * fallback taken in an rdma_cm handler (the failure came after a
 * non-blocking connect() returned) starts TCP's connect from that
 * worker.  A socket whose SDP connect succeeds frees its unused TCP
 * socket: a blocking connect() at once, a non-blocking one at its first
 * send or receive (sdp_fallback_unused()).  Counted in ConnFallbacks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/net.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_family.h"

static bool sdp_fallback_take(struct sdp_sock *ssk, int err);

enum {
	SDP_FB_READY,		/* TCP's socket made, not connecting */
	SDP_FB_PENDING,		/* TCP connecting for the SDP socket */
	SDP_FB_FILE,		/* connected: the file is TCP's */
	SDP_FB_FAILED,		/* TCP's connect failed too */
};

struct sdp_fallback {
	refcount_t		ref;	/* ssk->fb's, and a connect()'s */
	struct sdp_sock		*ssk;	/* outlives us: its release frees us */
	struct socket		*tcp;
	struct file		*file;	/* the SDP socket's, while PENDING */
	struct sockaddr_storage	dst;
	int			dstlen;
	int			state;	/* SDP_FB_* */
	int			sdp_err;	/* why SDP's connect failed */
	void			(*state_change)(struct sock *sk);
	void			(*data_ready)(struct sock *sk);
	void			(*write_space)(struct sock *sk);
	void			(*error_report)(struct sock *sk);
};

/* TCP connected: the descriptor's file is TCP's from now on
 * (sock_from_file()), TCP's socket complete before a lookup can find it.
 * The file lives until the SDP socket's release, which unhooks us first.
 */
static void sdp_fb_to_file(struct sdp_fallback *fb)
{
	if (cmpxchg(&fb->state, SDP_FB_PENDING, SDP_FB_FILE) != SDP_FB_PENDING)
		return;
	fb->tcp->file = fb->file;
	/* ->file set before a sock_from_file() can find TCP's socket */
	smp_store_release(&fb->file->private_data, fb->tcp);
	WRITE_ONCE(fb->ssk->fb_pending, false);
	/* for sock_diag (sdpstat --why): on TCP, and why */
	WRITE_ONCE(fb->ssk->fb_ino, SOCK_INODE(fb->tcp)->i_ino);
	/* the inode before the errno that says it is set (sdp_diag.c) */
	smp_store_release(&fb->ssk->fb_err, fb->sdp_err);
}

/* TCP's connect failed: its error is the SDP socket's, as if SDP's own
 * connect had failed so.
 */
static void sdp_fb_failed(struct sdp_fallback *fb, int err)
{
	struct sock *sk = &fb->ssk->sk;

	if (cmpxchg(&fb->state, SDP_FB_PENDING, SDP_FB_FAILED) !=
	    SDP_FB_PENDING)
		return;
	WRITE_ONCE(sk->sk_err, err ?: ECONNREFUSED);
	WRITE_ONCE(fb->ssk->fb_pending, false);
	sk_error_report(sk);
}

/* What TCP's state says for a pending fallback. */
static void sdp_fb_check(struct sdp_fallback *fb, struct sock *tsk)
{
	int state = READ_ONCE(tsk->sk_state);

	if (READ_ONCE(fb->state) != SDP_FB_PENDING)
		return;
	if ((1 << state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT))
		sdp_fb_to_file(fb);
	else if (state == TCP_CLOSE)
		sdp_fb_failed(fb, READ_ONCE(tsk->sk_err));
}

/* TCP's socket callbacks while the file is TCP's: TCP's own, then a
 * wake-up of the SDP socket's waiters.  tsk->sk_user_data (the fallback)
 * is set and cleared, and the callbacks swapped, under sk_callback_lock,
 * which each wrapper holds while it runs: none runs after
 * sdp_fb_unhook().
 */
#define SDP_FB_WRAP(name)						\
static void sdp_fb_##name(struct sock *tsk)				\
{									\
	struct sdp_fallback *fb;					\
	struct socket_wq *wq;						\
									\
	read_lock_bh(&tsk->sk_callback_lock);				\
	fb = tsk->sk_user_data;						\
	if (fb) {							\
		fb->name(tsk);						\
		sdp_fb_check(fb, tsk);					\
		rcu_read_lock();					\
		wq = rcu_dereference(fb->ssk->sk.sk_wq);		\
		if (skwq_has_sleeper(wq))				\
			wake_up_interruptible_all(&wq->wait);		\
		rcu_read_unlock();					\
	}								\
	read_unlock_bh(&tsk->sk_callback_lock);				\
}

SDP_FB_WRAP(state_change)
SDP_FB_WRAP(data_ready)
SDP_FB_WRAP(write_space)
SDP_FB_WRAP(error_report)

static void sdp_fb_hook(struct sdp_fallback *fb)
{
	struct sock *tsk = fb->tcp->sk;

	write_lock_bh(&tsk->sk_callback_lock);
	fb->state_change = tsk->sk_state_change;
	fb->data_ready = tsk->sk_data_ready;
	fb->write_space = tsk->sk_write_space;
	fb->error_report = tsk->sk_error_report;
	tsk->sk_user_data = fb;
	tsk->sk_state_change = sdp_fb_state_change;
	tsk->sk_data_ready = sdp_fb_data_ready;
	tsk->sk_write_space = sdp_fb_write_space;
	tsk->sk_error_report = sdp_fb_error_report;
	write_unlock_bh(&tsk->sk_callback_lock);
}

static void sdp_fb_unhook(struct sdp_fallback *fb)
{
	struct sock *tsk = fb->tcp->sk;

	write_lock_bh(&tsk->sk_callback_lock);
	if (tsk->sk_user_data) {
		tsk->sk_state_change = fb->state_change;
		tsk->sk_data_ready = fb->data_ready;
		tsk->sk_write_space = fb->write_space;
		tsk->sk_error_report = fb->error_report;
		tsk->sk_user_data = NULL;
	}
	write_unlock_bh(&tsk->sk_callback_lock);
}

/* What the program set on the SDP socket before connect() or listen(),
 * on TCP's.
 */
void sdp_fallback_copy_opts(struct sdp_sock *ssk, struct sock *tsk)
{
	struct sock *sk = &ssk->sk;

	tsk->sk_reuse = sk->sk_reuse;
	if (tsk->sk_family == AF_INET6)
		tsk->sk_ipv6only = ssk->v6only;
	if (sk->sk_userlocks & SOCK_SNDBUF_LOCK) {
		WRITE_ONCE(tsk->sk_sndbuf, sk->sk_sndbuf);
		tsk->sk_userlocks |= SOCK_SNDBUF_LOCK;
	}
	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK) {
		WRITE_ONCE(tsk->sk_rcvbuf, sk->sk_rcvbuf);
		tsk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	}
	WRITE_ONCE(tsk->sk_rcvtimeo, sk->sk_rcvtimeo);
	WRITE_ONCE(tsk->sk_sndtimeo, sk->sk_sndtimeo);
	WRITE_ONCE(tsk->sk_rcvlowat, sk->sk_rcvlowat);
	WRITE_ONCE(tsk->sk_mark, sk->sk_mark);
	WRITE_ONCE(tsk->sk_priority, sk->sk_priority);
	if (sock_flag(sk, SOCK_LINGER)) {
		sock_set_flag(tsk, SOCK_LINGER);
		tsk->sk_lingertime = sk->sk_lingertime;
	}
	if (sock_flag(sk, SOCK_URGINLINE))
		sock_set_flag(tsk, SOCK_URGINLINE);
	if (sock_flag(sk, SOCK_ZEROCOPY))
		sock_set_flag(tsk, SOCK_ZEROCOPY);
	if (sock_flag(sk, SOCK_KEEPOPEN))
		sock_set_keepalive(tsk);
	if (ssk->nodelay)
		tcp_sock_set_nodelay(tsk);
	if (ssk->keepidle)
		tcp_sock_set_keepidle(tsk, ssk->keepidle);
	if (ssk->keepintvl)
		tcp_sock_set_keepintvl(tsk, ssk->keepintvl);
	if (ssk->keepcnt)
		tcp_sock_set_keepcnt(tsk, ssk->keepcnt);
}

static void sdp_fb_put(struct sdp_fallback *fb)
{
	if (!refcount_dec_and_test(&fb->ref))
		return;
	sdp_fb_unhook(fb);
	if (READ_ONCE(fb->state) == SDP_FB_FILE)
		fb->tcp->file = NULL;
	sock_release(fb->tcp);
	kfree(fb);
}

/* @ssk's fallback detached and the socket's reference to it dropped, if
 * its state is one of @states (a mask of BIT(SDP_FB_*)) and, @after_connect,
 * the socket's own connect is no longer under way.
 */
static void sdp_fallback_put_in(struct sdp_sock *ssk, unsigned int states,
				bool after_connect)
{
	struct sdp_fallback *fb = NULL;

	lock_sock(&ssk->sk);
	if (ssk->fb && (BIT(READ_ONCE(ssk->fb->state)) & states) &&
	    !(after_connect && ssk->sk.sk_state == TCP_SYN_SENT)) {
		fb = ssk->fb;
		WRITE_ONCE(ssk->fb, NULL);
		ssk->fb_take = NULL;
	}
	release_sock(&ssk->sk);
	if (fb)
		sdp_fb_put(fb);
}

/* Past its connect, a socket whose TCP socket was never needed frees it
 * (a program whose non-blocking connects SDP carries, as every Go
 * program's are, would otherwise hold one per connection until close).
 */
static void sdp_fallback_unused(struct sdp_sock *ssk)
{
	sdp_fallback_put_in(ssk, BIT(SDP_FB_READY), true);
}

/* SDP carried the connect: TCP's socket, unused (or failed before), goes.
 * One whose file is the descriptor's (another thread's fallback won) or
 * that connects stays, to close.  The listener's twin stays too: another
 * thread may be in accept() or poll() with it (sdp_fallback_listen.c).
 */
static void sdp_fallback_drop(struct sdp_sock *ssk)
{
	sdp_fallback_put_in(ssk, BIT(SDP_FB_READY) | BIT(SDP_FB_FAILED), false);
}

/**
 * sdp_fallback_prepare - a TCP socket to carry @sock's connect if need be
 * @sock: an IPPROTO_SDP socket, unconnected, in its caller's connect()
 * @uaddr: the destination
 * @len: its length
 *
 * Best effort: without one, the connect is SDP's alone.  An earlier
 * attempt's, unused or failed, goes.
 */
static void sdp_fallback_prepare(struct socket *sock, struct sockaddr *uaddr,
				 int len)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_fallback *fb, *old;

	if (!sdp_fallback_on(ssk) || !sock->file ||
	    len > (int)sizeof(fb->dst) || len < (int)sizeof(sa_family_t) ||
	    (uaddr->sa_family != AF_INET && uaddr->sa_family != AF_INET6)) {
		/* none for this connect: an earlier one's, to another
		 * address, must not carry it
		 */
		sdp_fallback_drop(ssk);
		return;
	}
	fb = kzalloc(sizeof(*fb), GFP_KERNEL_ACCOUNT);
	if (!fb)
		return;
	if (__sock_create(sock_net(sk), sk->sk_family, SOCK_STREAM,
			  IPPROTO_TCP, &fb->tcp, 0)) {
		kfree(fb);
		return;
	}
	refcount_set(&fb->ref, 1);
	fb->ssk = ssk;
	fb->file = sock->file;
	memcpy(&fb->dst, uaddr, len);
	fb->dstlen = len;
	lock_sock(sk);
	old = ssk->fb;
	if (old && READ_ONCE(old->state) != SDP_FB_READY &&
	    READ_ONCE(old->state) != SDP_FB_FAILED) {
		old = NULL;	/* in use: keep it, no new one */
	} else {
		sdp_fallback_copy_opts(ssk, fb->tcp->sk);
		WRITE_ONCE(ssk->fb, fb);
		ssk->fb_take = sdp_fallback_take;
		fb = NULL;
	}
	release_sock(sk);
	if (old)
		sdp_fb_put(old);	/* a connect() may still hold it */
	if (fb)
		sdp_fb_put(fb);
}

/**
 * sdp_fallback_take - the SDP connect failed: go on by TCP if it was for
 *	want of an SDP peer
 * @ssk: the socket, locked, its connect failing with @err
 * @err: a positive errno
 *
 * Return: whether TCP carries the connect now (the SDP socket reports no
 * error: it is pending until TCP's connect ends).
 */
static bool sdp_fallback_take(struct sdp_sock *ssk, int err)
{
	struct sdp_fallback *fb = ssk->fb;
	int ret;

	sdp_assert_locked(ssk);

	if (!fb || fb->state != SDP_FB_READY || !ssk->sk.sk_socket ||
	    !sdp_fallback_on(ssk) ||
	    (err != ECONNREFUSED && err != ENODEV && err != EHOSTUNREACH &&
	     err != ENETUNREACH && err != ETIMEDOUT))
		return false;
	fb->state = SDP_FB_PENDING;
	fb->sdp_err = err;
	WRITE_ONCE(ssk->fb_pending, true);
	sdp_fb_hook(fb);
	ret = kernel_connect(fb->tcp, (struct sockaddr *)&fb->dst, fb->dstlen,
			     O_NONBLOCK);
	if (ret && ret != -EINPROGRESS) {
		sdp_fb_unhook(fb);
		fb->state = SDP_FB_FAILED;
		WRITE_ONCE(ssk->fb_pending, false);
		return false;
	}
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_CONN_FALLBACKS);
	/* it may have ended already (loopback), before our callbacks ran */
	sdp_fb_check(fb, fb->tcp->sk);
	return true;
}

/* After sdp_connect() returned, or while TCP connects for us: if TCP took
 * the connect over, what connect() answers: for a blocking one, the end
 * of TCP's connect (the file TCP's if it connected; else its error,
 * consumed as connect() consumes it); for a non-blocking one
 * EINPROGRESS, what follows to be seen by poll and SO_ERROR.
 * Return: 1 if TCP has nothing to do with it.
 */
static int sdp_fallback_connect(struct sdp_sock *ssk, int flags)
{
	struct sock *sk = &ssk->sk;
	struct sdp_fallback *fb;
	int err, st;

	lock_sock(sk);
	fb = ssk->fb;
	st = fb ? READ_ONCE(fb->state) : SDP_FB_READY;
	if (st == SDP_FB_READY || (st == SDP_FB_FAILED && !sk->sk_err)) {
		release_sock(sk);
		return 1;
	}
	if (flags & O_NONBLOCK) {
		release_sock(sk);
		return -EINPROGRESS;
	}
	if (st == SDP_FB_FAILED) {
		err = sock_error(sk);
		sk->sk_socket->state = SS_UNCONNECTED;
		release_sock(sk);
		return err;
	}
	if (st == SDP_FB_FILE) {
		release_sock(sk);
		return 0;
	}
	sk->sk_socket->state = SS_CONNECTING;
	/* another thread's connect() may replace ssk->fb once TCP's ends */
	refcount_inc(&fb->ref);
	release_sock(sk);
	err = fb->tcp->ops->connect(fb->tcp, (struct sockaddr *)&fb->dst,
				    fb->dstlen, 0);
	sdp_fb_check(fb, fb->tcp->sk);
	if (!err && READ_ONCE(fb->state) == SDP_FB_FILE) {
		sdp_fb_put(fb);
		return 0;
	}
	/* failed, or interrupted */
	sdp_fb_failed(fb, err ? -err : ECONNABORTED);
	sdp_fb_put(fb);
	lock_sock(sk);
	err = sock_error(sk) ?: err;
	sk->sk_socket->state = SS_UNCONNECTED;
	release_sock(sk);
	return err;
}

/**
 * sdp_inet_connect - connect() of an IPPROTO_SDP socket
 * @sock: the socket
 * @uaddr: the destination
 * @len: its length
 * @flags: the file's flags
 *
 * SDP's connect, and TCP's where SDP finds no peer.
 *
 * Return: 0 or a negative errno, as connect() answers.
 */
int sdp_inet_connect(struct socket *sock, struct sockaddr *uaddr, int len,
		     int flags)
{
	struct sdp_sock *ssk = sdp_sk(sock->sk);
	int err, fb;

	if (READ_ONCE(ssk->fb_pending))	/* TCP is connecting for us */
		return flags & O_NONBLOCK ? -EALREADY :
		       sdp_fallback_connect(ssk, flags);
	if (len >= (int)sizeof(sa_family_t) && uaddr->sa_family == AF_UNSPEC) {
		err = sdp_connect(sock, uaddr, len, flags);
		sdp_twin_stop(ssk);	/* a listener stopped: TCP's too */
		return err;
	}
	/* what a TCP connect() meets, before TCP may carry this one */
	err = sdp_lsm_connect(sock->sk, uaddr, len);
	if (err) {
		sdp_fallback_drop(ssk);	/* no earlier one's carries it */
		return err;
	}
	if (sock->state == SS_UNCONNECTED)
		sdp_fallback_prepare(sock, uaddr, len);
	err = sdp_connect_checked(sock, uaddr, len, flags);
	fb = sdp_fallback_connect(ssk, flags);
	if (fb <= 0)
		return fb;
	if (!err) {
		sdp_fallback_drop(ssk);		/* connected by SDP */
		return 0;
	}
	if (err == -ENODEV || err == -EHOSTUNREACH || err == -ENETUNREACH) {
		/* refused before any attempt: no RDMA device reaches it */
		lock_sock(sock->sk);
		fb = ssk->fb_take && ssk->fb_take(ssk, -err);
		release_sock(sock->sk);
		if (fb)
			return sdp_fallback_connect(ssk, flags);
	}
	return err;
}

/* sendmsg() and recvmsg() of an IPPROTO_SDP socket */
int sdp_inet_sendmsg(struct socket *sock, struct msghdr *msg, size_t size)
{
	if (unlikely(READ_ONCE(sdp_sk(sock->sk)->fb)))
		sdp_fallback_unused(sdp_sk(sock->sk));
	return sdp_sendmsg(sock, msg, size);
}

int sdp_inet_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		     int flags)
{
	if (unlikely(READ_ONCE(sdp_sk(sock->sk)->fb)))
		sdp_fallback_unused(sdp_sk(sock->sk));
	return sdp_recvmsg(sock, msg, len, flags);
}

/**
 * sdp_fallback_release - at close, TCP's socket goes with the SDP one
 * @ssk: the socket, its file being released
 */
void sdp_fallback_release(struct sdp_sock *ssk)
{
	struct sdp_fallback *fb;

	lock_sock(&ssk->sk);
	fb = ssk->fb;
	WRITE_ONCE(ssk->fb, NULL);
	ssk->fb_take = NULL;
	WRITE_ONCE(ssk->fb_pending, false);
	WRITE_ONCE(ssk->fb_err, 0);	/* TCP's socket and inode go */
	release_sock(&ssk->sk);
	if (fb)
		sdp_fb_put(fb);
	sdp_twin_release(ssk);	/* a listener's TCP twin */
}
