#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connection semantics on SDP are TCP's: sdp_conn runs the same cases on
# AF_INET and on AF_INET_SDP (refused, address in use, non-blocking
# connect, half-close, EOF, resets, names, poll masks) and every line a
# program can observe must match.  The one deliberate difference is listed
# below and in Documentation/sdp.rst ("Differences from TCP").
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
sdp_unload
sdp_load || exit 1

# case -> what SDP answers instead, and why
declare -A differs=(
	["reuseaddr listen 1"]="EADDRINUSE"	# rdma_cm: a listening port is unique in its port space
)

sdp_conn tcp "$addr" 7300 >/tmp/conn.tcp 2>&1
check_eq "TCP run completes" 0 "$?"
sdp_conn sdp "$addr" 7300 >/tmp/conn.sdp 2>&1
check_eq "SDP run completes" 0 "$?"

printf '%-28s %-26s %s\n' "case" "TCP" "SDP"
while IFS= read -r t && IFS= read -r s <&3; do
	name=$(echo "${t%%|*}" | sed 's/ *$//')
	tv=${t#*| }
	sv=${s#*| }
	printf '%-28s %-26s %s\n' "$name" "$tv" "$sv"
	if [ -n "${differs[$name]+x}" ]; then
		check_eq "$name: the documented difference" "${differs[$name]}" "$sv"
	else
		check_eq "$name: as TCP" "$tv" "$sv"
	fi
done </tmp/conn.tcp 3</tmp/conn.sdp
check_eq "as many cases on both" "$(wc -l </tmp/conn.tcp)" "$(wc -l </tmp/conn.sdp)"

# The answers themselves, so that TCP misbehaving cannot hide anything.
want() {
	check_eq "SDP $1" "$2" "$(sed -n "s/^$1 *| //p" /tmp/conn.sdp)"
}
want "refused" ECONNREFUSED
want "bind in use" EADDRINUSE
want "nb connect" EINPROGRESS
want "nb SO_ERROR" success
want "nb refused SO_ERROR" ECONNREFUSED
want "peer reads EOF" "0 bytes"
want "half-closed reads" "4 bytes"
want "read all then" "1048576 bytes, EOF"
want "linger0: peer read" ECONNRESET
want "unread close: peer read" ECONNRESET
# What TCP has no answer for.
sdp_conn sdp-only "$addr" 7350 >/tmp/conn.only 2>&1
cat /tmp/conn.only
only() {
	check_eq "SDP $1" "$2" "$(sed -n "s/^$1 *| //p" /tmp/conn.only)"
}
only "connect 127.0.0.1" ENODEV
check_eq "SDP_LAST_BIND_ERR after it" ENODEV \
	"$(sed -n 's/^  SDP_LAST_BIND_ERR *| //p' /tmp/conn.only | head -1)"
check_eq "SDP backlog 1: two connections wait for accept" "ok ok" \
	"$(sed -n 's/^backlog 1: connect 1-2 *| //p' /tmp/conn.only | paste -sd' ')"
only "backlog 1: connect 3" ECONNREFUSED
only "small buffers: send took" "$((5 * (32768 - 16))) bytes, then EAGAIN"
only "small buffers: peer got all" yes
only "corked: messages sent" 0
only "uncorked: messages sent" 1
only "peer has" "100 bytes"
check "TCP_NODELAY: one message per write while credits last" \
	test "$(sed -n 's/^nodelay: messages sent *| //p' /tmp/conn.only)" -ge 50

check "connections were refused and reset as counted" \
	test "$(sdp_stat ConnRefused)" -ge 3 -a "$(sdp_stat ConnAborted)" -ge 2
sdp_check_clean
finish
