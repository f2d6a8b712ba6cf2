#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two peers that both write before they read must go on as over TCP.
# sdp_echo's clients each write a chunk of up to 4 MiB in full before
# they read its echo; the server writes back what it read, in full,
# before it reads again.  What each direction of a connection holds (the
# sender's send buffer, the receiver's window) decides whether they meet
# or both wait in write() for ever.  Differential: each workload runs
# over TCP first, on the same address, and SDP must do as well:
#  - with the host's default sysctls, finish where TCP finishes: 4
#    connections x 64 MiB each way, 2 x 32 MiB, 1 x 16 MiB;
#  - with SO_SNDBUF and SO_RCVBUF set small (16 KiB) on every socket,
#    where TCP itself stalls, stall no earlier: chunk k is k x 16 KiB,
#    and the chunks echoed before the stall measure what the connection
#    holds.
# Over the RDMA device (sdp_local=0) with ZCopy on and off, and over the
# local transport.  SDP_RDMA=siw runs it over Soft-iWARP (make
# check-full); pair_echo.sh runs it between two hosts.  With SDP_QUICK=1
# (make check) the first run leaves out 4 x 64 MiB, and the ZCopy-off and
# local runs take 2 x 32 MiB only (each stalled on the old module).
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
port=7600
MB=$((1 << 20))

# echo_run FAM ADDR ARGS...: one sdp_echo pair on the next port; its
# output in $out, its status returned
echo_run() {
	local fam=$1 a=$2
	shift 2
	port=$((port + 1))
	out=$(timeout 600 sdp_echo -s 15 "$@" pair "$fam" "$a" "$port" \
	      "${echo_args[@]}" 2>&1)
}

# echo_same LABEL ADDR [N:MIB...]: the default-sysctl workloads over
# TCP, then SDP
echo_same() {
	local label=$1 a=$2 n bytes w works=("${@:3}")
	[ ${#works[@]} -gt 0 ] || works=(4:64 2:32 1:16)
	for w in "${works[@]}"; do
		n=${w%:*} bytes=$((${w#*:} * MB))
		echo_args=("$n" "$bytes" $((4 * MB)))
		echo_run tcp "$a"
		check_eq "TCP, $n x ${w#*:} MiB each way, chunks up to 4 MiB ($out)" 0 "$?" ||
			continue
		echo_run sdp "$a"
		check_eq "$label: as TCP, $n x ${w#*:} MiB each way ($out)" 0 "$?"
	done
}

# chunks OUTPUT: the chunks echoed, from sdp_echo's line
chunks() {
	sed -n 's/^echo: .*[ ,] \([0-9]*\) chunks.*/\1/p' <<<"$1" | head -n 1
}

# echo_small LABEL ADDR: small buffers; SDP stalls no earlier than TCP
echo_small() {
	local label=$1 a=$2 tcp sdp
	echo_args=(1 $((16 * MB)) 1)
	echo_run tcp "$a" -b 16384 -r 16384 -s 5
	tcp=$(chunks "$out")
	check "TCP with SO_SNDBUF/SO_RCVBUF 16 KiB: echoes $tcp chunks ($out)" \
		test -n "$tcp"
	echo_run sdp "$a" -b 16384 -r 16384 -s 5
	sdp=$(chunks "$out")
	check "$label with 16 KiB buffers: $sdp chunks, TCP $tcp ($out)" \
		test "${sdp:-0}" -ge "${tcp:-1}"
}

sdp_unload
sdp_load || exit 1
spill0=$(sdp_stat RxSpillBytes)
quick=()
[ "${SDP_QUICK:-0}" = 1 ] && quick=(2:32 1:16)
echo_same "SDP" "$addr" "${quick[@]}"
echo_small "SDP" "$addr"
check "unread data was copied out of receive buffers (RxSpillBytes)" \
	test "$(sdp_stat RxSpillBytes)" -gt "$spill0"
check "and ZCopy read ahead" test "$(sdp_stat RxZcopyBounceBytes)" -gt 0
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean

quick=()
[ "${SDP_QUICK:-0}" = 1 ] && quick=(2:32)
sdp_load sdp_zcopy_thresh=0 || exit 1
echo_same "SDP, BCopy only" "$addr" "${quick[@]}"
echo_small "SDP, BCopy only" "$addr"
check_eq "no SrcAvail sent" 0 "$(sdp_stat TxSrcAvail)"
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean

SDP_LOCAL=1 sdp_load || exit 1
echo_same "SDP, local transport" 127.0.0.1 "${quick[@]}"
echo_small "SDP, local transport" 127.0.0.1
check "the local transport carried them" \
	test "$(sdp_stat LocalActiveOpens)" -gt 0
sdp_check_clean
finish
