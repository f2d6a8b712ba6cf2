// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: one-sided RDMA through the socket, the local transport's half
 * (sdp_region.c has the calls; sdp_rdma_region.c the RDMA transport's).
 *
 * Both ends are in this kernel, so a region is only its owner's pinned
 * pages (FOLL_LONGTERM, charged to the owner's RLIMIT_MEMLOCK) in the
 * owner's end of the link (struct sdp_local_end.regions), found by token
 * from the other end; an op is a copy between the caller's iovec and
 * those pages, in the caller's context: complete when the call returns.
 *
 * Objects and references: struct sdp_local_region, a kref held by its
 * slot and by an op for each chunk it copies (found by token, taken
 * under the link lock).  An op copies a chunk at a time, each between
 * sdp_lr_hold() and sdp_lr_unhold() (@ops), with page faults off: a hold
 * lasts one memcpy of at most SDP_LR_CHUNK bytes, never a fault of the
 * caller's buffer (a userfaultfd could make that last for ever), which
 * is taken between two chunks, holding nothing of the region: a region
 * ended meanwhile is not found again, and its pages go with its slot's
 * reference.  DEREG, the
 * owner's close() (->region_close) and its teardown take the region out
 * of its slot, mark it @dead (no new hold), wait for the hold under way
 * (short: not killable) and drop the slot's reference; the last
 * reference unpins.  So no byte of a region moves once any of them has
 * returned.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/wait_bit.h>

#include "sdp.h"
#include "sdp_local.h"

/* bytes an op copies under one hold */
#define SDP_LR_CHUNK	(16 * PAGE_SIZE)

struct sdp_local_region {
	struct kref	ref;
	atomic_t	ops;	/* holds: copying now */
	bool		dead;	/* out of its slot: no new hold */
	u64		token;
	u64		len;
	u32		access;	/* SDP_REGION_* */
	u32		first;	/* its first byte's offset in its page */
	struct page	**pages;
	int		npages;
	struct mmpin	mmp;
};

static void sdp_lr_free(struct kref *ref)
{
	struct sdp_local_region *r = container_of(ref, struct sdp_local_region,
						  ref);

	if (r->npages)
		unpin_user_pages_dirty_lock(r->pages, r->npages,
					    r->access & SDP_REGION_WRITE);
	if (r->mmp.user)
		mm_unaccount_pinned_pages(&r->mmp);
	kvfree(r->pages);
	kfree(r);
}

static void sdp_lr_put(struct sdp_local_region *r)
{
	kref_put(&r->ref, sdp_lr_free);
}

/* Before a chunk is copied: false once the region is dead. */
static bool sdp_lr_hold(struct sdp_local_region *lr)
{
	atomic_inc(&lr->ops);
	smp_mb__after_atomic();		/* pairs with sdp_lr_kill() */
	if (!READ_ONCE(lr->dead))
		return true;
	if (atomic_dec_and_test(&lr->ops))
		wake_up_var(&lr->ops);
	return false;
}

static void sdp_lr_unhold(struct sdp_local_region *lr)
{
	if (atomic_dec_and_test(&lr->ops))
		wake_up_var(&lr->ops);
}

/* Out of its slot: no chunk is copied into or out of it any more once
 * this returns.  A hold is one memcpy with page faults off, so the wait
 * is short and need not be killable; then the slot's reference goes.
 */
static void sdp_lr_kill(struct sdp_local_region *lr)
{
	WRITE_ONCE(lr->dead, true);
	smp_mb();			/* pairs with sdp_lr_hold() */
	wait_var_event(&lr->ops, !atomic_read(&lr->ops));
	sdp_lr_put(lr);
}

/* The caller's end of the link, and whether it is still joined. */
static struct sdp_local_end *sdp_lr_end(struct sdp_conn *conn, bool other)
{
	return &conn->link->end[other ? !conn->side : conn->side];
}

/* A random token no region of @end has (the link lock held). */
static u64 sdp_lr_token(struct sdp_local_end *end)
{
	u64 t;
	int i;

again:
	t = get_random_u64();
	for (i = 0; i < SDP_REGIONS_MAX; i++)
		if (!t || (end->regions[i] && end->regions[i]->token == t))
			goto again;
	return t;
}

/**
 * sdp_local_region_reg - the local transport's ->region_reg()
 * @ssk: the socket, locked, connected
 * @conn: its connection, held
 * @r: the region asked for; its token filled in
 *
 * Return: 0 or a negative errno.
 */
int sdp_local_region_reg(struct sdp_sock *ssk, struct sdp_conn *conn,
			 struct sdp_region *r)
{
	struct sdp_local_region *lr;
	struct sdp_local_end *end;
	int i, err;

	if (!conn->link)
		return -EPIPE;
	/* both ends asked for regions (SDP_REGIONS), as over RDMA */
	if (!conn->link->end[0].regions_ok || !conn->link->end[1].regions_ok)
		return -EOPNOTSUPP;
	lr = kzalloc(sizeof(*lr), GFP_KERNEL_ACCOUNT);
	if (!lr)
		return -ENOMEM;
	kref_init(&lr->ref);
	lr->len = r->len;
	lr->access = r->access;
	lr->first = offset_in_page(r->addr);
	err = sdp_pin_user(r->addr, lr->len, lr->access & SDP_REGION_WRITE,
			   &lr->pages, &lr->npages, &lr->mmp);
	if (err) {
		sdp_lr_put(lr);
		return err;
	}
	end = sdp_lr_end(conn, false);
	spin_lock_bh(&conn->link->lock);
	for (i = 0; i < SDP_REGIONS_MAX && end->regions[i]; i++)
		;
	if (i < SDP_REGIONS_MAX && end->ssk) {
		lr->token = sdp_lr_token(end);
		end->regions[i] = lr;
	}
	spin_unlock_bh(&conn->link->lock);
	if (!lr->token) {
		sdp_lr_put(lr);
		return i < SDP_REGIONS_MAX ? -EPIPE : -ENOBUFS;
	}
	r->token = lr->token;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RG_REGS);
	return 0;
}

/**
 * sdp_local_region_dereg - the local transport's ->region_dereg()
 * @ssk: the socket, locked
 * @conn: its connection, held
 * @token: the region's
 *
 * Return: 0 once no op copies into or out of it any more, or -ENOENT.
 */
int sdp_local_region_dereg(struct sdp_sock *ssk, struct sdp_conn *conn,
			   u64 token)
{
	struct sdp_local_region *lr = NULL;
	struct sdp_local_end *end;
	int i;

	if (!conn->link)
		return -ENOENT;
	end = sdp_lr_end(conn, false);
	spin_lock_bh(&conn->link->lock);
	for (i = 0; i < SDP_REGIONS_MAX; i++) {
		if (end->regions[i] && end->regions[i]->token == token) {
			lr = end->regions[i];
			end->regions[i] = NULL;
			break;
		}
	}
	spin_unlock_bh(&conn->link->lock);
	if (!lr)
		return -ENOENT;
	sdp_lr_kill(lr);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RG_DEREGS);
	return 0;
}

