// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the SDP socket itself: its struct proto, allocation and
 * destruction.
 *
 * sdp_sk_alloc() makes every SDP socket, the ones socket() creates
 * (af_sdp.c) and a listener's children (made by the transport that
 * carries them).  A socket is freed by its last sock_put()
 * (sdp_sk_destruct()): the file's reference, the accept queue's for a
 * child not yet accepted, the connection's while one is up, and one per
 * queued work.  Each socket holds its module through sdp_proto, so
 * ib_sdp cannot be unloaded while one exists.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/module.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_az.h"

struct proto sdp_proto = {
	.name		= "SDP",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct sdp_sock),
	.release_cb	= sdp_release_cb,
	.keepalive	= sdp_keepalive,
};

/* Last sock_put(): the socket is gone from every list and queue. */
static void sdp_sk_destruct(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	WARN_ON_ONCE(test_bit(SDP_F_CONN, &ssk->flags));
	if (ssk->conn)
		sdp_conn_put(ssk->conn);
	mem_cgroup_put(ssk->memcg);
	if (ssk->az_chan)
		sdp_az_chan_put(ssk->az_chan);
	sdp_sock_list_del(ssk);
	mutex_destroy(&ssk->teardown_lock);
	sock_prot_inuse_add(sock_net(sk), sk->sk_prot, -1);
}

/**
 * sdp_sk_alloc - allocate and initialise an SDP socket
 * @net: its namespace
 * @family: the SDP family number
 * @kern: a kernel socket
 * @sock: the struct socket, or NULL for a child of a listener
 */
struct sock *sdp_sk_alloc(struct net *net, int family, int kern,
			  struct socket *sock)
{
	struct sdp_sock *ssk;
	struct sock *sk;

	sk = sk_alloc(net, family, GFP_KERNEL, &sdp_proto, kern);
	if (!sk)
		return NULL;
	sock_init_data(sock, sk);
	if (sock)	/* io_uring's SEND_ZC: sdp_sendmsg() takes msg_ubuf */
		set_bit(SOCK_SUPPORT_ZC, &sock->flags);
	sk->sk_type = SOCK_STREAM;
	sk->sk_protocol = IPPROTO_TCP;
	sk->sk_state = TCP_CLOSE;
	sk->sk_destruct = sdp_sk_destruct;
	sk->sk_write_space = sdp_write_space;
	/* TCP's initial buffer sizes, as getsockopt() reports them */
	sk->sk_rcvbuf = READ_ONCE(net->ipv4.sysctl_tcp_rmem[1]);
	sk->sk_sndbuf = READ_ONCE(net->ipv4.sysctl_tcp_wmem[1]);

	ssk = sdp_sk(sk);
	ssk->zcopy_thresh = READ_ONCE(sdp_zcopy_thresh);
#if IS_ENABLED(CONFIG_IPV6)
	if (family == sdp_af_inet6)
		ssk->v6only = READ_ONCE(net->ipv6.sysctl.bindv6only);
#endif
	INIT_LIST_HEAD(&ssk->accept_queue);
	INIT_LIST_HEAD(&ssk->accept_node);
	sdp_cm_init(ssk);
	sock_prot_inuse_add(net, &sdp_proto, 1);
	ssk->proc_id = U32_MAX;
	if (sdp_conn_init(ssk) || sdp_sock_list_add(ssk)) {
		sk_free(sk);	/* runs sdp_sk_destruct() */
		return NULL;
	}
	return sk;
}
