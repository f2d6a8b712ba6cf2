#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A hostile peer (sdp_evil: librdmacm and raw verbs) breaks the protocol one
# way per connection.  ib_sdp must refuse a bad Hello, abort a connection
# that sends a bad message, count each, log at a limited rate, and go on
# serving: a well-behaved connection afterwards still works.  Then the
# cases found by review: answers to a SinkAvail or SrcAvail that was never
# sent, the SinkAvail's key outliving an Abort, a SrcAvail's key revoked
# with or without a cancel, data racing the HelloAck, and bad HelloAcks to
# our client.  Region messages (one-sided RDMA) that break the rules, and
# a WRITE past the end of a region the peer was given.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR
logged() {	# lines of protocol errors in the kernel log
	dmesg | grep -c 'ib_sdp: protocol error'
}
logged0=$(logged)	# earlier tests in this VM logged theirs

bad_hellos="hello-version hello-short hello-bufs"
bad_msgs="seq len mid ack bufs short flags urg-empty urg-ctrl region-revoke region-ack region-keys region-token region-dup"
port=7700
nbad=$(echo $bad_msgs | wc -w)
SDP_STREAM_REGIONS=1 sdp_stream sink sdp "$addr" $port $((nbad + 1)) >/tmp/sink.out 2>&1 &
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

# a peer that WRITEs past the end of a region it was given (sdp_region
# hold: 1 MiB, write-only): its device's request is refused, and the
# owner's connection ends
sdp_region hold "$addr" 7790 >/tmp/region-hold.out 2>&1 &
hp=$!
sleep 1
out=$(timeout 60 sdp_evil "$addr" 7790 region-forge 2>&1)
echo "$out"
check "region: control: the key writes into the region" \
	grep -q "control: write ok" <<<"$out"
check "region: a WRITE past its end is refused" \
	grep -q "past the end: refused" <<<"$out"
timeout 30 tail --pid=$hp -f /dev/null
check "region: the owner's connection ended ($(cat /tmp/region-hold.out))" \
	grep -q "ended:" /tmp/region-hold.out

check_eq "a valid peer still gets through" established \
	"$(timeout 60 sdp_evil "$addr" $port valid 2>&1)"
wait $sink
cat /tmp/sink.out
check_eq "the application saw each bad connection reset, with no data" "$nbad" \
	"$(grep -c '0 bytes, then Connection reset by peer' /tmp/sink.out)"
# the valid peer disconnects without a DisConn: a reset after its data
check "and the valid one's 5 bytes, then the reset" \
	grep -q "^conn $nbad: 5 bytes, then Connection reset by peer" /tmp/sink.out
check "protocol errors logged" test "$(logged)" -gt "$logged0"
check "logging is rate-limited (fewer lines than errors or equal)" \
	test $(($(logged) - logged0)) -le "$nbad"

# Cases that bring their own SDP application (sdp_evil forks it): each
# prints its checks; a protocol error must be counted for those that
# break the protocol.
evil() {	# case port [counted|uncounted: as a protocol error]
	local before out rc
	before=$(sdp_stat ProtoErrors)
	out=$(timeout 120 sdp_evil "$addr" "$2" "$1" 2>&1)
	rc=$?
	echo "$out"
	check_eq "$1" 0 "$rc"
	case "${3:-}" in
	counted) check "$1: counted as a protocol error" \
			test "$(sdp_stat ProtoErrors)" -gt "$before" ;;
	uncounted) check_eq "$1: not counted as a protocol error" \
			"$before" "$(sdp_stat ProtoErrors)" ;;
	esac
}
# a RdmaWrCompl for a SinkAvail that could not be sent yet (the old
# module returned bytes nobody wrote, then oopsed sending the SinkAvail)
evil sink-unsent 7710 counted
# a SinkAvail still queued for credits when data comes
evil sink-late-data 7715
# a RdmaRdCompl for a SrcAvail still queued for credits
evil rdcompl-unsent 7720 counted
# the SinkAvail's key is invalidated before the peer hears of the Abort
evil sink-abort 7730 counted
# a SrcAvail with a dead key: a protocol error, unless a SrcAvailCancel
# came first (the source gave up on it and reset)
evil src-badkey 7732 counted
evil src-revoked 7734 uncounted
# data from the server before the client has taken the HelloAck
evil server-early 7740
# bad HelloAcks: the client's connect() fails, each counted
before=$(sdp_stat HelloErrors)
evil helloack 7750
check_eq "each bad HelloAck counted as a Hello error" $((before + 4)) \
	"$(sdp_stat HelloErrors)"
sdp_check_clean
finish
