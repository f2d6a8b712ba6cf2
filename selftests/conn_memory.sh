#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What a connection costs, and that its buffers follow the traffic:
#  - N (2000) idle connections, both ends in this VM, each checked with a
#    100-byte echo: an end costs at most 128 KiB of MemAvailable in all,
#    of which at most 64 KiB buffers (BufferBytes); TCP's figure printed
#    next to it; after close every buffer is freed and the memory is back;
#  - a bulk transfer (echoed, and one way) makes the receive buffers grow
#    (ChRcvBuf: larger messages), and a second of idleness shrinks them
#    back to the idle size while the connection stays open;
#  - with net.ipv4.tcp_mem's pressure threshold below what growth needs,
#    growth is refused host-wide and the echo still completes;
#  - in a memory cgroup whose memory.max is too small for the grown
#    buffers, the streams still complete, with growth refused
#    (BufferAllocFails), and no process is OOM-killed;
#  - a sender whose cgroup is full waits for memory: all it sends
#    arrives, no ENOMEM, no OOM kill.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR
n=${SDP_SCALE_N:-2000}

# hold FAM: open $n connections, print "KiB-per-end setup-rate", keep them
# open until hold_end.
hold() {
	mem_settle
	m0=$(mem_avail_kib)
	b0=$(sdp_stat BufferBytes)
	coproc H { sdp_scale hold "$1" "$addr" 7900 "$n"; }
	local l rate=0
	while read -r l <&"${H[0]}"; do
		echo "# $1: $l"
		case $l in
		rate*) rate=${l#rate } ;;
		ready) break ;;
		esac
	done
	sleep 2
	m1=$(mem_avail_kib)
	b1=$(sdp_stat BufferBytes)
	kib=$(((m0 - m1) / (2 * n)))
	bufkib=$(((b1 - b0) / (2 * n) / 1024))
	echo "# $1: $n connections: $kib KiB per end, $rate"
}
hold_end() {
	local fd=${H[1]}; exec {fd}>&-
	wait "$H_PID"
}

hold tcp
tcp_kib=$kib
hold_end
hold sdp
check "$n SDP connections set up and echo-checked" test "$rate" != 0
check "an idle end costs at most 128 KiB ($kib KiB; TCP $tcp_kib KiB)" \
	test "$kib" -le 128
check "of which at most 64 KiB buffers ($bufkib KiB)" test "$bufkib" -le 64
used=$((m0 - m1))
hold_end
no_sockets() { [ "$(sdp_inuse)" = 0 ]; }
wait_for no_sockets
check_eq "every buffer freed after close" 0 "$(sdp_stat BufferBytes)"
mem_settle
check "the memory is back ($(((m0 - $(mem_avail_kib)) / 1024)) of $((used / 1024)) MiB missing)" \
	test $((m0 - $(mem_avail_kib))) -lt $((used / 4 + (16 << 10)))

# ---- growth under load, shrink when idle -------------------------------------
echo 0 >/sys/module/ib_sdp/parameters/sdp_zcopy_thresh	# BCopy only
idle=$(sdp_stat BufferBytes)
tx0=$(sdp_stat TxData)
bytes0=$(sdp_stat TxBytes)
out=$(timeout 120 sdp_scale burst "$addr" 7910 $((16 << 20)) 3)
read -r _ got busy after <<<"$out"
echo "# echoed $got bytes; buffers $busy B while busy, $after B after 3 s idle (idle size $idle + one connection)"
check_eq "16 MiB echoed" $((16 << 20)) "$got"
check "the receive buffers grew ($(sdp_stat RcvBufGrows) grants)" \
	test "$(sdp_stat RcvBufGrows)" -gt 0
# per_msg: Data messages sent since tx0/bytes0, and their mean payload
# (the burst runs twice, both ways: TxBytes says how much went)
per_msg() {
	msgs=$(($(sdp_stat TxData) - tx0))
	bytes=$(($(sdp_stat TxBytes) - bytes0))
	mean=$((bytes / (msgs > 0 ? msgs : 1)))
}
per_msg
first=$(cat /sys/module/ib_sdp/parameters/rcvbuf_initial_size)
check "messages larger than the first buffers ($msgs for $((bytes >> 20)) MiB: $mean B each)" \
	test "$msgs" -gt 0 -a "$mean" -gt "$first"
