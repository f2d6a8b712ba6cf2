#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run one suite of the ib_sdp selftests and print TAP (version 13).
#
# Usage: run_tests.sh vm|vm-full|vm-smoke|pair-a|pair-b|cluster|host [TEST...]
#   vm      TEST_PROGS, inside a test bed VM
#   vm-full TEST_PROGS and TEST_FULL_PROGS (make check-full)
#   vm-smoke TEST_SMOKE_PROGS: what make check runs on the test bed's
#           other kernels (6.12)
#   pair-a  TEST_PAIR_PROGS with argument "a", in VM a of a pair
#   pair-b  TEST_PAIR_PROGS with argument "b", in VM b of a pair
#   cluster TEST_CLUSTER_PROGS, on every host of testbed/vm-cluster
#   host    TEST_HOST_PROGS, on the build host
# A test passes with exit 0, is skipped with exit 4 (kselftest's KSFT_SKIP)
# and fails otherwise.  Each has TEST_TIMEOUT seconds (default: what a
# "# timeout: N" line of the test's own says, else the timeout= of
# kselftest's settings file, 600), times SDP_TIME_SCALE (a slower kernel:
# the debug kernel's runs set 3).  config lists the kernel options the
# tests need, as kselftest's config files do.
set -u
cd "$(dirname "$0")" || exit 1

mode=${1:?usage: run_tests.sh vm|vm-full|vm-smoke|pair-a|pair-b|cluster|host [TEST...]}
shift
arg=""
case "$mode" in
vm) vars=TEST_PROGS ;;
vm-full) vars="TEST_PROGS TEST_FULL_PROGS" ;;
vm-smoke) vars=TEST_SMOKE_PROGS ;;
pair-a) vars=TEST_PAIR_PROGS arg=a ;;
pair-b) vars=TEST_PAIR_PROGS arg=b ;;
cluster) vars=TEST_CLUSTER_PROGS ;;
host) vars=TEST_HOST_PROGS ;;
*) echo "run_tests.sh: unknown suite $mode" >&2; exit 2 ;;
esac

if [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=()
	for v in $vars; do
		# shellcheck disable=SC2207
		tests+=($(make -s --no-print-directory "list-$v"))
	done
fi

default_to=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' settings 2>/dev/null)
default_to=${default_to:-600}

# a test whose output stays open this long after it ended fails
held_max=10
ended=$(mktemp)
trap 'rm -f "$ended"' EXIT

echo "TAP version 13"
echo "1..${#tests[@]}"
n=0 failed=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	echo "# selftests: sdp: $t"
	start=$(date +%s)
	to=$(sed -n 's/^# timeout: \([0-9]*\)$/\1/p' "$t" | head -n 1)
	to=${TEST_TIMEOUT:-$(( ${to:-$default_to} * ${SDP_TIME_SCALE:-1} ))}
	# the test's status and when it ended, apart from when its output
	# did: what it left running with the output open (a background
	# sleep) keeps this loop waiting, and runs into the next test
	{
		timeout -k 10 "$to" "./$t" $arg 2>&1
		echo "$? $(date +%s)" >"$ended"
	} | sed -u 's/^/# /'
	read -r rc end <"$ended" || rc=1 end=$start
	secs=$(( $(date +%s) - start ))
	held=$(( $(date +%s) - end ))
	if [ "$held" -gt "$held_max" ] && [ "$rc" = 0 ]; then
		echo "# $t ended, but what it left running kept its output open ${held} s more"
		rc=1
	fi
	case "$rc" in
	0) echo "ok $n selftests: sdp: $t # ${secs}s" ;;
	4) echo "ok $n selftests: sdp: $t # SKIP" ;;
	124) echo "not ok $n selftests: sdp: $t # TIMEOUT ${to}s"
	     failed=$((failed + 1)) ;;
	*) echo "not ok $n selftests: sdp: $t # exit=$rc"
	   failed=$((failed + 1)) ;;
	esac
done
# a test that powers its host off mid-run (cluster.sh) leaves this mark:
# the results are out first, then the power goes, as if pulled
if [ -e /run/sdp-poweroff ]; then
	echo "# powering off, as a test asked"
	sync
	# an immediate reset, which QEMU (-no-reboot) ends like a pulled
	# plug.  Not poweroff -f: it shuts the devices down first, and
	# Debian 6.1's virtio_dev_shutdown() breaks the NIC's queues under
	# a kernel thread still sending (siw_tx): virtio_net's start_xmit()
	# then spins for ever on the broken queue, and the host never goes
	echo b >/proc/sysrq-trigger
fi
[ "$failed" = 0 ]
