#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unmodified qperf runs its SDP tests (socket(27, ...), plain sockaddr_in
# and sockaddr_in6 addresses) against ib_sdp.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR

qperf -lp 19766 >/dev/null 2>&1 &
srv=$!
sleep 1
out=$(timeout 120 qperf -lp 19766 -t 2 "$addr" sdp_lat sdp_bw 2>&1)
echo "$out"
kill $srv 2>/dev/null
wait $srv 2>/dev/null
lat=$(echo "$out" | awk '/latency/ {print $3}')
bw=$(echo "$out" | awk '/bw *=/ {print $3}')
check "qperf sdp_lat measured a latency ($lat)" \
	bash -c "[ -n '$lat' ] && awk 'BEGIN { exit !($lat > 0) }'"
check "qperf sdp_bw measured a bandwidth ($bw)" \
	bash -c "[ -n '$bw' ] && awk 'BEGIN { exit !($bw > 0) }'"
check "the bytes went over SDP" test "$(sdp_rx_bytes)" -gt 1000000
sdp_check_clean
finish
