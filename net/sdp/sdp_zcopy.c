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
 * peer's SinkAvail (sdp_zc_sinkavail.c).  A chain that could be posted
 * only in part gets no completion: it is marked stuck, the connection is
 * reset, and the teardown ends it once the QP is drained; nothing it
 * uses is released before.
 *
 * User pages are pinned with FOLL_LONGTERM (sdp_zc_pin()) and unpinned on
 * every path.  Every wait for an RDMA op or a key can be killed
 * (sdp_zc_wait()): a fatal signal resets the connection, whose drain ends
 * what is posted, so the task is gone within a second; the stall
 * watchdog (sdp_timer.c) bounds the waits of everyone else.
 *
 * Everything runs under the socket lock; the RDMA waits drop it.
 * Completions arrive through sdp_cq_done() like every other.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <rdma/rw.h>

#include "sdp.h"
#include "sdp_az.h"
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

/**
 * sdp_zc_pin - pin the next part of a user buffer for the device
 * @iter: a user-backed iterator; it moves past what was pinned
 * @pages: room for @max pages
 * @bytes: most bytes to pin (within the iterator's current segment)
 * @max: most pages
 * @write: the device writes into them
 * @off: set to the offset into the first page
 *
 * FOLL_LONGTERM, as for any memory a device may use for long: the pages
 * cannot be migrated meanwhile, and a fork() copies them for the child at
 * once instead of sharing them copy-on-write, so a write by either
 * process can never divert what the device writes to the other's copy.
 *
 * Return: bytes pinned, or a negative errno.
 */
ssize_t sdp_zc_pin(struct iov_iter *iter, struct page **pages, size_t bytes,
		   int max, bool write, size_t *off)
{
	size_t len = min(bytes, iov_iter_single_seg_count(iter));
	unsigned long addr;
	int npages, got;

	if (!iter_is_ubuf(iter) && !iter_is_iovec(iter))
		return -EFAULT;
	addr = (unsigned long)iter_iov_addr(iter);
	if (!len)
		return -EFAULT;
	*off = offset_in_page(addr);
	npages = min_t(size_t, max, DIV_ROUND_UP(*off + len, PAGE_SIZE));
	if (write)	/* pages an AZ-SDP send just left: made writable */
		sdp_az_fault_in(addr & PAGE_MASK, (size_t)npages * PAGE_SIZE);
	got = pin_user_pages_fast(addr & PAGE_MASK, npages,
				  FOLL_LONGTERM | (write ? FOLL_WRITE : 0),
				  pages);
	if (got <= 0)
		return got ? got : -EFAULT;
	len = min_t(size_t, len, (size_t)got * PAGE_SIZE - *off);
	iov_iter_advance(iter, len);
	return len;
}

/**
 * sdp_zc_ref_bvec - reference the next pages of an io_uring fixed buffer
 * @iter: a bvec iterator over pages io_uring holds pinned for as long as
 *	the send's notification is not completed; it moves past them
 * @pages: room for @max pages
 * @bytes: most bytes
 * @max: most pages
 * @off: set to the offset into the first page
 *
 * A run of pages one MR can map: every page but the first starts at its
 * beginning, every page but the last ends at its end.  Each is referenced
 * (get_page()) besides io_uring's pin, as sendfile()'s pages are, so a
 * registration never depends on how long io_uring keeps its own.
 *
 * Return: bytes referenced, or -EFAULT.
 */
