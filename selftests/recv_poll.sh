#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A blocking recv() with nothing to read watches for data for recv_poll
# microseconds before it sleeps (sdp_recv.c), with sdp_lbench's 64 B
# ping-pong over rxe in one VM, by the counters RecvPolls and
# RecvPollHits:
#  - recv_poll=0: no poll at all; this gives the machine's one-way
#    latency;
#  - a window that a reply fits in (the default 200 us, or four one-way
#    latencies where that is longer: 6.12's rxe in the TCG VM takes about
#    450 us one way, 6.1's about 150): the replies come while the readers
#    poll: at least half the polls see data;
#  - a slow peer (it waits 2 ms before each reply, 300 round trips): the
#    reader stops polling after two polls in vain and rests longer each
#    time: at most 60 polls in vain at both ends (without the rest, one
#    per round trip at the client alone; with it about 10 there, and the
#    server's polls for the next request, which comes a round trip after
#    its reply, about as long as recv_poll, miss and rest too: 24-31
#    seen);
#  - SO_BUSY_POLL set on the socket: its time, and every wait polls, as on
#    TCP: at least 250 polls in vain with the same slow peer;
#  - nothing left afterwards.
# The latencies are printed, never asserted.
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
param=/sys/module/ib_sdp/parameters
sdp_unload
sdp_load || exit 1

# pingpong PORT ITERS [ENV...]: sets polls, hits, misses, lat
pingpong() {
	local port=$1 iters=$2 p0 h0 out
	shift 2
	p0=$(sdp_stat RecvPolls) h0=$(sdp_stat RecvPollHits)
	out=$(env "$@" timeout 120 sdp_lbench sdp "$addr" "$port" lat 64 "$iters" 2>&1)
	lat=${out#lat }
	polls=$(( $(sdp_stat RecvPolls) - p0 ))
	hits=$(( $(sdp_stat RecvPollHits) - h0 ))
	misses=$((polls - hits))
	echo "# $iters round trips $*: one way $lat us, $polls polls, $hits saw data"
}

check_eq "recv_poll defaults to 200 us" 200 "$(cat $param/recv_poll)"

echo 0 >$param/recv_poll
pingpong 7702 2000
check_eq "recv_poll=0: no poll" 0 "$polls"

# a round trip, and as much again, fits in the window
win=$(awk -v l="$lat" 'BEGIN { w = int(4 * l); print (w > 200 ? w : 200) }')
echo "$win" >$param/recv_poll
pingpong 7701 2000
check "polls made (recv_poll $win us)" test "$polls" -gt 0
check "at least half of them saw data ($hits of $polls)" test $((hits * 2)) -ge "$polls"
echo 200 >$param/recv_poll

pingpong 7703 300 SDP_LBENCH_DELAY_US=2000
check "slow peer: the reader rests from polling ($misses polls in vain)" \
	test "$misses" -le 60

pingpong 7704 300 SDP_LBENCH_DELAY_US=2000 SDP_LBENCH_BUSY_POLL=200
check "SO_BUSY_POLL: every wait polls ($misses polls in vain)" \
	test "$misses" -ge 250

sdp_check_clean
finish
