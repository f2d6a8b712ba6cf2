// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: buffer memory that follows the traffic.
 *
 * An idle connection holds little: SDP_CTRL_BUFS + rx_size receive
 * buffers of the size its Hello announced (rcvbuf_initial_size, 4 KiB by
 * default), four header-sized control buffers, and no send buffer at
 * all.  Send buffers are allocated when a send needs one, at the size the
 * peer takes (tx_msg_max): tx_size of them always, more within the send
 * budget (sdp_window.c); all are freed again once the connection has
 * been idle for SDP_MEM_IDLE.  mem_work also copies unread data out of
 * receive buffers for a program that is not reading (sdp_rx_spill()).
 *
 * Receive buffers grow on the data source's request, by the wire's
 * ChRcvBuf / ChRcvBufAck (Documentation/wire.rst), when both sides
 * announced SDP_CAP_RESIZE:
 *
 *  - A source whose sends queue up (sdp_tx_want_grow()) asks for larger
 *    buffers with ChRcvBuf(size).  The sink grants what its limits allow
 *    (rcvbuf_max_size, SO_RCVBUF or tcp_rmem[2] over the ring; never
 *    below its Hello's size), posts every buffer it reposts from then on
 *    at that size, and answers ChRcvBufAck(size) once no smaller buffer
 *    is posted: the RQ is FIFO, so every message sent after the Ack lands
 *    in a buffer that large.  Only then does the source send larger
 *    messages.
 *  - A source idle for SDP_MEM_IDLE lowers its own messages to the
 *    Hello's size first, then sends ChRcvBuf(that size) and a "return"
 *    (a header-only Data message, as a credit update) for every buffer
 *    the sink had posted, as credits allow: each consumes one of the
 *    large buffers, which the sink posts again small.  So does the
 *    buffer the ChRcvBuf itself came in: the sink sets the new size
 *    before it reposts that one.
 *
 * A request is outstanding until its Ack (tx_req): a source sends no
 * other, so an Ack always answers the last request.  A sink that cannot
 * grant more answers with its current size; the source then waits
 * SDP_MEM_IDLE before it asks again.
 *
 * Buffers are allocated and mapped in process context only: a receive
 * buffer whose size no longer matches waits on ->rx_resize for the
 * connection's mem_work, which reallocates and posts it.  If that fails,
 * a growth not yet acknowledged is given up (the connection stays at the
 * size it has); otherwise the buffer is tried again later.  Every
 * allocation is charged to the owner's memory cgroup, and counted in
 * /proc/net/sdpstats BufferBytes while it exists; growth needs room both
 * in the cgroup and under net.ipv4.tcp_mem's pressure threshold for all
 * SDP buffers of the host (sdp_buf.c).
 *
 * Everything here runs under the socket lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "sdp.h"

#define SDP_MEM_IDLE		HZ		/* idle before buffers shrink */
#define SDP_MEM_RETRY		(HZ / 10)	/* after a failed allocation */

/* Run mem_work after @delay; 0: now, even if it is armed for later. */
static void sdp_mem_arm(struct sdp_sock *ssk, unsigned long delay)
{
	if (!sdp_conn_usable(ssk))
		return;
	if (delay)
		sdp_timer_arm(ssk, SDP_F_MEM_TIMER, &ssk->mem_work, delay);
	else
		sdp_timer_reset(ssk, SDP_F_MEM_TIMER, &ssk->mem_work, 0);
}

/* Nothing of ours queued or in flight: no completion will free a buffer. */
static bool sdp_tx_empty(const struct sdp_conn *conn)
{
	return !conn->tx_inflight && list_empty(&conn->tx_queue);
}

/* A new send buffer, with no memory yet, on ->tx_free.  Beyond the
 * tx_size every connection may have, only with room for its memory; a
 * cgroup at its limit refuses it, but for a first one, which is forced.
 */
static struct sdp_buf *sdp_tx_buf_new(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct mem_cgroup *old;
	struct sdp_buf *buf;

	gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN;

	if (conn->tx_bufs >= conn->tx_size &&
	    !sdp_buf_room(ssk, conn->tx_msg_max))
		return NULL;
	/* the first is forced, as its memory is (sdp_tx_buf_take()) */
	if (sdp_tx_empty(conn))
		gfp = GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_HIGH;
	old = set_active_memcg(ssk->memcg);
	buf = kzalloc(sizeof(*buf), gfp);
	set_active_memcg(old);
	if (!buf)
		return NULL;
	sdp_buf_init(ssk, buf, SDP_BUF_TX);
	list_add(&buf->list, &conn->tx_free);
	WRITE_ONCE(conn->tx_bufs, conn->tx_bufs + 1);
	WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree + 1);
	return buf;
}

