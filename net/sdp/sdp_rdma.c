// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the RDMA transport's connection and its operations
 * (sdp_rdma_transport).
 *
 * sdp_conn_create() makes a fresh struct sdp_conn (sdp_conn.c) for a
 * connection the RDMA transport carries and puts it in place of the
 * socket's last.  On the verbs resources of sdp_verbs.c it owns one RC
 * QP, a share of a CQ from the device's CQ pool for both its queues
 * (polled in softirq context), a ring of receive buffers, send buffers
 * allocated as sends need them (sdp_mem.c) and a few header-only control
 * buffers, DMA-mapped while they have memory.  Every buffer is a struct
 * sdp_buf with its own ib_cqe, so a completion leads straight to its
 * buffer.  The last reference frees the rings and ZCopy state
 * (sdp_rdma_conn_free()).
 *
 * Completions run sdp_cq_done() (sdp_verbs.c) in softirq context.  Under
 * bh_lock_sock() it hands the buffer to sdp_buf_complete() (the
 * connection's ->buf_done) at once, or, when a process owns the socket,
 * puts it on ->backlog, which sdp_rdma_release() empties in order before the
 * owner lets go: completions are therefore handled in the order they
 * arrive, always under the socket lock, never concurrently.
 *
 * Teardown (sdp_conn_teardown(), sdp_close.c, calls sdp_rdma_teardown())
 * runs in process context without the socket lock: ib_drain_qp() (whose
 * flushed completions still pass through sdp_cq_done()),
 * rdma_disconnect(), then sdp_conn_free_verbs() releases the QP, the CQ
 * share, the DMA mappings and the PD.  The buffers' memory stays with the
 * connection until it is replaced or the socket freed, so data received
 * before the teardown can still be read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <uapi/linux/sdp_diag.h>

#include "sdp.h"

/* A signaled send work request completed (or was flushed). */
static void sdp_sq_done(struct sdp_conn *conn, struct sdp_buf *buf)
{
	if (conn->tx_wrs)
		conn->tx_wrs--;
	if (buf->status == IB_WC_SUCCESS)
		conn->tx_wr_stamp = jiffies;
}

static void sdp_buf_complete(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	if (buf->kind != SDP_BUF_RX)
		sdp_sq_done(ssk->conn, buf);
	switch (buf->kind) {
	case SDP_BUF_RX:
		sdp_rx_complete(ssk, buf);
		break;
	case SDP_BUF_PROBE:
		sdp_tx_status(ssk, buf);
		sdp_ka_complete(ssk, buf);
		break;
	case SDP_BUF_ZC_REG:
	case SDP_BUF_ZC_RW:
		sdp_zc_complete(ssk, buf);
		break;
	case SDP_BUF_RG:
		sdp_tx_status(ssk, buf);
		sdp_rg_batch_done(ssk, buf);
		break;
	default:
		sdp_tx_complete(ssk, buf);
		break;
	}
}

/* The RDMA transport's release: the completions that came while a process
 * owned the socket, in the order they came.
 */
static void sdp_rdma_release(struct sdp_sock *ssk)
{
	struct sdp_buf *buf;

	while (!list_empty(&ssk->backlog)) {
		buf = list_first_entry(&ssk->backlog, struct sdp_buf, list);
		list_del_init(&buf->list);
		sdp_buf_complete(ssk, buf);
	}
}

/* The rings of a connection that failed to set up: nothing is mapped or
 * received.
 */
static void sdp_bufs_free(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	sdp_ring_free(ssk, &conn->rx_ring, sdp_rx_ring_size(conn));
	sdp_tx_bufs_free(ssk, conn);
	sdp_ring_free(ssk, &conn->ctrl_ring, SDP_CTRL_BUFS);
	INIT_LIST_HEAD(&conn->ctrl_free);
	WRITE_ONCE(ssk->tx_nfree, 0);
}

static void sdp_bufs_unmap(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct ib_device *dev = conn->sdev->ibdev;

	sdp_ring_unmap(dev, conn->rx_ring, sdp_rx_ring_size(conn),
		       DMA_FROM_DEVICE);
	sdp_tx_bufs_unmap(ssk);
	sdp_ring_unmap(dev, conn->ctrl_ring, SDP_CTRL_BUFS, DMA_TO_DEVICE);
}

/* Ring sizes from the module parameters, or from SO_RCVBUF / SO_SNDBUF
 * when the application set them.  Buffer sizes change later (sdp_mem.c).
 */
static void sdp_conn_size(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;

	conn->rcv_size = clamp_t(u32, READ_ONCE(rcvbuf_initial_size),
				 SDP_MIN_BUF_SIZE, SDP_MAX_BUF_SIZE);
	conn->rcv_size_min = conn->rcv_size;
	conn->rcv_acked = conn->rcv_size;
	conn->rx_size = clamp_t(u32, READ_ONCE(sdp_rx_size), SDP_MIN_BUFS,
				SDP_MAX_BUFS);
	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK)
		conn->rx_size = clamp_t(u32, sk->sk_rcvbuf / conn->rcv_size,
					SDP_MIN_BUFS, conn->rx_size);
	conn->tx_size = SDP_TX_SIZE;
	if (sk->sk_userlocks & SOCK_SNDBUF_LOCK)
		conn->tx_size = clamp_t(u32, sk->sk_sndbuf / conn->rcv_size, 2,
					SDP_TX_SIZE);
}

