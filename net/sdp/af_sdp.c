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
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/netlink.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <linux/sched/signal.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_family.h"
#include "sdp_az.h"

int sdp_release(struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (!sk)
		return 0;
	sdp_fallback_release(sdp_sk(sk));	/* TCP's socket, if it had one */
	/* also after the device under a listener went away (TCP_CLOSE):
	 * its queued children and waiting requests are still there
	 */
	sdp_listen_stop(sk);
	sdp_rport_release(sdp_sk(sk));	/* its SO_REUSEPORT group */
	sock->sk = NULL;
	sdp_sk_orphan_put(sk, false);
	return 0;
}

int sdp_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int err = 0;

	/* SHUT_RD (0) -> RCV_SHUTDOWN ... SHUT_RDWR (2) -> SHUTDOWN_MASK */
	how++;
	if ((how & ~SHUTDOWN_MASK) || !how)
		return -EINVAL;

	lock_sock(sk);
	if (sock->state == SS_CONNECTING) {
		if ((1 << sk->sk_state) &
		    (TCPF_SYN_SENT | TCPF_SYN_RECV | TCPF_CLOSE))
			sock->state = SS_DISCONNECTING;
		else
			sock->state = SS_CONNECTED;
	}

	switch (sk->sk_state) {
	case TCP_CLOSE:
		err = -ENOTCONN;
		WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | how);
		break;
	case TCP_LISTEN:
		if (!(how & RCV_SHUTDOWN))
			break;
		release_sock(sk);
		sdp_listen_stop(sk);
		lock_sock(sk);
		sock->state = SS_UNCONNECTED;
		break;
	case TCP_SYN_SENT:
		sdp_conn_abort(ssk, 0, false);
		sock->state = SS_UNCONNECTED;
		break;
	default:
		WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | how);
		if (how & SEND_SHUTDOWN)
			sdp_shutdown_send(ssk);
		break;
	}
	sk->sk_state_change(sk);
	release_sock(sk);
	return err;
}

/* As tcp_poll(), for what SDP has. */
__poll_t sdp_poll(struct file *file, struct socket *sock, poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	__poll_t mask = 0;
	u8 shutdown;
	int state;

	sock_poll_wait(file, sock, wait);
	if (unlikely(READ_ONCE(ssk->fb_pending)))
		return 0;	/* connecting, by TCP (sdp_fallback.c) */

	state = READ_ONCE(sk->sk_state);
	if (state == TCP_LISTEN)
		return READ_ONCE(ssk->accept_count) ? EPOLLIN | EPOLLRDNORM : 0;

	shutdown = READ_ONCE(sk->sk_shutdown);
	if (shutdown == SHUTDOWN_MASK || state == TCP_CLOSE)
		mask |= EPOLLHUP;
	if (shutdown & RCV_SHUTDOWN)
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;

	if (state != TCP_SYN_SENT && state != TCP_SYN_RECV) {
		int target = sock_rcvlowat(sk, 0, INT_MAX);
		u16 urg_data = READ_ONCE(ssk->urg_data);
		u32 avail = sdp_rx_queued(ssk);

		/* an urgent byte read out of line is not data to read */
		if (unlikely(urg_data) &&
		    READ_ONCE(ssk->urg_seq) == READ_ONCE(ssk->copied_seq) &&
		    !sock_flag(sk, SOCK_URGINLINE))
			target++;
		if (avail && avail >= target)
			mask |= EPOLLIN | EPOLLRDNORM;
		if (urg_data & TCP_URG_VALID)
			mask |= EPOLLPRI;

		if (!(shutdown & SEND_SHUTDOWN)) {
			if (READ_ONCE(ssk->tp)->writable(ssk)) {
				mask |= EPOLLOUT | EPOLLWRNORM;
			} else {
				sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
				set_bit(SOCK_NOSPACE, &sock->flags);
				/* NOSPACE before the recheck, against a
				 * completion freeing a buffer just now
				 * (as tcp_poll())
				 */
				smp_mb__after_atomic();
				if (READ_ONCE(ssk->tp)->writable(ssk))
					mask |= EPOLLOUT | EPOLLWRNORM;
			}
		} else {
			mask |= EPOLLOUT | EPOLLWRNORM;
		}
	}
	if (READ_ONCE(sk->sk_err) ||
	    !skb_queue_empty_lockless(&sk->sk_error_queue))
		mask |= EPOLLERR;
	return mask;
}