/**
 * sdp_local_region_close - the local transport's ->region_close()
 * @ssk: the socket, locked, its file being released
 * @conn: its connection, held
 */
void sdp_local_region_close(struct sdp_sock *ssk, struct sdp_conn *conn)
{
	struct sdp_local_region *list[SDP_REGIONS_MAX];

	if (!conn->link)
		return;
	spin_lock_bh(&conn->link->lock);
	sdp_local_regions_drop(sdp_lr_end(conn, false), list);
	spin_unlock_bh(&conn->link->lock);
	sdp_local_regions_put(list);
}

/* Copy up to @len bytes between @it and region bytes from @a on, within
 * one page of the region, with page faults off.  Return: bytes copied.
 */
static size_t sdp_lr_copy_page(struct sdp_local_region *lr,
			       struct iov_iter *it, u64 a, size_t len,
			       bool read)
{
	struct page *page = lr->pages[a >> PAGE_SHIFT];
	size_t in = offset_in_page(a), got;
	void *va;

	len = min_t(size_t, len, PAGE_SIZE - in);
	va = kmap_local_page(page);
	pagefault_disable();
	got = read ? copy_to_iter(va + in, len, it) :
		     copy_from_iter(va + in, len, it);
	pagefault_enable();
	kunmap_local(va);
	return got;
}

/* The peer's region @token on @conn, a reference taken; or NULL. */
static struct sdp_local_region *sdp_lr_find(struct sdp_conn *conn,
					    u64 token)
{
	struct sdp_local_end *peer = sdp_lr_end(conn, true);
	struct sdp_local_region *lr = NULL;
	int i;

	spin_lock_bh(&conn->link->lock);
	for (i = 0; i < SDP_REGIONS_MAX && !lr; i++)
		if (peer->regions[i] && peer->regions[i]->token == token)
			lr = peer->regions[i];
	if (lr)
		kref_get(&lr->ref);
	spin_unlock_bh(&conn->link->lock);
	return lr;
}

