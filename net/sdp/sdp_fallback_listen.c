// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: an IPPROTO_SDP listener takes TCP's connections too.
 *
 * A server moved onto SDP without knowing it (an sdp_bpf(8) policy made
 * its socket IPPROTO_SDP) must still serve its clients that speak only
 * TCP, as libsdp's "both server" rule does.  So listen() on an IPPROTO_SDP
 * socket that may fall back (sdp_fallback_on()) also makes a TCP socket,
 * its twin, in the caller's context (its credentials, namespace, cgroup
 * and LSM checks), with the options set so far, bound to the same address
 * and port, listening with the same backlog.  accept() hands over SDP's
 * connections and TCP's alike, whichever comes first; a TCP one is an
 * ordinary TCP socket: accept() grafts TCP's child into the new socket
 * and gives it TCP's proto_ops, as if the program had accepted it on TCP.
 * poll() and a blocking accept() wait on the SDP socket, which the twin's
 * data_ready wakes.  The twin stops listening when the listener does
 * (shutdown(), connect(AF_UNSPEC)), listens again with it, and goes with
 * it at close.
 *
 * Best effort, as TCP's own port space is not SDP's: where the twin
 * cannot bind (a TCP socket holds the port; on iWARP the device holds the
 * SDP port on TCP itself) the listener takes SDP's connections only,
 * counted in ListenFallbackFails.  AcceptFallbacks counts the connections
 * accepted by TCP.
 *
 * Objects: struct sdp_twin, ssk->twin, set under the socket lock by
 * the first listen() and freed only by the socket's release (not when
 * the socket stops listening, nor when it connects: sdp_fallback.c), so
 * that a thread in accept(), poll() or listen() may use it without a
 * reference: the release comes after every call on the file.  Its TCP socket's
 * sk_user_data and data_ready are swapped under sk_callback_lock, which
 * the wrapper holds while it runs.  TCP's children are clones of the
 * listener, callbacks included: sk_user_data is marked not to be copied,
 * so the wrapper tells a child (no twin) from the listener and gives it
 * TCP's own data_ready, which accept() puts back in the child for good
 * (no accepted socket runs our code after the module is gone; those
 * never accepted go with the listener).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/net.h>
#include <linux/sched/signal.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_family.h"

struct sdp_twin {
	struct sdp_sock	*ssk;		/* outlives us: its release frees us */
	struct socket	*tcp;
	void		(*data_ready)(struct sock *sk);
};

/* TCP's own data_ready (every TCP socket's, sock_def_readable(), which is
 * not exported): a child's until accept() gives it back
 */
static void (*sdp_tcp_data_ready)(struct sock *sk);

/* Has TCP's listener a connection for accept()? */
static bool sdp_twin_ready(struct sdp_twin *tw)
{
	struct sock *tsk = tw->tcp->sk;

	return READ_ONCE(tsk->sk_state) == TCP_LISTEN &&
	       !reqsk_queue_empty(&inet_csk(tsk)->icsk_accept_queue);
}

/* TCP's listener's data_ready: its own, then the SDP socket's waiters. */
static void sdp_twin_data_ready(struct sock *tsk)
{
	struct sdp_twin *tw;
	struct socket_wq *wq;

	read_lock_bh(&tsk->sk_callback_lock);
	tw = __locked_read_sk_user_data_with_flags(tsk, SK_USER_DATA_NOCOPY);
	if (!tw) {		/* a child, not accepted yet */
		READ_ONCE(sdp_tcp_data_ready)(tsk);
	} else {
		tw->data_ready(tsk);
		rcu_read_lock();
		wq = rcu_dereference(tw->ssk->sk.sk_wq);
		if (skwq_has_sleeper(wq))
			wake_up_interruptible_all(&wq->wait);
		rcu_read_unlock();
	}
	read_unlock_bh(&tsk->sk_callback_lock);
}

static void sdp_twin_free(struct sdp_twin *tw)
{
	struct sock *tsk = tw->tcp->sk;

	write_lock_bh(&tsk->sk_callback_lock);
	tsk->sk_data_ready = tw->data_ready;
	rcu_assign_sk_user_data(tsk, NULL);
	write_unlock_bh(&tsk->sk_callback_lock);
	sock_release(tw->tcp);	/* resets what waits in its queue */
	kfree(tw);
}