check "and shrank back when idle ($(sdp_stat RcvBufShrinks) shrinks)" \
	test "$(sdp_stat RcvBufShrinks)" -gt 0
# both ends back at their first ring exactly: (sdp_rx_size + 4) receive
# buffers of the first size and 4 control buffers of 32 bytes each, no
# send buffer (a receive buffer reposted large during the returns stayed
# large: 28 KiB more)
rxn=$(cat /sys/module/ib_sdp/parameters/sdp_rx_size)
idle_conn=$((2 * ((rxn + 4) * first + 4 * 32)))
check_eq "to the idle size" $((idle + idle_conn)) "$after"

# one way: the sender's returns alone must bring back every large buffer
# of the receiver, the one that carried the ChRcvBuf too (it was reposted
# at the old size before the new one was set: 28 KiB more, every time)
idle=$(sdp_stat BufferBytes)
out=$(timeout 120 sdp_scale burst "$addr" 7911 $((4 << 20)) 3 oneway)
read -r _ got busy after <<<"$out"
echo "# one way: read $got bytes; buffers $busy B while busy, $after B after 3 s idle"
check_eq "one way: 4 MiB read" $((4 << 20)) "$got"
check "one way: the receiver's buffers grew" \
	test "$busy" -gt $((idle + idle_conn))
check_eq "one way: back to the idle size" $((idle + idle_conn)) "$after"

# ---- the host's limit: net.ipv4.tcp_mem ---------------------------------------
# all SDP buffers of the host grow only below tcp_mem's pressure threshold:
# lowered to what one connection's minimum needs, growth is refused and
# the messages stay at the first buffers' size
tcp_mem=$(cat /proc/sys/net/ipv4/tcp_mem)
read -r _ _ hi <<<"$tcp_mem"
low=$(($(sdp_stat BufferBytes) / 4096 + 32))
echo "$low $low $hi" >/proc/sys/net/ipv4/tcp_mem
fails0=$(sdp_stat BufferAllocFails)
tx0=$(sdp_stat TxData)
bytes0=$(sdp_stat TxBytes)
out=$(timeout 120 sdp_scale burst "$addr" 7911 $((4 << 20)) 0)
echo "$tcp_mem" >/proc/sys/net/ipv4/tcp_mem
read -r _ got _ <<<"$out"
per_msg
check_eq "4 MiB echoed with tcp_mem[1] at $low pages" $((4 << 20)) "$got"
check "growth refused ($(($(sdp_stat BufferAllocFails) - fails0)) allocations)" \
	test "$(sdp_stat BufferAllocFails)" -gt "$fails0"
check "messages no larger than the first buffers ($mean B each)" \
	test "$msgs" -gt 0 -a "$mean" -le "$first"

# ---- a memory cgroup too small for grown buffers ---------------------------------
cg=/sys/fs/cgroup
mountpoint -q $cg || mount -t cgroup2 none $cg
echo +memory >$cg/cgroup.subtree_control
# the programs' own memory must be the same in every run: with
# transparent huge pages their stacks and heaps took 0 to 3 huge pages
# (a peak of 16.2 to 22.4 MiB for the same run), and a limit set from
# one run's peak could be too small for the next
thp=/sys/kernel/mm/transparent_hugepage/enabled
thp_was=$(sed 's/.*\[\(.*\)\].*/\1/' $thp)
echo never >$thp
cgrun() {	# NAME KEY LIMIT: 8 streams of 8 MiB in a new cgroup, BCopy
	mkdir -p $cg/$1
	echo "$3" >$cg/$1/memory.$2
	(echo $BASHPID >$cg/$1/cgroup.procs
	 sdp_stream server sdp "$addr" 7920 8 >/tmp/cgsrv.out 2>&1 &
	 timeout 300 sdp_stream client sdp "$addr" 7920 8 $((8 << 20)) 5 \
		>/tmp/cgcli.out 2>&1
	 rc=$?
	 wait
	 exit $rc)
}
peak() { echo $(($(cat $cg/$1/memory.peak) >> 20)); }
cgrun sdpfree max max
echo "# unlimited: peak $(peak sdpfree) MiB"
# the same with buffers that never grow: the programs and the smallest
# buffers, which a limit must leave room for: no larger receive buffers,
# and send and receive budgets (sdp_window.c) no larger than the rings
rmax=$(cat /sys/module/ib_sdp/parameters/rcvbuf_max_size)
rmem=$(cat /proc/sys/net/ipv4/tcp_rmem) wmem=$(cat /proc/sys/net/ipv4/tcp_wmem)
echo 4096 >/sys/module/ib_sdp/parameters/rcvbuf_max_size
echo "4096 65536 65536" >/proc/sys/net/ipv4/tcp_rmem
echo "4096 65536 65536" >/proc/sys/net/ipv4/tcp_wmem
cgrun sdpmin max max
echo "$rmax" >/sys/module/ib_sdp/parameters/rcvbuf_max_size
echo "$rmem" >/proc/sys/net/ipv4/tcp_rmem
echo "$wmem" >/proc/sys/net/ipv4/tcp_wmem
echo "# without growth: peak $(peak sdpmin) MiB"
# memory.max a quarter above that: SDP's growth (larger buffers, send
# buffers and copies of unread data beyond the rings) must stop short of
# it (it leaves an eighth free), so the programs' own pages still fit
# and the OOM killer never runs
limit=$((($(cat $cg/sdpmin/memory.peak) * 5 / 4 + 4095) / 4096 * 4096))
check "the grown buffers would not fit under memory.max" \
	test "$(cat $cg/sdpfree/memory.peak)" -gt "$limit"
