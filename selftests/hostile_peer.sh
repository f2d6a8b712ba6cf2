#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A hostile peer (sdp_evil: librdmacm and raw verbs) breaks the protocol one
# way per connection.  ib_sdp must refuse a bad Hello, abort a connection
# that sends a bad message, count each, log at a limited rate, and go on
# serving: a well-behaved connection afterwards still works.
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
sdp_unload
sdp_load || exit 1

bad_hellos="hello-version hello-short hello-bufs"
bad_msgs="seq len mid ack bufs short flags urg-empty urg-ctrl"
port=7700
sdp_stream sink sdp "$addr" $port 10 >/tmp/sink.out 2>&1 &
sink=$!
sleep 1

for c in $bad_hellos; do
	check_eq "$c: refused" rejected "$(timeout 60 sdp_evil "$addr" $port $c 2>&1)"
done
check_eq "each counted as a Hello error" 3 "$(sdp_stat HelloErrors)"

for c in $bad_msgs; do
	before=$(sdp_stat ProtoErrors)
	check_eq "$c: connection aborted" disconnected \
		"$(timeout 60 sdp_evil "$addr" $port $c 2>&1)"
	check_eq "$c: counted as a protocol error" $((before + 1)) "$(sdp_stat ProtoErrors)"
done

check_eq "a valid peer still gets through" established \
	"$(timeout 60 sdp_evil "$addr" $port valid 2>&1)"
wait $sink
cat /tmp/sink.out
check_eq "the application saw each bad connection reset, with no data" 9 \
	"$(grep -c '0 bytes, then Connection reset by peer' /tmp/sink.out)"
# the valid peer disconnects without a DisConn: a reset after its data
check "and the valid one's 5 bytes, then the reset" \
	grep -q '^conn 9: 5 bytes, then Connection reset by peer' /tmp/sink.out
check "protocol errors logged" bash -c 'dmesg | grep -q "ib_sdp: protocol error"'
check "logging is rate-limited (fewer lines than errors or equal)" \
	test "$(dmesg | grep -c 'ib_sdp: protocol error')" -le 9
sdp_check_clean
finish
