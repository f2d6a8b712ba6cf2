#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SDP over iWARP: Soft-iWARP (siw, built by testbed/build-siw) in place of
# Soft-RoCE, in one VM, a short run of what differs most between them:
#  - stream_integrity.sh with 4 streams of 16 MiB each way: the set-up
#    through iw_cm (MPA: the initiator speaks first), Hello/HelloAck in
#    the private data, BCopy, ZCopy by RDMA READ (on iWARP the READ's
#    sink needs remote write access: rdma_rw takes care of it), the close
#    and the teardown; every byte checked, nothing left;
#  - sdp_zc sink: a waiting reader's SinkAvail, written by RDMA WRITE;
#  - connect() where TCP holds the source port rdma_cm picked: another
#    port is taken, and with none left the error is TCP's; listen()
#    without bind() where TCP holds the port rdma_cm picked: another,
#    on IPv4 and on IPv6's dual-stack wildcard;
#  - a listener with a backlog of 1 after four connections to its port
#    that complete at once and close unaccepted, on the test bed's siw
#    and on siw without its fix (testbed/siw-patches/0001).
# make check-full runs whole suites over siw (testbed/check), zcopy.sh's
# hostile peer among them.  Runs last in the VM suite: it puts Soft-RoCE
# back when done.
. "$(dirname "$0")/lib.sh"

if [ ! -f "$SIW_KO" ]; then
	echo "no Soft-iWARP for this kernel (testbed/build-siw did not build it): skipped"
	exit 4
fi
sdp_unload
rdma link delete rxe0 2>/dev/null
export SDP_RDMA=siw
addr=$(rxe-up) || exit 1
check "siw0 is an iWARP device" \
	bash -c 'ibv_devinfo -d siw0 | grep -q "transport:.*iWARP"'

SDP_STREAMS=4 SDP_STREAM_MIB=16 ./stream_integrity.sh 2>&1 | sed 's/^/# /'
check_eq "stream_integrity.sh over siw" 0 "${PIPESTATUS[0]}"