static int sdp_bufs_create(struct sdp_sock *ssk, struct ib_device *dev)
{
	struct sdp_conn *conn = ssk->conn;
	struct mem_cgroup *old = set_active_memcg(ssk->memcg);
	u32 i;
	int err;

	err = sdp_ring_alloc(ssk, &conn->rx_ring, sdp_rx_ring_size(conn),
			     conn->rcv_size);
	if (!err)
		err = sdp_ring_alloc(ssk, &conn->ctrl_ring, SDP_CTRL_BUFS,
				     SDP_CTRL_SIZE);
	if (!err)
		err = sdp_ring_map(dev, conn->rx_ring, sdp_rx_ring_size(conn),
				   DMA_FROM_DEVICE);
	if (!err)
		err = sdp_ring_map(dev, conn->ctrl_ring, SDP_CTRL_BUFS,
				   DMA_TO_DEVICE);
	set_active_memcg(old);
	if (err)
		return err;

	for (i = 0; i < sdp_rx_ring_size(conn); i++)
		sdp_buf_init(ssk, &conn->rx_ring[i], SDP_BUF_RX);
	/* send buffers come as sends need them (sdp_tx_buf_take()) */
	for (i = 0; i < SDP_CTRL_BUFS; i++) {
		sdp_buf_init(ssk, &conn->ctrl_ring[i], SDP_BUF_CTRL);
		list_add_tail(&conn->ctrl_ring[i].list, &conn->ctrl_free);
	}
	return 0;
}

/**
 * sdp_conn_create - create the QP, CQ and buffers of a connection
 * @ssk: the socket, locked
 * @id: its rdma_cm_id, whose device is known (route resolved, or a
 *	connection request)
 *
 * Posts every receive buffer, so that the Hello or HelloAck may advertise
 * them all.  Takes the connection's reference on the socket.
 *
 * Return: 0 or a negative errno; on failure nothing is left allocated.
 */
