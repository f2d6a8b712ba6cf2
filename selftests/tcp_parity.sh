#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The differential suite: sdp_parity runs every case on TCP and on SDP
# over the same addresses and prints the table case/step x (TCP, SDP).
# Every step must be the same, or a documented difference
# (Documentation/sdp.rst, "Differences from TCP").
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
addr6=$(rxe-up -6) || exit 1
sdp_unload
sdp_load || exit 1

SDP_PARITY_TSV=/tmp/parity.tsv sdp_parity "$addr" "$addr6" 9000 "$@"
check_eq "every step as TCP, or a documented difference" 0 "$?"

# SDP's own answers too, so that TCP misbehaving cannot hide anything
want() {
	check_eq "SDP $1" "$2" "$(awk -F'\t' -v s="$1" '$1 == s {print $3}' /tmp/parity.tsv)"
}
if [ $# -eq 0 ]; then
	want refused/connect ECONNREFUSED
	want unreachable/connect EHOSTUNREACH
	want "bind/bind in use" EADDRINUSE
	want nonblock_connect/connect EINPROGRESS
	want "backlog_full/3 once there is room" OUT
	want "shutdown/peer reads EOF" 0:
	want "linger/{1,0}: peer read" ECONNRESET
	want "oob/recv OOB" 1:d
	want sigpipe/SIGPIPE 1
	want "epoll_many/requests seen by epoll" 1000
	check "urgent data counted" test "$(sdp_stat RxUrgent)" -gt 0
fi
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
