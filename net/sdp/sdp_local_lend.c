// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the local transport's large blocking sends, lent by reference.
 *
 * A blocking send of at least sdp_local_lend bytes, with no reader waiting
 * with its buffer (that one is filled straight: sdp_local_sink.c), lends
 * its pages: they are pinned and go to the peer in page messages
 * (sdp_local_page.c) that belong to a loan (struct sdp_local_loan).  The
 * sender then waits, its socket unlocked, until the peer has copied them,
 * so that each byte is copied once, from the sender's buffer to the
 * reader's, where a copying send copies it twice.  If the reader does not
 * come within sdp_local_lend_us, or a signal comes, the sender takes its
 * pages back (sdp_local_reclaim()): it copies what is still lent into
 * pages of its own (charged to its memory cgroup), puts those in the
 * messages in place of its pages and returns, as a copying send would
 * have.  Either way no message refers to the sender's memory once the
 * send returns, and the bytes are in the window as copied ones are.
 *
 * Pages of a huge page are not lent: in the test bed they measured
 * slower lent than copied (Documentation/sdp.rst).
 *
 * Objects: a loan, allocated by the send; its messages point to it and
 * each holds a reference, as the sender does until it returns.  @msg[]
 * lists the messages still lent: a message leaves it when it is released
 * (read or dropped: sdp_local_loan_release()) or reclaimed.
 *
 * Locks: the loan's lock, a leaf (BH-safe: a message may be dropped
 * under a socket's spinlock), orders everything: a message's release,
 * the swap of its pages, and the readers that copy from its pages while
 * it is lent (@copying; sdp_local_loan_copy()).  Those copy with page
 * faults off, and none starts while a swap waits (@reclaiming), so that
 * the swap waits for no more than the copies under way: never for the
 * reader's socket lock, which a fault (userfaultfd) could hold for ever,
 * nor for a reader that peeks again and again.  The sender's socket lock
 * is not held while it waits or takes its pages back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/sched/signal.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_local.h"

static void sdp_local_loan_put(struct sdp_local_loan *loan)
{
	if (refcount_dec_and_test(&loan->ref))
		kfree(loan);
}

/**
 * sdp_local_loan_release - a lent message's pages are being released
 * @lp: the message, read or dropped; its ->loan set
 *
 * Return: whether its pages are still the sender's (pinned) or pages of
 * the loan's own, put in by a reclaim.
 */
bool sdp_local_loan_release(struct sdp_local_pages *lp)
{
	struct sdp_local_loan *loan = lp->loan;
	bool pinned, woke = false;

	spin_lock_bh(&loan->lock);
	if (loan->msg[lp->slot] == lp) {
		loan->msg[lp->slot] = NULL;
		loan->pending--;
		woke = true;	/* progress: see sdp_local_loan_wait() */
	}
	pinned = lp->pinned;
	spin_unlock_bh(&loan->lock);
	if (woke)
		wake_up(&loan->wq);
	lp->loan = NULL;
	sdp_local_loan_put(loan);	/* the message's */
	return pinned;
}

/**
 * sdp_local_loan_copy - a reader copies from a lent message
 * @lp: the message, its ->loan set
 * @off: where in its payload
 * @len: how many bytes
 * @to: the reader's buffer
 *
 * While the message is lent, with page faults off and counted in the
 * loan's @copying, so that a reclaim does not swap its pages under the
 * copy and never waits for more than the copy itself.
 *
 * Return: bytes copied (short at a fault of @to).
 */
