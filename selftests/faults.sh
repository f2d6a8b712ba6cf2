#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Faults: a peer that stops serving, programs killed in the middle of a
# transfer, and memory a peer tries to make us hold.  Nothing may hang,
# leak or outlive its connection, and the module unloads after it all:
#  - a peer that stops reposting receives (no credits; or credits it never
#    backs, so that the transport retries RNR for ever): a sender with
#    TCP_USER_TIMEOUT 2 s fails with ETIMEDOUT in about that time;
#  - a peer that takes a reader's SinkAvail and falls silent: the cancel
#    of SO_RCVTIMEO goes unanswered, and the reader gets ETIMEDOUT after
#    SDP_ZC_CANCEL_TIMEOUT;
#  - a reader's RDMA READ and a writer's RDMA WRITE stuck behind a message
#    the peer will not take: kill -9 ends each within a second;
#  - kill -9 of either end of a transfer, below and above the ZCopy
#    threshold, 30 rounds (8 with SDP_QUICK=1, make check): the other
#    end sees an error, none hangs;
#  - 8 SrcAvails of 32 MiB and a SrcAvailCancel to a socket that never
#    reads: the read-ahead stays within TCP's receive buffer, and it and
#    the rings are charged to the memory cgroup of the socket's owner;
#  - 40 connection requests that never complete (no RTU): at most
#    sdp_max_embryos are answered at once, each dropped after its
#    timeout, and a correct client still gets through;
# and memory is back where it was after each.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR

mem_avail() {	# MiB
	awk '/^MemAvailable/ {print int($2 / 1024)}' /proc/meminfo
}
mem0=$(mem_avail)
mem_back() {	# what: MemAvailable within 32 MiB of the start
	for _ in $(seq 50); do
		[ $(($(mem_avail) + 32)) -ge "$mem0" ] && break
		sleep 0.2
	done
	check "$1: memory back (MemAvailable $(mem_avail) MiB, was $mem0)" \
		test $(($(mem_avail) + 32)) -ge "$mem0"
}

# ---- a peer that stops serving ------------------------------------------------
for c in stall-send stall-rnr; do
	before=$(sdp_stat StallTimeouts)
	out=$(timeout 120 sdp_evil "$addr" 7810 $c 2>&1)
	rc=$?
	echo "$out"
	check_eq "$c" 0 "$rc"
	check "$c: counted in StallTimeouts" \
		test "$(sdp_stat StallTimeouts)" -gt "$before"
done
# a SinkAvail taken, then silence: the reader's cancel goes unanswered
before=$(sdp_stat StallTimeouts)
out=$(timeout 120 sdp_evil "$addr" 7815 sink-silent 2>&1)
rc=$?
echo "$out"
check_eq "sink-silent" 0 "$rc"
check "sink-silent: counted in StallTimeouts" \
	test "$(sdp_stat StallTimeouts)" -gt "$before"
mem_back "stalled peers"

# kill -9 of a task blocked in an RDMA op behind a message the peer will
# not take (in D state for ever before): it waits half a second for the
# op, then resets; a second in all (SDP_TIME_SCALE times that on a slower
# kernel: the debug kernel's KASAN makes everything about 3x slower)
scale=${SDP_TIME_SCALE:-1}
kill_stuck() {	# case port
	local out ep pid t0 t1
	: >/tmp/evil.out
	timeout 120 sdp_evil "$addr" "$2" "$1" >/tmp/evil.out 2>&1 &
	ep=$!
	pid=""
	for _ in $(seq 300); do
		pid=$(awk '/^stuck / {print $2}' /tmp/evil.out)
		[ -n "$pid" ] && break
		sleep 0.1
	done
	check "$1: the task is blocked in the RDMA op" test -n "$pid"
	[ -n "$pid" ] || { kill "$ep"; cat /tmp/evil.out; return; }
	t0=$(date +%s%N)
	kill -9 "$pid"
	for _ in $(seq $((100 * scale))); do
		[ -d "/proc/$pid" ] || break
		sleep 0.02
	done
	t1=$(date +%s%N)
	check "$1: kill -9 ended it within $scale s ($(((t1 - t0) / 1000000)) ms)" \
		test ! -d "/proc/$pid" -a $(((t1 - t0) / 1000000)) -lt $((1000 * scale))
	wait "$ep"
	check_eq "$1: sdp_evil's checks" 0 $?
	cat /tmp/evil.out
}
kill_stuck stall-read 7820
kill_stuck stall-write 7830
mem_back "tasks killed in RDMA ops"

