// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: AZ-SDP, asynchronous zero copy for blocking sends: the module's
 * half (libsdp's async.c is the other; Documentation/sdp.rst, "AZ-SDP").
 *
 * libsdp write-protects the page-aligned middle of a large blocking send
 * with its userfaultfd, then sends with an SDP_AZ_SEND control message
 * naming that range and a cookie.  If the socket is bound to the calling
 * process's channel (SDP_ASYNC) and the range checks out, that part goes
 * as MSG_ZEROCOPY does: its SrcAvails carry an op (a ubuf_info) and the
 * call returns once they are queued, not once the peer has read them.
 * When the op's last registration is over (the peer read it, or the
 * connection failed), its record {cookie, ASYNC} is queued on the
 * channel; libsdp reads it and lifts the protection.  Otherwise the send
 * is today's synchronous one and the record, with the reason, is queued
 * before the call returns.  A program that writes into the range
 * meanwhile waits in its page fault for libsdp, whatever the writer (its
 * own stores, read(), O_DIRECT, ...).
 *
 * The checks (sdp_az_check()) are a fail-safe against a libsdp bug, not
 * a proof: every page must be in private anonymous memory registered for
 * write-protection to the attached userfaultfd, none writable (GUP-fast
 * finds no writable PTE), none long-term pinned by anyone else (an
 * io_uring fixed buffer, an RDMA MR: writes through those never fault).
 * A kernel of this module's lets it read no PTE's uffd-wp bit (follow_pte
 * is gone since 6.12), so a page made read-only for another reason passes.
 *
 * Objects: struct sdp_az_chan, one per open of /dev/sdp_az, bound to the
 * opener's mm.  It holds the attached userfaultfd's file, so that the
 * program closing that descriptor cannot lift the protections in flight,
 * and the ops in flight.  References on a channel: its open file, each
 * socket bound to it (ssk->az_chan), each op.  struct sdp_az_op: the send
 * call holds one reference, each registration carrying its pages another
 * (net_zcopy_get() in sdp_zc_register()); the last one queues the record.
 *
 * Locks: chan->lock, a spinlock taken with interrupts off (ops complete
 * from the completion path), guards the op list and the record ring and
 * is never held across anything that sleeps; sdp_az_lock guards the list
 * of channels.  The checks take mmap_read_lock.  A receive into memory
 * that an op of the same process still covers waits first, without the
 * socket lock (sdp_az_recv_wait()): its copy would fault and wait for
 * libsdp, which waits for a completion that needs that socket's lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/nsproxy.h>
#include <linux/pagemap.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "sdp.h"
#include "sdp_az.h"

#define SDP_AZ_RING	1024	/* records, and so ops, per channel */
/* bytes of a range sdp_az_check_pages() looks at between two looks at
 * the scheduler and at fatal signals
 */
#define SDP_AZ_CHECK_BATCH	(256 * PAGE_SIZE)

struct sdp_az_chan {
	struct kref		ref;
	struct mm_struct	*mm;		/* mmgrab()ed */
	struct file		*uffd;		/* attached, or NULL */
	void			*uffd_ctx;	/* its private_data */
	spinlock_t		lock;
	struct mutex		read_lock;	/* one reader at a time */
	struct list_head	ops;		/* in flight */
	struct sdp_az_done	ring[SDP_AZ_RING];
	u32			head, count;	/* records to read */
	u32			reserved;	/* ops + records */
	bool			closed;		/* no reader any more */
	wait_queue_head_t	wq;		/* readers, sdp_az_recv_wait() */
	struct list_head	node;		/* in sdp_az_chans */
	struct work_struct	free_work;
};

struct sdp_az_op {
	struct ubuf_info	ubuf;
	struct sdp_az_chan	*chan;		/* held */
	struct list_head	node;		/* in chan->ops */
	struct mmpin		mmp;		/* RLIMIT_MEMLOCK's charge */
	u64			addr, len, cookie;
	u32			reason;		/* SDP_AZ_SYNC_* */
	bool			async, failed;
};

