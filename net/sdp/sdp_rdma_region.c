// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: one-sided RDMA through the socket, the RDMA transport's half
 * (sdp_region.c has the calls; Documentation/sdp.rst, "One-sided RDMA";
 * Documentation/wire.rst, "RegionAdv").
 *
 * Objects, all in struct sdp_rg (conn->rg, allocated at first use):
 *  - a region of ours (struct sdp_rg_own, own[slot]): the caller's pages
 *    pinned FOLL_LONGTERM and charged to its RLIMIT_MEMLOCK, cut in
 *    segments of seg_len bytes, each mapped by a fast-registration MR
 *    of the connection's own PD (so its key works on this QP alone) with
 *    a random key and address.  REG_MRs are posted in batches of at most
 *    SDP_RG_BATCH, the last signaled (rg->batch), then a RegionAdv with
 *    the token, the keys and the slot goes on the send queue, behind
 *    every byte sent before and ahead of every byte sent after.
 *    SDP_REGION_DEREG (and close(), for all at once: sdp_rg_close())
 *    takes the RegionAdv back if it still waits on the send queue (the
 *    peer never hears of the region), else owes a RegionRevoke, which
 *    follows the RegionAdv, and waits for its RegionRevokeAck (or
 *    SDP_REGION_GRACE_MS); then it invalidates every key (LOCAL_INV
 *    batches), and only then unpins the pages.  If the teardown has
 *    begun, it waits for the teardown's drain to release them instead:
 *    no byte of a region moves once either call has returned.
 *  - a region of the peer's (struct sdp_rg_peer, peer[slot], from its
 *    RegionAdv): what an op needs to reach it.  A RegionRevoke marks it
 *    revoked; once no op of ours uses it, it goes and the RegionRevokeAck
 *    is owed (sdp_tx_owe(): sent when a control buffer is free).  Its
 *    slot is not the peer's to reuse before that answer is sent: a
 *    RegionAdv for it earlier is a protocol error, so at most one
 *    answer per slot is ever owed.
 *  - an op of ours (struct sdp_rg_op, ops[SDP_RG_OPS]): an RDMA WRITE or
 *    READ of up to SDP_ZC_CHUNK bytes of the caller's pages through
 *    rdma_rw (struct sdp_zc_rw, sdp_zcopy.c).  A blocking call waits for
 *    its ops and releases them; an op with a notification (MSG_ZEROCOPY,
 *    io_uring) is released by rg->work once it completed, in process
 *    context (a READ's pages are dirtied), and its reference on the
 *    notification dropped then.
 *
 * Locks and references: everything here runs under the socket lock (the
 * receive path's messages and completions too, sdp_rdma.c).  A caller
 * that sleeps (REG, DEREG, a blocking op) holds the connection
 * (sdp_region.c) and finds its objects again by slot after the sleep:
 * the teardown may have released them.  rg->busy lets one REG or DEREG
 * at a time sleep with a batch posted (the send queue has room for one,
 * sdp_qp_caps()).  rg->work holds the socket and the connection while
 * queued.  The teardown, its QP drained, deregisters every MR of ours
 * before it unpins any page, as ZCopy's does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/rw.h>

#include "sdp.h"
#include "sdp_zcopy.h"

#define SDP_RG_SEG_PAGES	512	/* pages one MR maps, at most */

enum { SDP_RG_LIVE = 1, SDP_RG_REVOKING };

struct sdp_rg_seg {
	struct ib_mr		*mr;
	struct scatterlist	*sg;
	int			npages;
	int			nents;	/* DMA-mapped */
};

struct sdp_rg_own {
	u64			token;
	u64			len;
	struct page		**pages;
	int			npages;
	struct mmpin		mmp;
	u32			access;	/* SDP_REGION_* */
	u32			seg_len;
	u32			first;	/* the first byte's offset in its page */
	int			nsegs;
	u8			state;
	struct sdp_rg_seg	segs[];
};

struct sdp_rg_key {
	u64	addr;
	u32	rkey;
};

struct sdp_rg_peer {
	u64			token;
	u64			len;
	u32			access;
	u32			first;
	u32			seg_len;
	u32			inflight;	/* ops of ours on it */
	u16			nkeys;
	u8			state;
	struct sdp_rg_key	keys[];
};

struct sdp_rg_op {
	struct sdp_zc_rw	rw;
	struct ubuf_info	*uarg;	/* the notification, or NULL */
	u8			slot;	/* the peer's region */
	bool			used;
	bool			waiter;	/* its caller releases it */
};

struct sdp_rg {
	struct sdp_rg_own	*own[SDP_REGIONS_MAX];
	struct sdp_rg_peer	*peer[SDP_REGIONS_MAX];
	struct sdp_rg_op	*ops;		/* SDP_RG_OPS, at the first op */
	struct sdp_buf		batch;		/* a batch's last work request */
	struct ib_cqe		quiet;		/* the others: only errors */
	bool			batch_busy;
	bool			busy;		/* a REG or DEREG sleeps */
	u16			dead;		/* slots of ours never reused */
	u16			acked;		/* RegionRevokeAcks come, by slot */
	struct sdp_conn		*conn;
	struct work_struct	work;
};

static void sdp_rg_work(struct work_struct *work);

/* A batch's unsignaled work requests complete only in error, and the QP
 * is in error then: the batch's last one says so.
 */
static void sdp_rg_quiet_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

/* The connection's region state, allocated now if need be. */
static struct sdp_rg *sdp_rg_get(struct sdp_sock *ssk, struct sdp_conn *conn,
				 gfp_t gfp)
{
	struct sdp_rg *rg = conn->rg;

	if (rg)
		return rg;
	rg = kzalloc(sizeof(*rg), gfp);
	if (!rg)
		return NULL;
	sdp_buf_init(ssk, &rg->batch, SDP_BUF_RG);
	rg->quiet.done = sdp_rg_quiet_done;
	rg->conn = conn;
	INIT_WORK(&rg->work, sdp_rg_work);
	conn->rg = rg;
	return rg;
}

/* The completion of a batch's last work request. */
void sdp_rg_batch_done(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_rg *rg = container_of(buf, struct sdp_rg, batch);

	WRITE_ONCE(rg->batch_busy, false);
	sdp_zc_wake(&ssk->sk);
}

static bool sdp_rg_batch_idle(void *arg)
{
	return !READ_ONCE(((struct sdp_rg *)arg)->batch_busy);
}

/* Post a chain of REG_MRs or LOCAL_INVs, the last signaled, and wait for
 * it (the socket lock dropped).  Return: 0, or a negative errno (the
 * connection failed: its teardown releases what is left).
 */
static int sdp_rg_batch(struct sdp_sock *ssk, struct sdp_rg *rg,
			struct ib_send_wr *first, struct ib_send_wr *last)
{
	struct sdp_conn *conn = rg->conn;
	int err;

	if (!sdp_conn_usable(ssk) || !sdp_conn_same(ssk, conn))
		return -EPIPE;
	last->wr_cqe = &rg->batch.cqe;
	last->send_flags |= IB_SEND_SIGNALED;
	rg->batch_busy = true;
	err = sdp_qp_post_send(conn->qp, first, NULL);
	if (err) {
		rg->batch_busy = false;
		sdp_conn_abort(ssk, ECONNRESET, false);
		return err;
	}
	sdp_sq_posted(ssk);
	sdp_zc_wait(ssk, sdp_rg_batch_idle, rg);
	/* the teardown may have come before we had the lock again */
	if (rg->batch.status != IB_WC_SUCCESS || !sdp_conn_usable(ssk) ||
	    !sdp_conn_same(ssk, conn))
		return -EPIPE;
	return 0;
}

/* ---- regions of ours ---------------------------------------------------- */

/* A region the peer may only READ is pinned without FOLL_WRITE: nothing
 * may write into its pages, not a swiotlb bounce copied back at unmap,
 * nor the device (no IB_ACCESS_LOCAL_WRITE).
 */
static enum dma_data_direction sdp_rg_dma_dir(const struct sdp_rg_own *own)
{
	return own->access & SDP_REGION_WRITE ? DMA_BIDIRECTIONAL :
						DMA_TO_DEVICE;
}

/* Release a region whose keys are dead (invalidated, or their MRs
 * deregistered): its mappings, MRs, pages and charge.
 */
static void sdp_rg_own_free(struct sdp_conn *conn, struct sdp_rg_own *own)
{
	struct ib_device *dev = conn->sdev ? conn->sdev->ibdev : NULL;
	int i;

	for (i = 0; i < own->nsegs; i++) {
		struct sdp_rg_seg *seg = &own->segs[i];

		if (seg->mr)
			ib_dereg_mr(seg->mr);
		if (seg->nents && dev)
			ib_dma_unmap_sg(dev, seg->sg, seg->npages,
					sdp_rg_dma_dir(own));
		kvfree(seg->sg);
	}
	if (own->npages)
		sdp_zc_unpin(own->pages, own->npages,
			     own->access & SDP_REGION_WRITE);
	if (own->mmp.user)
		mm_unaccount_pinned_pages(&own->mmp);
	kvfree(own->pages);
	kvfree(own);
}

/* Map segment @k and register it: its REG_MR in @wr. */
static int sdp_rg_seg_map(struct sdp_conn *conn, struct sdp_rg_own *own,
			  int k, int seg_pages, struct ib_reg_wr *wr)
{
	struct ib_device *dev = conn->sdev->ibdev;
	struct sdp_rg_seg *seg = &own->segs[k];
	u64 left = own->first + own->len - (u64)k * own->seg_len;
	int i, access = 0;

	seg->npages = min_t(u64, seg_pages, DIV_ROUND_UP(left, PAGE_SIZE));
	seg->sg = kvmalloc_array(seg->npages, sizeof(*seg->sg),
				 GFP_KERNEL_ACCOUNT);
	if (!seg->sg)
		return -ENOMEM;
	sg_init_table(seg->sg, seg->npages);
	for (i = 0; i < seg->npages; i++) {
		u32 off = !k && !i ? own->first : 0;
		u32 n = min_t(u64, PAGE_SIZE - off,
			      left - (u64)i * PAGE_SIZE - off);

		sg_set_page(&seg->sg[i], own->pages[k * seg_pages + i], n, off);
	}
	seg->nents = ib_dma_map_sg(dev, seg->sg, seg->npages,
				   sdp_rg_dma_dir(own));
	if (!seg->nents)
		return -ENOMEM;
	seg->mr = ib_alloc_mr(conn->pd, IB_MR_TYPE_MEM_REG, seg_pages);
	if (IS_ERR(seg->mr)) {
		int err = PTR_ERR(seg->mr);

		seg->mr = NULL;
		return err;
	}
	sdp_zc_new_key(seg->mr);
	if (ib_map_mr_sg(seg->mr, seg->sg, seg->nents, NULL, PAGE_SIZE) !=
	    seg->nents)
		return -EINVAL;
	sdp_zc_hide_iova(seg->mr);
	if (own->access & SDP_REGION_READ)
		access |= IB_ACCESS_REMOTE_READ;
	if (own->access & SDP_REGION_WRITE)	/* remote needs local */
		access |= IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE;
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode = IB_WR_REG_MR;
	wr->wr.wr_cqe = &conn->rg->quiet;
	wr->mr = seg->mr;
	wr->key = seg->mr->rkey;
	wr->access = access;
	return 0;
}

/* Map and register every segment, SDP_RG_BATCH REG_MRs at a time. */
static int sdp_rg_register(struct sdp_sock *ssk, struct sdp_rg *rg,
			   struct sdp_rg_own *own, int seg_pages)
{
	struct ib_reg_wr wrs[SDP_RG_BATCH];
	int k, n = 0, err;

	for (k = 0; k < own->nsegs; k++) {
		err = sdp_rg_seg_map(rg->conn, own, k, seg_pages, &wrs[n]);
		if (err)
			return err;
		if (n)
			wrs[n - 1].wr.next = &wrs[n].wr;
		if (++n < SDP_RG_BATCH && k + 1 < own->nsegs)
			continue;
		err = sdp_rg_batch(ssk, rg, &wrs[0].wr, &wrs[n - 1].wr);
		if (err)
			return err;
		n = 0;
	}
	return 0;
}

/* Invalidate every key of the region, SDP_RG_BATCH at a time. */
static int sdp_rg_invalidate(struct sdp_sock *ssk, struct sdp_rg *rg,
			     struct sdp_rg_own *own)
{
	struct ib_send_wr wrs[SDP_RG_BATCH];
	int k, n = 0, err;

	for (k = 0; k < own->nsegs; k++) {
		memset(&wrs[n], 0, sizeof(wrs[n]));
		wrs[n].opcode = IB_WR_LOCAL_INV;
		wrs[n].wr_cqe = &rg->quiet;
		wrs[n].ex.invalidate_rkey = own->segs[k].mr->rkey;
		if (n)
			wrs[n - 1].next = &wrs[n];
		if (++n < SDP_RG_BATCH && k + 1 < own->nsegs)
			continue;
		err = sdp_rg_batch(ssk, rg, &wrs[0], &wrs[n - 1]);
		if (err)
			return err;
		n = 0;
	}
	return 0;
}

static bool sdp_rg_buf_room(struct sdp_sock *ssk)
{
	return sdp_tx_buf_avail(ssk);
}

/* A send buffer for a RegionAdv on @conn, waiting for one if need be;
 * an error once the teardown has come.
 */
static struct sdp_buf *sdp_rg_buf(struct sdp_sock *ssk, struct sdp_conn *conn)
{
	long timeo = MAX_SCHEDULE_TIMEOUT;
	struct sdp_buf *buf;
	int err;

	for (;;) {
		if (!sdp_conn_usable(ssk) || !sdp_conn_same(ssk, conn))
			return ERR_PTR(-EPIPE);
		buf = sdp_tx_buf_avail(ssk) ? sdp_tx_buf_take(ssk) : NULL;
		if (buf)
			return buf;	/* or no memory */
		sdp_tx_flush(ssk);
		err = sdp_zc_wait_room(ssk, &timeo, sdp_rg_buf_room);
		if (err)
			return ERR_PTR(err);
	}
}

/* Queue the RegionAdv of @own (slot @slot) behind what was sent before. */
static int sdp_rg_advertise(struct sdp_sock *ssk, struct sdp_rg_own *own,
			    int slot)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_region_hdr *h;
	struct sdp_region_key *key;
	struct sdp_buf *buf;
	int k;

	/* the peer's smallest buffers take it (Hello's rcv_size) */
	if (sizeof(struct sdp_bsdh) + sizeof(*h) + own->nsegs * sizeof(*key) >
	    conn->tx_msg_min)
		return -EMSGSIZE;
	buf = sdp_rg_buf(ssk, conn);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	buf->mid = SDP_MID_REGION_ADV;
	buf->flags = 0;
	h = buf->data + sizeof(struct sdp_bsdh);
	h->id = cpu_to_be32(slot);
	h->access = cpu_to_be32(own->access);
	h->token = cpu_to_be64(own->token);
	h->len = cpu_to_be64(own->len);
	h->first = cpu_to_be32(own->first);
	h->seg_len = cpu_to_be32(own->seg_len);
	h->nkeys = cpu_to_be16(own->nsegs);
	h->reserved = 0;
	h->reserved2 = 0;
	key = (struct sdp_region_key *)(h + 1);
	for (k = 0; k < own->nsegs; k++) {
		key[k].addr = cpu_to_be64(own->segs[k].mr->iova);
		key[k].rkey = cpu_to_be32(own->segs[k].mr->rkey);
		key[k].reserved = 0;
	}
	buf->len = (void *)(key + own->nsegs) - buf->data;
	sdp_tx_flush(ssk);	/* sdp_tx_buf_take() queued it */
	return 0;
}

/* A random token no region of ours on this connection has. */
static u64 sdp_rg_new_token(struct sdp_rg *rg)
{
	u64 t;
	int i;

again:
	t = get_random_u64();
	if (!t)
		goto again;
	for (i = 0; i < SDP_REGIONS_MAX; i++)
		if (rg->own[i] && rg->own[i]->token == t)
			goto again;
	return t;
}

static bool sdp_rg_idle(void *arg)
{
	return !READ_ONCE(((struct sdp_rg *)arg)->busy);
}

/* Wait until no other REG or DEREG of this socket sleeps, then be it. */
static int sdp_rg_enter(struct sdp_sock *ssk, struct sdp_rg *rg)
{
	while (rg->busy) {
		sdp_zc_wait(ssk, sdp_rg_idle, rg);
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	rg->busy = true;
	return 0;
}

static void sdp_rg_leave(struct sdp_sock *ssk, struct sdp_rg *rg)
{
	rg->busy = false;
	sdp_zc_wake(&ssk->sk);
}

/* A free slot of ours, or -ENOBUFS. */
static int sdp_rg_free_slot(struct sdp_rg *rg)
{
	int i;

	for (i = 0; i < SDP_REGIONS_MAX; i++)
		if (!rg->own[i] && !(rg->dead & BIT(i)))
			return i;
	return -ENOBUFS;
}

static struct sdp_rg_own *sdp_rg_own_alloc(struct ib_device *dev,
					   const struct sdp_region *r,
					   int *seg_pages)
{
	struct sdp_rg_own *own;
	u32 first = offset_in_page(r->addr);
	int nsegs;

	*seg_pages = min_t(u32, SDP_RG_SEG_PAGES,
			   dev->attrs.max_fast_reg_page_list_len);
	if (*seg_pages < 2)
		return ERR_PTR(-EOPNOTSUPP);
	nsegs = DIV_ROUND_UP(first + r->len, (u64)*seg_pages * PAGE_SIZE);
	if (nsegs > SDP_REGION_KEYS_MAX)
		return ERR_PTR(-EINVAL);	/* too large for this device */
	own = kvzalloc(struct_size(own, segs, nsegs), GFP_KERNEL_ACCOUNT);
	if (!own)
		return ERR_PTR(-ENOMEM);
	own->len = r->len;
	own->access = r->access;
	own->first = first;
	own->seg_len = *seg_pages * PAGE_SIZE;
	own->nsegs = nsegs;
	return own;
}

/**
 * sdp_rg_reg - the RDMA transport's ->region_reg(): SDP_REGION_REG
 * @ssk: the socket, locked, connected
 * @conn: its connection, held
 * @r: the region asked for (checked by sdp_region.c); its token filled in
 *
 * The region holds its slot from the start, so that a teardown while we
 * sleep finds and releases it (its MRs before the PD goes); after every
 * sleep, a slot that no longer holds it says the teardown came.
 *
 * Return: 0 or a negative errno.
 */
int sdp_rg_reg(struct sdp_sock *ssk, struct sdp_conn *conn,
	       struct sdp_region *r)
{
	struct sdp_rg_own *own;
	struct sdp_rg *rg;
	int slot, seg_pages, err;

	sdp_assert_locked(ssk);

	if (!(conn->peer_caps & SDP_CAP_REGIONS))
		return -EOPNOTSUPP;
	if (!sdp_conn_usable(ssk))
		return -EPIPE;
	rg = sdp_rg_get(ssk, conn, GFP_KERNEL);
	if (!rg)
		return -ENOMEM;
	err = sdp_rg_enter(ssk, rg);
	if (err)
		return err;
	slot = sdp_rg_free_slot(rg);
	own = slot < 0 ? ERR_PTR(slot) :
	      sdp_rg_own_alloc(conn->sdev->ibdev, r, &seg_pages);
	if (IS_ERR(own)) {
		sdp_rg_leave(ssk, rg);
		return PTR_ERR(own);
	}
	rg->own[slot] = own;	/* not LIVE: no token, not found */
	err = sdp_pin_user(r->addr, own->len, own->access & SDP_REGION_WRITE,
			   &own->pages, &own->npages, &own->mmp);
	if (!err)
		err = sdp_rg_register(ssk, rg, own, seg_pages);
	if (rg->own[slot] != own) {
		err = -EPIPE;		/* the teardown released it */
		goto out;
	}
	if (!err) {
		own->token = sdp_rg_new_token(rg);
		err = sdp_rg_advertise(ssk, own, slot);
		if (rg->own[slot] != own) {
			err = -EPIPE;	/* the teardown, while we waited */
			goto out;
		}
	}
	if (err) {
		/* its keys never reached the peer: deregistered, then freed */
		rg->own[slot] = NULL;
		sdp_rg_own_free(conn, own);
		goto out;
	}
	own->state = SDP_RG_LIVE;
	r->token = own->token;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RG_REGS);
out:
	sdp_rg_leave(ssk, rg);
	return err;
}

/* Wait for the peer's RegionRevokeAcks of the slots in @mask, up to
 * SDP_REGION_GRACE_MS.  The regions themselves may be freed meanwhile
 * (the teardown): only @rg, which the held connection keeps, is looked
 * at.
 */
static void sdp_rg_wait_acks(struct sdp_sock *ssk, struct sdp_rg *rg,
			     unsigned long mask)
{
	struct sock *sk = &ssk->sk;
	long left;

	release_sock(sk);
	left = wait_event_killable_timeout(ssk->zc_wait,
					   (READ_ONCE(rg->acked) & mask) == mask ||
					   !sdp_conn_usable(ssk),
					   msecs_to_jiffies(SDP_REGION_GRACE_MS));
	lock_sock(sk);
	if (!left && (rg->acked & mask) != mask && sdp_conn_usable(ssk)) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_RG_REVOKE_TIMEOUTS);
		net_warn_ratelimited("peer did not answer a RegionRevoke: its key is invalidated anyway\n");
	}
}

