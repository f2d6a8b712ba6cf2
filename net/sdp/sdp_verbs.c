// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the verbs resources of a connection and their lifetime.
 *
 * A connection owns one RC QP, a share of a CQ from the device's pool
 * for both its queues (polled in softirq context), a ring of receive buffers, a ring of
 * send buffers and a few header-only control buffers, all DMA-mapped for
 * the whole connection.  Every buffer is a struct sdp_buf with its own
 * ib_cqe, so a completion leads straight to its buffer.
 *
 * Completions run sdp_cq_done() in softirq context.  Under bh_lock_sock()
 * it handles the buffer at once, or, when a process owns the socket, puts
 * it on ->backlog, which sdp_release_cb() empties in order before the
 * owner lets go: completions are therefore handled in the order they
 * arrive, always under the socket lock, never concurrently.
 *
 * Teardown (sdp_conn_teardown()) runs in process context without the
 * socket lock: rdma_disconnect(), ib_drain_qp() (whose flushed completions
 * still pass through sdp_cq_done()), then the QP, the CQ share and the DMA
 * mappings are released.  The buffers' memory stays until the socket is
 * freed, so data received before the teardown can still be read.
 */
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "sdp.h"

/**
 * sdp_sq_posted - a signaled work request went on the send queue
 * @ssk: the socket, locked
 *
 * The stall watchdog (sdp_timer.c) watches the send queue while anything
 * is on it: a peer that stops answering, or stops taking our messages
 * (the transport retries RNR for ever), ends in ETIMEDOUT.
 */
void sdp_sq_posted(struct sdp_sock *ssk)
{
	if (!ssk->tx_wrs++) {
		ssk->tx_wr_stamp = jiffies;
		sdp_stall_arm(ssk);
	}
}

/* A signaled send work request completed (or was flushed). */
static void sdp_sq_done(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	if (ssk->tx_wrs)
		ssk->tx_wrs--;
	if (buf->status == IB_WC_SUCCESS)
		ssk->tx_wr_stamp = jiffies;
}

static void sdp_buf_complete(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	if (buf->kind != SDP_BUF_RX)
		sdp_sq_done(ssk, buf);
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
	default:
		sdp_tx_complete(ssk, buf);
		break;
	}
}

/* ib_cqe.done of every buffer; softirq context. */
static void sdp_cq_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_buf *buf = container_of(wc->wr_cqe, struct sdp_buf, cqe);
	struct sdp_sock *ssk = buf->ssk;
	struct sock *sk = &ssk->sk;

	buf->status = wc->status;
	if (buf->kind == SDP_BUF_RX)
		buf->len = wc->status == IB_WC_SUCCESS ? wc->byte_len : 0;

	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk) && list_empty(&ssk->backlog))
		sdp_buf_complete(ssk, buf);
	else
		list_add_tail(&buf->list, &ssk->backlog);
	bh_unlock_sock(sk);
}

/* proto.release_cb: called by release_sock() with the socket spinlock held
 * while the process still owns the socket.
 */
void sdp_release_cb(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_buf *buf;

	while (!list_empty(&ssk->backlog)) {
		buf = list_first_entry(&ssk->backlog, struct sdp_buf, list);
		list_del_init(&buf->list);
		sdp_buf_complete(ssk, buf);
	}
}

/* A buffer whose completions come to sdp_cq_done(). */
void sdp_buf_init(struct sdp_sock *ssk, struct sdp_buf *buf, u8 kind)
{
	buf->ssk = ssk;
	buf->kind = kind;
	buf->cqe.done = sdp_cq_done;
	INIT_LIST_HEAD(&buf->list);
}

/* Buffers are charged to the memory cgroup of the socket's owner: the
 * caller opens that scope (set_active_memcg()).  @size 0: the buffers get
 * their memory when first used (sdp_mem.c).
 */
static int sdp_ring_alloc(struct sdp_sock *ssk, struct sdp_buf **ringp,
			  u32 n, u32 size, u8 kind)
{
	struct sdp_buf *ring;
	u32 i;

	ring = kcalloc(n, sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return -ENOMEM;
	*ringp = ring;
	for (i = 0; i < n; i++) {
		sdp_buf_init(ssk, &ring[i], kind);
		if (!size)
			continue;
		ring[i].data = kmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!ring[i].data)
			return -ENOMEM;
		ring[i].size = size;
		SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_BUF_BYTES, size);
	}
	return 0;
}