static LIST_HEAD(sdp_az_chans);
static DEFINE_SPINLOCK(sdp_az_lock);
static atomic_t sdp_az_nchans = ATOMIC_INIT(0);

static void sdp_az_chan_free(struct work_struct *work)
{
	struct sdp_az_chan *chan = container_of(work, struct sdp_az_chan,
						free_work);

	if (chan->uffd)
		fput(chan->uffd);
	mmdrop(chan->mm);
	kvfree(chan);
}

/* The last reference may go in the completion path: free in a worker. */
static void sdp_az_chan_release(struct kref *ref)
{
	struct sdp_az_chan *chan = container_of(ref, struct sdp_az_chan, ref);

	INIT_WORK(&chan->free_work, sdp_az_chan_free);
	queue_work(sdp_wq, &chan->free_work);
}

/* Another reference on @chan, if there is one. */
struct sdp_az_chan *sdp_az_chan_get(struct sdp_az_chan *chan)
{
	if (chan)
		kref_get(&chan->ref);
	return chan;
}

void sdp_az_chan_put(struct sdp_az_chan *chan)
{
	kref_put(&chan->ref, sdp_az_chan_release);
}

/* An op is over: its record goes to the channel, if anyone reads it. */
static void sdp_az_op_done(struct sdp_az_op *op)
{
	struct sdp_az_chan *chan = op->chan;
	struct sdp_az_done *rec;
	unsigned long flags;

	spin_lock_irqsave(&chan->lock, flags);
	list_del(&op->node);
	if (chan->closed) {
		chan->reserved--;
	} else {
		rec = &chan->ring[(chan->head + chan->count++) % SDP_AZ_RING];
		rec->cookie = op->cookie;
		rec->flags = (op->async ? SDP_AZ_DONE_ASYNC : 0) |
			     (op->failed ? SDP_AZ_DONE_FAILED : 0);
		rec->reason = op->reason;
	}
	spin_unlock_irqrestore(&chan->lock, flags);
	wake_up_interruptible_all(&chan->wq);
	if (op->mmp.user)
		mm_unaccount_pinned_pages(&op->mmp);
	sdp_az_chan_put(chan);
	kfree(op);
}

/* The ubuf_info's completion: a registration is over, or the send call. */
static void sdp_az_ubuf_complete(struct sk_buff *skb, struct ubuf_info *uarg,
				 bool success)
{
	struct sdp_az_op *op = container_of(uarg, struct sdp_az_op, ubuf);

	if (!success)
		WRITE_ONCE(op->failed, true);
	if (refcount_dec_and_test(&uarg->refcnt))
		sdp_az_op_done(op);
}

SDP_DEFINE_UBUF_OPS(sdp_az_ubuf_ops, sdp_az_ubuf_complete);

/* Is any page of [addr, addr + len) covered by an op of @chan?  Under
 * chan->lock.
 */
static bool sdp_az_busy(struct sdp_az_chan *chan, u64 addr, u64 len)
{
	struct sdp_az_op *op;

	list_for_each_entry(op, &chan->ops, node)
		if (addr < op->addr + op->len && op->addr < addr + len)
			return true;
	return false;
}

/* Does an op of @chan other than @self cover the page at @addr? */
static bool sdp_az_page_ours(struct sdp_az_chan *chan,
			     const struct sdp_az_op *self, u64 addr)
{
	struct sdp_az_op *op;
	unsigned long flags;
	bool ours = false;

	spin_lock_irqsave(&chan->lock, flags);
	list_for_each_entry(op, &chan->ops, node)
		if (op != self && addr < op->addr + op->len &&
		    op->addr < addr + PAGE_SIZE)
			ours = true;
	spin_unlock_irqrestore(&chan->lock, flags);
	return ours;
}

/* Is every mapping over [addr, addr + len) private anonymous memory
 * registered for write-protection to @chan's userfaultfd?  Under
 * mmap_read_lock.
 */
