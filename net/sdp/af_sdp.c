// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: Sockets Direct Protocol - socket families and module init.
 *
 * ib_sdp registers two socket families, AF_INET_SDP (27) and AF_INET6_SDP
 * (28) by default, whose SOCK_STREAM sockets behave as TCP sockets but are
 * carried by RDMA reliable connections set up through rdma_cm.  The two
 * families share one struct proto; they differ only in the address family
 * they accept.
 *
 * Module references: each socket holds a reference on this module through
 * its proto_ops and its struct proto, so ib_sdp cannot be unloaded while
 * an SDP socket exists.  Init registers the RDMA client first and the
 * socket families last; exit undoes it in reverse order.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <net/sock.h>

#include "sdp.h"

static int af_inet_sdp = AF_INET_SDP;
module_param(af_inet_sdp, int, 0444);
MODULE_PARM_DESC(af_inet_sdp, "socket family number of IPv4 SDP (default 27)");

static int af_inet6_sdp = AF_INET6_SDP;
module_param(af_inet6_sdp, int, 0444);
MODULE_PARM_DESC(af_inet6_sdp, "socket family number of IPv6 SDP (default 28)");

int sdp_zcopy_thresh = 65536;
module_param_named(sdp_zcopy_thresh, sdp_zcopy_thresh, int, 0644);
MODULE_PARM_DESC(sdp_zcopy_thresh,
		 "default SDP_ZCOPY_THRESH of new sockets, bytes; 0 = no zero copy (default 65536)");

static struct proto sdp_proto = {
	.name		= "SDP",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct sdp_sock),
};

/* Last sock_put(): the socket is gone from every list and queue. */
static void sdp_sk_destruct(struct sock *sk)
{
	sock_prot_inuse_add(sock_net(sk), sk->sk_prot, -1);
}

static int sdp_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct rdma_cm_id *cm_id;

	if (!sk)
		return 0;

	lock_sock(sk);
	cm_id = sdp_sk(sk)->cm_id;
	sdp_sk(sk)->cm_id = NULL;
	sk->sk_state = TCP_CLOSE;
	sock_orphan(sk);
	sock->sk = NULL;
	release_sock(sk);

	/* Sleeps until the id's handlers have returned: not under the lock. */
	if (cm_id)
		rdma_destroy_id(cm_id);

	sock_put(sk);	/* the reference sk_alloc() gave the socket */
	return 0;
}

