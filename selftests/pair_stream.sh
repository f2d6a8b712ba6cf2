#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One SDP connection between the two VMs of a pair: 64 MiB of seeded
# random data each way, every byte checked on both hosts, and no
# message met an empty receive queue (an RNR NAK) on either; then one of
# 16 MiB over IPv6 (AF_INET6_SDP, the wire's fd77::/64 addresses).
# Argument: "a" (server, on SDP_IP) or "b" (client, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
sdp_fresh || exit 1

rnr0=$(rnr_naks)
if [ "$role" = a ]; then
	out=$(timeout 600 sdp_stream server sdp "$SDP_IP" 7500 1 2>&1)
	check_eq "server: the stream from the other host verified ($out)" 0 "$?"
else
	# sdp_stream retries while the server is not up yet
	out=$(timeout 600 sdp_stream client sdp "$SDP_PEER_IP" 7500 1 $((64 << 20)) 9 2>&1)
	check_eq "client: the echo from the other host verified ($out)" 0 "$?"
fi
# rxe-up gives each VM fd77::N, N the last byte of its IPv4 address
if [ "$role" = a ]; then
	out=$(timeout 600 sdp_stream server sdp "$(rxe-up -6)" 7501 1 2>&1)
	check_eq "IPv6: server, the stream verified ($out)" 0 "$?"
else
	out=$(timeout 600 sdp_stream client sdp "fd77::${SDP_PEER_IP##*.}" 7501 1 \
	      $((16 << 20)) 11 2>&1)
	check_eq "IPv6: client, the echo verified ($out)" 0 "$?"
fi
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
check_eq "no message met an empty receive queue (RNR)" 0 \
	$(($(rnr_naks) - rnr0))
sdp_check_clean
finish
