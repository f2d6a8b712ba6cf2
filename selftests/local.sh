#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The local transport on a host with no RDMA device at all (no rxe-up):
# the module loads and serves connections to 127.0.0.1, ::1 and 0.0.0.0.
#  - 16 streams of 16 MiB each way over 127.0.0.1, every byte checked,
#    every one counted by the local counters, some by the single copy;
#  - a 64 KiB ping-pong goes mostly by the single copy; a reader waiting
#    for it stays killable when the sender's memory stalls (userfaultfd);
#  - /proc/net/sdp shows the local connection while it is open;
#  - a connect() to 0.0.0.0 reaches a wildcard listener, as on TCP;
#  - real programs under libsdp with "use sdp" rules against localhost:
#    redis-server and redis-benchmark, iperf3;
#  - nothing left afterwards.
. "$(dirname "$0")/lib.sh"

trap 'pkill -x iperf3; pkill -x redis-server' EXIT
sdp_unload
# an earlier suite in this VM may have made one: gone, as on a host without
for dev in $(rdma link show 2>/dev/null | awk '{print $2}' | cut -d/ -f1 | sort -u); do
	rdma link delete "$dev"
done
check_eq "no RDMA device" "" "$(rdma link show 2>/dev/null)"
sdp_load sdp_local=1 || exit 1

# ---- integrity ---------------------------------------------------------
port=7300
sdp_stream server sdp 127.0.0.1 $port 16 >/tmp/server.out 2>&1 &
srv=$!
out=$(sdp_stream client sdp 127.0.0.1 $port 16 $((16 << 20)) 7 2>&1)
rc=$?
echo "$out" | tail -3
check_eq "client: 16 streams verified both ways over 127.0.0.1" 0 "$rc"
wait $srv
check_eq "server: 16 streams verified" 0 "$?"
check_eq "every byte counted by the local transport" \
	"$((2 * 16 * (16 << 20) + 16 * 16)) $((2 * 16 * (16 << 20) + 16 * 16))" \
	"$(sdp_stat LocalTxBytes) $(sdp_stat LocalRxBytes)"
check_eq "as sent and received" "$(sdp_stat LocalTxBytes)" "$(sdp_stat TxBytes)"
check_eq "16 local connections each way" "16 16" \
	"$(sdp_stat LocalActiveOpens) $(sdp_stat LocalPassiveOpens)"
check_eq "32 connections closed in order" 32 "$(sdp_stat ConnClosed)"
check_eq "none aborted" 0 "$(sdp_stat ConnAborted)"
check "some went straight into a waiting reader's buffer ($(sdp_stat LocalSinkBytes))" \
	test "$(sdp_stat LocalSinkBytes)" -gt 0

# ---- the single copy: a 64 KiB ping-pong, each reader waiting first --------
sink=$(sdp_stat LocalSinkBytes)
out=$(sdp_lbench sdp 127.0.0.1 7302 lat 65536 200)
check "ping-pong of 64 KiB done ($out)" test -n "$out"
check "most of its 2 x 200 x 64 KiB by the single copy ($(($(sdp_stat LocalSinkBytes) - sink)))" \
	test $(($(sdp_stat LocalSinkBytes) - sink)) -ge $((200 * 65536))

# ---- a reader stays killable: the sender's copy into its buffer stalls
# on a userfaultfd page nobody serves
out=$(timeout 20 sdp_uffd 7303)
check "a reader waiting for the single copy dies on SIGKILL meanwhile ($out)" \
	test "${out% in *}" = "reader killed"

# a send that faults half way: what it took reaches the reader at once
out=$(timeout 20 sdp_uffd 7304 partial)
check "the bytes of a send that faulted half way are delivered ($out)" \
	test "$?" = 0 -a -n "$out"

