#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# AZ-SDP (sdp_az under libsdp, LIBSDP_ASYNC=1, every socket SDP): an
# unmodified TCP program whose blocking sends return before the peer has
# read them, and which rewrites its buffers at once:
#  - by its own stores, after send(), write(), sendmsg(), writev() of
#    256 KiB, 1 MiB and 16 MiB + 7 at offsets 0, 1 and 4095; by the
#    kernel on its behalf (read() from a pipe, pread(), O_DIRECT, recv()
#    from another socket, io_uring: no EFAULT); after free(), munmap(), realloc(),
#    MADV_DONTNEED, mprotect(), the program's own userfaultfd taking
#    the buffer (handed over, no EBUSY); after fork(), in the child and the
#    parent: the receiver sees only what was sent;
#  - a receive into a buffer still in flight, on the same socket, and
#    two receives into each other's on two sockets: no deadlock; a fork
#    child that sends on the socket it inherited; a sender that exits at once: every byte, then the end;
#    SO_LINGER {1,0} right after a send: the buffer is free again; a
#    signal every millisecond; a receiver that reads nothing for 5 s;
#    four threads sending random sizes at random offsets, every byte
#    checked;
#  - the sends did go asynchronously (AzSends), and without LIBSDP_ASYNC
#    or as an unprivileged user (no userfaultfd) they stay synchronous,
#    with the same results;
#  - the test can fail: with the pages left unprotected (libsdp's and the
#    module's test switches) the overwrite reaches the receiver;
#  - the differential TCP suite passes with AZ-SDP on (every send of a
#    page or more);
#  - nothing leaks (sdp_check_clean).
# About 200 s on Debian's kernel, three times that under the debug one.
# timeout: 1800
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR
conf=/tmp/az.conf
printf 'use sdp server * *:*\nuse sdp client * *:*\n' >"$conf"

az() {	# mode port [env...]: run one sdp_az mode under libsdp
	local m=$1 p=$2 out rc
	shift 2
	out=$(env LD_PRELOAD="$LIBSDP" LIBSDP_CONFIG_FILE="$conf" "$@" \
		timeout 600 sdp_az "$m" "$addr" "$p" 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	return $rc
}

for m in overwrite kwrite echo cross memops ownuffd fork close linger signals noread stress; do
	sends=$(sdp_stat AzSends) perr=$(sdp_stat ProtoErrors)
	az "$m" 8300 LIBSDP_ASYNC=1
	check_eq "sdp_az $m, asynchronous" 0 "$?"
	check "sdp_az $m: its sends went asynchronously" \
		test "$(sdp_stat AzSends)" -gt "$sends"
	check_eq "sdp_az $m: no protocol error" "$perr" "$(sdp_stat ProtoErrors)"
done
check "a receive waited for a send in flight (echo)" \
	test "$(sdp_stat AzRecvWaits)" -gt 0
check_eq "nothing left in flight: no page held" 0 "$(sdp_stat ZcopyPageRefs)"

# the controls: synchronous, the same answers
sends=$(sdp_stat AzSends)
az overwrite 8310
check_eq "sdp_az overwrite without LIBSDP_ASYNC" 0 "$?"
az overwrite 8312 LIBSDP_ASYNC=1 setpriv --reuid=65534 --regid=65534 \
	--clear-groups
check_eq "sdp_az overwrite as an unprivileged user" 0 "$?"
check_eq "neither went asynchronously" "$sends" "$(sdp_stat AzSends)"

# the test catches a buffer left unprotected
echo N >/sys/module/ib_sdp/parameters/sdp_az_verify
az overwrite 8314 LIBSDP_ASYNC=1 LIBSDP_ASYNC_NOPROTECT=1 >/tmp/az.noprot
rc=$?
echo Y >/sys/module/ib_sdp/parameters/sdp_az_verify
check "unprotected, the overwrite reaches the receiver" test "$rc" != 0
grep -c FAIL /tmp/az.noprot | sed 's/^/# failed checks: /'
unprot=$(sdp_stat AzSyncUnprotected)
az overwrite 8316 LIBSDP_ASYNC=1 LIBSDP_ASYNC_NOPROTECT=1
check_eq "unprotected but checked: synchronous, right" 0 "$?"
check "the module refused the unprotected ranges" \
	test "$(sdp_stat AzSyncUnprotected)" -gt "$unprot"

sdp_check_clean

# the differential suite with AZ-SDP on every send of a page or more (it
# loads the module afresh, and checks that nothing leaks)
SDP_PARITY_RUNS=rdma SDP_PARITY_ENV="LD_PRELOAD=$LIBSDP LIBSDP_CONFIG_FILE=/dev/null LIBSDP_ASYNC=1 LIBSDP_ASYNC_MIN=4096 SDP_PARITY_LIBSDP=1" \
	"$(dirname "$0")/tcp_parity.sh" >/tmp/az.parity 2>&1
check_eq "the differential suite with AZ-SDP on" 0 "$?"
grep -E '^# (FAIL|AzSends)|DIFFERENT|BROKEN' /tmp/az.parity
finish
