#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What only SDP has (sdp_conn): ENODEV and SDP_LAST_BIND_ERR for an
# address with no RDMA device, SO_RCVBUF/SO_SNDBUF sizing the rings, the
# bound on requests waiting for a full accept queue, TCP_CORK and
# TCP_NODELAY seen in the message counters.  Everything TCP also has is
# compared with TCP by tcp_parity.sh.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR

# one request may wait for room in a full accept queue, the next is refused
syn_backlog=$(cat /proc/sys/net/ipv4/tcp_max_syn_backlog)
echo 1 >/proc/sys/net/ipv4/tcp_max_syn_backlog
sdp_conn "$addr" 7350 >/tmp/conn.only 2>&1
check_eq "sdp_conn completes" 0 "$?"
echo "$syn_backlog" >/proc/sys/net/ipv4/tcp_max_syn_backlog
cat /tmp/conn.only
only() {
	check_eq "SDP $1" "$2" "$(sed -n "s/^$1 *| //p" /tmp/conn.only)"
}
only "connect 127.0.0.1" ENODEV
check_eq "SDP_LAST_BIND_ERR after it" ENODEV \
	"$(sed -n 's/^  SDP_LAST_BIND_ERR *| //p' /tmp/conn.only | head -1)"
check_eq "backlog 1: two connections wait for accept" "ok ok" \
	"$(sed -n 's/^backlog 1: connect 1-2 *| //p' /tmp/conn.only | paste -sd' ')"
only "backlog 1: connect 3" EINPROGRESS
only "backlog 1: 3 waits" 0
only "backlog 1: 4 SO_ERROR" ECONNREFUSED
only "backlog 1: 3 once there is room" OUT
check_eq "the waiting request counted" 1 "$(sdp_stat ListenQueued)"
check_eq "the refused one counted" 1 "$(sdp_stat ListenOverflows)"
# a non-blocking writer fills the peer's window: no more than the
# listener's SO_RCVBUF (64 KiB, doubled by the kernel) and its own
# SO_SNDBUF (32 KiB, doubled) let the buffers grow to
took=$(sed -n 's/^small buffers: send took *| //p' /tmp/conn.only)
check "small buffers: send took at most SO_RCVBUF + SO_SNDBUF ($took)" \
	test "${took% bytes*}" -gt 0 -a "${took% bytes*}" -le $((2 * (65536 + 32768))) \
	-a "${took#*then }" = EAGAIN
only "small buffers: peer got all" yes
only "corked: messages sent" 0
only "uncorked: messages sent" 1
only "peer has" "100 bytes"
# the peer reads nothing: its ring (sdp_rx_size, the corked message
# still in one buffer) is what the 1-byte writes may take one each
nodelay=$(sed -n 's/^nodelay: messages sent *| //p' /tmp/conn.only)
check "TCP_NODELAY: one message per write while credits last ($nodelay)" \
	test "$nodelay" -ge $(($(cat /sys/module/ib_sdp/parameters/sdp_rx_size) - 1))
sdp_check_clean
finish
