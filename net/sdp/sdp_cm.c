// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: bind(), connect() and the names of a socket.
 *
 * bind() takes the socket's place in the port space (sdp_port.c) at an
 * address of this host, as inet_bind() checks it.
 *
 * connect() asks which transport reaches the address (->claims()) and
 * starts it (->connect()); the state machine from there is the
 * transport's, ending in TCP_ESTABLISHED or in sdp_connect_failed().
 *
 * Locks: the socket lock, dropped only to renew the id and to wait for
 * the connection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/sched/signal.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/tcp_states.h>
#include <rdma/ib_cm.h>

#include "sdp.h"

/* Under the socket lock: the attempt to connect failed. */
void sdp_connect_failed(struct sdp_sock *ssk, int err)
{
	struct sock *sk = &ssk->sk;

	if (sk->sk_state != TCP_SYN_SENT)
		return;
	SDP_INC_STATS(sock_net(sk), err == ECONNREFUSED ?
		      SDP_MIB_CONN_REFUSED : SDP_MIB_CONN_FAILED);
	if (err == ENODEV || err == EHOSTUNREACH || err == ENETUNREACH)
		ssk->last_bind_err = err;
	__set_bit(SDP_F_RESET, &ssk->flags);
	sdp_set_state(sk, TCP_CLOSE);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);	/* as tcp_done() */
	/* carried on by TCP: the program sees no error of ours, and TCP's
	 * own, if it fails at once, finds the socket closed as here
	 */
	if (!ssk->fb_take || !ssk->fb_take(ssk, err))
		WRITE_ONCE(sk->sk_err, err);
	sdp_conn_queue_teardown(ssk);
	sk_error_report(sk);
	sk->sk_state_change(sk);
}

/* Convert an application's address to the one rdma_cm takes.  Like the
 * old SDP stack, either SDP family takes a sockaddr_in (sa_family AF_INET
 * or AF_INET_SDP) and a sockaddr_in6 (AF_INET6 or AF_INET6_SDP); once a
 * socket was given a sockaddr_in6, getname() answers with one.  bind()
 * also takes AF_UNSPEC with INADDR_ANY, as inet_bind() does.
 */
static int sdp_addr_in(struct sock *sk, struct sockaddr *uaddr, int len,
		       struct sockaddr_storage *out, bool bind)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)out;
	sa_family_t fam = uaddr->sa_family;

	memset(out, 0, sizeof(*out));
	if (fam == AF_INET6 || fam == sdp_af_inet6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

		if (len < SIN6_LEN_RFC2133)
			return -EINVAL;
		memcpy(sin6, uaddr, min_t(int, len, sizeof(*sin6)));
		sin6->sin6_family = AF_INET6;
		sdp_sk(sk)->v6 = true;
		if (ipv6_addr_v4mapped(&sin6->sin6_addr)) {
			/* as inet6_bind() and tcp_v6_connect() */
			if (sdp_sk(sk)->v6only)
				return bind ? -EINVAL : -ENETUNREACH;
			struct sockaddr_in v4 = {
				.sin_family = AF_INET,
				.sin_port = sin6->sin6_port,
				.sin_addr.s_addr = sin6->sin6_addr.s6_addr32[3],
			};

			memset(out, 0, sizeof(*out));
			memcpy(sin, &v4, sizeof(v4));
		}
		return 0;
	}

	if (len < (int)sizeof(*sin))
		return -EINVAL;
	memcpy(sin, uaddr, sizeof(*sin));
	if (fam != AF_INET && fam != sdp_af_inet &&
	    !(bind && fam == AF_UNSPEC &&
	      sin->sin_addr.s_addr == htonl(INADDR_ANY)))
		return -EAFNOSUPPORT;
	sin->sin_family = AF_INET;
	memset(sin->sin_zero, 0, sizeof(sin->sin_zero));
	return 0;
}

/* May a socket bind to @a, as inet_bind() and inet6_bind() decide? */
static bool sdp_addr_local(struct net *net, const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET) {
		__be32 v4 = ((const struct sockaddr_in *)a)->sin_addr.s_addr;

		return v4 == htonl(INADDR_ANY) || ipv4_is_multicast(v4) ||
		       inet_addr_type(net, v4) == RTN_LOCAL ||
		       READ_ONCE(net->ipv4.sysctl_ip_nonlocal_bind);
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		const struct in6_addr *v6 =
			&((const struct sockaddr_in6 *)a)->sin6_addr;

		return ipv6_addr_any(v6) || ipv6_addr_is_multicast(v6) ||
		       READ_ONCE(net->ipv6.sysctl.ip_nonlocal_bind) ||
		       ipv6_chk_addr(net, v6, NULL, 0);
	}
