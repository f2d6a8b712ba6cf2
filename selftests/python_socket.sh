#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Python's own test_socket, run twice in one VM: as it is (TCP), then with
# every TCP socket it makes an IPPROTO_SDP one (sdp_bpf run, 6.6 and later;
# the local transport, as the suite talks to localhost).  Every test that
# passes on TCP must pass on SDP, unless Documentation/sdp-bpf.rst lists it
# ("Python's test_socket"); the lists of failures are printed.
. "$(dirname "$0")/lib.sh"

BPF=$SDP_REPO/userspace/sdp_bpf/sdp_bpf
SDP_LOCAL=1 sdp_fresh || exit 1
if ! $BPF check >/dev/null 2>&1; then
	echo "# SKIP: $(uname -r) has no update_socket_protocol hook"
	sdp_check_clean
	finish
fi
grep -q cgroup2 /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup
python3 -c 'import test.test_socket' 2>/dev/null || {
	echo "# SKIP: no Python test suite (test.test_socket)"
	sdp_check_clean
	finish
}

# the tests known to differ, and why (Documentation/sdp-bpf.rst)
known='^$'

fails() {
	grep -E '^(FAIL|ERROR): ' | sed -E 's/^(FAIL|ERROR): //' | sort -u
}
tcp=$(cd /tmp && timeout 1500 python3 -m unittest test.test_socket 2>&1)
tcp_fails=$(fails <<<"$tcp")
echo "# TCP: $(tail -n 3 <<<"$tcp" | tr '\n' ' ')"
opens=$(sdp_stat ActiveOpens)
sdp=$(cd /tmp && timeout 2400 $BPF run -- python3 -m unittest test.test_socket 2>&1)
sdp_fails=$(fails <<<"$sdp")
echo "# SDP: $(tail -n 3 <<<"$sdp" | tr '\n' ' ')"
check "the SDP run used SDP connections ($(($(sdp_stat ActiveOpens) - opens)))" \
	test "$(sdp_stat ActiveOpens)" -gt $((opens + 50))
new=$(comm -13 <(echo "$tcp_fails") <(echo "$sdp_fails") | grep -vE "$known")
echo "$tcp_fails" | sed 's/^/# TCP fails: /'
echo "$sdp_fails" | sed 's/^/# SDP fails: /'
check_eq "no test fails on SDP that passes on TCP" "" "$new"
pkill -f "unittest test.test_socket"
sdp_check_clean
finish
