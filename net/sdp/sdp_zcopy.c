// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: ZCopy's common part: its per-connection state, the
 * registrations of user pages for the peer, the RDMA READ and WRITE ops
 * of ours, their completions, and the teardown.
 *
 * A registration pins the pages of one contiguous user range, maps them
 * and registers them with a fast-registration MR of the connection's own
 * PD, with a fresh random key and a random address (sdp_zc_register()),
 * allowing the peer exactly one access over exactly those bytes: reading
 * a SrcAvail's (sdp_zc_send.c), writing a SinkAvail's
 * (sdp_zc_sinkavail.c).  When its transfer is over its key is invalidated
 * (LOCAL_INV) and, once that completed, its pages are released.  Teardown
 * deregisters every MR before it releases any page, so no key outlives
 * its connection.
 *
 * An RDMA op (struct sdp_zc_rw) moves up to SDP_ZC_CHUNK bytes through
 * rdma_rw: a READ of the peer's SrcAvail into user pages or a kernel
 * bounce buffer (sdp_zc_read.c), or a WRITE from user pages into the
 * peer's SinkAvail (sdp_zc_sinkavail.c).
 *
 * Everything runs under the socket lock; the RDMA waits drop it.
 * Completions arrive through sdp_cq_done() like every other.
 */
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <rdma/rw.h>

#include "sdp.h"
#include "sdp_zcopy.h"

/* A ZCopy state changed: wake the socket's waiters (readers, writers,
 * poll) and those waiting for RDMA ops and keys to settle (zc_wait, which,
 * unlike the socket's wait queue, outlives the file: the read-ahead work
 * waits there for a socket that may be closed meanwhile).
 */
void sdp_zc_wake(struct sock *sk)
{
	struct socket_wq *wq;

	wake_up_all(&sdp_sk(sk)->zc_wait);
	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_all(&wq->wait);
	rcu_read_unlock();
}

/* REG_MR is posted unsignaled: only an error completes it, and the QP is
 * in error then, so the sends behind it fail the connection.
 */
static void sdp_zc_reg_mr_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

/* Under the socket lock, with a connection: the ZCopy state. */
struct sdp_zc *sdp_zc_get(struct sdp_sock *ssk)
{
	struct sdp_zc *zc = ssk->zc;
	int i;

	if (zc)
		return zc;
	zc = kvzalloc(sizeof(*zc), GFP_KERNEL);
	if (!zc)
		return NULL;
	INIT_LIST_HEAD(&zc->src);
	zc->reg_mr_cqe.done = sdp_zc_reg_mr_done;
	for (i = 0; i < SDP_ZC_REGS; i++)
		sdp_buf_init(ssk, &zc->reg[i].b, SDP_BUF_ZC_REG);
	for (i = 0; i < SDP_ZC_RW_OPS; i++) {
		sdp_buf_init(ssk, &zc->rd[i].b, SDP_BUF_ZC_RW);
		zc->rd[i].dir = DMA_FROM_DEVICE;
		sdp_buf_init(ssk, &zc->wr[i].b, SDP_BUF_ZC_RW);
		zc->wr[i].dir = DMA_TO_DEVICE;
	}
	ssk->zc = zc;
	return zc;
}

/* Under the socket lock: the MRs a source needs, allocated once per
 * connection (they belong to its device's PD).
 */
int sdp_zc_mrs(struct sdp_sock *ssk, struct sdp_zc *zc)
{
	struct ib_device *dev = ssk->sdev->ibdev;
	int i;

	if (zc->nregs)
		return 0;
	zc->reg_pages = min_t(u32, SDP_ZC_REG_PAGES,
			      dev->attrs.max_fast_reg_page_list_len);
	if (zc->reg_pages < 2)
		return -EOPNOTSUPP;
	for (i = 0; i < SDP_ZC_REGS; i++) {
		struct ib_mr *mr = ib_alloc_mr(ssk->pd, IB_MR_TYPE_MEM_REG,
					       zc->reg_pages);

		if (IS_ERR(mr))
			break;
		zc->reg[i].mr = mr;
		zc->reg[i].state = SDP_ZC_REG_FREE;
		zc->nregs++;
	}
	return zc->nregs ? 0 : -ENOMEM;
}

