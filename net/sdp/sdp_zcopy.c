// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: ZCopy, read-based: the peer RDMA-READs the sender's own pages.
 *
 * Source.  A send of at least SDP_ZCOPY_THRESH bytes from one contiguous
 * user range, blocking or with MSG_ZEROCOPY, pins the pages of up to
 * SDP_ZC_REG_PAGES of it, registers them with a fast-registration MR that
 * allows REMOTE_READ over exactly those bytes (a fresh rkey each time),
 * and queues a SrcAvail {len, rkey, addr} in stream order behind the data
 * already queued.  Up to SDP_ZC_REGS SrcAvails are outstanding.  The
 * peer's RdmaRdCompl reports bytes read, oldest SrcAvail first; once one
 * is read whole its key is invalidated (LOCAL_INV) and, when that
 * completes, its pages are unmapped and unpinned and either the blocking
 * sender is woken or the MSG_ZEROCOPY notification is queued.  A blocking
 * send returns once all its SrcAvails are read.  Interrupted (a signal,
 * SO_SNDTIMEO), it sends SrcAvailCancel, which asks the sink to read the
 * rest at once, and waits at most SDP_ZC_CANCEL_TIMEOUT more before it
 * resets the connection.  Teardown deregisters every MR before it unpins
 * anything, so no key outlives its connection.
 *
 * Sink.  A SrcAvail becomes an entry of the receive queue covering its
 * bytes of the stream.  A reader that reaches it with at least
 * SDP_ZC_DIRECT_MIN bytes of user buffer RDMA-READs straight into its
 * pinned pages (rdma_rw, SDP_ZC_CHUNK per READ op); otherwise, and when
 * no reader comes within a jiffy, bytes are read into kernel bounce
 * buffers queued in front of the entry (read-ahead, up to what TCP would
 * buffer: SO_RCVBUF if set, else tcp_rmem's maximum; all of it once the
 * peer cancelled).  So a source never waits on the
 * sink application, as a TCP sender does not, and two sides sending at
 * once cannot deadlock.  When a SrcAvail has been read whole, its receive
 * buffer is posted again and RdmaRdCompl goes back.
 *
 * ZCopy, write-based (SinkAvail).  A blocking recv() of at least the
 * threshold, with nothing queued to read, registers its buffer for the
 * peer to write (REMOTE_WRITE over exactly its bytes) and sends a
 * SinkAvail.  A source that has sent no data since the sink's mseq_ack
 * (the SinkAvail's BSDH) and now sends at least the threshold RDMA-WRITEs
 * from its pinned pages straight into that buffer and sends RdmaWrCompl
 * behind the writes.  If data comes another way first, or the reader is
 * interrupted, the sink sends SinkAvailCancel and waits for SinkCancelAck
 * (a RdmaWrCompl may come before it: those bytes are delivered).  The
 * sink's key is invalidated before recv() returns.
 *
 * Everything runs under the socket lock; the RDMA waits drop it.
 * Completions arrive through sdp_cq_done() like every other.
 */
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <net/tcp.h>
#include <rdma/rw.h>

#include "sdp.h"

enum sdp_zc_reg_state {
	SDP_ZC_REG_FREE,
	SDP_ZC_REG_ADVERTISED,	/* SrcAvail / SinkAvail queued or sent */
	SDP_ZC_REG_INVALIDATING, /* over: LOCAL_INV posted */
	SDP_ZC_REG_INVALIDATED,	/* a SinkAvail's: its reader releases it */
};

/* Pages of one SrcAvail, registered for the peer to read. */
struct sdp_zc_reg {
	struct sdp_buf		b;	/* LOCAL_INV completion */
	struct list_head	node;	/* zc->src, oldest first */
	struct ib_mr		*mr;
	struct ubuf_info	*uarg;	/* MSG_ZEROCOPY, else NULL */
	struct mmpin		mmp;	/* RLIMIT_MEMLOCK charge (blocking) */
	int			npages;
	int			nents;	/* DMA-mapped scatterlist entries */
	u32			len;	/* bytes advertised */
	u32			done;	/* bytes the peer reported read */
	u8			state;	/* enum sdp_zc_reg_state */
	bool			sink;	/* a SinkAvail's buffer, for the peer to write */
	struct page		*pages[SDP_ZC_REG_PAGES];
	struct scatterlist	sg[SDP_ZC_REG_PAGES];
};

/* One RDMA READ (a sink's fetch) or WRITE (into the peer's SinkAvail) op:
 * up to SDP_ZC_CHUNK bytes.
 */
struct sdp_zc_rw {
	struct sdp_buf		b;	/* the op's last work request */
	struct rdma_rw_ctx	ctx;
	struct sdp_buf		*bounce; /* READ into it, or into pages */
	int			npages;
	int			nsg;
	u32			len;
	u8			dir;	/* DMA_FROM_DEVICE: READ; DMA_TO_DEVICE: WRITE */
	bool			busy;	/* posted, completion not seen */
	struct page		*pages[SDP_ZC_CHUNK_PAGES];
	struct scatterlist	sg[SDP_ZC_CHUNK_PAGES];
};

struct sdp_zc {
	struct sdp_zc_reg	reg[SDP_ZC_REGS];
	struct sdp_zc_rw	rd[SDP_ZC_RW_OPS];	/* our fetches */
	struct sdp_zc_rw	wr[SDP_ZC_RW_OPS];	/* our writes */
	struct list_head	src;	/* regs advertised, oldest first */
	struct ib_cqe		reg_mr_cqe; /* REG_MR, unsignaled */
	int			nregs;	/* MRs allocated: reg[0..nregs) */
	int			reg_pages; /* pages one MR maps */
	bool			fetching; /* a READ of the peer's is under way */
	/* our SinkAvail: one at a time */
	struct sdp_zc_reg	*sink;
	u8			sink_state;	/* enum sdp_zc_sink_state */
	bool			sink_done;	/* its RdmaWrCompl came */
	bool			sink_acked;	/* its SinkCancelAck came */
	u32			sink_wrote;	/* bytes the peer wrote */
};

enum sdp_zc_sink_state {
	SDP_ZC_SINK_NONE,
	SDP_ZC_SINK_OUT,	/* SinkAvail queued or sent */
	SDP_ZC_SINK_CANCEL,	/* SinkAvailCancel queued or sent */
};

/* A ZCopy state changed: wake the socket's waiters (readers, writers,
 * poll) and those waiting for RDMA ops and keys to settle (zc_wait, which,
 * unlike the socket's wait queue, outlives the file: the read-ahead work
 * waits there for a socket that may be closed meanwhile).
 */
static void sdp_zc_wake(struct sock *sk)
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
static struct sdp_zc *sdp_zc_get(struct sdp_sock *ssk)
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
static int sdp_zc_mrs(struct sdp_sock *ssk, struct sdp_zc *zc)
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

/**
 * sdp_zc_want - should this part of a send go by ZCopy?
 * @ssk: the socket, locked, connected
 * @msg: the send, at the part to go next
 * @flags: its flags
 *
 * The current segment of a user buffer must hold at least the socket's
 * threshold, the peer must take SrcAvails, and the call must either block
 * or carry MSG_ZEROCOPY on a socket with SDP_ZEROCOPY set.
 */
bool sdp_zc_want(struct sdp_sock *ssk, struct msghdr *msg, int flags)
{
	u32 thresh = READ_ONCE(ssk->zcopy_thresh);

	if (!thresh || !(ssk->peer_caps & SDP_CAP_SRC_AVAIL) ||
	    !ssk->peer_adverts || (flags & MSG_OOB) ||
	    !(iter_is_iovec(&msg->msg_iter) || iter_is_ubuf(&msg->msg_iter)))
		return false;
	return iov_iter_single_seg_count(&msg->msg_iter) >= thresh;
}

/* A SrcAvail read whole, or its connection gone: release its pages. */
static void sdp_zc_reg_finish(struct sdp_sock *ssk, struct sdp_zc_reg *reg,
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
static struct sdp_zc_reg *sdp_zc_free_reg(struct sdp_zc *zc)
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
static ssize_t sdp_zc_register(struct sdp_sock *ssk, struct sdp_zc *zc,
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

/**
 * sdp_zc_send - advertise the next part of a send in a SrcAvail
 * @ssk: the socket, locked, connected
 * @msg: the send; its iterator moves past the part advertised
 * @uarg: the MSG_ZEROCOPY notification, or NULL for a blocking send
 * @timeo: unused yet; for symmetry with the BCopy path
 * @sent: bytes advertised
 *
 * Return: 0; -EAGAIN without a free registration or send buffer (wait,
 * or copy instead); -ENOBUFS past RLIMIT_MEMLOCK or without MRs (copy
 * instead); another negative errno.
 */
int sdp_zc_send(struct sdp_sock *ssk, struct msghdr *msg,
		struct ubuf_info *uarg, long *timeo, size_t *sent)
{
	struct sdp_avail_hdr *a;
	struct sdp_zc_reg *reg;
	struct sdp_zc *zc;
	struct sdp_buf *buf;
	ssize_t n;

	zc = sdp_zc_get(ssk);
	if (!zc || sdp_zc_mrs(ssk, zc))
		return -ENOBUFS;
	reg = sdp_zc_free_reg(zc);
	if (!reg || ssk->zc_src_count >= min_t(u32, zc->nregs, ssk->peer_adverts) ||
	    list_empty(&ssk->tx_free))
		return -EAGAIN;
	reg->sink = false;
	n = sdp_zc_register(ssk, zc, reg, &msg->msg_iter, uarg,
			    IB_ACCESS_REMOTE_READ);
	if (n < 0)
		return n;

	/* the SrcAvail, in stream order behind what is queued */
	buf = list_first_entry(&ssk->tx_free, struct sdp_buf, list);
	list_move_tail(&buf->list, &ssk->tx_queue);
	WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree - 1);
	buf->mid = SDP_MID_SRC_AVAIL;
	buf->flags = 0;
	buf->len = sizeof(struct sdp_bsdh) + sizeof(*a);
	a = buf->data + sizeof(struct sdp_bsdh);
	a->len = cpu_to_be32(n);
	a->rkey = cpu_to_be32(reg->mr->rkey);
	a->addr = cpu_to_be64(reg->mr->iova);

	list_add_tail(&reg->node, &zc->src);
	ssk->zc_src_count++;
	ssk->zc_src_bytes += n;
	ssk->zc_adv_total += n;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_SRCAVAIL);
	SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_TX_ZC_BYTES, n);
	*sent = n;
	sdp_tx_flush(ssk);
	return 0;
}

