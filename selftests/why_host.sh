#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sdpstat --why on the build host, where there is no ib_sdp: for each TCP
# socket of a program it names why the socket is not on SDP, from
# libsdp's record (read from the program's memory) or from what it can
# see:
#  - a program without libsdp: not moved, libsdp not loaded;
#  - under libsdp, a connect no rule matched, one a "use tcp" rule
#    matched (with the rule's line), a "use both" connect that found no
#    SDP (no module: EAFNOSUPPORT), a "use both" listener whose SDP side
#    could not be made, and the connections accepted on it;
#  - JSON and text name the same reasons; a process's own name cannot
#    put control characters on the reader's terminal or break the JSON;
#    another user's process is not read, and sdpstat says so.
# (selftests/libsdp_rules.sh and bpf_policy.sh check the reasons where
# SDP is there: a peer that refused SDP, no RDMA route, IPPROTO_SDP's
# fallback.)
. "$(dirname "$0")/lib.sh"

SDPSTAT=$SDP_REPO/userspace/sdpstat/sdpstat
if [ ! -f "$LIBSDP" ] || [ ! -x "$SDPSTAT" ] || [ -d /sys/module/ib_sdp ]; then
	echo "libsdp or sdpstat not built, or ib_sdp loaded on the host"
	exit $KSFT_SKIP
fi

conf=$(mktemp)
cat >"$conf" <<'CONF'
# sdpstat --why's test
use tcp client python3 127.0.0.2:*
use both client python3 127.0.0.3:*
use both server python3 *:*
CONF
ready=$(mktemp -u)
# a listener, three connects to it (127.0.0.2: "use tcp", 127.0.0.3:
# "use both", 127.0.0.1: no rule), the three accepted
prog='import socket, sys, time
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(8)
port = s.getsockname()[1]
c = [socket.create_connection((a, port)) for a in sys.argv[2:]]
a = [s.accept()[0] for _ in c]
open(sys.argv[1], "w").write(str(port))
time.sleep(60)'
libsdp_bg "$conf" python3 -c "$prog" "$ready" 127.0.0.2 127.0.0.3 127.0.0.1
pid=$bg_pid
python3 -c "$prog" "$ready.plain" 127.0.0.1 &
plain=$!
wait_for test -s "$ready"
wait_for test -s "$ready.plain"
port=$(cat "$ready")

# why PID PEER|LOCAL=ADDR: the reason given for the socket of PID whose
# peer (or local) address is ADDR
why() {
	"$SDPSTAT" --why -j "$1" 2>/dev/null | python3 -c '
import json, sys
key, addr = sys.argv[1].split("=", 1)
for s in json.load(sys.stdin)["sockets"]:
    if s[key.lower()] == addr:
        print(s["on"], s["why"])' "$2"
}
w=$(why $pid PEER=127.0.0.1:$port)
check "no rule matched: named" grep -q '^TCP libsdp: no rule matched' <<<"$w" ||
	echo "# $w"
w=$(why $pid PEER=127.0.0.2:$port)
check "a \"use tcp\" rule, with its line" \
	grep -q '^TCP libsdp: a "use tcp" rule (libsdp.conf line 2)' <<<"$w" ||
	echo "# $w"
w=$(why $pid PEER=127.0.0.3:$port)
check "\"use both\" without SDP: no SDP socket, and why" \
	grep -q '^TCP libsdp: a "use both" rule, but no SDP socket could be made.*(libsdp.conf line 3)' <<<"$w" ||
	echo "# $w"
w=$(why $pid LOCAL=0.0.0.0:$port)
check "a \"use both\" listener whose SDP side failed" \
	grep -q '^TCP libsdp: a "use both" listener, but its SDP side failed.*line 4' <<<"$w" ||
	echo "# $w"
w=$(why $pid LOCAL=127.0.0.2:$port)
check "accepted on it: the listener's reason" \
	grep -q '^TCP accepted on a TCP listener; libsdp: a "use both" listener' <<<"$w" ||
	echo "# $w"
w=$(why $plain "LOCAL=0.0.0.0:$(cat "$ready.plain")")
check "no libsdp: not moved" grep -q '^TCP not moved: libsdp is not loaded' <<<"$w" ||
	echo "# $w"
check_eq "text and JSON give as many sockets" \
	"$("$SDPSTAT" --why -j $pid 2>/dev/null | grep -o '"why"' | wc -l)" \
	"$("$SDPSTAT" --why $pid 2>/dev/null | tail -n +2 | wc -l)"
check_eq "a listener and three connections each way" 7 \
	"$("$SDPSTAT" --why $pid 2>/dev/null | tail -n +2 | wc -l)"

# what a process may do to the reader: a name with a terminal escape and
# a newline (its own prctl(PR_SET_NAME)) prints as '?' and stays valid
# JSON; another user's process is not read, and that is said
python3 -c 'import ctypes, socket, sys, time
ctypes.CDLL(None).prctl(15, b"ev\x1b[2Jil\n", 0, 0, 0)
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write("ready"); time.sleep(60)' "$ready.evil" &
evil=$!
wait_for test -s "$ready.evil"
check "a control character in a name: text shows '?'" \
	grep -q "^$evil  *ev?\[2Jil? " <(NO_COLOR=1 "$SDPSTAT" --why $evil 2>/dev/null)
check "... and JSON stays JSON, the name escaped" python3 -c '
import json, sys
s = json.load(sys.stdin)["sockets"][0]
sys.exit(s["program"] != "ev\x1b[2Jil\n")' < <("$SDPSTAT" --why -j $evil 2>/dev/null)
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$SDPSTAT" --why $pid 2>&1)
check "as another user: the process is not shown, and that is said" \
	grep -q "1 processes not shown" <<<"$out" || echo "# $out"
kill $pid $plain $evil
wait 2>/dev/null
rm -f "$conf" "$ready" "$ready.plain" "$ready.evil"
finish
