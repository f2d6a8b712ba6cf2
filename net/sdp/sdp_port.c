// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the port space: a socket's rdma_cm ids as its place among the
 * host's SDP ports.
 *
 * Every SDP socket owns one rdma_cm_id in the RDMA_PS_TCP port space,
 * created with the socket in the socket's network namespace: bind() is
 * rdma_bind_addr() (sdp_bind_id()), listen() rdma_listen()
 * (sdp_listen.c), whichever transport then carries the connections.  The
 * port space is rdma_cm's, separate from TCP's, so an SDP and a TCP
 * socket may use the same port (not on iWARP, where the device puts the
 * port on a TCP socket).  An address no RDMA device has is held as a
 * wildcard bind (SDP_F_LOCAL_BIND); each transport's ->bind_check() says
 * whether its listeners leave the port free.  An id used by a connection
 * attempt or a listen is replaced by a fresh one, bound as the old was,
 * before the socket connects or listens again (sdp_renew_id()).  The
 * ids' events go to the transport that takes them (->cm_event()).
 *
 * Locks: the socket lock; rdma_destroy_id() is never called under it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/tcp_states.h>

#include "sdp.h"

/**
 * sdp_addr_snapshot - copy the id's addresses into the socket
 * @ssk: the socket, locked, with an id
 */
void sdp_addr_snapshot(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id = ssk->cm_id;

	sdp_assert_locked(ssk);

	if (!id || test_bit(SDP_F_LOCAL_CONN, &ssk->flags))
		return;
	/* bound to an address no RDMA device has: the id holds a wildcard;
	 * bound into an SO_REUSEPORT group: its id holds the port
	 */
	if (!test_bit(SDP_F_LOCAL_BIND, &ssk->flags) && !ssk->rport)
		memcpy(&ssk->local, &id->route.addr.src_addr,
		       sizeof(ssk->local));
	memcpy(&ssk->peer, &id->route.addr.dst_addr, sizeof(ssk->peer));
}

/**
 * sdp_cm_create_id - create the rdma_cm_id a socket connects through
 * @sk: the socket; its namespace is the id's namespace
 *
 * Return: the new id or an ERR_PTR.
 */
struct rdma_cm_id *sdp_cm_create_id(struct sock *sk)
{
	return rdma_create_id(sock_net(sk), sdp_transports_cm_event, sk,
			      RDMA_PS_TCP, IB_QPT_RC);
}

/* rdma_cm reports a port taken by a wildcard bind (or a bind to a
 * specific address when the port has a wildcard one) as EADDRNOTAVAIL,
 * and running out of ports too; TCP says EADDRINUSE for all of them.
 * Called once the address itself is known to be local, so EADDRNOTAVAIL
 * can only mean the port.
 */
int sdp_bind_errno(int err)
{
	return err == -EADDRNOTAVAIL ? -EADDRINUSE : err;
}

/* Does a socket on the IPv6 wildcard take IPv4 connections too?  An
 * AF_INET6_SDP socket unless IPV6_V6ONLY; an AF_INET_SDP socket given a
 * sockaddr_in6 as the system's default says (net.ipv6.bindv6only).
 */
bool sdp_v6_dual(struct sdp_sock *ssk)
{
	if (sdp_family_v6(&ssk->sk))
		return !ssk->v6only;
#if IS_ENABLED(CONFIG_IPV6)
	return !READ_ONCE(sock_net(&ssk->sk)->ipv6.sysctl.bindv6only);
#else
	return false;
#endif
}

/**
 * sdp_bind_id - bind the socket's id to @addr
 * @ssk: the socket, locked
 * @id: its id, not bound
 * @addr: a local address (sdp_addr_local())
 *
 * An address of this host that no RDMA device has (127.0.0.1, an address
 * of a plain Ethernet interface) serves local connections only: the id
 * holds the port as a wildcard, the socket keeps the address
 * (SDP_F_LOCAL_BIND).
 *
 * Return: 0 or a negative errno, as TCP's bind() would say it.
 */
