// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the local transport's pages by reference.
 *
 * sendfile() and splice() hand a socket a pipe's pages (sdp_send.c,
 * ->send_page()).  On a local connection each page is referenced
 * (get_page()), not copied, into a page message (SDP_BUF_PAGES: up to
 * SDP_LOCAL_PAGES struct bio_vec), which goes to the peer as any local
 * message does; the reader copies from the pages (sdp_recv.c), once,
 * where a copy through a message would be twice.  As in TCP's skbs, the
 * peer reads a file's pages as they are when it reads them: a page
 * written after sendfile() returned is read as written, a page truncated
 * away is read as it was (the reference keeps it, off the page cache).
 *
 * A page message is held open (->local_held, as corked bytes are) while
 * more pages of the same sendfile() follow: the pipe's next pages at
 * once (@notlast), or the next pipe-full (MSG_MORE), which the cork timer
 * and splice_eof push at the latest; it goes when full, or with the last
 * page.  Bytes sent by sendmsg() first push it, keeping the stream in
 * order.
 *
 * Bounds: a page message costs the window its memory and the bytes it
 * references (sdp_local_cost()), so the pages a sender makes its peer's
 * queue hold are bounded by the window, as the bytes of a copy are; the
 * message's memory is charged as any local message's (its payer's memory
 * cgroup).  Pages are released when the peer has read them, when a
 * connection is reset or freed with them unread, and with a held message
 * at teardown (sdp_local_buf_free()); ZcopyPageRefs counts those held.
 *
 * MSG_ZEROCOPY and io_uring's SEND_ZC (sdp_local_send_pinned()): the sender's
 * own pages, pinned, go the same way in page messages that hold the
 * send's notification, which completes when the peer has copied them,
 * not at send time (as TCP's completes when its skbs are freed).
 *
 * Locks: the sender's socket lock, as for the rest of sendmsg().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_local.h"

/* A page message with room for one more page, held: the one held (a
 * sendfile()'s, unless @fresh), or a new one after pushing whatever else
 * was held.  NULL: none to be had now (no peer, or no memory): the page
 * is copied, which says why.
 */
struct sdp_buf *sdp_local_pages_for(struct sdp_sock *ssk, bool fresh)
{
	struct sdp_buf *buf = ssk->conn->local_held;
	struct sdp_sock *peer;

	if (buf && !fresh && buf->kind == SDP_BUF_PAGES &&
	    buf->size < SDP_LOCAL_PAGES &&
	    !container_of(buf, struct sdp_local_pages, buf)->uarg &&
	    !container_of(buf, struct sdp_local_pages, buf)->loan)
		return buf;
	if (buf && sdp_local_push_held(ssk))
		return NULL;
	peer = sdp_local_peer_get(ssk);
	if (!peer)
		return NULL;
	sdp_local_limits(ssk, peer);
	buf = sdp_local_buf_alloc(ssk, peer, 0, SDP_BUF_PAGES);
	sock_put(&peer->sk);
	ssk->conn->local_held = buf;
	return buf;
}

/**
 * sdp_local_send_page - the local transport's ->send_page()
 * @ssk: the socket, locked
 * @conn: the connection the caller holds
 * @page: sendfile()'s or splice()'s page
 * @offset: where its bytes start in it
 * @size: how many
 * @flags: the sendmsg() flags: MSG_MORE, MSG_DONTWAIT
 * @notlast: more pages follow at once
 *
 * Return: @size (taken by reference), 0 (copy it: a page that cannot be
 * referenced, or the connection is not usable, which the copy reports),
 * or a negative errno (-EAGAIN: no window for a non-blocking socket).
 */
ssize_t sdp_local_send_page(struct sdp_sock *ssk, struct sdp_conn *conn,
			    struct page *page, size_t offset, size_t size,
			    int flags, bool notlast)
{
	bool more = notlast || (flags & MSG_MORE);
	struct sock *sk = &ssk->sk;
	struct bio_vec *bv;
	struct sdp_buf *buf;
	long timeo;
	int err;

	sdp_assert_locked(ssk);

	if (!size || offset + size > PAGE_SIZE || !sendpage_ok(page))
		return 0;
	timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
	for (;;) {
		if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) ||
		    !sdp_conn_usable(ssk) || !sdp_conn_same(ssk, conn))
			return 0;
		if (sdp_local_room(ssk) > 0)
			break;
		/* EAGAIN, as a copy would say, unless the peer made
		 * room meanwhile: then the page would go copied
		 */
		if (!timeo)
			return -EAGAIN;
		err = sdp_local_wait_room(ssk, &timeo);
		if (err)
			return err;
	}
	buf = sdp_local_pages_for(ssk, false);
	if (!buf)
		return 0;

	get_page(page);
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_PAGE_REFS);
	SDP_ADD_STATS(sock_net(sk), SDP_MIB_LOCAL_PAGE_BYTES, size);
	bv = (struct bio_vec *)buf->data + buf->size++;
	bv->bv_page = page;
	bv->bv_len = size;
	bv->bv_offset = offset;
	buf->len += size;
	WRITE_ONCE(ssk->tx_queued, ssk->tx_queued + size);
	if (!more || buf->size == SDP_LOCAL_PAGES) {
		err = sdp_local_push_held(ssk);
		return err ? err : size;
	}
	if (!notlast)
		sdp_cork_timer_arm(ssk);	/* the next pipe-full, as a rule */
	return size;
}

