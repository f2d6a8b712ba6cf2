// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: ZCopy's sink, read-based: the peer's SrcAvails, read by RDMA.
 *
 * A SrcAvail becomes an entry of the receive queue covering its bytes of
 * the stream.  A reader that reaches it with at least SDP_ZC_DIRECT_MIN
 * bytes of user buffer RDMA-READs straight into its pinned pages
 * (rdma_rw, SDP_ZC_CHUNK per READ op); otherwise, and when no reader
 * comes within a jiffy, bytes are read into kernel bounce buffers queued
 * in front of the entry (read-ahead, up to what TCP would buffer, the
 * receive budget of sdp_window.c shared with the ring and the spill of
 * unread Data, whatever the peer sends; charged to the owner's memory
 * cgroup).  So a source does not wait on the sink application while TCP
 * would buffer, and two sides sending at once cannot deadlock.  A
 * SrcAvailCancel starts the read-ahead at once, within the same bound.
 * When a SrcAvail has been read whole, its
 * receive buffer is posted again and RdmaRdCompl goes back.
 *
 * Everything runs under the socket lock; the READ waits drop it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_zcopy.h"

/* Sink: a SrcAvail checked by sdp_rx_check(); queue its bytes. */
int sdp_zc_rx_srcavail(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_avail_hdr *a = buf->data + sizeof(struct sdp_bsdh);
	struct sock *sk = &ssk->sk;
	u32 len = be32_to_cpu(a->len);

	if (!len || len > SDP_ZC_ADV_MAX)
		return -EPROTO;
	if (conn->zc_rx_count >= SDP_ZC_REGS)
		return -E2BIG;
	SDP_INC_STATS(sock_net(sk), SDP_MIB_RX_SRCAVAIL);
	trace_sdp_zcopy(sk, "rx-srcavail", len);
	buf->mid = SDP_MID_SRC_AVAIL;
	buf->flags = 0;
	buf->zc_addr = be64_to_cpu(a->addr);
	buf->zc_rkey = be32_to_cpu(a->rkey);
	buf->zc_len = len;
	buf->zc_total = len;
	buf->seq = ssk->rcv_nxt;
	list_add_tail(&buf->list, &conn->rx_queue);
	WRITE_ONCE(ssk->rcv_nxt, ssk->rcv_nxt + len);
	conn->zc_rx_count++;
	sk->sk_data_ready(sk);
	if (!ssk->zc_readers)
		sdp_timer_arm(ssk, SDP_F_ZC_TIMER, &ssk->zc_work, 1);
	return 0;
}

/* SrcAvailCancel: the peer wants its SrcAvails read now. */
void sdp_zc_rx_cancel(struct sdp_sock *ssk)
{
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_ZC_CANCELS);
	trace_sdp_zcopy(&ssk->sk, "rx-srcavail-cancel", ssk->conn->zc_rx_count);
	if (!ssk->conn->zc_rx_count)
		return;	/* read already: our RdmaRdCompl answers it */
	__set_bit(SDP_F_ZC_HURRY, &ssk->flags);
	sdp_timer_reset(ssk, SDP_F_ZC_TIMER, &ssk->zc_work, 0);
}

/* The SrcAvail @adv has been read whole: tell the peer, reuse its buffer. */
static void sdp_zc_adv_done(struct sdp_sock *ssk, struct sdp_buf *adv)
{
	struct sdp_conn *conn = ssk->conn;

	list_del_init(&adv->list);
	conn->zc_rx_count--;
	conn->zc_rdcompl += adv->zc_total;
	adv->mid = 0;
	sdp_rx_repost(ssk, adv);
	if (!conn->zc_rx_count)
		__clear_bit(SDP_F_ZC_HURRY, &ssk->flags);
	sdp_tx_flush(ssk);
	sdp_close_if_done(ssk);	/* the last bytes after both DisConns */
}

/* Post the READ ops of a fetch; returns how many are posted (a stuck one
 * included), or a negative errno if none.
 */
static int sdp_zc_fetch_post(struct sdp_sock *ssk, struct sdp_zc *zc,
			     struct sdp_buf *adv, struct iov_iter *iter,
			     u32 len)
{
	int n, posted = 0;
	u32 pos = 0;

	while (pos < len && posted < SDP_ZC_RW_OPS) {
		struct sdp_zc_rw *rw = &zc->rd[posted];

		n = sdp_zc_rw_prep(ssk, rw, iter,
				   min_t(u32, len - pos, SDP_ZC_CHUNK),
				   adv->zc_addr + pos, adv->zc_rkey);
		if (n < 0 && rw->stuck) {
			/* what it uses goes after the teardown's drain */
			net_warn_ratelimited("RDMA READ posted in part (%d), connection reset\n",
					     n);
			sdp_conn_abort(ssk, ECONNRESET, false);
			return posted + 1;
		}
		if (n < 0)
			return posted ? posted : n;
		pos += n;
		posted++;
	}
	return posted;
}

/* Read up to @len bytes from the front of the SrcAvail @adv, into the
 * user's buffer (@iter: the reader's, which moves on) or, with @iter NULL,
 * into bounce buffers queued in front of @adv.  Called locked, by one
 * fetcher at a time; drops the lock while the READs are under way (they
 * end, in success or in a flush, within the transport's timeouts or the
 * stall watchdog's; see sdp_zc_wait()).
 *
 * Return: bytes read, or a negative errno.
 */
