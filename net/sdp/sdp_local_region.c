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
 * slot and by each op copying (taken under the link lock).  DEREG takes
 * it out of its slot, waits (killable) until no op copies, then drops
 * the slot's reference; the last reference unpins.  The owner's teardown
 * empties its slots the same way, without waiting.
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

struct sdp_local_region {
	struct kref	ref;
	atomic_t	ops;	/* copying now */
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
 * Return: 0 once no op copies into it any more, -ENOENT, or -EINTR (a
 * fatal signal: the last op lets the pages go).
 */
int sdp_local_region_dereg(struct sdp_sock *ssk, struct sdp_conn *conn,
			   u64 token)
{
	struct sdp_local_region *lr = NULL;
	struct sdp_local_end *end;
	int i, err = 0;

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
	if (wait_var_event_killable(&lr->ops, !atomic_read(&lr->ops)))
		err = -EINTR;
	sdp_lr_put(lr);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RG_DEREGS);
	return err;
}

/* Copy @n bytes between @it and region bytes [@off, @off + @n). */
static size_t sdp_lr_copy(struct sdp_local_region *lr, struct iov_iter *it,
			  u64 off, size_t n, bool read)
{
	size_t done = 0;

	while (done < n) {
		u64 a = lr->first + off + done;
		struct page *page = lr->pages[a >> PAGE_SHIFT];
		size_t in = offset_in_page(a);
		size_t len = min_t(size_t, n - done, PAGE_SIZE - in);
		void *va = kmap_local_page(page);
		size_t got = read ? copy_to_iter(va + in, len, it) :
				    copy_from_iter(va + in, len, it);

		kunmap_local(va);
		done += got;
		if (got != len)
			break;
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
 * Return: 0, or a negative errno: ENOENT, EACCES, ERANGE, EPIPE, EFAULT.
 */
int sdp_local_rdma_op(struct sdp_sock *ssk, struct msghdr *msg,
		      const struct sdp_rdma *op, struct sdp_send *s)
{
	struct sdp_conn *conn = s->conn;
	struct sdp_local_region *lr = NULL;
	bool read = op->op == SDP_RDMA_READ;
	u64 n = msg_data_left(msg);
	struct sdp_local_end *peer;
	int i, err = 0;
	size_t done;

	if (!conn->link || test_bit(SDP_F_DISCONN_RCVD, &ssk->flags))
		return -EPIPE;
	if (!conn->link->end[0].regions_ok || !conn->link->end[1].regions_ok)
		return -EOPNOTSUPP;
	peer = sdp_lr_end(conn, true);
	spin_lock_bh(&conn->link->lock);
	for (i = 0; i < SDP_REGIONS_MAX; i++)
		if (peer->regions[i] && peer->regions[i]->token == op->token)
			lr = peer->regions[i];
	if (!lr)
		err = -ENOENT;
	else if (!(lr->access & (read ? SDP_REGION_READ : SDP_REGION_WRITE)))
		err = -EACCES;
	else if (op->offset > lr->len || n > lr->len - op->offset)
		err = -ERANGE;
	if (!err) {
		kref_get(&lr->ref);
		atomic_inc(&lr->ops);
	}
	spin_unlock_bh(&conn->link->lock);
	if (err)
		return err;
	if (read) {
		/* sendmsg()'s iterator is a source; the caller's segments
		 * are what the READ fills
		 */
		struct iov_iter dst = msg->msg_iter;

		dst.data_source = ITER_DEST;
		done = sdp_lr_copy(lr, &dst, op->offset, n, true);
		iov_iter_advance(&msg->msg_iter, done);
	} else {
		done = sdp_lr_copy(lr, &msg->msg_iter, op->offset, n, false);
	}
	if (atomic_dec_and_test(&lr->ops))
		wake_up_var(&lr->ops);
	sdp_lr_put(lr);
	s->copied = done;
	SDP_ADD_STATS(sock_net(&ssk->sk), read ? SDP_MIB_RG_READ_BYTES :
		      SDP_MIB_RG_WRITE_BYTES, done);
	return done ? 0 : -EFAULT;
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

void sdp_local_regions_put(struct sdp_local_region **list)
{
	int i;

	for (i = 0; i < SDP_REGIONS_MAX; i++)
		if (list[i])
			sdp_lr_put(list[i]);
}
