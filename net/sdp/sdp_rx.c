// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the RDMA transport's receive ring and inbound validation.
 *
 * Every receive buffer of the ring is posted at connection setup.  A
 * completed message is validated in the order of Documentation/wire.rst
 * (byte count, header, length for its id, sequence, acknowledgment and
 * credits against what is possible), its header's credits are taken, and
 * then:
 *  - Data with a payload stays in its buffer, queued on ->rx_queue
 *    (sdp_rx_data(), sdp_recv.c), until recvmsg() has copied all of it
 *    out; only then is the buffer posted again (sdp_rdma_rx_done()).  The
 *    buffers holding unread data are thus the receive window: a reader
 *    that stops reading stops the sender's credits.
 *  - A SrcAvail stands in the queue for the peer's bytes it advertises
 *    until they are read by RDMA (sdp_zc_read.c); the bytes read ahead into
 *    kernel memory wait in bounce buffers queued in front of it.
 *  - Urgent data (MSG_OOB) is the last byte of a Data message flagged
 *    OOB_PRES (the stream handles it as TCP does, sdp_recv.c).
 *  - Data without a payload (a credit update), DisConn and Abort are
 *    handled at once and their buffer is posted again.
 * Any violation aborts the connection, counts a protocol error and logs a
 * rate-limited line; nothing from the peer is trusted.
 *
 * When buffers are posted again and the peer's credits, as it last heard
 * of them, run low, a credit update goes out (sdp_tx_flush()).
 *
 * Everything here runs under the socket lock (see sdp.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <net/tcp.h>

#include "sdp.h"

/* Header checks; returns what is wrong, or NULL. */
static const char *sdp_rx_check(struct sdp_conn *conn, struct sdp_buf *buf,
				u32 *val)
{
	struct sdp_bsdh *h = buf->data;
	u32 len, mseq, ack, bufs, min;

	*val = buf->len;
	if (buf->len < sizeof(*h))
		return "short message";
	len = be32_to_cpu(h->len);
	*val = len;
	if (len != buf->len)
		return "length differs from bytes received";
	*val = h->mid;
	min = sdp_mid_min_len(h->mid);
	if (!min || len < min)
		return "unexpected message id";
	switch (h->mid) {
	case SDP_MID_DATA:
	case SDP_MID_DISCONN:
	case SDP_MID_ABORT:
		break;
	case SDP_MID_SRC_AVAIL:
	case SDP_MID_SRC_AVAIL_CANCEL:
	case SDP_MID_RDMA_RD_COMPL:
		/* read-based ZCopy, if both sides said they have it */
		if (!(conn->peer_caps & SDP_CAP_SRC_AVAIL))
			return "message id not negotiated";
		break;
	case SDP_MID_SINK_AVAIL:
	case SDP_MID_SINK_AVAIL_CANCEL:
	case SDP_MID_SINK_CANCEL_ACK:
	case SDP_MID_RDMA_WR_COMPL:
		/* write-based ZCopy, likewise */
		if (!(conn->peer_caps & SDP_CAP_SINK_AVAIL))
			return "message id not negotiated";
		break;
	case SDP_MID_CH_RCV_BUF:
	case SDP_MID_CH_RCV_BUF_ACK:
		if (!(conn->peer_caps & SDP_CAP_RESIZE))
			return "message id not negotiated";
		break;
	case SDP_MID_REGION_ADV:
	case SDP_MID_REGION_REVOKE:
	case SDP_MID_REGION_REVOKE_ACK:
		if (!(conn->peer_caps & SDP_CAP_REGIONS))
			return "message id not negotiated";
		break;
	default:
		return "message id not negotiated";
	}
	/* a RegionAdv's length is its keys' (sdp_rg_rx_adv()) */
	if (h->mid != SDP_MID_DATA && h->mid != SDP_MID_REGION_ADV &&
	    len != min)
		return "payload on a control message";
	*val = h->flags;
	if (h->flags & ~(SDP_OOB_PRES | SDP_OOB_PEND))
		return "unknown flags";
	if (h->flags && h->mid != SDP_MID_DATA)
		return "urgent flags on a control message";
	if ((h->flags & SDP_OOB_PRES) && len == sizeof(*h))
		return "urgent flag without a byte";
	mseq = be32_to_cpu(h->mseq);
	*val = mseq;
	if (mseq != conn->rx_mseq + 1)
		return "out of sequence";
	ack = be32_to_cpu(h->mseq_ack);
	*val = ack;
	if ((s32)(ack - conn->remote_ack) < 0 || (s32)(conn->tx_mseq - ack) < 0)
		return "acknowledges a message never sent";
	bufs = be16_to_cpu(h->bufs);
	*val = bufs;
	if (bufs > conn->remote_max_bufs)
		return "more buffers than announced";
	return NULL;
}

/**
 * sdp_rx_queue_free - free what @conn's receive queue holds of its own
 * @conn: the connection, its socket locked or being freed
 *
 * Bounce and spill buffers; receive buffers are the ring's, freed (or
 * posted again) with it.
 */
void sdp_rx_queue_free(struct sdp_conn *conn)
{
	struct sdp_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, &conn->rx_queue, list) {
		list_del_init(&buf->list);
		if (buf->kind == SDP_BUF_BOUNCE)
			sdp_bounce_free(buf);
		else if (buf->kind == SDP_BUF_SPILL)
			sdp_rx_spill_free(conn, buf);
	}
}

