#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# AZ-SDP between two hosts (sdp_az under libsdp, LIBSDP_ASYNC=1): the
# sender (b) overwrites its buffers as soon as each blocking send
# returns, by every kind of send call, size and offset, and four threads
# send random sizes from random offsets; the receiver (a) sees only the
# bytes sent; b's sends went asynchronously (AzSends).
# Argument: "a" (receiver, on SDP_IP) or "b" (sender, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
sdp_fresh || exit 1
conf=/tmp/az.conf
printf 'use sdp server * *:*\nuse sdp client * *:*\n' >"$conf"

if [ "$role" = a ]; then
	end=recv ip=$SDP_IP
else
	end=send ip=$SDP_PEER_IP
fi
for m in overwrite stress; do
	sends=$(sdp_stat AzSends)
	out=$(env LD_PRELOAD="$LIBSDP" LIBSDP_CONFIG_FILE="$conf" LIBSDP_ASYNC=1 \
		SDP_AZ_ROLE=$end timeout 600 sdp_az $m "$ip" 7570 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "sdp_az $m, the $end end" 0 "$rc"
	[ "$role" = b ] && check "sdp_az $m: the sends went asynchronously" \
		test "$(sdp_stat AzSends)" -gt "$sends"
done
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