/**
 * sdp_zc_wait_reg - wait for room for one more SrcAvail
 * @ssk: the socket, locked
 * @timeo: the send's time left
 *
 * Return: 0 when there may be room (or the connection failed: the caller
 * looks), -EAGAIN when the time is up, or the signal's errno.
 */
int sdp_zc_wait_reg(struct sdp_sock *ssk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	u32 max = ssk->zc ? min_t(u32, ssk->zc->nregs, ssk->peer_adverts) : 1;

	if (!*timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(*timeo);
	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, timeo, (ssk->zc_src_count < max &&
				  !list_empty(&ssk->tx_free)) ||
		      sk->sk_err || !sdp_conn_usable(ssk), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

/**
 * sdp_zc_send_wait - wait until the peer has read every SrcAvail
 * @ssk: the socket, locked
 * @timeo: the send's time left
 *
 * On a signal or when the time is up, asks the peer to read the rest at
 * once (SrcAvailCancel) and waits at most SDP_ZC_CANCEL_TIMEOUT more; a
 * peer that does not answer then has its connection reset, which frees
 * the pages and keys.
 *
 * Return: 0, or the error that interrupted the wait.
 */
int sdp_zc_send_wait(struct sdp_sock *ssk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	long grace = SDP_ZC_CANCEL_TIMEOUT;
	int err = 0;

	add_wait_queue(sk_sleep(sk), &wait);
	while (ssk->zc_src_count && sdp_conn_usable(ssk)) {
		if (!*timeo || signal_pending(current)) {
			err = *timeo ? sock_intr_errno(*timeo) : -EAGAIN;
			break;
		}
		sk_wait_event(sk, timeo, !ssk->zc_src_count ||
			      !sdp_conn_usable(ssk), &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	if (!ssk->zc_src_count || !sdp_conn_usable(ssk))
		return sk->sk_err ? -sk->sk_err : err;

	/* interrupted: the pages stay the peer's until it settles */
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_CANCELS);
	ssk->zc_cancel = true;
	sdp_tx_flush(ssk);
	while (ssk->zc_src_count && sdp_conn_usable(ssk) && grace > 0) {
		release_sock(sk);
		grace = wait_event_timeout(ssk->zc_wait,
					   !READ_ONCE(ssk->zc_src_count) ||
					   !sdp_conn_usable(ssk), grace);
		lock_sock(sk);
	}
	if (ssk->zc_src_count && sdp_conn_usable(ssk)) {
		net_warn_ratelimited("ib_sdp: peer did not settle a cancelled SrcAvail, connection reset\n");
		sdp_conn_abort(ssk, ECONNRESET, true);
	}
	return err;
}

/* A SrcAvail is over: invalidate its key; its pages go once that is done. */
static int sdp_zc_invalidate(struct sdp_sock *ssk, struct sdp_zc_reg *reg)
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

/* RdmaRdCompl: @size more bytes read, oldest SrcAvail first. */
int sdp_zc_rx_rdcompl(struct sdp_sock *ssk, u32 size)
{
	struct sdp_zc *zc = ssk->zc;
	struct sdp_zc_reg *reg, *tmp;
	u64 left = 0;

	if (zc)
		list_for_each_entry(reg, &zc->src, node)
			left += reg->len - reg->done;
	if (!size || size > left)
		return -EPROTO;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_RDCOMPL);
	ssk->zc_read_total += size;

	list_for_each_entry_safe(reg, tmp, &zc->src, node) {
		u32 take = min(size, reg->len - reg->done);

		reg->done += take;
		size -= take;
		if (reg->done < reg->len)
			break;
		if (sdp_zc_invalidate(ssk, reg)) {
			/* the teardown deregisters the MR, then frees */
			sdp_conn_abort(ssk, ECONNRESET, false);
			break;
		}
		if (!size)
			break;
	}
	return 0;
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

/* Sink: a SrcAvail checked by sdp_rx_check(); queue its bytes. */
int sdp_zc_rx_srcavail(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_avail_hdr *a = buf->data + sizeof(struct sdp_bsdh);
	struct sock *sk = &ssk->sk;
	u32 len = be32_to_cpu(a->len);

	if (!len || len > SDP_ZC_ADV_MAX)
		return -EPROTO;
	if (ssk->zc_rx_count >= SDP_ZC_REGS)
		return -E2BIG;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_RX_SRCAVAIL);
	buf->mid = SDP_MID_SRC_AVAIL;
	buf->flags = 0;
	buf->zc_addr = be64_to_cpu(a->addr);
	buf->zc_rkey = be32_to_cpu(a->rkey);
	buf->zc_len = len;
	buf->zc_total = len;
	buf->seq = ssk->rcv_nxt;
	list_add_tail(&buf->list, &ssk->rx_queue);
	WRITE_ONCE(ssk->rcv_nxt, ssk->rcv_nxt + len);
	ssk->zc_rx_count++;
	sk->sk_data_ready(sk);
	if (!ssk->zc_readers)
		sdp_timer_arm(ssk, SDP_F_ZC_TIMER, &ssk->zc_work, 1);
	return 0;
}

/* SrcAvailCancel: the peer wants its SrcAvails read now. */
void sdp_zc_rx_cancel(struct sdp_sock *ssk)
{
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_ZC_CANCELS);
	if (!ssk->zc_rx_count)
		return;	/* read already: our RdmaRdCompl answers it */
	__set_bit(SDP_F_ZC_HURRY, &ssk->flags);
	sdp_timer_reset(ssk, SDP_F_ZC_TIMER, &ssk->zc_work, 0);
}

/* A bounce buffer for up to @want bytes, as large as memory allows. */
static struct sdp_buf *sdp_bounce_alloc(struct sdp_sock *ssk, u32 want)
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

/* The SrcAvail @adv has been read whole: tell the peer, reuse its buffer. */
static void sdp_zc_adv_done(struct sdp_sock *ssk, struct sdp_buf *adv)
{
	list_del_init(&adv->list);
	ssk->zc_rx_count--;
	ssk->zc_rdcompl += adv->zc_total;
	adv->mid = 0;
	sdp_rx_repost(ssk, adv);
	if (!ssk->zc_rx_count)
		__clear_bit(SDP_F_ZC_HURRY, &ssk->flags);
	sdp_tx_flush(ssk);
}

/* Post one op of @len bytes at the peer's @raddr: a READ into the user's
 * pages (@iter) or a new bounce buffer, or a WRITE from the user's pages.
 * Returns the bytes it covers or an errno.
 */
static int sdp_zc_rw_prep(struct sdp_sock *ssk, struct sdp_zc_rw *rw,
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

static bool sdp_zc_rw_idle(struct sdp_zc_rw *ops)
{
	int i;

	for (i = 0; i < SDP_ZC_RW_OPS; i++)
		if (READ_ONCE(ops[i].busy))
			return false;
	return true;
}

/* Read up to @len bytes from the front of the SrcAvail @adv, into the
 * user's buffer (@iter: the reader's, which moves on) or, with @iter NULL,
 * into bounce buffers queued in front of @adv.  Called locked, by one
 * fetcher at a time; drops the lock while the READs are under way (they
 * end, in success or in a flush, within the transport's timeouts).
 *
 * Return: bytes read, or a negative errno.
 */
static int sdp_zc_fetch(struct sdp_sock *ssk, struct sdp_buf *adv,
			struct iov_iter *iter, u32 len)
{
	struct sock *sk = &ssk->sk;
	struct sdp_zc *zc = sdp_zc_get(ssk);
	u32 pos = 0, good = 0;
	bool failed = false;
	int i, n, posted = 0;

	if (!zc)
		return -ENOMEM;
	if (!sdp_conn_usable(ssk))
		return -ECONNRESET;
	zc->fetching = true;
	while (pos < len && posted < SDP_ZC_RW_OPS) {
		n = sdp_zc_rw_prep(ssk, &zc->rd[posted], iter,
				   min_t(u32, len - pos, SDP_ZC_CHUNK),
				   adv->zc_addr + pos, adv->zc_rkey);
		if (n < 0) {
			if (!posted) {
				zc->fetching = false;
				return n;
			}
			break;
		}
		pos += n;
		posted++;
	}

	release_sock(sk);
	wait_event(ssk->zc_wait, sdp_zc_rw_idle(zc->rd));
	lock_sock(sk);

	/* the ops completed in order: the good ones come first */
	for (i = 0; i < posted; i++) {
		struct sdp_zc_rw *rw = &zc->rd[i];
		bool ok = !failed && rw->b.status == IB_WC_SUCCESS;
		int p;

		for (p = 0; p < rw->npages; p++) {
			if (ok)
				set_page_dirty_lock(rw->pages[p]);
			put_page(rw->pages[p]);
		}
		rw->npages = 0;
		if (!ok) {
			failed = true;
			if (iter)
				iov_iter_revert(iter, rw->len);
			if (rw->bounce)
				sdp_bounce_free(rw->bounce);
			continue;
		}
		if (rw->bounce) {
			rw->bounce->seq = adv->seq + good;
			list_add_tail(&rw->bounce->list, &adv->list);
			ssk->zc_bounce += rw->len;
			SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_ZC_BOUNCE_BYTES,
				      rw->len);
		} else {
			SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_ZC_DIRECT_BYTES,
				      rw->len);
		}
		good += rw->len;
	}
	zc->fetching = false;
	adv->zc_addr += good;
	adv->zc_len -= good;
	adv->seq += good;
	if (!adv->zc_len)
		sdp_zc_adv_done(ssk, adv);
	sdp_zc_wake(sk);
	if (good && list_first_entry_or_null(&ssk->rx_queue, struct sdp_buf,
					     list) != adv)
		sk->sk_data_ready(sk);
	return good ? good : -ECONNRESET;
}