static ssize_t sdp_zc_ref_bvec(struct iov_iter *iter, struct page **pages,
			       size_t bytes, int max, size_t *off)
{
	size_t done = 0, o, len;
	int n = 0;

	while (n < max && done < bytes && iov_iter_count(iter)) {
		const struct bio_vec *bv = iter->bvec;
		size_t at = bv->bv_offset + iter->iov_offset;

		o = offset_in_page(at);
		len = min3(bv->bv_len - iter->iov_offset, PAGE_SIZE - o,
			   min(iov_iter_count(iter), bytes - done));
		if (n && o)
			break;		/* a gap: the next run */
		if (!n)
			*off = o;
		pages[n] = nth_page(bv->bv_page, at >> PAGE_SHIFT);
		get_page(pages[n++]);
		iov_iter_advance(iter, len);
		done += len;
		if (o + len < PAGE_SIZE)
			break;		/* ends short: the run ends here */
	}
	return done ?: -EFAULT;
}

/* Unpin what sdp_zc_pin() pinned; @dirty (the device wrote into them)
 * needs process context.
 */
void sdp_zc_unpin(struct page **pages, int n, bool dirty)
{
	if (dirty)
		unpin_user_pages_dirty_lock(pages, n, true);
	else
		unpin_user_pages(pages, n);
}

/**
 * sdp_zc_wait - wait without the socket lock until @done, or be killed
 * @ssk: the socket, locked; the lock is dropped while waiting
 * @done: the condition, checked locklessly (woken through zc_wait)
 * @arg: its argument
 *
 * For RDMA ops of ours and keys to settle: they end within the
 * transport's timeouts, and when the stall watchdog resets a connection
 * whose peer stopped taking our messages.  A task that gets a fatal
 * signal does not wait for that: after half a second more the connection
 * is reset, and its teardown drains the QP, which ends every op at once;
 * only then does the caller go on to release what they used.  A kernel
 * thread (the read-ahead work) waits idle, not counted as hung.
 */
void sdp_zc_wait(struct sdp_sock *ssk, bool (*done)(void *arg), void *arg)
{
	struct sock *sk = &ssk->sk;

	sdp_assert_locked(ssk);

	release_sock(sk);
	if (!(current->flags & PF_KTHREAD) &&
	    wait_event_killable(ssk->zc_wait, done(arg)) &&
	    !wait_event_timeout(ssk->zc_wait, done(arg), HZ / 2)) {
		lock_sock(sk);
		sdp_conn_abort(ssk, ECONNRESET, false);
		release_sock(sk);
	}
	wait_event_idle(ssk->zc_wait, done(arg));
	lock_sock(sk);
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
	struct sdp_zc *zc = ssk->conn->zc;
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
	ssk->conn->zc = zc;
	return zc;
}

/* Under the socket lock: the MRs a source needs, allocated once per
 * connection (they belong to its device's PD).
 */
int sdp_zc_mrs(struct sdp_conn *conn, struct sdp_zc *zc)
{
	struct ib_device *dev = conn->sdev->ibdev;
	int i;

	if (zc->nregs)
		return 0;
	zc->reg_pages = min_t(u32, SDP_ZC_REG_PAGES,
			      dev->attrs.max_fast_reg_page_list_len);
	if (zc->reg_pages < 2)
		return -EOPNOTSUPP;
	for (i = 0; i < SDP_ZC_REGS; i++) {
		struct ib_mr *mr = ib_alloc_mr(conn->pd, IB_MR_TYPE_MEM_REG,
					       zc->reg_pages);

		if (IS_ERR(mr))
			break;
		zc->reg[i].mr = mr;
		zc->reg[i].state = SDP_ZC_REG_FREE;
		zc->nregs++;
	}
	return zc->nregs ? 0 : -ENOMEM;
}

/* Release a registration's pages: references (sendfile()'s, an io_uring
 * fixed buffer's) or pins.
 */
static void sdp_zc_release_pages(struct sdp_sock *ssk, struct sdp_zc_reg *reg,
				 bool dirty)
{
	int i;

	if (!reg->kpages) {
		sdp_zc_unpin(reg->pages, reg->npages, dirty);
		return;
	}
	for (i = 0; i < reg->npages; i++)
		put_page(reg->pages[i]);
	SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_ZC_PAGE_REFS, -reg->npages);
	reg->kpages = false;
}

