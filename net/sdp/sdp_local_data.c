// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the local transport's data path.
 *
 * A sender copies its bytes into a message (struct sdp_buf, kind
 * SDP_BUF_LOCAL, at most SDP_LOCAL_CHUNK bytes), charged to the memory
 * cgroup of whoever pays for it (sdp_local_payer(): the receiver within
 * its receive buffer, else the sender) and counted in BufferBytes, and
 * puts it in the
 * peer's inbox (struct sdp_local_end); then it kicks the peer, which
 * applies its inbox (sdp_local_apply()) at once or, if its owner holds
 * the socket, when the owner releases it.  Applied, the messages join the
 * receive queue as RDMA's Data messages do, so that recvmsg(), MSG_PEEK,
 * urgent data and SIOCINQ are the same code; a FIN is the peer's DisConn,
 * a RST its Abort.
 *
 * The window: the bytes a sender has put in the peer's inbox or receive
 * queue and the peer has not read (the sender's tx_inflight_bytes, changed
 * under the link lock by both) stay below the peer's SO_RCVBUF; the
 * reader wakes the sender as it reads.  TCP_CORK and MSG_MORE hold the
 * last message back (->local_held, counted in tx_queued) until it is
 * full, uncorked, or the cork timer fires.
 *
 * Single copy: a reader that waits with a large buffer and nothing to
 * read offers its pages (struct sdp_local_sink); a sender copies straight
 * into them, and the reader counts them read (LocalSinkBytes).  And
 * sendfile()'s pages go by reference (SDP_BUF_PAGES, sdp_local_page.c):
 * the reader copies from them.
 *
 * Locks: see sdp_local.c.  sdp_local_apply() runs under the socket lock
 * (owned, or its spinlock with no owner) and never sends.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_local.h"

/* Large messages (the 64 KiB kmalloc() bucket) come from a cache of their
 * own, with a constructor: so init_on_alloc (Debian's default) does not
 * clear 64 KiB for each, a third of the local transport's time in a
 * stream of 32 KiB writes.  Nothing of a message is read but the ->len
 * bytes its sender wrote, as TCP's page frags are reused uncleared.
 */
#define SDP_LOCAL_MSG_SIZE	(64 * 1024)
static struct kmem_cache *sdp_local_msg_cache;

static void sdp_local_msg_ctor(void *obj)
{
}

int sdp_local_init(void)
{
	/* the bytes after the header go to and from user space */
	sdp_local_msg_cache =
		kmem_cache_create_usercopy("sdp_local_msg", SDP_LOCAL_MSG_SIZE,
					   0, SLAB_ACCOUNT,
					   sizeof(struct sdp_buf),
					   SDP_LOCAL_MSG_SIZE -
					   sizeof(struct sdp_buf),
					   sdp_local_msg_ctor);
	return sdp_local_msg_cache ? 0 : -ENOMEM;
}

void sdp_local_exit(void)
{
	kmem_cache_destroy(sdp_local_msg_cache);
}

/* The memory a message takes. */
static u32 sdp_local_truesize(const struct sdp_buf *buf)
{
	if (buf->kind == SDP_BUF_PAGES)
		return sizeof(struct sdp_local_pages);
	return sizeof(*buf) + buf->size;
}

/* What a message costs the window: its memory, and the bytes of the
 * pages it holds, which are the sender's file's or its own until read.
 */
static u32 sdp_local_cost(const struct sdp_buf *buf)
{
	return sdp_local_truesize(buf) +
	       (buf->kind == SDP_BUF_PAGES ? buf->len : 0);
}

/* Who pays for a message of @alloc bytes to @peer: the peer, for what its
 * receive buffer holds (sk_rcvbuf: SO_RCVBUF, else tcp_rmem[1]) once it
 * is accepted, as TCP charges its receive queue to it; the sender for the
 * rest of the window, as TCP charges its send queue, and for a child not
 * yet accepted.
 */
static struct sdp_sock *sdp_local_payer(struct sdp_sock *ssk,
					struct sdp_sock *peer, u32 alloc)
{
	if (READ_ONCE(peer->parent) ||
	    READ_ONCE(ssk->tx_local_unread) + alloc >
	    (u32)READ_ONCE(peer->sk.sk_rcvbuf))
		return ssk;
	return peer;
}