int sdp_conn_create(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sdp_conn *conn;
	int err;
	u32 i;

	sdp_assert_locked(ssk);

	if (WARN_ON_ONCE(test_bit(SDP_F_CONN, &ssk->flags)))
		return -EBUSY;
	/* a fresh one, all zero */
	conn = sdp_conn_alloc(ssk, &sdp_rdma_transport);
	if (!conn)
		return -ENOMEM;
	conn->buf_done = sdp_buf_complete;
	sdp_buf_init(ssk, &conn->ka_buf, SDP_BUF_PROBE);
	sdp_conn_install(ssk, conn);

	conn->sdev = sdp_dev_get(id->device);
	if (!conn->sdev)
		return -ENODEV;
	conn->iwarp = rdma_protocol_iwarp(id->device, id->port_num);
	/* a PD of its own: its keys work on this connection only */
	conn->pd = ib_alloc_pd(conn->sdev->ibdev, 0);
	if (IS_ERR(conn->pd)) {
		err = PTR_ERR(conn->pd);
		conn->pd = NULL;
		goto err_dev;
	}

	sdp_conn_size(ssk);
	conn->regions = ssk->regions;	/* its queue pair's room */
	err = sdp_bufs_create(ssk, conn->sdev->ibdev);
	if (err)
		goto err_bufs;
	err = sdp_qp_create(ssk, id);
	if (err)
		goto err_bufs;

	conn->st.last_recv = jiffies;
	for (i = 0; i < sdp_rx_ring_size(conn); i++) {
		err = sdp_post_recv(conn, &conn->rx_ring[i]);
		if (err)
			goto err_qp;
	}
	conn->adv_bufs = sdp_rx_adv(conn);

	__set_bit(SDP_F_CONN, &ssk->flags);
	__clear_bit(SDP_F_TEARDOWN, &ssk->flags);
	sock_hold(&ssk->sk);	/* the connection's; put in sdp_conn_teardown() */
	return 0;

err_qp:
	/* The CQ is shared: the posted receives' flushes must have run
	 * before their buffers go.
	 */
	ib_drain_qp(conn->qp);
	rdma_destroy_qp(id);
	conn->qp = NULL;
	ib_cq_pool_put(conn->cq, conn->cq_size);
	conn->cq = NULL;
err_bufs:
	sdp_bufs_unmap(ssk);
	sdp_bufs_free(ssk);
err_dev:
	sdp_pd_release(conn);
	return err;
}

/**
 * sdp_post_zero_read - post a zero-length RDMA READ, signaled
 * @ssk: the socket, locked, connected
 * @buf: its completion's buffer (no data)
 *
 * On iWARP a send or a WRITE completes once the local TCP has it; a READ
 * completes only when the peer's answer came back, which it sends after
 * everything posted before it was placed: the keepalive probe there.  It
 * needs no key (it moves no byte) and no credit.
 *
 * Return: 0 or the post's negative errno.
 */
int sdp_post_zero_read(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct ib_sge sge = { .lkey = conn->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe		= &buf->cqe,
			.sg_list	= &sge,
			.num_sge	= 1,	/* iWARP's READ takes one */
			.opcode		= IB_WR_RDMA_READ,
			.send_flags	= IB_SEND_SIGNALED,
		},
	};
	int err;

	sdp_assert_locked(ssk);

	err = sdp_qp_post_send(conn->qp, &wr.wr, NULL);
	if (!err)
		sdp_sq_posted(ssk);
	return err;
}

/**
 * sdp_conn_free_verbs - release a drained connection's verbs resources
 * @ssk: the socket, locked, its QP drained
 * @id: its rdma_cm_id
 *
 * The QP, the CQ share, the buffers' mappings (their memory stays with
 * the connection, for data not yet read), the PD and the device.
 */
void sdp_conn_free_verbs(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sdp_conn *conn = ssk->conn;

	sdp_assert_locked(ssk);

	rdma_destroy_qp(id);
	conn->qp = NULL;
	ib_cq_pool_put(conn->cq, conn->cq_size);
	conn->cq = NULL;
	sdp_bufs_unmap(ssk);
	sdp_pd_release(conn);
}

/* The RDMA transport's part of freeing a connection: torn down already,
 * so nothing is mapped or posted.
 */
