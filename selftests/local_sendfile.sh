#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pages by reference on the local transport - sendfile(), splice(),
# MSG_ZEROCOPY - the reader copying once (Documentation/sdp.rst, "The local
# transport"); selftests/sdp_lsendfile, first over TCP loopback for TCP's
# answers, then over SDP to 127.0.0.1:
#  - a pipe's 64 KiB spliced with SPLICE_F_MORE and nothing after, then
#    sendfile() of 1 B to 64 MiB at odd offsets, blocking and not, every
#    byte checked and every byte of the files by reference;
#  - a file sent and not yet read is written over (read as it is now) or
#    truncated to nothing (read as it was), as on TCP;
#  - a reader that never reads: the pages held stay within the window and
#    go with a reset, or with the reader's close;
#  - send(MSG_ZEROCOPY): no completion until the reader has copied (or
#    closed unread), then one for each send, zero copy;
#  - nothing leaks, the module unloads.
. "$(dirname "$0")/lib.sh"

sdp_unload
sdp_load sdp_local=1 || exit 1

out=$(timeout 300 sdp_lsendfile tcp 7500 2>&1)
rc=$?
echo "$out" | grep -v '^# ok '
check_eq "TCP loopback: sdp_lsendfile" 0 "$rc"

b=$(sdp_stat LocalPageBytes)
out=$(timeout 600 sdp_lsendfile sdp 7600 2>&1)
rc=$?
echo "$out" | grep -v '^# ok '
check_eq "SDP local: sdp_lsendfile, the same answers" 0 "$rc"
check "SDP local: pages went by reference (LocalPageBytes)" \
	test "$(($(sdp_stat LocalPageBytes) - b))" -gt $((80 << 20))
sdp_check_clean
sdp_unload
check "ib_sdp unloads" test ! -d /sys/module/ib_sdp
finish