size_t sdp_local_loan_copy(const struct sdp_local_pages *lp, u32 off,
			   size_t len, struct iov_iter *to)
{
	struct sdp_local_loan *loan = lp->loan;
	bool lent, woke;
	size_t c;

	spin_lock_bh(&loan->lock);
	/* a reclaim waits for the copies under way: none starts meanwhile,
	 * so that it waits for no more than those (a reader peeking again
	 * and again would keep it waiting)
	 */
	while (loan->reclaiming && loan->msg[lp->slot] == lp) {
		spin_unlock_bh(&loan->lock);
		if (wait_event_killable(loan->wq, !READ_ONCE(loan->reclaiming) ||
					READ_ONCE(loan->msg[lp->slot]) != lp))
			return 0;
		spin_lock_bh(&loan->lock);
	}
	lent = loan->msg[lp->slot] == lp;
	loan->copying += lent;
	spin_unlock_bh(&loan->lock);
	if (!lent)			/* reclaimed: the pages are its own */
		return sdp_local_bv_copy(lp, off, len, to);

	pagefault_disable();
	c = sdp_local_bv_copy(lp, off, len, to);
	pagefault_enable();

	spin_lock_bh(&loan->lock);
	woke = !--loan->copying;
	spin_unlock_bh(&loan->lock);
	if (woke)
		wake_up(&loan->wq);
	return c;
}

/* Put @lp's pages, copied into @fresh, in place of the lent ones, when
 * no reader copies from the loan; unless it was released meanwhile.
 * While it waits no new copy starts (@reclaiming): it waits for the
 * copies under way, each short (page faults off).  Killable all the
 * same; a sender killed leaves the message lent (its pages pinned, the
 * message's to release; no task of the process writes them any more).
 * Return: whether @fresh went in.
 */
static bool sdp_local_reclaim_swap(struct sdp_local_loan *loan,
				   unsigned int i, struct sdp_local_pages *lp,
				   struct page **fresh)
{
	unsigned int j;
	bool swapped = false;

	spin_lock_bh(&loan->lock);
	loan->reclaiming = true;
	while (loan->msg[i] == lp && loan->copying) {
		spin_unlock_bh(&loan->lock);
		if (wait_event_killable(loan->wq, !READ_ONCE(loan->copying)))
			goto out;
		spin_lock_bh(&loan->lock);
	}
	if (loan->msg[i] != lp)
		goto out_locked;
	for (j = 0; j < lp->buf.size; j++) {
		unpin_user_page(lp->bv[j].bv_page);
		lp->bv[j].bv_page = fresh[j];
	}
	lp->pinned = false;
	loan->msg[i] = NULL;
	loan->pending--;
	swapped = true;
out_locked:
	spin_unlock_bh(&loan->lock);
out:
	WRITE_ONCE(loan->reclaiming, false);
	wake_up(&loan->wq);	/* readers held back */
	return swapped;
}

/* Take message @i's pages back, if it is still lent.  Return: bytes
 * copied back.
 */
static size_t sdp_local_reclaim_one(struct sdp_local_loan *loan,
				    unsigned int i)
{
	struct page *fresh[SDP_LOCAL_PAGES];
	struct bio_vec bv[SDP_LOCAL_PAGES];
	struct sdp_local_pages *lp;
	unsigned int n, j;
	size_t bytes = 0;
	bool swapped;

	spin_lock_bh(&loan->lock);
	lp = loan->msg[i];
	n = lp ? lp->buf.size : 0;
	if (n)
		memcpy(bv, lp->bv, n * sizeof(*bv));
	/* the pages stay while we copy, even if the message goes */
	for (j = 0; j < n; j++)
		get_page(bv[j].bv_page);
	spin_unlock_bh(&loan->lock);
	if (!n)
		return 0;

	/* at most one message's worth, never failing: the bytes are sent,
	 * and the sender must return with its memory its own again
	 */
	for (j = 0; j < n; j++) {
		fresh[j] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_NOFAIL);
		memcpy_page(fresh[j], bv[j].bv_offset, bv[j].bv_page,
			    bv[j].bv_offset, bv[j].bv_len);
		bytes += bv[j].bv_len;
	}
	swapped = sdp_local_reclaim_swap(loan, i, lp, fresh);
	for (j = 0; j < n; j++) {
		put_page(bv[j].bv_page);
		if (!swapped)
			__free_page(fresh[j]);
	}
	return swapped ? bytes : 0;
}

/* The reader did not come: take back every page still lent.  Return:
 * bytes taken back.
 */
static size_t sdp_local_reclaim(struct sdp_sock *ssk,
				struct sdp_local_loan *loan)
{
	size_t bytes = 0;
	unsigned int i;

	for (i = 0; i < loan->nmsg; i++)
		bytes += sdp_local_reclaim_one(loan, i);
	SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_LOCAL_LEND_RECLAIMED,
		      bytes);
	return bytes;
}

