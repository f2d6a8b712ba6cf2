#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ib_sdp loads and unloads cleanly 50 times; it attaches to the RDMA
# devices present and to ones added later (one protection domain each,
# dropped when the device or the module goes); it cannot be unloaded while
# an SDP socket is open, and unloads once the socket is closed.
. "$(dirname "$0")/lib.sh"

rxe-up >/dev/null || exit 1
sdp_unload

ok=0
for i in $(seq 50); do
	sdp_load || break
	[ "$(sdp_hold 27 </dev/null)" = ready ] || break
	[ "$(sdp_pd_count)" = 1 ] || break
	rmmod ib_sdp || break
	[ "$(sdp_pd_count)" = 0 ] || break
	ok=$i
done
check_eq "load, socket, unload cycles (PD taken and released each time)" 50 "$ok"

sdp_load
check_eq "one PD on rxe0 owned by ib_sdp" 1 "$(sdp_pd_count)"
check_eq "sockets in use before" 0 "$(awk '$1 == "SDP" {print $3}' /proc/net/protocols)"

# An RDMA device that goes away and comes back while ib_sdp is loaded.
rdma link delete rxe0
check_eq "PD released when rxe0 is removed" 0 "$(sdp_pd_count)"
rxe-up >/dev/null
check_eq "PD taken when rxe0 is added again" 1 "$(sdp_pd_count)"

# Unloading is impossible while a socket is open.
coproc HOLD { sdp_hold 28; }
read -r -t 30 line <&"${HOLD[0]}"
check_eq "holder has an AF_INET6_SDP socket open" ready "$line"
check_eq "sockets in use while held" 1 "$(awk '$1 == "SDP" {print $3}' /proc/net/protocols)"
check "rmmod refused while a socket is open" bash -c '! rmmod ib_sdp 2>/dev/null'
check "module still loaded" sdp_loaded
exec {HOLD[1]}>&-
wait "$HOLD_PID"
check_eq "sockets in use after close" 0 "$(awk '$1 == "SDP" {print $3}' /proc/net/protocols)"
check "rmmod works once the socket is closed" rmmod ib_sdp
check_eq "no PD left after unload" 0 "$(sdp_pd_count)"
check "no SDP entry in /proc/net/protocols after unload" \
	bash -c '! grep -q "^SDP " /proc/net/protocols'
finish
