#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The data path at the edges of its module parameters: the smallest ring
# of the smallest buffers with no inline sends, and the largest buffers;
# every byte checked both ways.  The counters show that the small
# parameters took (message count, no inline sends).
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
sdp_unload

run() {	# name, connections, bytes
	sdp_stream server sdp "$addr" 7800 "$2" >/tmp/srv.out 2>&1 &
	local srv=$! out rc
	out=$(timeout 600 sdp_stream client sdp "$addr" 7800 "$2" "$3" 7 2>&1)
	rc=$?
	check_eq "$1: $2 streams of $3 bytes verified both ways" 0 "$rc"
	wait $srv
	check_eq "$1: server verified" 0 "$?"
}

# BCopy only (sdp_zcopy_thresh=0): these are the data path's parameters
sdp_load sdp_rx_size=4 rcvbuf_initial_size=1024 rcvbuf_max_size=1024 \
	sdp_inline_thresh=0 sdp_zcopy_thresh=0 || exit 1
run "4 x 1 KiB buffers, no inline" 4 $((4 << 20))
check_eq "no message went inline" 0 "$(sdp_stat TxInline)"
msgs=$(sdp_stat TxData)
check "messages of at most 1008 bytes of payload" \
	test "$msgs" -ge $((2 * 4 * (4 << 20) / 1008))
check "the sender waited for credits" test "$(sdp_stat CreditStalls)" -gt 0
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
# Both ends write less than their send rings hold and half-close with data
# still waiting for credits, before either reads: the credit updates must
# go out even while a DisConn waits (this deadlocked once).
out=$(timeout 120 sdp_stream bothfull sdp "$addr" 7801 40000 2>&1)
check_eq "half-closed with data waiting for credits: no deadlock ($out)" 0 "$?"
sdp_check_clean

sdp_load rcvbuf_initial_size=262144 rcvbuf_max_size=262144 sdp_rx_size=16 \
	sdp_zcopy_thresh=0 || exit 1
run "16 x 256 KiB buffers" 2 $((32 << 20))
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