/* A TCP socket listening where @ssk does, or NULL. */
static struct sdp_twin *sdp_twin_new(struct sdp_sock *ssk, int backlog)
{
	struct sock *sk = &ssk->sk, *tsk;
	struct sockaddr_storage addr;
	struct sdp_twin *tw;
	int err, len;

	tw = kzalloc(sizeof(*tw), GFP_KERNEL_ACCOUNT);
	if (!tw)
		return NULL;
	err = __sock_create(sock_net(sk), sk->sk_family, SOCK_STREAM,
			    IPPROTO_TCP, &tw->tcp, 0);
	if (err) {
		kfree(tw);
		return NULL;
	}
	tw->ssk = ssk;
	tsk = tw->tcp->sk;
	lock_sock(sk);
	sdp_fallback_copy_opts(ssk, tsk);
	tsk->sk_reuseport = sk->sk_reuseport;
	memcpy(&addr, &ssk->local, sizeof(addr));
	release_sock(sk);
	len = addr.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
	if (addr.ss_family != sk->sk_family) {
		/* an AF_INET6 socket bound to an IPv4 address: v4-mapped */
		struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
		struct sockaddr_in6 a6 = {
			.sin6_family = AF_INET6, .sin6_port = a4->sin_port,
		};

		ipv6_addr_set_v4mapped(a4->sin_addr.s_addr, &a6.sin6_addr);
		memcpy(&addr, &a6, sizeof(a6));
		len = sizeof(a6);
	}
	/* hooked before it listens: no connection comes unannounced */
	write_lock_bh(&tsk->sk_callback_lock);
	tw->data_ready = tsk->sk_data_ready;
	WRITE_ONCE(sdp_tcp_data_ready, tsk->sk_data_ready);
	__rcu_assign_sk_user_data_with_flags(tsk, tw, SK_USER_DATA_NOCOPY);
	tsk->sk_data_ready = sdp_twin_data_ready;
	write_unlock_bh(&tsk->sk_callback_lock);
	err = kernel_bind(tw->tcp, (struct sockaddr *)&addr, len);
	if (!err)
		err = kernel_listen(tw->tcp, backlog);
	if (err) {
		sdp_twin_free(tw);
		SDP_INC_STATS(sock_net(sk), SDP_MIB_LISTEN_FALLBACK_FAILS);
		pr_info_ratelimited("listener on port %u: SDP only, TCP's listen failed (%d)\n",
				    ntohs(((struct sockaddr_in *)&addr)->sin_port),
				    err);
		return NULL;
	}
	return tw;
}

/**
 * sdp_inet_listen - listen() of an IPPROTO_SDP socket: SDP's, and TCP's
 * @sock: the socket
 * @backlog: the backlog
 *
 * Return: SDP's listen()'s answer; TCP's only changes what is counted.
 */
int sdp_inet_listen(struct socket *sock, int backlog)
{
	struct sdp_sock *ssk = sdp_sk(sock->sk);
	struct sdp_twin *tw;
	int err;

	err = sdp_listen(sock, backlog);
	if (err || !sdp_fallback_on(ssk))
		return err;
	tw = READ_ONCE(ssk->twin);
	if (tw) {			/* again: a new backlog, or restarted */
		kernel_listen(tw->tcp, backlog);
		return 0;
	}
	tw = sdp_twin_new(ssk, backlog);
	if (!tw)
		return 0;
	lock_sock(sock->sk);
	if (ssk->twin || sock->sk->sk_state != TCP_LISTEN) {
		release_sock(sock->sk);
		sdp_twin_free(tw);	/* another thread's, or stopped */
		return 0;
	}
	WRITE_ONCE(ssk->twin, tw);
	release_sock(sock->sk);
	return 0;
}

/* The listener stopped (shutdown(), connect(AF_UNSPEC)): so does TCP's. */
void sdp_twin_stop(struct sdp_sock *ssk)
{
	struct sdp_twin *tw = READ_ONCE(ssk->twin);

	if (tw && ssk->sk.sk_state != TCP_LISTEN)
		kernel_sock_shutdown(tw->tcp, SHUT_RDWR);
}

/* At close: the twin goes with the listener. */
void sdp_twin_release(struct sdp_sock *ssk)
{
	struct sdp_twin *tw = ssk->twin;

	WRITE_ONCE(ssk->twin, NULL);
	if (tw)
		sdp_twin_free(tw);
}

/* A TCP connection for @newsock, or -EAGAIN: TCP's child grafted, the
 * socket TCP's from now on.
 */