/* Copy @n bytes between @it and bytes [@off, @off + @n) of the peer's
 * region @token, a chunk per hold.  Between two chunks the op holds
 * nothing of the region, not even a reference: the caller's pages are
 * faulted in then (a userfaultfd may make that last), and a region the
 * owner ended meanwhile is not found again.  Stops short at a fault that
 * cannot be resolved, a fatal signal, or the region's end (*@gone).
 */
static size_t sdp_lr_copy(struct sdp_conn *conn, u64 token,
			  struct iov_iter *it, u64 off, size_t n, bool read,
			  bool *gone)
{
	size_t done = 0, chunk, got, want;
	struct sdp_local_region *lr;

	while (done < n && !fatal_signal_pending(current)) {
		chunk = min_t(size_t, n - done, SDP_LR_CHUNK);
		lr = sdp_lr_find(conn, token);
		*gone = !lr || !sdp_lr_hold(lr);
		if (*gone) {
			if (lr)
				sdp_lr_put(lr);
			break;
		}
		for (got = 0; got < chunk; got += want) {
			want = sdp_lr_copy_page(lr, it, lr->first + off + done +
						got, chunk - got, read);
			if (!want)
				break;
		}
		sdp_lr_unhold(lr);
		sdp_lr_put(lr);
		done += got;
		if (got < chunk &&
		    (read ? fault_in_iov_iter_writeable(it, chunk - got) :
			    fault_in_iov_iter_readable(it, chunk - got)) ==
		    chunk - got)
			break;	/* not even one byte there: EFAULT */
		cond_resched();
	}
	return done;
}

/**
 * sdp_local_rdma_op - the local transport's ->rdma_op(): a copy into or
 *	out of a region of the peer's
 * @ssk: the socket, locked, connected
 * @msg: the caller's buffer
 * @op: the op asked for
 * @s: the send's state; @s->copied the bytes moved
 *
 * Return: 0, or a negative errno: ENOENT, EACCES, ERANGE, EPIPE, EFAULT,
 * EINTR.
 */
int sdp_local_rdma_op(struct sdp_sock *ssk, struct msghdr *msg,
		      const struct sdp_rdma *op, struct sdp_send *s)
{
	struct sdp_conn *conn = s->conn;
	bool read = op->op == SDP_RDMA_READ, gone = false;
	u64 n = msg_data_left(msg);
	struct sdp_local_region *lr;
	size_t done;
	int err = 0;

	if (!conn->link || test_bit(SDP_F_DISCONN_RCVD, &ssk->flags))
		return -EPIPE;
	if (!conn->link->end[0].regions_ok || !conn->link->end[1].regions_ok)
		return -EOPNOTSUPP;
	lr = sdp_lr_find(conn, op->token);
	if (!lr)
		return -ENOENT;
	if (!(lr->access & (read ? SDP_REGION_READ : SDP_REGION_WRITE)))
		err = -EACCES;
	else if (op->offset > lr->len || n > lr->len - op->offset)
		err = -ERANGE;
	sdp_lr_put(lr);
	if (err)
		return err;
	if (read) {
		/* sendmsg()'s iterator is a source; the caller's segments
		 * are what the READ fills
		 */
		struct iov_iter dst = msg->msg_iter;

		dst.data_source = ITER_DEST;
		done = sdp_lr_copy(conn, op->token, &dst, op->offset, n, true,
				   &gone);
		iov_iter_advance(&msg->msg_iter, done);
	} else {
		done = sdp_lr_copy(conn, op->token, &msg->msg_iter, op->offset,
				   n, false, &gone);
	}
	s->copied = done;
	SDP_ADD_STATS(sock_net(&ssk->sk), read ? SDP_MIB_RG_READ_BYTES :
		      SDP_MIB_RG_WRITE_BYTES, done);
	if (done)
		return 0;
	if (fatal_signal_pending(current))
		return -EINTR;
	return gone ? -ENOENT : -EFAULT;
}

/**
 * sdp_local_regions_drop - the end's teardown: its regions go
 * @end: the end torn down; the link lock held
 * @list: where to put them, to sdp_local_regions_put() after the lock
 */
void sdp_local_regions_drop(struct sdp_local_end *end,
			    struct sdp_local_region **list)
{
	int i;

	for (i = 0; i < SDP_REGIONS_MAX; i++) {
		list[i] = end->regions[i];
		end->regions[i] = NULL;
	}
}

/* After sdp_local_regions_drop(), the link lock released: they end. */
void sdp_local_regions_put(struct sdp_local_region **list)
{
	int i;

	for (i = 0; i < SDP_REGIONS_MAX; i++)
		if (list[i])
			sdp_lr_kill(list[i]);
}