/* The RDMA transport's ->rx_purge(): drop everything received and not
 * read, with the connection.
 */
void sdp_rdma_rx_purge(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;

	sdp_rx_queue_free(conn);
	conn->rx_held = 0;
	conn->zc_bounce = 0;
	conn->zc_rx_count = 0;
	__clear_bit(SDP_F_ZC_HURRY, &ssk->flags);
}

/**
 * sdp_rdma_rx_done - the RDMA transport's release of a buffer read whole
 * @ssk: the socket, locked
 * @buf: a receive buffer, posted again, or a bounce buffer, freed
 */
void sdp_rdma_rx_done(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	sdp_assert_locked(ssk);
	switch (buf->kind) {
	case SDP_BUF_BOUNCE:
		ssk->conn->zc_bounce -= buf->len;
		sdp_bounce_free(buf);
		sdp_zc_rx_done(ssk);
		return;
	case SDP_BUF_SPILL:
		sdp_rx_spill_done(ssk, buf);
		sdp_zc_rx_done(ssk);	/* room for read-ahead too */
		return;
	}
	ssk->conn->rx_held--;
	sdp_rx_repost(ssk, buf);
}

static void sdp_rx_message(struct sdp_sock *ssk, struct sdp_buf *buf);

/* Receive completion (or flush) of a receive buffer. */
void sdp_rx_complete(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);

	conn->rx_posted--;
	buf->posted = false;
	if (buf->status != IB_WC_SUCCESS) {
		if (buf->status != IB_WC_WR_FLUSH_ERR) {
			SDP_INC_STATS(net, SDP_MIB_CQ_ERRORS);
			net_dbg_ratelimited("receive completion error %s\n",
					    ib_wc_status_msg(buf->status));
			sdp_conn_abort(ssk, ECONNRESET, false);
		} else {
			sdp_flushed(ssk);
		}
		return;
	}
	if (conn->sdev)
		ib_dma_sync_single_for_cpu(conn->sdev->ibdev, buf->dma,
					   buf->len, DMA_FROM_DEVICE);

	/* Already reset: what follows does not matter. */
	if (test_bit(SDP_F_RESET, &ssk->flags))
		return;
	/* The peer may send as soon as it has accepted, and its message may
	 * complete here before rdma_cm has told us of the HelloAck with its
	 * credits: keep it until sdp_rx_early() (at most the ring).
	 */
	if (unlikely(sk->sk_state == TCP_SYN_SENT)) {
		list_add_tail(&buf->list, &conn->rx_early);
		return;
	}
	sdp_rx_message(ssk, buf);
}

