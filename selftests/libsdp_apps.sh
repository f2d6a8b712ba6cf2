#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Real, unmodified programs over SDP by libsdp, each proven to have used
# SDP by its rows in /proc/net/sdp while it ran and by the counters:
#  - iperf3 client and server (LD_PRELOAD): the bytes iperf3 reports sent
#    and received agree (but for those in flight at its end), and at least
#    as many went through SDP;
#  - redis-server and redis-benchmark under sdp_run (epoll, non-blocking):
#    every request answered (the server counts them), and redis-cli
#    reads back what it wrote;
#  - qperf tcp_lat and tcp_bw (F_SETOWN, SIGURG) report results;
#  - python3's http.server and curl: a 50 MiB file with its SHA-256
#    checked, with rules by program name.
. "$(dirname "$0")/lib.sh"

# SDP_APPS_ADDR=127.0.0.1 (with SDP_LOCAL=1): the same against localhost,
# by the local transport (libsdp_local.sh)
addr=${SDP_APPS_ADDR:-$(rxe-up)} || exit 1
# a failed case must not leave servers holding SDP sockets for the next test
trap 'pkill -x iperf3; pkill -x redis-server; pkill -x qperf; pkill -f http.server' EXIT
sdp_unload
sdp_load || exit 1

# ---- iperf3 ------------------------------------------------------------
printf 'use sdp server iperf3 *:5201\nuse sdp client iperf3 *:5201\n' >/tmp/iperf.conf
libsdp_bg /tmp/iperf.conf iperf3 -s -1 -B "$addr" -p 5201 >/tmp/iperf-s.out 2>&1
srv=$bg_pid
wait_for sdp_listening 5201
check "iperf3 server: its listener is SDP" sdp_listening 5201
rx=$(sdp_rx_bytes)
with_libsdp /tmp/iperf.conf timeout 120 iperf3 -c "$addr" -p 5201 -t 3 -J \
	>/tmp/iperf.json 2>/tmp/iperf-c.err &
cli=$!
sleep 2
rows=$(sdp_rows)
wait $cli
check_eq "iperf3 client done" 0 "$?"
wait $srv
check "while it ran: the listener, control and data connections, both ends" \
	test "$rows" -ge 5
read -r sent recvd <<<"$(python3 -c '
import json
e = json.load(open("/tmp/iperf.json"))["end"]
print(e["sum_sent"]["bytes"], e["sum_received"]["bytes"])' 2>/dev/null)"
check "iperf3 moved bytes ($sent)" test "${sent:-0}" -gt 1000000
# iperf3's server stops counting when the client's TEST_END comes on the
# control connection, which may overtake the data still buffered or in
# flight on the data connection (on TCP too: seen here, 1.4 and 2.9 MB
# short): what it counts is what was sent, less at most what the two
# ends may buffer, tcp_wmem's and tcp_rmem's maximum, as on TCP
inflight=$(($(awk '{print $3}' /proc/sys/net/ipv4/tcp_wmem) + \
	$(awk '{print $3}' /proc/sys/net/ipv4/tcp_rmem)))
check "iperf3: bytes received as sent, less at most what was in flight ($recvd of $sent)" \
	test "${recvd:-0}" -le "${sent:-0}" -a $((${sent:-0} - ${recvd:-0})) -le "$inflight"
check "every byte it counted came through SDP ($(($(sdp_rx_bytes) - rx)))" \
	test $(($(sdp_rx_bytes) - rx)) -ge "${recvd:-1}"

# ---- redis ---------------------------------------------------------------
run="$SDP_RUN -d sdp"
$run redis-server --bind "$addr" --port 6390 --save '' --appendonly no \
	--protected-mode no >/tmp/redis.out 2>&1 &
srv=$!
wait_for sdp_listening 6390
check "redis-server: its listener is SDP" sdp_listening 6390
passive=$(sdp_stat PassiveOpens)
out=$($run redis-benchmark -h "$addr" -p 6390 -q -n 2000 -c 20 -t set,get,incr,lpush 2>&1)
echo "$out" | tr '\r' '\n' | grep -E '^[A-Z]+: .* requests per second' | sed 's/^/  /'
for t in SET GET INCR LPUSH; do
	check "redis-benchmark $t completed" \
		grep -q "^$t: .*requests per second" <<<"$(tr '\r' '\n' <<<"$out")"
done
cmds=$($run redis-cli -h "$addr" -p 6390 info stats | tr -d '\r' |
	awk -F: '$1 == "total_commands_processed" {print $2}')
check "redis-server answered every request ($cmds >= 8000)" test "${cmds:-0}" -ge 8000
check "the 20 benchmark clients came over SDP" \
	test $(($(sdp_stat PassiveOpens) - passive)) -ge 20
$run redis-cli -h "$addr" -p 6390 set sdp-key "over SDP" >/dev/null
check_eq "redis-cli reads back what it wrote" "over SDP" \
	"$($run redis-cli -h "$addr" -p 6390 get sdp-key)"
$run redis-cli -h "$addr" -p 6390 shutdown nosave >/dev/null 2>&1
wait $srv

# ---- qperf ---------------------------------------------------------------
printf 'use sdp server qperf *:*\nuse sdp client qperf *:*\n' >/tmp/qperf.conf
libsdp_bg /tmp/qperf.conf qperf -lp 19780 >/dev/null 2>&1
srv=$bg_pid
wait_for sdp_listening 19780
opens=$(sdp_stat ActiveOpens)
out=$(with_libsdp /tmp/qperf.conf timeout 120 qperf -lp 19780 -t 2 "$addr" \
	tcp_lat tcp_bw 2>&1)
echo "$out" | sed 's/^/  /'
check "qperf tcp_lat measured a latency" grep -qE 'latency *= *[0-9.]+ (us|ms)' <<<"$out"
check "qperf tcp_bw measured a bandwidth" grep -qE 'bw *= *[0-9.]+ [KMG]?B/sec' <<<"$out"
check "qperf's connections were SDP" test "$(sdp_stat ActiveOpens)" -gt "$opens"
kill $srv
wait $srv 2>/dev/null

# ---- HTTP: python3 -m http.server and curl ---------------------------------
http_over_sdp "$addr" 8088 50 "*"

check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
if [ "${SDP_LOCAL:-0}" = 1 ]; then
	check "all of it by the local transport" \
		test "$(sdp_stat ActiveOpens)" = "$(sdp_stat LocalActiveOpens)" -a \
		"$(sdp_stat LocalRxBytes)" -gt $((50 << 20))
fi
sdp_check_clean
finish