/* A registration is over (its key invalidated, or its MR deregistered):
 * release its pages.  A SinkAvail's (@success: the peer may have written
 * into them) only in process context.
 */
void sdp_zc_reg_finish(struct sdp_sock *ssk, struct sdp_zc_reg *reg,
		       bool success)
{
	bool src = !reg->sink;

	if (ssk->conn->sdev && reg->state != SDP_ZC_REG_BUILDING)
		ib_dma_unmap_sg(ssk->conn->sdev->ibdev, reg->sg, reg->npages,
				reg->sink ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
	/* the peer may have written into a SinkAvail's pages */
	sdp_zc_release_pages(ssk, reg, reg->sink && success);
	if (reg->uarg) {
		sdp_ubuf_complete(reg->uarg, success);
	} else if (reg->mmp.user) {
		mm_unaccount_pinned_pages(&reg->mmp);
		reg->mmp.user = NULL;
	}
	reg->uarg = NULL;
	reg->npages = 0;
	reg->state = SDP_ZC_REG_FREE;
	if (src) {
		ssk->zc_src_count--;
		ssk->zc_src_bytes -= reg->len;
	}
	reg->sink = false;
	sdp_zc_wake(&ssk->sk);
	if (src && !ssk->zc_src_count)
		sdp_close_if_done(ssk);	/* read whole after both DisConns */
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
void sdp_zc_new_key(struct ib_mr *mr)
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
void sdp_zc_hide_iova(struct ib_mr *mr)
{
	u64 base = get_random_u64() & GENMASK_ULL(62, PAGE_SHIFT);

	mr->iova = base | (mr->iova & ~PAGE_MASK);
}

/**
 * sdp_zc_reg_map - map a registration's pages and register them for the
 *	peer
 * @ssk: the socket, locked, connected
 * @zc: its ZCopy state
 * @reg: pages and scatterlist (@reg->npages entries) filled in
 * @len: bytes they cover
 * @access: what the peer may do
 *
 * A fresh key, over exactly those bytes; REG_MR is posted ahead of the
 * message that advertises it.  On failure nothing is left mapped and the
 * pages are still the caller's.
 *
 * Return: 0 or a negative errno.
 */
int sdp_zc_reg_map(struct sdp_sock *ssk, struct sdp_zc *zc,
		   struct sdp_zc_reg *reg, u32 len, int access)
{
	enum dma_data_direction dir = reg->sink ? DMA_FROM_DEVICE :
						  DMA_TO_DEVICE;
	struct ib_device *dev = ssk->conn->sdev->ibdev;
	struct ib_reg_wr rwr = {};
	int err = -ENOMEM;

	sdp_assert_locked(ssk);

	reg->nents = ib_dma_map_sg(dev, reg->sg, reg->npages, dir);
	if (!reg->nents)
		return err;
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
	err = sdp_qp_post_send(ssk->conn->qp, &rwr.wr, NULL);
	if (err)
		goto err_map;
	reg->len = len;
	reg->done = 0;
	reg->state = SDP_ZC_REG_ADVERTISED;
	return 0;

err_map:
	ib_dma_unmap_sg(dev, reg->sg, reg->npages, dir);
	return err;
}

/* Pin the next part of @iter (one contiguous user range, as much as one MR
 * maps), charge it to RLIMIT_MEMLOCK unless @uarg does, map it and
 * register it for the peer with @access over exactly those bytes (a fresh
 * key).  The iterator moves past it.  Returns the bytes registered or a
 * negative errno.
 */
ssize_t sdp_zc_register(struct sdp_sock *ssk, struct sdp_zc *zc,
			struct sdp_zc_reg *reg, struct iov_iter *iter,
			struct ubuf_info *uarg, int access)
{
	size_t off, left;
	ssize_t n;
	int i, err;

	/* io_uring's fixed buffer: charged and pinned by io_uring already */
	reg->kpages = uarg && !reg->sink && iov_iter_is_bvec(iter);
	if (reg->kpages)
		n = sdp_zc_ref_bvec(iter, reg->pages, zc->reg_pages * PAGE_SIZE,
				    zc->reg_pages, &off);
	else
		n = sdp_zc_pin(iter, reg->pages, zc->reg_pages * PAGE_SIZE,
			       zc->reg_pages, reg->sink, &off);
	if (n < 0)
		return n;
	reg->npages = DIV_ROUND_UP(off + n, PAGE_SIZE);
	if (reg->kpages)
		SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_ZC_PAGE_REFS,
			      reg->npages);
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
	err = sdp_zc_reg_map(ssk, zc, reg, n, access);
	if (err)
		goto err_account;
	reg->uarg = uarg;
	if (uarg)
		net_zcopy_get(uarg);
	return n;

err_account:
	if (!uarg)
		mm_unaccount_pinned_pages(&reg->mmp);
	reg->mmp.user = NULL;
err_pages:
	sdp_zc_release_pages(ssk, reg, false);
	reg->npages = 0;
	iov_iter_revert(iter, n);
	return err;
}

/* A registration's transfer is over: invalidate its key (LOCAL_INV);
 * its pages go once that completed (sdp_zc_complete()).
 */
int sdp_zc_inv_post(struct sdp_sock *ssk, struct sdp_zc_reg *reg)
{
	struct ib_send_wr wr = {
		.opcode		= IB_WR_LOCAL_INV,
		.send_flags	= IB_SEND_SIGNALED,
		.wr_cqe		= &reg->b.cqe,
		.ex.invalidate_rkey = reg->mr->rkey,
	};
	int err;

	reg->state = SDP_ZC_REG_INVALIDATING;
	err = sdp_qp_post_send(ssk->conn->qp, &wr, NULL);
	if (!err)
		sdp_sq_posted(ssk);
	return err;
}

/* A SrcAvail is over. */
int sdp_zc_invalidate(struct sdp_sock *ssk, struct sdp_zc_reg *reg)
{
	list_del_init(&reg->node);
	return sdp_zc_inv_post(ssk, reg);
}

/**
 * sdp_zc_revoke - invalidate every key still advertised
 * @ssk: the socket, locked, with a usable connection
 *
 * Before an Abort, which is fenced behind these invalidations: the peer
 * must not hear of the end while a key of ours still works, a SrcAvail's
 * or our SinkAvail's.  The SinkAvail's reader then sees it invalidated.
 */
void sdp_zc_revoke(struct sdp_sock *ssk)
{
	struct sdp_zc_reg *reg, *tmp;
	struct sdp_zc *zc = ssk->conn->zc;

	sdp_assert_locked(ssk);

	if (!zc)
		return;
	list_for_each_entry_safe(reg, tmp, &zc->src, node)
		if (sdp_zc_invalidate(ssk, reg))
			return;	/* the QP is gone: the teardown deregisters */
	if (zc->sink && zc->sink->state == SDP_ZC_REG_ADVERTISED)
		sdp_zc_inv_post(ssk, zc->sink);
}

/* The peer refused our RDMA READ or WRITE: the connection is over.  A
 * source that cancelled its SrcAvails and then gave up waiting (its
 * process killed, or SDP_ZC_CANCEL_TIMEOUT passed) revokes its keys before
 * it sends its Abort, which our QP, in error since the refusal, may never
 * receive: a READ refused after a SrcAvailCancel is that reset.  Anything
 * else is a key the peer should not have given us.
 */
static void sdp_zc_refused(struct sdp_sock *ssk, struct sdp_zc_rw *rw,
			   enum ib_wc_status status)
{
	bool read = rw->dir == DMA_FROM_DEVICE;

	if (read && test_bit(SDP_F_ZC_HURRY, &ssk->flags)) {
		net_dbg_ratelimited("RDMA READ refused after the peer's SrcAvailCancel: reset\n");
		sdp_conn_abort(ssk, ECONNRESET, false);
		return;
	}
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_PROTO_ERRORS);
	trace_sdp_proto_error(&ssk->sk, read ? "RDMA READ refused" :
			      "RDMA WRITE refused", status);
	net_warn_ratelimited("RDMA %s refused by the peer (%s), connection aborted\n",
			     read ? "READ" : "WRITE", ib_wc_status_msg(status));
	sdp_conn_abort(ssk, ECONNRESET, true);
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
	/* the flush of the last request after an earlier one failed */
	if (buf->status == IB_WC_WR_FLUSH_ERR && READ_ONCE(rw->part_status))
		buf->status = READ_ONCE(rw->part_status);
	/* the device is done with the pages: unmap them here; the waiting
	 * reader puts them (it may sleep to dirty them)
	 */
	rdma_rw_ctx_destroy(&rw->ctx, ssk->conn->qp, ssk->conn->port_num, rw->sg, rw->nsg,
			    rw->dir);
	if (buf->status == IB_WC_REM_ACCESS_ERR ||
	    buf->status == IB_WC_REM_INV_REQ_ERR)
		sdp_zc_refused(ssk, rw, buf->status);
	else
		sdp_tx_status(ssk, buf);
	if (buf->status == IB_WC_SUCCESS && rw->dir == DMA_FROM_DEVICE) {
		/* the peer answered: as good as a keepalive probe's answer */
		ssk->conn->ka_probes = 0;
		ssk->conn->st.last_recv = jiffies;
	}
	/* only now: a reader that sees the op done sees its error too */
	rw->busy = false;
	sdp_zc_wake(&ssk->sk);
	if (rw->done)
		rw->done(ssk, rw);
}

