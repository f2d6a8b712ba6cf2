#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SDP over IPv6 on the test bed's RDMA device (Soft-RoCE; Soft-iWARP with
# SDP_RDMA=siw, in make check-full):
#  - 4 AF_INET6_SDP connections to the device's IPv6 address, 16 MiB of
#    seeded random data each way, every byte checked, BCopy and ZCopy
#    (SrcAvail) both carrying them;
#  - the same from AF_INET6_SDP sockets to the IPv4 address written
#    v4-mapped (::ffff:a.b.c.d), as a TCP program on AF_INET6 does;
#  - libsdp with IPv6 rules ([ADDR]:PORT): python3's http.server on the
#    IPv6 address and curl over SDP, 20 MiB checked by SHA-256, the
#    listener seen in /proc/net/sdp;
#  - nothing left.
. "$(dirname "$0")/lib.sh"

addr6=$(rxe-up -6) || exit 1
addr4=$(rxe-up) || exit 1
trap 'pkill -f "http.server 8096"' EXIT
sdp_unload
sdp_load || exit 1

# streams NAME ADDR PORT: 4 x 16 MiB each way, checked
streams() {
	local srv out z0 d0
	z0=$(sdp_stat TxSrcAvail) d0=$(sdp_stat TxData)
	sdp_stream server sdp "$2" "$3" 4 >/tmp/server.out 2>&1 &
	srv=$!
	out=$(sdp_stream client sdp "$2" "$3" 4 $((16 << 20)) 7 2>&1)
	check_eq "$1: client, 4 streams verified both ways ($out)" 0 "$?"
	wait $srv
	check_eq "$1: server, 4 streams verified" 0 "$?"
	check "$1: ZCopy carried some" test "$(sdp_stat TxSrcAvail)" -gt "$z0"
	check "$1: BCopy carried some" test "$(sdp_stat TxData)" -gt "$d0"
}
streams "IPv6 $addr6" "$addr6" 7600
streams "v4-mapped ::ffff:$addr4" "::ffff:$addr4" 7610
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"

http_over_sdp "$addr6" 8096 20 "[$addr6]"

sdp_check_clean
finish
