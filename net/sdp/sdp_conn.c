// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: a socket's connection (struct sdp_conn).
 *
 * Objects.  A socket always has one struct sdp_conn, ssk->conn: an empty
 * one from its creation (sdp_conn_init()), and a fresh one for each
 * connection, which the transport that carries it allocates
 * (sdp_conn_alloc()) and puts in place of the last (sdp_conn_install()).
 * ssk->tp is the transport of ssk->conn.  A connection is kref'd: the
 * socket holds its current one, and a thread that sleeps while it uses
 * one holds that one (sdp_conn_get()).  The last reference frees it, and
 * with it what its transport keeps there (->conn_free()).
 *
 * Transports (sdp_transport.c).  The first registered carries the empty
 * connection of a socket that has not connected.  The socket core
 * reaches a transport only through its operations.
 *
 * Locks.  ssk->conn and ssk->tp change under the socket lock
 * (sdp_conn_install()); poll() and sock_diag read ssk->tp without it
 * (READ_ONCE()): that is why the socket keeps its own copy of conn->tp,
 * a static table, where a lockless reader could not follow ssk->conn.
 * proto.release_cb (sdp_release_cb(), sdp_transport.c) runs with the
 * socket spinlock held while the process still owns the socket: each
 * transport's ->release() handles there what arrived for it meanwhile.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "sdp.h"

/**
 * sdp_conn_alloc - a new, empty connection: no QP, no buffers
 * @ssk: the socket it will belong to
 * @tp: the transport that will carry it (frees what it keeps in it)
 *
 * Return: the connection, holding one reference, or NULL.
 */
struct sdp_conn *sdp_conn_alloc(struct sdp_sock *ssk,
				const struct sdp_transport *tp)
{
	struct sdp_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL_ACCOUNT);

	if (!conn)
		return NULL;
	kref_init(&conn->ref);
	conn->ssk = ssk;
	conn->tp = tp;
	INIT_LIST_HEAD(&conn->rx_early);
	INIT_LIST_HEAD(&conn->rx_queue);
	INIT_LIST_HEAD(&conn->rx_resize);
	INIT_LIST_HEAD(&conn->tx_free);
	INIT_LIST_HEAD(&conn->tx_queue);
	INIT_LIST_HEAD(&conn->ctrl_free);
	return conn;
}

/* The last reference: torn down already, so nothing is mapped or posted. */
static void sdp_conn_free(struct kref *ref)
{
	struct sdp_conn *conn = container_of(ref, struct sdp_conn, ref);

	conn->tp->conn_free(conn);
	kfree(conn);
}

/**
 * sdp_conn_get - hold the socket's connection across a sleep
 * @ssk: the socket, locked
 *
 * A thread that releases the socket lock while it still uses the
 * connection (pointers into its rings or ZCopy state) holds it: a new
 * connection of the same socket replaces ssk->conn meanwhile, never the
 * memory under the sleeper.
 *
 * Return: the connection, with a reference for sdp_conn_put().
 */
struct sdp_conn *sdp_conn_get(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	kref_get(&ssk->conn->ref);
	return ssk->conn;
}

/* Drop a reference; the socket locked (or being destroyed). */
void sdp_conn_put(struct sdp_conn *conn)
{
	kref_put(&conn->ref, sdp_conn_free);
}

/**
 * sdp_conn_install - a new connection replaces the socket's last, done
 * @ssk: the socket, locked
 * @conn: from sdp_conn_alloc(); the socket takes its reference, and
 *	its transport carries the socket from now on
 */
void sdp_conn_install(struct sdp_sock *ssk, struct sdp_conn *conn)
{
	sdp_assert_locked(ssk);
	sdp_conn_put(ssk->conn);
	ssk->conn = conn;
	WRITE_ONCE(ssk->tp, conn->tp);
	/* a new stream */
	WRITE_ONCE(ssk->rcv_nxt, 0);
	WRITE_ONCE(ssk->copied_seq, 0);
	WRITE_ONCE(ssk->urg_data, 0);
	WRITE_ONCE(ssk->tx_nfree, 0);
	WRITE_ONCE(ssk->tx_queued, 0);
	WRITE_ONCE(ssk->tx_inflight_bytes, 0);
	WRITE_ONCE(ssk->zc_src_count, 0);
	WRITE_ONCE(ssk->zc_src_bytes, 0);
	__clear_bit(SDP_F_ZC_HURRY, &ssk->flags);
}

/* At socket creation: the socket's first, empty, connection. */
int sdp_conn_init(struct sdp_sock *ssk)
{
	sdp_close_init(ssk);
	sdp_timers_init(ssk);
	ssk->tp = sdp_transports_sock_init(ssk);
	ssk->conn = sdp_conn_alloc(ssk, ssk->tp);
	return ssk->conn ? 0 : -ENOMEM;
}