/* A loan's end on @conn: a reader that missed it (@back bytes taken
 * back) has the next sends copied, 16, then twice as many each time it
 * misses again (a slow reader costs the sender a wait only now and then);
 * one that read it all has the next lent.  Under the socket lock.
 */
static void sdp_local_lend_backoff(struct sdp_conn *conn, size_t back)
{
	if (!back) {
		conn->lend_backoff = 0;
		return;
	}
	conn->lend_skip = 16U << conn->lend_backoff;
	if (conn->lend_backoff < 8)
		conn->lend_backoff++;
}

/* Wait while the reader copies: until it has copied all, or it has
 * copied nothing for sdp_local_lend_us (it does not come, or is busy
 * elsewhere), or a signal comes.  The socket is not locked.
 */
static void sdp_local_loan_wait(struct sdp_local_loan *loan)
{
	unsigned int was = READ_ONCE(loan->pending);
	ktime_t slice;
	int err;

	while (was) {
		slice = ns_to_ktime((u64)max(READ_ONCE(sdp_local_lend_us), 0) *
				    NSEC_PER_USEC);
		err = wait_event_interruptible_hrtimeout(loan->wq,
							 READ_ONCE(loan->pending) < was,
							 slice);
		if (err)
			return;		/* no progress, or a signal */
		was = READ_ONCE(loan->pending);
	}
}

/**
 * sdp_local_loan_add - a message joins a loan
 * @loan: the sender's
 * @lp: the message, pinned, not sent yet
 */
void sdp_local_loan_add(struct sdp_local_loan *loan,
			struct sdp_local_pages *lp)
{
	refcount_inc(&loan->ref);
	lp->loan = loan;
	lp->slot = loan->nmsg;
	spin_lock_bh(&loan->lock);
	loan->msg[loan->nmsg++] = lp;
	loan->pending++;
	spin_unlock_bh(&loan->lock);
}

/**
 * sdp_local_lend_pages - lend a large blocking send's pages to the peer
 * @ssk: the socket, locked and connected; unlocked for a while
 * @msg: what to send, a user buffer
 * @s: sendmsg()'s state
 * @room: window left
 *
 * Up to SDP_LOCAL_LOAN_MSGS page messages' worth of @msg go by reference;
 * then the sender waits for the peer to copy them, or takes them back.
 *
 * Return: bytes taken (sent: by reference or, taken back, copied); 0 to
 * copy the rest of this send instead (none could be lent, or the reader
 * missed a recent loan); or a negative errno.
 */
ssize_t sdp_local_lend_pages(struct sdp_sock *ssk, struct msghdr *msg,
			     struct sdp_send *s, long room)
{
	struct sock *sk = &ssk->sk;
	struct sdp_local_loan *loan;
	size_t before = s->copied, back = 0;
	ssize_t n = 0;

	if (s->conn->lend_skip) {
		s->conn->lend_skip--;
		return 0;
	}
	loan = kzalloc(sizeof(*loan), GFP_KERNEL);
	if (!loan)
		return 0;
	refcount_set(&loan->ref, 1);
	spin_lock_init(&loan->lock);
	init_waitqueue_head(&loan->wq);
	while (loan->nmsg < SDP_LOCAL_LOAN_MSGS && msg_data_left(msg) &&
	       room > 0) {
		n = sdp_local_send_pinned(ssk, msg, s, room, loan);
		if (n <= 0)
			break;
		SDP_ADD_STATS(sock_net(sk), SDP_MIB_LOCAL_LEND_BYTES, n);
		room = sdp_local_room(ssk);
	}

	if (loan->nmsg) {
		release_sock(sk);
		sdp_local_loan_wait(loan);
		if (READ_ONCE(loan->pending))
			back = sdp_local_reclaim(ssk, loan);
		lock_sock(sk);
		WARN_ON_ONCE(READ_ONCE(loan->pending) &&
			     !fatal_signal_pending(current));
		sdp_local_lend_backoff(s->conn, back);
	}
	sdp_local_loan_put(loan);
	if (n < 0)
		return n;
	return s->copied - before;
}
