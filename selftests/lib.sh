# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the ib_sdp shell selftests (sourced).

SELFTESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SDP_REPO=${SDP_REPO:-$(cd "$SELFTESTS_DIR/.." && pwd)}
SDP_KO=$SDP_REPO/net/sdp/ib_sdp.ko
KVER=${KVER:-$(uname -r)}
PATH=$SELFTESTS_DIR:$SDP_REPO/testbed:$PATH
KSFT_SKIP=4

checks=0
failures=0

# check DESCRIPTION COMMAND [ARG...]: run COMMAND, record the result.
check() {
	local desc=$1
	shift
	checks=$((checks + 1))
	if "$@"; then
		echo "ok   $desc"
	else
		failures=$((failures + 1))
		echo "FAIL $desc"
	fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	checks=$((checks + 1))
	if [ "$2" = "$3" ]; then
		echo "ok   $1 ($3)"
	else
		failures=$((failures + 1))
		echo "FAIL $1: expected '$2', got '$3'"
	fi
}

finish() {
	echo "$checks checks, $failures failed"
	[ "$failures" = 0 ] && exit 0
	exit 1
}

sdp_loaded() {
	[ -d /sys/module/ib_sdp ]
}

# sdp_load [PARAM=VALUE...]: load the module built in this tree.
sdp_load() {
	modprobe rdma_cm && insmod "$SDP_KO" "$@"
}

sdp_unload() {
	if sdp_loaded; then
		rmmod ib_sdp
	fi
}

# Number of protection domains ib_sdp holds (one per RDMA device).
sdp_pd_count() {
	rdma resource show pd 2>/dev/null | grep -c 'comm \[ib_sdp\]'
}
