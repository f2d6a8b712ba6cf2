#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sdpstat --why where SDP is there (over rxe; why_host.sh has the
# reasons the host can show without the module): for each socket of a
# program, on SDP or on TCP and why, for every way a socket gets there:
#  - libsdp: a "use sdp" connect (on SDP, rdma); a "use both" connect to a
#    TCP-only server (refused: TCP, ECONNREFUSED); a "use both" connect to
#    an address of this host with the local transport off (no RDMA
#    route: TCP, ENODEV, "sdp_local=0"); a "use both" listener (on TCP
#    and SDP) and the two connections it accepted, one by SDP and one by
#    TCP;
#  - the module: an IPPROTO_SDP connect to a TCP-only server, gone on by
#    TCP (the errno SDP's connect met, and TCP's socket's state); a
#    TCP client accepted by an IPPROTO_SDP listener's TCP side; an
#    AF_INET_SDP socket;
#  - with the BPF policy (6.6 and later), a program under "sdp_bpf run"
#    that reaches a TCP-only server by the fallback.
. "$(dirname "$0")/lib.sh"

SDPSTAT=$SDP_REPO/userspace/sdpstat/sdpstat
BPF=$SDP_REPO/userspace/sdp_bpf/sdp_bpf
sdp_fresh || exit 1
addr=$SDP_ADDR
# RDMA even to this VM's own address (no local transport), as one VM can
echo 0 >/sys/module/ib_sdp/parameters/sdp_local
proto=$(cat /sys/module/ib_sdp/parameters/ipproto_sdp)

# hold READY ACTION...: make the sockets the actions say, write READY,
# then wait to be killed.  Actions: tcp-listen:PORT, sdp-listen:PORT
# (IPPROTO_SDP), sdponly-listen:PORT (IPPROTO_SDP, SDP_FALLBACK 0: no
# TCP side), connect:ADDR:PORT (TCP's triplet), sdp-connect:ADDR:PORT
# (IPPROTO_SDP), accept:N (N from the last listener), accept-all (for
# ever, in a thread).
hold_prog='import socket, sys, threading, time
ready, acts = sys.argv[1], sys.argv[2:]
P = int("'"$proto"'")
keep, last = [], None
for a in acts:
    kind, _, arg = a.partition(":")
    if kind.endswith("listen"):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM,
                          0 if kind == "tcp-listen" else P)
        if kind == "sdponly-listen":
            s.setsockopt(27, 89, 0)		# SOL_SDP, SDP_FALLBACK
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", int(arg))); s.listen(64); last = s
    elif kind == "accept":
        for _ in range(int(arg)):
            keep.append(last.accept()[0])
        continue
    elif kind == "accept-all":
        l = last
        threading.Thread(target=lambda: [keep.append(l.accept()[0])
                                         for _ in iter(int, 1)],
                         daemon=True).start()
        continue
    else:
        host, port = arg.rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM,
                          P if kind == "sdp-connect" else 0)
        s.settimeout(30); s.connect((host, int(port)))
    keep.append(s)
open(ready, "w").write("ready")
time.sleep(600)'
hold() {	# CONF|- READY ACTION...: in the background, bg_pid
	local conf=$1
	shift
	rm -f "$1"
	if [ "$conf" = - ]; then
		python3 -c "$hold_prog" "$@" &
		bg_pid=$!
	else
		libsdp_bg "$conf" python3 -c "$hold_prog" "$@"
	fi
}

# why PID KEY=VALUE: "ON|WHY" of the socket of PID whose KEY (peer,
# local, state) is VALUE (the first such)
why() {
	"$SDPSTAT" --why -j "$1" 2>/dev/null | python3 -c '
import json, sys
key, val = sys.argv[1].split("=", 1)
for s in json.load(sys.stdin)["sockets"]:
    if s[key] == val:
        print(s["on"] + "|" + s["why"]); break' "$2"
}
expect() {	# description PID KEY=VALUE REGEX
	local w
	w=$(why "$2" "$3")
	check "$1" grep -qE "$4" <<<"$w" || echo "# got: $w"
}

# the servers: TCP only (7801), SDP only (7802)
hold - /tmp/why.s tcp-listen:7801 accept-all sdponly-listen:7802 \
	accept-all
srv=$bg_pid
wait_for test -s /tmp/why.s

conf=$(mktemp)
cat >"$conf" <<EOF
# why.sh
use sdp client python3 $addr:7802
use both client python3 *:7801
use both client python3 127.0.0.1:7804
use both server python3 *:7804
EOF

# libsdp: sdp, both refused
hold "$conf" /tmp/why.a connect:$addr:7802 connect:$addr:7801
a=$bg_pid
wait_for test -s /tmp/why.a
expect "\"use sdp\": on SDP over RDMA, the rule and its line" $a \
	peer=$addr:7802 '^SDP/rdma\|libsdp: a "use sdp" rule \(libsdp.conf line 2\)'