/* A work request of an op before its last completed: only an error
 * does on InfiniBand and RoCE (rdma_rw signals the last alone), a success
 * too on iWARP (below).  The error is the op's: the transport giving up
 * on a READ (RETRY_EXC_ERR, the peer gone) must not look like the flush
 * of the op's last request that follows (sdp_zc_complete()).
 */
static void sdp_zc_rw_part_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_zc_rw *rw = container_of(wc->wr_cqe, struct sdp_zc_rw,
					    part_cqe);

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR &&
	    !READ_ONCE(rw->part_status))
		WRITE_ONCE(rw->part_status, wc->status);
}

/* Every request of the op but its last reports to the op: an error, and on
 * iWARP every completion.  For a WRITE a completion there means only that
 * the local TCP has the bytes, and Soft-iWARP hands an unsignaled
 * request's pages to TCP by reference (MSG_SPLICE_PAGES), read when TCP
 * sends them: that may be after the op's last request completed, its
 * pages were unpinned and the program, its send() returned, wrote its
 * buffer again; the peer then received the new bytes.  A signaled
 * request's bytes siw copies, so on iWARP every request of a WRITE is
 * signaled (the CQ has room for one completion per send request:
 * sdp_cq_size()).
 */
static void sdp_zc_rw_chain(struct sdp_conn *conn, struct sdp_zc_rw *rw,
			    struct ib_send_wr *wr)
{
	bool signal = conn->iwarp && rw->dir == DMA_TO_DEVICE;