static bool sdp_az_vmas_ours(struct sdp_az_chan *chan, struct mm_struct *mm,
			     u64 addr, u64 len)
{
	struct vm_area_struct *vma;
	u64 at = addr;

	while (at < addr + len) {
		cond_resched();
		vma = find_vma(mm, at);
		if (!vma || vma->vm_start > at || !vma_is_anonymous(vma) ||
		    (vma->vm_flags & (VM_SHARED | VM_HUGETLB)) ||
		    !(vma->vm_flags & VM_UFFD_WP) ||
		    sdp_vma_uffd_ctx(vma) != chan->uffd_ctx)
			return false;
		at = vma->vm_end;
	}
	return true;
}

/* No page of @op's range writable, none pinned by another.  Pages not
 * present are neither (the send's own pin brings them in read-only).  A
 * page another op of ours covers is pinned by that op: expected there
 * (@op itself is on the channel's list already, and pins nothing yet).
 */
static u32 sdp_az_check_pages(struct sdp_az_chan *chan,
			      const struct sdp_az_op *op)
{
	struct page *page;
	u64 at;
	bool pinned;

	for (at = op->addr; at < op->addr + op->len; at += PAGE_SIZE) {
		/* the range is the send's own, its pages charged already:
		 * long only for a long send, and a kill still ends it
		 */
		if (!((at - op->addr) & (SDP_AZ_CHECK_BATCH - 1))) {
			if (fatal_signal_pending(current))
				return SDP_AZ_SYNC_OTHER;
			cond_resched();
		}
		if (get_user_page_fast_only(at, FOLL_WRITE, &page)) {
			put_page(page);
			return SDP_AZ_SYNC_UNPROTECTED;
		}
		if (!get_user_page_fast_only(at, 0, &page))
			continue;
		pinned = folio_maybe_dma_pinned(page_folio(page));
		put_page(page);
		if (pinned && !sdp_az_page_ours(chan, op, at))
			return SDP_AZ_SYNC_PINNED;
	}
	return SDP_AZ_SYNC_NONE;
}

/* May @op's range go asynchronously?  SDP_AZ_SYNC_NONE or why not. */
static u32 sdp_az_check(struct sdp_az_chan *chan, const struct sdp_az_op *op)
{
	struct mm_struct *mm = current->mm;
	u32 why;

	if (mmap_read_lock_killable(mm))
		return SDP_AZ_SYNC_OTHER;
	why = sdp_az_vmas_ours(chan, mm, op->addr, op->len) ?
	      sdp_az_check_pages(chan, op) : SDP_AZ_SYNC_UNPROTECTED;
	mmap_read_unlock(mm);
	return why;
}

/* The SDP_AZ_SEND control message of @msg: 1 and *@req, 0 if none, or
 * -EINVAL.
 */
static int sdp_az_cmsg(struct msghdr *msg, struct sdp_az_send *req)
{
	struct cmsghdr *cmsg;

	if (!msg->msg_controllen || msg->msg_control_is_user)
		return 0;
	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_SDP || cmsg->cmsg_type != SDP_AZ_SEND)
			continue;
		if (cmsg->cmsg_len != CMSG_LEN(sizeof(*req)))
			return -EINVAL;
		memcpy(req, CMSG_DATA(cmsg), sizeof(*req));
		if (!req->len || !PAGE_ALIGNED(req->addr) ||
		    !PAGE_ALIGNED(req->len) || req->addr + req->len < req->addr ||
		    req->addr + req->len > TASK_SIZE)
			return -EINVAL;
		return 1;
	}
	return 0;
}

/* A new op for @req on @chan, its record's slot taken; NULL if the ring is
 * full (libsdp keeps fewer in flight).
 */
static struct sdp_az_op *sdp_az_op_new(struct sdp_az_chan *chan,
				       const struct sdp_az_send *req)
{
	struct sdp_az_op *op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);
	unsigned long flags;

	if (!op)
		return NULL;
	op->addr = req->addr;
	op->len = req->len;
	op->cookie = req->cookie;
	sdp_ubuf_set_ops(&op->ubuf, sdp_az_ubuf_ops, sdp_az_ubuf_complete);
	refcount_set(&op->ubuf.refcnt, 1);	/* the send call's */

	spin_lock_irqsave(&chan->lock, flags);
	if (chan->closed || chan->reserved >= SDP_AZ_RING) {
		spin_unlock_irqrestore(&chan->lock, flags);
		kfree(op);
		return NULL;
	}
	chan->reserved++;
	list_add_tail(&op->node, &chan->ops);
	kref_get(&chan->ref);
	op->chan = chan;
	spin_unlock_irqrestore(&chan->lock, flags);
	return op;
}

