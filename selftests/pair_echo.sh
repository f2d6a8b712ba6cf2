#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# echo_parity.sh between two hosts: clients that write a chunk of up to
# 4 MiB in full before they read its echo, a server that writes back what
# it read in full before it reads again.  Over TCP, then SDP with ZCopy
# on and off: 4 connections x 32 MiB each way must finish over SDP as
# over TCP; with SO_SNDBUF and SO_RCVBUF 16 KiB on every socket, where TCP
# stalls (chunk k is k x 16 KiB), SDP echoes at least as many chunks.
# Argument: "a" (the server, on SDP_IP) or "b" (the clients, to
# SDP_PEER_IP).  SDP_RDMA=siw runs it over Soft-iWARP (make check-full).
# With SDP_QUICK=1 (make check) 2 connections, not 4.
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
rxe-up >/dev/null || exit 1
MB=$((1 << 20))
SMALL=(-b 16384)
RAMP=(-r 16384 -s 6)
NCONN=4
[ "${SDP_QUICK:-0}" = 1 ] && NCONN=2

# serve PORT NCONN [OPTION...]: the server's side of one run
serve() {
	local port=$1 n=$2
	shift 2
	out=$(timeout 600 sdp_echo "$@" server "$fam" "$SDP_IP" "$port" "$n" 2>&1)
	check_eq "server ($fam, port $port): every connection ended ($out)" 0 "$?"
}

# run PORT NCONN BYTES MAXCHUNK [OPTION...]: the clients' side; output in
# $out, sdp_echo's status returned
run() {
	local port=$1 n=$2 bytes=$3 max=$4
	shift 4
	out=$(timeout 600 sdp_echo -s 15 "$@" client "$fam" "$SDP_PEER_IP" \
	      "$port" "$n" "$bytes" "$max" 2>&1)
}

chunks() {
	sed -n 's/^echo: .*[ ,] \([0-9]*\) chunks.*/\1/p' <<<"$1" | head -n 1
}

# phase FAM LABEL PORT: the 4 x 64 MiB run and the small-buffer ramp;
# FAM in $fam, exported while it runs (a command in SDP_ECHO_ON_STALL
# sees it)
phase() {
	local -x fam=$1
	local label=$2 port=$3 got
	if [ "$role" = a ]; then
		serve "$port" "$NCONN"
		serve $((port + 1)) 1 "${SMALL[@]}"
		return
	fi
	run "$port" "$NCONN" $((32 * MB)) $((4 * MB))
	check_eq "$label: $NCONN x 32 MiB each way, chunks up to 4 MiB ($out)" 0 "$?"
	run $((port + 1)) 1 $((16 * MB)) 1 "${SMALL[@]}" "${RAMP[@]}"
	got=$(chunks "$out")
	if [ "$fam" = tcp ]; then
		tcp_chunks=$got
		check "$label with 16 KiB buffers: $got chunks ($out)" test -n "$got"
	else
		check "$label with 16 KiB buffers: $got chunks, TCP $tcp_chunks ($out)" \
			test "${got:-0}" -ge "${tcp_chunks:-1}"
	fi
}

# tcp_at_ceiling on|off: start every TCP socket's buffers at the ceiling
# autotuning could grow them to (tcp_rmem[2], tcp_wmem[2]).  Autotuning
# grows them from what it measures (the congestion window, the rate the
# reader copies), so whether a 4 MiB chunk meets its echo over TCP
# depends on timing: on 6.12 under TCG one run in two deadlocked at its
# first chunk.  At the ceiling the TCP run is what TCP can hold, every
# run, and SDP is held to that.
tcp_at_ceiling() {
	local f v
	for f in tcp_rmem tcp_wmem; do
		if [ "$1" = on ]; then
			v=$(cat /proc/sys/net/ipv4/$f)
			eval "saved_$f=\$v"
			read -r min _ max <<<"$v"
			echo "$min $max $max" >/proc/sys/net/ipv4/$f
		else
			eval "v=\$saved_$f"
			echo "$v" >/proc/sys/net/ipv4/$f
		fi
	done
}

sdp_unload
tcp_at_ceiling on
phase tcp "TCP" 7610
tcp_at_ceiling off

sdp_load || exit 1
phase sdp "SDP" 7620
[ "$role" = b ] && check "the receivers copied unread data out (RxSpillBytes)" \
	test "$(sdp_stat RxSpillBytes)" -gt 0
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean

sdp_load sdp_zcopy_thresh=0 || exit 1
phase sdp "SDP, BCopy only" 7630
check_eq "no SrcAvail sent" 0 "$(sdp_stat TxSrcAvail)"
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