/**
 * sdp_tx_buf_take - the next free send buffer, with memory for a message
 * @ssk: the socket, locked; process context
 *
 * While the send budget allows (sdp_tx_buf_avail()): a free buffer, or
 * a new one.  A buffer gets memory for the largest message
 * the peer takes; if that is refused, it is used at the size it has, or
 * else gets the smallest message's size.  That one is forced (reclaim,
 * then past the cgroup's limit rather than an OOM kill) when nothing else
 * of ours is queued or in flight, as TCP forces its first skb, so that a
 * sender always makes progress; otherwise the caller waits for a send to
 * complete and give its buffer back (sdp_tx_buf_ready()).
 *
 * Return: the buffer, moved to the tail of ->tx_queue; NULL if none is
 * the budget is spent; ERR_PTR(-ENOMEM) if none could be given
 * memory.
 */
struct sdp_buf *sdp_tx_buf_take(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf;
	gfp_t gfp;

	sdp_assert_locked(ssk);

	if (!sdp_tx_buf_avail(ssk))
		return NULL;
	buf = list_first_entry_or_null(&conn->tx_free, struct sdp_buf, list);
	if (!buf) {
		buf = sdp_tx_buf_new(ssk);
		if (!buf)
			return ERR_PTR(-ENOMEM);
	}
	if (buf->size >= conn->tx_msg_max ||
	    !sdp_buf_alloc(ssk, buf, conn->tx_msg_max, DMA_TO_DEVICE,
			   conn->tx_msg_max > conn->tx_msg_min) ||
	    buf->data)
		goto take;
	gfp = GFP_KERNEL | __GFP_NORETRY;
	if (sdp_tx_empty(conn))
		gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_HIGH;
	else if (conn->tx_msg_max == conn->tx_msg_min)
		return ERR_PTR(-ENOMEM);	/* just refused */
	if (__sdp_buf_alloc(ssk, buf, conn->tx_msg_min, DMA_TO_DEVICE, false,
			    gfp))
		return ERR_PTR(-ENOMEM);
take:
	list_move_tail(&buf->list, &conn->tx_queue);
	WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree - 1);
	sdp_mem_arm(ssk, SDP_MEM_IDLE);
	return buf;
}

/**
 * sdp_tx_buf_ready - may sdp_tx_buf_take() succeed without allocating?
 * @ssk: the socket, locked
 *
 * Or should a sender refused memory go on waiting: a completed send's
 * buffer, which keeps its memory, goes to the head of ->tx_free.  True as
 * well when nothing is on its way any more (the next take is forced).
 *
 * Return: true if a sender should try the take again.
 */
bool sdp_tx_buf_ready(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf;

	sdp_assert_locked(ssk);

	buf = list_first_entry_or_null(&conn->tx_free, struct sdp_buf, list);
	return (buf && buf->data) || sdp_tx_empty(conn);
}

/* Free a send buffer of @conn's ->tx_free or ->tx_queue, memory and all. */
static void sdp_tx_buf_free(struct sdp_sock *ssk, struct sdp_conn *conn,
			    struct sdp_buf *buf, enum dma_data_direction dir)
{
	list_del(&buf->list);
	sdp_buf_release(ssk, buf, dir);
	kfree(buf);
	WRITE_ONCE(conn->tx_bufs, conn->tx_bufs - 1);
}

/* Free every free send buffer: the connection is idle. */
static void sdp_tx_trim(struct sdp_sock *ssk)
{
	struct sdp_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, &ssk->conn->tx_free, list)
		sdp_tx_buf_free(ssk, ssk->conn, buf, DMA_TO_DEVICE);
	WRITE_ONCE(ssk->tx_nfree, 0);
}