/**
 * sdp_zc_recv - a reader reached the SrcAvail @adv
 * @ssk: the socket, locked
 * @adv: the SrcAvail at the reader's position
 * @msg: the reader's message
 * @n: bytes it may take from @adv
 * @flags: recvmsg() flags
 * @seq: the reader's position (copied_seq, or a peek's)
 *
 * Reads straight into the user's buffer when it holds at least
 * SDP_ZC_DIRECT_MIN of them (and the reader does not peek), else into a
 * bounce buffer the reader then copies from.
 *
 * Return: bytes delivered into the user's buffer (the caller adds them),
 * 0 when the reader should look again, or a negative errno.
 */
int sdp_zc_recv(struct sdp_sock *ssk, struct sdp_buf *adv, struct msghdr *msg,
		size_t n, int flags, u32 *seq)
{
	struct sock *sk = &ssk->sk;
	int got;

	if (ssk->zc && ssk->zc->fetching) {
		/* read-ahead or another reader is at it */
		release_sock(sk);
		wait_event(ssk->zc_wait, !READ_ONCE(ssk->zc->fetching));
		lock_sock(sk);
		return 0;
	}
	if ((flags & MSG_TRUNC) && !(flags & MSG_PEEK)) {
		/* discarded: no need to read it */
		n = min_t(size_t, n, adv->zc_len);
		adv->zc_addr += n;
		adv->zc_len -= n;
		adv->seq += n;
		WRITE_ONCE(*seq, *seq + n);
		if (!adv->zc_len)
			sdp_zc_adv_done(ssk, adv);
		return n;
	}
	if (!(flags & MSG_PEEK) && n >= SDP_ZC_DIRECT_MIN &&
	    (iter_is_iovec(&msg->msg_iter) || iter_is_ubuf(&msg->msg_iter))) {
		n = min_t(size_t, n, SDP_ZC_RW_OPS * SDP_ZC_CHUNK);
		got = sdp_zc_fetch(ssk, adv, &msg->msg_iter, n);
		if (got > 0)
			WRITE_ONCE(*seq, *seq + got);
		return got;
	}
	got = sdp_zc_fetch(ssk, adv, NULL, min_t(u32, adv->zc_len, SDP_ZC_CHUNK));
	return got < 0 ? got : 0;
}