	rw->part_status = 0;
	rw->part_cqe.done = sdp_zc_rw_part_done;
	for (; wr->next; wr = wr->next) {
		wr->wr_cqe = &rw->part_cqe;
		if (signal)
			wr->send_flags |= IB_SEND_SIGNALED;
	}
}

/* Post the op's chain; a failure part of the way through leaves it stuck
 * (see the top of this file).
 */
static int sdp_zc_rw_post(struct sdp_sock *ssk, struct sdp_zc_rw *rw)
{
	struct sdp_conn *conn = ssk->conn;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first;
	int err;

	first = rdma_rw_ctx_wrs(&rw->ctx, conn->qp, conn->port_num, &rw->b.cqe,
				NULL);
	sdp_zc_rw_chain(conn, rw, first);
	err = sdp_qp_post_send(conn->qp, first, &bad);
	if (!err) {
		sdp_sq_posted(ssk);
		return 0;
	}
	if (bad != first)
		rw->stuck = true;
	return err;
}

/* Pin @len bytes of @iter for the op, or allocate its bounce buffer. */
static ssize_t sdp_zc_rw_mem(struct sdp_sock *ssk, struct sdp_zc_rw *rw,
			     struct iov_iter *iter, u32 len)
{
	size_t off, left;
	ssize_t n;
	int i;

