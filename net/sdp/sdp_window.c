// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: what a writer may hand over before the peer program reads.
 *
 * TCP takes a writer's bytes into its send buffer (SO_SNDBUF, else up to
 * what tcp_wmem lets it grow to) and the peer's receive buffer (SO_RCVBUF,
 * else up to tcp_rmem's maximum) while the peer program does not read.
 * Programs that write both ways before they read (an echo and its client,
 * replication, pipelined RPC, MPI over sockets) count on it: with less,
 * each side waits in write() for the other to read, and neither does.
 * An SDP connection's rings are smaller, sized for the traffic
 * (sdp_mem.c), so on the RDMA transport:
 *
 *  - Send side: send buffers while what the socket holds (tx_queued,
 *    tx_inflight_bytes) is below the send budget, sdp_snd_budget(), and
 *    one always, as TCP always takes a first skb.  At most tx_size
 *    messages are in flight, what the send queue was sized for; the rest
 *    wait on ->tx_queue for credits, as TCP's queue waits for the window.
 *  - Receive side: once three quarters of the ring hold Data the program
 *    has not read (->rx_held), and it has read nothing for a jiffy (it
 *    is away, not just slower than the data), mem_work copies the unread
 *    messages out into kernel memory (SDP_BUF_SPILL buffers, queued in their place;
 *    small messages share one) and posts their receive buffers again: the
 *    peer gets its credits back while the program is away.  The ring,
 *    what is spilled and what ZCopy read ahead (sdp_zc_read.c) stay
 *    within the receive budget, sdp_rcv_budget(), as TCP's receive queue
 *    stays within its buffer; the copies count with their own size.  A
 *    program that keeps reading never has its data copied twice.
 *  - ZCopy: the peer's SrcAvails are read ahead within the same receive
 *    budget (sdp_rx_ahead_room()).  A source cannot take back the pages
 *    it advertised, and its blocking send returns only once they are
 *    read, so there the send budget does not help: with the receiver's
 *    budget full, a blocking send waits for up to what it advertised
 *    (at most SDP_ZC_REGS SrcAvails), where TCP would have taken up to
 *    its send buffer more (Documentation/sdp.rst).
 *
 * Both budgets are what TCP would let the socket grow to (SO_SNDBUF and
 * SO_RCVBUF as TCP doubled them), so a writer hands over at least what it
 * could over TCP.  Beyond the rings every connection has, memory is taken
 * only with room under tcp_mem's pressure threshold and in the owner's
 * memory cgroup, and charged to that cgroup (sdp_buf_room()): under
 * pressure the window stops growing, as TCP's does.  The local
 * transport's window is the same sum of the two budgets
 * (sdp_local_data.c).
 *
 * Everything here runs under the socket lock, but sdp_tx_buf_avail() and
 * sdp_tx_wake_due(), which poll() and completions call without it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/tcp.h>

#include "sdp.h"

/* Spill buffers hold at least this much, so that small messages share. */
#define SDP_SPILL_MIN		(4 * 1024)

/* Send buffers queued or in flight (not on ->tx_free). */
static u32 sdp_tx_bufs_used(const struct sdp_conn *conn, u32 nfree)
{
	u32 bufs = READ_ONCE(conn->tx_bufs);

	return bufs > nfree ? bufs - nfree : 0;
}

/**
 * sdp_tx_buf_avail - may a sender take a send buffer now?
 * @ssk: the socket; locked, or poll()'s lockless look
 *
 * While what the socket holds to send is below its send budget; and
 * always when none is in use, as TCP always takes a first skb, so that
 * a tiny SO_SNDBUF still moves.  A free buffer is no reason by itself:
 * buffers given back by completions are reused within the budget.
 *
 * Return: true if a sender may take a buffer.
 */
bool sdp_tx_buf_avail(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = READ_ONCE(ssk->conn);

	return sdp_tx_held(ssk) < sdp_snd_budget(ssk) ||
	       !sdp_tx_bufs_used(conn, READ_ONCE(ssk->tx_nfree));
}

