/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp tracepoints, system "sdp": what explains a slow or dead
 * connection.  Each event names the socket by its cookie (as sdpstat -e
 * and sock_diag give it) and its ports, so that perf trace, bpftrace or
 * tracefs can follow one connection:
 *
 *   sdp_state		a state change (TCP's names)
 *   sdp_connect	a connection established: active or passive, transport
 *   sdp_close		the connection ends, and why
 *   sdp_abort		an abort: the errno, and whether an Abort goes out
 *   sdp_proto_error	a message or key use that failed a check, which one
 *   sdp_credit_stall	data waits: the peer gave no credit
 *   sdp_zcopy		ZCopy start, finish, cancel and fallback
 *
 * Documentation/sdp.rst, "Tracing", has a worked example.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sdp

#if !defined(_SDP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SDP_TRACE_H

#include <linux/tracepoint.h>
#include <net/sock.h>

#include "sdp_compat.h"

#define sdp_show_state(s)					\
	__print_symbolic(s,					\
		{ TCP_ESTABLISHED, "ESTABLISHED" },		\
		{ TCP_SYN_SENT, "SYN_SENT" },			\
		{ TCP_SYN_RECV, "SYN_RECV" },			\
		{ TCP_FIN_WAIT1, "FIN_WAIT1" },			\
		{ TCP_FIN_WAIT2, "FIN_WAIT2" },			\
		{ TCP_TIME_WAIT, "TIME_WAIT" },			\
		{ TCP_CLOSE, "CLOSE" },				\
		{ TCP_CLOSE_WAIT, "CLOSE_WAIT" },		\
		{ TCP_LAST_ACK, "LAST_ACK" },			\
		{ TCP_LISTEN, "LISTEN" },			\
		{ TCP_CLOSING, "CLOSING" })

/* Every event has the socket's cookie and ports first. */
#define SDP_TRACE_SK_ASSIGN(sk)				\
	do {						\
		__entry->cookie = sdp_trace_cookie(sk);	\
		__entry->sport = sdp_trace_port(sk, false);	\
		__entry->dport = sdp_trace_port(sk, true);	\
	} while (0)

#define SDP_TRACE_SK_FMT	"cookie=%llu sport=%u dport=%u"

TRACE_EVENT(sdp_state,
	TP_PROTO(const struct sock *sk, int oldstate, int newstate),
	TP_ARGS(sk, oldstate, newstate),
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(u16, sport)
		__field(u16, dport)
		__field(int, oldstate)
		__field(int, newstate)
	),
	TP_fast_assign(
		SDP_TRACE_SK_ASSIGN(sk);
		__entry->oldstate = oldstate;
		__entry->newstate = newstate;
	),
	TP_printk(SDP_TRACE_SK_FMT " %s -> %s", __entry->cookie, __entry->sport,
		  __entry->dport,
		  sdp_show_state(__entry->oldstate),
		  sdp_show_state(__entry->newstate))
);

TRACE_EVENT(sdp_connect,
	TP_PROTO(const struct sock *sk, bool active, const char *transport),
	TP_ARGS(sk, active, transport),
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(u16, sport)
		__field(u16, dport)
		__field(bool, active)
		__string(transport, transport)
	),
	TP_fast_assign(
		SDP_TRACE_SK_ASSIGN(sk);
		__entry->active = active;
		sdp_assign_str(transport, transport);
	),
	TP_printk(SDP_TRACE_SK_FMT " %s transport=%s", __entry->cookie, __entry->sport,
		  __entry->dport,
		  __entry->active ? "active" : "passive", __get_str(transport))
);

TRACE_EVENT(sdp_close,
	TP_PROTO(const struct sock *sk, const char *reason, int err),
	TP_ARGS(sk, reason, err),
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(u16, sport)
		__field(u16, dport)
		__string(reason, reason)
		__field(int, err)
	),
	TP_fast_assign(
		SDP_TRACE_SK_ASSIGN(sk);
		sdp_assign_str(reason, reason);
		__entry->err = err;
	),
	TP_printk(SDP_TRACE_SK_FMT " reason=%s err=%d", __entry->cookie, __entry->sport,
		  __entry->dport,
		  __get_str(reason), __entry->err)
);

TRACE_EVENT(sdp_abort,
	TP_PROTO(const struct sock *sk, int err, bool send_abort),
	TP_ARGS(sk, err, send_abort),
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(u16, sport)
		__field(u16, dport)
		__field(int, err)
		__field(bool, send_abort)
	),
	TP_fast_assign(
		SDP_TRACE_SK_ASSIGN(sk);
		__entry->err = err;
		__entry->send_abort = send_abort;
	),
	TP_printk(SDP_TRACE_SK_FMT " err=%d%s", __entry->cookie, __entry->sport,
		  __entry->dport,
		  __entry->err, __entry->send_abort ? " abort-sent" : "")
);

TRACE_EVENT(sdp_credit_stall,
	TP_PROTO(const struct sock *sk, u32 queued, u32 inflight),
	TP_ARGS(sk, queued, inflight),
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(u16, sport)
		__field(u16, dport)
		__field(u32, queued)
		__field(u32, inflight)
	),
	TP_fast_assign(
		SDP_TRACE_SK_ASSIGN(sk);
		__entry->queued = queued;
		__entry->inflight = inflight;
	),
	TP_printk(SDP_TRACE_SK_FMT " queued=%u inflight=%u",
		  __entry->cookie, __entry->sport,
		  __entry->dport, __entry->queued, __entry->inflight)
);

/* A named step and a number: a ZCopy step and its bytes, or the check
 * a peer failed and the value it sent.
 */
DECLARE_EVENT_CLASS(sdp_what_val,
	TP_PROTO(const struct sock *sk, const char *what, u32 val),
	TP_ARGS(sk, what, val),
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(u16, sport)
		__field(u16, dport)
		__string(what, what)
		__field(u32, val)
	),
	TP_fast_assign(
		SDP_TRACE_SK_ASSIGN(sk);
		sdp_assign_str(what, what);
		__entry->val = val;
	),
	TP_printk(SDP_TRACE_SK_FMT " %s len=%u", __entry->cookie,
		  __entry->sport, __entry->dport, __get_str(what),
		  __entry->val)
);

DEFINE_EVENT_PRINT(sdp_what_val, sdp_proto_error,
	TP_PROTO(const struct sock *sk, const char *what, u32 val),
	TP_ARGS(sk, what, val),
	TP_printk(SDP_TRACE_SK_FMT " check=\"%s\" val=%u", __entry->cookie,
		  __entry->sport, __entry->dport, __get_str(what),
		  __entry->val)
);

DEFINE_EVENT(sdp_what_val, sdp_zcopy,
	TP_PROTO(const struct sock *sk, const char *what, u32 val),
	TP_ARGS(sk, what, val)
);

DEFINE_EVENT_PRINT(sdp_what_val, sdp_wc_error,
	TP_PROTO(const struct sock *sk, const char *what, u32 val),
	TP_ARGS(sk, what, val),
	TP_printk(SDP_TRACE_SK_FMT " wr=%s status=%u", __entry->cookie,
		  __entry->sport, __entry->dport, __get_str(what),
		  __entry->val)
);

#endif /* _SDP_TRACE_H */

/* out of tree: define_trace.h includes this file again from here */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sdp_trace
#include <trace/define_trace.h>
