#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connection set-up over Soft-iWARP between the two VMs of a pair, where
# one VM's test cannot see it (iw_cm runs both ends' events in order):
#  - a server that speaks first (a greeting at once after accept(), as
#    SMTP, FTP or MySQL servers do): 100 connections, every client
#    greeted, as over TCP.  MPA's initiator sends first; siw's fails the
#    connection when the responder's first message comes with the MPA
#    reply (about one connect in ten did, EHOSTUNREACH).  SDP's active
#    side now sends a credit update at once and the passive side waits
#    for it (SDP_CAP_INIT_FIRST, Documentation/wire.rst);
#  - siw's accept window: siw_accept() sends the MPA reply before its QP
#    owns the socket, and stock siw leaves what the initiator sends
#    meanwhile unread until more arrives.  An SDP sender whose first
#    SrcAvail landed there waited for its RdmaRdCompl for good, and the
#    reader never saw a byte (one incast connection in about twenty
#    four-host runs over siw).  The test bed's siw receives such bytes
#    once its QP owns the socket (testbed/siw-patches/0002).  Its test
#    knob testbed_accept_delay_ms (testbed/siw-test-patches) holds the
#    window open 300 ms, so that a client that floods the server as soon
#    as connect() returns always lands in it: on the test bed's siw,
#    three such connections each deliver megabytes within 4 s; on siw
#    without the fix, the same three deliver nothing (the control: the
#    knob really puts the first message in the window).
# Argument: "a" (server, on SDP_IP) or "b" (client, to SDP_PEER_IP).
# Runs last in the pair suite: it puts Soft-RoCE back when done.
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
if [ ! -f "$SDP_REPO/build/siw/siw.ko" ] ||
   [ ! -f "$SDP_REPO/build/siw-stock/siw.ko" ]; then
	echo "no build/siw or build/siw-stock (testbed/build-siw): skipped"
	exit 4
fi
export SDP_STREAM_WAIT=120	# the other VM may still be switching

# use_siw KO DELAY: Soft-iWARP from KO in place of whatever device is
# up, its accept window held open DELAY ms
use_siw() {
	sdp_unload
	rdma link delete rxe0 2>/dev/null
	rdma link delete siw0 2>/dev/null
	rmmod siw 2>/dev/null
	SDP_RDMA=siw SDP_SIW_KO=$1 rxe-up >/dev/null || exit 1
	echo "$2" >/sys/module/siw/parameters/testbed_accept_delay_ms
	sdp_load || exit 1
}

# greetings FAM PORT: 100 connections to a server that speaks first
greetings() {
	if [ "$role" = a ]; then
		timeout 300 sdp_stream greeter "$1" "$SDP_IP" "$2" 100 >/dev/null
	else
		timeout 300 sdp_stream greeted "$1" "$SDP_PEER_IP" "$2" 100
	fi
}

# rounds PORT: three connections, each flooding for 4 s; prints what
# the server read (a) or the flood's end (b), one line per round
rounds() {
	local r
	for r in 1 2 3; do
		if [ "$role" = a ]; then
			timeout 60 sdp_stream incast sdp "$SDP_IP" $(($1 + r)) 1 4 |
				grep '^conn 0:'
		else
			timeout 60 sdp_stream flood sdp "$SDP_PEER_IP" $(($1 + r))
		fi
	done
}

use_siw "$SDP_REPO/build/siw/siw.ko" 0
tcp=$(greetings tcp 7950)
check_eq "TCP: a server that speaks first greets every client ($tcp)" 0 "$?"
sdp=$(greetings sdp 7951)
check_eq "SDP: a server that speaks first greets every client ($sdp)" 0 "$?"
if [ "$role" = b ]; then
	check_eq "SDP: as TCP" "$tcp" "$sdp"
fi
sdp_check_clean

use_siw "$SDP_REPO/build/siw/siw.ko" 300
out=$(rounds 7960)
echo "$out" | sed 's/^/  /'
if [ "$role" = a ]; then
	check_eq "the test bed's siw: every connection's first bytes read (3 rounds)" \
		3 "$(awk '$3 >= 1048576' <<<"$out" | wc -l)"
else
	check_eq "the test bed's siw: every flood got megabytes through" \
		3 "$(awk '$2 >= 1048576' <<<"$out" | wc -l)"
fi
sdp_check_clean

use_siw "$SDP_REPO/build/siw-stock/siw.ko" 300
out=$(rounds 7970)
echo "$out" | sed 's/^/  /'
if [ "$role" = a ]; then
	check_eq "siw without the fix: no connection delivered a byte (3 rounds)" \
		3 "$(awk '$3 == 0' <<<"$out" | wc -l)"
fi
sdp_check_clean

sdp_unload
rdma link delete siw0
rmmod siw
check "Soft-RoCE back" rxe-up
finish