/**
 * sdp_zc_quiesce - wait until no RDMA READ of the peer's is under way
 * @ssk: the socket, locked; the lock is dropped while waiting
 *
 * Before the receive queue is emptied or the receive ring replaced
 * (connect(AF_UNSPEC), a new connection): a fetcher holds pointers into
 * them while it waits for its READs.
 */
void sdp_zc_quiesce(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	while (ssk->zc && ssk->zc->fetching) {
		release_sock(sk);
		wait_event(ssk->zc_wait, !READ_ONCE(ssk->zc->fetching));
		lock_sock(sk);
	}
}

/* ---- write-based ZCopy: SinkAvail ---------------------------------- */

/**
 * sdp_zc_sink_want - should this reader offer its buffer to the peer?
 * @ssk: the socket, locked
 * @msg: the reader's message
 * @len: bytes it still wants
 * @flags: recvmsg() flags
 * @timeo: its time left (a SinkAvail only for a reader that may wait)
 */
bool sdp_zc_sink_want(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		      int flags, long timeo)
{
	u32 thresh = READ_ONCE(ssk->zcopy_thresh);

	return thresh && timeo && len >= thresh &&
	       !(flags & (MSG_PEEK | MSG_TRUNC | MSG_OOB)) &&
	       (ssk->peer_caps & SDP_CAP_SINK_AVAIL) &&
	       (iter_is_iovec(&msg->msg_iter) || iter_is_ubuf(&msg->msg_iter)) &&
	       iov_iter_single_seg_count(&msg->msg_iter) >= thresh &&
	       ssk->rcv_nxt == ssk->copied_seq && !ssk->urg_data &&
	       sdp_conn_usable(ssk) &&
	       !(ssk->sk.sk_shutdown & RCV_SHUTDOWN) &&
	       !(ssk->zc && ssk->zc->sink_state != SDP_ZC_SINK_NONE);
}

