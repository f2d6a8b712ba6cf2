#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# IPPROTO_SDP: socket(AF_INET, SOCK_STREAM, IPPROTO_SDP) and AF_INET6's
# (Documentation/sdp.rst, "IPPROTO_SDP"), over rxe and by the local
# transport:
#  - sdp_ipproto: the socket's family and protocol (an accepted one's
#    too), /proc/net/sdp, names, 8 MiB each way byte-checked, SO_ZEROCOPY
#    through the socket core and MSG_ZEROCOPY completions (6.7 and later;
#    EOPNOTSUPP before), other socket types refused;
#  - sock_diag (sdpstat) lists them, IPv4 and IPv6;
#  - a TCP-only server: IPPROTO_SDP clients, blocking and non-blocking
#    under epoll, go on by TCP (refused over RDMA, and by the local
#    transport), not with ipproto_fallback=0 nor with SDP_FALLBACK 0;
#  - an IPPROTO_SDP server: TCP's clients reach it too (its listener's
#    TCP twin), not when stopped nor with SDP_FALLBACK 0; a port TCP
#    holds leaves it SDP-only;
#  - the differential suite with every SDP-run socket an IPPROTO_SDP one
#    (SDP_PARITY_INET=1): every step as TCP's or a documented difference;
#  - nothing leaks, the module unloads (its protocols unregistered: a
#    socket() after that fails as for any unknown protocol).
. "$(dirname "$0")/lib.sh"
SDPSTAT="timeout 30 $SDP_REPO/userspace/sdpstat/sdpstat"

sdp_fresh || exit 1
addr=$SDP_ADDR
addr6=$(rxe-up -6) || exit 1
check_eq "ipproto_sdp is IPPROTO_SDP" 261 \
	"$(cat /sys/module/ib_sdp/parameters/ipproto_sdp)"
out=$(timeout 300 sdp_ipproto "$addr" "$addr6" 8600 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "sdp_ipproto over RDMA" 0 "$rc"
check "over RDMA: connections made (ActiveOpens)" \
	test "$(sdp_stat ActiveOpens)" -ge 2
check_eq "an SDP server: no fallback to TCP" 0 "$(sdp_stat ConnFallbacks)"
out=$(timeout 300 sdp_ipproto fallback "$addr" "$addr6" 8630 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "a TCP-only server: IPPROTO_SDP clients go on by TCP (RDMA refused)" 0 "$rc"
out=$(timeout 300 sdp_ipproto twin "$addr" "$addr6" 8660 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "an IPPROTO_SDP server serves TCP's clients too (RDMA)" 0 "$rc"
echo 0 >/sys/module/ib_sdp/parameters/ipproto_fallback
out=$(timeout 60 sdp_ipproto nofallback "$addr" 8634 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "ipproto_fallback=0: refused" 0 "$rc"
echo 1 >/sys/module/ib_sdp/parameters/ipproto_fallback
out=$(timeout 60 sdp_ipproto fbopt "$addr" 8636 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "SDP_FALLBACK 0 on the socket: refused" 0 "$rc"
check_eq "over RDMA: no local connection" 0 "$(sdp_stat LocalActiveOpens)"
# sock_diag (sdpstat) lists them under families 27/28: a listener and
# both ends of a connection on port 8620, IPv4 and IPv6, looked at once
# the program says it has all three (it starts slowly under TCG)
for fam in 4 6; do
	a=$addr
	[ $fam = 6 ] && a=$addr6
	ready=$(mktemp -u)
	python3 -c 'import socket, sys, time
f = socket.AF_INET if sys.argv[1] == "4" else socket.AF_INET6
l = socket.socket(f, socket.SOCK_STREAM, 261)
l.bind((sys.argv[2], 8620)); l.listen()
c = socket.socket(f, socket.SOCK_STREAM, 261)
c.connect((sys.argv[2], 8620)); s, _ = l.accept()
open(sys.argv[3], "w").close()
time.sleep(120)' $fam "$a" "$ready" &
	pid=$!
	for _ in $(seq 300); do
		[ -e "$ready" ] || ! kill -0 $pid 2>/dev/null && break
		sleep 0.2
	done
	check "sock_diag lists IPPROTO_SDP sockets, IPv$fam (sdpstat -$fam)" \
		test "$($SDPSTAT -a -$fam | grep -c ':8620')" -ge 3
	kill $pid 2>/dev/null
	wait $pid
	rm -f "$ready"
done
sdp_check_clean

sdp_unload
sdp_load sdp_local=1 || exit 1
out=$(timeout 300 sdp_ipproto 127.0.0.1 ::1 8610 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "sdp_ipproto, local transport" 0 "$rc"
check_eq "local: every connection local" "$(sdp_stat ActiveOpens)" \
	"$(sdp_stat LocalActiveOpens)"
out=$(timeout 300 sdp_ipproto fallback 127.0.0.1 ::1 8640 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "local: a TCP-only server reached by TCP" 0 "$rc"
out=$(timeout 300 sdp_ipproto twin 127.0.0.1 ::1 8670 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "local: an IPPROTO_SDP server serves TCP's clients too" 0 "$rc"
sdp_check_clean

# the differential suite on IPPROTO_SDP sockets, both transports; make
# check (SDP_QUICK=1), to keep within its time: over RDMA, the cases
# where the family, the protocol or the fallback to TCP show
runs="rdma loopback" cases=()
[ "${SDP_QUICK:-0}" = 1 ] && runs=rdma cases=(socket_flags sockopts \
	refused unreachable nonblock_connect v4mapped zerocopy_dontwait \
	reuseport)
SDP_PARITY_RUNS=$runs SDP_PARITY_ENV="SDP_PARITY_INET=1 ${SDP_PARITY_ENV:-}" \
	"$(dirname "$0")/tcp_parity.sh" "${cases[@]}"
check_eq "the differential suite on IPPROTO_SDP" 0 "$?"

sdp_unload
check "unloaded: IPPROTO_SDP is gone with the module" \
	python3 -c 'import socket, errno
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM, 261)
except OSError as e:
    raise SystemExit(e.errno != errno.EPROTONOSUPPORT)
raise SystemExit(1)'
finish
