#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sdpstat, on the module's sock_diag handler: a listener shows with -l
# only, both ends of a connection show with the addresses and ports
# /proc/net/sdp has, the transport and the RDMA device, their byte counts
# (-i, -j), the port filters select one end; -s gives exactly the counters
# of /proc/net/sdpstats and -w their deltas; a socket of another network
# namespace shows there only; 3000 sockets are each listed once (a dump
# over many messages); a 127.0.0.1 connection shows the local transport.
. "$(dirname "$0")/lib.sh"

# (bounded: a dump that never ended would fail a check, not the suite)
SDPSTAT="timeout 30 $SDP_REPO/userspace/sdpstat/sdpstat"
sdp_fresh || exit 1
addr=$SDP_ADDR
port=7460

check_eq "no socket: the header alone" 1 "$($SDPSTAT -a | wc -l)"
# requests the handler must refuse, with the errno, and a good one
check_eq "raw request: a good dump, nothing in it" "ok 0" "$(sdp_diag_req.py 27 valid)"
check_eq "raw request cut short: EINVAL" EINVAL "$(sdp_diag_req.py 27 short)"
check_eq "raw request with an unknown flag: EINVAL" EINVAL "$(sdp_diag_req.py 27 flags)"
check_eq "raw request for UDP: EINVAL" EINVAL "$(sdp_diag_req.py 27 protocol)"
check_eq "raw request without NLM_F_DUMP: EOPNOTSUPP" EOPNOTSUPP "$(sdp_diag_req.py 28 nodump)"
check "no socket: JSON with an empty list" \
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d == {"sockets": []}, d' \
	<<<"$($SDPSTAT -a -j)"

# a connection to itself, held: listener, client and accepted end
coproc PAIR { sdp_hold pair "$addr" $port; }
read -r -t 30 line <&"${PAIR[0]}"
check_eq "pair held" ready "$line"
$SDPSTAT -a -e
listen=$($SDPSTAT -l | awk 'NR > 1')
check_eq "-l: the listener alone, LISTEN" "LISTEN $addr:$port 0.0.0.0:*" \
	"$(awk '{print $1, $4, $5}' <<<"$listen")"
est=$($SDPSTAT | awk 'NR > 1')
check_eq "default: the two established ends, no listener" \
	"ESTAB ESTAB" "$(awk '{print $1}' <<<"$est" | xargs)"
cport=$(awk -v s="$addr:$port" '$5 == s {split($4, a, ":"); print a[2]}' <<<"$est")
check "client end: peer is the listener's address and port" test -n "$cport"
check_eq "server end: peer is the client's port" "$addr:$cport" \
	"$(awk -v s="$addr:$port" '$4 == s {print $5}' <<<"$est")"
check_eq "both ends over RDMA" "rdma rdma" "$(awk '{print $6}' <<<"$est" | xargs)"
check_eq "the same ports as /proc/net/sdp" \
	"$(printf '%04X\n%04X\n' $cport $port | sort | xargs)" \
	"$(awk '$NF == "1" {split($2, a, ":"); print a[2]}' /proc/net/sdp | sort | xargs)"
check_eq "--sport: the server end alone" "$addr:$port" \
	"$($SDPSTAT --sport $port | awk 'NR > 1 {print $4}')"
check_eq "--dport: the client end alone" "$addr:$cport" \
	"$($SDPSTAT --dport $port | awk 'NR > 1 {print $4}')"
check_eq "--src of another address: nothing" 1 "$($SDPSTAT --src 10.9.9.9 | wc -l)"
check_eq "-6: none of these (AF_INET_SDP)" 1 "$($SDPSTAT -6 -a | wc -l)"
info=$($SDPSTAT -i --sport $port)
echo "$info"
check "-i: RDMA device and port" grep -q "rdma dev rxe0 port 1 " <<<"$info"
check "-i: credits and buffers" grep -Eq "credits tx [1-9][0-9]* rx [1-9]" <<<"$info"
check "-i: buffer memory held" grep -Eq "mem [1-9][0-9]* " <<<"$info"
check "-i: the retry counts the connection was set up with (module default)" \
	grep -q " retry $(cat /sys/module/ib_sdp/parameters/sdp_retry_count) rnr 7 " <<<"$info"

# bytes: a verified 8 MiB stream each way, then its counts
sdp_stream server sdp "$addr" $((port + 1)) 1 >/dev/null 2>&1 &
srv=$!
wait_for sdp_listening $((port + 1))
sdp_stream client sdp "$addr" $((port + 1)) 1 $((8 << 20)) 1 >/dev/null 2>&1 &
cli=$!
# one look at the stream while it runs (two looks raced its end)
json_one() {
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])["sockets"]
assert len(d) == 1 and d[0]["state"] == "ESTAB", d
assert d[0]["transport"] == "rdma" and d[0]["device"] == "rxe0", d
assert d[0]["info"]["rx_bufs"] > 0 and d[0]["info"]["buf_bytes"] > 0, d' \
		"$($SDPSTAT -j --dport $((port + 1)))" 2>/dev/null
}
check "-j, the stream established: valid JSON, one socket, transport and device" \
	wait_for json_one