/**
 * sdp_tx_bufs_unmap - unmap every send buffer of a drained connection
 * @ssk: the socket, locked; its QP drained, so that every send buffer is
 *	 on ->tx_free or ->tx_queue
 *
 * Their memory stays until sdp_tx_bufs_free(), with the connection.
 */
void sdp_tx_bufs_unmap(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct ib_device *dev = conn->sdev->ibdev;
	struct list_head *lists[] = { &conn->tx_free, &conn->tx_queue };
	struct sdp_buf *buf;
	int i;

	sdp_assert_locked(ssk);

	for (i = 0; i < ARRAY_SIZE(lists); i++)
		list_for_each_entry(buf, lists[i], list) {
			if (!buf->dma)
				continue;
			ib_dma_unmap_single(dev, buf->dma, buf->size,
					    DMA_TO_DEVICE);
			buf->dma = 0;
		}
}

/**
 * sdp_tx_bufs_free - free every send buffer of a connection
 * @ssk: the socket (locked, or being destroyed)
 * @conn: the connection, torn down (nothing mapped or posted) or never
 *	  set up; not always ssk->conn: one being freed may be replaced
 */
void sdp_tx_bufs_free(struct sdp_sock *ssk, struct sdp_conn *conn)
{
	struct sdp_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, &conn->tx_free, list)
		sdp_tx_buf_free(ssk, conn, buf, DMA_NONE);
	list_for_each_entry_safe(buf, tmp, &conn->tx_queue, list)
		sdp_tx_buf_free(ssk, conn, buf, DMA_NONE);
	WARN_ON_ONCE(conn->tx_bufs);
}

/* The largest receive buffer this socket may post. */
static u32 sdp_rcv_size_max(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = ssk->conn;
	const struct sock *sk = &ssk->sk;
	u32 max = clamp_t(u32, READ_ONCE(rcvbuf_max_size), SDP_MIN_BUF_SIZE,
			  SDP_MAX_BUF_SIZE);
	u32 space = sk->sk_userlocks & SOCK_RCVBUF_LOCK ? sk->sk_rcvbuf :
		    READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_rmem[2]);

	max = min(max, space / sdp_rx_ring_size(conn));
	if (max < conn->rcv_size_min)
		return conn->rcv_size_min;
	return max(rounddown_pow_of_two(max), conn->rcv_size_min);
}

/* True when every posted receive buffer holds at least @size bytes. */
static bool sdp_rx_posted_fit(const struct sdp_conn *conn, u32 size)
{
	u32 i;

	for (i = 0; i < sdp_rx_ring_size(conn); i++) {
		const struct sdp_buf *buf = &conn->rx_ring[i];

		if (buf->posted && buf->size < size)
			return false;
	}
	return true;
}

/**
 * sdp_rx_ack_due - may the ChRcvBufAck owed to the peer go out now?
 * @ssk: the socket, locked
 *
 * Return: true if the ChRcvBufAck may be posted now.
 */
bool sdp_rx_ack_due(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = ssk->conn;

	sdp_assert_locked(ssk);
	return conn->rx_ack_owed && sdp_rx_posted_fit(conn, conn->rcv_size);
}

/* The ChRcvBufAck went out: the peer may now send rcv_size. */
void sdp_rx_ack_sent(struct sdp_conn *conn)
{
	conn->rx_ack_owed = false;
	conn->rcv_acked = conn->rcv_size;
}

/**
 * sdp_rx_chrcvbuf - the peer asks for receive buffers of @size bytes
 * @ssk: the socket, locked (any context)
 * @size: the size asked for; any value (a growth clamped to what we allow)
 *
 * Every request is answered by one ChRcvBufAck with the size we post
 * from now on, once no smaller buffer is posted.
 */
