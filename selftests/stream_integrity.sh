#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# 16 concurrent SDP connections each send 64 MiB of seeded random data in
# random write sizes (1 B .. 256 KiB) (SDP_STREAMS and SDP_STREAM_MIB
# change both, for a shorter run); the server checks every byte and
# echoes it, the client checks every byte of the echo and EOF after it.
# Writes of 64 KiB and more go by ZCopy, the others by BCopy: both paths
# carry the streams, interleaved.  Afterwards nothing is left: sockets,
# QPs, CQs, MRs, /proc rows; and no message ever met an empty receive
# queue (an RNR NAK).
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR

port=7100
n=${SDP_STREAMS:-16} bytes=$((${SDP_STREAM_MIB:-64} << 20))
rnr0=$(rnr_naks)
sdp_stream server sdp "$addr" $port "$n" >/tmp/server.out 2>&1 &
srv=$!
out=$(sdp_stream client sdp "$addr" $port "$n" $bytes 1 2>&1)
rc=$?
echo "$out"
check_eq "client: $n streams verified both ways" 0 "$rc"
wait $srv
check_eq "server: $n streams verified" 0 "$?"
cat /tmp/server.out
check_eq "every byte counted, sent and received, by either path" \
	"$((2 * n * bytes + 16 * n)) $((2 * n * bytes + 16 * n))" \
	"$(sdp_tx_bytes) $(sdp_rx_bytes)"
check "BCopy carried some" test "$(sdp_stat TxData)" -gt 0
check "ZCopy carried some" test "$(sdp_stat TxSrcAvail)" -gt 0
check_eq "every SrcAvail read whole" "$(sdp_stat TxSrcAvail)" "$(sdp_stat RxSrcAvail)"
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
# credits count every message, control ones too, and receive buffers
# being resized: none ever finds the peer's receive queue empty
check_eq "no message met an empty receive queue (RNR)" 0 \
	$(($(rnr_naks) - rnr0))
check_eq "no connection aborted" 0 "$(sdp_stat ConnAborted)"
check_eq "$((2 * n)) connections closed in order" $((2 * n)) "$(sdp_stat ConnClosed)"
sdp_check_clean
finish
