#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A live connection on a slow wire, with keepalive on (idle 1 s, 1 s
# apart, TCP_USER_TIMEOUT 10 s): both VMs shape their egress to 1 Mbit/s,
# and a 1 MiB echo stream runs over TCP, then over SDP, whose large
# writes go by ZCopy: one RDMA READ then takes longer than the keepalive
# idle time, and nothing else arrives meanwhile.  Both must end verified,
# as a live TCP peer is never given up on.  Over Soft-iWARP a
# zero-length READ (the keepalive probe) that found the peer busy
# answering our READ came back with the length of the peer's last send,
# and siw killed the connection (Documentation/sdp.rst, "iWARP").
# Argument: "a" (server, on SDP_IP) or "b" (client, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
sdp_fresh || exit 1

export SDP_STREAM_TIMEOUT=10
tc qdisc add dev eth0 root tbf rate 1mbit burst 16kb latency 2s
check_eq "egress shaped to 1 Mbit/s" 0 "$?"
for fam in tcp sdp; do
	port=7900
	[ "$fam" = sdp ] && port=7901
	if [ "$role" = a ]; then
		out=$(timeout 300 sdp_stream server "$fam" "$SDP_IP" "$port" 1 2>&1)
		rc=$?
		check_eq "$fam: server, the stream verified ($(tail -n 1 <<<"$out"))" 0 "$rc"
	else
		out=$(timeout 300 sdp_stream client "$fam" "$SDP_PEER_IP" "$port" 1 \
		      $((1 << 20)) 5 2>&1)
		check_eq "$fam: client, the echo verified ($out)" 0 "$?"
	fi
done
tc qdisc del dev eth0 root
check "SDP read by RDMA READ" test "$(sdp_stat ZcopyReads)" -gt 0
check_eq "no completion error" 0 "$(sdp_stat CqErrors)"
check_eq "none reset" 0 "$(sdp_stat ConnAborted)"
sdp_check_clean
finish