/**
 * sdp_tx_wake_due - is there enough room to wake a waiting writer?
 * @ssk: the socket (any context)
 *
 * As TCP wakes one once its free send space is half of what it holds, so
 * that a streaming writer is not woken per completed message; or once a
 * quarter of the tx_size buffers every socket may use is free again.
 *
 * Return: true if a waiting writer should be woken.
 */
bool sdp_tx_wake_due(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = READ_ONCE(ssk->conn);
	u32 held = sdp_tx_held(ssk), budget = sdp_snd_budget(ssk);
	u32 size = READ_ONCE(conn->tx_size);

	if (held < budget && budget - held >= held / 2)
		return true;
	return sdp_tx_bufs_used(conn, READ_ONCE(ssk->tx_nfree)) +
	       max_t(u32, 1, size / 4) <= size;
}

/* What the receive side holds for the program: the ring, as TCP counts
 * its receive queue whole, and what was spilled and read ahead.
 */
static u32 sdp_rx_used(const struct sdp_conn *conn)
{
	return conn->rx_size * conn->rcv_size + conn->rx_spill +
	       conn->zc_bounce;
}

/**
 * sdp_rx_room - bytes the receive budget still takes
 * @ssk: the socket, locked
 *
 * Shared by the spill and by ZCopy's read-ahead.
 *
 * Return: the bytes, 0 once the budget is used.
 */
u32 sdp_rx_room(const struct sdp_sock *ssk)
{
	u32 used = sdp_rx_used(ssk->conn), budget = sdp_rcv_budget(ssk);

	sdp_assert_locked(ssk);

	return used < budget ? budget - used : 0;
}

/**
 * sdp_rx_ahead_room - may ZCopy read more of the peer's SrcAvails ahead?
 * @ssk: the socket, locked
 *
 * Within the receive budget, shared with the ring and the spill; one READ
 * op's worth always, so that a SrcAvail's bytes keep coming for a peeking
 * reader.  Nothing the peer sends lifts it (a SrcAvailCancel only hurries
 * the read-ahead).
 *
 * Return: true if another READ may be started ahead.
 */
bool sdp_rx_ahead_room(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	return sdp_rx_room(ssk) > 0 || ssk->conn->zc_bounce < SDP_ZC_CHUNK;
}

/* Should the unread Data in the ring be spilled now?  Once three quarters
 * of the buffers the peer has credits for hold it, with room to take it.
 */
static bool sdp_rx_spill_due(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = ssk->conn;

	return conn->rx_held &&
	       conn->rx_held >= conn->rx_size - conn->rx_size / 4 &&
	       sdp_rx_room(ssk) > 0;
}

/* Look again in a jiffy: if the program has not read meanwhile, it is
 * away (as ZCopy's read-ahead waits a jiffy for a reader).  A program
 * that reads, if more slowly than the data comes, is not worth the copy.
 * One known away (spilled for, and not read since) is not waited for
 * again: its window opens as fast as the data comes, as TCP's receive
 * queue takes it, and a writer that fills it sees it full at once.
 */
static void sdp_rx_spill_later(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	bool away = conn->rx_away && ssk->copied_seq == conn->rx_spill_seq;

	conn->rx_away = away;
	conn->rx_spill_kick = true;
	conn->rx_spill_seq = ssk->copied_seq;
	sdp_mem_kick(ssk, away ? 0 : 1);
}

/**
 * sdp_rx_held_add - a receive buffer with Data joined the receive queue
 * @ssk: the socket, locked (any context)
 */
void sdp_rx_held_add(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	sdp_assert_locked(ssk);

	conn->rx_held++;
	if (!conn->rx_spill_kick && sdp_rx_spill_due(ssk))
		sdp_rx_spill_later(ssk);
}

/* The spill buffer before @buf in the receive queue, if its bytes end
 * where @buf's begin and it has room for more.
 */
static struct sdp_buf *sdp_rx_spill_tail(struct sdp_conn *conn,
					 struct sdp_buf *buf)
{
	struct sdp_buf *prev;

	if (list_is_first(&buf->list, &conn->rx_queue))
		return NULL;
	prev = list_prev_entry(buf, list);
	if (prev->kind != SDP_BUF_SPILL || prev->len == prev->size ||
	    prev->seq + prev->len != buf->seq)
		return NULL;
	return prev;
}

