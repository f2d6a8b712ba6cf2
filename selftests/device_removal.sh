#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The RDMA device goes away under 8 live transfers, a listener bound to
# its address with a child not yet accepted and a request that never
# completed (no RTU): the transfers fail (the programs see an error,
# nobody hangs), everything ib_sdp held on the device is freed, and the
# module unloads.  With the device back, the same listener socket
# listens again and accepts, and new connections work.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR

# a listener bound to the device's address with a child in its accept
# queue, held until the device goes (set up before the load, which slows
# every step of this script)
coproc L { sdp_hold listen "$addr" 7601; }
read -r -t 30 line <&"${L[0]}"
check_eq "a listener on $addr" ready "$line"
timeout 900 sdp_evil "$addr" 7601 hold 600 >/tmp/held.out 2>&1 &
held=$!
wait_for -t 30 grep -q established /tmp/held.out

sdp_stream server sdp "$addr" 7600 8 >/tmp/srv.out 2>&1 &
srv=$!
sleep 0.5
sdp_stream client sdp "$addr" 7600 8 $((1 << 30)) 5 >/tmp/cli.out 2>&1 &
cli=$!
streams() { test "$(awk '$NF == "1"' /proc/net/sdp | wc -l)" -ge 17; }
wait_for -t 30 streams
check "8 connections established" streams

# a request that never sends its RTU (an embryo), last: it lives
# SDP_EMBRYO_TIMEOUT (10 s)
timeout 900 sdp_evil "$addr" 7601 embryos 1 600 >/tmp/embryo.out 2>&1 &
embryo=$!
wait_for -t 30 grep -q holding /tmp/embryo.out
# 16 transfer ends and the queued child (1), the embryo (3)
rows=$(awk '$NF == "1" || $NF == "3"' /proc/net/sdp | wc -l)
check_eq "8 transfers, a child queued, not accepted, and an embryo" 18 "$rows" ||
	cat /proc/net/sdp /tmp/held.out /tmp/embryo.out /tmp/cli.out /tmp/srv.out
# the removal waits for every process that has the device open, and the
# embryo's client sleeps on: it goes once the embryo has gone here
rdma link delete rxe0 &
del=$!
embryo_gone() { ! awk '$NF == "3"' /proc/net/sdp | grep -q .; }
wait_for -t 60 embryo_gone
kill $embryo
wait $del
check "rxe0 removed" bash -c '! rdma link show rxe0/1 2>/dev/null'

# both programs must end by themselves, with an error
for _ in $(seq 150); do
	kill -0 $cli 2>/dev/null || kill -0 $srv 2>/dev/null || break
	sleep 0.2
done
check "the client ended by itself" bash -c "! kill -0 $cli 2>/dev/null"
check "the server ended by itself" bash -c "! kill -0 $srv 2>/dev/null"
kill $cli $srv 2>/dev/null
wait $cli
crc=$?
check "the client failed (error or SIGPIPE, status $crc)" test $crc -ne 0
wait $srv
rc=$?
cat /tmp/cli.out /tmp/srv.out | sort | uniq -c | head
check "the server failed (status $rc)" test $rc -ne 0
# each saw ENETDOWN or ECONNRESET, or, writing after a reader had taken
# the error, EPIPE and SIGPIPE (status 141), as with TCP
check "the failures are errors of a lost connection" \
	bash -c "grep -qE 'Network is down|Connection reset|Broken pipe' /tmp/cli.out /tmp/srv.out || grep -q 141 <<<'$crc $rc'"
kill $held $embryo 2>/dev/null
wait $held $embryo 2>/dev/null
for _ in $(seq 50); do [ "$(sdp_pd_count)" = 0 ] && break; sleep 0.1; done
check_eq "no PD left on the removed device" 0 "$(sdp_pd_count)"

# the device comes back: the listener whose id went with it listens
# again, and accepts
addr=$(rxe-up)
echo listen >&"${L[1]}"
read -r -t 30 line <&"${L[0]}"
check_eq "the same listener listens again once the device is back" \
	"listen: success" "$line"
echo accept >&"${L[1]}"
check_eq "a client connects to it" established \
	"$(timeout 60 sdp_evil "$addr" 7601 valid 2>&1)"
read -r -t 30 line <&"${L[0]}"
check_eq "and it accepts" "accept: success" "$line"
fd=${L[1]}; exec {fd}>&-
wait "$L_PID"
check_eq "new connections work" ok \
	"$(sdp_stream server sdp "$addr" 7602 1 >/dev/null 2>&1 &
	   sleep 0.5
	   sdp_stream client sdp "$addr" 7602 1 $((1 << 20)) 7 >/dev/null 2>&1 && echo ok)"
sdp_check_clean
finish
