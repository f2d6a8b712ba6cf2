// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the local transport's single copy.
 *
 * A reader that finds nothing to read and would sleep, with a buffer of
 * at least SDP_LOCAL_SINK_MIN bytes of anonymous memory, pins it (up to
 * SDP_LOCAL_SINK_MAX, FOLL_WRITE | FOLL_LONGTERM, within RLIMIT_MEMLOCK,
 * for as long as it waits) and offers it in its end of the link (struct
 * sdp_local_sink).  A sender with none of its bytes still
 * unread by the peer (so that nothing it sent earlier can come after)
 * takes the offer (busy), copies from its own user buffer straight into
 * the reader's pages, without any lock and with page faults off (a
 * fault ends the copy short), and closes it (done): one copy
 * where TCP and AF_UNIX make two.  Then it kicks the reader, whose
 * sdp_local_apply() adds the bytes to the stream (rcv_nxt and copied_seq
 * alike: they are read already) before anything from the inbox.
 *
 * The reader withdraws its offer when it wakes, for whatever reason; if
 * a sender is still copying, it waits for the copy (short, and never for
 * the reader's lock), and accounts the bytes itself if apply did not.
 * Only then are the pages unpinned and the offer freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/wait_bit.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_local.h"

#define SDP_LOCAL_SINK_MIN	(16 * 1024)
#define SDP_LOCAL_SINK_MAX	(1024 * 1024)

/**
 * sdp_local_sink_account - bytes placed in our reader's buffer
 * @ssk: the socket, locked
 * @n: how many; they are in the stream and read at once
 */
void sdp_local_sink_account(struct sdp_sock *ssk, size_t n)
{
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);

	sdp_assert_locked(ssk);

	WRITE_ONCE(ssk->rcv_nxt, ssk->rcv_nxt + n);
	WRITE_ONCE(ssk->copied_seq, ssk->copied_seq + n);
	SDP_INC_STATS(net, SDP_MIB_RX_DATA);
	SDP_ADD_STATS(net, SDP_MIB_RX_BYTES, n);
	SDP_ADD_STATS(net, SDP_MIB_LOCAL_RX_BYTES, n);
	SDP_ADD_STATS(net, SDP_MIB_LOCAL_SINK_BYTES, n);
	ssk->conn->st.bytes_received += n;
	ssk->conn->st.local_sink_recv += n;
	ssk->conn->st.data_segs_in++;
	ssk->conn->st.last_data_recv = jiffies;
	ssk->conn->st.last_recv = jiffies;
	sk->sk_data_ready(sk);
}

static bool sdp_local_sink_want(struct sdp_sock *ssk, struct msghdr *msg,
				size_t len, int flags, long timeo)
{
	struct iov_iter *iter = &msg->msg_iter;

	return timeo && len >= SDP_LOCAL_SINK_MIN &&
	       !(flags & (MSG_PEEK | MSG_TRUNC | MSG_OOB)) &&
	       (iter_is_iovec(iter) || iter_is_ubuf(iter)) &&
	       iov_iter_single_seg_count(iter) >= SDP_LOCAL_SINK_MIN &&
	       sdp_conn_usable(ssk) && ssk->conn->link && !ssk->urg_data &&
	       !(ssk->sk.sk_shutdown & RCV_SHUTDOWN);
}

/* Are all @n pages anonymous memory?  A sender writes into them behind
 * the reader's back: never into a file's pages, which the file system
 * must see written (page_mkwrite, dirty tracking), nor shared memory.
 */
static bool sdp_local_sink_anon(struct page **pages, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!PageAnon(pages[i]))
			return false;
	return true;
}

/* Pin the next part of the reader's buffer; NULL if it cannot be (not
 * anonymous memory, or past RLIMIT_MEMLOCK: the reader waits as usual).
 * The pin lasts as long as the reader waits, so it is FOLL_LONGTERM,
 * as an RDMA SinkAvail's, and counted against RLIMIT_MEMLOCK.
 */