/* A SrcAvail read whole, or its connection gone: release its pages. */
void sdp_zc_reg_finish(struct sdp_sock *ssk, struct sdp_zc_reg *reg,
		       bool success)
{
	int i;

	if (ssk->sdev)
		ib_dma_unmap_sg(ssk->sdev->ibdev, reg->sg, reg->npages,
				reg->sink ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
	for (i = 0; i < reg->npages; i++) {
		/* the peer may have written into a SinkAvail's pages */
		if (reg->sink && success)
			set_page_dirty_lock(reg->pages[i]);
		put_page(reg->pages[i]);
	}
	if (reg->uarg)
		reg->uarg->callback(NULL, reg->uarg, success);
	else
		mm_unaccount_pinned_pages(&reg->mmp);
	reg->uarg = NULL;
	reg->npages = 0;
	reg->state = SDP_ZC_REG_FREE;
	if (!reg->sink) {
		ssk->zc_src_count--;
		ssk->zc_src_bytes -= reg->len;
	}
	reg->sink = false;
	sdp_zc_wake(&ssk->sk);
}

/* A registration not in use, or NULL. */
struct sdp_zc_reg *sdp_zc_free_reg(struct sdp_zc *zc)
{
	int i;

	for (i = 0; i < zc->nregs; i++)
		if (zc->reg[i].state == SDP_ZC_REG_FREE)
			return &zc->reg[i];
	return NULL;
}

/* A key the peer cannot predict: the consumer-owned byte of the MR's key
 * is drawn at random (never the one just used), where ib_inc_rkey() would
 * step it by one.  The key is also valid on this connection's QP alone
 * (its own PD), so a key seen once helps no other connection.
 */
static void sdp_zc_new_key(struct ib_mr *mr)
{
	u8 key = get_random_u32() & 0xff;

	if (key == (mr->rkey & 0xff))
		key++;
	ib_update_fast_reg_key(mr, key);
}

/* The address the peer is given says nothing about our memory: the device
 * maps the registration at the DMA address of its first byte (on a
 * software device, a kernel virtual address); a random page-aligned base
 * in the lower half of the space replaces all but the offset into the
 * first page, which the device's page list relies on.  Registrations are
 * at most SDP_ZC_REG_PAGES long, far from wrapping.
 */
static void sdp_zc_hide_iova(struct ib_mr *mr)
{
	u64 base = get_random_u64() & GENMASK_ULL(62, PAGE_SHIFT);

	mr->iova = base | (mr->iova & ~PAGE_MASK);
}

/* Pin the next part of @iter (one contiguous user range, as much as one MR
 * maps), charge it to RLIMIT_MEMLOCK unless @uarg does, map it and
 * register it for the peer with @access over exactly those bytes (a fresh
 * key).  The iterator moves past it.  Returns the bytes registered or a
 * negative errno (-ENOBUFS past the limit).
 */
ssize_t sdp_zc_register(struct sdp_sock *ssk, struct sdp_zc *zc,
			struct sdp_zc_reg *reg, struct iov_iter *iter,
			struct ubuf_info *uarg, int access)
{
	enum dma_data_direction dir = reg->sink ? DMA_FROM_DEVICE :
						  DMA_TO_DEVICE;
	struct ib_device *dev = ssk->sdev->ibdev;
	struct ib_reg_wr rwr = {};
	size_t off, left;
	ssize_t n;
	int i, err;

	n = iov_iter_get_pages2(iter, reg->pages, zc->reg_pages * PAGE_SIZE,
				zc->reg_pages, &off);
	if (n <= 0)
		return n ? n : -EFAULT;
	reg->npages = DIV_ROUND_UP(off + n, PAGE_SIZE);
	reg->mmp.user = NULL;
	if (!uarg && mm_account_pinned_pages(&reg->mmp, n)) {
		err = -ENOBUFS;
		goto err_pages;
	}

	sg_init_table(reg->sg, reg->npages);
	for (i = 0, left = n; i < reg->npages; i++) {
		size_t o = i ? 0 : off, l = min_t(size_t, left, PAGE_SIZE - o);

		sg_set_page(&reg->sg[i], reg->pages[i], l, o);
		left -= l;
	}
	err = -ENOMEM;
	reg->nents = ib_dma_map_sg(dev, reg->sg, reg->npages, dir);
	if (!reg->nents)
		goto err_account;
	sdp_zc_new_key(reg->mr);
	if (ib_map_mr_sg(reg->mr, reg->sg, reg->nents, NULL, PAGE_SIZE) !=
	    reg->nents)
		goto err_map;
	sdp_zc_hide_iova(reg->mr);

	rwr.wr.opcode = IB_WR_REG_MR;
	rwr.wr.wr_cqe = &zc->reg_mr_cqe;
	rwr.mr = reg->mr;
	rwr.key = reg->mr->rkey;
	rwr.access = access;
	err = ib_post_send(ssk->qp, &rwr.wr, NULL);
	if (err)
		goto err_map;
	reg->len = n;
	reg->done = 0;
	reg->uarg = uarg;
	if (uarg)
		net_zcopy_get(uarg);
	reg->state = SDP_ZC_REG_ADVERTISED;
	return n;

err_map:
	ib_dma_unmap_sg(dev, reg->sg, reg->npages, dir);
err_account:
	if (!uarg)
		mm_unaccount_pinned_pages(&reg->mmp);
err_pages:
	for (i = 0; i < reg->npages; i++)
		put_page(reg->pages[i]);
	reg->npages = 0;
	iov_iter_revert(iter, n);
	return err;
}

/* A SrcAvail is over: invalidate its key; its pages go once that is done. */
int sdp_zc_invalidate(struct sdp_sock *ssk, struct sdp_zc_reg *reg)
{
	struct ib_send_wr wr = {
		.opcode		= IB_WR_LOCAL_INV,
		.send_flags	= IB_SEND_SIGNALED,
		.wr_cqe		= &reg->b.cqe,
		.ex.invalidate_rkey = reg->mr->rkey,
	};

	list_del_init(&reg->node);
	reg->state = SDP_ZC_REG_INVALIDATING;
	return ib_post_send(ssk->qp, &wr, NULL);
}

/**
 * sdp_zc_revoke - invalidate every key still advertised
 * @ssk: the socket, locked, with a usable connection
 *
 * Before an Abort, which is fenced behind these invalidations: the peer
 * must not hear of the end while a key of ours still works.
 */
void sdp_zc_revoke(struct sdp_sock *ssk)
{
	struct sdp_zc_reg *reg, *tmp;

	if (!ssk->zc)
		return;
	list_for_each_entry_safe(reg, tmp, &ssk->zc->src, node)
		if (sdp_zc_invalidate(ssk, reg))
			break;	/* the QP is gone: the teardown deregisters */
}

/* Completion of a LOCAL_INV or of an RDMA READ op. */
void sdp_zc_complete(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_zc_reg *reg;
	struct sdp_zc_rw *rw;

	if (buf->kind == SDP_BUF_ZC_REG) {
		reg = container_of(buf, struct sdp_zc_reg, b);
		sdp_tx_status(ssk, buf);
		/* not invalidated (flushed): the teardown deregisters the
		 * MR before it lets the pages go
		 */
		if (reg->state != SDP_ZC_REG_INVALIDATING ||
		    buf->status != IB_WC_SUCCESS)
			return;
		if (reg->sink) {
			/* its reader dirties the pages, in process context */
			reg->state = SDP_ZC_REG_INVALIDATED;
			sdp_zc_wake(&ssk->sk);
			return;
		}
		sdp_zc_reg_finish(ssk, reg, true);
		return;
	}

	rw = container_of(buf, struct sdp_zc_rw, b);
	/* the device is done with the pages: unmap them here; the waiting
	 * reader puts them (it may sleep to dirty them)
	 */
	rdma_rw_ctx_destroy(&rw->ctx, ssk->qp, ssk->port_num, rw->sg, rw->nsg,
			    rw->dir);
	rw->busy = false;
	if (buf->status == IB_WC_REM_ACCESS_ERR ||
	    buf->status == IB_WC_REM_INV_REQ_ERR) {
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_PROTO_ERRORS);
		net_warn_ratelimited("ib_sdp: RDMA %s refused by the peer (%s), connection aborted\n",
				     rw->dir == DMA_FROM_DEVICE ? "READ" : "WRITE",
				     ib_wc_status_msg(buf->status));
		sdp_conn_abort(ssk, ECONNRESET, true);
	} else {
		sdp_tx_status(ssk, buf);
	}
	sdp_zc_wake(&ssk->sk);
}