/* The RegionAdv of @slot, if it still waits on the send queue (for
 * credits): taken off it, the peer never to hear of the region.
 */
static bool sdp_rg_unqueue_adv(struct sdp_sock *ssk, int slot)
{
	struct sdp_conn *conn = ssk->conn;
	const struct sdp_region_hdr *h;
	struct sdp_buf *buf;

	list_for_each_entry(buf, &conn->tx_queue, list) {
		h = buf->data + sizeof(struct sdp_bsdh);
		if (buf->mid != SDP_MID_REGION_ADV ||
		    be32_to_cpu(h->id) != slot)
			continue;
		list_move(&buf->list, &conn->tx_free);
		WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree + 1);
		return true;
	}
	return false;
}

struct sdp_rg_close {
	struct sdp_rg		*rg;
	unsigned long		mask;	/* its slots that close() ends */
};

struct sdp_rg_gone {
	struct sdp_rg		*rg;
	struct sdp_rg_own	*own;
	int			slot;
};

static bool sdp_rg_is_gone(void *arg)
{
	struct sdp_rg_gone *g = arg;

	return READ_ONCE(g->rg->own[g->slot]) != g->own;
}

/* The teardown has begun: its drain ends every access to the region,
 * then it releases it.  Wait for that (a kill resets the connection, and
 * the drain still comes first), so that no byte of it moves afterwards.
 */