wait $cli
check_eq "client verified its stream" 0 "$?"
wait $srv
check_eq "server verified its stream" 0 "$?"

# counters: exactly /proc/net/sdpstats (nothing moves now but BufferBytes,
# a gauge the held pair's buffers may still shrink)
check_eq "-s -z: every counter of /proc/net/sdpstats, the same values" \
	"$(grep -v ^BufferBytes /proc/net/sdpstats | sort)" \
	"$($SDPSTAT -s -z | awk '$1 != "BufferBytes" {print $1, $2}' | sort)"
check "-s: the non-zero ones only" bash -c "! $SDPSTAT -s | awk '\$2 == 0' | grep -q ."
check_eq "-s: ActiveOpens" "$(sdp_stat ActiveOpens)" \
	"$($SDPSTAT -s | awk '$1 == "ActiveOpens" {print $2}')"
check "-s -j: JSON, TxBytes as in /proc" python3 -c '
import json, sys
d = json.loads(sys.argv[1])["counters"]
assert d["TxBytes"] == int(sys.argv[2]), d' "$($SDPSTAT -s -j)" "$(sdp_stat TxBytes)"
watch=$($SDPSTAT -s -w 1 -c 2)
echo "$watch"
check_eq "-w 1 -c 2: two rounds" 2 "$(grep -c '^# ' <<<"$watch")"
check_eq "-w: the second round shows deltas (no ActiveOpens: none since)" "" \
	"$(awk '/^# /{r++} r == 2 && $1 == "ActiveOpens"' <<<"$watch")"

fd=${PAIR[1]}; exec {fd}>&-
wait "$PAIR_PID"
check "pair gone" wait_for bash -c "[ \$($SDPSTAT -a | wc -l) = 1 ]"

# another network namespace: its socket shows there, not here
ip netns add sdpstatns
coproc OTHER { ip netns exec sdpstatns sdp_hold 27; }
read -r -t 30 line <&"${OTHER[0]}"
check_eq "a socket in another namespace" ready "$line"
check_eq "not listed here" 1 "$($SDPSTAT -a | wc -l)"
check_eq "listed there, UNCONN" "UNCONN" \
	"$(ip netns exec sdpstatns $SDPSTAT -a | awk 'NR > 1 {print $1}')"
check_eq "counters of its own there" "" \
	"$(ip netns exec sdpstatns $SDPSTAT -s | awk '$1 == "ActiveOpens"')"
fd=${OTHER[1]}; exec {fd}>&-
wait "$OTHER_PID"
ip netns del sdpstatns

# 3000 sockets: every one once, by a dump of many messages
coproc MANY { sdp_hold many 3000; }
read -r -t 60 line <&"${MANY[0]}"
check_eq "3000 sockets held" ready "$line"
t0=$(date +%s%N)
$SDPSTAT -a -e >/tmp/sdpstat.many
t1=$(date +%s%N)
echo "listed 3000 sockets in $(((t1 - t0) / 1000000)) ms"
check_eq "3000 rows" 3001 "$(wc -l </tmp/sdpstat.many)"
check_eq "3000 different sockets (cookies)" 3000 \
	"$(awk 'NR > 1 {print $NF}' /tmp/sdpstat.many | sort -u | wc -l)"
check_eq "their inodes, as /proc/net/sdp has them" \
	"$(awk 'NR > 1 {print $5}' /proc/net/sdp | sort | md5sum)" \
	"$(awk 'NR > 1 {sub("ino:", "", $(NF - 1)); print $(NF - 1)}' /tmp/sdpstat.many | sort | md5sum)"
fd=${MANY[1]}; exec {fd}>&-
wait "$MANY_PID"

# the local transport: a connection to 127.0.0.1
sdp_unload
SDP_LOCAL=1 sdp_load || exit 1
coproc LPAIR { sdp_hold pair 127.0.0.1 $port; }
read -r -t 30 line <&"${LPAIR[0]}"
check_eq "local pair held" ready "$line"
check_eq "127.0.0.1: both ends local" "local local" \
	"$($SDPSTAT | awk 'NR > 1 {print $6}' | xargs)"
check "-i: no RDMA device" bash -c "! $SDPSTAT -i | grep -q ' dev '"
fd=${LPAIR[1]}; exec {fd}>&-
wait "$LPAIR_PID"
sdp_check_clean
finish