/* A bounce buffer for up to @want bytes, as large as memory allows. */
struct sdp_buf *sdp_bounce_alloc(struct sdp_sock *ssk, u32 want)
{
	struct sdp_buf *b = kzalloc(sizeof(*b), GFP_KERNEL);
	u32 size = min_t(u32, roundup_pow_of_two(want), SDP_ZC_CHUNK);

	if (!b)
		return NULL;
	/* large sizes only if they come easily; a page at most must */
	for (;;) {
		b->data = kmalloc(size, size > PAGE_SIZE ?
				  GFP_KERNEL | __GFP_NOWARN | __GFP_NORETRY :
				  GFP_KERNEL);
		if (b->data || size <= PAGE_SIZE)
			break;
		size /= 2;
	}
	if (!b->data) {
		kfree(b);
		return NULL;
	}
	b->ssk = ssk;
	b->kind = SDP_BUF_BOUNCE;
	b->size = size;
	b->len = min(want, size);
	INIT_LIST_HEAD(&b->list);
	return b;
}

void sdp_bounce_free(struct sdp_buf *b)
{
	kfree(b->data);
	kfree(b);
}

/* Post one op of @len bytes at the peer's @raddr: a READ into the user's
 * pages (@iter) or a new bounce buffer, or a WRITE from the user's pages.
 * Returns the bytes it covers or an errno.
 */
