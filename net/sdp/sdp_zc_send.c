// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: ZCopy's source, read-based: the peer RDMA-READs the sender's
 * own pages.
 *
 * A send of at least SDP_ZCOPY_THRESH bytes from one contiguous user
 * range, blocking or with MSG_ZEROCOPY, registers up to SDP_ZC_REG_PAGES
 * of it for the peer to read (sdp_zcopy.c) and queues a SrcAvail {len,
 * rkey, addr} in stream order behind the data already queued.  Up to
 * SDP_ZC_REGS SrcAvails are outstanding.  The peer's RdmaRdCompl reports
 * bytes read, oldest SrcAvail first; once one is read whole its key is
 * invalidated and, when that completes, its pages are released and
 * either the blocking sender is woken or the MSG_ZEROCOPY notification is
 * queued.  A blocking send returns once all its SrcAvails are read.
 * Interrupted (a signal, SO_SNDTIMEO), it sends SrcAvailCancel, which
 * asks the sink to read the rest at once, and waits at most
 * SDP_ZC_CANCEL_TIMEOUT more before it resets the connection.
 *
 * Everything runs under the socket lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/uio.h>

#include "sdp.h"
#include "sdp_zcopy.h"

/**
 * sdp_zc_want - should this part of a send go by ZCopy?
 * @ssk: the socket, locked, connected
 * @msg: the send, at the part to go next
 * @flags: its flags
 *
 * The current segment of a user buffer (or what is left of an io_uring
 * fixed buffer) must hold at least the socket's threshold, the peer must
 * take SrcAvails, and the call must either block or carry a notification
 * (MSG_ZEROCOPY on a socket with SDP_ZEROCOPY set, io_uring's SEND_ZC).
 *
 * Return: true if this part goes by ZCopy.
 */
bool sdp_zc_want(struct sdp_sock *ssk, struct msghdr *msg, int flags)
{
	u32 thresh = READ_ONCE(ssk->zcopy_thresh);

	sdp_assert_locked(ssk);

	if (!thresh || !(ssk->conn->peer_caps & SDP_CAP_SRC_AVAIL) ||
	    !ssk->conn->peer_adverts || (flags & MSG_OOB))
		return false;
	/* an io_uring fixed buffer (a bvec a page long each, or a folio):
	 * by reference while io_uring's notification keeps it
	 */
	if (msg->msg_ubuf && iov_iter_is_bvec(&msg->msg_iter))
		return msg_data_left(msg) >= thresh;
	if (!iter_is_iovec(&msg->msg_iter) && !iter_is_ubuf(&msg->msg_iter))
		return false;
	return iov_iter_single_seg_count(&msg->msg_iter) >= thresh;
}

/* Under the socket lock: room for one more SrcAvail, that is a free
 * registration (a SinkAvail of a reader holds one too), the peer's limit
 * not reached, and a send buffer to carry it.
 */
bool sdp_zc_src_room(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_zc *zc = conn->zc;

	return zc && sdp_zc_free_reg(zc) &&
	       ssk->zc_src_count < min_t(u32, zc->nregs, conn->peer_adverts) &&
	       sdp_tx_buf_avail(ssk);
}

/**
 * sdp_zc_send - advertise the next part of a send in a SrcAvail
 * @ssk: the socket, locked, connected
 * @msg: the send; its iterator moves past the part advertised
 * @uarg: the MSG_ZEROCOPY notification, or NULL for a blocking send
 * @timeo: unused yet; for symmetry with the BCopy path
 * @sent: bytes advertised
 *
 * Return: 0; -EAGAIN without a free registration (wait, or copy
 * instead); -ENOBUFS past RLIMIT_MEMLOCK, without MRs, or without a send
 * buffer for the SrcAvail (copy instead); another negative errno.
 */
int sdp_zc_send(struct sdp_sock *ssk, struct msghdr *msg,
		struct ubuf_info *uarg, long *timeo, size_t *sent)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_zc_reg *reg;
	struct sdp_zc *zc;
	struct sdp_buf *buf;
	ssize_t n;

	sdp_assert_locked(ssk);

	zc = sdp_zc_get(ssk);
	if (!zc || sdp_zc_mrs(conn, zc))
		return -ENOBUFS;
	if (!sdp_zc_src_room(ssk))
		return -EAGAIN;
	reg = sdp_zc_free_reg(zc);
	/* the SrcAvail, in stream order behind what is queued.  Without a
	 * send buffer, or memory for one (tcp_mem's pressure, the cgroup):
	 * copy instead, where the BCopy path waits for either as TCP waits
	 * for memory, never ENOMEM to the program.
	 */
	buf = sdp_tx_buf_take(ssk);
	if (IS_ERR_OR_NULL(buf))
		return -ENOBUFS;
	reg->sink = false;
	n = sdp_zc_register(ssk, zc, reg, &msg->msg_iter, uarg,
			    IB_ACCESS_REMOTE_READ);
	if (n < 0) {
		list_move(&buf->list, &conn->tx_free);
		WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree + 1);
		return n;
	}
	ssk->zc_src_count++;
	ssk->zc_src_bytes += n;
	sdp_zc_src_queue(ssk, reg, buf);
	*sent = n;
	sdp_win_wait(ssk);	/* on the peer to read it */
	sdp_tx_flush(ssk);
	return 0;
}