int sdp_bind_id(struct sdp_sock *ssk, struct rdma_cm_id *id,
		struct sockaddr_storage *addr)
{
	struct sockaddr_storage any = { .ss_family = addr->ss_family };
	int err;

	sdp_assert_locked(ssk);

	/* a listener's port, which rdma_cm does not know of if only local
	 * connections come to it (the local transport's ->bind_check())
	 */
	if (((struct sockaddr_in *)addr)->sin_port) {
		err = sdp_transports_bind_check(ssk, addr);
		if (err)
			return err;
	}
	if (ssk->sk.sk_reuse)
		rdma_set_reuseaddr(id, 1);
	/* which ports it shares with the other family, as inet6_bind() */
	rdma_set_afonly(id, addr->ss_family != AF_INET6 || !sdp_v6_dual(ssk));
	__clear_bit(SDP_F_LOCAL_BIND, &ssk->flags);
	err = rdma_bind_addr(id, (struct sockaddr *)addr);
	if (err != -ENODEV || !READ_ONCE(sdp_local))
		return sdp_bind_errno(err);

	((struct sockaddr_in *)&any)->sin_port =
		((struct sockaddr_in *)addr)->sin_port;
	err = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (err)
		return sdp_bind_errno(err);
	__set_bit(SDP_F_LOCAL_BIND, &ssk->flags);
	memcpy(&ssk->local, addr, sizeof(ssk->local));
	((struct sockaddr_in *)&ssk->local)->sin_port =
		((struct sockaddr_in *)&id->route.addr.src_addr)->sin_port;
	return 0;
}

/* Called locked: give the socket a fresh id if its id was used by a
 * connection attempt or a listen, or taken by the removal of its device,
 * keeping the bound address.  Drops the lock for a while: on return, the
 * socket has an unused id, whatever other threads did meanwhile.
 */
int sdp_renew_id(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *old, *id;
	struct sockaddr_storage addr;
	bool bound;
	int err;

again:
	if (ssk->cm_id && !test_bit(SDP_F_ID_USED, &ssk->flags))
		return 0;

	if (test_bit(SDP_F_CONN, &ssk->flags)) {
		/* the last connection is still being torn down */
		release_sock(sk);
		flush_work(&ssk->teardown_work);
		lock_sock(sk);
		if (test_bit(SDP_F_CONN, &ssk->flags))
			return -EALREADY;
	}
	old = ssk->cm_id;
	bound = test_bit(SDP_F_BOUND, &ssk->flags);
	memcpy(&addr, &ssk->local, sizeof(addr));	/* sdp_addr_snapshot() */
	ssk->cm_id = NULL;
	release_sock(sk);
	if (old)
		rdma_destroy_id(old);
	id = sdp_cm_create_id(sk);
	lock_sock(sk);

	if (IS_ERR(id))
		return PTR_ERR(id);
	if (ssk->cm_id) {
		/* another thread renewed it meanwhile: ours goes, and theirs
		 * is looked at again, for by the time we have the lock back
		 * a third may have used it, or be renewing it (NULL)
		 */
		release_sock(sk);
		rdma_destroy_id(id);
		lock_sock(sk);
		goto again;
	}
	ssk->cm_id = id;
	sdp_id_options(ssk, id);
	__clear_bit(SDP_F_ID_USED, &ssk->flags);
	__clear_bit(SDP_F_BOUND, &ssk->flags);
	if (bound && ssk->rport) {
		__set_bit(SDP_F_BOUND, &ssk->flags);	/* the group's id */
	} else if (bound) {
		err = sdp_bind_id(ssk, id, &addr);
		if (err)
			return err;
		__set_bit(SDP_F_BOUND, &ssk->flags);
	}
	return 0;
}

/**
 * sdp_id_options - give a new rdma_cm_id the socket's IP-level options
 * @ssk: the socket, locked
 * @id: its id, not yet bound
 */
void sdp_id_options(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	u8 tos = ssk->v6 ? ssk->tclass : ssk->tos;

	sdp_assert_locked(ssk);

	if (tos)
		rdma_set_service_type(id, tos);
	if (sdp_family_v6(&ssk->sk))
		rdma_set_afonly(id, ssk->v6only);
}
