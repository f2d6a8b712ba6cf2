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
 * sdp_sock_flags - what the socket core must know of an SDP socket
 * @sock: a new socket's, or an accepted child's
 */
void sdp_sock_flags(struct socket *sock)
{
	/* io_uring's SEND_ZC: sdp_sendmsg() takes msg_ubuf */
	set_bit(SOCK_SUPPORT_ZC, &sock->flags);
#ifdef HAVE_SOCK_CUSTOM_SOCKOPT
	/* SOL_SOCKET options to sdp_setsockopt() first: SO_ZEROCOPY */
	set_bit(SOCK_CUSTOM_SOCKOPT, &sock->flags);
#endif
}

static struct lock_class_key sdp_inet_slock_keys[2], sdp_inet_lock_keys[2];

/* An IPPROTO_SDP socket is of family AF_INET(6), whose lock class TCP's
 * sockets have; its fallback (sdp_fallback.c) takes a TCP socket's lock
 * under its own: a class of its own, so lockdep tells them apart.
 */
static void sdp_sk_lock_class(struct sock *sk)
{
	bool v6 = sk->sk_family == AF_INET6;

	sock_lock_init_class_and_name(sk,
				      v6 ? "slock-AF_INET6-SDP" :
					   "slock-AF_INET-SDP",
				      &sdp_inet_slock_keys[v6],
				      v6 ? "sk_lock-AF_INET6-SDP" :
					   "sk_lock-AF_INET-SDP",
				      &sdp_inet_lock_keys[v6]);
}

/**
 * sdp_sk_setup - make a new struct sock an SDP socket
 * @sk: allocated and initialised by sock_init_data(): by sdp_sk_alloc(),
 *	or by inet_create() for IPPROTO_SDP (sdp_inet.c)
 * @sock: its struct socket, or NULL for a child of a listener
 *
 * On failure the caller frees @sk (sdp_sk_destruct() is its destructor
 * from the start).
 *
 * Return: 0 or -ENOMEM.
 */
int sdp_sk_setup(struct sock *sk, struct socket *sock)
{
	struct net *net = sock_net(sk);
	struct sdp_sock *ssk = sdp_sk(sk);

	if (sk->sk_prot != &sdp_proto)
		sdp_sk_lock_class(sk);	/* IPPROTO_SDP, not yet locked */
	if (sock)
		sdp_sock_flags(sock);
	sk->sk_type = SOCK_STREAM;
	/* SO_PROTOCOL: TCP's for families 27/28, as the older stack said */
	sk->sk_protocol = sk->sk_prot == &sdp_proto ? IPPROTO_TCP :
			  sdp_ipproto;
	sk->sk_state = TCP_CLOSE;
	sk->sk_destruct = sdp_sk_destruct;
	sk->sk_write_space = sdp_write_space;
	/* TCP's initial buffer sizes, as getsockopt() reports them */
	sk->sk_rcvbuf = READ_ONCE(net->ipv4.sysctl_tcp_rmem[1]);
	sk->sk_sndbuf = READ_ONCE(net->ipv4.sysctl_tcp_wmem[1]);

	ssk->zcopy_thresh = READ_ONCE(sdp_zcopy_thresh);
	ssk->fallback = -1;	/* ipproto_fallback says */
#if IS_ENABLED(CONFIG_IPV6)
	if (sdp_family_v6(sk))
		ssk->v6only = READ_ONCE(net->ipv6.sysctl.bindv6only);
#endif
	INIT_LIST_HEAD(&ssk->accept_queue);
	INIT_LIST_HEAD(&ssk->accept_node);
	sdp_cm_init(ssk);
	sock_prot_inuse_add(net, sk->sk_prot, 1);
	ssk->proc_id = U32_MAX;
	if (sdp_conn_init(ssk) || sdp_sock_list_add(ssk))
		return -ENOMEM;
	return 0;
}

/**
 * sdp_sk_attach_id - give a socket socket() made its rdma_cm id
 * @sk: the socket, new
 *
 * What its connections allocate is charged to its creator's memory
 * cgroup; a listener's children inherit it (sdp_child_inherit()).  On
 * failure the caller frees @sk.
 *
 * Return: 0 or a negative errno.
 */
int sdp_sk_attach_id(struct sock *sk)
{
	struct rdma_cm_id *cm_id;

	sdp_sk(sk)->memcg = get_mem_cgroup_from_mm(current->mm);
	cm_id = sdp_cm_create_id(sk);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	lock_sock(sk);
	sdp_sk(sk)->cm_id = cm_id;
	sdp_id_options(sdp_sk(sk), cm_id);
	release_sock(sk);
	return 0;
}

/* A child of an IPPROTO_SDP listener (sdp_inet.c): what inet_create()
 * and inet6_create() would have set that anything may read, the IPv6
 * one's ipv6_pinfo where inet6_create() finds it.
 */
static void sdp_sk_inet_child(struct sock *sk)
{
	inet_sk(sk)->uc_ttl = -1;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6)
#ifdef HAVE_PROTO_IPV6_PINFO_OFFSET
		inet_sk(sk)->pinet6 = (void *)sk + sk->sk_prot->ipv6_pinfo_offset;
#else
		inet_sk(sk)->pinet6 = (void *)sk + sk->sk_prot->obj_size -
				      sizeof(struct ipv6_pinfo);
#endif
#endif
}

/**
 * sdp_fallback_on - does a connect that finds no SDP peer go on by TCP?
 * @ssk: the socket
 *
 * IPPROTO_SDP sockets only (sdp_fallback.c), as SDP_FALLBACK says, else
 * as the module parameter ipproto_fallback says.
 *
 * Return: true if such a connect goes on by TCP.
 */
bool sdp_fallback_on(const struct sdp_sock *ssk)
{
	if (ssk->sk.sk_prot == &sdp_proto)
		return false;
	return ssk->fallback >= 0 ? ssk->fallback :
	       READ_ONCE(sdp_ipproto_fallback);
}

/**
 * sdp_sk_alloc - allocate and initialise an SDP socket
 * @net: its namespace
 * @prot: sdp_proto for families 27/28, a listener's own for its child
 * @family: the socket's family
 * @kern: a kernel socket
 * @sock: the struct socket, or NULL for a child of a listener
 *
 * Return: the new socket, or NULL without memory.
 */
struct sock *sdp_sk_alloc(struct net *net, struct proto *prot, int family,
			  int kern, struct socket *sock)
{
	struct sock *sk;

	sk = sk_alloc(net, family, GFP_KERNEL, prot, kern);
	if (!sk)
		return NULL;
	sock_init_data(sock, sk);
	if (prot != &sdp_proto)
		sdp_sk_inet_child(sk);
	if (sdp_sk_setup(sk, sock)) {
		sk_free(sk);	/* runs sdp_sk_destruct() */
		return NULL;
	}
	return sk;
}
