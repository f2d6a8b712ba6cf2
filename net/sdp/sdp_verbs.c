// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the verbs ground floor of the RDMA transport: a connection's
 * rings of buffers, its QP on a share of a device CQ, its PD, and
 * posting to its queues.
 *
 * Objects: the struct sdp_buf rings of a struct sdp_conn (rx_ring,
 * ctrl_ring), its QP, CQ share and PD (conn->qp, ->cq, ->pd, ->sdev).
 * Every buffer's completion comes to sdp_cq_done(), which hands it to
 * the connection's ->buf_done() (what it means is the transport's,
 * sdp_rdma.c): nothing here calls above this file but rdma_cm and the
 * verbs, and it keeps no state of its own.
 *
 * Locks: the caller holds the socket lock, or owns the connection alone
 * (set-up, teardown).  Buffers are charged to the memory cgroup of the
 * socket's owner: the caller opens that scope (set_active_memcg()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "sdp.h"

/**
 * sdp_ring_alloc - a ring of @n buffers of @size bytes, not mapped
 * @ssk: the socket whose owner's cgroup the caller charges
 * @ringp: where the ring goes (set even when a buffer's memory fails:
 *	sdp_ring_free() releases what was taken)
 * @n: buffers
 * @size: bytes each; 0: they get their memory when first used (sdp_mem.c)
 *
 * The caller gives each buffer its kind and completion (sdp_buf_init()).
 *
 * Return: 0 or -ENOMEM.
 */
int sdp_ring_alloc(struct sdp_sock *ssk, struct sdp_buf **ringp, u32 n,
		   u32 size)
{
	struct sdp_buf *ring;
	u32 i;

	ring = kcalloc(n, sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return -ENOMEM;
	*ringp = ring;
	for (i = 0; i < n && size; i++) {
		ring[i].data = kmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!ring[i].data)
			return -ENOMEM;
		ring[i].size = size;
		sdp_buf_account(ssk, size);
	}
	return 0;
}

/* Free a ring's memory; nothing of it is mapped any more. */
void sdp_ring_free(struct sdp_sock *ssk, struct sdp_buf **ringp, u32 n)
{
	struct sdp_buf *ring = *ringp;
	u32 i;

	if (!ring)
		return;
	for (i = 0; i < n; i++)
		sdp_buf_release(ssk, &ring[i], DMA_NONE);
	kfree(ring);
	*ringp = NULL;
}

int sdp_ring_map(struct ib_device *dev, struct sdp_buf *ring, u32 n,
		 enum dma_data_direction dir)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (!ring[i].data)
			continue;
		ring[i].dma = ib_dma_map_single(dev, ring[i].data, ring[i].size,
						dir);
		if (ib_dma_mapping_error(dev, ring[i].dma)) {
			ring[i].dma = 0;
			return -ENOMEM;
		}
	}
	return 0;
}

void sdp_ring_unmap(struct ib_device *dev, struct sdp_buf *ring, u32 n,
		    enum dma_data_direction dir)
{
	u32 i;

	if (!ring)
		return;
	for (i = 0; i < n; i++) {
		if (!ring[i].dma)
			continue;
		ib_dma_unmap_single(dev, ring[i].dma, ring[i].size, dir);
		ring[i].dma = 0;
	}
}

/* QP events (any context).  COMM_EST: a message arrived before the CM
 * saw the RTU (a peer may send at once); tell the CM, which then reports
 * ESTABLISHED.  The QP in error (an RDMA op or message of the peer's
 * that our device refused as the responder: such an error completes no
 * work request of ours with its status): counted and logged here; the
 * flushes that follow reset the connection.
 */
static void sdp_qp_event(struct ib_event *ev, void *ctx)
{
	struct sdp_sock *ssk = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(READ_ONCE(ssk->cm_id), IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_QP_ERRORS);
		net_warn_ratelimited("QP error: %s, connection reset\n",
				     ib_event_msg(ev->event));
		break;
	default:
		pr_debug("sk %p: QP event %s\n", ssk,
			 ib_event_msg(ev->event));
		break;
	}
}

