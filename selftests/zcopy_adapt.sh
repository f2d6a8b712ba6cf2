#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A blocking send of at least the ZCopy threshold goes the way the
# connection has measured faster (sdp_zc_adapt.c), with sdp_lbench's
# 3-second streams of one send size over rxe in one VM:
#  - 4 KiB sends with the threshold at 4 KiB: a blocking SrcAvail send
#    waits a round trip each, BCopy keeps the ring full: ZCopy is tried,
#    then at least 80 % of the bytes go by BCopy, and the tracepoint shows
#    both ways' figures and the switch; the reader, whose SinkAvails the
#    copied data keeps overtaking, soon stops offering them (each costs a
#    registration and a cancel's round trip): fewer cancels than a fifth
#    of the sends (without the backoff, about one per two sends);
#  - the same with SDP_ZCOPY_THRESH set on the socket, and with the module
#    parameter sdp_zcopy_adapt=0: the fixed threshold, at least 95 % by
#    ZCopy (the controls: they show the first case's BCopy is the rule's);
#  - 1 MiB sends on a connection whose BCopy ring is four 4 KiB buffers:
#    BCopy is tried, then at least 80 % of the bytes go by ZCopy; the
#    first connection probes BCopy early (a way with a single sample),
#    the next one starts from the device's figures, which two samples or
#    more stand behind, and probes no more in its 3 s;
#  - nothing left afterwards.
# Which way is faster is decided by counters, not by timing: each case's
# gap is 1.5x (1 MiB) to 3x (4 KiB) in this test bed (the figures are
# printed), wider than the swings of either way's own rate.  (16 KiB
# sends, 1.6x apart, were not: BCopy there slows to ZCopy's rate for
# seconds at times, and the rule rightly follows.)
. "$(dirname "$0")/lib.sh"

T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
addr=$(rxe-up) || exit 1
param=/sys/module/ib_sdp/parameters

# stream PORT SIZE [ENV...]: one 3 s stream; sets bc, zc (bytes each way
# took), copied (sends the rule copied), probes (runs the rule sent the
# slower way), cancels (SinkAvails), bw
stream() {
	local port=$1 size=$2 bc0 zc0 cp0 pr0 out
	shift 2
	bc0=$(sdp_stat TxBytes)
	pr0=$(sdp_stat ZcopyAdaptProbes)
	zc0=$(( $(sdp_stat TxZcopyBytes) + $(sdp_stat TxZcopyWriteBytes) ))
	cp0=$(sdp_stat ZcopyAdaptCopied)
	sc0=$(sdp_stat TxSinkAvailCancel)
	out=$(env "$@" timeout 60 sdp_lbench sdp "$addr" "$port" bw "$size" 3 2>&1)
	bw=${out#bw }
	bc=$(( $(sdp_stat TxBytes) - bc0 ))
	zc=$(( $(sdp_stat TxZcopyBytes) + $(sdp_stat TxZcopyWriteBytes) - zc0 ))
	copied=$(( $(sdp_stat ZcopyAdaptCopied) - cp0 ))
	probes=$(( $(sdp_stat ZcopyAdaptProbes) - pr0 ))
	cancels=$(( $(sdp_stat TxSinkAvailCancel) - sc0 ))
	echo "# $size B sends $*: $out MB/s, BCopy $bc B, ZCopy $zc B, copied by the rule $copied sends, $probes probes, $cancels SinkAvails cancelled"
}
pct() { echo $(( $1 * 100 / ($2 + 1) )); }

# ---- ZCopy slower: 4 KiB sends -------------------------------------------
sdp_unload
sdp_load sdp_zcopy_thresh=4096 || exit 1
echo >$T/trace
echo 1 >$T/events/sdp/sdp_zcopy/enable
stream 7601 4096
echo 0 >$T/events/sdp/sdp_zcopy/enable
check "4 KiB: ZCopy tried first" test "$zc" -gt 0
check "4 KiB: then BCopy by the rule" test "$copied" -gt 0
check "4 KiB: at least 80 % by BCopy ($(pct $bc $((bc + zc))) %)" \
	test "$(pct $bc $((bc + zc)))" -ge 80
check "trace: ZCopy's figure" grep -q 'adapt-rate-zcopy len=[1-9]' $T/trace
check "trace: BCopy's figure" grep -q 'adapt-rate-bcopy len=[1-9]' $T/trace
check "trace: the switch to BCopy" grep -q 'adapt-bcopy len=4096' $T/trace
check "4 KiB: the reader stops offering SinkAvails ($cancels cancelled)" \
	test "$cancels" -lt $((copied / 5))

stream 7602 4096 SDP_LBENCH_ZCOPY_THRESH=4096
check "SDP_ZCOPY_THRESH set: at least 95 % by ZCopy ($(pct $zc $((bc + zc))) %)" \
	test "$(pct $zc $((bc + zc)))" -ge 95
check_eq "SDP_ZCOPY_THRESH set: nothing copied by the rule" 0 "$copied"

echo 0 >$param/sdp_zcopy_adapt
stream 7603 4096
echo 1 >$param/sdp_zcopy_adapt
check "sdp_zcopy_adapt=0: at least 95 % by ZCopy ($(pct $zc $((bc + zc))) %)" \
	test "$(pct $zc $((bc + zc)))" -ge 95
check_eq "sdp_zcopy_adapt=0: nothing copied by the rule" 0 "$copied"

# ---- BCopy slower: 1 MiB sends through a ring of four 4 KiB buffers ------
sdp_unload
sdp_load sdp_rx_size=4 rcvbuf_initial_size=4096 rcvbuf_max_size=4096 || exit 1
stream 7604 1048576
check "1 MiB, small ring: BCopy tried" test "$copied" -gt 0
check "1 MiB, small ring: at least 80 % by ZCopy ($(pct $zc $((bc + zc))) %)" \
	test "$(pct $zc $((bc + zc)))" -ge 80
check "1 MiB, small ring: early probes of BCopy ($probes)" test "$probes" -gt 0
stream 7606 1048576
check "1 MiB, the next connection: at least 80 % by ZCopy ($(pct $zc $((bc + zc))) %)" \
	test "$(pct $zc $((bc + zc)))" -ge 80
check_eq "1 MiB, the next connection: no early probe" 0 "$probes"
echo 0 >$param/sdp_zcopy_thresh
stream 7605 1048576
echo "# (the same stream all by BCopy, for the figures: $bw MB/s)"

sdp_check_clean
finish
