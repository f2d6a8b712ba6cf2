#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ib_sdp loads and unloads cleanly 20 times (5 with SDP_QUICK=1, make
# check); it attaches to the RDMA
# devices present and to ones added later; every connection end has a
# protection domain of its own, for the time it is connected (a key must
# work on its own connection only), and an unconnected socket none; it
# cannot be unloaded while an SDP socket is open, and unloads once the
# socket is closed.
. "$(dirname "$0")/lib.sh"

rxe-up >/dev/null || exit 1
sdp_unload

ok=0 cycles=20
[ "${SDP_QUICK:-0}" = 1 ] && cycles=5
for i in $(seq $cycles); do
	sdp_load || break
	[ "$(sdp_hold 27 </dev/null)" = ready ] || break
	[ "$(sdp_pd_count)" = 0 ] || break
	rmmod ib_sdp || break
	ok=$i
done
check_eq "load, socket, unload cycles (no PD without a connection)" "$cycles" "$ok"

sdp_load
check_eq "no PD owned by ib_sdp while nothing is connected" 0 "$(sdp_pd_count)"
check_eq "sockets in use before" 0 "$(awk '$1 == "SDP" {print $3}' /proc/net/protocols)"

# connected: one PD per connection end, until the connection is closed
pds_while_connected() {	# addr port: PDs while a connection is up
	coproc CONN { sdp_hold pair "$1" "$2"; }
	read -r -t 30 line <&"${CONN[0]}"
	sdp_pd_count
	local fd=${CONN[1]}; exec {fd}>&-
	wait "$CONN_PID"
}
addr=$(rxe-up)
check_eq "one PD per end of a connection" 2 "$(pds_while_connected "$addr" 7500)"
for _ in $(seq 50); do [ "$(sdp_pd_count)" = 0 ] && break; sleep 0.1; done
check_eq "and none once it is closed" 0 "$(sdp_pd_count)"

# An RDMA device that goes away and comes back while ib_sdp is loaded.
rdma link delete rxe0
addr=$(rxe-up)
check_eq "rxe0 added again: a connection gets its PDs on it" 2 \
	"$(pds_while_connected "$addr" 7501)"
for _ in $(seq 50); do [ "$(sdp_pd_count)" = 0 ] && break; sleep 0.1; done

# Unloading is impossible while a socket is open.
coproc HOLD { sdp_hold 28; }
read -r -t 30 line <&"${HOLD[0]}"
check_eq "holder has an AF_INET6_SDP socket open" ready "$line"
check_eq "sockets in use while held" 1 "$(awk '$1 == "SDP" {print $3}' /proc/net/protocols)"
check "rmmod refused while a socket is open" bash -c '! rmmod ib_sdp 2>/dev/null'
check "module still loaded" sdp_loaded
fd=${HOLD[1]}; exec {fd}>&-
wait "$HOLD_PID"
check_eq "sockets in use after close" 0 "$(awk '$1 == "SDP" {print $3}' /proc/net/protocols)"
check "rmmod works once the socket is closed" rmmod ib_sdp
check_eq "no PD left after unload" 0 "$(sdp_pd_count)"
check "no SDP entry in /proc/net/protocols after unload" \
	bash -c '! grep -q "^SDP " /proc/net/protocols'
finish
