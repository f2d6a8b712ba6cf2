/* SPDX-License-Identifier: GPL-2.0 */
/* The trace event of the probe assign_str.c. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sdp_probe

#if !defined(_SDP_PROBE_ASSIGN_STR_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SDP_PROBE_ASSIGN_STR_H

#include <linux/tracepoint.h>

TRACE_EVENT(sdp_probe_str,
	TP_PROTO(const char *what),
	TP_ARGS(what),
	TP_STRUCT__entry(__string(what, what)),
	TP_fast_assign(__assign_str(what);),
	TP_printk("%s", __get_str(what))
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE assign_str
#include <trace/define_trace.h>