/* Not const: .family is filled in at init from the module parameters. */
static struct proto_ops sdp_inet_ops = SDP_PROTO_OPS(AF_INET_SDP, sdp);
static struct proto_ops sdp_inet6_ops = SDP_PROTO_OPS(AF_INET6_SDP, sdp);

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
	struct sock *sk;
	int err;

	if (protocol < 0 || protocol >= IPPROTO_MAX)
		return -EINVAL;
	if (sock->type == SOCK_RAW && protocol == IPPROTO_IP)
		return -EPROTONOSUPPORT;
	if (sock->type != SOCK_STREAM)
		return -ESOCKTNOSUPPORT;
	if (protocol != IPPROTO_IP && protocol != IPPROTO_TCP)
		return -EPROTONOSUPPORT;

	sock->state = SS_UNCONNECTED;
	sock->ops = ops;
	sk = sdp_sk_alloc(net, &sdp_proto, family, kern, sock);
	if (!sk)
		return -ENOMEM;
	err = sdp_sk_attach_id(sk);
	if (err) {
		sock->sk = NULL;
		sk_free(sk);	/* runs sdp_sk_destruct() */
	}
	return err;
}

static int sdp_inet_create(struct net *net, struct socket *sock, int protocol,
			   int kern)
{
	return sdp_create(net, sock, protocol, kern, sdp_af_inet,
			  &sdp_inet_ops);
}

static int sdp_inet6_create(struct net *net, struct socket *sock,
			    int protocol, int kern)
{
	return sdp_create(net, sock, protocol, kern, sdp_af_inet6,
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

/* The family numbers the parameters chose, checked and set in place. */
static int __init sdp_families_set(void)
{
	if (!sdp_family_valid(sdp_af_inet) || !sdp_family_valid(sdp_af_inet6) ||
	    sdp_af_inet == sdp_af_inet6) {
		pr_err("invalid family numbers %d/%d (1..%d, distinct)\n",
		       sdp_af_inet, sdp_af_inet6, NPROTO - 1);
		return -EINVAL;
	}
	sdp_inet_family.family = sdp_af_inet;
	sdp_inet_ops.family = sdp_af_inet;
	sdp_inet6_family.family = sdp_af_inet6;
	sdp_inet6_ops.family = sdp_af_inet6;
	return 0;
}

/* Both families registered, or neither: sockets can be made after. */
static int __init sdp_families_register(void)
{
	int err;

	err = sock_register(&sdp_inet_family);
	if (err) {
		pr_err("family %d is taken (%d)\n", sdp_af_inet, err);
		return err;
	}
	err = sock_register(&sdp_inet6_family);
	if (err) {
		pr_err("family %d is taken (%d)\n", sdp_af_inet6, err);
		sock_unregister(sdp_af_inet);
	}
	return err;
}

static void sdp_families_unregister(void)
{
	sock_unregister(sdp_af_inet6);
	sock_unregister(sdp_af_inet);
}

static int __init sdp_init(void)
{
	int err;

	err = sdp_families_set();
	if (err)
		return err;

	sdp_transport_register(&sdp_rdma_transport);
	sdp_transport_register(&sdp_local_transport);

	err = sdp_local_init();
	if (err)
		return err;

	sdp_wq = alloc_workqueue("ib_sdp", WQ_MEM_RECLAIM, 0);
	if (!sdp_wq) {
		err = -ENOMEM;
		goto err_local;
	}

	err = proto_register(&sdp_proto, 1);
	if (err)
		goto err_wq;

	err = sdp_net_register();
	if (err)
		goto err_proto;

	err = sdp_proc_init();
	if (err)
		goto err_net;

	err = sdp_dev_init();
	if (err)
		goto err_proc;

	err = sdp_diag_init();
	if (err)
		goto err_dev;

	err = sdp_az_init();
	if (err)
		goto err_diag;

	err = sdp_families_register();
	if (err)
		goto err_az;

	err = sdp_inet_init();
	if (err)
		goto err_families;
	return 0;

err_families:
	sdp_families_unregister();
err_az:
	sdp_az_exit();
err_diag:
	sdp_diag_exit();
err_dev:
	sdp_dev_exit();
err_proc:
	sdp_proc_exit();
err_net:
	sdp_net_unregister();
err_proto:
	proto_unregister(&sdp_proto);
err_wq:
	destroy_workqueue(sdp_wq);
err_local:
	sdp_local_exit();
	return err;
}

static void __exit sdp_exit(void)
{
	sdp_inet_exit();
	sdp_families_unregister();
	sdp_az_exit();
	sdp_diag_exit();
	sdp_dev_exit();
	sdp_proc_exit();
	sdp_net_unregister();
	proto_unregister(&sdp_proto);
	destroy_workqueue(sdp_wq);
	sdp_local_exit();
}

module_init(sdp_init);
module_exit(sdp_exit);

MODULE_AUTHOR("The ib_sdp authors");
MODULE_DESCRIPTION("Sockets Direct Protocol: TCP-compatible stream sockets over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(SDP_MODULE_VERSION);
MODULE_ALIAS_NETPROTO(AF_INET_SDP);
MODULE_ALIAS_NETPROTO(AF_INET6_SDP);
/* sock_diag asks for the handler of a family no one has registered */
MODULE_ALIAS_NET_PF_PROTO_TYPE(PF_NETLINK, NETLINK_SOCK_DIAG, AF_INET_SDP);
MODULE_ALIAS_NET_PF_PROTO_TYPE(PF_NETLINK, NETLINK_SOCK_DIAG, AF_INET6_SDP);
