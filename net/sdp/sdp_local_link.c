// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the link of a local connection, the floor under the local
 * transport's data and sink code (sdp_local.c makes links).
 *
 * struct sdp_local_link (sdp_local.h) joins the two ends of a local
 * connection; each connection holds one reference, and the link's lock (a
 * leaf) guards each end's socket pointer, which the end's teardown
 * clears.  Nothing here calls the rest of the transport: to make a socket
 * take what its inbox holds, sdp_local_kick() runs the socket's release
 * callback as release_sock() would, which reaches the local transport's
 * ->release().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "sdp.h"
#include "sdp_local.h"

/* Drop a connection's reference to its link. */
void sdp_local_link_put(struct sdp_local_link *link)
{
	if (refcount_dec_and_test(&link->ref))
		kfree(link);
}

/**
 * sdp_local_peer_get - the socket at the other end, held
 * @ssk: the socket, locked, with a local connection
 *
 * Return: the peer, to sock_put(); NULL once its end is torn down.
 */
struct sdp_sock *sdp_local_peer_get(struct sdp_sock *ssk)
{
	struct sdp_local_link *link = ssk->conn->link;
	struct sdp_sock *peer;

	sdp_assert_locked(ssk);

	spin_lock_bh(&link->lock);
	peer = link->end[!ssk->conn->side].ssk;
	if (peer)
		sock_hold(&peer->sk);
	spin_unlock_bh(&link->lock);
	return peer;
}

/**
 * sdp_local_kick - make a socket take what its inbox holds
 * @ssk: the socket, held, not locked by the caller
 *
 * At once if no process owns it, else when its owner releases it
 * (sdp_release_cb()).
 */
void sdp_local_kick(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	local_bh_disable();
	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk))
		sdp_release_cb(sk);	/* ->release(): sdp_local_apply() */
	bh_unlock_sock(sk);
	local_bh_enable();
}
