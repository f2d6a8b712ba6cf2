#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The RDMA device goes away under live connections and a listener: the
# connections fail (the programs see an error, nobody hangs), everything
# ib_sdp held on the device is freed, and the module unloads.
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
sdp_unload
sdp_load || exit 1

sdp_stream server sdp "$addr" 7600 2 >/tmp/srv.out 2>&1 &
srv=$!
sdp_stream client sdp "$addr" 7600 2 $((1 << 30)) 5 >/tmp/cli.out 2>&1 &
cli=$!
for _ in $(seq 100); do
	[ "$(awk '$NF == "1"' /proc/net/sdp | wc -l)" = 4 ] && break
	sleep 0.1
done
check_eq "two connections established" 4 "$(awk '$NF == "1"' /proc/net/sdp | wc -l)"
sleep 1
rdma link delete rxe0
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
check_eq "no PD left on the removed device" 0 "$(sdp_pd_count)"
sdp_check_clean
finish