void sdp_rx_chrcvbuf(struct sdp_sock *ssk, u32 size)
{
	struct sdp_conn *conn = ssk->conn;
	struct net *net = sock_net(&ssk->sk);
	u32 max = sdp_rcv_size_max(ssk);

	sdp_assert_locked(ssk);

	/* only a growth is bounded by our maximum, and never below what
	 * we post: the source's messages may be that large already.  A
	 * source that asks for no more has sized its messages for what it
	 * asks (a keepalive probe asks for just that, sdp_tx_ping()).
	 */
	if (size > conn->rcv_size)
		size = max(min(size, max), conn->rcv_size);
	size = max(size, conn->rcv_size_min);
	if (!is_power_of_2(size))
		size = max_t(u32, rounddown_pow_of_two(size), conn->rcv_size_min);
	if (size > conn->rcv_size)
		SDP_INC_STATS(net, SDP_MIB_RCVBUF_GROWS);
	else if (size < conn->rcv_size)
		SDP_INC_STATS(net, SDP_MIB_RCVBUF_SHRINKS);
	conn->rcv_size = size;
	conn->rx_ack_owed = true;
}

/**
 * sdp_rx_post_or_defer - post a receive buffer again, or leave it to the
 *	mem_work if its size does not match rcv_size
 * @ssk: the socket, locked (any context)
 * @buf: a receive buffer, consumed
 *
 * The SDP_CTRL_BUFS buffers the peer may fill beyond its credits are
 * never deferred: every header we send grants them whatever else is
 * posted, so fewer posted would make the peer's next control messages
 * wait for an RNR retry.  Such a buffer that is too large gets its new
 * size at once if an atomic allocation gives it: posted large, it would
 * stay so, since after the peer's returns (sdp_tx_shrink()) nothing may
 * consume it until the next burst.  A buffer posted at its old size is
 * no harm otherwise: it is at least what the peer may send until our
 * ChRcvBufAck, which waits for it to be gone.
 *
 * Return: 0, or the error of the post.
 */
int sdp_rx_post_or_defer(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	u32 size = ssk->conn->rcv_size;

	sdp_assert_locked(ssk);

	if (likely(buf->size == size))
		return sdp_post_recv(ssk->conn, buf);
	if (ssk->conn->rx_posted < SDP_CTRL_BUFS) {
		if (buf->size > size)
			__sdp_buf_alloc(ssk, buf, size, DMA_FROM_DEVICE, false,
					GFP_ATOMIC);
		return sdp_post_recv(ssk->conn, buf);
	}
	list_add_tail(&buf->list, &ssk->conn->rx_resize);
	sdp_mem_arm(ssk, 0);
	return 0;
}

/* Give the deferred receive buffers their new size and post them. */
static void sdp_rx_resize_run(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf;

	while ((buf = list_first_entry_or_null(&conn->rx_resize,
					       struct sdp_buf, list))) {
		if (buf->size != conn->rcv_size &&
		    sdp_buf_alloc(ssk, buf, conn->rcv_size, DMA_FROM_DEVICE,
				  conn->rcv_size > conn->rcv_size_min)) {
			/* a growth not yet announced can be given up; a
			 * buffer larger than needed can be posted as it is
			 */
			if (conn->rcv_acked < conn->rcv_size)
				conn->rcv_size = conn->rcv_acked;
			if (buf->size < conn->rcv_size) {
				sdp_mem_arm(ssk, SDP_MEM_RETRY);
				return;
			}
		}
		list_del_init(&buf->list);
		if (sdp_post_recv(conn, buf)) {
			net_warn_ratelimited("post recv failed\n");
			sdp_conn_abort(ssk, ECONNRESET, false);
			return;
		}
	}
}

/**
 * sdp_tx_want_grow - ask the peer for larger buffers if sends queue up
 * @ssk: the socket, locked
 *
 * Called by sendmsg() when it has more than two messages' worth to send.
 */
void sdp_tx_want_grow(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	u32 want = clamp_t(u32, READ_ONCE(rcvbuf_max_size), SDP_MIN_BUF_SIZE,
			   SDP_MAX_BUF_SIZE);

	sdp_assert_locked(ssk);

	if (!(conn->peer_caps & SDP_CAP_RESIZE) || conn->tx_req ||
	    conn->tx_msg_max >= want ||
	    time_before(jiffies, conn->tx_req_next))
		return;
	conn->tx_req = want;
	conn->tx_req_send = true;
	sdp_tx_flush(ssk);
}

/* The source is idle: messages back to the Hello's size, and the sink's
 * large buffers returned to it.
 */
