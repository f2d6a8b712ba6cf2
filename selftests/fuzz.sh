#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The protocol fuzzer (sdp_fuzz) against ib_sdp: a peer that speaks SDP
# well enough to pass the sequence and credit checks sends seeded random
# and mutated messages, wild SrcAvails and SinkAvails, completions for
# nothing, RDMA with stale and guessed keys, stops reposting, withholds
# the RTU, and as a server answers an SDP client with bad HelloAcks.
# After each seed the same listener must still serve a correct client
# (1 MiB through its echo, every byte checked); at the end the errors are
# counted, every socket, QP, CQ and MR is gone, and the module unloads.
# The test bed fails the run on any oops, WARN or hung task.
#
# TEST_FUZZ_SEEDS (default 1) seeds of TEST_FUZZ_MESSAGES (default 5000)
# messages each, starting at TEST_FUZZ_SEED (default 1): "make fuzz
# SEEDS=N" runs long.  A failing seed replays with the same numbers (each
# connection's own seed is printed too).
. "$(dirname "$0")/lib.sh"

seeds=${TEST_FUZZ_SEEDS:-1}
msgs=${TEST_FUZZ_MESSAGES:-5000}
first=${TEST_FUZZ_SEED:-1}

addr=$(rxe-up) || exit 1
trap 'pkill -x sdp_fuzz' EXIT
sdp_unload
sdp_load || exit 1

sdp_fuzz target "$addr" 8400 >/tmp/target.out 2>&1 &
target=$!
wait_for grep -q listening /tmp/target.out
proto0=$(sdp_stat ProtoErrors) hello0=$(sdp_stat HelloErrors)

for seed in $(seq "$first" $((first + seeds - 1))); do
	out=$(timeout 1800 sdp_fuzz peer "$addr" 8400 "$seed" "$msgs" 2>&1)
	rc=$?
	echo "$out" | tail -n 3
	check_eq "seed $seed: $msgs messages sent ($(grep -c '^conn' <<<"$out") connections)" 0 "$rc"
	check_eq "seed $seed: the listener still serves a correct client (1 MiB checked)" \
		ok "$(timeout 120 sdp_fuzz check "$addr" 8400 2>&1)"
done

out=$(timeout 600 sdp_fuzz server "$addr" 8401 "$first" 40 2>&1)
rc=$?
echo "$out" | tail -n 3
check_eq "as a server, 40 connections from an SDP client" 0 "$rc"

kill "$target"
wait "$target" 2>/dev/null
check "protocol errors counted ($(($(sdp_stat ProtoErrors) - proto0)))" \
	test "$(sdp_stat ProtoErrors)" -gt "$proto0"
check "bad Hellos and HelloAcks counted ($(($(sdp_stat HelloErrors) - hello0)))" \
	test "$(sdp_stat HelloErrors)" -gt "$hello0"
for c in ConnAborted StallTimeouts EmbryoTimeouts CqErrors QpErrors \
	 ZcopyReads RxSrcAvail RxSinkAvail; do
	echo "# $c $(sdp_stat $c)"
done
sdp_check_clean
finish