#else
	return true;
#endif
}

int sdp_bind(struct socket *sock, struct sockaddr *uaddr, int addr_len)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct net *net = sock_net(sk);
	struct sdp_rport *newg = NULL;
	struct sockaddr_storage addr;
	unsigned short port;
	int err;

	err = sdp_addr_in(sk, uaddr, addr_len, &addr, true);
	if (err)
		return err;
	port = ntohs(((struct sockaddr_in *)&addr)->sin_port);
	if (port && inet_port_requires_bind_service(net, port) &&
	    !ns_capable(net->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;
	if (!sdp_addr_local(net, &addr))
		return -EADDRNOTAVAIL;
	/* a port others may share (sdp_reuseport.c) */
	if (port && sk->sk_reuseport) {
		newg = sdp_rport_new(sk);
		if (IS_ERR(newg))
			return PTR_ERR(newg);
	}

	lock_sock(sk);
	err = -EINVAL;
	if (sk->sk_state != TCP_CLOSE || test_bit(SDP_F_BOUND, &ssk->flags))
		goto out;
	err = sdp_renew_id(ssk);
	if (err)
		goto out;
	if (newg)
		err = sdp_rport_bind(ssk, &addr, &newg);
	else
		err = sdp_bind_id(ssk, ssk->cm_id, &addr);
	ssk->last_bind_err = -err;
	if (!err) {
		__set_bit(SDP_F_BOUND, &ssk->flags);
		sdp_addr_snapshot(ssk);
	}
out:
	release_sock(sk);
	sdp_rport_free(newg);	/* not needed: bound, or joined another */
	return err;
}

/* connect(AF_UNSPEC), as tcp_disconnect(): a listener stops listening, a
 * connection is reset (ECONNRESET for the next SO_ERROR) and its unread
 * data dropped, and the socket is left closed with no shutdown, ready to
 * connect again.  Called locked; drops the lock for a listener.
 */
static int sdp_disconnect(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	switch (sk->sk_state) {
	case TCP_CLOSE:
		return 0;
	case TCP_LISTEN:
		release_sock(sk);
		sdp_listen_stop(sk);
		lock_sock(sk);
		break;
	default:
		sdp_conn_abort(ssk, 0, true);
		WRITE_ONCE(sk->sk_err, ECONNRESET);
		break;
	}
	/* unread data and urgent state go with the connection */
	if (sdp_conn_quiesce(ssk))
		return -EINTR;
	ssk->tp->rx_purge(ssk);
	WRITE_ONCE(ssk->copied_seq, ssk->rcv_nxt);
	WRITE_ONCE(ssk->urg_data, 0);
	WRITE_ONCE(sk->sk_shutdown, 0);
	sock_reset_flag(sk, SOCK_DONE);
	return 0;
}

static int sdp_wait_for_connect(struct sock *sk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	add_wait_queue(sk_sleep(sk), &wait);
	while ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		if (signal_pending(current) || !*timeo)
			break;
		sk_wait_event(sk, timeo,
			      !((1 << sk->sk_state) &
				(TCPF_SYN_SENT | TCPF_SYN_RECV)), &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return *timeo != 0;
}

/* connect() of a closed socket: the transport that reaches @uaddr
 * starts connecting a fresh id.  Called locked (dropped while the last
 * connection's reader or teardown finishes).  0 or a negative errno.
 */
static int sdp_connect_start(struct sdp_sock *ssk, struct sockaddr *uaddr,
			     int addr_len)
{
	const struct sdp_transport *tp;
	struct sockaddr_storage addr;
	struct sock *sk = &ssk->sk;
	int err;

	if (sk->sk_state != TCP_CLOSE)
		return -EISCONN;
	err = sdp_addr_in(sk, uaddr, addr_len, &addr, false);
	if (err)
		return err;
	tp = sdp_transport_for(sock_net(sk), &addr);
	if (!tp) {
		ssk->last_bind_err = ENODEV;
		return -ENODEV;
	}
	/* a reader may still be fetching from the last connection */
	err = sdp_conn_quiesce(ssk);
	if (err)
		return err;
	err = sdp_rport_unshare(ssk);
	if (err)
		return err;
	err = sdp_renew_id(ssk);
	if (err)
		return err;
	if (sk->sk_state != TCP_CLOSE)
		return -EISCONN;
	ssk->flags &= BIT(SDP_F_BOUND) | BIT(SDP_F_LOCAL_BIND);
	__set_bit(SDP_F_ID_USED, &ssk->flags);
	ssk->port_tries = 0;
	WRITE_ONCE(sk->sk_err, 0);
	sk->sk_shutdown = 0;
	sock_reset_flag(sk, SOCK_DONE);	/* as tcp_disconnect() */
	return tp->connect(ssk, &addr);
}

/**
 * sdp_connect_checked - connect(), as inet_stream_connect(), state by state
 * @sock: the socket
 * @uaddr: the destination
 * @addr_len: its length
 * @flags: the file's flags
 *
 * The security hooks a TCP connect() meets are the caller's to ask
 * first (sdp_lsm_connect()).
 *
 * Return: 0 or a negative errno, as connect() answers.
 */
int sdp_connect_checked(struct socket *sock, struct sockaddr *uaddr,
			int addr_len, int flags)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	long timeo;
	int err;

	if (addr_len < (int)sizeof(uaddr->sa_family))
		return -EINVAL;

	lock_sock(sk);
	if (uaddr->sa_family == AF_UNSPEC) {
		err = sdp_disconnect(ssk);
		if (!err)
			sock->state = SS_UNCONNECTED;
		goto out;
	}

	switch (sock->state) {
	default:
		err = -EINVAL;
		goto out;
	case SS_CONNECTED:
		err = -EISCONN;
		goto out;
	case SS_CONNECTING:
		err = -EALREADY;
		break;
	case SS_UNCONNECTED:
		err = sdp_connect_start(ssk, uaddr, addr_len);
		if (err)
			goto out;
		/* as TCP on loopback, even when done at once */
		sock->state = SS_CONNECTING;
		err = -EINPROGRESS;
		if (flags & O_NONBLOCK)
			goto out;
		break;
	}

	timeo = sock_sndtimeo(sk, flags & O_NONBLOCK);
	if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		if (!timeo || !sdp_wait_for_connect(sk, &timeo))
			goto out;
		err = sock_intr_errno(timeo);
		if (signal_pending(current))
			goto out;
	}
	if (sk->sk_state == TCP_CLOSE)
		goto sock_error;
	sock->state = SS_CONNECTED;
	err = 0;
out:
	release_sock(sk);
	return err;

sock_error:
	err = sock_error(sk) ? : -ECONNABORTED;
	sock->state = SS_UNCONNECTED;
	goto out;
}