/**
 * sdp_local_buf_alloc - a message for up to @size bytes to @peer
 * @ssk: the sender, locked
 * @peer: the receiver, held
 * @size: bytes; what kmalloc() rounds the message up to is usable too
 * @kind: SDP_BUF_LOCAL, or SDP_BUF_PAGES for SDP_LOCAL_PAGES pages by
 *	reference (@size unused)
 *
 * Charged to the payer's memory cgroup (sdp_local_payer()), which must
 * have room for it (sdp_buf_room()): a cgroup near its limit refuses,
 * and the sender waits, rather than anyone being OOM-killed.  Only the
 * first message, with nothing else of ours on its way, is forced, as
 * TCP forces its first skb.  Counted in the sender's BufferBytes until
 * delivered (sdp_local_deliver()), then in the receiver's.
 *
 * Return: the message, or NULL (no memory now).
 */
struct sdp_buf *sdp_local_buf_alloc(struct sdp_sock *ssk,
				    struct sdp_sock *peer, u32 size, u8 kind)
{
	u32 alloc = kind == SDP_BUF_PAGES ? sizeof(struct sdp_local_pages) :
		    kmalloc_size_roundup(sizeof(struct sdp_buf) + size);
	struct sdp_sock *payer = sdp_local_payer(ssk, peer, alloc);
	gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN;
	struct mem_cgroup *old;
	struct sdp_buf *buf;

	if (!READ_ONCE(ssk->tx_local_unread))
		gfp = GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_HIGH |
		      __GFP_NOWARN;
	else if (!sdp_buf_room(payer, alloc))
		return NULL;
	old = set_active_memcg(payer->memcg);
	if (alloc > SDP_LOCAL_MSG_SIZE / 2) {
		alloc = SDP_LOCAL_MSG_SIZE;
		buf = kmem_cache_alloc(sdp_local_msg_cache, gfp);
	} else {
		buf = kmalloc(alloc, gfp);
	}
	set_active_memcg(old);
	if (!buf)
		return NULL;
	memset(buf, 0, kind == SDP_BUF_PAGES ? alloc : sizeof(*buf));
	INIT_LIST_HEAD(&buf->list);
	buf->kind = kind;
	buf->mid = SDP_MID_DATA;
	buf->data = kind == SDP_BUF_PAGES ?
		    (void *)container_of(buf, struct sdp_local_pages, buf)->bv :
		    buf + 1;
	buf->size = kind == SDP_BUF_PAGES ? 0 : alloc - sizeof(*buf);
	sdp_buf_account(ssk, sdp_local_truesize(buf));
	return buf;
}

void sdp_local_buf_free(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	if (buf->kind == SDP_BUF_PAGES)
		sdp_local_pages_put(ssk, buf);
	sdp_buf_account(ssk, -(long)sdp_local_truesize(buf));
	if (sdp_local_truesize(buf) > SDP_LOCAL_MSG_SIZE / 2)
		kmem_cache_free(sdp_local_msg_cache, buf);
	else
		kfree(buf);
}

/**
 * sdp_local_apply - take what the peer put in our inbox
 * @ssk: the socket, locked (owned, or its spinlock with no owner)
 */
void sdp_local_apply(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_local_link *link = conn->link;
	struct sock *sk = &ssk->sk;
	struct sdp_local_end *me;
	struct sdp_buf *buf, *tmp;
	LIST_HEAD(items);
	bool fin, rst, acked;
	size_t sink_n = 0;

	sdp_assert_locked(ssk);

	if (!link)
		return;
	spin_lock_bh(&link->lock);
	me = &link->end[conn->side];
	if (me->ssk != ssk) {		/* torn down: dropped there */
		spin_unlock_bh(&link->lock);
		return;
	}
	/* what the peer placed in our reader's buffer comes first */
	if (me->sink && me->sink->done && !me->sink->accounted) {
		sink_n = me->sink->filled;
		me->sink->accounted = true;
	}
	list_splice_init(&me->inbox, &items);
	fin = me->fin;
	rst = me->rst;
	acked = me->fin_acked;
	me->fin = false;
	me->rst = false;
	me->fin_acked = false;
	spin_unlock_bh(&link->lock);

	conn->local_applying = true;
	if (sink_n)
		sdp_local_sink_account(ssk, sink_n);
	list_for_each_entry_safe(buf, tmp, &items, list) {
		list_del_init(&buf->list);
		if (test_bit(SDP_F_RESET, &ssk->flags)) {
			sdp_local_rx_done(ssk, buf);
			continue;
		}
		conn->st.segs_in++;
		conn->st.last_recv = jiffies;
		conn->ka_probes = 0;
		SDP_ADD_STATS(sock_net(sk), SDP_MIB_LOCAL_RX_BYTES, buf->len);
		if (!sdp_rx_data(ssk, buf, buf->flags))	/* reset */
			sdp_local_rx_done(ssk, buf);
	}
	if (acked && test_bit(SDP_F_DISCONN_SENT, &ssk->flags) &&
	    !test_bit(SDP_F_DISCONN_DONE, &ssk->flags))
		sdp_disconn_done(ssk);
	if (fin && !test_bit(SDP_F_RESET, &ssk->flags)) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_RX_DISCONN);
		sdp_rx_disconn(ssk);
	}
	if (rst && !test_bit(SDP_F_RESET, &ssk->flags)) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_RX_ABORT);
		/* as tcp_reset(): after the peer's FIN, a write fails */
		sdp_conn_abort(ssk, sdp_reset_errno(sk), false);
	}
	conn->local_applying = false;
}