/**
 * sdp_zc_src_queue - fill in the SrcAvail of a registration and queue it
 * @ssk: the socket, locked
 * @reg: registered (sdp_zc_reg_map()), counted in zc_src_count and
 *	zc_src_bytes
 * @buf: a send buffer, at the tail of ->tx_queue
 */
void sdp_zc_src_queue(struct sdp_sock *ssk, struct sdp_zc_reg *reg,
		      struct sdp_buf *buf)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_avail_hdr *a;

	sdp_assert_locked(ssk);

	buf->mid = SDP_MID_SRC_AVAIL;
	buf->flags = 0;
	buf->len = sizeof(struct sdp_bsdh) + sizeof(*a);
	a = buf->data + sizeof(struct sdp_bsdh);
	a->len = cpu_to_be32(reg->len);
	a->rkey = cpu_to_be32(reg->mr->rkey);
	a->addr = cpu_to_be64(reg->mr->iova);

	list_add_tail(&reg->node, &conn->zc->src);
	conn->zc_adv_total += reg->len;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_SRCAVAIL);
	SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_TX_ZC_BYTES, reg->len);
	trace_sdp_zcopy(&ssk->sk, "srcavail", reg->len);
}

/**
 * sdp_zc_wait_room - wait until @room says there may be room
 * @ssk: the socket, locked
 * @timeo: the send's time left
 * @room: sdp_zc_src_room() for one more SrcAvail, or a stricter test
 *
 * Return: 0 when there may be room (or the connection failed: the caller
 * looks), -EAGAIN when the time is up, or the signal's errno.
 */
int sdp_zc_wait_room(struct sdp_sock *ssk, long *timeo,
		     bool (*room)(struct sdp_sock *ssk))
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;

	sdp_assert_locked(ssk);

	if (!*timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(*timeo);
	/* a send buffer coming back wakes us only if we say we wait for one
	 * (sdp_write_space())
	 */
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, timeo, room(ssk) ||
		      sk->sk_err || !sdp_conn_usable(ssk), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

/* Wait for room for one more SrcAvail: sdp_zc_wait_room(). */
int sdp_zc_wait_reg(struct sdp_sock *ssk, long *timeo)
{
	return sdp_zc_wait_room(ssk, timeo, sdp_zc_src_room);
}

/**
 * sdp_zc_send_wait - wait until the peer has read every SrcAvail
 * @ssk: the socket, locked
 * @timeo: the send's time left
 *
 * On a signal or when the time is up, asks the peer to read the rest at
 * once (SrcAvailCancel) and waits at most SDP_ZC_CANCEL_TIMEOUT more (a
 * fatal signal does not wait); a peer that does not answer then has its
 * connection reset, which frees the pages and keys.
 *
 * Return: 0, or the error that interrupted the wait.
 */
int sdp_zc_send_wait(struct sdp_sock *ssk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	long grace = SDP_ZC_CANCEL_TIMEOUT;
	int err = 0;

	sdp_assert_locked(ssk);

	add_wait_queue(sk_sleep(sk), &wait);
	while (ssk->zc_src_count && sdp_conn_usable(ssk)) {
		if (!*timeo || signal_pending(current)) {
			err = *timeo ? sock_intr_errno(*timeo) : -EAGAIN;
			break;
		}
		sk_wait_event(sk, timeo, !ssk->zc_src_count ||
			      !sdp_conn_usable(ssk), &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	if (!ssk->zc_src_count || !sdp_conn_usable(ssk))
		return sk->sk_err ? -sk->sk_err : err;

	/* interrupted: the pages stay the peer's until it settles */
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_CANCELS);
	trace_sdp_zcopy(sk, "srcavail-cancel", ssk->zc_src_bytes);
	ssk->conn->zc_cancel = true;
	sdp_tx_flush(ssk);
	while (ssk->zc_src_count && sdp_conn_usable(ssk) && grace > 0) {
		release_sock(sk);
		grace = wait_event_killable_timeout(ssk->zc_wait,
						    !READ_ONCE(ssk->zc_src_count) ||
						    !sdp_conn_usable(ssk), grace);
		lock_sock(sk);
	}
	if (ssk->zc_src_count && sdp_conn_usable(ssk)) {
		if (grace >= 0)	/* else a fatal signal: no need to say */
			net_warn_ratelimited("peer did not settle a cancelled SrcAvail, connection reset\n");
		sdp_conn_abort(ssk, ECONNRESET, true);
	}
	return err;
}

/* RdmaRdCompl: @size more bytes read, oldest SrcAvail first.  Only bytes
 * of SrcAvails posted may be reported: one still queued for a credit has
 * not reached the peer, which cannot have read it.
 */
int sdp_zc_rx_rdcompl(struct sdp_sock *ssk, u32 size)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_zc *zc = conn->zc;
	struct sdp_zc_reg *reg, *tmp;

	if (!zc || !size || conn->zc_read_total + size > conn->zc_adv_posted)
		return -EPROTO;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_RDCOMPL);
	trace_sdp_zcopy(&ssk->sk, "rdcompl", size);
	conn->zc_read_total += size;
	sdp_win_progress(conn);

	list_for_each_entry_safe(reg, tmp, &zc->src, node) {
		u32 take = min(size, reg->len - reg->done);

		reg->done += take;
		size -= take;
		if (reg->done < reg->len)
			break;
		if (sdp_zc_invalidate(ssk, reg)) {
			/* the teardown deregisters the MR, then frees */
			sdp_conn_abort(ssk, ECONNRESET, false);
			break;
		}
		if (!size)
			break;
	}
	return 0;
}