int sdp_zc_rw_prep(struct sdp_sock *ssk, struct sdp_zc_rw *rw,
		   struct iov_iter *iter, u32 len, u64 raddr, u32 rkey)
{
	u32 port = ssk->port_num;
	size_t off, left;
	ssize_t n;
	int i, ret;

	rw->bounce = NULL;
	rw->npages = 0;
	if (iter) {
		n = iov_iter_get_pages2(iter, rw->pages, len,
					SDP_ZC_CHUNK_PAGES, &off);
		if (n <= 0)
			return n ? n : -EFAULT;
		rw->npages = DIV_ROUND_UP(off + n, PAGE_SIZE);
		sg_init_table(rw->sg, rw->npages);
		for (i = 0, left = n; i < rw->npages; i++) {
			size_t o = i ? 0 : off;
			size_t l = min_t(size_t, left, PAGE_SIZE - o);

			sg_set_page(&rw->sg[i], rw->pages[i], l, o);
			left -= l;
		}
		rw->nsg = rw->npages;
	} else {
		rw->bounce = sdp_bounce_alloc(ssk, len);
		if (!rw->bounce)
			return -ENOMEM;
		n = rw->bounce->len;
		sg_init_one(rw->sg, rw->bounce->data, n);
		rw->nsg = 1;
	}
	ret = rdma_rw_ctx_init(&rw->ctx, ssk->qp, port, rw->sg, rw->nsg, 0,
			       raddr, rkey, rw->dir);
	if (ret < 0)
		goto err;
	ret = rdma_rw_ctx_post(&rw->ctx, ssk->qp, port, &rw->b.cqe, NULL);
	if (ret) {
		rdma_rw_ctx_destroy(&rw->ctx, ssk->qp, port, rw->sg, rw->nsg,
				    rw->dir);
		goto err;
	}
	rw->len = n;
	rw->busy = true;
	SDP_INC_STATS(sock_net(&ssk->sk), rw->dir == DMA_FROM_DEVICE ?
		      SDP_MIB_ZC_READS : SDP_MIB_ZC_WRITES);
	return n;
err:
	if (iter)
		iov_iter_revert(iter, n);
	for (i = 0; i < rw->npages; i++)
		put_page(rw->pages[i]);
	rw->npages = 0;
	if (rw->bounce)
		sdp_bounce_free(rw->bounce);
	rw->bounce = NULL;
	return ret;
}

bool sdp_zc_rw_idle(struct sdp_zc_rw *ops)
{
	int i;

	for (i = 0; i < SDP_ZC_RW_OPS; i++)
		if (READ_ONCE(ops[i].busy))
			return false;
	return true;
}

/**
 * sdp_zc_teardown - release the ZCopy state of a connection going away
 * @ssk: the socket, locked, its QP drained (no READ op is under way)
 *
 * The MRs are deregistered first, so no key of ours works any more,
 * then the pages still advertised are released.
 */
void sdp_zc_teardown(struct sdp_sock *ssk)
{
	struct sdp_zc *zc = ssk->zc;
	int i;

	if (!zc)
		return;
	for (i = 0; i < zc->nregs; i++) {
		ib_dereg_mr(zc->reg[i].mr);
		zc->reg[i].mr = NULL;
	}
	for (i = 0; i < zc->nregs; i++)
		if (zc->reg[i].state != SDP_ZC_REG_FREE)
			sdp_zc_reg_finish(ssk, &zc->reg[i], zc->reg[i].sink);
	zc->nregs = 0;
	INIT_LIST_HEAD(&zc->src);
	ssk->zc_cancel = false;
	ssk->zc_sinkavail = false;
	ssk->zc_sink_cancel = false;
	ssk->zc_cancel_ack = false;
	ssk->zc_wrcompl = 0;
	ssk->zc_peer_sink.valid = false;
	sdp_zc_wake(&ssk->sk);
}

/* At socket destruction, or before a new connection: nothing is in use. */
void sdp_zc_free(struct sdp_sock *ssk)
{
	kvfree(ssk->zc);
	ssk->zc = NULL;
}

void sdp_zc_init(struct sdp_sock *ssk)
{
	init_waitqueue_head(&ssk->zc_wait);
	INIT_DELAYED_WORK(&ssk->zc_work, sdp_zc_work);
}