/* Under the link lock: what the peer holds of @ssk's is @unread.  The
 * part beyond the peer's receive buffer is, as TCP would have it, still
 * in our send queue: not acked (SIOCOUTQ, SO_LINGER, FIN_WAIT1).
 */
static void sdp_local_unread(struct sdp_sock *ssk, u32 unread)
{
	u32 rcv = ssk->tx_local_rcv;

	WRITE_ONCE(ssk->tx_local_unread, unread);
	WRITE_ONCE(ssk->tx_inflight_bytes, unread > rcv ? unread - rcv : 0);
}

/* Under the link lock: @ssk's FIN waits for its bytes to be acked. */
static bool sdp_local_fin_unacked(const struct sdp_sock *ssk)
{
	return ssk->tx_local_unread > ssk->tx_local_rcv;
}

/* ack_work: a FIN that waited for its bytes is acked; its sender, which
 * we could not lock from where that was seen, takes note.
 */
void sdp_local_ack_work(struct work_struct *work)
{
	struct sdp_local_link *link = container_of(work, struct sdp_local_link,
						   ack_work);
	struct sdp_sock *ssk[2] = {};
	int i;

	spin_lock_bh(&link->lock);
	for (i = 0; i < 2; i++) {
		ssk[i] = link->end[i].fin_acked ? link->end[i].ssk : NULL;
		if (ssk[i])
			sock_hold(&ssk[i]->sk);
	}
	spin_unlock_bh(&link->lock);
	for (i = 0; i < 2; i++) {
		if (!ssk[i])
			continue;
		sdp_local_kick(ssk[i]);
		sock_put(&ssk[i]->sk);
	}
	sdp_local_link_put(link);
}

/* The peer's message of @cost is read (or dropped): its window opens. */
static void sdp_local_window(struct sdp_sock *ssk, u32 cost)
{
	struct sdp_local_link *link = ssk->conn->link;
	struct sdp_local_end *other;
	struct sdp_sock *sender;

	if (!link)
		return;
	spin_lock_bh(&link->lock);
	other = &link->end[!ssk->conn->side];
	sender = other->ssk;
	if (sender) {
		sdp_local_unread(sender, sender->tx_local_unread - cost);
		/* Not gated by SOCK_NOSPACE as TCP's tcp_check_space() is:
		 * a sender blocked in recv() for the reply to what we just
		 * read is woken too, early.  Gated, a 64 B ping-pong of
		 * sleeping readers (recv_poll=0) measured 43-47 us one way
		 * against 25-26 in the test bed, with 2.0 context switches
		 * per round trip either way.
		 */
		if (sender->tx_local_unread <= sender->tx_local_limit / 2)
			sdp_wake_space(&sender->sk);
		if (other->fin_wait && !sdp_local_fin_unacked(sender)) {
			other->fin_wait = false;
			other->fin_acked = true;
			refcount_inc(&link->ref);	/* ack_work's */
			if (!queue_work(sdp_wq, &link->ack_work))
				refcount_dec(&link->ref);
		}
	}
	spin_unlock_bh(&link->lock);
}

/**
 * sdp_local_rx_done - a local message read whole (or dropped)
 * @ssk: the socket, locked
 * @buf: the message, off every list
 */