/**
 * sdp_az_begin - a send that may name an AZ range
 * @ssk: the socket, locked, bound to a channel
 * @msg: the send
 * @opp: the op for its SDP_AZ_SEND, whose record sdp_az_end() queues;
 *	NULL if it names none
 *
 * Return: 0, or -EINVAL for a malformed control message or a socket bound
 * to another process's channel (a child's after fork()), -ENOBUFS with
 * too many ops in flight: no record comes for those.
 */
int sdp_az_begin(struct sdp_sock *ssk, struct msghdr *msg,
		 struct sdp_az_op **opp)
{
	struct sdp_az_chan *chan = ssk->az_chan;
	struct sdp_az_send req;
	int err;

	*opp = NULL;
	err = sdp_az_cmsg(msg, &req);
	if (err <= 0)
		return err;
	if (chan->mm != current->mm)
		return -EINVAL;	/* another process's channel */
	/* a part of this send's buffer (libsdp's page-aligned middle),
	 * never more: what is looked at and pinned is what is sent
	 */
	if (req.len > msg_data_left(msg))
		return -EINVAL;
	*opp = sdp_az_op_new(chan, &req);
	return *opp ? 0 : -ENOBUFS;
}

/**
 * sdp_az_prepare - may the op's range go asynchronously?
 * @op: the op
 * @s: the send's state (its socket locked, connected): if so, @s->uarg
 *	is the op's and @s->az set
 */
void sdp_az_prepare(struct sdp_az_op *op, struct sdp_send *s)
{
	if (s->uarg || !s->timeo || (s->flags & MSG_OOB))
		op->reason = SDP_AZ_SYNC_OTHER;
	/* charged before the pages are looked at: RLIMIT_MEMLOCK bounds
	 * that walk too
	 */
	else if (mm_account_pinned_pages(&op->mmp, op->len))
		op->reason = SDP_AZ_SYNC_BUDGET;
	else if (READ_ONCE(sdp_az_verify))
		op->reason = sdp_az_check(op->chan, op);
	if (op->reason)
		return;
	s->uarg = &op->ubuf;
	s->az = true;
}

/* Does the part of @msg to go next lie inside the op's range? */
bool sdp_az_covers(struct sdp_send *s, struct msghdr *msg)
{
	struct sdp_az_op *op = container_of(s->uarg, struct sdp_az_op, ubuf);
	u64 base = (u64)(uintptr_t)iter_iov_addr(&msg->msg_iter);
	u64 n = iov_iter_single_seg_count(&msg->msg_iter);

	return base >= op->addr && base + n <= op->addr + op->len;
}

/* The send call is over: drop its reference on the op (the record goes
 * now if no registration holds one).
 */
void sdp_az_end(struct sdp_sock *ssk, struct sdp_az_op *op, bool async)
{
	struct net *net = sock_net(&ssk->sk);

	if (async) {
		op->async = true;
		SDP_INC_STATS(net, SDP_MIB_AZ_SENDS);
		SDP_ADD_STATS(net, SDP_MIB_AZ_BYTES, op->len);
	} else {
		if (!op->reason)
			op->reason = SDP_AZ_SYNC_COPIED;
		SDP_INC_STATS(net, SDP_MIB_AZ_SYNC_COPIED - 1 + op->reason);
	}
	sdp_az_ubuf_complete(NULL, &op->ubuf, true);
}

/* Does @iter write into memory an op of @chan covers?  The lock (and
 * interrupts off) for one segment at a time: a receive may name
 * UIO_MAXIOV of them, a channel hold SDP_AZ_RING ops.
 */