/* Free a ring's memory; nothing of it is mapped any more. */
static void sdp_ring_free(struct sdp_sock *ssk, struct sdp_buf **ringp, u32 n)
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

/* Frees the buffers' memory: at socket destruction, or before a new
 * connection of the same socket.  Nothing may be mapped any more.
 */
void sdp_bufs_free(struct sdp_sock *ssk)
{
	sdp_rx_purge(ssk);
	INIT_LIST_HEAD(&ssk->rx_early);
	INIT_LIST_HEAD(&ssk->rx_resize);
	sdp_ring_free(ssk, &ssk->rx_ring, sdp_rx_ring_size(ssk));
	sdp_ring_free(ssk, &ssk->tx_ring, ssk->tx_size);
	sdp_ring_free(ssk, &ssk->ctrl_ring, SDP_CTRL_BUFS);
	INIT_LIST_HEAD(&ssk->tx_free);
	INIT_LIST_HEAD(&ssk->tx_queue);
	INIT_LIST_HEAD(&ssk->ctrl_free);
	WRITE_ONCE(ssk->rcv_nxt, 0);
	WRITE_ONCE(ssk->copied_seq, 0);
	WRITE_ONCE(ssk->urg_data, 0);
	WRITE_ONCE(ssk->tx_nfree, 0);
	ssk->tx_queued = 0;
}