# ---- /proc/net/sdp and 0.0.0.0 -------------------------------------------
port=7301
sdp_stream sink sdp 0.0.0.0 $port 1 >/tmp/sink.out 2>&1 &
sink=$!
wait_for sdp_listening $port
coproc GATED { sdp_stream gated sdp 0.0.0.0 $port 65536; }
# copies of the coproc's pipes: bash closes GATED's as soon as it reaps
# the coproc, even with its last line still unread
exec {gated_in}<&"${GATED[0]}" {gated_out}>&"${GATED[1]}"
read -r -t 10 line <&"$gated_in"
check_eq "connect() to 0.0.0.0 reaches the wildcard listener" connected "$line"
# 0100007F: 127.0.0.1, where a connection to 0.0.0.0 goes
rows=$(awk -v p="$(printf '%04X' $port)" \
	'NR > 1 && $3 == "0100007F:" p && $NF == "1" {n++} END {print n + 0}' \
	/proc/net/sdp)
check_eq "/proc/net/sdp: the client's row, established, to 127.0.0.1" 1 "$rows"
echo 0 >&"$gated_out"
read -r -t 10 line <&"$gated_in"
echo go >&"$gated_out"
read -r -t 30 line <&"$gated_in"
check_eq "64 KiB sent" "sent 65536" "$line"
exec {gated_in}<&- {gated_out}>&-
wait $sink
grep -q 65536 /tmp/sink.out
check "the sink read them ($(cat /tmp/sink.out))" grep -q 65536 /tmp/sink.out

# ---- real programs, libsdp rules against localhost -------------------------
run="$SDP_RUN -d sdp"
$run redis-server --bind 127.0.0.1 --port 6391 --save '' --appendonly no \
	--protected-mode no >/tmp/redis.out 2>&1 &
wait_for sdp_listening 6391
check "redis-server on 127.0.0.1: its listener is SDP" sdp_listening 6391
passive=$(sdp_stat LocalPassiveOpens)
out=$($run redis-benchmark -h 127.0.0.1 -p 6391 -q -n 2000 -c 20 -t set,get 2>&1)
echo "$out" | tr '\r' '\n' | grep -E '^[A-Z]+: .* requests per second' | sed 's/^/  /'
for t in SET GET; do
	check "redis-benchmark $t completed" \
		grep -q "^$t: .*requests per second" <<<"$(tr '\r' '\n' <<<"$out")"
done
check "the 20 benchmark clients came by the local transport" \
	test $(($(sdp_stat LocalPassiveOpens) - passive)) -ge 20
$run redis-cli -h 127.0.0.1 -p 6391 set k local >/dev/null
check_eq "redis-cli reads back what it wrote" local \
	"$($run redis-cli -h 127.0.0.1 -p 6391 get k | tr -d '\r')"
$run redis-cli -h 127.0.0.1 -p 6391 shutdown nosave >/dev/null 2>&1
wait_for -t 10 bash -c "! pgrep -x redis-server >/dev/null"

printf 'use sdp server iperf3 *:5202\nuse sdp client iperf3 *:5202\n' >/tmp/iperf.conf
libsdp_bg /tmp/iperf.conf iperf3 -s -1 -B ::1 -p 5202 >/tmp/iperf-s.out 2>&1
srv=$bg_pid
wait_for sdp_listening 5202
rx=$(sdp_stat LocalRxBytes)
with_libsdp /tmp/iperf.conf timeout 60 iperf3 -c ::1 -p 5202 -t 2 -J \
	>/tmp/iperf.json 2>/tmp/iperf-c.err
check_eq "iperf3 over ::1 done" 0 "$?"
wait $srv
sent=$(python3 -c '
import json
print(json.load(open("/tmp/iperf.json"))["end"]["sum_sent"]["bytes"])' 2>/dev/null)
check "iperf3 moved bytes over ::1 ($sent)" test "${sent:-0}" -gt 1000000
check "and they came by the local transport" \
	test $(($(sdp_stat LocalRxBytes) - rx)) -ge "${sent:-1}"

check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