	if (!iter) {
		rw->bounce = sdp_bounce_alloc(ssk, len);
		if (!rw->bounce)
			return -ENOMEM;
		sg_init_one(rw->sg, rw->bounce->data, rw->bounce->len);
		rw->nsg = 1;
		return rw->bounce->len;
	}
	n = sdp_zc_pin(iter, rw->pages, len, SDP_ZC_CHUNK_PAGES,
		       rw->dir == DMA_FROM_DEVICE, &off);
	if (n < 0)
		return n;
	rw->npages = DIV_ROUND_UP(off + n, PAGE_SIZE);
	sg_init_table(rw->sg, rw->npages);
	for (i = 0, left = n; i < rw->npages; i++) {
		size_t o = i ? 0 : off;
		size_t l = min_t(size_t, left, PAGE_SIZE - o);

		sg_set_page(&rw->sg[i], rw->pages[i], l, o);
		left -= l;
	}
	rw->nsg = rw->npages;
	return n;
}

/**
 * sdp_zc_rw_release - give back what an op used, once it is over
 * @rw: the op, not busy
 * @iter: the iterator it read into, to move back if it failed, or NULL
 * @ok: it moved its bytes (the pages it read into are dirty)
 *
 * Its bounce buffer, if any, stays the caller's when @ok.
 */
void sdp_zc_rw_release(struct sdp_zc_rw *rw, struct iov_iter *iter, bool ok)
{
	sdp_zc_unpin(rw->pages, rw->npages, ok && rw->dir == DMA_FROM_DEVICE);
	rw->npages = 0;
	if (!ok && iter && rw->len)
		iov_iter_revert(iter, rw->len);
	if (!ok && rw->bounce)
		sdp_bounce_free(rw->bounce);
	if (!ok)
		rw->bounce = NULL;
}

/**
 * sdp_zc_rw_prep - post one RDMA op
 * @ssk: the socket, locked, with a usable connection
 * @rw: an idle op
 * @iter: the user buffer to READ into or WRITE from, or NULL to READ into
 *	  a new bounce buffer
 * @len: most bytes
 * @raddr: the peer's address
 * @rkey: the peer's key
 *
 * Return: the bytes the op covers, or a negative errno; with rw->stuck
 * set the op was posted in part and must not be released before the
 * teardown has ended it (the caller resets the connection).
 */
int sdp_zc_rw_prep(struct sdp_sock *ssk, struct sdp_zc_rw *rw,
		   struct iov_iter *iter, u32 len, u64 raddr, u32 rkey)
{
	struct sdp_conn *conn = ssk->conn;
	u32 port = conn->port_num;
	ssize_t n;
	int ret;

	sdp_assert_locked(ssk);