static int sdp_ring_map(struct ib_device *dev, struct sdp_buf *ring, u32 n,
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

static void sdp_ring_unmap(struct ib_device *dev, struct sdp_buf *ring, u32 n,
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

static void sdp_bufs_unmap(struct sdp_sock *ssk)
{
	struct ib_device *dev = ssk->sdev->ibdev;

	sdp_ring_unmap(dev, ssk->rx_ring, sdp_rx_ring_size(ssk),
		       DMA_FROM_DEVICE);
	sdp_ring_unmap(dev, ssk->tx_ring, ssk->tx_size, DMA_TO_DEVICE);
	sdp_ring_unmap(dev, ssk->ctrl_ring, SDP_CTRL_BUFS, DMA_TO_DEVICE);
}

/* Ring sizes from the module parameters, or from SO_RCVBUF / SO_SNDBUF
 * when the application set them.  Buffer sizes change later (sdp_mem.c).
 */
static void sdp_conn_size(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	ssk->rcv_size = clamp_t(u32, READ_ONCE(rcvbuf_initial_size),
				SDP_MIN_BUF_SIZE, SDP_MAX_BUF_SIZE);
	ssk->rcv_size_min = ssk->rcv_size;
	ssk->rcv_acked = ssk->rcv_size;
	ssk->rx_ack_owed = false;
	ssk->tx_req = 0;
	ssk->tx_req_send = false;
	ssk->tx_returns = 0;
	ssk->rx_size = clamp_t(u32, READ_ONCE(sdp_rx_size), SDP_MIN_BUFS,
			       SDP_MAX_BUFS);
	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK)
		ssk->rx_size = clamp_t(u32, sk->sk_rcvbuf / ssk->rcv_size,
				       SDP_MIN_BUFS, ssk->rx_size);
	ssk->tx_size = SDP_TX_SIZE;
	if (sk->sk_userlocks & SOCK_SNDBUF_LOCK)
		ssk->tx_size = clamp_t(u32, sk->sk_sndbuf / ssk->rcv_size, 2,
				       SDP_TX_SIZE);
}

/* QP events.  COMM_EST: a message arrived before the CM saw the RTU (a
 * peer may send at once); tell the CM, which then reports ESTABLISHED.
 */
static void sdp_qp_event(struct ib_event *ev, void *ctx)
{
	struct sdp_sock *ssk = ctx;

	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(READ_ONCE(ssk->cm_id), IB_EVENT_COMM_EST);
	else
		pr_debug("ib_sdp: sk %p: QP event %s\n", ssk,
			 ib_event_msg(ev->event));
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
 * @ssk: the socket, its rings sized
 * @dev: the device
 * @attr: the QP's attributes to fill in
 *
 * The send queue holds every data and control message, the keepalive
 * probe, a REG_MR and a LOCAL_INV for each ZCopy registration, the RDMA
 * READ ops of a reader and the RDMA WRITE ops of a writer running at the
 * same time, and one more for ib_drain_qp().  rdma_rw adds its own share
 * for its contexts (both directions).  The CQ is sized by the caller for
 * a completion of every one of them.
 */
static void sdp_qp_caps(struct sdp_sock *ssk, struct ib_device *dev,
			struct ib_qp_init_attr *attr)
{
	u32 sge = min3(SDP_ZC_RW_SGE, dev->attrs.max_send_sge,
		       dev->attrs.max_sge_rd);

	sge = max(sge, 1U);
	attr->cap.max_send_sge = sge;
	attr->cap.max_send_wr = ssk->tx_size + SDP_CTRL_BUFS + 1 +
				2 * SDP_ZC_REGS +
				2 * SDP_ZC_RW_OPS * sdp_rw_op_wrs(sge) + 1;
	attr->cap.max_rdma_ctxs = 2 * SDP_ZC_RW_OPS;
	attr->cap.max_recv_wr = sdp_rx_ring_size(ssk) + 1;
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

static int sdp_bufs_create(struct sdp_sock *ssk, struct ib_device *dev)
{
	struct mem_cgroup *old = set_active_memcg(ssk->memcg);
	u32 i;
	int err;

	err = sdp_ring_alloc(ssk, &ssk->rx_ring, sdp_rx_ring_size(ssk),
			     ssk->rcv_size, SDP_BUF_RX);
	if (!err)
		err = sdp_ring_alloc(ssk, &ssk->tx_ring, ssk->tx_size, 0,
				     SDP_BUF_TX);
	if (!err)
		err = sdp_ring_alloc(ssk, &ssk->ctrl_ring, SDP_CTRL_BUFS,
				     SDP_CTRL_SIZE, SDP_BUF_CTRL);
	if (!err)
		err = sdp_ring_map(dev, ssk->rx_ring, sdp_rx_ring_size(ssk),
				   DMA_FROM_DEVICE);
	if (!err)
		err = sdp_ring_map(dev, ssk->ctrl_ring, SDP_CTRL_BUFS,
				   DMA_TO_DEVICE);
	set_active_memcg(old);
	if (err)
		return err;

	for (i = 0; i < ssk->tx_size; i++)
		list_add_tail(&ssk->tx_ring[i].list, &ssk->tx_free);
	WRITE_ONCE(ssk->tx_nfree, ssk->tx_size);
	for (i = 0; i < SDP_CTRL_BUFS; i++)
		list_add_tail(&ssk->ctrl_ring[i].list, &ssk->ctrl_free);
	return 0;
}

static int sdp_qp_create(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct ib_device *dev = ssk->sdev->ibdev;
	struct ib_qp_init_attr attr = {};
	int err;

	sdp_qp_caps(ssk, dev, &attr);
	/* a share of a CQ of the device's pool: a CQ per connection would
	 * cost its queue memory (and a vector's interrupt) for every socket
	 */
	ssk->cq_size = sdp_cq_size(&attr);
	ssk->cq = ib_cq_pool_get(dev, ssk->cq_size, -1, IB_POLL_SOFTIRQ);
	if (IS_ERR(ssk->cq)) {
		err = PTR_ERR(ssk->cq);
		ssk->cq = NULL;
		return err;
	}

	attr.event_handler = sdp_qp_event;
	attr.qp_context = ssk;
	attr.send_cq = ssk->cq;
	attr.recv_cq = ssk->cq;
	/* every message is posted signaled; rdma_rw's chained READs and
	 * REG_MR are not
	 */
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	err = rdma_create_qp(id, ssk->pd, &attr);
	if (err && attr.cap.max_inline_data) {
		/* the device may not send inline: do without */
		attr.cap.max_inline_data = 0;
		err = rdma_create_qp(id, ssk->pd, &attr);
	}
	if (err) {
		ib_cq_pool_put(ssk->cq, ssk->cq_size);
		ssk->cq = NULL;
		return err;
	}
	ssk->qp = id->qp;
	ssk->port_num = id->port_num;
	/* the device may report more than asked for */
	ssk->max_inline = min_t(u32, attr.cap.max_inline_data,
				max(READ_ONCE(sdp_inline_thresh), 0));
	return 0;
}

/* The PD and the device reference, once nothing uses them any more. */
static void sdp_conn_release(struct sdp_sock *ssk)
{
	if (ssk->pd) {
		ib_dealloc_pd(ssk->pd);
		ssk->pd = NULL;
	}
	sdp_dev_put(ssk->sdev);
	ssk->sdev = NULL;
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
	int err;
	u32 i;

	if (WARN_ON_ONCE(test_bit(SDP_F_CONN, &ssk->flags)))
		return -EBUSY;

	ssk->sdev = sdp_dev_get(id->device);
	if (!ssk->sdev)
		return -ENODEV;
	/* a PD of its own: its keys work on this connection only */
	ssk->pd = ib_alloc_pd(ssk->sdev->ibdev, 0);
	if (IS_ERR(ssk->pd)) {
		err = PTR_ERR(ssk->pd);
		ssk->pd = NULL;
		goto err_dev;
	}

	sdp_bufs_free(ssk);
	/* a new stream: SrcAvails of an earlier connection left unread must
	 * not count against its sends (sdp_sendmsg())
	 */
	ssk->zc_read_total = ssk->zc_adv_total;
	ssk->zc_adv_posted = ssk->zc_adv_total;
	sdp_conn_size(ssk);
	err = sdp_bufs_create(ssk, ssk->sdev->ibdev);
	if (err)
		goto err_bufs;
	err = sdp_qp_create(ssk, id);
	if (err)
		goto err_bufs;

	ssk->rx_posted = 0;
	ssk->rx_mseq = 0;
	ssk->tx_mseq = 0;
	ssk->tx_inflight = 0;
	ssk->tx_inflight_bytes = 0;
	ssk->tx_wrs = 0;
	ssk->ka_probes = 0;
	memset(&ssk->st, 0, sizeof(ssk->st));
	ssk->st.last_recv = jiffies;
	for (i = 0; i < sdp_rx_ring_size(ssk); i++) {
		err = sdp_post_recv(ssk, &ssk->rx_ring[i]);
		if (err)
			goto err_qp;
	}
	ssk->adv_bufs = sdp_rx_adv(ssk);
	ssk->adv_ack = 0;

	__set_bit(SDP_F_CONN, &ssk->flags);
	__clear_bit(SDP_F_TEARDOWN, &ssk->flags);
	sock_hold(&ssk->sk);	/* the connection's; put in sdp_conn_teardown() */
	return 0;

err_qp:
	/* The CQ is shared: the posted receives' flushes must have run
	 * before their buffers go.
	 */
	ib_drain_qp(ssk->qp);
	rdma_destroy_qp(id);
	ssk->qp = NULL;
	ib_cq_pool_put(ssk->cq, ssk->cq_size);
	ssk->cq = NULL;
err_bufs:
	sdp_bufs_unmap(ssk);
	sdp_bufs_free(ssk);
err_dev:
	sdp_conn_release(ssk);
	return err;
}

int sdp_post_recv(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= buf->size,
		.lkey	= ssk->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int err;

	ib_dma_sync_single_for_device(ssk->sdev->ibdev, buf->dma, buf->size,
				      DMA_FROM_DEVICE);
	err = ib_post_recv(ssk->qp, &wr, NULL);
	if (!err) {
		buf->posted = true;
		ssk->rx_posted++;
	}
	return err;
}

/**
 * sdp_post_send - post a message whose payload is already in @buf
 * @ssk: the socket, locked, with a usable connection and a credit
 * @buf: a send or control buffer; ->mid and ->len are set, the header is
 *	 filled in here with the current credits and sequence numbers
 *
 * Return: 0 or a negative errno (the message was not sent).
 */
int sdp_post_send(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_bsdh *h = buf->data;
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= buf->len,
		.lkey	= ssk->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	int err;

	h->mid = buf->mid;
	h->flags = buf->flags;
	h->bufs = cpu_to_be16(sdp_rx_adv(ssk));
	h->len = cpu_to_be32(buf->len);
	h->mseq = cpu_to_be32(ssk->tx_mseq + 1);
	h->mseq_ack = cpu_to_be32(ssk->rx_mseq);

	if (buf->mid == SDP_MID_ABORT)
		wr.send_flags |= IB_SEND_FENCE;	/* behind sdp_zc_revoke() */
	if (buf->len <= ssk->max_inline) {
		wr.send_flags |= IB_SEND_INLINE;
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_INLINE);
	}
	ib_dma_sync_single_for_device(ssk->sdev->ibdev, buf->dma, buf->len,
				      DMA_TO_DEVICE);
	buf->posted_ns = ktime_get_ns();
	err = ib_post_send(ssk->qp, &wr, NULL);
	if (err)
		return err;
	sdp_sq_posted(ssk);
	ssk->st.segs_out++;
	ssk->tx_mseq++;
	if (ssk->tx_returns)
		ssk->tx_returns--;	/* it takes one of the peer's buffers */
	if (buf->mid == SDP_MID_SRC_AVAIL)	/* may now be read */
		ssk->zc_adv_posted += be32_to_cpu(((struct sdp_avail_hdr *)
						   (h + 1))->len);
	/* a SinkAvail the peer sent before seeing this is stale */
	if ((buf->mid == SDP_MID_DATA && buf->len > sizeof(*h)) ||
	    buf->mid == SDP_MID_SRC_AVAIL || buf->mid == SDP_MID_RDMA_WR_COMPL)
		ssk->zc_data_mseq = ssk->tx_mseq;
	ssk->adv_bufs = sdp_rx_adv(ssk);
	ssk->adv_ack = ssk->rx_mseq;
	return 0;
}

/**
 * sdp_conn_teardown - disconnect and free the verbs resources
 * @ssk: the socket; the caller holds a reference and not the socket lock,
 *	 and is not a completion callback
 *
 * Idempotent.  Leaves the socket in TCP_CLOSE with the buffers' memory
 * (and any unread data) in place, and drops the connection's reference.
 */
void sdp_conn_teardown(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id;
	int timer_refs;

	mutex_lock(&ssk->teardown_lock);
	lock_sock(sk);
	if (!test_bit(SDP_F_CONN, &ssk->flags)) {
		release_sock(sk);
		mutex_unlock(&ssk->teardown_lock);
		return;
	}
	__set_bit(SDP_F_TEARDOWN, &ssk->flags);
	id = ssk->cm_id;
	release_sock(sk);

	/* The QP goes to error and is drained (no traffic), our ZCopy keys
	 * are deregistered, and only then is the peer told: it may hold a
	 * key, and another connection of ours on the same device (same PD)
	 * to use it with.  The id cannot go away meanwhile: its owner
	 * destroys it only once SDP_F_CONN is clear, and rdma_cm only when
	 * the handler says so, after this.
	 */
	ib_drain_qp(ssk->qp);
	lock_sock(sk);
	sdp_zc_teardown(ssk);	/* deregisters the MRs before the pages go */
	release_sock(sk);
	rdma_disconnect(id);

	lock_sock(sk);
	rdma_destroy_qp(id);
	ssk->qp = NULL;
	ib_cq_pool_put(ssk->cq, ssk->cq_size);
	ssk->cq = NULL;
	sdp_bufs_unmap(ssk);
	sdp_conn_release(ssk);
	__clear_bit(SDP_F_CONN, &ssk->flags);

	/* Gone without a DisConn or an Abort from either side: a reset. */
	if (sk->sk_state != TCP_CLOSE &&
	    !test_bit(SDP_F_DISCONN_RCVD, &ssk->flags) &&
	    !test_bit(SDP_F_RESET, &ssk->flags)) {
		__set_bit(SDP_F_RESET, &ssk->flags);
		WRITE_ONCE(sk->sk_err, sk->sk_state == TCP_CLOSE_WAIT ?
			   EPIPE : ECONNRESET);
		SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_ABORTED);
		sk_error_report(sk);
	} else if (!test_bit(SDP_F_RESET, &ssk->flags)) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_CLOSED);
	}
	/* Closed already (both DisConns through, an abort, a disconnect
	 * by connect(AF_UNSPEC)): the shutdown state is as that left it.
	 */
	if (sk->sk_state != TCP_CLOSE) {
		sk->sk_state = TCP_CLOSE;
		WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	}
	timer_refs = sdp_timers_cancel(ssk);
	sk->sk_state_change(sk);
	release_sock(sk);
	mutex_unlock(&ssk->teardown_lock);

	while (timer_refs--)
		sock_put(sk);	/* the cancelled timers' (sdp_timer.c) */
	sock_put(sk);		/* the connection's, from sdp_conn_create() */
}