static void sdp_tx_shrink(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	if (!(conn->peer_caps & SDP_CAP_RESIZE) || conn->tx_req ||
	    conn->tx_msg_max <= conn->tx_msg_min)
		return;
	conn->tx_msg_max = conn->tx_msg_min;
	conn->tx_req = conn->tx_msg_min;
	conn->tx_req_send = true;
	/* the sink's ring; the request itself takes the first */
	conn->tx_returns = conn->remote_max_bufs + SDP_CTRL_BUFS;
	sdp_tx_flush(ssk);
}

/**
 * sdp_tx_ping - make the peer answer: a ChRcvBuf for the size we send
 * @ssk: the socket, locked
 *
 * The iWARP keepalive probe (sdp_timer.c): the peer answers with a
 * ChRcvBufAck for at least that size (sdp_rx_chrcvbuf() bounds only a
 * growth), as it answers a request already outstanding.
 *
 * Return: 0, or -EOPNOTSUPP if the peer does not take ChRcvBuf.
 */
int sdp_tx_ping(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	sdp_assert_locked(ssk);

	if (!(conn->peer_caps & SDP_CAP_RESIZE))
		return -EOPNOTSUPP;
	if (conn->tx_req)
		return 0;
	conn->tx_req = conn->tx_msg_max;
	conn->tx_req_send = true;
	sdp_tx_flush(ssk);
	return 0;
}

/**
 * sdp_tx_chrcvbuf_ack - the peer answered our ChRcvBuf
 * @ssk: the socket, locked
 * @size: the size it posts now
 *
 * Return: 0, or -EPROTO for an Ack nobody asked for.
 */
int sdp_tx_chrcvbuf_ack(struct sdp_sock *ssk, u32 size)
{
	struct sdp_conn *conn = ssk->conn;
	u32 req = conn->tx_req;

	sdp_assert_locked(ssk);

	if (!req || conn->tx_req_send)
		return -EPROTO;
	conn->tx_req = 0;
	if (size < req) {
		/* refused, or less than asked: not again for a while */
		conn->tx_req_next = jiffies + SDP_MEM_IDLE;
		size = max(size, conn->tx_msg_min);
		if (size < conn->tx_msg_max)
			return -EPROTO;	/* we posted larger ones already */
	}
	conn->tx_msg_max = min(size, req);
	sdp_mem_arm(ssk, SDP_MEM_IDLE);
	return 0;
}

/* Idle for SDP_MEM_IDLE: nothing queued, in flight or sent since. */
static bool sdp_tx_idle(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = ssk->conn;

	return list_empty(&conn->tx_queue) && !conn->tx_inflight &&
	       !ssk->zc_src_count &&
	       time_after_eq(jiffies, conn->st.last_data_sent + SDP_MEM_IDLE);
}

/* Run mem_work after @delay at the latest, even if it is armed for
 * later: there may be data to spill (sdp_window.c).
 */
void sdp_mem_kick(struct sdp_sock *ssk, unsigned long delay)
{
	if (sdp_conn_usable(ssk))
		sdp_timer_reset(ssk, SDP_F_MEM_TIMER, &ssk->mem_work, delay);
}

static void sdp_mem_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, mem_work);
	struct sock *sk = &ssk->sk;

	if (sdp_timer_claim(ssk, SDP_F_MEM_TIMER) && sdp_conn_usable(ssk)) {
		sdp_rx_spill(ssk);	/* its buffers reposted below if resized */
		sdp_rx_resize_run(ssk);
		if (sdp_tx_idle(ssk)) {
			sdp_tx_trim(ssk);
			sdp_tx_shrink(ssk);
		} else {
			sdp_mem_arm(ssk, SDP_MEM_IDLE);
		}
		sdp_tx_flush(ssk);
	}
	release_sock(sk);
	sock_put(sk);	/* sdp_timer_arm()'s */
}

void sdp_mem_init(struct sdp_sock *ssk)
{
	INIT_DELAYED_WORK(&ssk->mem_work, sdp_mem_work);
}

/* Post @buf again (sdp_rx_post_or_defer()) on a usable connection; a
 * failure resets it.
 */
void sdp_rx_repost(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	int err;

	if (!sdp_conn_usable(ssk))
		return;
	err = sdp_rx_post_or_defer(ssk, buf);
	if (err) {
		net_warn_ratelimited("post recv failed: %d\n", err);
		sdp_conn_abort(ssk, ECONNRESET, false);
	}
}