static void sdp_rg_wait_teardown(struct sdp_sock *ssk, struct sdp_rg *rg,
				 int slot, struct sdp_rg_own *own)
{
	struct sdp_rg_gone g = { .rg = rg, .own = own, .slot = slot };

	if (!sdp_rg_is_gone(&g))
		sdp_zc_wait(ssk, sdp_rg_is_gone, &g);
}

/* The peer may hold @own's keys: revoke them, wait for its answer (or
 * SDP_REGION_GRACE_MS), invalidate them.  Return: 0, or -EPIPE if the
 * teardown came meanwhile (it releases the region).
 */
static int sdp_rg_revoke(struct sdp_sock *ssk, struct sdp_rg *rg, int slot,
			 struct sdp_rg_own *own)
{
	/* at most one per slot of ours and one per slot of the peer's is
	 * ever owed (sdp_rg_rx_adv(), sdp_rg_rx()): no room cannot be; and
	 * without the RegionRevoke the peer keeps the slot: ours is never
	 * reused
	 */
	if (sdp_tx_owe(ssk, SDP_MID_REGION_REVOKE, slot)) {
		rg->dead |= BIT(slot);
	} else {
		sdp_rg_wait_acks(ssk, rg, BIT(slot));
		if (rg->own[slot] != own)
			return -EPIPE;
		if (!(rg->acked & BIT(slot)))
			rg->dead |= BIT(slot);	/* the peer may still have it */
	}
	if (sdp_rg_invalidate(ssk, rg, own) || rg->own[slot] != own)
		return -EPIPE;
	return 0;
}