static int sdp_setsockopt(struct socket *sock, int level, int optname,
			  sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = sock->sk;
	int val;

	if (level != SOL_SDP)
		return -ENOPROTOOPT;

	switch (optname) {
	case SDP_ZCOPY_THRESH:
		if (optlen < sizeof(int))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		if (val < 0)
			return -EINVAL;
		lock_sock(sk);
		sdp_sk(sk)->zcopy_thresh = val;
		release_sock(sk);
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

static int sdp_getsockopt(struct socket *sock, int level, int optname,
			  char __user *optval, int __user *optlen)
{
	struct sdp_sock *ssk = sdp_sk(sock->sk);
	int val, len;

	if (level != SOL_SDP)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;

	switch (optname) {
	case SDP_ZCOPY_THRESH:
		val = READ_ONCE(ssk->zcopy_thresh);
		break;
	case SDP_LAST_BIND_ERR:
		val = READ_ONCE(ssk->last_bind_err);
		break;
	default:
		return -ENOPROTOOPT;
	}

	len = min_t(unsigned int, len, sizeof(int));
	if (put_user(len, optlen) || copy_to_user(optval, &val, len))
		return -EFAULT;
	return 0;
}

#define SDP_PROTO_OPS(_family)					\
{								\
	.family		= (_family),				\
	.owner		= THIS_MODULE,				\
	.release	= sdp_release,				\
	.bind		= sock_no_bind,				\
	.connect	= sock_no_connect,			\
	.socketpair	= sock_no_socketpair,			\
	.accept		= sock_no_accept,			\
	.getname	= sock_no_getname,			\
	.poll		= datagram_poll,			\
	.ioctl		= sock_no_ioctl,			\
	.listen		= sock_no_listen,			\
	.shutdown	= sock_no_shutdown,			\
	.setsockopt	= sdp_setsockopt,			\
	.getsockopt	= sdp_getsockopt,			\
	.sendmsg	= sock_no_sendmsg,			\
	.recvmsg	= sock_no_recvmsg,			\
	.mmap		= sock_no_mmap,				\
	.sendpage	= sock_no_sendpage,			\
}

/* Not const: .family is filled in at init from the module parameters. */
static struct proto_ops sdp_inet_ops = SDP_PROTO_OPS(AF_INET_SDP);
static struct proto_ops sdp_inet6_ops = SDP_PROTO_OPS(AF_INET6_SDP);

/* Errors follow inet_create() so that a program sees for SDP what it sees
 * for AF_INET: a protocol number out of range is EINVAL, a socket type
 * SDP does not provide is ESOCKTNOSUPPORT, except SOCK_RAW without a
 * protocol, which inet_create() refuses with EPROTONOSUPPORT before it
 * looks further, and a protocol other than TCP on a stream socket is
 * EPROTONOSUPPORT.
 */
static int sdp_create(struct net *net, struct socket *sock, int protocol,
		      int kern, int family, const struct proto_ops *ops)
{
	struct rdma_cm_id *cm_id;
	struct sdp_sock *ssk;
	struct sock *sk;

	if (protocol < 0 || protocol >= IPPROTO_MAX)
		return -EINVAL;
	if (sock->type == SOCK_RAW && protocol == IPPROTO_IP)
		return -EPROTONOSUPPORT;
	if (sock->type != SOCK_STREAM)
		return -ESOCKTNOSUPPORT;
	if (protocol != IPPROTO_IP && protocol != IPPROTO_TCP)
		return -EPROTONOSUPPORT;

	sk = sk_alloc(net, family, GFP_KERNEL, &sdp_proto, kern);
	if (!sk)
		return -ENOMEM;

	sock->state = SS_UNCONNECTED;
	sock->ops = ops;
	sock_init_data(sock, sk);
	sk->sk_protocol = IPPROTO_TCP;
	sk->sk_state = TCP_CLOSE;
	sk->sk_destruct = sdp_sk_destruct;
	sock_prot_inuse_add(net, &sdp_proto, 1);

	ssk = sdp_sk(sk);
	ssk->zcopy_thresh = READ_ONCE(sdp_zcopy_thresh);

	cm_id = sdp_cm_create_id(sk);
	if (IS_ERR(cm_id)) {
		sock->sk = NULL;
		sk_free(sk);	/* runs sdp_sk_destruct() */
		return PTR_ERR(cm_id);
	}
	ssk->cm_id = cm_id;
	return 0;
}

static int sdp_inet_create(struct net *net, struct socket *sock, int protocol,
			   int kern)
{
	return sdp_create(net, sock, protocol, kern, af_inet_sdp,
			  &sdp_inet_ops);
}

static int sdp_inet6_create(struct net *net, struct socket *sock,
			    int protocol, int kern)
{
	return sdp_create(net, sock, protocol, kern, af_inet6_sdp,
			  &sdp_inet6_ops);
}

static struct net_proto_family sdp_inet_family = {
	.create	= sdp_inet_create,
	.owner	= THIS_MODULE,
};

static struct net_proto_family sdp_inet6_family = {
	.create	= sdp_inet6_create,
	.owner	= THIS_MODULE,
};

static bool __init sdp_family_valid(int family)
{
	return family > AF_UNSPEC && family < NPROTO;
}

static int __init sdp_init(void)
{
	int err;

	if (!sdp_family_valid(af_inet_sdp) || !sdp_family_valid(af_inet6_sdp) ||
	    af_inet_sdp == af_inet6_sdp) {
		pr_err("ib_sdp: invalid family numbers %d/%d (1..%d, distinct)\n",
		       af_inet_sdp, af_inet6_sdp, NPROTO - 1);
		return -EINVAL;
	}
	sdp_inet_family.family = af_inet_sdp;
	sdp_inet_ops.family = af_inet_sdp;
	sdp_inet6_family.family = af_inet6_sdp;
	sdp_inet6_ops.family = af_inet6_sdp;

	err = proto_register(&sdp_proto, 1);
	if (err)
		return err;

	err = sdp_dev_init();
	if (err)
		goto err_proto;

	err = sock_register(&sdp_inet_family);
	if (err) {
		pr_err("ib_sdp: family %d is taken (%d)\n", af_inet_sdp, err);
		goto err_dev;
	}

	err = sock_register(&sdp_inet6_family);
	if (err) {
		pr_err("ib_sdp: family %d is taken (%d)\n", af_inet6_sdp, err);
		goto err_inet;
	}
	return 0;

err_inet:
	sock_unregister(af_inet_sdp);
err_dev:
	sdp_dev_exit();
err_proto:
	proto_unregister(&sdp_proto);
	return err;
}

static void __exit sdp_exit(void)
{
	sock_unregister(af_inet6_sdp);
	sock_unregister(af_inet_sdp);
	sdp_dev_exit();
	proto_unregister(&sdp_proto);
}

module_init(sdp_init);
module_exit(sdp_exit);

MODULE_AUTHOR("The ib_sdp authors");
MODULE_DESCRIPTION("Sockets Direct Protocol: TCP-compatible stream sockets over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(SDP_MODULE_VERSION);
MODULE_ALIAS_NETPROTO(AF_INET_SDP);
MODULE_ALIAS_NETPROTO(AF_INET6_SDP);
