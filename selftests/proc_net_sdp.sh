#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# /proc/net/sdp shows the listener and both ends of an established
# connection with the right addresses, ports and states; the rows go away
# after close; /proc/net/sdpstats counts the opens, bytes and messages;
# 3000 sockets are listed once each, numbered from 0, however the file is
# read; a socket of another namespace shows there only.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR

IFS=. read -r -a octets <<<"$addr"
hexaddr=$(printf '%02X' "${octets[@]}" | \
	  sed 's/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/')
port=7400
hexport=$(printf '%04X' $port)
head -1 /proc/net/sdp
check_eq "header" "  sl  local_address rem_address        uid inode   rx_queue tx_queue state" \
	"$(head -1 /proc/net/sdp)"

sdp_stream server sdp "$addr" $port 1 >/dev/null 2>&1 &
srv=$!
for _ in $(seq 50); do
	grep -q " $hexaddr:$hexport 00000000:0000 .* A$" /proc/net/sdp && break
	sleep 0.1
done
cat /proc/net/sdp
check "listener row: $hexaddr:$hexport, state 0A (LISTEN)" \
	grep -q " $hexaddr:$hexport 00000000:0000 .* A$" /proc/net/sdp

sdp_stream client sdp "$addr" $port 1 $((48 << 20)) 3 >/dev/null 2>&1 &
cli=$!
for _ in $(seq 100); do
	[ "$(awk '$NF == "1"' /proc/net/sdp | wc -l)" = 2 ] && break
	sleep 0.1
done
cat /proc/net/sdp
rows=$(awk '$NF == "1" {print $2, $3}' /proc/net/sdp)
check_eq "two established rows (state 1)" 2 "$(echo "$rows" | grep -c .)"
server_row=$(echo "$rows" | grep "^$hexaddr:$hexport ")
client_row=$(echo "$rows" | grep -v "^$hexaddr:$hexport ")
check "server end: local $hexaddr:$hexport" test -n "$server_row"
check_eq "client end: remote is the server" "$hexaddr:$hexport" "${client_row#* }"
check_eq "server end: remote is the client's local address and port" \
	"${client_row% *}" "${server_row#* }"
check "uid and inode columns" \
	bash -c "awk '\$NF == \"1\" && \$4 == 0 && \$5 > 0' /proc/net/sdp | grep -q ."

# per network namespace: another namespace sees none of these rows, its
# own sockets only, and counters of its own
ip netns add sdptest
check_eq "another namespace sees no row" 1 \
	"$(ip netns exec sdptest cat /proc/net/sdp | wc -l)"
check_eq "another namespace has its own counters" 0 \
	"$(ip netns exec sdptest awk '$1 == "ActiveOpens" {print $2}' /proc/net/sdpstats)"
sleep 3 | ip netns exec sdptest sdp_hold 27 >/dev/null &
sleep 1
check_eq "a socket in it shows there" 2 \
	"$(ip netns exec sdptest cat /proc/net/sdp | wc -l)"
check_eq "and not here" 0 "$(awk '$NF == "7"' /proc/net/sdp | wc -l)"
wait $!
ip netns delete sdptest

wait $cli
check_eq "client verified its stream" 0 "$?"
wait $srv
check_eq "server verified its stream" 0 "$?"
for _ in $(seq 50); do
	[ "$(wc -l </proc/net/sdp)" = 1 ] && break
	sleep 0.1
done
check_eq "rows gone after close" 1 "$(wc -l </proc/net/sdp)"
cat /proc/net/sdpstats
check_eq "ActiveOpens" 1 "$(sdp_stat ActiveOpens)"
check_eq "PassiveOpens" 1 "$(sdp_stat PassiveOpens)"
check_eq "ConnClosed (both ends)" 2 "$(sdp_stat ConnClosed)"
check_eq "TxBytes = RxBytes = 48 MiB each way + the 16-byte stream header" \
	"$((2 * (48 << 20) + 16)) $((2 * (48 << 20) + 16))" \
	"$(sdp_tx_bytes) $(sdp_rx_bytes)"
check_eq "TxData = RxData" "$(sdp_stat TxData)" "$(sdp_stat RxData)"
check_eq "a DisConn each way, both ends" "2 2" "$(sdp_stat TxDisConn) $(sdp_stat RxDisConn)"
# Credit updates: every one received was sent; a few sent may be lost.
# The writer tears its end down as soon as its DisConn is acknowledged,
# while the reader may not have handled that DisConn yet and still frees
# buffers as it reads the last data: the updates it posts then reach a QP
# that is gone (as a TCP window update after the peer's close).  Each
# update frees two buffers or more, so one end loses at most half its
# ring (sdp_rx_size 8 -> 4), and both ends of the connection at most 8.
tx=$(sdp_stat TxCreditUpdate) rx=$(sdp_stat RxCreditUpdate)
check "credit updates: received <= sent <= received + 8 ($rx, $tx)" \
	test "$rx" -le "$tx" -a "$tx" -le $((rx + 8))

# 3000 sockets: every one listed once, numbered 0..2999, whether the file
# is read at once or in 1000-byte reads (each a new seq_file chunk that
# resumes where the last stopped)
coproc MANY { sdp_hold many 3000; }
read -r -t 60 line <&"${MANY[0]}"
check_eq "3000 sockets held" ready "$line"
cat /proc/net/sdp >/tmp/whole
dd if=/proc/net/sdp bs=1000 2>/dev/null >/tmp/pieces
check_eq "3000 rows" 3001 "$(wc -l </tmp/whole)"
check "read in 1000-byte pieces: the same rows" cmp -s /tmp/whole /tmp/pieces
check_eq "sl numbers 0..2999, each once" "0 2999 3000" \
	"$(awk 'NR > 1 {sub(":", "", $1); print $1}' /tmp/whole | sort -n | uniq |
	   awk 'NR == 1 {f = $1} {l = $1; n++} END {print f, l, n}')"
# a socket of another network namespace is not listed here, and is
# numbered from 0 there
ip netns add sdpns
coproc OTHER { ip netns exec sdpns sdp_hold 27; }
read -r -t 30 line <&"${OTHER[0]}"
check_eq "still 3000 rows here with a socket in another namespace" 3001 \
	"$(wc -l </proc/net/sdp)"
check_eq "the other namespace lists its own socket, as row 0" "1 0:" \
	"$(ip netns exec sdpns awk 'NR > 1 {n++; sl = $1} END {print n, sl}' /proc/net/sdp)"
fd=${OTHER[1]}; exec {fd}>&-
wait "$OTHER_PID"
fd=${MANY[1]}; exec {fd}>&-
wait "$MANY_PID"
ip netns del sdpns
sdp_check_clean
finish
