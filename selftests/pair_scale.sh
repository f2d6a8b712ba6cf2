#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Many connections between the two VMs of a pair: VM b opens N (500; 200
# with SDP_QUICK=1, make check) SDP
# connections to an echo server on VM a, each checked with a 100-byte
# echo, and holds them idle.  On both hosts an end costs at most 128 KiB
# of MemAvailable, at most 64 KiB of it buffers (BufferBytes), and every
# buffer is freed after close.
# Argument: "a" (server, on SDP_IP) or "b" (client, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
sdp_fresh || exit 1
n=${SDP_PAIR_SCALE_N:-500}
[ "${SDP_QUICK:-0}" = 1 ] && n=${SDP_PAIR_SCALE_N:-200}
port=7950

inuse_at_least() { [ "$(sdp_inuse)" -ge "$1" ]; }
inuse_at_most() { [ "$(sdp_inuse)" -le "$1" ]; }
no_buffers() { [ "$(sdp_stat BufferBytes)" = 0 ]; }
# per_end M0 M1 B0 B1: check what each of the $n ends here costs
per_end() {
	local kib=$((($1 - $2) / n)) bufkib=$((($4 - $3) / n / 1024))
	echo "# $role: $n ends: $kib KiB each, $bufkib KiB of it buffers"
	check "$role: all $n ends open when measured" inuse_at_least "$n"
	check "$role: an idle end costs at most 128 KiB ($kib KiB)" \
		test "$kib" -le 128
	check "$role: of which at most 64 KiB buffers ($bufkib KiB)" \
		test "$bufkib" -le 64
}

mem_settle
m0=$(mem_avail_kib) b0=$(sdp_stat BufferBytes)
if [ "$role" = a ]; then
	sdp_scale serve sdp "$SDP_IP" $port >/tmp/serve.out 2>&1 &
	srv=$!
	check "server: $n connections from the other host" \
		wait_for -t 300 inuse_at_least $((n + 1))
	sleep 3
	per_end "$m0" "$(mem_avail_kib)" "$b0" "$(sdp_stat BufferBytes)"
	# b holds its ends until this end is measured
	check "server: measured while the client holds" pair_release 7951
	check "server: all closed by the other host" \
		wait_for -t 300 inuse_at_most 1
	kill $srv
	wait $srv 2>/dev/null
else
	sleep 8		# the server is up
	coproc H { sdp_scale hold-client sdp "$SDP_PEER_IP" $port "$n" 2>&1; }
	rate=""
	while read -r l <&"${H[0]}"; do
		echo "# b: $l"
		case $l in
		rate*) rate=${l#rate } ;;
		ready) break ;;
		esac
	done
	check "client: $n connections set up and echo-checked ($rate)" \
		test -n "$rate"
	sleep 3
	per_end "$m0" "$(mem_avail_kib)" "$b0" "$(sdp_stat BufferBytes)"
	check "client: held until the server measured" pair_await 7951
	fd=${H[1]}; exec {fd}>&-
	wait "$H_PID"
fi
check "$role: every buffer freed after close" \
	wait_for -t 30 no_buffers
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
