#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The local transport under everything at once (issue 34), no RDMA
# device: sdp_lstress runs two servers and four client processes of four
# threads on 127.0.0.1 for SDP_STRESS_SECS seconds (20 times
# SDP_TIME_SCALE: the debug kernel is several times slower, and the
# checks below want as many whole streams): readers with a 5 ms
# SO_RCVTIMEO and signals every millisecond, reads and writes of sizes
# around the single copy's threshold, streams ended by shutdown(), by
# close() with SO_LINGER {1, 0} half way, or by connect(AF_UNSPEC) half
# way and a connect() of the same socket again (also while another
# thread waits in recv() on it, in the single copy); clients and one
# server killed by SIGKILL at random points.  Every byte is checked
# against its stream's pattern and every whole stream's count; the guest
# kernel must report nothing (KASAN, lockdep and the rest under the debug
# kernel); nothing may be left after.
. "$(dirname "$0")/lib.sh"

secs=${SDP_STRESS_SECS:-$((20 * ${SDP_TIME_SCALE:-1}))}
sdp_unload
SDP_LOCAL=1 sdp_load || exit 1
aborts0=$(sdp_stat ProtoErrors)
out=$(timeout $((secs + 120)) sdp_lstress "$secs" 7610 4 4 2>&1)
check_eq "sdp_lstress ran to its end" 0 "$?"
echo "# $out" | paste -sd' '
srv=$(sed -n 's/^server: //p' <<<"$out")
cli=$(sed -n 's/^clients: //p' <<<"$out")
field() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" <<<"$2"; }
check_eq "every byte the servers read was as sent" 0 "$(field bad "$srv")"
check_eq "every whole stream's count was as sent" 0 "$(field bad "$cli")"
check "many whole streams ($(field streams "$cli"))" \
	test "$(field streams "$cli")" -ge 20
check "streams ended half way too ($(field aborted "$cli"))" \
	test "$(field aborted "$cli")" -gt 0
check "sockets connected again after connect(AF_UNSPEC) ($(field reconnects "$cli"))" \
	test "$(field reconnects "$cli")" -gt 0
check "processes killed under way ($(field kills "$cli"))" \
	test "$(field kills "$cli")" -gt 10
check "the single copy was used ($(sdp_stat LocalSinkBytes))" \
	test "$(sdp_stat LocalSinkBytes)" -gt 0
check_eq "no protocol error" "$aborts0" "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
