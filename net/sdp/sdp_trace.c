// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the tracepoints' bodies (sdp_trace.h) and the state changes
 * they report.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sock_diag.h>

#include "sdp.h"

/* The socket's cookie, as sock_diag and sdpstat -e show it. */
static u64 sdp_trace_cookie(const struct sock *sk)
{
	u32 c[2];

	sock_diag_save_cookie((struct sock *)sk, c);
	return c[0] | (u64)c[1] << 32;
}

/* sin_port and sin6_port are at the same place */
static u16 sdp_trace_port(const struct sock *sk, bool peer)
{
	const struct sdp_sock *ssk = sdp_sk(sk);
	const struct sockaddr_in *sin = (const struct sockaddr_in *)
					(peer ? &ssk->peer : &ssk->local);

	return ntohs(sin->sin_port);
}

#define CREATE_TRACE_POINTS
#include "sdp_trace.h"

/* Why a connection reaches TCP_CLOSE from @old. */
static const char *sdp_close_reason(const struct sock *sk, int old)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	switch (old) {
	case TCP_LISTEN:
		return "unlisten";
	case TCP_SYN_SENT:
		return "connect-failed";
	case TCP_SYN_RECV:
		return "embryo-failed";
	}
	if (test_bit(SDP_F_RESET, &ssk->flags))
		return "reset";
	if (test_bit(SDP_F_DISCONN_RCVD, &ssk->flags) &&
	    test_bit(SDP_F_DISCONN_DONE, &ssk->flags))
		return "disconn";
	return "teardown";
}

/* sdp_set_state()'s events, when one of them is on. */
void sdp_trace_state(struct sock *sk, int old, int new)
{
	if (old == new)
		return;
	trace_sdp_state(sk, old, new);
	if (new == TCP_ESTABLISHED &&
	    (old == TCP_SYN_SENT || old == TCP_SYN_RECV))
		trace_sdp_connect(sk, old == TCP_SYN_SENT, sdp_sk(sk)->tp->name);
	if (new == TCP_CLOSE)
		trace_sdp_close(sk, sdp_close_reason(sk, old),
				READ_ONCE(sk->sk_err));
}