fails0=$(sdp_stat BufferAllocFails)
cgrun sdpm max $limit
rc=$?
tail -1 /tmp/cgcli.out | sed 's/^/# /'
check_eq "8 streams verified in a cgroup with memory.max $((limit >> 10)) KiB" 0 "$rc"
check "growth refused near the limit ($(($(sdp_stat BufferAllocFails) - fails0)) allocations)" \
	test "$(sdp_stat BufferAllocFails)" -gt "$fails0"
check_eq "no process OOM-killed" "oom_kill 0" "$(grep oom_kill $cg/sdpm/memory.events)"
echo "# limited: peak $(($(cat $cg/sdpm/memory.peak) >> 10)) KiB, $(grep -E '^(max|oom) ' $cg/sdpm/memory.events | tr '\n' ' ')"
rmdir $cg/sdpm $cg/sdpmin $cg/sdpfree 2>/dev/null

# ---- a sender whose cgroup is full ---------------------------------------------
# A cgroup that holds the sender alone, at its limit with no charge cached
# (writing memory.high drains the per-CPU stocks), and a reader that
# starts after 2 s: the first send buffer is forced past the limit, as
# TCP forces its first skb, later sends wait for it to come back.  The
# sender is slowed down, never failed with ENOMEM (nor OOM-killed, as
# TCP's sender is: it charges its skbs with GFP_KERNEL).
mkdir -p $cg/full
sdp_stream sink sdp "$addr" 7931 1 2 >/tmp/full-sink.out &
sink=$!
wait_for grep -q listening /tmp/full-sink.out
stalls0=$(sdp_stat SndbufStalls)
coproc G { echo $BASHPID >$cg/full/cgroup.procs
	   exec timeout 120 sdp_stream gated sdp "$addr" 7931 $((4 << 20)); }
exec {gout}<&"${G[0]}" {gin}>&"${G[1]}"
read -r l <&$gout
echo $((1 << 20)) >&$gin	# some memory of its own first
read -r l <&$gout
echo 0 >$cg/full/memory.high
echo max >$cg/full/memory.high
cat $cg/full/memory.current >$cg/full/memory.max
echo go >&$gin
read -r l <&$gout
wait "$G_PID"
wait $sink
check_eq "a sender in a full cgroup sends" "sent $((4 << 20))" "$l"
check_eq "and its peer gets it all" "conn 0: $((4 << 20)) bytes, then EOF" \
	"$(tail -1 /tmp/full-sink.out)"
check "waiting for memory ($(($(sdp_stat SndbufStalls) - stalls0)) waits, $(grep '^max ' $cg/full/memory.events))" \
	test "$(sdp_stat SndbufStalls)" -gt "$stalls0"
check_eq "not OOM-killed" "oom_kill 0" "$(grep oom_kill $cg/full/memory.events)"
exec {gout}<&- {gin}>&-
rmdir $cg/full
echo "$thp_was" >$thp
echo 65536 >/sys/module/ib_sdp/parameters/sdp_zcopy_thresh

sdp_check_clean
finish
