// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: how a connection ends.
 *
 * States are TCP's (sk->sk_state), moved by the DisConn exchange:
 *
 *   ESTABLISHED --SHUT_WR/close: DisConn queued--> FIN_WAIT1
 *   FIN_WAIT1   --the peer has our DisConn----->  FIN_WAIT2
 *   ESTABLISHED --peer's DisConn--------------->  CLOSE_WAIT
 *   CLOSE_WAIT  --SHUT_WR/close--------------->   LAST_ACK
 *   FIN_WAIT1   --peer's DisConn--------------->  CLOSING
 *   any         --both DisConns through and no SrcAvail unread--> CLOSE
 *   any         --Abort, a bad message, a failed completion, close()
 *                 with unread data or SO_LINGER {1, 0}--> CLOSE (reset)
 *
 * Flags (ssk->flags): DISCONN_PEND (queued behind the data), _SENT,
 * _DONE (the peer has it), _RCVD; RESET; TEARDOWN.  Reaching CLOSE
 * queues the teardown (teardown_work, on sdp_wq): the QP is drained, the
 * ZCopy keys invalidated, the peer disconnected, and the verbs resources
 * released (sdp_conn_free_verbs()); the connection's memory stays with the
 * socket (ssk->conn) for data not yet read.  An orphaned socket (closed by
 * its owner) is bounded by its fin timer and loses its rdma_cm_id once
 * the teardown is done.
 *
 * When the peer has our DisConn: on InfiniBand and RoCE, when its send
 * completes (the peer's device acknowledged it).  On iWARP a send
 * completes once the local TCP has it, and a teardown then may lose it:
 * the QP's move to error closes siw's TCP socket, with a reset if
 * anything unread is left in it (a credit update of the peer's, say),
 * and the reset drops what TCP had not sent yet, our DisConn and the
 * data before it.  So on iWARP a DisConn is acknowledged: its receiver
 * sends a credit update (fin_ack_owed) unless its own DisConn, which
 * follows, carries the acknowledgment, and the sender's DisConn is done
 * once a header's mseq_ack covers it (sdp_disconn_acked()).  The side
 * whose DisConn went last and is not acknowledged before the peer tears
 * down learns of that from rdma_cm's DISCONNECTED, a normal close since
 * the peer's DisConn is in; an orphan waits no longer than its fin timer.
 *
 * Locks: the socket lock, as everywhere; teardown_lock serialises
 * teardowns, which run without the socket lock around the calls into
 * rdma_cm and the drain (see sdp.h).  References: the connection's on the
 * socket (taken in sdp_conn_create()) is dropped at the end of the
 * teardown; the teardown work holds one of its own.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <net/tcp.h>

#include "sdp.h"

/* Nobody reads it now: drop what was received and not read before the
 * peer can see the reset (the teardown needs our lock), as tcp_close()
 * does, so that a sender's MSG_ZEROCOPY completions for it are queued by
 * then.  A read-ahead under way holds pointers into the queue with the
 * lock dropped: wait for it first (the abort's teardown ends its
 * transfers).  If a fatal signal cuts that short, the socket's
 * destruction drops the queue, after the teardown.
 */
static void sdp_close_unread(struct sdp_sock *ssk)
{
	if (sdp_conn_quiesce(ssk))
		return;
	ssk->tp->rx_purge(ssk);
	WRITE_ONCE(ssk->copied_seq, ssk->rcv_nxt);
}

/* Under the socket lock: what close() does to the connection. */
static void sdp_close_conn(struct sdp_sock *ssk)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = &ssk->sk;
	long timeo;

	/* no byte of a region of ours moves once close() has returned (the
	 * connection's say, not SDP_REGIONS's: set again since, it may lie)
	 */
	if (ssk->conn->regions)
		sdp_region_close(ssk);
	switch (sk->sk_state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECV:
		sdp_conn_abort(ssk, 0, false);
		break;
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		/* unread data or SO_LINGER {1, 0}: reset, as TCP does */
		if (ssk->rcv_nxt != ssk->copied_seq ||
		    (sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime)) {
			sdp_conn_abort(ssk, 0, true);
			sdp_close_unread(ssk);
			break;
		}
		sdp_shutdown_send(ssk);
		if (!sock_flag(sk, SOCK_LINGER) || (current->flags & PF_EXITING))
			break;
		/* SO_LINGER: wait until the peer has all, or the time is up */
		timeo = sk->sk_lingertime;
		add_wait_queue(sk_sleep(sk), &wait);
		while (timeo && !signal_pending(current) &&
		       !test_bit(SDP_F_DISCONN_DONE, &ssk->flags) &&
		       sdp_conn_usable(ssk))
			sk_wait_event(sk, &timeo,
				      test_bit(SDP_F_DISCONN_DONE, &ssk->flags) ||
				      !sdp_conn_usable(ssk), &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
		break;
	}
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
}

/**
 * sdp_sk_orphan_put - close a socket on behalf of its owner and drop the
 *		       owner's reference
 * @sk: the socket, not locked
 * @in_handler: called from the rdma_cm handler of the socket's own id
 *
 * Return: in the handler, 1 if rdma_cm must destroy the id; else 0.
 */
int sdp_sk_orphan_put(struct sock *sk, bool in_handler)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct rdma_cm_id *id = NULL;
	int ret = 0;

	lock_sock(sk);
	sdp_close_conn(ssk);
	sock_orphan(sk);
	if (!test_bit(SDP_F_CONN, &ssk->flags)) {
		id = ssk->cm_id;
		ssk->cm_id = NULL;
	} else {
		sdp_fin_timer_arm(ssk);
	}
	release_sock(sk);

	if (id && in_handler)
		ret = 1;
	else if (id)
		rdma_destroy_id(id);	/* not under the lock: see sdp.h */
	sock_put(sk);
	return ret;
}

/* Queue the DisConn after the data already queued: SHUT_WR or close. */
void sdp_shutdown_send(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	if (!sdp_conn_usable(ssk) ||
	    test_bit(SDP_F_DISCONN_PEND, &ssk->flags) ||
	    test_bit(SDP_F_DISCONN_SENT, &ssk->flags))
		return;
	__set_bit(SDP_F_DISCONN_PEND, &ssk->flags);
	if (sk->sk_state == TCP_ESTABLISHED)
		sdp_set_state(sk, TCP_FIN_WAIT1);
	else if (sk->sk_state == TCP_CLOSE_WAIT)
		sdp_set_state(sk, TCP_LAST_ACK);
	ssk->tp->flush(ssk, false);
}

/**
 * sdp_close_if_done - end the connection once nothing is left to move
 * @ssk: the socket, locked
 *
 * Both DisConns are through, but bytes of the stream may still wait in
 * SrcAvails, ours or the peer's, to be read by RDMA: the connection (its
 * QP and keys) stays until they are, as TCP delivers every byte sent
 * before its FIN.  A reader that never reads them closes its socket,
 * which resets the connection; the sender's side is bounded by its fin
 * timer once closed.
 */
void sdp_close_if_done(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	sdp_assert_locked(ssk);

	if (!test_bit(SDP_F_DISCONN_DONE, &ssk->flags) ||
	    !test_bit(SDP_F_DISCONN_RCVD, &ssk->flags) ||
	    ssk->zc_src_count || ssk->conn->zc_rx_count ||
	    sk->sk_state == TCP_CLOSE)
		return;
	sdp_set_state(sk, TCP_CLOSE);
	sdp_conn_queue_teardown(ssk);
	sk->sk_state_change(sk);
}

/* Our DisConn reached the peer. */
void sdp_disconn_done(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	__set_bit(SDP_F_DISCONN_DONE, &ssk->flags);
	if (sk->sk_state == TCP_FIN_WAIT1)
		sdp_set_state(sk, TCP_FIN_WAIT2);
	sk->sk_state_change(sk);
	sdp_close_if_done(ssk);
}

/* iWARP: a header arrived; does its mseq_ack cover our DisConn? */
void sdp_disconn_acked(struct sdp_sock *ssk)
{
	if (test_bit(SDP_F_DISCONN_SENT, &ssk->flags) &&
	    !test_bit(SDP_F_DISCONN_DONE, &ssk->flags) &&
	    (s32)(ssk->conn->remote_ack - ssk->conn->fin_mseq) >= 0)
		sdp_disconn_done(ssk);
}

/**
 * sdp_conn_teardown - disconnect and free the verbs resources
 * @ssk: the socket; the caller holds a reference and not the socket lock,
 *	 and is not a completion callback
 *
 * Idempotent.  The transport releases what the connection holds
 * (->teardown); the socket is left in TCP_CLOSE with the buffers' memory
 * (and any unread data) in place, and the connection's reference dropped.
 */
void sdp_conn_teardown(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	int timer_refs;

	mutex_lock(&ssk->teardown_lock);
	lock_sock(sk);
	if (!test_bit(SDP_F_CONN, &ssk->flags)) {
		release_sock(sk);
		mutex_unlock(&ssk->teardown_lock);
		return;
	}
	__set_bit(SDP_F_TEARDOWN, &ssk->flags);
	release_sock(sk);

	ssk->tp->teardown(ssk);		/* returns with the lock held */
	__clear_bit(SDP_F_CONN, &ssk->flags);

	/* Gone without a DisConn or an Abort from either side: a reset. */
	if (sk->sk_state != TCP_CLOSE &&
	    !test_bit(SDP_F_DISCONN_RCVD, &ssk->flags) &&
	    !test_bit(SDP_F_RESET, &ssk->flags)) {
		__set_bit(SDP_F_RESET, &ssk->flags);
		WRITE_ONCE(sk->sk_err, sdp_reset_errno(sk));
		SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_ABORTED);
		sk_error_report(sk);
	} else if (!test_bit(SDP_F_RESET, &ssk->flags)) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_CLOSED);
	}
	/* Closed already (both DisConns through, an abort, a disconnect
	 * by connect(AF_UNSPEC)): the shutdown state is as that left it.
	 */
	if (sk->sk_state != TCP_CLOSE) {
		sdp_set_state(sk, TCP_CLOSE);
		WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	}
	timer_refs = sdp_timers_cancel(ssk);
	sk->sk_state_change(sk);
	release_sock(sk);
	mutex_unlock(&ssk->teardown_lock);

	while (timer_refs--)
		sock_put(sk);	/* the cancelled timers' (sdp_timer.c) */
	sock_put(sk);		/* the connection's, from sdp_conn_create() */
}

