// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the transports' table, and what the socket core asks of all of
 * them.
 *
 * Each transport registers its operations (struct sdp_transport, sdp.h)
 * when the module loads (sdp_transport_register(), before any socket
 * exists; never removed while one does).  The first registered (RDMA)
 * carries the empty connection of a socket that has not connected and
 * every connect() no other transport claims; each later one claims what
 * it reaches (the local transport: an address of this host), asked newest
 * first.  bind(), listen() and release_cb ask every transport that has a
 * part in them.  The table is written only at load, so it is read with
 * no lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "sdp.h"

#define SDP_TRANSPORTS	2

static const struct sdp_transport *sdp_transports[SDP_TRANSPORTS];
static int sdp_ntransports;

/**
 * sdp_transport_register - a transport is ready to carry connections
 * @tp: its operations, which live as long as the module
 *
 * Module init, before the socket families are registered.
 */
void sdp_transport_register(const struct sdp_transport *tp)
{
	if (WARN_ONCE(sdp_ntransports == SDP_TRANSPORTS,
		      "no room for transport %s\n", tp->name))
		return;
	sdp_transports[sdp_ntransports++] = tp;
}

/**
 * sdp_transports_sock_init - a new socket: each transport sets up what it
 *	keeps in it
 * @ssk: the socket
 *
 * Return: the transport of the socket's first, empty, connection.
 */
const struct sdp_transport *sdp_transports_sock_init(struct sdp_sock *ssk)
{
	const struct sdp_transport *tp;
	int i;

	for (i = 0; i < sdp_ntransports; i++) {
		tp = sdp_transports[i];
		if (tp->sock_init)
			tp->sock_init(ssk);
	}
	return sdp_transports[0];
}

/* proto.release_cb: called by release_sock() with the socket spinlock held
 * while the process still owns the socket.
 */
void sdp_release_cb(struct sock *sk)
{
	const struct sdp_transport *tp;
	int i;

	for (i = 0; i < sdp_ntransports; i++) {
		tp = sdp_transports[i];
		if (tp->release)
			tp->release(sdp_sk(sk));
	}
}

/**
 * sdp_transport_for - which transport carries a connect() to @dst
 * @net: the socket's namespace
 * @dst: the destination (a claim may rewrite an unspecified address)
 *
 * Return: the transport, or NULL if none can reach @dst.
 */
const struct sdp_transport *sdp_transport_for(struct net *net,
					      struct sockaddr_storage *dst)
{
	const struct sdp_transport *tp;
	int i;

	for (i = sdp_ntransports - 1; i > 0; i--) {
		tp = sdp_transports[i];
		if (tp->claims && tp->claims(net, dst))
			return tp;
	}
	tp = sdp_transports[0];
	return !tp->claims || tp->claims(net, dst) ? tp : NULL;
}

/* bind(): 0, or the first transport's -EADDRINUSE. */
int sdp_transports_bind_check(struct sdp_sock *ssk,
			      const struct sockaddr_storage *addr)
{
	const struct sdp_transport *tp;
	int i, err;

	sdp_assert_locked(ssk);

	for (i = 0; i < sdp_ntransports; i++) {
		tp = sdp_transports[i];
		err = tp->bind_check ? tp->bind_check(ssk, addr) : 0;
		if (err)
			return err;
	}
	return 0;
}

/* listen(): every transport takes the listener's connections, or none. */
int sdp_transports_listen(struct sdp_sock *ssk)
{
	const struct sdp_transport *tp;
	int i, err;

	sdp_assert_locked(ssk);

	for (i = 0; i < sdp_ntransports; i++) {
		tp = sdp_transports[i];
		err = tp->listen ? tp->listen(ssk) : 0;
		if (err) {
			while (i--)
				if (sdp_transports[i]->unlisten)
					sdp_transports[i]->unlisten(ssk);
			return err;
		}
	}
	return 0;
}

void sdp_transports_unlisten(struct sdp_sock *ssk)
{
	const struct sdp_transport *tp;
	int i;

	sdp_assert_locked(ssk);

	for (i = 0; i < sdp_ntransports; i++) {
		tp = sdp_transports[i];
		if (tp->unlisten)
			tp->unlisten(ssk);
	}
}

/* rdma_cm's handler of every id of a socket (sdp_cm_create_id()). */
int sdp_transports_cm_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	const struct sdp_transport *tp;
	int i;

	for (i = 0; i < sdp_ntransports; i++) {
		tp = sdp_transports[i];
		if (tp->cm_event)
			return tp->cm_event(id, ev);
	}
	return 0;
}