# ---- kill -9 of either end of a transfer ------------------------------------------
hangs=0 noerr=0 rounds=30
[ "${SDP_QUICK:-0}" = 1 ] && rounds=8
for round in $(seq $rounds); do
	size=$(( round % 2 ? 16384 : 1048576 ))	# BCopy, then ZCopy
	victim=$(( (round / 2) % 2 ? 0 : 1 ))	# receiver, then sender
	port=$((7900 + round))
	sdp_zc blast-recv "$addr" $port $size >/tmp/recv.out 2>&1 &
	rp=$!
	wait_for grep -q ready /tmp/recv.out
	sdp_zc blast-send "$addr" $port $size >/tmp/send.out 2>&1 &
	sp=$!
	wait_for grep -q ready /tmp/send.out
	sleep 0.$((RANDOM % 8 + 2))
	if [ $victim = 1 ]; then kill -9 $rp; other=$sp out=/tmp/send.out
	else kill -9 $sp; other=$rp out=/tmp/recv.out; fi
	for _ in $(seq 50); do kill -0 $other 2>/dev/null || break; sleep 0.1; done
	if kill -0 $other 2>/dev/null; then
		hangs=$((hangs + 1))
		echo "round $round: size $size, the survivor still runs"
		kill -9 $other
	fi
	wait $rp $sp 2>/dev/null
	# the sender sees an error; a receiver whose sender died sees a
	# reset (no DisConn came) or, rarely, end of file
	grep -qE 'end: (E|end of file)' $out || {
		noerr=$((noerr + 1)); echo "round $round: $(cat $out)"; }
done
check_eq "kill -9 of either end, $rounds rounds: the other end never hangs" 0 $hangs
check_eq "and always ends with an error or end of file" 0 $noerr
mem_back "killed transfers"

# ---- memory a peer tries to make us hold --------------------------------------
budget=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_rmem)
bounce0=$(sdp_stat RxZcopyBounceBytes)
m0=$(mem_avail)
timeout 60 sdp_evil "$addr" 7840 hurry >/tmp/evil.out 2>&1 &
ep=$!
sleep 6
m1=$(mem_avail)
read_ahead=$(($(sdp_stat RxZcopyBounceBytes) - bounce0))
wait $ep
cat /tmp/evil.out
check "SrcAvailCancel: read ahead within tcp_rmem[2] + one op ($read_ahead bytes, $budget)" \
	test "$read_ahead" -le $((budget + 262144))
# the peer's own 64 MiB (pinned in this VM) plus the read-ahead; the old
# module read all 256 MiB it was offered
check "and the host did not give it more ($((m0 - m1)) MiB less available)" \
	test $((m0 - m1)) -lt 128
mem_back "the read-ahead"

# what a peer makes a connection hold is charged to its owner's cgroup:
# the rings and the read-ahead of the hurry case (6 MiB, the read-ahead
# budget: tcp_rmem's maximum), run in a cgroup of its own (the kernel
# memory it charges, not the peer's own user memory)
cg=/sys/fs/cgroup
mountpoint -q $cg || mount -t cgroup2 none $cg
echo +memory >$cg/cgroup.subtree_control
mkdir -p $cg/sdpt
kmem() {	# bytes of kernel memory charged to the test's cgroup
	awk '$1 == "kernel" {print $2}' $cg/sdpt/memory.stat
}
k0=$(kmem)
(echo $BASHPID >$cg/sdpt/cgroup.procs
 exec timeout $((60 * scale)) sdp_evil "$addr" 7845 hurry) >/tmp/evil.out 2>&1 &
ep=$!
# the most it held while the peer kept the connection (8 s × scale)
k1=$k0
while kill -0 $ep 2>/dev/null; do
	k=$(kmem)
	[ "$k" -gt "$k1" ] && k1=$k
	sleep 0.25
done
wait $ep
check "the connection's rings and read-ahead are charged to its owner's cgroup ($(((k1 - k0) >> 20)) MiB)" \
	test $((k1 - k0)) -ge $((6 << 20))
rmdir $cg/sdpt 2>/dev/null
mem_back "the charged read-ahead"

# ---- requests that never complete -------------------------------------------------
max_embryos=$(cat /sys/module/ib_sdp/parameters/sdp_max_embryos)
sdp_stream sink sdp "$addr" 7850 1 >/tmp/sink.out 2>&1 &
sink=$!
sleep 1
timeouts0=$(sdp_stat EmbryoTimeouts)
timeout 60 sdp_evil "$addr" 7850 embryos 40 25 >/tmp/evil.out 2>&1 &
ep=$!
wait_for grep -q holding /tmp/evil.out
sleep 3
qps=$(sdp_qp_count)
check "40 requests without an RTU: at most $max_embryos answered at once ($qps QPs)" \
	test "$qps" -le "$max_embryos"
sleep 12
check "each dropped after its timeout (EmbryoTimeouts $(sdp_stat EmbryoTimeouts))" \
	test "$(sdp_stat EmbryoTimeouts)" -ge $((timeouts0 + max_embryos))
wait $ep
check_eq "then a correct client gets through" established \
	"$(timeout 60 sdp_evil "$addr" 7850 valid 2>&1)"
wait $sink
mem_back "half-open requests"

sdp_check_clean
finish