static void sdp_teardown_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(work, struct sdp_sock,
					    teardown_work);
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id = NULL;

	sdp_conn_teardown(ssk);

	lock_sock(sk);
	if (sock_flag(sk, SOCK_DEAD)) {
		id = ssk->cm_id;
		ssk->cm_id = NULL;
	}
	release_sock(sk);
	if (id)
		rdma_destroy_id(id);
	sock_put(sk);	/* sdp_conn_queue_teardown()'s */
}

/**
 * sdp_conn_queue_teardown - tear the connection down from a work item
 * @ssk: the socket, locked (any context)
 *
 * Nothing is posted any more.  Once the teardown is done, an orphaned
 * socket's rdma_cm_id is destroyed too.
 */
void sdp_conn_queue_teardown(struct sdp_sock *ssk)
{
	if (!test_bit(SDP_F_CONN, &ssk->flags) ||
	    __test_and_set_bit(SDP_F_TEARDOWN, &ssk->flags))
		return;
	sock_hold(&ssk->sk);	/* put by sdp_teardown_work() */
	if (!queue_work(sdp_wq, &ssk->teardown_work))
		sock_put(&ssk->sk);
}

/**
 * sdp_flushed - a work request was flushed
 * @ssk: the socket, locked
 *
 * Flushes are expected during a teardown, and while the connection is
 * being set up (rdma_cm moves the QP to error on a REJ, and the event
 * follows).  Otherwise the QP failed under us, on an unsignaled work
 * request say, and the connection is gone.
 */