/* The SinkAvail's header, for sdp_send_ctrl(). */
void sdp_zc_fill_sinkavail(struct sdp_sock *ssk, struct sdp_avail_hdr *a)
{
	struct sdp_zc_reg *reg = ssk->zc->sink;

	a->len = cpu_to_be32(reg->len);
	a->rkey = cpu_to_be32(reg->mr->rkey);
	a->addr = cpu_to_be64(reg->mr->iova);
}

static bool sdp_zc_sink_settled(struct sdp_sock *ssk)
{
	struct sdp_zc *zc = ssk->zc;

	if (!sdp_conn_usable(ssk))
		return true;
	return zc->sink_state == SDP_ZC_SINK_OUT ? zc->sink_done :
						   zc->sink_acked;
}

/**
 * sdp_zc_sink - offer the reader's buffer to the peer, and wait
 * @ssk: the socket, locked, with nothing queued to read
 * @msg: the reader's message: its iterator moves past what the peer wrote
 * @timeo: the reader's time left
 *
 * Return: bytes the peer wrote into the buffer (read, as far as the stream
 * goes), 0 when it wrote none (data came another way, the time is up, a
 * signal: the caller goes on as without a SinkAvail), -EOPNOTSUPP when no
 * SinkAvail could be offered (the caller waits as usual), or another
 * negative errno.
 */
