#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test bed itself: Soft-RoCE comes up in the VM and carries a real RC
# connection between two processes (qperf rc_lat over rdma_cm), and the
# running kernel has every option the tests need (config, as kselftest's).
. "$(dirname "$0")/lib.sh"

kconfig=/boot/config-$(uname -r)
missing=$(while read -r line; do
	opt=${line%%=*}
	grep -qE "^$opt=(y|m)$" "$kconfig" || echo "$opt"
done <"$(dirname "$0")/config" | xargs)
check_eq "the kernel has every option of selftests/config" "" "$missing"

addr=$(rxe-up)
check "rxe-up gives an address" test -n "$addr"
check "rxe0 is ACTIVE" bash -c 'rdma link show rxe0/1 | grep -q "state ACTIVE"'
check "ibv_devices lists rxe0" bash -c 'ibv_devices | grep -q rxe0'

qperf -lp 19765 >/dev/null 2>&1 &
srv=$!
sleep 1
out=$(timeout 120 qperf -lp 19765 -cm1 -t 2 "$addr" rc_lat 2>&1)
echo "$out"
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
lat=$(echo "$out" | awk '/latency/ {print $3}')
check "qperf -cm1 rc_lat measured a latency ($lat)" \
	bash -c "[ -n '$lat' ] && awk 'BEGIN { exit !($lat > 0) }'"
finish