void sdp_flushed(struct sdp_sock *ssk)
{
	if (!test_bit(SDP_F_TEARDOWN, &ssk->flags) &&
	    test_bit(SDP_F_WAS_CONNECTED, &ssk->flags))
		sdp_conn_abort(ssk, ECONNRESET, false);
}

/**
 * sdp_conn_abort - reset the connection
 * @ssk: the socket, locked (any context)
 * @err: the error the application will see, or 0 (a local abort)
 * @send_abort: tell the peer with an Abort message
 */
void sdp_conn_abort(struct sdp_sock *ssk, int err, bool send_abort)
{
	struct sock *sk = &ssk->sk;

	if (!test_bit(SDP_F_RESET, &ssk->flags) &&
	    sk->sk_state != TCP_CLOSE)
		SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_ABORTED);
	__set_bit(SDP_F_RESET, &ssk->flags);
	if (send_abort && sdp_conn_usable(ssk)) {
		/* our keys die before the peer hears of the end: the
		 * Abort is fenced behind their invalidation
		 */
		sdp_zc_revoke(ssk);
		sdp_send_ctrl(ssk, SDP_MID_ABORT, 0);
	}
	sk->sk_state = TCP_CLOSE;
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	sdp_conn_queue_teardown(ssk);
	if (err) {
		WRITE_ONCE(sk->sk_err, err);
		sk_error_report(sk);
	}
	sk->sk_state_change(sk);
}

void sdp_conn_init(struct sdp_sock *ssk)
{
	mutex_init(&ssk->teardown_lock);
	INIT_WORK(&ssk->teardown_work, sdp_teardown_work);
	sdp_timers_init(ssk);
	sdp_mem_init(ssk);
	sdp_zc_init(ssk);
	sdp_buf_init(ssk, &ssk->ka_buf, SDP_BUF_PROBE);
	INIT_LIST_HEAD(&ssk->backlog);
	INIT_LIST_HEAD(&ssk->rx_early);
	INIT_LIST_HEAD(&ssk->rx_queue);
	INIT_LIST_HEAD(&ssk->tx_free);
	INIT_LIST_HEAD(&ssk->tx_queue);
	INIT_LIST_HEAD(&ssk->ctrl_free);
}