static int sdp_zc_fetch(struct sdp_sock *ssk, struct sdp_buf *adv,
			struct iov_iter *iter, u32 len)
{
	struct sock *sk = &ssk->sk;
	struct sdp_zc *zc = sdp_zc_get(ssk);
	bool failed = false;
	int i, posted;
	u32 good = 0;

	if (!zc)
		return -ENOMEM;
	if (!sdp_conn_usable(ssk))
		return -ECONNRESET;
	zc->fetching = true;
	posted = sdp_zc_fetch_post(ssk, zc, adv, iter, len);
	if (posted < 0) {
		zc->fetching = false;
		return posted;
	}
	sdp_zc_wait(ssk, sdp_zc_rw_idle, zc->rd);

	/* the ops completed in order: the good ones come first */
	for (i = 0; i < posted; i++) {
		struct sdp_zc_rw *rw = &zc->rd[i];
		bool ok = !failed && rw->b.status == IB_WC_SUCCESS;

		sdp_zc_rw_release(rw, iter, ok);
		if (!ok) {
			failed = true;
			continue;
		}
		if (rw->bounce) {
			rw->bounce->seq = adv->seq + good;
			list_add_tail(&rw->bounce->list, &adv->list);
			ssk->conn->zc_bounce += rw->len;
			SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_ZC_BOUNCE_BYTES,
				      rw->len);
		} else {
			SDP_ADD_STATS(sock_net(sk), SDP_MIB_RX_ZC_DIRECT_BYTES,
				      rw->len);
		}
		good += rw->len;
	}
	ssk->conn->st.zc_read_recv += good;
	trace_sdp_zcopy(sk, "read", good);
	zc->fetching = false;
	adv->zc_addr += good;
	adv->zc_len -= good;
	adv->seq += good;
	if (!adv->zc_len)
		sdp_zc_adv_done(ssk, adv);
	sdp_zc_wake(sk);
	if (good && list_first_entry_or_null(&ssk->conn->rx_queue, struct sdp_buf,
					     list) != adv)
		sk->sk_data_ready(sk);
	return good ? good : -ECONNRESET;
}

/* Wait, without the socket lock, until the fetcher at work is done:
 * 0, or -EINTR if a fatal signal came first.
 */
static int sdp_zc_await_fetcher(struct sdp_sock *ssk)
{
	/* what we wait on stays ours: ssk->conn may be replaced */
	struct sdp_conn *conn = sdp_conn_get(ssk);
	struct sdp_zc *zc = conn->zc;
	struct sock *sk = &ssk->sk;
	int err;

	release_sock(sk);
	err = wait_event_killable(ssk->zc_wait, !READ_ONCE(zc->fetching));
	lock_sock(sk);
	sdp_conn_put(conn);
	return err ? -EINTR : 0;
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
 * 0 when the reader should look again, or a negative errno (-EAGAIN: a
 * peek reached the read-ahead bound).
 */
int sdp_zc_recv(struct sdp_sock *ssk, struct sdp_buf *adv, struct msghdr *msg,
		size_t n, int flags, u32 *seq)
{
	struct sdp_conn *conn = ssk->conn;
	int got;

	sdp_assert_locked(ssk);

	if (conn->zc && conn->zc->fetching)	/* read-ahead or another reader */
		return sdp_zc_await_fetcher(ssk);
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
	/* a peek reads on ahead of what it copies: within the bound */
	if (!sdp_rx_ahead_room(ssk))
		return -EAGAIN;
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
 *
 * Return: 0, or -EINTR if a fatal signal came first.
 */
int sdp_zc_quiesce(struct sdp_sock *ssk)
{
	int err = 0;

	sdp_assert_locked(ssk);

	while (!err && ssk->conn->zc && ssk->conn->zc->fetching)
		err = sdp_zc_await_fetcher(ssk);
	return err;
}

/* The first SrcAvail in the receive queue that is still to be read. */
static struct sdp_buf *sdp_zc_first_adv(struct sdp_conn *conn)
{
	struct sdp_buf *buf;

	list_for_each_entry(buf, &conn->rx_queue, list)
		if (buf->kind == SDP_BUF_RX && buf->mid == SDP_MID_SRC_AVAIL)
			return buf;
	return NULL;
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
	while (sdp_conn_usable(ssk) && !(ssk->conn->zc && ssk->conn->zc->fetching)) {
		adv = sdp_zc_first_adv(ssk->conn);
		if (!adv)
			break;
		if (!sdp_rx_ahead_room(ssk))
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
	if (ssk->conn->zc_rx_count && !ssk->zc_readers)
		sdp_timer_arm(ssk, SDP_F_ZC_TIMER, &ssk->zc_work, 1);
}

/* A new socket's ZCopy waits (zc_wait) and read-ahead work (zc_work). */
void sdp_zc_init(struct sdp_sock *ssk)
{
	init_waitqueue_head(&ssk->zc_wait);
	INIT_DELAYED_WORK(&ssk->zc_work, sdp_zc_work);
}