static void sdp_teardown_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(work, struct sdp_sock,
					    teardown_work);
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id = NULL;

	sdp_conn_teardown(ssk);

	lock_sock(sk);
	if (sock_flag(sk, SOCK_DEAD)) {
		id = ssk->cm_id;
		ssk->cm_id = NULL;
	}
	release_sock(sk);
	if (id)
		rdma_destroy_id(id);
	sock_put(sk);	/* sdp_conn_queue_teardown()'s */
}

/**
 * sdp_conn_queue_teardown - tear the connection down from a work item
 * @ssk: the socket, locked (any context)
 *
 * Nothing is posted any more.  Once the teardown is done, an orphaned
 * socket's rdma_cm_id is destroyed too.
 */
void sdp_conn_queue_teardown(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	if (!test_bit(SDP_F_CONN, &ssk->flags) ||
	    __test_and_set_bit(SDP_F_TEARDOWN, &ssk->flags))
		return;
	sock_hold(&ssk->sk);	/* put by sdp_teardown_work() */
	if (!queue_work(sdp_wq, &ssk->teardown_work))
		sock_put(&ssk->sk);
}

/* The error a reset leaves, as tcp_reset(): after the peer's DisConn
 * only a write can fail, with EPIPE.
 */
int sdp_reset_errno(const struct sock *sk)
{
	return sk->sk_state == TCP_CLOSE_WAIT ? EPIPE : ECONNRESET;
}