void sdp_local_rx_done(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	sdp_assert_locked(ssk);
	sdp_local_window(ssk, sdp_local_cost(buf));
	sdp_local_buf_free(ssk, buf);
}

/* Put @buf in the peer's inbox and kick it; @fin: a FIN instead.  For
 * a FIN, @acked says whether the peer has all our bytes in its receive
 * buffer already; if not, ack_work tells us once it has.  Once in the
 * inbox, @buf is the peer's: it may read and free it at once, so nothing
 * of it is touched after the link's lock is released.
 */
static int sdp_local_deliver(struct sdp_sock *ssk, struct sdp_buf *buf,
			     bool fin, bool *acked)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_local_link *link = conn->link;
	u32 len = buf ? buf->len : 0;
	struct sdp_local_end *other;
	struct sdp_sock *peer;

	spin_lock_bh(&link->lock);
	other = &link->end[!conn->side];
	peer = other->ssk;
	if (!peer) {
		spin_unlock_bh(&link->lock);
		if (buf)
			sdp_local_buf_free(ssk, buf);
		return -EPIPE;
	}
	if (buf) {
		list_add_tail(&buf->list, &other->inbox);
		sdp_local_unread(ssk, ssk->tx_local_unread +
				 sdp_local_cost(buf));
		/* the receiver holds it now: its BufferBytes */
		sdp_buf_account(ssk, -(long)sdp_local_truesize(buf));
		sdp_buf_account(peer, sdp_local_truesize(buf));
	}
	if (fin) {
		other->fin = true;
		*acked = !sdp_local_fin_unacked(ssk);
		link->end[conn->side].fin_wait = !*acked;
	}
	sock_hold(&peer->sk);
	spin_unlock_bh(&link->lock);

	if (buf) {
		struct net *net = sock_net(&ssk->sk);

		SDP_INC_STATS(net, SDP_MIB_TX_DATA);
		SDP_ADD_STATS(net, SDP_MIB_TX_BYTES, len);
		SDP_ADD_STATS(net, SDP_MIB_LOCAL_TX_BYTES, len);
		conn->st.bytes_sent += len;
		conn->st.bytes_acked += len;
		conn->st.segs_out++;
		conn->st.data_segs_out++;
		conn->st.last_data_sent = jiffies;
	}
	sdp_local_kick(peer);
	sock_put(&peer->sk);
	return 0;
}

/* Send the held message, if any (an empty one is dropped). */
int sdp_local_push_held(struct sdp_sock *ssk)
{
	struct sdp_buf *buf = ssk->conn->local_held;

	if (!buf)
		return 0;
	ssk->conn->local_held = NULL;
	if (!buf->len) {
		sdp_local_buf_free(ssk, buf);
		return 0;
	}
	WRITE_ONCE(ssk->tx_queued, ssk->tx_queued - buf->len);
	return sdp_local_deliver(ssk, buf, false, NULL);
}

/**
 * sdp_local_flush - the local transport's flush
 * @ssk: the socket, locked
 * @push: what TCP_CORK or MSG_MORE held goes too
 *
 * Then a pending FIN, which reaches the peer at once.  Nothing goes while
 * the socket applies its inbox: see sdp_local.c.
 */
void sdp_local_flush(struct sdp_sock *ssk, bool push)
{
	struct sdp_conn *conn = ssk->conn;
	bool acked;

	sdp_assert_locked(ssk);

	if (!sdp_conn_usable(ssk) || conn->local_applying)
		return;
	if (conn->local_held &&
	    (push || (!ssk->cork && !ssk->more) ||
	     test_bit(SDP_F_DISCONN_PEND, &ssk->flags)))
		sdp_local_push_held(ssk);
	if (!test_bit(SDP_F_DISCONN_PEND, &ssk->flags) ||
	    test_bit(SDP_F_DISCONN_SENT, &ssk->flags))
		return;
	__clear_bit(SDP_F_DISCONN_PEND, &ssk->flags);
	__set_bit(SDP_F_DISCONN_SENT, &ssk->flags);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_DISCONN);
	if (!sdp_local_deliver(ssk, NULL, true, &acked) && acked)
		sdp_disconn_done(ssk);
}

/* Bytes the window (sdp_local_limits()) still takes: less what the peer
 * has not read and what we hold.
 */
