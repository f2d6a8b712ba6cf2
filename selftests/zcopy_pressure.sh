#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ZCopy sends under memory pressure: with net.ipv4.tcp_mem's pressure
# threshold just above what the idle module holds, 8 connections echo
# 8 MiB each way in writes of up to 256 KiB (ZCopy from 64 KiB).  A send
# whose SrcAvail finds no memory for its message copies instead and waits
# for memory there, as TCP waits (sk_stream_wait_memory()); it never
# fails.  The module before the fix returned ENOMEM to the program, every
# run (and in 3 runs of 10 of stream_integrity.sh over Soft-iWARP on
# 6.12, where timing alone brought the pressure).
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR
port=7930

tcp_mem=$(cat /proc/sys/net/ipv4/tcp_mem)
read -r _ _ hi <<<"$tcp_mem"
low=$(($(sdp_stat BufferBytes) / 4096 + 32))
echo "$low $low $hi" >/proc/sys/net/ipv4/tcp_mem
fails0=$(sdp_stat BufferAllocFails)
sdp_stream server sdp "$addr" $port 8 >/tmp/server.out 2>&1 &
srv=$!
out=$(timeout 300 sdp_stream client sdp "$addr" $port 8 $((8 << 20)) 1 2>&1)
rc=$?
wait $srv
src=$?
echo "$tcp_mem" >/proc/sys/net/ipv4/tcp_mem
echo "$out"
cat /tmp/server.out
check_eq "client: 8 streams echoed with tcp_mem[1] at $low pages" 0 "$rc"
check_eq "server: 8 streams verified" 0 "$src"
check_eq "no send failed with ENOMEM" 0 \
	"$(cat /tmp/server.out - <<<"$out" | grep -c 'Cannot allocate memory')"
check "memory was refused ($(($(sdp_stat BufferAllocFails) - fails0)) allocations)" \
	test "$(sdp_stat BufferAllocFails)" -gt "$fails0"
check "ZCopy carried some" test "$(sdp_stat TxSrcAvail)" -gt 0
sdp_check_clean
finish
