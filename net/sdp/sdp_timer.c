// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the per-connection timers, as delayed work on sdp_wq; what each
 * does when it fires is in sdp_timer_work.c.
 *
 *  fin_work    an orphaned socket still waiting for its peer's DisConn
 *              after SDP_FIN_TIMEOUT is reset (TCP's FIN_WAIT2 timeout);
 *              a child whose handshake is not complete SDP_EMBRYO_TIMEOUT
 *              after its REP is dropped (sdp_embryo_expire()).
 *  cork_work   data held back by TCP_CORK or MSG_MORE goes out after
 *              SDP_CORK_TIMEOUT, as TCP's corked data does; also the
 *              second look of an iWARP passive side still waiting for
 *              the initiator's first message (sdp_tx_init_wait()).
 *  zc_work     ZCopy read-ahead (sdp_zc_read.c).
 *  tx_work     the stall watchdog: see sdp_stall_check().
 *  mem_work    buffer sizes and idle memory (sdp_mem.c).
 *  ka_work     keepalive (SO_KEEPALIVE, TCP_KEEPIDLE/INTVL/CNT): once the
 *              peer has been silent for the idle time, a zero-length RDMA
 *              WRITE is posted every interval.  It needs no credit and
 *              the peer's software never sees it, but the peer's RDMA
 *              device must acknowledge it; after KEEPCNT intervals
 *              without an answer (or once the transport gives up on the
 *              probe) the connection fails with ETIMEDOUT, as TCP's does.
 *
 * Each timer is armed under the socket lock by setting its SDP_F_* bit
 * and taking a reference on the socket for the queued work.  The work
 * clears the bit under the lock; whoever clears the bit drops that
 * reference: the work when it runs, or sdp_timer_cancel() when it
 * cancels a work not yet started.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/tcp.h>

#include "sdp.h"

#define SDP_CORK_TIMEOUT	(HZ / 5)	/* TCP's 200 ms cork ceiling */

/* Under the socket lock: queue @w after @delay unless already armed. */
void sdp_timer_arm(struct sdp_sock *ssk, int bit,
		   struct delayed_work *w, unsigned long delay)
{
	if (__test_and_set_bit(bit, &ssk->flags))
		return;
	sock_hold(&ssk->sk);	/* the work's; put when the bit is cleared */
	if (!queue_delayed_work(sdp_wq, w, delay)) {
		__clear_bit(bit, &ssk->flags);
		sock_put(&ssk->sk);
	}
}

/* Under the socket lock: make an armed timer fire after @delay instead.
 * A work already running re-arms itself with the current settings.
 */
void sdp_timer_reset(struct sdp_sock *ssk, int bit,
		     struct delayed_work *w, unsigned long delay)
{
	if (test_bit(bit, &ssk->flags)) {
		if (cancel_delayed_work(w))
			queue_delayed_work(sdp_wq, w, delay);	/* keeps its ref */
		return;
	}
	sdp_timer_arm(ssk, bit, w, delay);
}

/**
 * sdp_timer_cancel - stop a timer that has not started yet
 * @ssk: the socket, locked
 * @bit: the timer's SDP_F_* bit
 * @w: its work
 *
 * Return: 1 if the caller must drop the work's reference (after
 * releasing the lock), else 0.
 */
static int sdp_timer_cancel(struct sdp_sock *ssk, int bit,
			    struct delayed_work *w)
{
	sdp_assert_locked(ssk);
	if (test_bit(bit, &ssk->flags) && cancel_delayed_work(w)) {
		__clear_bit(bit, &ssk->flags);
		return 1;
	}
	return 0;
}

/* In a timer's work: lock the socket and claim the timer's bit.  False if
 * it was cancelled meanwhile (the reference is still the work's to drop).
 */
bool sdp_timer_claim(struct sdp_sock *ssk, int bit)
{
	lock_sock(&ssk->sk);
	return __test_and_clear_bit(bit, &ssk->flags);
}

/**
 * sdp_timers_cancel - stop every timer of a connection being torn down
 * @ssk: the socket, locked
 *
 * Return: the number of references the caller must drop after releasing
 * the lock.
 */
int sdp_timers_cancel(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	return sdp_timer_cancel(ssk, SDP_F_FIN_TIMER, &ssk->fin_work) +
	       sdp_timer_cancel(ssk, SDP_F_CORK_TIMER, &ssk->cork_work) +
	       sdp_timer_cancel(ssk, SDP_F_KA_TIMER, &ssk->ka_work) +
	       sdp_timer_cancel(ssk, SDP_F_ZC_TIMER, &ssk->zc_work) +
	       sdp_timer_cancel(ssk, SDP_F_TX_TIMER, &ssk->tx_work) +
	       sdp_timer_cancel(ssk, SDP_F_MEM_TIMER, &ssk->mem_work);
}

/**
 * sdp_embryo_timer_stop - the handshake completed in time
 * @ssk: the child, locked
 *
 * Return: 1 if the caller must drop the timer's reference (after
 * releasing the lock), else 0.
 */
int sdp_embryo_timer_stop(struct sdp_sock *ssk)
{
	return sdp_timer_cancel(ssk, SDP_F_FIN_TIMER, &ssk->fin_work);
}

/* Under the socket lock: bound the life of an orphaned connection. */
void sdp_fin_timer_arm(struct sdp_sock *ssk)
{
	if (sdp_conn_usable(ssk))
		sdp_timer_arm(ssk, SDP_F_FIN_TIMER, &ssk->fin_work,
			      SDP_FIN_TIMEOUT);
}

/* Under the socket lock: corked data was held back; push it out later. */
void sdp_cork_timer_arm(struct sdp_sock *ssk)
{
	sdp_timer_arm(ssk, SDP_F_CORK_TIMER, &ssk->cork_work,
		      SDP_CORK_TIMEOUT);
}

/* Keepalive's idle time (TCP_KEEPIDLE, else the sysctl). */
unsigned long sdp_ka_idle(const struct sdp_sock *ssk)
{
	return (ssk->keepidle ? : READ_ONCE(sdp_keepalive_time)) * HZ;
}

/* Does keepalive watch this connection? */
bool sdp_ka_active(const struct sdp_sock *ssk)
{
	return sock_flag(&ssk->sk, SOCK_KEEPOPEN) && sdp_conn_usable(ssk) &&
	       test_bit(SDP_F_WAS_CONNECTED, &ssk->flags);
}

/**
 * sdp_ka_reset - (re)start or stop keepalive after a change
 * @ssk: the socket, locked
 * @on: whether keepalive is on (or will be)
 *
 * Called when the connection is established, on SO_KEEPALIVE (before the
 * socket core sets SOCK_KEEPOPEN: @on says what it will be) and when
 * TCP_KEEPIDLE changes.
 */
void sdp_ka_reset(struct sdp_sock *ssk, bool on)
{
	unsigned long idle = sdp_ka_idle(ssk);
	unsigned long elapsed = jiffies - ssk->conn->st.last_recv;
	int put;

	sdp_assert_locked(ssk);

	if (!on || !sdp_conn_usable(ssk) ||
	    !test_bit(SDP_F_WAS_CONNECTED, &ssk->flags)) {
		put = sdp_timer_cancel(ssk, SDP_F_KA_TIMER, &ssk->ka_work);
		if (put)
			sock_put(&ssk->sk);	/* never the last: the caller's */
		return;
	}
	sdp_timer_reset(ssk, SDP_F_KA_TIMER, &ssk->ka_work,
			elapsed < idle ? idle - elapsed : 0);
}

/* proto.keepalive: SO_KEEPALIVE, under the socket lock. */
void sdp_keepalive(struct sock *sk, int val)
{
	sdp_ka_reset(sdp_sk(sk), val);
}

/* ---- the stall watchdog ------------------------------------------------ */

/* How long TCP retransmits before it gives up, tcp_retries2 times from
 * TCP_RTO_MIN (tcp_model_timeout()): about 15 minutes by default.
 */
unsigned long sdp_retries2_timeout(const struct net *net)
{
	unsigned int boundary = READ_ONCE(net->ipv4.sysctl_tcp_retries2);
	unsigned int thresh = ilog2(TCP_RTO_MAX / TCP_RTO_MIN);

	if (boundary <= thresh)
		return ((2UL << boundary) - 1) * TCP_RTO_MIN;
	return ((2UL << thresh) - 1) * TCP_RTO_MIN +
	       (boundary - thresh) * TCP_RTO_MAX;
}

/**
 * sdp_stall_arm - make sure the stall watchdog is running
 * @ssk: the socket, locked
 *
 * When something starts to wait on the peer: a send work request, data
 * without a credit, a SrcAvail.  A watchdog already armed is left as it
 * is (it checks again when it fires); it stops by itself once nothing
 * waits, so a busy connection arms it about once per period.
 */
void sdp_stall_arm(struct sdp_sock *ssk)
{
	unsigned long delay = ssk->user_timeout ?
			      msecs_to_jiffies(ssk->user_timeout) :
			      sdp_retries2_timeout(sock_net(&ssk->sk));

	sdp_assert_locked(ssk);

	if (sdp_conn_usable(ssk))
		sdp_timer_arm(ssk, SDP_F_TX_TIMER, &ssk->tx_work, delay);
}

/**
 * sdp_stall_recheck - TCP_USER_TIMEOUT changed: check again now
 * @ssk: the socket, locked
 */
void sdp_stall_recheck(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	if (sdp_conn_usable(ssk))
		sdp_timer_reset(ssk, SDP_F_TX_TIMER, &ssk->tx_work, 0);
}

/**
 * sdp_win_wait - the peer's window is what we wait on now
 * @ssk: the socket, locked
 *
 * Starts the window's clock, unless it runs already; sdp_win_progress()
 * restarts it whenever the peer gives a credit or reads.
 */
void sdp_win_wait(struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	if (__test_and_set_bit(SDP_F_WIN_STALL, &ssk->flags))
		return;
	ssk->conn->tx_win_stamp = jiffies;
	if (ssk->user_timeout)
		sdp_stall_arm(ssk);
}
