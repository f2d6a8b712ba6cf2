// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: what the per-connection timers do when they fire.
 *
 * The timers themselves (sdp_timer.c: arming, cancelling, the SDP_F_*
 * bits and the reference each armed timer holds) are what the rest of the
 * socket core calls; the work here is what runs on sdp_wq when one fires,
 * and it calls up into close and listen (an orphan's FIN_WAIT2 timeout, an
 * embryo child's expiry, keepalive's and the stall watchdog's ETIMEDOUT).
 * Each work takes the socket lock, claims its bit (sdp_timer_claim()),
 * and drops the timer's reference on the socket last.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/tcp.h>

#include "sdp.h"

static void sdp_fin_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, fin_work);
	struct sock *sk = &ssk->sk;
	bool embryo = false;

	if (sdp_timer_claim(ssk, SDP_F_FIN_TIMER)) {
		embryo = test_bit(SDP_F_EMBRYO, &ssk->flags);
		if (!embryo && sock_flag(sk, SOCK_DEAD) &&
		    sdp_conn_usable(ssk)) {
			SDP_INC_STATS(sock_net(sk), SDP_MIB_FIN_TIMEOUTS);
			sdp_conn_abort(ssk, ETIMEDOUT, true);
		}
	}
	release_sock(sk);
	if (embryo)
		sdp_embryo_expire(sk);	/* takes the listener's lock */
	sock_put(sk);	/* sdp_timer_arm()'s */
}

static void sdp_cork_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, cork_work);
	struct sock *sk = &ssk->sk;

	if (sdp_timer_claim(ssk, SDP_F_CORK_TIMER))
		ssk->tp->flush(ssk, true);
	release_sock(sk);
	sock_put(sk);	/* sdp_timer_arm()'s */
}

/* As tcp_keepalive_timer(), with the peer's silence measured from the
 * last message or probe answer received; TCP_USER_TIMEOUT, when set,
 * bounds that silence instead of the probe count.
 */
static void sdp_ka_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, ka_work);
	struct sock *sk = &ssk->sk;
	unsigned long idle, elapsed, next;

	if (!sdp_timer_claim(ssk, SDP_F_KA_TIMER) || !sdp_ka_active(ssk))
		goto out;

	idle = sdp_ka_idle(ssk);
	elapsed = jiffies - ssk->conn->st.last_recv;
	if (ssk->conn->tx_inflight) {
		/* the transport's own retries watch the peer meanwhile */
		next = idle;
	} else if (elapsed < idle) {
		next = idle - elapsed;
	} else if (ssk->user_timeout ?
		   ssk->conn->ka_probes &&
		   elapsed >= msecs_to_jiffies(ssk->user_timeout) :
		   ssk->conn->ka_probes >= (ssk->keepcnt ? : TCP_KEEPALIVE_PROBES)) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_KEEPALIVE_TIMEOUTS);
		sdp_conn_abort(ssk, ETIMEDOUT, true);
		goto out;
	} else {
		int answered = ssk->tp->probe(ssk);

		if (answered < 0) {
			sdp_conn_abort(ssk, ECONNRESET, false);
			goto out;
		}
		if (!answered)
			ssk->conn->ka_probes++;
		next = (ssk->keepintvl ? : TCP_KEEPALIVE_INTVL / HZ) * HZ;
	}
	sdp_timer_arm(ssk, SDP_F_KA_TIMER, &ssk->ka_work, next);
out:
	release_sock(sk);
	sock_put(sk);	/* sdp_timer_arm()'s */
}

/* Waiting on the peer's window: data queued without a credit, or a
 * SrcAvail of ours it has not read.
 */
static bool sdp_win_stalled(const struct sdp_sock *ssk)
{
	return (!list_empty(&ssk->conn->tx_queue) && sdp_tx_credits(ssk->conn) < 1) ||
	       ssk->zc_src_count;
}

static void sdp_stall_timeout(struct sdp_sock *ssk, const char *what)
{
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_STALL_TIMEOUTS);
	net_dbg_ratelimited("sk %p: %s, connection timed out\n", ssk,
			    what);
	sdp_conn_abort(ssk, ETIMEDOUT, false);
}

/**
 * sdp_stall_check - end a connection its peer no longer serves
 * @ssk: the socket, locked, with a usable connection
 *
 * As TCP's retransmission and zero-window probe timers: work requests on
 * the send queue that see no completion for TCP_USER_TIMEOUT (if set),
 * else for as long as TCP would retransmit (sdp_retries2_timeout()), end
 * the connection with ETIMEDOUT.  That is how a peer that stops reposting
 * its receives is caught (the RC transport retries RNR for ever), and
 * with it every RDMA op queued behind its messages.  With
 * TCP_USER_TIMEOUT, a peer that gives no credit and reads no SrcAvail for
 * that long ends it too, as TCP ends a zero window; without, a live peer
 * may keep its window shut for ever, as with TCP.
 *
 * Return: jiffies until the next check, or 0 for none (idle, or ended).
 */
static unsigned long sdp_stall_check(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	unsigned long now = jiffies, next = 0, limit, age;
	u32 ut = ssk->user_timeout;

	sdp_assert_locked(ssk);

	if (conn->tx_wrs) {
		limit = ut ? msecs_to_jiffies(ut) :
			sdp_retries2_timeout(sock_net(&ssk->sk));
		age = now - conn->tx_wr_stamp;
		if (age >= limit) {
			sdp_stall_timeout(ssk, "send queue stalled");
			return 0;
		}
		next = limit - age;
	}
	if (!sdp_win_stalled(ssk)) {
		__clear_bit(SDP_F_WIN_STALL, &ssk->flags);
	} else if (ut) {
		if (!__test_and_set_bit(SDP_F_WIN_STALL, &ssk->flags))
			conn->tx_win_stamp = now;
		limit = msecs_to_jiffies(ut);
		age = now - conn->tx_win_stamp;
		if (age >= limit) {
			sdp_stall_timeout(ssk, "no window from the peer");
			return 0;
		}
		next = next ? min(next, limit - age) : limit - age;
	}
	return next;
}

static void sdp_tx_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, tx_work);
	struct sock *sk = &ssk->sk;
	unsigned long next;

	if (sdp_timer_claim(ssk, SDP_F_TX_TIMER) && sdp_conn_usable(ssk)) {
		next = sdp_stall_check(ssk);
		if (next)
			sdp_timer_arm(ssk, SDP_F_TX_TIMER, &ssk->tx_work, next);
	}
	release_sock(sk);
	sock_put(sk);	/* sdp_timer_arm()'s */
}

void sdp_timers_init(struct sdp_sock *ssk)
{
	INIT_DELAYED_WORK(&ssk->fin_work, sdp_fin_work);
	INIT_DELAYED_WORK(&ssk->cork_work, sdp_cork_work);
	INIT_DELAYED_WORK(&ssk->ka_work, sdp_ka_work);
	INIT_DELAYED_WORK(&ssk->tx_work, sdp_tx_work);
}
