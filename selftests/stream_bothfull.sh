#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Both ends of one connection write 32 MiB before either reads.  By BCopy
# both windows are full at once, and the reserved credit lets the credit
# updates through when the readers start.  By ZCopy both ends have
# SrcAvails outstanding at once, and neither waits for the other's
# application: each reads ahead.  Same run on TCP for reference.
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
sdp_unload
sdp_load sdp_zcopy_thresh=0 || exit 1

out=$(timeout 300 sdp_stream bothfull tcp "$addr" 7200 $((32 << 20)) 2>&1)
check_eq "TCP: both windows full, then drained ($out)" 0 "$?"
out=$(timeout 300 sdp_stream bothfull sdp "$addr" 7200 $((32 << 20)) 2>&1)
check_eq "SDP: both windows full, then drained ($out)" 0 "$?"
check "the sender stalled on credits" test "$(sdp_stat CreditStalls)" -gt 0
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean

sdp_load || exit 1
out=$(timeout 300 sdp_stream bothfull sdp "$addr" 7201 $((32 << 20)) 2>&1)
check_eq "SDP, ZCopy: both ends' SrcAvails outstanding, then drained ($out)" 0 "$?"
check "both ends sent SrcAvails" test "$(sdp_stat TxSrcAvail)" -gt 1
check "and read them ahead, no reader waiting" \
	test "$(sdp_stat RxZcopyBounceBytes)" -gt 0
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