/* connect() of families 27/28: what a TCP connect() meets first
 * (sdp_lsm.c), then SDP's.
 */
int sdp_connect(struct socket *sock, struct sockaddr *uaddr, int addr_len,
		int flags)
{
	int err;

	if (addr_len >= (int)sizeof(uaddr->sa_family) &&
	    uaddr->sa_family != AF_UNSPEC) {
		err = sdp_lsm_connect(sock->sk, uaddr, addr_len);
		if (err)
			return err;
	}
	return sdp_connect_checked(sock, uaddr, addr_len, flags);
}

/* As inet_getname(): plain AF_INET / AF_INET6 addresses. */
int sdp_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sockaddr_storage a;
	int len;

	lock_sock(sk);
	if (peer && (!test_bit(SDP_F_WAS_CONNECTED, &ssk->flags) ||
		     ((1 << sk->sk_state) & (TCPF_CLOSE | TCPF_SYN_SENT)))) {
		release_sock(sk);
		return -ENOTCONN;
	}
	if (sk->sk_state == TCP_SYN_SENT)
		sdp_addr_snapshot(ssk);	/* the source port is known by now */
	memcpy(&a, peer ? &ssk->peer : &ssk->local, sizeof(a));
	release_sock(sk);

	if (sdp_addr_family(sk) == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;

		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		if (a.ss_family == AF_INET) {
			sin->sin_port = ((struct sockaddr_in *)&a)->sin_port;
			sin->sin_addr = ((struct sockaddr_in *)&a)->sin_addr;
		}
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;

		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		if (a.ss_family == AF_INET6) {
			memcpy(sin6, &a, sizeof(*sin6));
			sin6->sin6_flowinfo = 0;
		} else if (a.ss_family == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&a;

			sin6->sin6_port = sin->sin_port;
			ipv6_addr_set_v4mapped(sin->sin_addr.s_addr,
					       &sin6->sin6_addr);
		}
		len = sizeof(*sin6);
	}
	return len;
}