static bool sdp_az_iter_busy(struct sdp_az_chan *chan,
			     const struct iov_iter *iter)
{
	struct iov_iter it = *iter;
	unsigned long flags;
	bool busy = false, more = true;
	u64 base, n;

	while (!busy && more && iov_iter_count(&it)) {
		base = (u64)(uintptr_t)iter_iov_addr(&it);
		n = iov_iter_single_seg_count(&it);
		spin_lock_irqsave(&chan->lock, flags);
		more = !list_empty(&chan->ops);
		busy = more && sdp_az_busy(chan, base, n);
		spin_unlock_irqrestore(&chan->lock, flags);
		iov_iter_advance(&it, n);
	}
	return busy;
}

/**
 * sdp_az_recv_wait - before a receive takes the socket lock: wait until no
 *	AZ send of this process covers the receive's buffer
 * @sk: the receiving socket, not locked
 * @msg: the receive
 *
 * Return: 0, or -ERESTARTSYS on a signal.
 */
int sdp_az_recv_wait(struct sock *sk, struct msghdr *msg)
{
	struct sdp_az_chan *chan, *found = NULL;
	int err = 0;

	if (!atomic_read(&sdp_az_nchans) ||
	    !(iter_is_iovec(&msg->msg_iter) || iter_is_ubuf(&msg->msg_iter)))
		return 0;
	spin_lock(&sdp_az_lock);
	list_for_each_entry(chan, &sdp_az_chans, node) {
		if (chan->mm == current->mm && kref_get_unless_zero(&chan->ref)) {
			found = chan;
			break;
		}
	}
	spin_unlock(&sdp_az_lock);
	if (!found)
		return 0;
	if (sdp_az_iter_busy(found, &msg->msg_iter)) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_AZ_RECV_WAITS);
		err = wait_event_interruptible(found->wq,
					       !sdp_az_iter_busy(found,
								 &msg->msg_iter));
	}
	sdp_az_chan_put(found);
	return err;
}

/**
 * sdp_az_fault_in - before a receive pins @addr..@addr + @len for the
 *	device to write (FOLL_LONGTERM): fault the pages in writable
 * @addr: page aligned
 * @len: bytes
 *
 * A send of this process may have left them write-protected: its op is
 * over (sdp_az_recv_wait() waited for that), but libsdp lifts the
 * protection a moment later.  A long-term pin cannot wait for that on 6.1
 * (its slow path faults with no retry, and userfaultfd then fails the
 * fault: EFAULT); a fault by fault_in_safe_writeable() waits, without
 * writing a byte.  Only in a process that has a channel.
 */
void sdp_az_fault_in(unsigned long addr, size_t len)
{
	struct sdp_az_chan *chan;
	bool ours = false;

	if (!atomic_read(&sdp_az_nchans))
		return;
	spin_lock(&sdp_az_lock);
	list_for_each_entry(chan, &sdp_az_chans, node)
		ours |= chan->mm == current->mm;
	spin_unlock(&sdp_az_lock);
	if (ours)
		fault_in_safe_writeable((const char __user *)addr, len);
}

/* SDP_ASYNC read: 0 unbound, 1 bound to a channel of the caller's
 * process, 2 to another's.
 */
int sdp_az_bound(struct sdp_sock *ssk)
{
	if (!ssk->az_chan)
		return 0;
	return ssk->az_chan->mm == current->mm ? 1 : 2;
}

/* SDP_ASYNC: bind @ssk (locked) to the channel of descriptor @fd, or
 * unbind it (-1).
 */
int sdp_az_bind(struct sdp_sock *ssk, int fd)
{
	struct sdp_az_chan *chan = NULL, *old;
	struct file *file;

	if (fd != -1) {
		file = fget(fd);
		if (!file)
			return -EBADF;
		chan = file->private_data;
		if (file->f_op != &sdp_az_fops || chan->mm != current->mm ||
		    !READ_ONCE(chan->uffd)) {
			fput(file);
			return -EINVAL;
		}
		kref_get(&chan->ref);
		fput(file);
	}
	old = ssk->az_chan;
	ssk->az_chan = chan;
	if (old)
		sdp_az_chan_put(old);
	return 0;
}