/* Work requests one RDMA READ or WRITE op of SDP_ZC_CHUNK may take: one
 * per @sge pages, or a REG_MR, the op and a LOCAL_INV where rdma_rw goes
 * through a memory registration (iWARP's READs, some devices' large ones).
 */
static u32 sdp_rw_op_wrs(u32 sge)
{
	return max_t(u32, DIV_ROUND_UP(SDP_ZC_CHUNK_PAGES, sge), 3);
}

/**
 * sdp_qp_caps - size the queues for everything that may be posted at once
 * @conn: the connection, its rings sized
 * @dev: the device
 * @attr: the QP's attributes to fill in
 *
 * The send queue holds every data and control message, the keepalive
 * probe, a REG_MR and a LOCAL_INV for each ZCopy registration, the RDMA
 * READ ops of a reader and the RDMA WRITE ops of a writer running at the
 * same time, on a socket with SDP_REGIONS the one-sided ops and one batch
 * of a region's REG_MRs or LOCAL_INVs (sdp_rdma_region.c: an idle
 * connection does not pay for them), and one more for ib_drain_qp().  rdma_rw adds its own share
 * for its contexts (both directions).  The CQ is sized by the caller for
 * a completion of every one of them.
 */
static void sdp_qp_caps(struct sdp_conn *conn, struct ib_device *dev,
			struct ib_qp_init_attr *attr)
{
	u32 sge = min3(SDP_ZC_RW_SGE, dev->attrs.max_send_sge,
		       dev->attrs.max_sge_rd);
	u32 rg_ops = conn->regions ? SDP_RG_OPS : 0;	/* SDP_REGIONS */

	sge = max(sge, 1U);
	attr->cap.max_send_sge = sge;
	attr->cap.max_send_wr = conn->tx_size + SDP_CTRL_BUFS + 1 +
				2 * SDP_ZC_REGS +
				(2 * SDP_ZC_RW_OPS + rg_ops) * sdp_rw_op_wrs(sge) +
				(rg_ops ? SDP_RG_BATCH : 0) + 1;
	attr->cap.max_rdma_ctxs = 2 * SDP_ZC_RW_OPS + rg_ops;
	attr->cap.max_recv_wr = sdp_rx_ring_size(conn) + 1;
	attr->cap.max_recv_sge = 1;
	attr->cap.max_inline_data = max(READ_ONCE(sdp_inline_thresh), 0);
}

/* CQ entries for @attr: a completion for every work request of both
 * queues, rdma_rw's registrations included (it adds up to three work
 * requests per context to the send queue).
 */
static int sdp_cq_size(const struct ib_qp_init_attr *attr)
{
	return attr->cap.max_send_wr + 3 * attr->cap.max_rdma_ctxs +
	       attr->cap.max_recv_wr;
}

int sdp_qp_create(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sdp_conn *conn = ssk->conn;
	struct ib_device *dev = conn->sdev->ibdev;
	struct ib_qp_init_attr attr = {};
	int err;

	sdp_qp_caps(conn, dev, &attr);
	/* a share of a CQ of the device's pool: a CQ per connection would
	 * cost its queue memory (and a vector's interrupt) for every socket
	 */
	conn->cq_size = sdp_cq_size(&attr);
	conn->cq = ib_cq_pool_get(dev, conn->cq_size, -1, IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->cq)) {
		err = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return err;
	}

	attr.event_handler = sdp_qp_event;
	attr.qp_context = ssk;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	/* every message is posted signaled; rdma_rw's chained READs and
	 * WRITEs (but on iWARP: sdp_zc_rw_chain()) and REG_MR are not
	 */
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	err = rdma_create_qp(id, conn->pd, &attr);
	if (err && attr.cap.max_inline_data) {
		/* the device may not send inline: do without */
		attr.cap.max_inline_data = 0;
		err = rdma_create_qp(id, conn->pd, &attr);
	}
	if (err) {
		ib_cq_pool_put(conn->cq, conn->cq_size);
		conn->cq = NULL;
		return err;
	}
	conn->qp = id->qp;
	conn->port_num = id->port_num;
	/* the device may report more than asked for */
	conn->max_inline = min_t(u32, attr.cap.max_inline_data,
				 max(READ_ONCE(sdp_inline_thresh), 0));
	return 0;
}

