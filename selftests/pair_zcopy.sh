#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ZCopy between two hosts, both paths: sizes around the threshold,
# unaligned, read in one piece and in 1000-byte reads (SrcAvail), and
# written into a waiting reader's buffer (SinkAvail), and a file sent by
# sendfile() with its pages by reference; every byte checked on
# the receiving host (a); the counters on each side show the path.
# Argument: "a" (receiver, on SDP_IP) or "b" (sender, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
sdp_fresh || exit 1

if [ "$role" = a ]; then
	out=$(timeout 600 sdp_zc sizes-server "$SDP_IP" 7550 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "every size received whole from the other host" 0 "$rc"
	check "read straight into user buffers" \
		test "$(sdp_stat RxZcopyDirectBytes)" -gt 0
	check "and read ahead into kernel buffers" \
		test "$(sdp_stat RxZcopyBounceBytes)" -gt 0
	out=$(timeout 300 sdp_zc sink-server "$SDP_IP" 7551 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "written into the waiting reader's buffers by the other host" 0 "$rc"
	check "SinkAvails offered them" test "$(sdp_stat TxSinkAvail)" -gt 0
	out=$(timeout 300 sdp_zc sendfile-server "$SDP_IP" 7552 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "a file sent by sendfile() received whole from the other host" 0 "$rc"
else
	out=$(timeout 600 sdp_zc sizes-client "$SDP_PEER_IP" 7550 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "every size sent to the other host" 0 "$rc"
	check "by SrcAvail" test "$(sdp_stat TxSrcAvail)" -gt 0
	out=$(timeout 300 sdp_zc sink-client "$SDP_PEER_IP" 7551 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "sent into the other host's offered buffers" 0 "$rc"
	check "by RDMA WRITE" test "$(sdp_stat TxZcopyWriteBytes)" -gt 0
	out=$(timeout 300 sdp_zc sendfile-client "$SDP_PEER_IP" 7552 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "a file sent by sendfile() to the other host" 0 "$rc"
	check "its pages by reference" \
		test "$(sdp_stat TxZcopyPageBytes)" -ge $((16 << 20))
fi
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
