#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SO_KEEPALIVE with TCP_KEEPIDLE/KEEPINTVL/KEEPCNT against a peer that
# vanishes, TCP and SDP side by side: VM b connects both, then drops every
# frame on its wire in both directions (tc); VM a, idle in recv(), must
# see both sockets fail with ETIMEDOUT.
# Argument: "a" (server, on SDP_IP) or "b" (the peer that vanishes).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
sdp_fresh || exit 1

if [ "$role" = a ]; then
	out=$(timeout 120 sdp_ka server "$SDP_IP" 7600 2>&1)
	rc=$?
	echo "$out"
	check_eq "TCP and SDP both fail with ETIMEDOUT" 0 "$rc"
	check "SDP: within 1 s idle + 3 probes 1 s apart, and some slack" \
		awk '/^SDP: ETIMEDOUT after/ {exit !($4 >= 3 && $4 < 15)}' <<<"$out"
	check "keepalive probes were sent" test "$(sdp_stat KeepaliveProbes)" -ge 1
	check "the connection ended on keepalive or on the transport's retries" \
		test $(($(sdp_stat KeepaliveTimeouts) + $(sdp_stat TransportTimeouts))) -ge 1
else
	sdp_ka client "$SDP_PEER_IP" 7600 25 >/tmp/ka.out 2>&1 &
	cli=$!
	for _ in $(seq 600); do
		grep -q connected /tmp/ka.out && break
		sleep 0.1
	done
	cat /tmp/ka.out
	check "connected over TCP and SDP" grep -q connected /tmp/ka.out
	sleep 1
	# vanish: nothing in, nothing out
	tc qdisc add dev eth0 clsact &&
		tc filter add dev eth0 ingress matchall action drop &&
		tc filter add dev eth0 egress matchall action drop
	check_eq "this host went silent" 0 "$?"
	wait $cli
	tc qdisc del dev eth0 clsact
	# our own ends were closed while silent: their DisConn can only
	# time out on the transport's retries
	for _ in $(seq 300); do
		[ "$(sdp_inuse)" = 0 ] && break
		sleep 0.2
	done
fi
sdp_check_clean
finish