	rw->bounce = NULL;
	rw->npages = 0;
	rw->len = 0;
	n = sdp_zc_rw_mem(ssk, rw, iter, len);
	if (n < 0)
		return n;
	rw->len = n;
	ret = rdma_rw_ctx_init(&rw->ctx, conn->qp, port, rw->sg, rw->nsg, 0,
			       raddr, rkey, rw->dir);
	if (ret < 0)
		goto err;
	rw->busy = true;
	ret = sdp_zc_rw_post(ssk, rw);
	if (ret) {
		if (rw->stuck)
			return ret;	/* busy until the teardown */
		rw->busy = false;
		rdma_rw_ctx_destroy(&rw->ctx, conn->qp, port, rw->sg, rw->nsg,
				    rw->dir);
		goto err;
	}
	SDP_INC_STATS(sock_net(&ssk->sk), rw->dir == DMA_FROM_DEVICE ?
		      SDP_MIB_ZC_READS : SDP_MIB_ZC_WRITES);
	return n;
err:
	sdp_zc_rw_release(rw, iter, false);
	return ret;
}

/* For sdp_zc_wait(): none of the ops @arg (rd or wr) is posted. */
bool sdp_zc_rw_idle(void *arg)
{
	struct sdp_zc_rw *ops = arg;
	int i;

	for (i = 0; i < SDP_ZC_RW_OPS; i++)
		if (READ_ONCE(ops[i].busy))
			return false;
	return true;
}

/**
 * sdp_zc_peer_busy - may the peer's send side be busy on our behalf?
 * @ssk: the socket, locked
 *
 * A READ of ours is under way (the peer sends its response), or our
 * SinkAvail is out (the peer may be writing into it).
 *
 * Return: true if the peer may be busy for us.
 */
bool sdp_zc_peer_busy(struct sdp_sock *ssk)
{
	struct sdp_zc *zc = ssk->conn->zc;

	sdp_assert_locked(ssk);

	return zc && (!sdp_zc_rw_idle(zc->rd) ||
		      zc->sink_state != SDP_ZC_SINK_NONE);
}

/* The teardown, its QP drained: end the ops posted in part. */
static void sdp_zc_rw_unstick(struct sdp_conn *conn, struct sdp_zc_rw *ops)
{
	int i;

	for (i = 0; i < SDP_ZC_RW_OPS; i++) {
		if (!ops[i].stuck)
			continue;
		rdma_rw_ctx_destroy(&ops[i].ctx, conn->qp, conn->port_num,
				    ops[i].sg, ops[i].nsg, ops[i].dir);
		ops[i].stuck = false;
		ops[i].b.status = IB_WC_WR_FLUSH_ERR;
		WRITE_ONCE(ops[i].busy, false);
	}
}

/**
 * sdp_zc_teardown - release the ZCopy state of a connection going away
 * @ssk: the socket, locked, its QP drained (no RDMA op is under way)
 *
 * The ops posted in part are ended, the MRs deregistered, so no key of
 * ours works any more, then the pages still advertised are released.
 */
void sdp_zc_teardown(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_zc *zc = conn->zc;
	int i;

	sdp_assert_locked(ssk);

	if (!zc)
		return;
	sdp_zc_rw_unstick(conn, zc->rd);
	sdp_zc_rw_unstick(conn, zc->wr);
	for (i = 0; i < zc->nregs; i++) {
		ib_dereg_mr(zc->reg[i].mr);
		zc->reg[i].mr = NULL;
	}
	for (i = 0; i < zc->nregs; i++)
		if (zc->reg[i].state != SDP_ZC_REG_FREE)
			sdp_zc_reg_finish(ssk, &zc->reg[i], zc->reg[i].sink);
	zc->nregs = 0;
	zc->pend = NULL;	/* finished above */
	if (zc->pend_buf) {	/* freed with the others */
		list_add(&zc->pend_buf->list, &conn->tx_free);
		WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree + 1);
		zc->pend_buf = NULL;
	}
	INIT_LIST_HEAD(&zc->src);
	conn->zc_cancel = false;
	conn->zc_sinkavail = false;
	conn->zc_sink_cancel = false;
	conn->zc_cancel_ack = false;
	conn->zc_wrcompl = 0;
	conn->zc_peer_sink.valid = false;
	sdp_zc_wake(&ssk->sk);
}
