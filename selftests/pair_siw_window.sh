#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Soft-iWARP's accept window, between the two VMs of a pair (over siw,
# make check-full).  siw_accept() sends the MPA reply before its QP owns
# the socket: what the initiator sends at once may land in between, and
# stock siw leaves it unread until more arrives.  An SDP sender whose
# first SrcAvail landed there waited for its RdmaRdCompl for good, and
# the reader never saw a byte (one incast connection in about twenty
# four-host runs over siw).  The test bed's siw receives such bytes once
# its QP owns the socket (testbed/siw-patches/0002).  Its test knob
# testbed_accept_delay_ms (testbed/siw-test-patches) holds the window
# open 300 ms, so that a client that floods the server as soon as
# connect() returns always lands in it:
#  - on the test bed's siw, three such connections each deliver
#    megabytes within 4 s;
#  - on siw without the fix, the same three deliver nothing (the control:
#    the knob really puts the first message in the window).
# Argument: "a" (server, reads on SDP_IP) or "b" (floods SDP_PEER_IP).
# Leaves the test bed's siw up, its window as usual.
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
if [ ! -f "$SIW_KO" ] ||
   [ ! -f "$SIW_STOCK_KO" ]; then
	echo "no Soft-iWARP for this kernel (testbed/build-siw): skipped"
	exit 4
fi
export SDP_STREAM_WAIT=120	# the other VM may still be switching

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

siw_use "$SIW_KO" 300
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

siw_use "$SIW_STOCK_KO" 300
out=$(rounds 7970)
echo "$out" | sed 's/^/  /'
if [ "$role" = a ]; then
	check_eq "siw without the fix: no connection delivered a byte (3 rounds)" \
		3 "$(awk '$3 == 0' <<<"$out" | wc -l)"
fi
sdp_check_clean

siw_use "$SIW_KO" 0
sdp_unload
finish