long sdp_local_room(const struct sdp_sock *ssk)
{
	return (long)READ_ONCE(ssk->tx_local_limit) -
	       (long)READ_ONCE(ssk->tx_local_unread) -
	       (long)READ_ONCE(ssk->tx_queued);
}

bool sdp_local_writable(const struct sdp_sock *ssk)
{
	u32 lowat = READ_ONCE(ssk->notsent_lowat);

	if (!test_bit(SDP_F_CONN, &ssk->flags))
		return true;
	if (lowat && READ_ONCE(ssk->tx_queued) +
		     READ_ONCE(ssk->tx_inflight_bytes) >= lowat)
		return false;
	return sdp_local_room(ssk) > 0;
}

/* Wait for window; 0 to try again, or a negative errno. */
int sdp_local_wait_room(struct sdp_sock *ssk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	int err;

	err = sdp_send_stall(sk, *timeo);
	if (err)
		return err;
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, timeo, sdp_local_room(ssk) > 0 || sk->sk_err ||
		      (sk->sk_shutdown & SEND_SHUTDOWN) ||
		      !sdp_conn_usable(ssk), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	if (sdp_local_room(ssk) > 0)
		return 0;
	if (!*timeo)
		return -EAGAIN;
	return signal_pending(current) ? sock_intr_errno(*timeo) : 0;
}

/* No memory for a message (sdp_local_buf_alloc()): wait a while, as
 * sk_stream_wait_memory() does, or for the peer to read; 0 to try again,
 * or a negative errno.
 */
static int sdp_local_wait_mem(struct sdp_sock *ssk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	u32 unread = READ_ONCE(ssk->tx_local_unread);
	long vm_wait, left;
	int err;

	err = sdp_send_stall(sk, *timeo);
	if (err)
		return err;
	vm_wait = min_t(long, *timeo, get_random_u32_below(HZ / 5) + 2);
	left = vm_wait;
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, &left, READ_ONCE(ssk->tx_local_unread) < unread ||
		      sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) ||
		      !sdp_conn_usable(ssk), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	if (*timeo != MAX_SCHEDULE_TIMEOUT)
		*timeo -= vm_wait - left;
	return 0;
}

/* The window, as TCP's on loopback: the peer's receive buffer and our
 * send buffer, each what SO_RCVBUF or SO_SNDBUF set, else what TCP's
 * may grow to (sdp_window.c).
 */
void sdp_local_limits(struct sdp_sock *ssk, struct sdp_sock *peer)
{
	u32 rcv = max_t(u32, sdp_rcv_budget(peer), SOCK_MIN_RCVBUF);
	u32 snd = sdp_snd_budget(ssk);

	spin_lock_bh(&ssk->conn->link->lock);
	ssk->tx_local_rcv = rcv;
	WRITE_ONCE(ssk->tx_local_limit, rcv + snd);
	sdp_local_unread(ssk, ssk->tx_local_unread);
	spin_unlock_bh(&ssk->conn->link->lock);
}

/* A message for up to @n bytes, or the held one if it has room. */
static struct sdp_buf *sdp_local_buf_for(struct sdp_sock *ssk, size_t *n,
					 long room)
{
	struct sdp_buf *buf = ssk->conn->local_held;
	bool hold = ssk->cork || ssk->more;
	struct sdp_sock *peer;
	u32 size;

	if (buf && buf->kind == SDP_BUF_LOCAL && !buf->flags &&
	    buf->len < buf->size) {
		*n = min_t(size_t, *n, buf->size - buf->len);
		return buf;
	}
	if (buf && sdp_local_push_held(ssk))
		return ERR_PTR(-EPIPE);
	peer = sdp_local_peer_get(ssk);
	if (!peer)
		return ERR_PTR(-EPIPE);
	sdp_local_limits(ssk, peer);
	*n = min_t(size_t, *n, room);
	size = hold ? min_t(long, SDP_LOCAL_CHUNK, room) : *n;
	buf = sdp_local_buf_alloc(ssk, peer, size, SDP_BUF_LOCAL);
	sock_put(&peer->sk);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	ssk->conn->local_held = buf;
	return buf;
}

/* Lend this send's pages (sdp_local_lend.c)?  A blocking send of a user
 * buffer, large enough, nothing held back, not urgent, not zero copy
 * already, with a window to lend into and no signal to end its wait.
 */