int sdp_zc_sink(struct sdp_sock *ssk, struct msghdr *msg, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	struct sdp_zc_reg *reg;
	struct sdp_zc *zc;
	long grace = SDP_ZC_CANCEL_TIMEOUT;
	u32 wrote;
	ssize_t n;

	zc = sdp_zc_get(ssk);
	if (!zc || sdp_zc_mrs(ssk, zc))
		return -EOPNOTSUPP;
	reg = sdp_zc_free_reg(zc);
	if (!reg)
		return -EOPNOTSUPP;
	reg->sink = true;
	n = sdp_zc_register(ssk, zc, reg, &msg->msg_iter, NULL,
			    IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE);
	if (n < 0) {
		reg->sink = false;
		if (n == -ENOBUFS)
			SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_FALLBACKS);
		return n == -EFAULT ? n : -EOPNOTSUPP;
	}
	zc->sink = reg;
	zc->sink_state = SDP_ZC_SINK_OUT;
	zc->sink_done = false;
	zc->sink_acked = false;
	zc->sink_wrote = 0;
	ssk->zc_sinkavail = true;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_TX_SINKAVAIL);
	sdp_tx_flush(ssk);

	/* the peer writes, or data comes another way, or we give up */
	add_wait_queue(sk_sleep(sk), &wait);
	ssk->zc_readers++;
	while (!zc->sink_done && sdp_conn_usable(ssk) &&
	       ssk->rcv_nxt == ssk->copied_seq && !sk->sk_err &&
	       !(sk->sk_shutdown & RCV_SHUTDOWN) && *timeo &&
	       !signal_pending(current))
		sk_wait_event(sk, timeo, zc->sink_done || !sdp_conn_usable(ssk) ||
			      ssk->rcv_nxt != ssk->copied_seq || sk->sk_err ||
			      (sk->sk_shutdown & RCV_SHUTDOWN), &wait);
	ssk->zc_readers--;
	remove_wait_queue(sk_sleep(sk), &wait);

	if (!zc->sink_done && sdp_conn_usable(ssk)) {
		/* the peer may be writing: it must say it is done */
		zc->sink_state = SDP_ZC_SINK_CANCEL;
		ssk->zc_sink_cancel = true;
		SDP_INC_STATS(sock_net(sk), SDP_MIB_SINK_CANCELS);
		sdp_tx_flush(ssk);
		while (!sdp_zc_sink_settled(ssk) && grace > 0) {
			release_sock(sk);
			grace = wait_event_timeout(ssk->zc_wait,
						   sdp_zc_sink_settled(ssk), grace);
			lock_sock(sk);
		}
		if (!sdp_zc_sink_settled(ssk)) {
			net_warn_ratelimited("ib_sdp: peer did not answer a SinkAvailCancel, connection reset\n");
			sdp_conn_abort(ssk, ECONNRESET, true);
		}
	}
	wrote = zc->sink_done ? zc->sink_wrote : 0;
	zc->sink_state = SDP_ZC_SINK_NONE;
	zc->sink = NULL;

	/* the key dies before the buffer is the reader's again */
	if (reg->state == SDP_ZC_REG_ADVERTISED && sdp_conn_usable(ssk)) {
		struct ib_send_wr wr = {
			.opcode		= IB_WR_LOCAL_INV,
			.send_flags	= IB_SEND_SIGNALED,
			.wr_cqe		= &reg->b.cqe,
			.ex.invalidate_rkey = reg->mr->rkey,
		};

		reg->state = SDP_ZC_REG_INVALIDATING;
		if (ib_post_send(ssk->qp, &wr, NULL))
			sdp_conn_abort(ssk, ECONNRESET, false);
	}
	/* Ours to release once our LOCAL_INV is done; otherwise (the
	 * connection failed) the teardown deregisters the MR, then releases
	 * it: never the pages while a key to them may work.
	 */
	while (reg->state != SDP_ZC_REG_INVALIDATED &&
	       reg->state != SDP_ZC_REG_FREE) {
		release_sock(sk);
		wait_event(ssk->zc_wait,
			   READ_ONCE(reg->state) == SDP_ZC_REG_INVALIDATED ||
			   READ_ONCE(reg->state) == SDP_ZC_REG_FREE);
		lock_sock(sk);
	}
	if (reg->state == SDP_ZC_REG_INVALIDATED)
		sdp_zc_reg_finish(ssk, reg, true);
	iov_iter_revert(&msg->msg_iter, n - wrote);
	if (wrote)
		SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_ZC_SINK_BYTES, wrote);
	return wrote;
}