static int sdp_twin_accept(struct sdp_twin *tw, struct socket *newsock,
			   struct proto_accept_arg *arg)
{
	struct socket *tcp = tw->tcp;
	int err;

	if (!sdp_twin_ready(tw))
		return -EAGAIN;
#ifdef HAVE_PROTO_ACCEPT_ARG
	{
		struct proto_accept_arg a = *arg;

		a.flags |= O_NONBLOCK;
		err = tcp->ops->accept(tcp, newsock, &a);
		arg->err = a.err;
	}
#else
	err = tcp->ops->accept(tcp, newsock, arg->flags | O_NONBLOCK,
			       arg->kern);
#endif
	if (err)
		return err;
	/* TCP's own callback back, before anyone can wait on the child */
	write_lock_bh(&newsock->sk->sk_callback_lock);
	newsock->sk->sk_data_ready = tw->data_ready;
	write_unlock_bh(&newsock->sk->sk_callback_lock);
	/* the accept() call took a reference on our module for newsock's
	 * ops (do_accept()); its release puts their owner's: TCP's now
	 * (ipv6.ko's for an AF_INET6 one, if IPv6 is a module)
	 */
	__module_get(tcp->ops->owner);
	newsock->ops = tcp->ops;
	module_put(THIS_MODULE);
	SDP_INC_STATS(sock_net(tcp->sk), SDP_MIB_ACCEPT_FALLBACKS);
	return 0;
}

/* Called locked: may accept() stop waiting? */
static bool sdp_twin_accept_due(struct sdp_sock *ssk, struct sdp_twin *tw)
{
	return READ_ONCE(ssk->accept_count) || sdp_twin_ready(tw) ||
	       ssk->sk.sk_state != TCP_LISTEN;
}

/**
 * sdp_inet_accept - accept() of an IPPROTO_SDP socket
 * @sock: the listener
 * @newsock: the socket to give the connection
 * @arg: accept()'s flags
 *
 * SDP's next connection, or TCP's twin's, whichever is there first.
 *
 * Return: 0 or a negative errno, as accept() answers.
 */
int sdp_inet_accept(struct socket *sock, struct socket *newsock,
		    struct proto_accept_arg *arg)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_twin *tw = READ_ONCE(ssk->twin);
	struct proto_accept_arg a;
	long timeo;
	int err;

	if (!tw)
		return sdp_accept(sock, newsock, arg);
	timeo = sock_rcvtimeo(sk, arg->flags & O_NONBLOCK);
	for (;;) {
		a = *arg;
		a.flags |= O_NONBLOCK;
		err = sdp_accept(sock, newsock, &a);
		if (err != -EAGAIN)
			return err;
		err = sdp_twin_accept(tw, newsock, arg);
		if (err != -EAGAIN)
			return err;
		if (!timeo)
			return -EAGAIN;
		if (signal_pending(current))
			return sock_intr_errno(timeo);
		lock_sock(sk);
		add_wait_queue_exclusive(sk_sleep(sk), &wait);
		sk_wait_event(sk, &timeo, sdp_twin_accept_due(ssk, tw), &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
		release_sock(sk);
	}
}

/* poll() of an IPPROTO_SDP socket: a listener is readable for TCP's
 * connections too.
 */
__poll_t sdp_inet_poll(struct file *file, struct socket *sock,
		       poll_table *wait)
{
	struct sdp_twin *tw = READ_ONCE(sdp_sk(sock->sk)->twin);
	__poll_t mask = sdp_poll(file, sock, wait);

	if (tw && READ_ONCE(sock->sk->sk_state) == TCP_LISTEN &&
	    sdp_twin_ready(tw))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

/* getname() of an IPPROTO_SDP socket.  From 6.10 do_accept() asks the
 * listener's proto_ops for the name of the socket accept() gave, which
 * may be TCP's by now.
 */
int sdp_inet_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	const struct proto_ops *ops = READ_ONCE(sock->ops);

	if (ops->getname != sdp_inet_getname)
		return ops->getname(sock, uaddr, peer);
	return sdp_getname(sock, uaddr, peer);
}

/* shutdown() of an IPPROTO_SDP socket */
int sdp_inet_shutdown(struct socket *sock, int how)
{
	int err = sdp_shutdown(sock, how);

	sdp_twin_stop(sdp_sk(sock->sk));
	return err;
}