static bool sdp_local_lend_ok(struct sdp_sock *ssk, struct msghdr *msg,
			      const struct sdp_send *s, long room)
{
	int min = READ_ONCE(sdp_local_lend_min);

	return min > 0 && msg_data_left(msg) >= min && s->timeo &&
	       room >= SDP_LOCAL_CHUNK && !s->uarg && !s->no_zc &&
	       !(s->flags & MSG_OOB) && !ssk->conn->local_held &&
	       !ssk->cork && !ssk->more &&
	       (iter_is_ubuf(&msg->msg_iter) || iter_is_iovec(&msg->msg_iter)) &&
	       !signal_pending(current);
}

/* The next bytes of @msg other than copied into a message: the pages
 * themselves (MSG_ZEROCOPY, io_uring's SEND_ZC; not an AZ-SDP op's: only
 * part of its range is protected), straight into a reader waiting with
 * its buffer, or lent (a large blocking send).  Return: bytes taken, 0 to
 * copy them, or a negative errno.
 */
static ssize_t sdp_local_send_ref(struct sdp_sock *ssk, struct msghdr *msg,
				  struct sdp_send *s, long room)
{
	ssize_t w;

	if (s->uarg && !s->az && !s->no_zc && !(s->flags & MSG_OOB)) {
		w = sdp_local_send_pinned(ssk, msg, s, room, NULL);
		if (w)
			return w;
		s->no_zc = true;	/* could not pin: copied */
	}
	if (!ssk->conn->local_held && !ssk->cork && !ssk->more &&
	    !(s->flags & MSG_OOB)) {
		w = sdp_local_sink_fill(ssk, msg);
		if (w) {
			s->copied += w;
			return w;
		}
	}
	if (sdp_local_lend_ok(ssk, msg, s, room)) {
		w = sdp_local_lend_pages(ssk, msg, s, room);
		if (w)
			return w;
		s->no_zc = true;	/* could not lend: copied */
	}
	return 0;
}

/**
 * sdp_local_sendmsg - the local transport's sendmsg
 * @ssk: the socket, locked and connected
 * @msg: what to send
 * @s: sendmsg()'s state
 *
 * Return: 0 or a negative errno (@s->copied says what was taken).
 */
int sdp_local_sendmsg(struct sdp_sock *ssk, struct msghdr *msg,
		      struct sdp_send *s)
{
	struct sock *sk = &ssk->sk;
	struct sdp_buf *buf;
	size_t n, c;
	ssize_t w;
	long room;
	int err;

	sdp_assert_locked(ssk);

	while (msg_data_left(msg)) {
		err = -EPIPE;
		if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) ||
		    !sdp_conn_usable(ssk) || !sdp_conn_same(ssk, s->conn))
			return err;
		room = sdp_local_room(ssk);
		if (room <= 0) {
			err = sdp_local_wait_room(ssk, &s->timeo);
			if (err)
				return err;
			continue;
		}
		w = sdp_local_send_ref(ssk, msg, s, room);
		if (w > 0)
			continue;
		if (w < 0)
			return w;
		n = min_t(size_t, msg_data_left(msg), SDP_LOCAL_CHUNK);
		buf = sdp_local_buf_for(ssk, &n, room);
		if (PTR_ERR_OR_ZERO(buf) == -ENOMEM) {
			/* degraded, not failed, as on the RDMA path */
			err = sdp_local_wait_mem(ssk, &s->timeo);
			if (err)
				return err;
			continue;
		}
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		c = copy_from_iter(buf->data + buf->len, n, &msg->msg_iter);
		buf->len += c;
		WRITE_ONCE(ssk->tx_queued, ssk->tx_queued + c);
		s->copied += c;
		if (c != n) {
			/* what was copied goes, as the send returns it */
			sdp_local_flush(ssk, false);
			if (ssk->conn->local_held)
				sdp_cork_timer_arm(ssk);
			return -EFAULT;
		}
		if ((s->flags & MSG_OOB) && !msg_data_left(msg)) {
			/* the last byte of this send is urgent */
			buf->flags = SDP_OOB_PRES;
			SDP_INC_STATS(sock_net(sk), SDP_MIB_TX_URGENT);
		}
		if (buf->len < buf->size && !buf->flags &&
		    (ssk->cork || ssk->more)) {
			sdp_cork_timer_arm(ssk);
			continue;
		}
		err = sdp_local_push_held(ssk);
		if (err)
			return err;
	}
	return 0;
}

