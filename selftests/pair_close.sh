#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Orderly close between the two VMs of a pair, many times at once: six
# rounds of 16 concurrent echo streams of 1 MiB.  Each client half-closes
# once it has sent its stream; the server half-closes and closes once it
# has read and echoed everything, so its DisConn goes last, behind the
# tail of the echo, while the client's credit updates are still coming
# in.  Every byte must arrive and every connection end as a close, not a
# reset, on both hosts.  Over Soft-iWARP a DisConn's send completion only
# says that the local TCP has it: a server that tore down then lost the
# echo's tail to a reset (Documentation/sdp.rst, "iWARP").
# Argument: "a" (server, on SDP_IP) or "b" (client, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
rounds=6 nconn=16
sdp_fresh || exit 1

closed0=$(sdp_stat ConnClosed)
for r in $(seq "$rounds"); do
	port=$((7800 + r))
	if [ "$role" = a ]; then
		out=$(timeout 300 sdp_stream server sdp "$SDP_IP" "$port" "$nconn" 2>&1)
		rc=$?
		check_eq "round $r: server, $nconn streams verified ($(tail -n 1 <<<"$out"))" 0 "$rc"
	else
		out=$(timeout 300 sdp_stream client sdp "$SDP_PEER_IP" "$port" \
		      "$nconn" $((1 << 20)) "$r" 2>&1)
		check_eq "round $r: client, $nconn echoes verified to their end ($out)" 0 "$?"
	fi
done
# the last teardowns may still be running
for _ in $(seq 100); do
	[ $(($(sdp_stat ConnClosed) - closed0)) -ge $((rounds * nconn)) ] && break
	sleep 0.1
done
check_eq "every connection closed in order" $((rounds * nconn)) \
	$(($(sdp_stat ConnClosed) - closed0))
check_eq "none reset" 0 "$(sdp_stat ConnAborted)"
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