/**
 * sdp_rx_early - handle the messages that came before the HelloAck
 * @ssk: the socket, locked, just established (the HelloAck taken)
 */
void sdp_rx_early(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_buf *buf;

	sdp_assert_locked(ssk);

	while (!list_empty(&conn->rx_early) &&
	       !test_bit(SDP_F_RESET, &ssk->flags)) {
		buf = list_first_entry(&conn->rx_early, struct sdp_buf, list);
		list_del_init(&buf->list);
		sdp_rx_message(ssk, buf);
	}
	INIT_LIST_HEAD(&conn->rx_early);
}

/* A message of one-sided RDMA's (sdp_rdma_region.c).  Return: false if
 * it aborted the connection.
 */
static bool sdp_rx_region(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	u8 mid = ((struct sdp_bsdh *)buf->data)->mid;
	const char *bad = sdp_rg_rx(ssk, buf);

	sdp_rx_repost(ssk, buf);
	if (bad)
		sdp_proto_error(ssk, bad, mid);
	return !bad;
}

/* A ZCopy message (sdp_rx_check() let only known ones through).
 * Return: false if it aborted the connection.
 */
static bool sdp_rx_zc_message(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_bsdh *h = buf->data;
	struct sock *sk = &ssk->sk;
	const char *bad;
	u32 val;

	switch (h->mid) {
	case SDP_MID_SRC_AVAIL:
		if (test_bit(SDP_F_DISCONN_RCVD, &ssk->flags)) {
			sdp_proto_error(ssk, "SrcAvail after DisConn", 0);
			return false;
		}
		if (sock_flag(sk, SOCK_DEAD)) {
			sdp_conn_abort(ssk, 0, true);	/* nobody will read */
			return false;
		}
		if (sdp_zc_rx_srcavail(ssk, buf)) {
			sdp_proto_error(ssk, "SrcAvail length or count",
					be32_to_cpu(((struct sdp_avail_hdr *)
						     (h + 1))->len));
			return false;
		}
		break;
	case SDP_MID_RDMA_RD_COMPL:
		val = be32_to_cpu(((struct sdp_size_hdr *)(h + 1))->size);
		sdp_rx_repost(ssk, buf);
		if (sdp_zc_rx_rdcompl(ssk, val)) {
			sdp_proto_error(ssk, "RdmaRdCompl beyond what was advertised",
					val);
			return false;
		}
		break;
	case SDP_MID_SRC_AVAIL_CANCEL:
		sdp_rx_repost(ssk, buf);
		sdp_zc_rx_cancel(ssk);
		break;
	case SDP_MID_SINK_AVAIL:
		bad = sdp_zc_rx_sinkavail(ssk, buf) ? "SinkAvail length" : NULL;
		sdp_rx_repost(ssk, buf);
		if (bad) {
			sdp_proto_error(ssk, bad, 0);
			return false;
		}
		break;
	case SDP_MID_SINK_AVAIL_CANCEL:
		sdp_rx_repost(ssk, buf);
		if (sdp_zc_rx_sink_cancel(ssk->conn)) {
			sdp_proto_error(ssk, "SinkAvailCancel without a SinkAvail", 0);
			return false;
		}
		break;
	case SDP_MID_RDMA_WR_COMPL:
		val = be32_to_cpu(((struct sdp_size_hdr *)(h + 1))->size);
		sdp_rx_repost(ssk, buf);
		if (test_bit(SDP_F_DISCONN_RCVD, &ssk->flags) ||
		    sdp_zc_rx_wrcompl(ssk, val)) {
			sdp_proto_error(ssk, "RdmaWrCompl without a SinkAvail",
					val);
			return false;
		}
		break;
	case SDP_MID_SINK_CANCEL_ACK:
		sdp_rx_repost(ssk, buf);
		if (sdp_zc_rx_cancel_ack(ssk)) {
			sdp_proto_error(ssk, "SinkCancelAck without a cancel", 0);
			return false;
		}
		break;
	}
	return true;
}

