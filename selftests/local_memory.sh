#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What one end of a local connection makes the other hold (issue 34):
#  - claim 4: a receiver in a small memory cgroup (memory.max 48 MiB)
#    accepts 64 connections and never reads, a sender in another cgroup
#    fills them (non-blocking writes until every one says EAGAIN).  Over
#    TCP the receiver pays for its receive buffers and the sender for
#    its send queues.  Over SDP the receiver's cgroup must not be driven
#    to an OOM kill: it pays for what its receive budget holds while it
#    has room, the sender for the rest, and a cgroup near its limit
#    refuses (the sender waits).  The sender must get at least what it
#    gets over TCP.
#  - claim 8: per socket, sock_diag's buffer memory is never negative,
#    also once the receiver has read some.
#  - claim 7: a reader whose buffer is a MAP_SHARED mapping of a file is
#    never offered for the single copy: the bytes arrive by the inbox,
#    written by nobody behind the file system (LocalSinkBytes unchanged).
. "$(dirname "$0")/lib.sh"

cg=/sys/fs/cgroup
mountpoint -q $cg || mount -t cgroup2 none $cg
echo +memory >$cg/cgroup.subtree_control
sdp_unload
SDP_LOCAL=1 sdp_load || exit 1
SDPSTAT=$SDP_REPO/userspace/sdpstat/sdpstat

# run FAM PORT: the sink in rx_FAM (48 MiB), the filler in tx_FAM; sets
# filled, peak (MiB), ooms
run() {
	local fam=$1 port=$2 rx=$cg/rx_$1 tx=$cg/tx_$1 out
	mkdir -p "$rx" "$tx"
	echo $((48 << 20)) >"$rx/memory.max"
	coproc SINK { echo $BASHPID >"$rx/cgroup.procs"
		      exec sdp_mem sink "$fam" 127.0.0.1 "$port" 64; }
	read -r _ <&"${SINK[0]}"
	out=$( (echo $BASHPID >"$tx/cgroup.procs"
		exec timeout 120 sdp_mem fill "$fam" 127.0.0.1 "$port" 64 20) 2>&1)
	read -r _ <&"${SINK[0]}"	# accepted
	filled=$(sed -n 's/^filled \([0-9]*\),.*/\1/p' <<<"$out")
	echo "# $fam: $out; receiver's cgroup peak $(($(cat "$rx/memory.peak") >> 20)) MiB, $(grep -E '^(max|oom_kill) ' "$rx/memory.events" | tr '\n' ' ')"
	peak=$(($(cat "$rx/memory.peak") >> 20))
	ooms=$(awk '$1 == "oom_kill" {print $2}' "$rx/memory.events")
	# the receiver reads some: what it frees was counted where it
	# was held
	echo >&"${SINK[1]}"
	read -r _ <&"${SINK[0]}"
	[ "$fam" = sdp ] && diag=$($SDPSTAT -a -i -j 2>&1)
	local fd=${SINK[1]}; exec {fd}>&-
	wait "$SINK_PID"
	rmdir "$rx" "$tx"
}

# the host-wide pressure threshold (tcp_mem[1], pages) far above what
# either needs, so that only the cgroups and the windows limit them
tcp_mem=$(cat /proc/sys/net/ipv4/tcp_mem)
echo "300000 400000 500000" >/proc/sys/net/ipv4/tcp_mem
run tcp 7800
tcp_filled=$filled
check_eq "TCP: the receiver not OOM-killed" 0 "$ooms"
run sdp 7801
check_eq "SDP: the receiver not OOM-killed (peak $peak MiB of 48)" 0 "$ooms"
check "SDP: the sender got at least what TCP gave it ($filled, TCP $tcp_filled)" \
	test "${filled:-0}" -ge "${tcp_filled:-1}"
echo "$tcp_mem" >/proc/sys/net/ipv4/tcp_mem
echo "# per socket buffer memory: $(grep -oE '"buf_bytes":[0-9]+' <<<"$diag" | cut -d: -f2 | sort -n | uniq -c | tr '\n' ' ' | cut -c1-300)"
neg() { grep -oE '"buf_bytes":[0-9]+' <<<"$diag" | awk -F: '$2 >= 2^62 {n++} END {exit n ? 0 : 1}'; }
check "sock_diag shows both ends of the 64 connections" \
	test "$(grep -oE '"buf_bytes":' <<<"$diag" | wc -l)" -ge 128
check "per socket, buffer memory is never negative (sock_diag)" \
	eval '! neg'
sdp_check_clean

SDP_LOCAL=1 sdp_load || exit 1
sink0=$(sdp_stat LocalSinkBytes)
out=$(timeout 60 sdp_mem mapread sdp 127.0.0.1 7802 /tmp/sdp_map 2>&1)
check_eq "a file-mapped reader gets its 1 MiB ($out)" 0 "$?"
check_eq "and never by the single copy (LocalSinkBytes)" "$sink0" \
	"$(sdp_stat LocalSinkBytes)"
rm -f /tmp/sdp_map
sdp_check_clean
finish