/**
 * sdp_flushed - a work request was flushed
 * @ssk: the socket, locked
 *
 * Flushes are expected during a teardown, and while the connection is
 * being set up (rdma_cm moves the QP to error on a REJ, and the event
 * follows), and on iWARP once the peer closed after both DisConns.
 * Otherwise the QP failed under us, on an unsignaled work request say,
 * and the connection is gone.
 */
void sdp_flushed(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	if (test_bit(SDP_F_TEARDOWN, &ssk->flags) ||
	    !test_bit(SDP_F_WAS_CONNECTED, &ssk->flags))
		return;
	/* iWARP: the peer tore down after both DisConns, so it had ours;
	 * siw flushes our QP as the TCP connection closes, before rdma_cm
	 * reports the disconnect
	 */
	if (ssk->conn->iwarp &&
	    test_bit(SDP_F_DISCONN_SENT, &ssk->flags) &&
	    test_bit(SDP_F_DISCONN_RCVD, &ssk->flags)) {
		if (!test_bit(SDP_F_DISCONN_DONE, &ssk->flags))
			sdp_disconn_done(ssk);
		if (ssk->sk.sk_state == TCP_CLOSE)
			return;
	}
	sdp_conn_abort(ssk, sdp_reset_errno(&ssk->sk), false);
}

/**
 * sdp_conn_abort - reset the connection
 * @ssk: the socket, locked (any context)
 * @err: the error the application will see, or 0 (a local abort)
 * @send_abort: tell the peer with an Abort message
 */
void sdp_conn_abort(struct sdp_sock *ssk, int err, bool send_abort)
{
	struct sock *sk = &ssk->sk;

	sdp_assert_locked(ssk);

	if (!test_bit(SDP_F_RESET, &ssk->flags) &&
	    sk->sk_state != TCP_CLOSE)
		SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_ABORTED);
	trace_sdp_abort(sk, err, send_abort && sdp_conn_usable(ssk));
	__set_bit(SDP_F_RESET, &ssk->flags);
	if (send_abort && sdp_conn_usable(ssk))
		ssk->tp->reset(ssk);
	if (err)	/* before the state: sdp_close's event reports it */
		WRITE_ONCE(sk->sk_err, err);
	sdp_set_state(sk, TCP_CLOSE);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	sdp_conn_queue_teardown(ssk);
	if (err)
		sk_error_report(sk);
	sk->sk_state_change(sk);
}

void sdp_close_init(struct sdp_sock *ssk)
{
	mutex_init(&ssk->teardown_lock);
	INIT_WORK(&ssk->teardown_work, sdp_teardown_work);
}
