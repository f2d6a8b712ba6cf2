#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The newest surfaces as hostile ground, by an unprivileged local user
# (sdp_harden runs as nobody; Documentation/sdp.rst, "What a local user
# can do"), by the local transport and over rxe:
#  - the TCP twin of an IPPROTO_SDP listener under poll() and accept()
#    while its socket turns client and listener again, many times: the
#    twin lives until close (it was freed under them: an oops);
#  - two threads connecting one IPPROTO_SDP socket by TCP's fallback and
#    disconnecting it (a fallback freed under a connect() waiting on it);
#  - regions: a peer's WRITE stalled on a fault of its own buffer; the
#    owner's SDP_REGION_DEREG or close() returns at once and no byte of
#    the region moves afterwards; a DEREG while the region's RegionAdv
#    waits behind data for credits does not reset the connection; a
#    MSG_ZEROCOPY op past RLIMIT_MEMLOCK keeps no page pinned after it;
#  - /dev/sdp_az: a send naming 64 TiB of write-protected memory is
#    refused at once (its pages were walked, unkillably: soft lockups),
#    one past RLIMIT_MEMLOCK is charged before anything is looked at;
#  - a Landlock sandbox that allows TCP connects to one port holds for
#    SDP (6.7 and later): families 27/28 and IPPROTO_SDP, a program
#    moved by libsdp and one moved by the BPF policy, by either transport;
#  - the kernel log stays clean (vm-run), nothing leaks, the module
#    unloads.
# SDP_HARDEN_SECS: seconds of each race (default 10; 5 in make check,
# SDP_QUICK=1, and 3 in its smoke suite, SDP_SMOKE=1, whose kernel runs
# them 10 s in make check-full: the smoke suite is there for what
# differs by kernel, here the Landlock part).
. "$(dirname "$0")/lib.sh"
T=$(dirname "$0")
race=10
[ "${SDP_QUICK:-0}" = 1 ] && race=5
[ "${SDP_SMOKE:-0}" = 1 ] && race=3
secs=$((${SDP_HARDEN_SECS:-$race} * ${SDP_TIME_SCALE:-1}))

SDP_LOCAL=1 sdp_fresh || exit 1
addr=$SDP_ADDR

for a in 127.0.0.1 "$addr"; do
	echo 0 >/sys/module/ib_sdp/parameters/sdp_local
	[ "$a" = 127.0.0.1 ] && echo 1 >/sys/module/ib_sdp/parameters/sdp_local
	out=$(timeout $((secs * 3 + 120)) "$T/sdp_harden" twin-race "$a" 9100 "$secs" 2>&1)
	prog_result "twin-race on $a: the twin stays while poll() and accept() use it" \
		"$out" $?
	out=$(timeout $((secs * 3 + 120)) "$T/sdp_harden" fb-race "$a" 9110 "$secs" 2>&1)
	prog_result "fb-race on $a: a fallback outlives the connect() that waits on it" \
		"$out" $?
done

# regions: no byte moves once DEREG or close() has returned, by either
# transport, and a region's end never overtakes its advertisement
for a in 127.0.0.1 "$addr"; do
	echo 0 >/sys/module/ib_sdp/parameters/sdp_local
	[ "$a" = 127.0.0.1 ] && echo 1 >/sys/module/ib_sdp/parameters/sdp_local
	for how in dereg close; do
		out=$(timeout 180 "$T/sdp_harden" region-life "$a" 9150 $how 2>&1)
		prog_result "region-life $how on $a: the region still once it returned" \
			"$out" $?
	done
done
perr=$(sdp_stat ProtoErrors)
out=$(timeout 180 "$T/sdp_harden" region-order "$addr" 9160 2>&1)
prog_result "region-order over RDMA: a DEREG behind queued data, no reset" \
	"$out" $?
