#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One-sided RDMA between two hosts (sdp_region rw): the owner (a) registers
# a 64 MiB region; the user (b) writes into it and reads from it, 4 KiB to
# 64 MiB at unaligned offsets, by plain, MSG_ZEROCOPY and io_uring calls,
# every byte checked by the other side; and stream bytes by io_uring's
# SEND_ZC, rewritten once notified, checked by the owner.
# Argument: "a" (owner, on SDP_IP) or "b" (user, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
sdp_fresh || exit 1
if [ "$role" = a ]; then
	end=owner ip=$SDP_IP
else
	end=user ip=$SDP_PEER_IP
fi
out=$(SDP_REGION_ROLE=$end timeout 600 sdp_region rw "$ip" 7580 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "sdp_region rw, the $end" 0 "$rc"
if [ "$role" = a ]; then
	check "regions registered here" test "$(sdp_stat RegionRegs)" -gt 0
else
	check "bytes written one-sided" \
		test "$(sdp_stat RegionWriteBytes)" -gt $((64 << 20))
	check "bytes read one-sided" \
		test "$(sdp_stat RegionReadBytes)" -gt $((64 << 20))
fi
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