/* A spill buffer for at least @want bytes, or NULL. */
static struct sdp_buf *sdp_rx_spill_alloc(struct sdp_sock *ssk, u32 want)
{
	u32 size = roundup_pow_of_two(max_t(u32, want, SDP_SPILL_MIN));
	struct sdp_buf *b;

	if (sdp_rx_room(ssk) < size + sizeof(*b) || !sdp_buf_room(ssk, size))
		return NULL;
	b = sdp_bounce_alloc(ssk, size);
	if (!b)
		return NULL;
	if (b->size < want) {		/* it gave less: not enough */
		sdp_bounce_free(b);
		return NULL;
	}
	b->kind = SDP_BUF_SPILL;
	b->len = 0;
	ssk->conn->rx_spill += sdp_bounce_truesize(b);
	return b;
}

/* Copy the Data message @buf out of its receive buffer, which goes back
 * to the peer.  False if there was no room or memory for it.
 */
static bool sdp_rx_spill_one(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	u32 payload = buf->len - sizeof(struct sdp_bsdh), first = 0;
	void *bytes = buf->data + sizeof(struct sdp_bsdh);
	struct sdp_buf *tail = sdp_rx_spill_tail(ssk->conn, buf), *b = NULL;

	if (tail)
		first = min(payload, tail->size - tail->len);
	if (first < payload) {
		b = sdp_rx_spill_alloc(ssk, payload - first);
		if (!b)
			return false;
	}
	if (first) {
		memcpy(tail->data + tail->len, bytes, first);
		tail->len += first;
	}
	if (b) {
		memcpy(b->data, bytes + first, payload - first);
		b->len = payload - first;
		b->seq = buf->seq + first;
		list_add(&b->list, &buf->list);
	}
	list_del_init(&buf->list);
	ssk->conn->rx_held--;
	SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_RX_SPILL_BYTES, payload);
	sdp_rx_repost(ssk, buf);
	return true;
}

/**
 * sdp_rx_spill - copy unread Data out of the ring, for the peer's credits
 * @ssk: the socket, locked; process context (mem_work)
 *
 * Every receive buffer holding Data the program has not read, oldest
 * first, while the receive budget and memory allow; then the peer hears
 * of the buffers posted again.
 */
void sdp_rx_spill(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf, *tmp;
	bool spilled = false;

	sdp_assert_locked(ssk);

	conn->rx_spill_kick = false;
	if (!sdp_rx_spill_due(ssk))
		return;
	if (ssk->copied_seq != conn->rx_spill_seq) {
		sdp_rx_spill_later(ssk);	/* it reads: not away */
		return;
	}
	list_for_each_entry_safe(buf, tmp, &conn->rx_queue, list) {
		/* Data in a receive buffer; not a SrcAvail (sdp_zc_read.c) */
		if (buf->kind != SDP_BUF_RX || buf->mid == SDP_MID_SRC_AVAIL)
			continue;
		if (!sdp_rx_spill_one(ssk, buf))
			break;
		spilled = true;
		conn->rx_away = true;
		if (!sdp_conn_usable(ssk))	/* a failed repost */
			return;
	}
	if (spilled)
		sdp_tx_flush(ssk);
}

/**
 * sdp_rx_spill_free - free a spill buffer, off the receive queue
 * @conn: the connection whose queue it was on (not always ssk->conn:
 *	  one being freed may have been replaced); its socket locked, or
 *	  being destroyed
 * @buf: the spill buffer
 */
void sdp_rx_spill_free(struct sdp_conn *conn, struct sdp_buf *buf)
{
	conn->rx_spill -= sdp_bounce_truesize(buf);
	sdp_bounce_free(buf);
}

/**
 * sdp_rx_spill_done - a spill buffer has been read whole
 * @ssk: the socket, locked
 * @buf: the spill buffer, off the receive queue; freed
 */
void sdp_rx_spill_done(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;

	sdp_assert_locked(ssk);

	sdp_rx_spill_free(conn, buf);
	/* room again: for more of the ring, if the reader goes away */
	if (!conn->rx_spill_kick && sdp_rx_spill_due(ssk))
		sdp_rx_spill_later(ssk);
}
