// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the receive ring, inbound validation and recvmsg().
 *
 * Every receive buffer of the ring is posted at connection setup.  A
 * completed message is validated in the order of Documentation/wire.rst
 * (byte count, header, length for its id, sequence, acknowledgment and
 * credits against what is possible), its header's credits are taken, and
 * then:
 *  - Data with a payload stays in its buffer, queued on ->rx_queue, until
 *    recvmsg() has copied all of it out; only then is the buffer posted
 *    again.  The buffers holding unread data are thus the receive window:
 *    a reader that stops reading stops the sender's credits.
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
#include <linux/sched/signal.h>
#include <net/tcp_states.h>

#include "sdp.h"

/* The peer's credits as it knows them: the bufs we last advertised less
 * the messages of its we have received since.
 */
static s32 sdp_peer_credits(const struct sdp_sock *ssk)
{
	return (s32)ssk->adv_bufs - (s32)(ssk->rx_mseq - ssk->adv_ack);
}

/**
 * sdp_need_credit_update - should a header-only update go out now?
 * @ssk: the socket, locked
 *
 * Only when it grants at least two more credits than the peer knows of,
 * so that two peers never answer each other's updates for ever; and only
 * when the peer runs low or a quarter of the ring is waiting to be told.
 */
bool sdp_need_credit_update(const struct sdp_sock *ssk)
{
	s32 peer = sdp_peer_credits(ssk);
	s32 more = (s32)ssk->rx_posted - peer;

	if (more < 2)
		return false;
	return peer <= 2 * SDP_CREDITS_RESERVED + 2 ||
	       more >= (s32)ssk->rx_size / 4;
}

static void sdp_rx_repost(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	int err;

	if (!sdp_conn_usable(ssk))
		return;
	err = sdp_post_recv(ssk, buf);
	if (err) {
		net_warn_ratelimited("ib_sdp: post recv failed: %d\n", err);
		sdp_conn_abort(ssk, ECONNRESET, false);
	}
}

static void sdp_proto_error(struct sdp_sock *ssk, const char *what, u32 val)
{
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id = ssk->cm_id;

	SDP_INC_STATS(sock_net(sk), SDP_MIB_PROTO_ERRORS);
	if (id)
		net_warn_ratelimited("ib_sdp: protocol error from %pISpc: %s (%u), connection aborted\n",
				     &id->route.addr.dst_addr, what, val);
	else
		net_warn_ratelimited("ib_sdp: protocol error: %s (%u), connection aborted\n",
				     what, val);
	sdp_conn_abort(ssk, ECONNRESET, true);
}

/* Header checks; returns what is wrong, or NULL. */
static const char *sdp_rx_check(struct sdp_sock *ssk, struct sdp_buf *buf,
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
	if (h->mid != SDP_MID_DATA && h->mid != SDP_MID_DISCONN &&
	    h->mid != SDP_MID_ABORT)
		return "message id not negotiated";
	if (h->mid != SDP_MID_DATA && len != sizeof(*h))
		return "payload on a control message";
	*val = h->flags;
	if (h->flags)
		return "flags not negotiated";
	mseq = be32_to_cpu(h->mseq);
	*val = mseq;
	if (mseq != ssk->rx_mseq + 1)
		return "out of sequence";
	ack = be32_to_cpu(h->mseq_ack);
	*val = ack;
	if ((s32)(ack - ssk->remote_ack) < 0 || (s32)(ssk->tx_mseq - ack) < 0)
		return "acknowledges a message never sent";
	bufs = be16_to_cpu(h->bufs);
	*val = bufs;
	if (bufs > ssk->remote_max_bufs)
		return "more buffers than announced";
	return NULL;
}

static void sdp_rx_disconn(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	__set_bit(SDP_F_DISCONN_RCVD, &ssk->flags);
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | RCV_SHUTDOWN);
	switch (sk->sk_state) {
	case TCP_ESTABLISHED:
		sk->sk_state = TCP_CLOSE_WAIT;
		break;
	case TCP_FIN_WAIT1:
		sk->sk_state = TCP_CLOSING;
		break;
	}
	if (test_bit(SDP_F_DISCONN_DONE, &ssk->flags)) {
		sk->sk_state = TCP_CLOSE;
		sdp_conn_queue_teardown(ssk);
	}
	sk->sk_state_change(sk);
	if (sk->sk_shutdown == SHUTDOWN_MASK || sk->sk_state == TCP_CLOSE)
		sk_wake_async(sk, SOCK_WAKE_WAITD, POLL_HUP);
	else
		sk_wake_async(sk, SOCK_WAKE_WAITD, POLL_IN);
}

