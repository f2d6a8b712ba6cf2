#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The family numbers are module parameters: other numbers work (the
# socket tests pass on them and 27/28 are then not registered), and bad
# numbers make the load fail without leaving anything registered.
. "$(dirname "$0")/lib.sh"

sdp_unload

check "loads with af_inet_sdp=40 af_inet6_sdp=41" sdp_load af_inet_sdp=40 af_inet6_sdp=41
check_eq "parameter af_inet_sdp reads back" 40 "$(cat /sys/module/ib_sdp/parameters/af_inet_sdp)"
check "socket tests pass on families 40/41" sdp_socket 40 41
check "family 27 not registered: socket() fails" bash -c '! sdp_hold 27 </dev/null 2>/dev/null'
check "unload" rmmod ib_sdp

for bad in "af_inet_sdp=0" "af_inet_sdp=-1" "af_inet6_sdp=46" "af_inet_sdp=2" \
	   "af_inet6_sdp=10" "af_inet_sdp=30 af_inet6_sdp=30"; do
	# shellcheck disable=SC2086
	check "load refused with $bad" bash -c "! insmod $SDP_KO $bad 2>/dev/null"
	check "nothing left loaded after $bad" bash -c '! [ -d /sys/module/ib_sdp ]'
done
# sdp_socket also checks that AF_INET/AF_INET6 sockets (families 2 and 10,
# which two of the refused loads tried to take) still work.
check "a normal load still works" sdp_load
check "socket tests pass on families 27/28" sdp_socket
check "unload" rmmod ib_sdp
finish