/* Sink: RdmaWrCompl, the peer wrote @size bytes into our SinkAvail. */
int sdp_zc_rx_wrcompl(struct sdp_sock *ssk, u32 size)
{
	struct sdp_zc *zc = ssk->zc;

	/* the source may write only bytes that come next in the stream:
	 * nothing can be queued before them
	 */
	if (!zc || zc->sink_state == SDP_ZC_SINK_NONE || zc->sink_done ||
	    !size || size > zc->sink->len || ssk->rcv_nxt != ssk->copied_seq)
		return -EPROTO;
	zc->sink_done = true;
	zc->sink_wrote = size;
	/* those bytes were read the moment they landed */
	WRITE_ONCE(ssk->rcv_nxt, ssk->rcv_nxt + size);
	WRITE_ONCE(ssk->copied_seq, ssk->copied_seq + size);
	ssk->st.bytes_received += size;
	ssk->st.last_data_recv = jiffies;
	sdp_zc_wake(&ssk->sk);
	return 0;
}

/* Sink: SinkCancelAck, the peer will not write into our SinkAvail. */
int sdp_zc_rx_cancel_ack(struct sdp_sock *ssk)
{
	struct sdp_zc *zc = ssk->zc;

	if (!zc || zc->sink_state != SDP_ZC_SINK_CANCEL || zc->sink_acked)
		return -EPROTO;
	zc->sink_acked = true;
	sdp_zc_wake(&ssk->sk);
	return 0;
}

/* Source: the peer offers a buffer (SinkAvail, with its BSDH's mseq_ack):
 * usable if it had received every data-bearing message we sent.
 */
int sdp_zc_rx_sinkavail(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_bsdh *h = buf->data;
	struct sdp_avail_hdr *a = (struct sdp_avail_hdr *)(h + 1);
	u32 len = be32_to_cpu(a->len);

	if (!len || len > SDP_ZC_ADV_MAX)
		return -EPROTO;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_SINKAVAIL);
	ssk->zc_peer_sink.addr = be64_to_cpu(a->addr);
	ssk->zc_peer_sink.rkey = be32_to_cpu(a->rkey);
	ssk->zc_peer_sink.len = len;
	ssk->zc_peer_sink.ack = be32_to_cpu(h->mseq_ack);
	ssk->zc_peer_sink.valid = true;
	return 0;
}

/* The peer's SinkAvail may be written into only while the peer had
 * received every data-bearing message we have sent: checked when it is
 * used, for we may have sent data since it came.
 */
bool sdp_zc_peer_sink_usable(const struct sdp_sock *ssk)
{
	return ssk->zc_peer_sink.valid &&
	       (s32)(ssk->zc_peer_sink.ack - ssk->zc_data_mseq) >= 0;
}

