#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An outside syscall fuzzer against SDP sockets: Debian's trinity, run as
# nobody, its socket pool made of SDP sockets by an LD_PRELOAD shim
# (trinity_sdp.so: families 27 and 28, IPPROTO_SDP in AF_INET and
# AF_INET6; some listening, some connected to a server of ours with
# regions asked for), fuzzing the socket calls on them for
# SDP_FUZZ_SECS seconds (default 20 with SDP_QUICK=1, as in make check,
# else 120; times SDP_TIME_SCALE) by each
# transport in turn: the local one (127.0.0.1), then RDMA (rxe).
# Afterwards the kernel log is clean (vm-run), no socket, memory or RDMA
# object is left, the module unloads, and a stream over each transport
# moves its bytes intact.
# timeout: 1800
. "$(dirname "$0")/lib.sh"
T=$(cd "$(dirname "$0")" && pwd)
quick_secs=120
[ "${SDP_QUICK:-0}" = 1 ] && quick_secs=20
secs=$((${SDP_FUZZ_SECS:-$quick_secs} * ${SDP_TIME_SCALE:-1}))

command -v trinity >/dev/null || { echo "trinity missing (make deps)"; exit 1; }
SDP_LOCAL=1 sdp_fresh || exit 1
addr=$SDP_ADDR

# the socket calls, on the fuzzer's pool of SDP sockets (not socket()
# itself: its fuzzed calls make sockets of every family)
calls=()
for c in setsockopt getsockopt sendmsg recvmsg sendto recvfrom sendmmsg \
	 recvmmsg connect bind listen accept accept4 shutdown getsockname \
	 getpeername ioctl poll ppoll select epoll_ctl splice tee sendfile \
	 read write readv writev fcntl dup close; do
	calls+=(-c "$c")
done
# every family but INET and INET6 out of its socket pool (its names for
# them): the shim makes SDP sockets of TCP's triplets, and a pool of 50
# takes long to find among random families
others=LOCAL,UNIX,FILE,BRIDGE,ATMPVC,X25,NETBEUI,SECURITY,KEY,NETLINK,ROUTE
others+=,PACKET,ASH,RDS,SNA,PPPOX,WANPIPE,LLC,IB,MPLS,CAN,TIPC,BLUETOOTH
others+=,IUCV,RXRPC,ISDN,PHONET,IEEE802154,ALG,NFC,VSOCK,KCM,QIPCRTR,SMC
others+=,XDP,APPLETALK,ATMSVC,AX25,CAIF,DECnet,ECONET,IRDA,NETROM,ROSE,IPX

for a in 127.0.0.1 "$addr"; do
	fz=$(mktemp -d /tmp/fuzz.XXXXXX)	# no socket cache of an earlier run
	chmod 777 "$fz"
	echo 0 >/sys/module/ib_sdp/parameters/sdp_local
	[ "$a" = 127.0.0.1 ] && echo 1 >/sys/module/ib_sdp/parameters/sdp_local
	# the peer the pool's connected sockets reach: reads and drops
	python3 -c 'import socket, sys, threading
l = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 261)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.setsockopt(27, 88, 1)		# SDP_REGIONS
l.bind((sys.argv[1], 9180)); l.listen(64)
def serve(c):
    try:
        while c.recv(65536): pass
    except Exception: pass
    c.close()
while True:
    c, _ = l.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()' "$a" &
	srv=$!
	wait_for sdp_listening 9180
	opens=$(sdp_stat ActiveOpens)
	seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	echo "# trinity for ${secs}s on $a, seed $seed"
	out=$(cd "$fz" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env LD_PRELOAD="$T/trinity_sdp.so" SDP_FUZZ_PEER="$a:9180" \
		timeout -s INT -k 60 "$secs" trinity -l off -C 2 -E "$others" \
		-s "$seed" --stats --enable-fds=sockets "${calls[@]}" 2>&1)
	rc=$?
	echo "$out" | grep -E '^\[main\] (created|Ran|Bailing)|attempted' | sed 's/^/# /'
	check "trinity ran on $a (it ends by the signal: 124, not $rc)" test "$rc" = 124 ||
		echo "$out" | tail -n 20 | sed 's/^/# /'
	check "... over a pool of SDP sockets" grep -q 'created [1-9][0-9]* sockets' <<<"$out"
	rm -rf "$fz"
	check "... some of them connected ($a)" test "$(sdp_stat ActiveOpens)" -gt "$opens"
	kill $srv
	wait $srv 2>/dev/null
	sdp_wait_gone
	check_eq "... every socket gone after it ($a)" 0 "$(sdp_inuse)"
	# and the stack still carries a stream, byte for byte
	sdp_stream server sdp "$a" 9190 2 >/tmp/fz.server 2>&1 &
	srv=$!
	wait_for sdp_listening 9190
	out=$(timeout 120 sdp_stream client sdp "$a" 9190 2 $((4 << 20)) 7 2>&1)
	check_eq "a stream afterwards on $a (2 x 4 MiB each way)" 0 "$?" ||
		echo "$out"
	wait $srv
	check_eq "... every byte right at the server" 0 "$?" ||
		cat /tmp/fz.server
done
sdp_check_clean
finish
