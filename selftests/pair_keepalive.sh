#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SO_KEEPALIVE with TCP_KEEPIDLE/KEEPINTVL/KEEPCNT against a peer that
# vanishes, TCP and SDP side by side: VM b connects both, then drops every
# frame on its wire in both directions (tc); VM a, idle in recv(), must
# see both sockets fail with ETIMEDOUT.  Then the wire speaks again and a
# new rdma_cm connection between the two must work.
#
# The frames b sends are lost in a netem qdisc, not dropped by a tc
# filter: a filter's drop is an error to the sender, and 6.12's Soft-RoCE
# puts the QP whose packet it was in error, also the GSI QP that carries
# the CM's messages (b's DREQs while silent), after which that device
# can set up no connection until it is made again (6.1's retries).
# netem reports a loss as sent, as a wire would.
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
	out=$(timeout 180 rping -s -v -C 3 -a "$SDP_IP" -p 7603 2>&1)
	check_eq "afterwards, a new rdma_cm connection from b (rping)" 0 "$?"
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
	modprobe sch_netem
	tc qdisc add dev eth0 clsact &&
		tc filter add dev eth0 ingress matchall action drop &&
		tc qdisc add dev eth0 root netem loss 100%
	check_eq "this host went silent" 0 "$?"
	wait $cli
	tc qdisc del dev eth0 root
	tc qdisc del dev eth0 clsact
	# our own ends were closed while silent: their DisConn can only
	# time out on the transport's retries
	for _ in $(seq 300); do
		[ "$(sdp_inuse)" = 0 ] && break
		sleep 0.2
	done
	deadline=$((SECONDS + 120))
	while :; do	# until a's server is up
		out=$(timeout 30 rping -c -v -C 3 -a "$SDP_PEER_IP" -p 7603 2>&1)
		rc=$?
		[ $rc = 0 ] || [ $SECONDS -ge $deadline ] && break
		sleep 1
	done
	check_eq "afterwards, a new rdma_cm connection to a (rping)" 0 "$rc"
fi
sdp_check_clean
finish