sdp_load || exit 1
out=$(timeout 300 sdp_zc sink "$addr" 8105 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "sdp_zc sink over siw" 0 "$rc"
check "the reader's SinkAvails were written into" \
	test "$(sdp_stat RxZcopySinkBytes)" -gt 0
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"

# connect() from a port TCP holds: rdma_cm picks source ports blind to
# TCP's, and on iWARP each is a TCP port too.  100 ephemeral ports, above
# the default range so that no earlier connection left one in TIME_WAIT:
# with all of them bound by TCP sockets SDP's connect fails as TCP's;
# with half of them, 20 connects all succeed (each would fail one time in
# two without trying another port).
range=$(cat /proc/sys/net/ipv4/ip_local_port_range)
echo "61000 61099" >/proc/sys/net/ipv4/ip_local_port_range
# hold_ports STEP: TCP sockets bound to every STEP-th port of the range
hold_ports() {
	python3 -c 'import socket, sys, time
ss = []
for p in range(61000, 61100, int(sys.argv[2])):
    s = socket.socket()
    s.bind((sys.argv[1], p))
    ss.append(s)
print("held", len(ss), flush=True)
time.sleep(300)' "$addr" "$1" >/tmp/hold.out &
	holder=$!
	for _ in $(seq 100); do
		grep -q held /tmp/hold.out && break
		sleep 0.1
	done
	check "TCP holds ports ($(cat /tmp/hold.out))" grep -q held /tmp/hold.out
}
# first with every port TCP's (before SDP's own closed connections hold
# some in TIME_WAIT)
hold_ports 1
tcp=$(timeout 60 sdp_scale hold tcp "$addr" 8111 1 </dev/null 2>&1 | grep '^# connection')
sdp=$(timeout 120 sdp_scale hold sdp "$addr" 8112 1 </dev/null 2>&1 | grep '^# connection')
check "no port left: TCP's connect fails ($tcp)" test -n "$tcp"
check_eq "no port left: SDP's connect fails as TCP's" "$tcp" "$sdp"
kill $holder; wait $holder 2>/dev/null
hold_ports 2
r0=$(sdp_stat ConnPortRetries)
out=$(timeout 120 sdp_scale hold sdp "$addr" 8110 20 </dev/null 2>&1)
check_eq "20 connects with half the ports TCP's ($out)" 0 "$?"
check "they took other ports (ConnPortRetries)" \
	test "$(sdp_stat ConnPortRetries)" -gt "$r0"
# listen() without bind(): rdma_cm picks the port, and siw listens on it
# in TCP too; 20 listeners at once, TCP's and SDP's, each listen would
# fail one time in two without trying another port
listen_any() {
	python3 -c 'import socket, sys
ls = []
for i in range(20):
    s = socket.socket(int(sys.argv[1]), socket.SOCK_STREAM)
    try:
        s.listen(1)
    except OSError as e:
        print("listen", len(ls) + 1, e.strerror)
        sys.exit(1)
    ls.append(s)
print("20 listening")' "$1" 2>&1
}
# listen_case TCP_FAMILY SDP_FAMILY WHERE: 20 unbound listeners of each
listen_case() {
	local r0 tcp sdp
	r0=$(sdp_stat ListenPortRetries)
	tcp=$(listen_any "$1")
	sdp=$(listen_any "$2")
	check_eq "20 unbound TCP listeners $3, half the ports TCP's" "20 listening" "$tcp"
	check_eq "20 unbound SDP listeners $3, as TCP's" "$tcp" "$sdp"
	check "they took other ports (ListenPortRetries)" \
		test "$(sdp_stat ListenPortRetries)" -gt "$r0"
}
listen_case 2 27 "on 0.0.0.0"
# IPv6's wildcard takes IPv4 too: SDP listens on two ids, the IPv4 twin's
# port is the one TCP holds, and both are given up
listen_case 10 28 "on [::]"
kill $holder; wait $holder 2>/dev/null
echo "$range" >/proc/sys/net/ipv4/ip_local_port_range

# burst FAMILY PORT: a listener with a backlog of 1; four TCP connections
# to its port complete at once (netem holds every packet on lo 200 ms)
# and close; then a connection of the listener's family.  A thread
# accepts all along.  On iWARP the listener's port is the device's TCP
# listener: each connection is an event for siw, and Soft-iWARP keeps as
# many for a listener as rdma_listen()'s backlog says; a connection whose
# event found none was never accepted, and its close then closed the
# listener (6.1; testbed/siw-patches/0001): refused from then on.
burst() {
	python3 - "$addr" "$2" "$1" <<'PY' 2>&1
import ctypes, os, socket, struct, subprocess, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
addr, port, fam = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sa = struct.pack("=HH4s8x", socket.AF_INET, socket.htons(port),
                 socket.inet_aton(addr))
def err():
    return os.strerror(ctypes.get_errno())
l = socket.socket(fam, socket.SOCK_STREAM)
if libc.bind(l.fileno(), sa, len(sa)) or libc.listen(l.fileno(), 1):
    sys.exit("listen: " + err())
def accepter():
    while True:
        fd = libc.accept(l.fileno(), None, None)
        if fd < 0:
            return
        os.close(fd)
threading.Thread(target=accepter, daemon=True).start()
subprocess.run("tc qdisc add dev lo root netem delay 200ms".split(), check=True)
try:
    burst = [socket.socket() for _ in range(4)]
    for s in burst:
        s.setblocking(False)
        s.connect_ex((addr, port))
    time.sleep(1.5)
    for s in burst:
        s.close()
    time.sleep(1.5)
finally:
    subprocess.run("tc qdisc del dev lo root".split())
time.sleep(1)
c = socket.socket(fam, socket.SOCK_STREAM)
if libc.connect(c.fileno(), sa, len(sa)):
    print("then connect:", err())
else:
    print("then connect: ok")
PY
}
tcp=$(burst 2 7830)
sdp=$(burst 27 7831)
check_eq "a TCP listener after a burst of closed connections" "then connect: ok" "$tcp"
check_eq "an SDP listener after it, as TCP's" "$tcp" "$sdp"
sdp_check_clean

rdma link delete siw0
rmmod siw
# the same on Soft-iWARP as Debian's source has it, without the fix: SDP
# gives rdma_listen() room for the burst (SDP_CM_BACKLOG)
export SDP_SIW_KO=$SIW_STOCK_KO
if [ -f "$SDP_SIW_KO" ]; then
	sdp_unload
	addr=$(rxe-up) || exit 1
	sdp_load || exit 1
	sdp=$(burst 27 7832)
	check_eq "on siw without the fix, an SDP listener after the burst" \
		"$tcp" "$sdp"
	sdp_check_clean
	rdma link delete siw0
	rmmod siw
fi
unset SDP_RDMA SDP_SIW_KO
check "Soft-RoCE back" rxe-up
finish