static struct sdp_local_sink *sdp_local_sink_pin(struct iov_iter *iter)
{
	size_t len = min_t(size_t, iov_iter_single_seg_count(iter),
			   SDP_LOCAL_SINK_MAX);
	struct sdp_local_sink *sink;
	unsigned long addr;
	int npages, got;

	addr = (unsigned long)iter_iov_addr(iter);
	npages = DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE);
	sink = kzalloc(sizeof(*sink) +
		       npages * sizeof(struct page *), GFP_KERNEL_ACCOUNT);
	if (!sink)
		return NULL;
	sink->pages = (struct page **)(sink + 1);
	if (mm_account_pinned_pages(&sink->mmp, (size_t)npages * PAGE_SIZE)) {
		kfree(sink);
		return NULL;
	}
	got = pin_user_pages_fast(addr & PAGE_MASK, npages,
				  FOLL_WRITE | FOLL_LONGTERM, sink->pages);
	if (got > 0 && !sdp_local_sink_anon(sink->pages, got)) {
		unpin_user_pages(sink->pages, got);
		got = 0;
	}
	if (got <= 0) {
		mm_unaccount_pinned_pages(&sink->mmp);
		kfree(sink);
		return NULL;
	}
	sink->npages = got;
	sink->offset = offset_in_page(addr);
	sink->len = min_t(size_t, len, (size_t)got * PAGE_SIZE - sink->offset);
	return sink;
}

static void sdp_local_sink_free(struct sdp_local_sink *sink)
{
	unpin_user_pages_dirty_lock(sink->pages, sink->npages,
				    sink->filled > 0);
	mm_unaccount_pinned_pages(&sink->mmp);
	kfree(sink);
}

/**
 * sdp_local_sink - the local transport's sink: offer the reader's buffer
 * @ssk: the socket, locked, with nothing to read
 * @msg: the reader's buffer
 * @len: bytes it still wants
 * @flags: recvmsg()'s flags
 * @timeo: its time left
 *
 * Return: bytes placed in @msg (its iterator moved past them), 0 to look
 * again (data came another way, the time is up, a signal, an error), or
 * -EOPNOTSUPP if no offer is made: then the reader waits as usual.
 */
int sdp_local_sink(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		   int flags, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_conn *conn = ssk->conn;	/* held by recvmsg() */
	struct sdp_local_link *link = conn->link;	/* held by @conn */
	struct sock *sk = &ssk->sk;
	struct sdp_local_sink *sink;
	struct sdp_local_end *me;
	size_t n;
	bool busy;

	sdp_assert_locked(ssk);

	if (!sdp_local_sink_want(ssk, msg, len, flags, *timeo))
		return -EOPNOTSUPP;
	sink = sdp_local_sink_pin(&msg->msg_iter);
	if (!sink)
		return -EOPNOTSUPP;
	me = &link->end[conn->side];
	spin_lock_bh(&link->lock);
	if (me->sink || me->ssk != ssk) {
		spin_unlock_bh(&link->lock);
		sdp_local_sink_free(sink);
		return -EOPNOTSUPP;
	}
	me->sink = sink;
	spin_unlock_bh(&link->lock);

	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, timeo, READ_ONCE(sink->accounted) ||
		      ssk->rcv_nxt != ssk->copied_seq || sk->sk_err ||
		      (sk->sk_shutdown & RCV_SHUTDOWN) ||
		      sk->sk_state == TCP_CLOSE || !sdp_conn_same(ssk, conn),
		      &wait);
	remove_wait_queue(sk_sleep(sk), &wait);

	spin_lock_bh(&link->lock);
	if (me->sink == sink)
		me->sink = NULL;
	busy = sink->busy;
	spin_unlock_bh(&link->lock);
	/* a copy under way: never waits for our lock */
	if (busy) {
		/* pairs with sdp_local_sink_close()'s release: filled is
		 * the copy's
		 */
		wait_var_event(&sink->busy, !smp_load_acquire(&sink->busy));
	}
	n = sink->filled;
	/* into the stream, unless a new connection replaced this one while
	 * we slept: the bytes are the reader's all the same
	 */
	if (!sink->accounted && n && sdp_conn_same(ssk, conn))
		sdp_local_sink_account(ssk, n);
	sdp_local_sink_free(sink);
	if (n)
		iov_iter_advance(&msg->msg_iter, n);
	return n;
}