/**
 * sdp_rg_dereg - the RDMA transport's ->region_dereg(): SDP_REGION_DEREG
 * @ssk: the socket, locked
 * @conn: its connection, held
 * @token: the region's
 *
 * The peer learns of it (its RegionAdv still queued is taken back, else a
 * RegionRevoke goes, behind the RegionAdv), then its keys are
 * invalidated, and only then are its pages released; or the teardown,
 * if it came, drains the QP and releases them, which we wait for.
 *
 * Return: 0 once no byte of the region can move any more, or -ENOENT,
 * -EINTR (killed before it began).
 */
int sdp_rg_dereg(struct sdp_sock *ssk, struct sdp_conn *conn, u64 token)
{
	struct sdp_rg *rg = conn->rg;
	struct sdp_rg_own *own = NULL;
	int slot, err;

	sdp_assert_locked(ssk);

	for (slot = 0; rg && slot < SDP_REGIONS_MAX; slot++) {
		own = rg->own[slot];
		if (own && own->token == token && own->state == SDP_RG_LIVE)
			break;
	}
	if (!rg || slot == SDP_REGIONS_MAX)
		return -ENOENT;
	own->state = SDP_RG_REVOKING;	/* no second DEREG of it */
	err = sdp_rg_enter(ssk, rg);
	if (err) {
		if (rg->own[slot] == own)
			own->state = SDP_RG_LIVE;	/* as it was */
		return err;
	}
	if (rg->own[slot] != own)
		goto out;	/* the teardown released it */
	rg->acked &= ~BIT(slot);
	if (!sdp_conn_usable(ssk) || !sdp_conn_same(ssk, conn) ||
	    (!sdp_rg_unqueue_adv(ssk, slot) &&
	     sdp_rg_revoke(ssk, rg, slot, own))) {
		sdp_rg_wait_teardown(ssk, rg, slot, own);
		goto out;
	}
	rg->own[slot] = NULL;
	sdp_rg_own_free(conn, own);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RG_DEREGS);
