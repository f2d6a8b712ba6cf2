// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: SDP as a protocol of AF_INET and AF_INET6 (IPPROTO_SDP).
 *
 * socket(AF_INET, SOCK_STREAM, IPPROTO_SDP) (and AF_INET6) gives the same
 * SDP socket as socket(AF_INET_SDP, SOCK_STREAM, 0), as IPPROTO_SMC and
 * IPPROTO_MPTCP give theirs: the module registers an inet_protosw for
 * each family (inet_register_protosw(), inet6_register_protosw()), so
 * inet_create() allocates the socket from our struct proto, fills in its
 * inet_sock part (struct sdp_sock begins with one) and its ipv6_pinfo
 * (struct sdp6_sock ends with one), and calls sdp_inet_init_sock(), which
 * makes it an SDP socket exactly as sdp_create() does.  From there on
 * nothing but the family tells the two apart: the socket calls, the
 * transports and /proc are the same.  A protocol number of 256 or more
 * cannot collide with an IP protocol; the update_socket_protocol BPF hook
 * (6.6) can turn a program's socket(AF_INET, SOCK_STREAM, 0) into this
 * one (sdp_bpf, Documentation/sdp-bpf.rst).
 *
 * The number is the module parameter ipproto_sdp (IPPROTO_SDP, 261, by
 * default; 0: not registered).  SO_ZEROCOPY, which the socket core
 * allows only for TCP's and UDP's protocol numbers, is sdp_setsockopt()'s
 * on every SDP socket (SOCK_CUSTOM_SOCKOPT).
 *
 * A listener's children are allocated from the listener's struct proto
 * (sdp_sk_alloc()), which gives an IPv6 child its ipv6_pinfo where
 * inet6_create() would.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/protocol.h>
#include <net/sock.h>
#include <net/tcp.h>
#if IS_ENABLED(CONFIG_IPV6)
#include <net/ipv6.h>
#endif

#include "sdp.h"
#include "sdp_family.h"

static int sdp_inet_init_sock(struct sock *sk);
static void sdp_inet_destroy_sock(struct sock *sk);

/* inet_create()'s error path calls ->unhash: nothing is hashed */
static void sdp_inet_unhash(struct sock *sk)
{
}

static struct proto sdp_inet_proto = {
	.name		= "SDP-INET",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct sdp_sock),
	.init		= sdp_inet_init_sock,
	.destroy	= sdp_inet_destroy_sock,
	.unhash		= sdp_inet_unhash,
	.release_cb	= sdp_release_cb,
	.keepalive	= sdp_keepalive,
};

static const struct proto_ops sdp_inet_stream_ops =
	SDP_PROTO_OPS(PF_INET, sdp_inet);

static struct inet_protosw sdp_inet_protosw = {
	.type		= SOCK_STREAM,
	.prot		= &sdp_inet_proto,
	.ops		= &sdp_inet_stream_ops,
};

#if IS_ENABLED(CONFIG_IPV6)
/* inet6_create() finds the ipv6_pinfo at the end of the object (before
 * 6.5) or at ->ipv6_pinfo_offset
 */
struct sdp6_sock {
	struct sdp_sock		ssk;
	struct ipv6_pinfo	inet6;
};

static struct proto sdp_inet6_proto = {
	.name		= "SDP-INET6",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct sdp6_sock),
#ifdef HAVE_PROTO_IPV6_PINFO_OFFSET
	.ipv6_pinfo_offset = offsetof(struct sdp6_sock, inet6),
#endif
	.init		= sdp_inet_init_sock,
	.destroy	= sdp_inet_destroy_sock,
	.unhash		= sdp_inet_unhash,
	.release_cb	= sdp_release_cb,
	.keepalive	= sdp_keepalive,
};

static const struct proto_ops sdp_inet6_stream_ops =
	SDP_PROTO_OPS(PF_INET6, sdp_inet);

static struct inet_protosw sdp_inet6_protosw = {
	.type		= SOCK_STREAM,
	.prot		= &sdp_inet6_proto,
	.ops		= &sdp_inet6_stream_ops,
};
#endif

/* inet_create() made @sk (sock_init_data() done, sk_protocol ours): make
 * it an SDP socket.  On failure inet_create() releases it through
 * sdp_inet_destroy_sock() and the last sock_put().
 */
static int sdp_inet_init_sock(struct sock *sk)
{
	struct socket *sock = sk->sk_socket;
	int err;

	err = sdp_sk_setup(sk, sock);
	return err ?: sdp_sk_attach_id(sk);
}

/* Only from inet_create()'s error path (init failed, or a cgroup's
 * inet_sock_create program refused the socket): a socket that never
 * connected; its release is sdp_release() otherwise.
 */
static void sdp_inet_destroy_sock(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct rdma_cm_id *id;

	lock_sock(sk);
	id = ssk->cm_id;
	ssk->cm_id = NULL;
	release_sock(sk);
	if (id)
		rdma_destroy_id(id);
}

/**
 * sdp_inet_init - register IPPROTO_SDP with AF_INET and AF_INET6
 *
 * Return: 0 or a negative errno.
 */
int sdp_inet_init(void)
{
	int err;

#if IS_ENABLED(CONFIG_IPV6) && !defined(HAVE_PROTO_IPV6_PINFO_OFFSET)
	BUILD_BUG_ON(offsetof(struct sdp6_sock, inet6) !=
		     sizeof(struct sdp6_sock) - sizeof(struct ipv6_pinfo));
#endif
	if (!sdp_ipproto)
		return 0;
	if (sdp_ipproto < 256 || sdp_ipproto >= IPPROTO_MAX) {
		pr_err("ipproto_sdp %d: 256..%d, or 0 for none\n", sdp_ipproto,
		       IPPROTO_MAX - 1);
		return -EINVAL;
	}
	err = proto_register(&sdp_inet_proto, 1);
	if (err)
		return err;
	sdp_inet_protosw.protocol = sdp_ipproto;
	inet_register_protosw(&sdp_inet_protosw);
#if IS_ENABLED(CONFIG_IPV6)
	err = proto_register(&sdp_inet6_proto, 1);
	if (err)
		goto err_inet;
	sdp_inet6_protosw.protocol = sdp_ipproto;
	err = inet6_register_protosw(&sdp_inet6_protosw);
	if (err) {
		proto_unregister(&sdp_inet6_proto);
		goto err_inet;
	}
#endif
	return 0;

#if IS_ENABLED(CONFIG_IPV6)
err_inet:
	inet_unregister_protosw(&sdp_inet_protosw);
	proto_unregister(&sdp_inet_proto);
	return err;
#endif
}

/* Unregistered before the module goes: every socket holds the module. */
void sdp_inet_exit(void)
{
	if (!sdp_ipproto)
		return;
#if IS_ENABLED(CONFIG_IPV6)
	inet6_unregister_protosw(&sdp_inet6_protosw);
	proto_unregister(&sdp_inet6_proto);
#endif
	inet_unregister_protosw(&sdp_inet_protosw);
	proto_unregister(&sdp_inet_proto);
}

/* what inet_create() asks for (type 1: SOCK_STREAM), then without type */
MODULE_ALIAS("net-pf-" __stringify(PF_INET) "-proto-" __stringify(IPPROTO_SDP)
	     "-type-1");
MODULE_ALIAS_NET_PF_PROTO(PF_INET, IPPROTO_SDP);
MODULE_ALIAS("net-pf-" __stringify(PF_INET6) "-proto-" __stringify(IPPROTO_SDP)
	     "-type-1");
MODULE_ALIAS_NET_PF_PROTO(PF_INET6, IPPROTO_SDP);