/* Keep the first @got pinned @pages up to the first of a large folio
 * (a transparent huge page), unpinned with those after it.  Return: how
 * many are kept.
 */
static int sdp_local_pin_small(struct page **pages, int got)
{
	int i;

	for (i = 0; i < got && !PageCompound(pages[i]); i++)
		;
	if (i < got)
		unpin_user_pages(pages + i, got - i);
	return i;
}

/* Pin or reference the next pages of @iter into @lp, up to @bytes: the
 * caller's own memory (a user iterator: pinned FOLL_LONGTERM, as for
 * anything held for long, so that neither migration nor a fork() can
 * part the pages from what the sender sees) or io_uring's fixed buffer
 * (a bvec: referenced besides io_uring's pin); @small: user pages only
 * up to the first of a huge page.  Return: bytes taken, the iterator
 * moved past them; or a negative errno if none.
 */
static ssize_t sdp_local_pin(struct sdp_local_pages *lp,
			     struct iov_iter *iter, size_t bytes, bool small)
{
	struct page *pages[SDP_LOCAL_PAGES];
	size_t done = 0, off, len, l;
	unsigned long addr;
	int want, got, i;

	lp->pinned = !iov_iter_is_bvec(iter);
	if (lp->pinned && !iter_is_ubuf(iter) && !iter_is_iovec(iter))
		return -EFAULT;
	while (done < bytes && lp->buf.size < SDP_LOCAL_PAGES &&
	       iov_iter_count(iter)) {
		if (!lp->pinned) {
			const struct bio_vec *v = iter->bvec;
			size_t at = v->bv_offset + iter->iov_offset;

			off = offset_in_page(at);
			len = min3(v->bv_len - iter->iov_offset, PAGE_SIZE - off,
				   bytes - done);
			len = min(len, iov_iter_count(iter));
			if (!len)
				break;
			pages[0] = nth_page(v->bv_page, at >> PAGE_SHIFT);
			get_page(pages[0]);
			got = 1;
		} else {
			addr = (unsigned long)iter_iov_addr(iter);
			off = offset_in_page(addr);
			len = min(iov_iter_single_seg_count(iter), bytes - done);
			want = min_t(size_t, SDP_LOCAL_PAGES - lp->buf.size,
				     DIV_ROUND_UP(off + len, PAGE_SIZE));
			got = pin_user_pages_fast(addr & PAGE_MASK, want,
						  FOLL_LONGTERM, pages);
			if (got > 0 && small)
				got = sdp_local_pin_small(pages, got);
			if (got <= 0)
				break;
			len = min_t(size_t, len, (size_t)got * PAGE_SIZE - off);
		}
		iov_iter_advance(iter, len);
		done += len;
		for (i = 0; i < got; i++, off = 0) {
			l = min_t(size_t, len, PAGE_SIZE - off);
			lp->bv[lp->buf.size].bv_page = pages[i];
			lp->bv[lp->buf.size].bv_len = l;
			lp->bv[lp->buf.size++].bv_offset = off;
			len -= l;
		}
	}
	return done ?: -EFAULT;
}

/**
 * sdp_local_send_pinned - the sender's own pages by reference
 * @ssk: the socket, locked and connected
 * @msg: what to send
 * @s: sendmsg()'s state
 * @room: window left
 * @loan: a lending send's loan (sdp_local_lend.c), or NULL: MSG_ZEROCOPY's
 *	or io_uring's SEND_ZC, whose notification is @s->uarg
 *
 * Up to a page message's worth of @msg's pages go to the peer.  With the
 * notification, which the message holds, so that it completes once the
 * peer has copied them (or dropped them unread), not at send time; the
 * pages are charged to the sender's RLIMIT_MEMLOCK with it.  Or in the
 * loan, for the sender to wait on (not a huge page's: lent, they measured
 * slower than copied).
 *
 * Return: bytes taken; 0 to copy instead (nothing could be pinned); or
 * a negative errno.
 */
