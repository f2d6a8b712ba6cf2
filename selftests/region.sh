#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One-sided RDMA through the socket (sdp_region; Documentation/sdp.rst,
# "One-sided RDMA"), over rxe in one VM (or siw, SDP_RDMA=siw), then by
# the local transport:
#  - WRITE and READ of 4 KiB to 64 MiB - 5 at unaligned offsets, every
#    byte checked by the other side, each WRITE's bytes there when the
#    stream message sent after it arrives, stream bytes in between;
#    MSG_ZEROCOPY WRITEs with their completions; an io_uring SENDMSG_ZC
#    READ with its notification; then SDP_REGION_DEREG;
#  - every error's errno (not connected, sizes, access, limits, unknown
#    and other connections' tokens, beyond the end, after DEREG, after
#    the owner closed);
#  - the example program (userspace/examples/sdp_reply) answers;
#  - the counters move, no protocol error, nothing leaks (MRs, pages).
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR
perr=$(sdp_stat ProtoErrors)
for m in rw errors; do
	out=$(timeout 300 sdp_region $m "$addr" 8400 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "sdp_region $m" 0 "$rc"
done
check_eq "over RDMA: no local connection" 0 "$(sdp_stat LocalActiveOpens)"
# the example of sdp(7) and userspace/examples/sdp_reply.c
ex=userspace/examples/sdp_reply
[ -x "$ex" ] || ex=$(dirname "$0")/../userspace/examples/sdp_reply
timeout 60 "$ex" server "$addr" 8410 &
sleep 1
check_eq "sdp_reply: the answer written into the client's buffer" \
	"HELLO, REGION" "$(timeout 60 "$ex" client "$addr" 8410 'hello, region')"
wait
check "regions registered (RegionRegs)" test "$(sdp_stat RegionRegs)" -gt 16
check "... and deregistered (RegionDeregs)" test "$(sdp_stat RegionDeregs)" -gt 16
check "bytes written one-sided" test "$(sdp_stat RegionWriteBytes)" -gt $((64 << 20))
check "bytes read one-sided" test "$(sdp_stat RegionReadBytes)" -gt $((64 << 20))
check_eq "no protocol error" "$perr" "$(sdp_stat ProtoErrors)"
check_eq "no revoke went unanswered" 0 "$(sdp_stat RegionRevokeTimeouts)"
sdp_check_clean

# the same by the local transport (a copy into the registered pages)
sdp_unload
sdp_load sdp_local=1 || exit 1
for m in rw errors; do
	out=$(timeout 300 sdp_region $m 127.0.0.1 8420 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "sdp_region $m, local transport" 0 "$rc"
done
check "local: carried by the local transport" \
	test "$(sdp_stat LocalActiveOpens)" -gt 0
check "local: bytes written and read" \
	test "$(sdp_stat RegionWriteBytes)" -gt $((64 << 20)) -a \
	"$(sdp_stat RegionReadBytes)" -gt $((64 << 20))
sdp_check_clean
finish