static int sdp_az_open(struct inode *inode, struct file *file)
{
	struct sdp_az_chan *chan;

	if (!current->mm)
		return -EINVAL;
	chan = kvzalloc(sizeof(*chan), GFP_KERNEL_ACCOUNT);
	if (!chan)
		return -ENOMEM;
	kref_init(&chan->ref);
	mmgrab(current->mm);
	chan->mm = current->mm;
	spin_lock_init(&chan->lock);
	mutex_init(&chan->read_lock);
	INIT_LIST_HEAD(&chan->ops);
	init_waitqueue_head(&chan->wq);
	spin_lock(&sdp_az_lock);
	list_add(&chan->node, &sdp_az_chans);
	spin_unlock(&sdp_az_lock);
	atomic_inc(&sdp_az_nchans);
	file->private_data = chan;
	return 0;
}

static int sdp_az_release(struct inode *inode, struct file *file)
{
	struct sdp_az_chan *chan = file->private_data;
	unsigned long flags;

	spin_lock(&sdp_az_lock);
	list_del(&chan->node);
	spin_unlock(&sdp_az_lock);
	atomic_dec(&sdp_az_nchans);
	spin_lock_irqsave(&chan->lock, flags);
	chan->closed = true;	/* records no one will read */
	chan->reserved -= chan->count;
	chan->count = 0;
	spin_unlock_irqrestore(&chan->lock, flags);
	wake_up_interruptible_all(&chan->wq);
	sdp_az_chan_put(chan);
	return 0;
}

/* The records waiting, up to @max, copied out of the ring (not taken). */
static size_t sdp_az_peek(struct sdp_az_chan *chan, struct sdp_az_done *recs,
			  size_t max)
{
	unsigned long flags;
	size_t n;

	spin_lock_irqsave(&chan->lock, flags);
	for (n = 0; n < chan->count && n < max; n++)
		recs[n] = chan->ring[(chan->head + n) % SDP_AZ_RING];
	spin_unlock_irqrestore(&chan->lock, flags);
	return n;
}

/* read(): records, each once.  One reader at a time: records are taken
 * from the ring only once they reached the reader's buffer.
 */
static ssize_t sdp_az_read(struct file *file, char __user *buf, size_t len,
			   loff_t *ppos)
{
	struct sdp_az_chan *chan = file->private_data;
	struct sdp_az_done recs[16];
	unsigned long flags;
	size_t n;
	int err;

	if (len < sizeof(recs[0]))
		return -EINVAL;
	if (mutex_lock_interruptible(&chan->read_lock))
		return -ERESTARTSYS;
	while (!(n = sdp_az_peek(chan, recs, min(ARRAY_SIZE(recs),
						 len / sizeof(recs[0]))))) {
		err = -EAGAIN;
		if (!(file->f_flags & O_NONBLOCK))
			err = wait_event_interruptible(chan->wq,
						       READ_ONCE(chan->count));
		if (err)
			goto out;
	}
	err = -EFAULT;
	if (copy_to_user(buf, recs, n * sizeof(recs[0])))
		goto out;
	spin_lock_irqsave(&chan->lock, flags);
	chan->head = (chan->head + n) % SDP_AZ_RING;
	chan->count -= n;
	chan->reserved -= n;
	spin_unlock_irqrestore(&chan->lock, flags);
	err = n * sizeof(recs[0]);
out:
	mutex_unlock(&chan->read_lock);
	return err;
}