ssize_t sdp_local_send_pinned(struct sdp_sock *ssk, struct msghdr *msg,
			      struct sdp_send *s, long room,
			      struct sdp_local_loan *loan)
{
	struct sock *sk = &ssk->sk;
	struct sdp_local_pages *lp;
	struct sdp_buf *buf;
	ssize_t n;
	int err;

	buf = sdp_local_pages_for(ssk, true);
	if (!buf)
		return 0;
	lp = container_of(buf, struct sdp_local_pages, buf);
	n = sdp_local_pin(lp, &msg->msg_iter,
			  min_t(size_t, msg_data_left(msg), room), loan);
	if (n <= 0)
		return 0;	/* the empty message goes with the copy */
	if (loan) {
		sdp_local_loan_add(loan, lp);
	} else {
		lp->uarg = s->uarg;
		net_zcopy_get(s->uarg);
		s->zc_used = true;
	}
	s->copied += n;
	buf->len = n;
	WRITE_ONCE(ssk->tx_queued, ssk->tx_queued + n);
	SDP_ADD_STATS(sock_net(sk), SDP_MIB_ZC_PAGE_REFS, buf->size);
	SDP_ADD_STATS(sock_net(sk), SDP_MIB_LOCAL_PAGE_BYTES, n);
	err = sdp_local_push_held(ssk);
	return err ? err : n;
}

/**
 * sdp_local_bv_copy - copy from a page message's pages
 * @lp: the message
 * @off: where in its payload
 * @len: how many bytes
 * @to: where to
 *
 * Return: bytes copied (short at a fault).
 */
size_t sdp_local_bv_copy(const struct sdp_local_pages *lp, u32 off,
			 size_t len, struct iov_iter *to)
{
	const struct bio_vec *bv = lp->bv;
	size_t done = 0, n, c;
	u32 i;

	for (i = 0; i < lp->buf.size && done < len; i++, bv++) {
		if (off >= bv->bv_len) {
			off -= bv->bv_len;
			continue;
		}
		n = min_t(size_t, bv->bv_len - off, len - done);
		c = copy_page_to_iter(bv->bv_page, bv->bv_offset + off, n, to);
		done += c;
		if (c != n)
			break;
		off = 0;
	}
	return done;
}

/**
 * sdp_local_pages_copy - the local transport's ->copy_pages()
 * @buf: the message, in the reader's receive queue
 * @off: where in its payload
 * @len: how many bytes
 * @to: the reader's buffer
 *
 * A lent message's pages (sdp_local_lend.c) are copied with page faults
 * off, its reader faulting its buffer in between: its sender may be
 * waiting to take them back, and must never wait for the reader's fault
 * (userfaultfd can hold one for ever).
 *
 * Return: bytes copied; short only where @to cannot be written.
 */
size_t sdp_local_pages_copy(const struct sdp_buf *buf, u32 off, size_t len,
			    struct iov_iter *to)
{
	const struct sdp_local_pages *lp =
		container_of(buf, struct sdp_local_pages, buf);
	size_t done = 0, c;
	int tries = 0;

	if (!lp->loan)
		return sdp_local_bv_copy(lp, off, len, to);
	while (done < len && tries < 4) {
		c = sdp_local_loan_copy(lp, off + done, len - done, to);
		done += c;
		tries = c ? 0 : tries + 1;
		if (done < len && !c &&
		    fault_in_iov_iter_writeable(to, len - done) == len - done)
			break;		/* nothing of it can be written */
	}
	return done;
}

/**
 * sdp_local_pages_put - release a page message's pages
 * @ssk: the socket that holds the message (its owner's net counts them)
 * @buf: the message, SDP_BUF_PAGES, read, dropped or never sent
 *
 * Its notification, if it has one, goes after them: MSG_ZEROCOPY's
 * completes with its last message.
 */
void sdp_local_pages_put(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_local_pages *lp = container_of(buf, struct sdp_local_pages,
						  buf);
	bool pinned = lp->loan ? sdp_local_loan_release(lp) : lp->pinned;
	u32 i;

	for (i = 0; i < buf->size; i++) {
		if (pinned)
			unpin_user_page(lp->bv[i].bv_page);
		else
			put_page(lp->bv[i].bv_page);
	}
	SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_ZC_PAGE_REFS,
		      -(long)buf->size);
	buf->size = 0;
	if (lp->uarg)
		net_zcopy_put(lp->uarg);
	lp->uarg = NULL;
}