/* The PD and the device reference, once nothing uses them any more. */
void sdp_pd_release(struct sdp_conn *conn)
{
	if (conn->pd) {
		ib_dealloc_pd(conn->pd);
		conn->pd = NULL;
	}
	sdp_dev_put(conn->sdev);
	conn->sdev = NULL;
}

int sdp_post_recv(struct sdp_conn *conn, struct sdp_buf *buf)
{
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= buf->size,
		.lkey	= conn->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int err;

	ib_dma_sync_single_for_device(conn->sdev->ibdev, buf->dma, buf->size,
				      DMA_FROM_DEVICE);
	err = ib_post_recv(conn->qp, &wr, NULL);
	if (!err) {
		buf->posted = true;
		conn->rx_posted++;
	}
	return err;
}

/**
 * sdp_qp_post_send - ib_post_send() with bottom halves off
 * @qp: the connection's QP
 * @wr: the chain to post
 * @bad_wr: where the first WR not posted is returned, or NULL
 *
 * 6.1's rxe does a kernel QP's work in a tasklet it schedules from
 * ib_post_send().  Scheduled from process context with bottom halves on,
 * a tasklet is handed to ksoftirqd: a wake-up and two context switches
 * for every message, in both directions of a ping-pong.  With them off,
 * local_bh_enable() runs it here at once.  6.12's rxe queues that work
 * on its workqueue whatever the context, so there this gains nothing.
 * Every post to the send queue goes through here; on a hardware device
 * it costs nothing more than the doorbell.
 *
 * Return: what ib_post_send() returned.
 */
int sdp_qp_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	int err;

	local_bh_disable();
	err = ib_post_send(qp, wr, bad_wr);
	local_bh_enable();
	return err;
}

static const char *const sdp_buf_kind_name[] = {
	[SDP_BUF_RX] = "recv", [SDP_BUF_TX] = "data",
	[SDP_BUF_CTRL] = "ctrl", [SDP_BUF_PROBE] = "probe",
	[SDP_BUF_BOUNCE] = "bounce", [SDP_BUF_ZC_REG] = "local-inv",
	[SDP_BUF_ZC_RW] = "rdma-rw",
	[SDP_BUF_RG] = "region",
};

static const char *sdp_buf_kind_str(u8 kind)
{
	if (kind >= ARRAY_SIZE(sdp_buf_kind_name) || !sdp_buf_kind_name[kind])
		return "?";
	return sdp_buf_kind_name[kind];
}

/* ib_cqe.done of every buffer; softirq context.  What the completion
 * means is the transport's (->buf_done()); while a process owns the
 * socket, the transport takes it from ->backlog when the owner lets go.
 */
static void sdp_cq_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_buf *buf = container_of(wc->wr_cqe, struct sdp_buf, cqe);
	struct sdp_sock *ssk = buf->ssk;
	struct sock *sk = &ssk->sk;

	buf->status = wc->status;
	if (unlikely(wc->status != IB_WC_SUCCESS))
		trace_sdp_wc_error(sk, sdp_buf_kind_str(buf->kind), wc->status);
	if (buf->kind == SDP_BUF_RX)
		buf->len = wc->status == IB_WC_SUCCESS ? wc->byte_len : 0;

	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk) && list_empty(&ssk->backlog))
		ssk->conn->buf_done(ssk, buf);
	else
		list_add_tail(&buf->list, &ssk->backlog);
	bh_unlock_sock(sk);
}

/* A buffer whose completions come to sdp_cq_done(). */
void sdp_buf_init(struct sdp_sock *ssk, struct sdp_buf *buf, u8 kind)
{
	buf->ssk = ssk;
	buf->kind = kind;
	buf->cqe.done = sdp_cq_done;
	INIT_LIST_HEAD(&buf->list);
}