static void sdp_rdma_conn_free(struct sdp_conn *conn)
{
	struct sdp_sock *ssk = conn->ssk;

	sdp_rx_queue_free(conn);	/* what the ring does not free */
	sdp_ring_free(ssk, &conn->rx_ring, conn->rx_size + SDP_CTRL_BUFS);
	sdp_tx_bufs_free(ssk, conn);
	sdp_ring_free(ssk, &conn->ctrl_ring, SDP_CTRL_BUFS);
	sdp_rg_free(conn);
	kvfree(conn->zc);
}

/* The RDMA transport's reset: an Abort, once our keys are dead (it is
 * fenced behind their invalidation).
 */
static void sdp_rdma_reset(struct sdp_sock *ssk)
{
	sdp_zc_revoke(ssk);
	sdp_send_ctrl(ssk, SDP_MID_ABORT, 0);
}

/* Before the QP goes to error: the sends already posted, an Abort among
 * them, go out first, or draining would flush them unsent (6.12's rxe
 * sends from a workqueue, so one posted just before is still queued
 * there).  Only while they make progress: once SDP_TEARDOWN_IDLE_MS pass
 * without a send completing (a stalled peer or wire), or
 * SDP_TEARDOWN_SETTLE_MS in all, the drain goes ahead.
 */
static void sdp_rdma_tx_settle(struct sdp_sock *ssk)
{
	unsigned long idle = msecs_to_jiffies(SDP_TEARDOWN_IDLE_MS);
	unsigned long end = jiffies + msecs_to_jiffies(SDP_TEARDOWN_SETTLE_MS);
	unsigned long seen = jiffies, stamp;
	struct sdp_conn *conn = ssk->conn;	/* the teardown's, till freed */
	struct sock *sk = &ssk->sk;
	u32 wrs;

	for (;;) {
		lock_sock(sk);
		wrs = conn->tx_wrs;
		stamp = conn->tx_wr_stamp;
		release_sock(sk);	/* completions on the backlog run */
		if (time_after(stamp, seen))
			seen = stamp;
		if (!wrs || time_after(jiffies, end) ||
		    time_after(jiffies, seen + idle))
			return;
		usleep_range(200, 1000);
	}
}

/**
 * sdp_rdma_teardown - the RDMA transport's teardown
 * @ssk: the socket, not locked, SDP_F_TEARDOWN set; returns it locked
 *
 * The sends posted go out (sdp_rdma_tx_settle()), then the QP goes to
 * error and is drained (no traffic), our ZCopy keys are
 * deregistered, and only then is the peer told: it may hold a key, and
 * another connection of ours on the same device (same PD) to use it
 * with.  The id cannot go away meanwhile: its owner destroys it only once
 * SDP_F_CONN is clear, and rdma_cm only when the handler says so, after
 * this.
 */
static void sdp_rdma_teardown(struct sdp_sock *ssk)
	__acquires(&ssk->sk)
{
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id;

	lock_sock(sk);
	id = ssk->cm_id;
	release_sock(sk);
	sdp_rdma_tx_settle(ssk);
	ib_drain_qp(ssk->conn->qp);
	lock_sock(sk);
	sdp_zc_teardown(ssk);	/* deregisters the MRs before the pages go */
	sdp_rg_teardown(ssk);	/* likewise the regions' */
	release_sock(sk);
	rdma_disconnect(id);
	lock_sock(sk);
	__acquire(&ssk->sk);	/* sparse: lock_sock() is not annotated */
	sdp_conn_free_verbs(ssk, id);
}

/* A new socket: what the RDMA transport keeps in it. */
static void sdp_rdma_sock_init(struct sdp_sock *ssk)
{
	sdp_mem_init(ssk);
	sdp_zc_init(ssk);
	INIT_LIST_HEAD(&ssk->backlog);
}