check_eq "... no protocol error" "$perr" "$(sdp_stat ProtoErrors)"
out=$(timeout 180 "$T/sdp_harden" region-zc "$addr" 9165 2>&1)
prog_result "region-zc over RDMA: MSG_ZEROCOPY past RLIMIT_MEMLOCK waits, pins nothing after" \
	"$out" $?

echo 1 >/sys/module/ib_sdp/parameters/sdp_local
out=$(timeout 180 "$T/sdp_harden" az-walk 127.0.0.1 9120 2>&1)
prog_result "az-walk: /dev/sdp_az ranges bounded by the send, charged first" \
	"$out" $?

# Landlock (ABI 4, 6.7+): the kernel's own sandbox for TCP
for a in 127.0.0.1 "$addr"; do
	echo 0 >/sys/module/ib_sdp/parameters/sdp_local
	[ "$a" = 127.0.0.1 ] && echo 1 >/sys/module/ib_sdp/parameters/sdp_local
	out=$(timeout 120 "$T/sdp_harden" landlock "$a" 9130 2>&1)
	rc=$?
	if [ "$rc" = 4 ]; then
		echo "# $(uname -r) has no Landlock network rules: not here"
		break
	fi
	prog_result "Landlock's TCP connect rules hold for SDP on $a" "$out" $rc
done
if [ "$rc" != 4 ]; then
	# unmodified programs moved onto SDP, in the same sandbox
	echo 1 >/sys/module/ib_sdp/parameters/sdp_local
	conf=/tmp/harden.libsdp.conf
	echo 'use sdp client * *:*' >$conf
	chmod 644 $conf
	python3 -c 'import socket, time
l = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 261)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", 9140)); l.listen(8)
m = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 261)
m.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
m.bind(("127.0.0.1", 9141)); m.listen(8)
time.sleep(60)' &
	srv=$!
	wait_for sdp_listening 9141
	opens=$(sdp_stat LocalActiveOpens)
	out=$(with_libsdp $conf "$T/sdp_harden" sandbox 9140 -- \
		"$T/sdp_harden" connect 127.0.0.1 9141)
	check_eq "libsdp-moved client, sandboxed, to a port it may not reach" \
		"connect EACCES" "$out"
	out=$(with_libsdp $conf "$T/sdp_harden" sandbox 9140 -- \
		"$T/sdp_harden" connect 127.0.0.1 9140)
	check_eq "... to the one it may: by SDP" "connect ok 6" "$out"
	check "... LocalActiveOpens counts it" \
		test "$(sdp_stat LocalActiveOpens)" -gt "$opens"
	# a server's bind: libsdp asks TCP's bind() first (the module
	# cannot run bind's hooks for SDP: Documentation/sdp.rst)
	echo 'use sdp server * *:*' >$conf.srv
	chmod 644 $conf.srv
	out=$(with_libsdp $conf.srv "$T/sdp_harden" sandbox 9140 -- \
		"$T/sdp_harden" bind 127.0.0.1 9142)
	check_eq "libsdp-moved server, sandboxed with no bind allowed" \
		"bind EACCES" "$out"
	out=$(with_libsdp $conf.srv "$T/sdp_harden" bind 127.0.0.1 9142)
	check_eq "... the same outside the sandbox" "bind ok" "$out"
	BPF=$SDP_REPO/userspace/sdp_bpf/sdp_bpf
	grep -q cgroup2 /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup
	if $BPF check >/dev/null 2>&1; then
		out=$($BPF run -- "$T/sdp_harden" sandbox 9140 -- \
			"$T/sdp_harden" connect 127.0.0.1 9141 2>&1 | grep '^connect')
		check_eq "BPF-moved client, sandboxed, to a port it may not reach" \
			"connect EACCES" "$out"
		out=$($BPF run -- "$T/sdp_harden" sandbox 9140 -- \
			"$T/sdp_harden" connect 127.0.0.1 9140 2>&1 | grep '^connect')
		check_eq "... to the one it may: IPPROTO_SDP" "connect ok 261" "$out"
	fi
	kill $srv
	wait $srv 2>/dev/null
fi

sdp_check_clean
finish