/* Copy from @msg into @sink's pages; the bytes copied.  With page faults
 * off: the reader waits for this copy and cannot be killed meanwhile, so
 * it must not wait on a fault the sender's memory could take for ever
 * (userfaultfd); what faults goes the copying way instead.
 */
static size_t sdp_local_sink_copy(struct sdp_local_sink *sink,
				  struct msghdr *msg)
{
	size_t want = min(msg_data_left(msg), sink->len), done = 0;

	pagefault_disable();
	while (done < want) {
		size_t pos = sink->offset + done;
		size_t c = min_t(size_t, PAGE_SIZE - offset_in_page(pos),
				 want - done);
		void *va = kmap_local_page(sink->pages[pos >> PAGE_SHIFT]);
		size_t got = copy_from_iter(va + offset_in_page(pos), c,
					    &msg->msg_iter);

		kunmap_local(va);
		done += got;
		if (got != c)
			break;
	}
	pagefault_enable();
	return done;
}

/* Under the link lock: the sender's copy into @sink is over.  A reader
 * that withdrew the offer meanwhile waits for busy to clear without the
 * lock and then reads filled and frees @sink: so filled and done first,
 * then busy (release), and a full barrier before wake_up_var() looks for
 * a waiter, against the reader's set_current_state() in wait_var_event()
 * (else the wakeup may be lost, and the reader would sleep for ever,
 * unkillable, with its socket lock held).  The sender touches @sink no
 * more after this.
 */
static void sdp_local_sink_close(struct sdp_local_sink *sink)
{
	/* filled and done before busy: pairs with the reader's acquire */
	smp_store_release(&sink->busy, false);
	/* busy clear before wake_up_var() looks for a waiter */
	smp_mb();
	wake_up_var(&sink->busy);
}

/**
 * sdp_local_sink_fill - send straight into the peer's waiting reader
 * @ssk: the socket, locked, with a local connection and nothing held
 * @msg: what to send
 *
 * Return: bytes sent so, or 0 if none (no offer open, or the first byte
 * faulted: the caller copies the usual way, which takes the fault).
 */
size_t sdp_local_sink_fill(struct sdp_sock *ssk, struct msghdr *msg)
{
	struct sdp_local_link *link = ssk->conn->link;
	struct sdp_local_end *other = &link->end[!ssk->conn->side];
	struct net *net = sock_net(&ssk->sk);
	struct sdp_local_sink *sink;
	struct sdp_sock *peer;
	size_t n;

	sdp_assert_locked(ssk);

	spin_lock_bh(&link->lock);
	sink = other->sink;
	if (!sink || !other->ssk || sink->busy || sink->done ||
	    ssk->tx_local_unread || !list_empty(&other->inbox)) {
		spin_unlock_bh(&link->lock);
		return 0;
	}
	sink->busy = true;
	spin_unlock_bh(&link->lock);

	n = sdp_local_sink_copy(sink, msg);

	spin_lock_bh(&link->lock);
	if (n) {
		sink->filled = n;
		sink->done = true;
	}
	sdp_local_sink_close(sink);
	if (!n) {		/* still open; the caller copies */
		spin_unlock_bh(&link->lock);
		return 0;
	}
	peer = other->ssk;
	if (peer)
		sock_hold(&peer->sk);
	spin_unlock_bh(&link->lock);

	SDP_INC_STATS(net, SDP_MIB_TX_DATA);
	SDP_ADD_STATS(net, SDP_MIB_TX_BYTES, n);
	SDP_ADD_STATS(net, SDP_MIB_LOCAL_TX_BYTES, n);
	ssk->conn->st.bytes_sent += n;
	ssk->conn->st.bytes_acked += n;
	ssk->conn->st.segs_out++;
	ssk->conn->st.data_segs_out++;
	ssk->conn->st.last_data_sent = jiffies;
	if (peer) {
		sdp_local_kick(peer);
		sock_put(&peer->sk);
	}
	return n;
}