out:
	sdp_rg_leave(ssk, rg);
	return 0;
}

/* Is no region of ours left in the slots close() ends? */
static bool sdp_rg_all_gone(void *arg)
{
	struct sdp_rg_close *c = arg;
	int slot;

	for (slot = 0; slot < SDP_REGIONS_MAX; slot++)
		if ((c->mask & BIT(slot)) && READ_ONCE(c->rg->own[slot]))
			return false;
	return true;
}

/* A region of ours that close() ends: off the send queue if its RegionAdv
 * still waits there (freed now), else its RegionRevoke owed.  Return:
 * whether it was revoked.
 */
static bool sdp_rg_close_one(struct sdp_sock *ssk, struct sdp_rg *rg,
			     int slot)
{
	struct sdp_rg_own *own = rg->own[slot];

	own->state = SDP_RG_REVOKING;
	rg->acked &= ~BIT(slot);
	if (sdp_rg_unqueue_adv(ssk, slot)) {
		rg->own[slot] = NULL;
		sdp_rg_own_free(ssk->conn, own);
		return false;
	}
	if (sdp_tx_owe(ssk, SDP_MID_REGION_REVOKE, slot)) {
		rg->dead |= BIT(slot);	/* as sdp_rg_revoke() */
		return false;
	}
	return true;
}

/**
 * sdp_rg_close - the RDMA transport's ->region_close(): close() ends every
 *	region of ours, as SDP_REGION_DEREG would, all at once
 * @ssk: the socket, locked, its file being released
 * @conn: its connection, held
 *
 * Revoked together (one grace for all), then invalidated and released; or
 * released by the teardown, if it came, whose drain we wait for; a peer
 * that does not answer within the grace has the connection reset, for
 * its drain is bounded where our LOCAL_INVs could wait behind a stalled
 * send queue.  No byte of them moves once this returns.
 */
void sdp_rg_close(struct sdp_sock *ssk, struct sdp_conn *conn)
{
	struct sdp_rg_close c = { .rg = conn->rg };
	unsigned long revoked = 0;
	struct sdp_rg_own *own;
	int slot;

	sdp_assert_locked(ssk);

	if (!c.rg || sdp_rg_enter(ssk, c.rg))
		return;
	for (slot = 0; slot < SDP_REGIONS_MAX; slot++) {
		if (!c.rg->own[slot] || c.rg->own[slot]->state != SDP_RG_LIVE)
			continue;
		c.mask |= BIT(slot);
		if (sdp_conn_usable(ssk) && sdp_conn_same(ssk, conn) &&
		    sdp_rg_close_one(ssk, c.rg, slot))
			revoked |= BIT(slot);
	}
	if (revoked)
		sdp_rg_wait_acks(ssk, c.rg, revoked);
	/* A peer silent for the grace may keep our send queue stalled too
	 * (RNR for ever), and the LOCAL_INVs behind it: close() resets the
	 * connection it was ending anyway, and the drain ends every access.
	 */
	if ((c.rg->acked & revoked) != revoked && sdp_conn_usable(ssk) &&
	    sdp_conn_same(ssk, conn))
		sdp_conn_abort(ssk, ECONNRESET, true);
	for (slot = 0; slot < SDP_REGIONS_MAX; slot++) {
		own = c.rg->own[slot];
		if (!(c.mask & BIT(slot)) || !own || !sdp_conn_usable(ssk) ||
		    !sdp_conn_same(ssk, conn))
			continue;
		if (sdp_rg_invalidate(ssk, c.rg, own) || c.rg->own[slot] != own)
			continue;	/* the teardown came */
		c.rg->own[slot] = NULL;
		sdp_rg_own_free(conn, own);
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RG_DEREGS);
	}
	if (!sdp_rg_all_gone(&c))
		sdp_zc_wait(ssk, sdp_rg_all_gone, &c);
	sdp_rg_leave(ssk, c.rg);
}

/* ---- regions of the peer's ---------------------------------------------- */

/* Check a RegionAdv's header against its length; NULL if it is good. */
static const char *sdp_rg_adv_check(const struct sdp_region_hdr *h, u32 len)
{
	u64 rlen = be64_to_cpu(h->len);
	u32 seg_len = be32_to_cpu(h->seg_len), first = be32_to_cpu(h->first);
	u32 access = be32_to_cpu(h->access), nkeys = be16_to_cpu(h->nkeys);

	if (be32_to_cpu(h->id) >= SDP_REGIONS_MAX)
		return "RegionAdv slot";
	if (!access || access & ~(SDP_REGION_READ | SDP_REGION_WRITE))
		return "RegionAdv access";
	if (!rlen || rlen > SDP_REGION_MAX_LEN || !h->token)
		return "RegionAdv length or token";
	if (seg_len < 4096 || seg_len % 4096 || seg_len > SZ_1G ||
	    first >= seg_len)
		return "RegionAdv segments";
	if (!nkeys || nkeys > SDP_REGION_KEYS_MAX ||
	    nkeys != DIV_ROUND_UP(first + rlen, (u64)seg_len))
		return "RegionAdv key count";
	if (len != sizeof(struct sdp_bsdh) + sizeof(*h) +
		   nkeys * sizeof(struct sdp_region_key))
		return "RegionAdv message length";
	return NULL;
}

