#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two test bed VMs joined by the virtual wire: each has its own rxe0 on
# eth0, and rping (rdma_cm + RDMA READ/WRITE) runs between them.
# Argument: "a" (server, on SDP_IP) or "b" (client, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
addr=$(rxe-up)
check_eq "rxe0 on eth0 has our wire address" "$SDP_IP" "$addr"

count=20
if [ "$role" = a ]; then
	out=$(timeout 180 rping -s -v -C $count -a "$SDP_IP" 2>&1)
	rc=$?
else
	# Until a's server is up: retry.
	deadline=$((SECONDS + 120))
	while :; do
		out=$(timeout 60 rping -c -v -C $count -a "$SDP_PEER_IP" 2>&1)
		rc=$?
		[ $rc = 0 ] || [ $SECONDS -ge $deadline ] && break
		sleep 1
	done
fi
echo "$out" | tail -n 3
check_eq "rping exit status" 0 "$rc"
check_eq "rping pings seen" $count "$(echo "$out" | grep -c 'ping data: rdma-ping-')"
finish
