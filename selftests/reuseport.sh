#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SO_REUSEPORT on IPPROTO_SDP sockets (Documentation/sdp.rst,
# "SO_REUSEPORT"): sdp_reuseport, run first on TCP to show TCP's answers,
# then on SDP over rxe and by the local transport, IPv4, IPv6 and a
# dual-stack [::] group reached by IPv4:
#  - four listeners and an idle member share a port; a socket without
#    SO_REUSEPORT and another user's with it are refused (EADDRINUSE);
#  - 64 connections are spread over all four listeners, none to the idle
#    member, 16 KiB each checked; one listener closes and the others take
#    32 more; with none left a client is refused (on iWARP too, where the
#    group's listening ids are a device's TCP listener: they must go), the
#    idle member keeps the port, listens and takes one, is shut down and
#    refuses again; once all are closed the port is free;
#  - nothing leaks, the module unloads.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR
addr6=$(rxe-up -6) || exit 1

run() {
	local out rc

	out=$(timeout 300 sdp_reuseport "$@" 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "sdp_reuseport $*" 0 "$rc"
}

run 6 0.0.0.0 "$addr" 8700
run 6 :: "$addr6" 8701
p0=$(sdp_stat PassiveOpens)
run 261 0.0.0.0 "$addr" 8702
run 261 "$addr" "$addr" 8703
run 261 :: "$addr6" 8704
run 261 :: "$addr" 8705		# the dual-stack group's IPv4 half
check_eq "over RDMA: every connection SDP's (PassiveOpens)" $((4 * 97)) \
	$(($(sdp_stat PassiveOpens) - p0))
check_eq "over RDMA: no local connection" 0 "$(sdp_stat LocalActiveOpens)"
sdp_check_clean

sdp_unload
sdp_load sdp_local=1 || exit 1
run 261 0.0.0.0 127.0.0.1 8710
run 261 127.0.0.1 127.0.0.1 8711	# an address no RDMA device has
run 261 :: ::1 8712
check_eq "local: every connection local" $((3 * 97)) "$(sdp_stat LocalPassiveOpens)"
sdp_check_clean
sdp_unload
check "ib_sdp unloads" test ! -d /sys/module/ib_sdp
finish