static const char *sdp_rg_rx_adv(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	const struct sdp_region_hdr *h = buf->data + sizeof(struct sdp_bsdh);
	const struct sdp_region_key *key = (const void *)(h + 1);
	struct sdp_rg_peer *p;
	struct sdp_rg *rg;
	const char *bad;
	u32 slot;
	int i;

	if (buf->len < sizeof(struct sdp_bsdh) + sizeof(*h))
		return "RegionAdv message length";
	bad = sdp_rg_adv_check(h, buf->len);
	if (bad)
		return bad;
	slot = be32_to_cpu(h->id);
	rg = sdp_rg_get(ssk, ssk->conn, GFP_ATOMIC);
	/* in use until the peer has our RegionRevokeAck, which is still
	 * ours to send: else a peer could have them pile up unsent
	 */
	if ((rg && rg->peer[slot]) ||
	    sdp_tx_owed(ssk, SDP_MID_REGION_REVOKE_ACK, slot))
		return "RegionAdv for a slot in use";
	for (i = 0; rg && i < SDP_REGIONS_MAX; i++)
		if (rg->peer[i] &&
		    rg->peer[i]->token == be64_to_cpu(h->token))
			return "RegionAdv token in use";
	p = rg ? kzalloc(struct_size(p, keys, be16_to_cpu(h->nkeys)),
			 GFP_ATOMIC) : NULL;
	if (!p) {
		/* not the peer's fault, but it counts on the region */
		sdp_conn_abort(ssk, ENOMEM, true);
		return NULL;
	}
	p->token = be64_to_cpu(h->token);
	p->len = be64_to_cpu(h->len);
	p->access = be32_to_cpu(h->access);
	p->first = be32_to_cpu(h->first);
	p->seg_len = be32_to_cpu(h->seg_len);
	p->nkeys = be16_to_cpu(h->nkeys);
	for (i = 0; i < p->nkeys; i++) {
		p->keys[i].addr = be64_to_cpu(key[i].addr);
		p->keys[i].rkey = be32_to_cpu(key[i].rkey);
	}
	p->state = SDP_RG_LIVE;
	rg->peer[slot] = p;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RG_PEER_REGIONS);
	return NULL;
}

/* A region of the peer's no op of ours uses any more, after its
 * RegionRevoke: it goes, and the answer is owed.
 */
static void sdp_rg_peer_gone(struct sdp_sock *ssk, struct sdp_rg *rg,
			     int slot)
{
	kfree(rg->peer[slot]);
	rg->peer[slot] = NULL;
	/* at most one per slot is owed: room enough (SDP_CTRL_OWED) */
	sdp_tx_owe(ssk, SDP_MID_REGION_REVOKE_ACK, slot);
}

/**
 * sdp_rg_rx - a RegionAdv, RegionRevoke or RegionRevokeAck received
 * @ssk: the socket, locked
 * @buf: the message (sdp_rx_check() passed it), posted again after this
 *
 * Return: NULL, or what was wrong with it (the caller aborts).
 */
const char *sdp_rg_rx(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	const struct sdp_bsdh *h = buf->data;
	struct sdp_rg *rg = ssk->conn->rg;
	struct sdp_rg_own *own;
	u32 slot;

	sdp_assert_locked(ssk);

	if (h->mid == SDP_MID_REGION_ADV)
		return sdp_rg_rx_adv(ssk, buf);
	slot = be32_to_cpu(((const struct sdp_size_hdr *)(h + 1))->size);
	if (h->mid == SDP_MID_REGION_REVOKE) {
		if (slot >= SDP_REGIONS_MAX || !rg || !rg->peer[slot] ||
		    rg->peer[slot]->state != SDP_RG_LIVE)
			return "RegionRevoke for no region";
		rg->peer[slot]->state = SDP_RG_REVOKING;
		if (!rg->peer[slot]->inflight)
			sdp_rg_peer_gone(ssk, rg, slot);
		return NULL;
	}
	if (slot >= SDP_REGIONS_MAX ||
	    sdp_tx_owed(ssk, SDP_MID_REGION_REVOKE, slot))
		return "RegionRevokeAck not asked for";	/* not sent yet */
	own = rg ? rg->own[slot] : NULL;
	if (!own && rg && (rg->dead & BIT(slot))) {
		rg->dead &= ~BIT(slot);	/* late, but the slot is free again */
		return NULL;
	}
	if (!own || own->state != SDP_RG_REVOKING || (rg->acked & BIT(slot)))
		return "RegionRevokeAck not asked for";
	rg->acked |= BIT(slot);
	sdp_zc_wake(&ssk->sk);
	return NULL;
}

/* ---- ops of ours -------------------------------------------------------- */

/* An op is over (completed or flushed, not stuck): its pages go, its
 * notification hears of it, its region may go.
 */
static void sdp_rg_op_release(struct sdp_sock *ssk, struct sdp_rg *rg,
			      struct sdp_rg_op *op)
{
	bool ok = op->rw.b.status == IB_WC_SUCCESS;
	struct sdp_rg_peer *p = rg->peer[op->slot];

	sdp_zc_rw_release(&op->rw, NULL, ok);
	if (op->uarg)
		sdp_ubuf_complete(op->uarg, ok);
	op->uarg = NULL;
	op->used = false;
	if (p && !--p->inflight && p->state == SDP_RG_REVOKING)
		sdp_rg_peer_gone(ssk, rg, op->slot);
	sdp_zc_wake(&ssk->sk);
}

/* The ops nobody waits for that are over. */
static void sdp_rg_reap(struct sdp_sock *ssk, struct sdp_rg *rg)
{
	int i;

	for (i = 0; rg->ops && i < SDP_RG_OPS; i++) {
		struct sdp_rg_op *op = &rg->ops[i];

		if (op->used && !op->waiter && !READ_ONCE(op->rw.busy) &&
		    !op->rw.stuck)
			sdp_rg_op_release(ssk, rg, op);
	}
}

static void sdp_rg_work(struct work_struct *work)
{
	struct sdp_rg *rg = container_of(work, struct sdp_rg, work);
	struct sdp_conn *conn = rg->conn;
	struct sdp_sock *ssk = conn->ssk;

	lock_sock(&ssk->sk);
	sdp_rg_reap(ssk, rg);
	sdp_conn_put(conn);
	release_sock(&ssk->sk);
	sock_put(&ssk->sk);
}