expect "\"use both\" to a TCP-only server: TCP, refused" $a \
	peer=$addr:7801 '^TCP\|libsdp: a "use both" rule, but the peer refused SDP .*\(Connection refused\) \(libsdp.conf line 3\)'

# libsdp: a "use both" listener, then an SDP and a TCP client of it
hold "$conf" /tmp/why.b tcp-listen:7804 accept:2
b=$bg_pid
wait_for sdp_listening 7804
wait_for tcp_listening 7804
hold - /tmp/why.g sdp-connect:$addr:7804 connect:$addr:7804
g=$bg_pid
wait_for test -s /tmp/why.b
expect "\"use both\" listener: on TCP and SDP" $b local=0.0.0.0:7804 \
	'libsdp: a "use both" listener, on TCP and SDP \(libsdp.conf line 5\)'
check_eq "... and its two connections" 2 \
	"$("$SDPSTAT" --why -j $b | grep -o '"state":"ESTAB"' | wc -l)"
w=$("$SDPSTAT" --why $b)
check "... one accepted by SDP" grep -qE '^[0-9]+ +python3 +[0-9]+ SDP/rdma .*accepted by SDP on a "use both" listener' <<<"$w" ||
	echo "$w" | sed 's/^/# /'
check "... one accepted by TCP: the client spoke TCP" \
	grep -qE '^[0-9]+ +python3 +[0-9]+ TCP .*accepted by TCP on a "use both" listener: the client spoke TCP' <<<"$w"

# libsdp: "use both" to this host with the local transport off (it
# reaches b's TCP side)
hold "$conf" /tmp/why.c connect:127.0.0.1:7804
c=$bg_pid
wait_for test -s /tmp/why.c
expect "\"use both\" to this host, sdp_local=0: no RDMA route, local transport off" \
	$c peer=127.0.0.1:7804 '^TCP\|libsdp: a "use both" rule, but no RDMA route to the peer \(No such device\) \(libsdp.conf line 4\); the local transport is off \(sdp_local=0\)'

# the module: IPPROTO_SDP to a TCP-only server, an IPPROTO_SDP listener
# with a TCP client, an AF_INET_SDP connection
hold - /tmp/why.d sdp-connect:$addr:7801 sdp-listen:7803
d=$bg_pid
sleep 600 | sdp_hold pair "$addr" 7806 >/tmp/why.h &
wait_for test -s /tmp/why.d
wait_for grep -q ready /tmp/why.h
h=$(pgrep -f "sdp_hold pair $addr 7806")
expect "IPPROTO_SDP to a TCP-only server: TCP, ESTAB, refused" $d \
	peer=$addr:7801 "^TCP\\|IPPROTO_SDP's connect went on by TCP: the peer refused SDP .*\\(Connection refused\\)"
check_eq "... its state is TCP's socket's" ESTAB \
	"$("$SDPSTAT" --why -j $d | python3 -c 'import json,sys
print([s["state"] for s in json.load(sys.stdin)["sockets"] if s["peer"].endswith(":7801")][0])')"
expect "AF_INET_SDP: on SDP, the program asked for it" "$h" peer=$addr:7806 \
	'^SDP/rdma\|AF_INET_SDP: the program asked for SDP'
expect "an IPPROTO_SDP listener: on SDP, says its TCP side" $d local=0.0.0.0:7803 \
	'^SDP\|IPPROTO_SDP .*its TCP side takes TCP'"'"'s clients'
kill $d
hold - /tmp/why.e sdp-listen:7805 accept:1
e=$bg_pid
wait_for sdp_listening 7805
timeout 30 bash -c "exec 3<>/dev/tcp/$addr/7805; sleep 20" &
wait_for test -s /tmp/why.e
expect "a TCP client of an IPPROTO_SDP listener: accepted by its TCP side" \
	$e state=ESTAB '^TCP\|accepted by the TCP side of an IPPROTO_SDP listener'

# the BPF policy's program: the same fallback (6.6 and later)
if "$BPF" check >/dev/null 2>&1; then
	grep -q cgroup2 /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup
	"$BPF" run -- python3 -c "$hold_prog" /tmp/why.f connect:$addr:7801 &
	f=$!
	wait_for test -s /tmp/why.f
	# (the python, not sdp_bpf, whose command line names it too)
	fp=$(pgrep -f "^python3 -c .*/tmp/why.f" | head -n 1)
	expect "under sdp_bpf run, to a TCP-only server: TCP, the fallback named" \
		"$fp" peer=$addr:7801 "^TCP\\|IPPROTO_SDP's connect went on by TCP: the peer refused SDP"
	kill "$fp" $f 2>/dev/null
	wait $f 2>/dev/null
fi

# every job of ours (the sleep feeding sdp_hold too)
# shellcheck disable=SC2046 # job ids: numbers, to split
kill $a $b $c $e $g $h $srv $(jobs -p) 2>/dev/null
wait 2>/dev/null
echo 1 >/sys/module/ib_sdp/parameters/sdp_local
rm -f "$conf" /tmp/why.?
sdp_check_clean
finish
