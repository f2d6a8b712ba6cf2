#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# No user takes over another's localhost service (issue 34, claim 3): a
# socket bound where only local connections come holds its port in
# rdma_cm as a wildcard bind that never listens, so with SO_REUSEADDR on
# both, rdma_cm let a second socket of any user bind and listen on the
# same address and port, and the newest listener got the clients.
# sdp_ports runs the same cases over TCP and SDP (the local transport):
# a listener of root's on loopback (which rdma_cm binds even without a
# device) or on addresses of an interface no RDMA device has (where
# binds are local-only: the hole), or the wildcard; another user (or
# root again) binds and listens with SO_REUSEADDR on the same, the
# wildcard, or another address; a client says whose listener took it.
# Every step as on TCP.  Then a client that waits in a full accept queue,
# disconnects and connects to another listener (claim 5: the first
# listener must not take it when it makes room), and the same cases with
# the other in a network namespace of its own.
. "$(dirname "$0")/lib.sh"

# an interface no RDMA device has: binds there are local-only
ip link add sdpdummy type dummy
ip addr add 10.99.0.1/24 dev sdpdummy
ip addr add 10.99.0.2/24 dev sdpdummy
ip addr add fd99::1/64 dev sdpdummy nodad
ip link set sdpdummy up
ip netns add sdpports
ip -n sdpports link set lo up
sdp_unload
SDP_LOCAL=1 sdp_load || exit 1
tcp=$(sdp_ports tcp 7700 10.99.0.1 10.99.0.2 fd99::1 sdpports 2>&1)
sdp=$(sdp_ports sdp 7750 10.99.0.1 10.99.0.2 fd99::1 sdpports 2>&1)
# Documentation/sdp.rst, Differences from TCP: rdma_cm holds a loopback
# port for every loopback address, so a second loopback address cannot
# have it (more strictly than TCP; no other user's service is reached)
differ="loopback, other user on another address: the other binds and listens"
while IFS= read -r t && IFS= read -r s <&3; do
	if [[ $t == "$differ"* ]]; then
		check_eq "${t%%: *}: as documented" "$differ: bind EADDRINUSE" "$s"
		continue
	fi
	check_eq "${t%%: *}: ${t#*: }" "$t" "$s"
done <<<"$tcp" 3<<<"$sdp"
check_eq "as many steps as TCP" "$(wc -l <<<"$tcp")" "$(wc -l <<<"$sdp")"
# (in its own namespace the other's client reaches its own listener)
no_takeover() { ! grep -v "^other namespace" <<<"$sdp" | grep -q "client.*: other"; }
check "no case root's client reached another user's listener" no_takeover
ip link del sdpdummy
ip netns del sdpports
sdp_check_clean
finish