static __poll_t sdp_az_poll(struct file *file, poll_table *wait)
{
	struct sdp_az_chan *chan = file->private_data;

	poll_wait(file, &chan->wq, wait);
	return READ_ONCE(chan->count) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* SDP_AZ_IOC_ATTACH: the userfaultfd whose registration covers @probe. */
static int sdp_az_attach(struct sdp_az_chan *chan,
			 struct sdp_az_attach __user *uarg)
{
	struct mm_struct *mm = chan->mm;
	struct vm_area_struct *vma;
	struct sdp_az_attach a;
	struct file *file;
	int err = -EINVAL;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags)
		return -EINVAL;
	file = fget(a.uffd);
	if (!file)
		return -EBADF;
	if (mmap_read_lock_killable(mm)) {
		fput(file);
		return -EINTR;
	}
	vma = find_vma(mm, a.probe);
	/* the file's context is the one registered there: a userfaultfd */
	if (vma && vma->vm_start <= a.probe && (vma->vm_flags & VM_UFFD_WP) &&
	    sdp_vma_uffd_ctx(vma) && sdp_vma_uffd_ctx(vma) == file->private_data)
		err = 0;
	mmap_read_unlock(mm);
	if (!err && cmpxchg(&chan->uffd, NULL, file))
		err = -EBUSY;
	if (err) {
		fput(file);
		return err;
	}
	WRITE_ONCE(chan->uffd_ctx, file->private_data);
	return 0;
}

/* SDP_AZ_IOC_VMA: the bounds of the mapping at an address, and what it is. */
static int sdp_az_vma(struct sdp_az_chan *chan, struct sdp_az_vma __user *uarg)
{
	struct mm_struct *mm = chan->mm;
	struct vm_area_struct *vma;
	struct sdp_az_vma v;
	void *ctx;
	int err = -ENOMEM;

	if (copy_from_user(&v, uarg, sizeof(v)))
		return -EFAULT;
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = find_vma(mm, v.addr);
	if (vma && vma->vm_start <= v.addr) {
		err = 0;
		v.start = vma->vm_start;
		v.end = vma->vm_end;
		ctx = sdp_vma_uffd_ctx(vma);
		v.flags = 0;
		if (vma_is_anonymous(vma) &&
		    !(vma->vm_flags & (VM_SHARED | VM_HUGETLB)))
			v.flags |= SDP_AZ_VMA_ANON;
		if (ctx && ctx == READ_ONCE(chan->uffd_ctx) &&
		    (vma->vm_flags & VM_UFFD_WP))
			v.flags |= SDP_AZ_VMA_OURS;
		else if (ctx)
			v.flags |= SDP_AZ_VMA_OTHER;
	}
	mmap_read_unlock(mm);
	if (!err && copy_to_user(uarg, &v, sizeof(v)))
		err = -EFAULT;
	return err;
}

/* SDP_AZ_IOC_COUNT: what libsdp saw, into the counters of the caller's
 * namespace.
 */
static int sdp_az_count(struct sdp_az_count __user *uarg)
{
	struct net *net = current->nsproxy->net_ns;
	struct sdp_az_count c;

	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	SDP_ADD_STATS(net, SDP_MIB_AZ_FAULTS, c.faults);
	SDP_ADD_STATS(net, SDP_MIB_AZ_SYNC_FAULTS, c.fault_syncs);
	return 0;
}

static long sdp_az_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct sdp_az_chan *chan = file->private_data;

	if (current->mm != chan->mm)
		return -EPERM;	/* a channel serves its opener's memory */
	switch (cmd) {
	case SDP_AZ_IOC_ATTACH:
		return sdp_az_attach(chan, (void __user *)arg);
	case SDP_AZ_IOC_VMA:
		return sdp_az_vma(chan, (void __user *)arg);
	case SDP_AZ_IOC_COUNT:
		return sdp_az_count((void __user *)arg);
	}
	return -ENOTTY;
}

const struct file_operations sdp_az_fops = {
	.owner		= THIS_MODULE,
	.open		= sdp_az_open,
	.release	= sdp_az_release,
	.read		= sdp_az_read,
	.poll		= sdp_az_poll,
	.unlocked_ioctl	= sdp_az_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* Anyone may open it: a channel gives nothing but its opener's own
 * records; the privilege AZ needs is the userfaultfd's.
 */
static struct miscdevice sdp_az_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "sdp_az",
	.fops	= &sdp_az_fops,
	.mode	= 0666,
};

int __init sdp_az_init(void)
{
	return misc_register(&sdp_az_dev);
}

void sdp_az_exit(void)
{
	misc_deregister(&sdp_az_dev);
}
