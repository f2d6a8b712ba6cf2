#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connection set-up over Soft-iWARP between the two VMs of a pair, which
# one VM does not show (iw_cm handles both ends' events in one ordered
# workqueue there): a server that speaks first (a greeting at once after
# accept(), as SMTP, FTP or MySQL servers do), 60 connections in turn,
# every client greeted, as over TCP.  MPA's initiator sends first; siw's
# fails the connection when the responder's first message comes with the
# MPA reply (one connect in ten did, EHOSTUNREACH).  SDP's active side
# sends a credit update at once and the passive side waits for it
# (SDP_CAP_INIT_FIRST, Documentation/wire.rst).  pair_siw_window.sh
# (make check-full) tests siw's accept window.
# Argument: "a" (server, on SDP_IP) or "b" (client, to SDP_PEER_IP).
# Runs last in the pair suite: it puts Soft-RoCE back when done.
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
if [ ! -f "$SIW_KO" ]; then
	echo "no Soft-iWARP for this kernel (testbed/build-siw did not build it): skipped"
	exit 4
fi
export SDP_STREAM_WAIT=120	# the other VM may still be switching

# greetings FAM PORT: 60 connections to a server that speaks first
greetings() {
	if [ "$role" = a ]; then
		timeout 300 sdp_stream greeter "$1" "$SDP_IP" "$2" 60 >/dev/null &&
			echo "served 60 connections"
	else
		timeout 300 sdp_stream greeted "$1" "$SDP_PEER_IP" "$2" 60
	fi
}

siw_use "$SIW_KO" 0
tcp=$(greetings tcp 7950)
check_eq "TCP: a server that speaks first greets every client ($tcp)" 0 "$?"
sdp=$(greetings sdp 7951)
check_eq "SDP: a server that speaks first greets every client ($sdp)" 0 "$?"
if [ "$role" = b ]; then
	check_eq "SDP: as TCP" "$tcp" "$sdp"
fi
sdp_check_clean

siw_drop
check "Soft-RoCE back" rxe-up
finish