/* An op's completion came (its rw.done, from sdp_zc_complete()): the
 * socket locked, the op no longer busy.
 */
static void sdp_rg_op_done(struct sdp_sock *ssk, struct sdp_zc_rw *rw)
{
	struct sdp_rg_op *op = container_of(rw, struct sdp_rg_op, rw);
	struct sdp_conn *conn = ssk->conn;

	if (op->waiter || !conn->rg)
		return;		/* its caller is woken */
	/* a READ's pages are dirtied in process context */
	if (queue_work(system_wq, &conn->rg->work)) {
		sock_hold(&ssk->sk);
		kref_get(&conn->ref);
	}
}

/* The slot of the peer's region @token, or -ENOENT. */
static int sdp_rg_find(struct sdp_rg *rg, u64 token)
{
	int i;

	for (i = 0; rg && i < SDP_REGIONS_MAX; i++)
		if (rg->peer[i] && rg->peer[i]->token == token &&
		    rg->peer[i]->state == SDP_RG_LIVE)
			return i;
	return -ENOENT;
}

/* An op slot free now, or NULL. */
static struct sdp_rg_op *sdp_rg_free_op(struct sdp_rg *rg)
{
	int i;

	for (i = 0; i < SDP_RG_OPS; i++)
		if (!rg->ops[i].used)
			return &rg->ops[i];
	return NULL;
}

struct sdp_rg_call {
	struct sdp_rg	*rg;
	u32		mine;	/* the ops of this call, by index */
};

/* For a waiting caller: is one of its ops over, or any op slot free? */
static bool sdp_rg_call_progress(void *arg)
{
	struct sdp_rg_call *c = arg;
	int i;

	for (i = 0; i < SDP_RG_OPS; i++)
		if (!READ_ONCE(c->rg->ops[i].used) ||
		    ((c->mine & BIT(i)) && !READ_ONCE(c->rg->ops[i].rw.busy)))
			return true;
	return false;
}

static bool sdp_rg_call_over(void *arg)
{
	struct sdp_rg_call *c = arg;
	int i;

	for (i = 0; i < SDP_RG_OPS; i++)
		if ((c->mine & BIT(i)) && READ_ONCE(c->rg->ops[i].rw.busy))
			return false;
	return true;
}

/* A blocking caller's ops that are over: released.  Return: false if
 * one failed.
 */
static bool sdp_rg_call_reap(struct sdp_sock *ssk, struct sdp_rg_call *c)
{
	bool ok = true;
	int i;

	for (i = 0; i < SDP_RG_OPS; i++) {
		struct sdp_rg_op *op = &c->rg->ops[i];

		if (!(c->mine & BIT(i)) || op->rw.busy || op->rw.stuck)
			continue;
		ok &= op->rw.b.status == IB_WC_SUCCESS;
		op->waiter = false;
		c->mine &= ~BIT(i);
		sdp_rg_op_release(ssk, c->rg, op);
	}
	return ok;
}

/* Where region byte @off lies: its key, the remote address, and how many
 * bytes from there are in the same MR.
 */
static u64 sdp_rg_remote(const struct sdp_rg_peer *p, u64 off, u32 *rkey,
			 u64 *room)
{
	u64 a = p->first + off;
	u32 k = div_u64(a, p->seg_len);
	u64 in = a - (u64)k * p->seg_len;

	*rkey = p->keys[k].rkey;
	*room = p->seg_len - in;
	return p->keys[k].addr + in - (k ? 0 : p->first);
}

/* Post one op of the call: up to @left bytes at @off. */
static ssize_t sdp_rg_post(struct sdp_sock *ssk, struct msghdr *msg,
			   struct sdp_rg_call *c, int slot, u64 off,
			   bool read, struct sdp_send *s)
{
	struct sdp_rg_peer *p = c->rg->peer[slot];
	struct sdp_rg_op *op = sdp_rg_free_op(c->rg);
	u64 room, raddr;
	u32 rkey;
	ssize_t n;

	if (!op)
		return 0;
	raddr = sdp_rg_remote(p, off, &rkey, &room);
	op->rw.dir = read ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	n = sdp_zc_rw_prep(ssk, &op->rw, &msg->msg_iter,
			   min_t(u64, min_t(u64, msg_data_left(msg), room),
				 SDP_ZC_CHUNK), raddr, rkey);
	if (n <= 0 && !op->rw.stuck)
		return n ? n : -EFAULT;
	/* posted, or posted in part: then it holds its slot, its pages, the
	 * region (inflight) and its caller or notification until the
	 * teardown's drain ends it, so that neither hears of its end
	 * while the device may still use the pages
	 */
	op->used = true;
	op->slot = slot;
	op->waiter = !s->uarg;
	op->uarg = s->uarg;
	if (op->uarg)
		net_zcopy_get(op->uarg);
	if (op->waiter)
		c->mine |= BIT(op - c->rg->ops);
	p->inflight++;
	if (n <= 0) {
		net_warn_ratelimited("RDMA op posted in part (%zd), connection reset\n",
				     n);
		sdp_conn_abort(ssk, ECONNRESET, false);
		return n;
	}
	SDP_ADD_STATS(sock_net(&ssk->sk), read ? SDP_MIB_RG_READ_BYTES :
		      SDP_MIB_RG_WRITE_BYTES, n);
	return n;
}

static int sdp_rg_ops_get(struct sdp_sock *ssk, struct sdp_rg *rg)
{
	int i;

	if (rg->ops)
		return 0;
	rg->ops = kvcalloc(SDP_RG_OPS, sizeof(*rg->ops), GFP_KERNEL_ACCOUNT);
	if (!rg->ops)
		return -ENOMEM;
	for (i = 0; i < SDP_RG_OPS; i++) {
		sdp_buf_init(ssk, &rg->ops[i].rw.b, SDP_BUF_ZC_RW);
		rg->ops[i].rw.done = sdp_rg_op_done;
	}
	return 0;
}