/* The checked header's sequence numbers and credits, taken. */
static void sdp_rx_take_hdr(struct sdp_conn *conn, const struct sdp_bsdh *h)
{
	conn->rx_mseq = be32_to_cpu(h->mseq);
	conn->remote_ack = be32_to_cpu(h->mseq_ack);
	conn->remote_bufs = be16_to_cpu(h->bufs);
	conn->st.segs_in++;
	conn->st.last_recv = jiffies;
	conn->ka_probes = 0;
	conn->init_wait = false;	/* the initiator has sent first */
}

/* A Data message, or a credit update (one with no payload).  Returns
 * false if it reset the connection.
 */
static bool sdp_rx_data_msg(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_bsdh *h = buf->data;

	/* OOB_PEND alone announces an urgent byte still to come: tell the
	 * owner now, as TCP does when it first sees the urgent pointer.
	 * ib_sdp itself never sends it.
	 */
	if ((h->flags & (SDP_OOB_PEND | SDP_OOB_PRES)) == SDP_OOB_PEND)
		sk_send_sigurg(&ssk->sk);
	if (buf->len == sizeof(*h)) {
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_CREDIT_UPDATE);
		ssk->conn->rx_upd++;
		sdp_rx_repost(ssk, buf);
		return true;
	}
	if (sdp_rx_data(ssk, buf, h->flags))
		sdp_rx_held_add(ssk);	/* the peer's credit, held */
	return !test_bit(SDP_F_RESET, &ssk->flags);
}

/* A message received on an established connection. */
static void sdp_rx_message(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);
	struct sdp_bsdh *h = buf->data;
	const char *bad;
	u32 val;

	bad = sdp_rx_check(conn, buf, &val);
	if (bad) {
		sdp_proto_error(ssk, bad, val);
		return;
	}
	sdp_rx_take_hdr(conn, h);

	switch (h->mid) {
	case SDP_MID_DATA:
		if (!sdp_rx_data_msg(ssk, buf))
			return;
		break;
	case SDP_MID_DISCONN:
		SDP_INC_STATS(net, SDP_MIB_RX_DISCONN);
		sdp_rx_repost(ssk, buf);
		conn->fin_ack_owed = conn->iwarp;
		sdp_rx_disconn(ssk);
		break;
	case SDP_MID_ABORT:
		SDP_INC_STATS(net, SDP_MIB_RX_ABORT);
		/* as tcp_reset(): after the peer's DisConn, a write fails */
		sdp_conn_abort(ssk, sdp_reset_errno(sk), false);
		return;
	case SDP_MID_CH_RCV_BUF:
		val = be32_to_cpu(((struct sdp_size_hdr *)(h + 1))->size);
		/* the new size first, so that this buffer is posted again
		 * at it: the peer's returns after a shrink count on every
		 * buffer that is posted
		 */
		sdp_rx_chrcvbuf(ssk, val);
		sdp_rx_repost(ssk, buf);
		break;
	case SDP_MID_CH_RCV_BUF_ACK:
		val = be32_to_cpu(((struct sdp_size_hdr *)(h + 1))->size);
		sdp_rx_repost(ssk, buf);
		if (sdp_tx_chrcvbuf_ack(ssk, val)) {
			sdp_proto_error(ssk, "ChRcvBufAck not asked for", val);
			return;
		}
		break;
	default:	/* ZCopy's, or one-sided RDMA's */
		if (!(sdp_mid_region(h->mid) ? sdp_rx_region(ssk, buf) :
		      sdp_rx_zc_message(ssk, buf)))
			return;
		break;
	}

	if (conn->iwarp)
		sdp_disconn_acked(ssk);
	/* new credits may release queued data; reposts may need telling */
	sdp_tx_flush(ssk);
}
