// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the security hooks a TCP connect() meets, for an SDP socket's.
 *
 * connect(2) runs the LSM hooks on the socket it is given, and for an
 * SDP socket they see family 27/28, or AF_INET(6) with protocol
 * IPPROTO_SDP: an LSM that rules TCP only lets it pass - Landlock's
 * LANDLOCK_ACCESS_NET_CONNECT_TCP looks at sk_is_tcp() sockets alone,
 * SELinux's name_connect at tcp_socket's class.
 * But a program moved onto SDP (libsdp, sdp_bpf(8)) asked for TCP, and
 * the sandbox written for its TCP must hold.  So before SDP connects
 * anywhere, by RDMA or by the local transport, and before the fallback
 * of an IPPROTO_SDP socket may carry the connect by TCP,
 * sdp_lsm_connect() asks the hooks about a TCP socket made for the
 * purpose in the caller's context (its credentials and LSM domain;
 * __sock_create() with kern = 0 runs the hooks a TCP socket() meets),
 * connecting to the same address.  Their answer (EACCES, say) is
 * connect()'s, before anything else is looked at, as TCP's.
 *
 * The kernel exports none of security_socket_connect(), _bind() or
 * _listen().  It exports sock_sendmsg(), which runs
 * security_socket_sendmsg(), and a TCP Fast Open send (MSG_FASTOPEN with
 * a destination) connects: Landlock and SELinux check it as a connect
 * (the connect hook's own checks, on 6.1 as on 6.12).  So the
 * probe is such a send, of nothing, on the TCP socket with proto_ops of
 * ours for that call: TCP never sees it and no SYN leaves.  A bind or a
 * listen has no such door: Landlock's LANDLOCK_ACCESS_NET_BIND_TCP and
 * SELinux's name_bind cannot be applied to SDP sockets from a module
 * (Documentation/sdp.rst, "Sandboxes and security modules").
 *
 * Objects: the probe socket lives for one call; nothing is shared.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "sdp.h"

/* The hooks have answered by the time a send gets here: nothing goes. */
static int sdp_lsm_probe_sendmsg(struct socket *sock, struct msghdr *msg,
				 size_t len)
{
	return 0;
}

static const struct proto_ops sdp_lsm_probe_ops = {
	.family		= PF_INET,
	.owner		= THIS_MODULE,
	.sendmsg	= sdp_lsm_probe_sendmsg,
};

/* @uaddr as a TCP socket of its family takes it: its length, or 0 for an
 * address SDP takes from no TCP program (connect() refuses it anyway).
 */
static int sdp_lsm_addr(const struct sockaddr *uaddr, int len,
			struct sockaddr_storage *a)
{
	sa_family_t fam = uaddr->sa_family;

	memset(a, 0, sizeof(*a));
	if ((fam == AF_INET || fam == sdp_af_inet) &&
	    len >= (int)sizeof(struct sockaddr_in)) {
		memcpy(a, uaddr, sizeof(struct sockaddr_in));
		a->ss_family = AF_INET;
		return sizeof(struct sockaddr_in);
	}
	if ((fam == AF_INET6 || fam == sdp_af_inet6) &&
	    len >= SIN6_LEN_RFC2133) {
		memcpy(a, uaddr, min_t(int, len, sizeof(struct sockaddr_in6)));
		a->ss_family = AF_INET6;
		return sizeof(struct sockaddr_in6);
	}
	return 0;
}

/**
 * sdp_lsm_connect - may the caller connect a TCP socket to @uaddr?
 * @sk: the SDP socket connect() was called on
 * @uaddr: the destination, as connect() got it
 * @len: its length
 *
 * Context: the caller's connect(), process context, no lock held.
 *
 * Return: 0, or the hooks' answer (EACCES from Landlock, say), or why no
 * TCP socket could be made to ask them about (the caller may not make
 * TCP sockets either).
 */
int sdp_lsm_connect(struct sock *sk, struct sockaddr *uaddr, int len)
{
	struct msghdr msg = { .msg_flags = MSG_FASTOPEN | MSG_DONTWAIT };
	const struct proto_ops *ops;
	struct sockaddr_storage a;
	struct socket *tcp;
	struct kvec iov = {};
	int alen, err;

	if (len < (int)sizeof(sa_family_t))
		return 0;	/* connect() says EINVAL */
	alen = sdp_lsm_addr(uaddr, len, &a);
	if (!alen)
		return 0;
	err = __sock_create(sock_net(sk), a.ss_family, SOCK_STREAM,
			    IPPROTO_TCP, &tcp, 0);
	if (err)
		return err;
	msg.msg_name = &a;
	msg.msg_namelen = alen;
	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &iov, 0, 0);
	ops = tcp->ops;		/* nobody else can see this socket */
	WRITE_ONCE(tcp->ops, &sdp_lsm_probe_ops);
	err = sock_sendmsg(tcp, &msg);
	WRITE_ONCE(tcp->ops, ops);
	sock_release(tcp);
	if (err < 0)
		SDP_INC_STATS(sock_net(sk), SDP_MIB_LSM_DENIED);
	return min(err, 0);
}