/* Post the probe: a zero-length RDMA WRITE needs no remote buffer or key
 * (IBTA C9-88) and no credit, yet the peer's device must acknowledge it.
 * On iWARP a WRITE completes once the local TCP has it; there the probe
 * is a ChRcvBuf (sdp_tx_ping()), which the peer's ChRcvBufAck answers,
 * as any message from it does (sdp_rx.c).  Not a zero-length READ:
 * Soft-iWARP answers one that finds its send side busy with the length
 * and data of its last send, and the connection dies of the mismatch (a
 * TERMINATE).  That READ is left for a peer without ChRcvBuf, and then
 * not while the peer is sending for us (our READ's completion answers
 * instead, sdp_zc_complete()).
 */
static int sdp_rdma_probe(struct sdp_sock *ssk)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe		= &ssk->conn->ka_buf.cqe,
			.opcode		= IB_WR_RDMA_WRITE,
			.send_flags	= IB_SEND_SIGNALED,
		},
	};
	int err;

	if (test_bit(SDP_F_KA_PROBE, &ssk->flags))
		return 0;	/* the last one is still unanswered */
	if (ssk->conn->iwarp) {
		err = sdp_tx_ping(ssk);
		if (!err) {
			SDP_INC_STATS(sock_net(&ssk->sk),
				      SDP_MIB_KEEPALIVE_PROBES);
			return 0;
		}
		if (sdp_zc_peer_busy(ssk))
			return 0;
		err = sdp_post_zero_read(ssk, &ssk->conn->ka_buf);
	} else {
		err = sdp_qp_post_send(ssk->conn->qp, &wr.wr, NULL);
		if (!err)
			sdp_sq_posted(ssk);
	}
	if (!err) {
		__set_bit(SDP_F_KA_PROBE, &ssk->flags);
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_KEEPALIVE_PROBES);
	}
	return err;
}

/* The probe's completion: the peer's device answered, or the transport
 * gave up on it (sdp_tx_complete() has then failed the connection).
 */
void sdp_ka_complete(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	__clear_bit(SDP_F_KA_PROBE, &ssk->flags);
	if (buf->status == IB_WC_SUCCESS) {
		ssk->conn->ka_probes = 0;
		ssk->conn->st.last_recv = jiffies;
	}
}

/* sk_write_space: wake writers once enough room is free, as TCP does
 * (sdp_tx_wake_due()), or when memory came back for one that waited for
 * it.
 */
static bool sdp_rdma_wake_due(const struct sdp_sock *ssk)
{
	return sdp_tx_wake_due(ssk) ||
	       test_bit(SDP_F_TX_MEM_WAIT, &ssk->flags);
}

const struct sdp_transport sdp_rdma_transport = {
	.name		= "rdma",
	.sendmsg	= sdp_rdma_sendmsg,
	.sink		= sdp_rdma_sink,
	.send_page	= sdp_zc_page_add,
	.read_remote	= sdp_zc_recv,
	.reader_done	= sdp_zc_rx_done,
	.quiesce	= sdp_zc_quiesce,
	.rx_done	= sdp_rdma_rx_done,
	.rx_purge	= sdp_rdma_rx_purge,
	.flush		= sdp_rdma_flush,
	.reset		= sdp_rdma_reset,
	.teardown	= sdp_rdma_teardown,
	.writable	= sdp_writable,
	.wake_due	= sdp_rdma_wake_due,
	.info		= sdp_rdma_info,
	.probe		= sdp_rdma_probe,
	.diag_kind	= SDP_DIAG_TP_RDMA,
	.sock_init	= sdp_rdma_sock_init,
	.release	= sdp_rdma_release,
	.conn_free	= sdp_rdma_conn_free,
	.claims		= sdp_rdma_claims,
	.connect	= sdp_rdma_connect,
	.answer		= sdp_rdma_answer,
	.refuse		= sdp_rdma_refuse,
	.cm_event	= sdp_cm_handler,
	.region_reg	= sdp_rg_reg,
	.region_dereg	= sdp_rg_dereg,
	.region_close	= sdp_rg_close,
	.rdma_op	= sdp_rg_op,
};