/* Receive completion (or flush) of a receive buffer. */
void sdp_rx_complete(struct sdp_sock *ssk, struct sdp_buf *buf)
{
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);
	struct sdp_bsdh *h = buf->data;
	const char *bad;
	u32 payload, val;

	ssk->rx_posted--;
	if (buf->status != IB_WC_SUCCESS) {
		if (buf->status != IB_WC_WR_FLUSH_ERR) {
			SDP_INC_STATS(net, SDP_MIB_CQ_ERRORS);
			net_dbg_ratelimited("ib_sdp: receive completion error %s\n",
					    ib_wc_status_msg(buf->status));
			sdp_conn_abort(ssk, ECONNRESET, false);
		}
		return;
	}
	if (ssk->sdev)
		ib_dma_sync_single_for_cpu(ssk->sdev->ibdev, buf->dma,
					   buf->len, DMA_FROM_DEVICE);

	/* Already reset: what follows does not matter. */
	if (test_bit(SDP_F_RESET, &ssk->flags))
		return;

	bad = sdp_rx_check(ssk, buf, &val);
	if (bad) {
		sdp_proto_error(ssk, bad, val);
		return;
	}
	ssk->rx_mseq = be32_to_cpu(h->mseq);
	ssk->remote_ack = be32_to_cpu(h->mseq_ack);
	ssk->remote_bufs = be16_to_cpu(h->bufs);

	switch (h->mid) {
	case SDP_MID_DATA:
		payload = buf->len - sizeof(*h);
		if (!payload) {
			SDP_INC_STATS(net, SDP_MIB_RX_CREDIT_UPDATE);
			sdp_rx_repost(ssk, buf);
			break;
		}
		if (test_bit(SDP_F_DISCONN_RCVD, &ssk->flags)) {
			sdp_proto_error(ssk, "data after DisConn", payload);
			return;
		}
		SDP_INC_STATS(net, SDP_MIB_RX_DATA);
		SDP_ADD_STATS(net, SDP_MIB_RX_BYTES, payload);
		if (sock_flag(sk, SOCK_DEAD)) {
			/* closed by its owner: nobody will read (TCP resets) */
			sdp_conn_abort(ssk, 0, true);
			return;
		}
		buf->off = sizeof(*h);
		list_add_tail(&buf->list, &ssk->rx_queue);
		WRITE_ONCE(ssk->rx_bytes, ssk->rx_bytes + payload);
		sk->sk_data_ready(sk);
		break;
	case SDP_MID_DISCONN:
		SDP_INC_STATS(net, SDP_MIB_RX_DISCONN);
		sdp_rx_repost(ssk, buf);
		sdp_rx_disconn(ssk);
		break;
	case SDP_MID_ABORT:
		SDP_INC_STATS(net, SDP_MIB_RX_ABORT);
		/* as tcp_reset(): after the peer's DisConn, a write fails */
		sdp_conn_abort(ssk, sk->sk_state == TCP_CLOSE_WAIT ?
			       EPIPE : ECONNRESET, false);
		return;
	}

	/* new credits may release queued data; reposts may need telling */
	sdp_tx_flush(ssk);
}

/* Copy out of (or skip, for MSG_TRUNC) the queued data; called locked. */
static int sdp_rx_copy(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		       int flags)
{
	struct sdp_buf *buf, *tmp;
	size_t copied = 0, skip = 0;
	bool peek = flags & MSG_PEEK;
	bool reposted = false;

	list_for_each_entry_safe(buf, tmp, &ssk->rx_queue, list) {
		u32 avail = buf->len - buf->off;
		size_t n;

		if (copied >= len)
			break;
		n = min_t(size_t, avail, len - copied);
		if (!(flags & MSG_TRUNC) &&
		    copy_to_iter(buf->data + buf->off, n, &msg->msg_iter) != n)
			return copied ? copied : -EFAULT;
		copied += n;
		if (peek) {
			skip += n;
			continue;
		}
		buf->off += n;
		WRITE_ONCE(ssk->rx_bytes, ssk->rx_bytes - n);
		if (buf->off == buf->len) {
			list_del_init(&buf->list);
			sdp_rx_repost(ssk, buf);
			reposted = true;
		}
	}
	if (reposted)
		sdp_tx_flush(ssk);
	return copied;
}

int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		int flags)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int copied = 0, target, n;
	long timeo;

	if (flags & MSG_ERRQUEUE)
		return sock_recv_errqueue(sk, msg, len, SOL_IP, IP_RECVERR);
	if (flags & MSG_OOB)
		return -EINVAL;	/* no urgent data: as TCP without any */

	lock_sock(sk);
	if (sk->sk_state == TCP_LISTEN) {
		copied = -ENOTCONN;
		goto out;
	}
	if (!len)
		goto out;
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);

	do {
		if (!list_empty(&ssk->rx_queue)) {
			/* a peek looks at the queue from its start each time */
			if (flags & MSG_PEEK)
				copied = 0;
			n = sdp_rx_copy(ssk, msg, len - copied, flags);
			if (n < 0) {
				if (!copied)
					copied = n;
				break;
			}
			copied += n;
			if (copied >= target || (flags & MSG_PEEK && copied))
				break;
		}

		if (copied) {
			if (sk->sk_err || sk->sk_state == TCP_CLOSE ||
			    (sk->sk_shutdown & RCV_SHUTDOWN) ||
			    !timeo || signal_pending(current))
				break;
		} else {
			if (sk->sk_err) {
				copied = sock_error(sk);
				break;
			}
			if (sk->sk_shutdown & RCV_SHUTDOWN)
				break;
			if (sk->sk_state == TCP_CLOSE) {
				if (!test_bit(SDP_F_WAS_CONNECTED, &ssk->flags))
					copied = -ENOTCONN;
				break;
			}
			if (!timeo) {
				copied = -EAGAIN;
				break;
			}
			if (signal_pending(current)) {
				copied = sock_intr_errno(timeo);
				break;
			}
		}

		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, &timeo,
			      !list_empty(&ssk->rx_queue) || sk->sk_err ||
			      (sk->sk_shutdown & RCV_SHUTDOWN) ||
			      sk->sk_state == TCP_CLOSE, &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	} while (copied < (int)len);

out:
	release_sock(sk);
	return copied;
}
