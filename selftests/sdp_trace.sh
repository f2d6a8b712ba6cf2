#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The sdp trace system (tracefs and perf): a verified stream shows its
# connect on both ends (active and passive, transport rdma), its state
# changes, ZCopy SrcAvails read and completed, and an orderly close on
# both ends; a peer that breaks the protocol shows the check that failed,
# the abort, a close by reset and the work requests it flushed; the cookie the events carry is the one
# sdpstat shows for the socket.  perf lists the events and records them.
. "$(dirname "$0")/lib.sh"

# (bounded: a dump that never ended would fail a check, not the suite)
SDPSTAT="timeout 30 $SDP_REPO/userspace/sdpstat/sdpstat"
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
sdp_fresh || exit 1
addr=$SDP_ADDR
port=7480

# shellcheck disable=SC2010 # tracefs event names are plain words
events=$(ls $T/events/sdp | grep -v '^enable$\|^filter$' | xargs)
check_eq "the sdp system's events" \
	"sdp_abort sdp_close sdp_connect sdp_credit_stall sdp_proto_error sdp_state sdp_wc_error sdp_zcopy" \
	"$events"
check "perf lists them" bash -c "perf list 'sdp:*' 2>/dev/null | grep -q 'sdp:sdp_zcopy'"

trace_on() { echo >$T/trace; echo 1 >$T/events/sdp/enable; }
trace_off() { echo 0 >$T/events/sdp/enable; cat $T/trace >"$1"; }

# a verified 8 MiB stream each way, random writes up to 256 KiB
trace_on
sdp_stream server sdp "$addr" $port 1 >/dev/null 2>&1 &
srv=$!
wait_for sdp_listening $port
sdp_stream client sdp "$addr" $port 1 $((8 << 20)) 5 >/dev/null 2>&1
check_eq "client verified its stream" 0 "$?"
wait $srv
check_eq "server verified its stream" 0 "$?"
wait_for bash -c "[ \$(grep -c 'sdp_close:' $T/trace) -ge 3 ]"
trace_off /tmp/trace.stream
grep -v 'sdp_zcopy\|sdp_credit_stall' /tmp/trace.stream | head -40
check_eq "sdp_connect: one active, one passive, over rdma" \
	"active transport=rdma passive transport=rdma" \
	"$(grep -o 'sdp_connect: .*' /tmp/trace.stream | awk '{print $5, $6}' | sort | xargs)"
check "sdp_state: SYN_SENT -> ESTABLISHED" grep -q 'SYN_SENT -> ESTABLISHED' /tmp/trace.stream
check "sdp_state: SYN_RECV -> ESTABLISHED" grep -q 'SYN_RECV -> ESTABLISHED' /tmp/trace.stream
check "sdp_state: the listener LISTEN -> CLOSE" grep -q 'LISTEN -> CLOSE' /tmp/trace.stream
check_eq "sdp_close: both ends by DisConn, no error" 2 \
	"$(grep -c 'sdp_close: .* reason=disconn err=0' /tmp/trace.stream)"
check "no abort, no protocol error" bash -c \
	"! grep -q 'sdp_abort\|sdp_proto_error' /tmp/trace.stream"
srcavail=$(grep -c 'sdp_zcopy: .* srcavail len=' /tmp/trace.stream)
check "sdp_zcopy: SrcAvails advertised ($srcavail)" test "$srcavail" -gt 0
check_eq "sdp_zcopy: each read by the peer, as many rx-srcavail" "$srcavail" \
	"$(grep -c 'sdp_zcopy: .* rx-srcavail len=' /tmp/trace.stream)"
check_eq "sdp_zcopy: the bytes advertised all completed (rdcompl)" \
	"$(grep -o ' srcavail len=[0-9]*' /tmp/trace.stream | awk -F= '{s += $2} END {print s}')" \
	"$(grep -o ' rdcompl len=[0-9]*' /tmp/trace.stream | awk -F= '{s += $2} END {print s}')"
check_eq "the events' ZCopy bytes are the counter's" "$(sdp_stat TxZcopyBytes)" \
	"$(grep -o ' srcavail len=[0-9]*' /tmp/trace.stream | awk -F= '{s += $2} END {print s}')"

# the cookie: sdpstat's for a held pair is the one its events carry
trace_on
coproc PAIR { sdp_hold pair "$addr" $((port + 1)); }
read -r -t 30 line <&"${PAIR[0]}"
check_eq "pair held" ready "$line"
cookie=$($SDPSTAT -e --dport $((port + 1)) | awk 'NR > 1 {sub("sk:", "", $NF); print $NF}')
fd=${PAIR[1]}; exec {fd}>&-
wait "$PAIR_PID"
trace_off /tmp/trace.pair
check "the client's connect event has sdpstat's cookie ($cookie)" \
	grep -q "sdp_connect: cookie=$((16#$cookie)) .* active" /tmp/trace.pair

# a protocol error: a Data message out of sequence
sdp_stream sink sdp "$addr" $((port + 2)) 1 >/dev/null 2>&1 &
sink=$!
wait_for sdp_listening $((port + 2))
trace_on
check_eq "the bad peer is disconnected" disconnected \
	"$(timeout 60 sdp_evil "$addr" $((port + 2)) seq 2>&1)"
wait $sink
trace_off /tmp/trace.evil
cat /tmp/trace.evil | grep -v '^#'
check "sdp_proto_error names the check" \
	grep -q 'sdp_proto_error: .* check="[a-z].*" val=' /tmp/trace.evil
check "sdp_abort: ECONNRESET, an Abort sent" \
	grep -q 'sdp_abort: .* err=104 abort-sent' /tmp/trace.evil
check "sdp_close: by reset" grep -q 'sdp_close: .* reason=reset err=104' /tmp/trace.evil
check "sdp_wc_error: the work requests the reset flushed (status 5)" \
	grep -q 'sdp_wc_error: .* wr=[a-z].* status=5' /tmp/trace.evil

# perf records the events of a connection
# (system-wide: a close may end in a completion or a work item)
perf record -q -a -e 'sdp:sdp_connect' -e 'sdp:sdp_close' -o /tmp/perf.data -- \
	sh -c "sdp_hold pair $addr $((port + 3)) </dev/null >/dev/null; sleep 2" 2>/dev/null
check_eq "perf record: two connects, three closes" "2 3" \
	"$(perf script -i /tmp/perf.data 2>/dev/null | grep -c 'sdp:sdp_connect:') $(perf script -i /tmp/perf.data 2>/dev/null | grep -c 'sdp:sdp_close:')"
sdp_check_clean
finish