/* Source: SinkAvailCancel; answered once whatever we wrote is reported. */
void sdp_zc_rx_sink_cancel(struct sdp_sock *ssk)
{
	ssk->zc_peer_sink.valid = false;
	ssk->zc_cancel_ack = true;
}

/**
 * sdp_zc_write - write the next part of a send into the peer's SinkAvail
 * @ssk: the socket, locked, with a usable SinkAvail of the peer's and
 *	 nothing queued before it
 * @msg: the send; its iterator moves past what was written
 *
 * RDMA-WRITEs from the sender's pinned pages, queues RdmaWrCompl behind
 * the writes and waits for them (their pages are pinned).
 *
 * Return: bytes written, or a negative errno.
 */
ssize_t sdp_zc_write(struct sdp_sock *ssk, struct msghdr *msg)
{
	struct sock *sk = &ssk->sk;
	struct sdp_zc *zc = sdp_zc_get(ssk);
	u32 len, pos = 0, good = 0;
	int i, n, posted = 0;
	bool failed = false;

	if (!zc)
		return -ENOMEM;
	len = min_t(size_t, iov_iter_single_seg_count(&msg->msg_iter),
		    min_t(u32, ssk->zc_peer_sink.len,
			  SDP_ZC_RW_OPS * SDP_ZC_CHUNK));
	while (pos < len && posted < SDP_ZC_RW_OPS) {
		n = sdp_zc_rw_prep(ssk, &zc->wr[posted], &msg->msg_iter,
				   min_t(u32, len - pos, SDP_ZC_CHUNK),
				   ssk->zc_peer_sink.addr + pos,
				   ssk->zc_peer_sink.rkey);
		if (n < 0)
			break;
		pos += n;
		posted++;
	}
	if (!posted)
		return 0;	/* copy instead */
	ssk->zc_peer_sink.valid = false;
	ssk->zc_wrcompl = pos;	/* behind the writes, before any data */
	sdp_tx_flush(ssk);

	release_sock(sk);
	wait_event(ssk->zc_wait, sdp_zc_rw_idle(zc->wr));
	lock_sock(sk);
	for (i = 0; i < posted; i++) {
		struct sdp_zc_rw *rw = &zc->wr[i];
		int p;

		for (p = 0; p < rw->npages; p++)
			put_page(rw->pages[p]);
		rw->npages = 0;
		if (failed || rw->b.status != IB_WC_SUCCESS)
			failed = true;
		else
			good += rw->len;
	}
	if (failed)
		return good ? good : -ECONNRESET;	/* the connection is gone */
	SDP_ADD_STATS(sock_net(sk), SDP_MIB_TX_ZC_WRITE_BYTES, good);
	return good;
}

/* The first SrcAvail in the receive queue that is still to be read. */
static struct sdp_buf *sdp_zc_first_adv(struct sdp_sock *ssk)
{
	struct sdp_buf *buf;

	list_for_each_entry(buf, &ssk->rx_queue, list)
		if (buf->kind == SDP_BUF_RX && buf->mid == SDP_MID_SRC_AVAIL)
			return buf;
	return NULL;
}

/* How much may wait read ahead: what TCP would buffer for a reader that
 * does not read, its SO_RCVBUF if set, else tcp_rmem's maximum.
 */
static u32 sdp_zc_budget(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	u32 max = sk->sk_userlocks & SOCK_RCVBUF_LOCK ? sk->sk_rcvbuf :
		  READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_rmem[2]);

	return max_t(u32, max, SDP_ZC_CHUNK);
}

/* zc_work: read ahead what no reader came for. */
static void sdp_zc_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, zc_work);
	struct sock *sk = &ssk->sk;
	struct sdp_buf *adv;

	/* closed: its unread data is discarded, no need to fetch it */
	if (!sdp_timer_claim(ssk, SDP_F_ZC_TIMER) || sock_flag(sk, SOCK_DEAD))
		goto out;
	while (sdp_conn_usable(ssk) && !(ssk->zc && ssk->zc->fetching)) {
		adv = sdp_zc_first_adv(ssk);
		if (!adv)
			break;
		if (!test_bit(SDP_F_ZC_HURRY, &ssk->flags) &&
		    ssk->zc_bounce >= sdp_zc_budget(ssk))
			break;
		if (sdp_zc_fetch(ssk, adv, NULL,
				 min_t(u32, adv->zc_len, SDP_ZC_CHUNK)) < 0)
			break;
	}
out:
	release_sock(sk);
	sock_put(sk);	/* sdp_timer_arm()'s */
}

/* Under the socket lock, a reader is leaving or read-ahead data was read:
 * read ahead again what is left.
 */
void sdp_zc_rx_done(struct sdp_sock *ssk)
{
	if (ssk->zc_rx_count && !ssk->zc_readers)
		sdp_timer_arm(ssk, SDP_F_ZC_TIMER, &ssk->zc_work, 1);
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