/* The checks of sdp_rg_op(): the slot of the peer's region, or an errno. */
static int sdp_rg_check(struct sdp_sock *ssk, struct msghdr *msg,
			const struct sdp_rdma *op)
{
	struct sdp_rg *rg = ssk->conn->rg;
	u64 n = msg_data_left(msg);
	int slot;

	if (!(ssk->conn->peer_caps & SDP_CAP_REGIONS))
		return -EOPNOTSUPP;
	/* after the peer's DisConn its regions are gone with its socket */
	if (!sdp_conn_usable(ssk) ||
	    test_bit(SDP_F_DISCONN_RCVD, &ssk->flags))
		return -EPIPE;
	slot = sdp_rg_find(rg, op->token);
	if (slot < 0)
		return slot;
	if (!(rg->peer[slot]->access & (op->op == SDP_RDMA_READ ?
					SDP_REGION_READ : SDP_REGION_WRITE)))
		return -EACCES;
	if (op->offset > rg->peer[slot]->len ||
	    n > rg->peer[slot]->len - op->offset)
		return -ERANGE;
	if (!iter_is_ubuf(&msg->msg_iter) && !iter_is_iovec(&msg->msg_iter))
		return -EINVAL;
	return sdp_rg_ops_get(ssk, rg) ?: slot;
}

/* Wait for an op slot, or, blocking, for the call's ops to be over. */
static int sdp_rg_wait(struct sdp_sock *ssk, struct sdp_rg_call *c,
		       bool over, long *timeo)
{
	if (!over && !*timeo)
		return -EAGAIN;
	if (signal_pending(current) && !over)
		return sock_intr_errno(*timeo);
	sdp_zc_wait(ssk, over ? sdp_rg_call_over : sdp_rg_call_progress, c);
	return 0;
}

/**
 * sdp_rg_op - the RDMA transport's ->rdma_op(): a WRITE or READ of a
 *	region of the peer's
 * @ssk: the socket, locked, connected
 * @msg: the caller's buffer (its iovec)
 * @op: the op asked for
 * @s: the send's state: @s->uarg its notification (MSG_ZEROCOPY or
 *	io_uring), else the call waits until its ops are over; @s->copied
 *	the bytes posted
 *
 * Return: 0 (@s->copied says how far it got), or a negative errno.
 */
int sdp_rg_op(struct sdp_sock *ssk, struct msghdr *msg,
	      const struct sdp_rdma *op, struct sdp_send *s)
{
	struct sdp_rg_call c = { .rg = ssk->conn->rg };
	bool read = op->op == SDP_RDMA_READ, ok = true;
	u64 off = op->offset, posted = 0;
	int slot, err = 0;
	ssize_t n;

	sdp_assert_locked(ssk);

	slot = sdp_rg_check(ssk, msg, op);
	if (slot < 0)
		return slot;
	while (msg_data_left(msg) && !err) {
		struct sdp_rg_peer *p = c.rg->peer[slot];

		if (!sdp_conn_usable(ssk) || !sdp_conn_same(ssk, s->conn)) {
			err = -EPIPE;
			break;
		}
		/* revoked meanwhile (the slot may hold another by now) */
		if (!p || p->token != op->token || p->state != SDP_RG_LIVE) {
			err = -ENOENT;
			break;
		}
		ok &= sdp_rg_call_reap(ssk, &c);
		n = sdp_rg_post(ssk, msg, &c, slot, off, read, s);
		if (n > 0) {
			off += n;
			posted += n;
			s->zc_used = true;
		} else if (n < 0) {
			err = n;
		} else {
			/* Nothing free: a call that has posted nothing may
			 * say EAGAIN, but once it has posted, it posts the
			 * rest (an io_uring retry of a partial op would
			 * reuse its offset); only a signal stops it.
			 */
			long timeo = posted ? MAX_SCHEDULE_TIMEOUT : s->timeo;

			err = sdp_rg_wait(ssk, &c, false, &timeo);
		}
	}
	if (c.mine) {
		sdp_rg_wait(ssk, &c, true, &s->timeo);
		ok &= sdp_rg_call_reap(ssk, &c);
	}
	if (!s->uarg && !ok) {
		/* a blocking call's bytes count once they have moved */
		s->copied = 0;
		return -EPIPE;
	}
	s->copied = posted;
	return posted ? 0 : err;
}

/* ---- teardown ----------------------------------------------------------- */

/**
 * sdp_rg_teardown - release the regions of a connection going away
 * @ssk: the socket, locked, its QP drained (no op is under way)
 *
 * Ops posted in part are ended; every MR of ours is deregistered before
 * any page goes; regions of the peer's are forgotten.  Ops a blocking
 * caller waits for are left to it.
 */
void sdp_rg_teardown(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_rg *rg = conn->rg;
	int i, k;

	sdp_assert_locked(ssk);

	if (!rg)
		return;
	for (i = 0; rg->ops && i < SDP_RG_OPS; i++) {
		struct sdp_rg_op *op = &rg->ops[i];

		if (op->rw.stuck) {
			rdma_rw_ctx_destroy(&op->rw.ctx, conn->qp,
					    conn->port_num, op->rw.sg,
					    op->rw.nsg, op->rw.dir);
			op->rw.stuck = false;
			op->rw.b.status = IB_WC_WR_FLUSH_ERR;
			WRITE_ONCE(op->rw.busy, false);
		}
	}
	sdp_rg_reap(ssk, rg);
	for (i = 0; i < SDP_REGIONS_MAX; i++)
		for (k = 0; rg->own[i] && k < rg->own[i]->nsegs; k++)
			if (rg->own[i]->segs[k].mr) {
				ib_dereg_mr(rg->own[i]->segs[k].mr);
				rg->own[i]->segs[k].mr = NULL;
			}
	for (i = 0; i < SDP_REGIONS_MAX; i++) {
		if (rg->own[i])
			sdp_rg_own_free(conn, rg->own[i]);
		rg->own[i] = NULL;
		kfree(rg->peer[i]);
		rg->peer[i] = NULL;
	}
	sdp_zc_wake(&ssk->sk);
}

/* The connection's last reference is gone: nothing is posted, no work
 * queued (it holds a reference).
 */
void sdp_rg_free(struct sdp_conn *conn)
{
	struct sdp_rg *rg = conn->rg;
	int i;

	if (!rg)
		return;
	for (i = 0; i < SDP_REGIONS_MAX; i++) {
		if (rg->own[i])
			sdp_rg_own_free(conn, rg->own[i]);
		kfree(rg->peer[i]);
	}
	kvfree(rg->ops);
	kfree(rg);
	conn->rg = NULL;
}
