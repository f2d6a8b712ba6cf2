#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A host slow to answer ARP (a busy one): b's ARP replies leave 2.5 s
# late, within the 3 s the neighbour table waits before it gives up
# (3 probes 1 s apart), so TCP's connect succeeds after 2.5 s; SDP's
# must too.  SDP waited 2 s for address resolution, failed such a connect
# with EHOSTUNREACH, and so failed one connect in 60 of pair_siw_setup.sh
# on a loaded test bed machine.  An unreachable address still fails
# EHOSTUNREACH, as TCP's, in about TCP's time.
# Argument: "a" (clients, to SDP_PEER_IP) or "b" (servers, on SDP_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
sdp_fresh || exit 1
DELAY_MS=2500

if [ "$role" = b ]; then
	# ARP replies only, through a band of their own, delayed
	tc qdisc add dev eth0 root handle 1: prio &&
		tc qdisc add dev eth0 parent 1:3 handle 30: netem delay ${DELAY_MS}ms &&
		tc filter add dev eth0 parent 1: protocol arp prio 1 u32 \
			match u32 0 0 flowid 1:3
	check_eq "b's ARP replies delayed ${DELAY_MS} ms" 0 "$?"
	for fam in tcp sdp; do
		port=7960
		[ "$fam" = sdp ] && port=7961
		timeout 120 sdp_stream server "$fam" "$SDP_IP" "$port" 1 \
			>"/tmp/arp_$fam.out" 2>&1 &
	done
	check "servers up" pair_release 7964 120
	check "a is done" pair_release 7962 600
	for fam in tcp sdp; do
		wait -n
		echo "# $fam server: $(tail -n 1 "/tmp/arp_$fam.out")"
	done
	tc qdisc del dev eth0 root
	sdp_check_clean
	finish
fi

# connect once (no retry: SDP_STREAM_WAIT=0) to b's FAM server at PORT
# with no neighbour entry for b; print the exit code and the milliseconds.
# First the late replies to earlier requests arrive (each of the table's
# probes gets one, DELAY_MS late): one would answer this lookup early.
slow_connect() {
	local t0 rc
	sleep $((DELAY_MS / 1000 + 4))
	ip neigh flush dev eth0
	t0=$(date +%s%N)
	SDP_STREAM_WAIT=0 timeout 60 sdp_stream client "$1" "$SDP_PEER_IP" "$2" \
		1 4096 7 >"/tmp/arp_$1.out" 2>&1
	rc=$?
	echo "$rc $((($(date +%s%N) - t0) / 1000000))"
}

check "b is up" pair_await 7964 120
for fam in tcp sdp; do
	port=7960
	[ "$fam" = sdp ] && port=7961
	read -r rc ms < <(slow_connect "$fam" "$port")
	check_eq "$fam: connected through a late ARP reply, ${ms} ms ($(tail -n 1 "/tmp/arp_$fam.out"))" 0 "$rc"
	check "... the reply was late (at least ${DELAY_MS} ms)" test "$ms" -ge "$DELAY_MS"
done
# nobody at all there: both give up, as TCP does, in about TCP's time
declare -A out ms
for fam in tcp sdp; do
	sleep 1
	ip neigh flush dev eth0
	t0=$(date +%s%N)
	out[$fam]=$(SDP_STREAM_WAIT=0 timeout 60 sdp_stream client "$fam" \
		10.77.0.99 7963 1 4096 7 2>&1)
	ms[$fam]=$((($(date +%s%N) - t0) / 1000000))
done
check_eq "an absent host: SDP's connect error is TCP's (${ms[sdp]} ms, TCP ${ms[tcp]} ms)" \
	"${out[tcp]}" "${out[sdp]}"
check "... SDP gave up no sooner than TCP" test "${ms[sdp]}" -ge "${ms[tcp]}"
pair_await 7962 60
sdp_check_clean
finish
