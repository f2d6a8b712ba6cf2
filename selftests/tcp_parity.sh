#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The differential suite: sdp_parity runs every case on TCP and on SDP
# over the same addresses and prints the table case/step x (TCP, SDP).
# Every step must be the same, or a documented difference
# (Documentation/sdp.rst, "Differences from TCP").  It runs twice: over
# RDMA (the Soft-RoCE address, sdp_local=0), and by the local transport on
# loopback (127.0.0.1, ::1); make check-full adds a third run, by the local
# transport on the Soft-RoCE address, which is an address of this host.
# SDP_PARITY_ENV: VAR=VALUE words sdp_parity runs with (az.sh: under
# libsdp with AZ-SDP on).
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
addr6=$(rxe-up -6) || exit 1

# SDP's own answers too, so that TCP misbehaving cannot hide anything
want() {
	check_eq "SDP $1 ($run)" "$2" \
		"$(awk -F'\t' -v s="$1" '$1 == s {print $3}' /tmp/parity.tsv)"
}

# parity RUN LOCAL ADDR ADDR6 BASE [CASE...]: ports from BASE, apart for
# each run (TCP's sockets of one run may hold its ports a while)
parity() {
	run=$1
	local local=$2 a=$3 a6=$4 base=$5
	shift 5
	sdp_unload
	sdp_load sdp_local="$local" || exit 1
	echo "# --- $run: $a $a6, sdp_local=$local"
	# shellcheck disable=SC2086
	env ${SDP_PARITY_ENV:-} SDP_PARITY_TSV=/tmp/parity.tsv \
		sdp_parity "$a" "$a6" "$base" "$@"
	check_eq "every step as TCP, or a documented difference ($run)" 0 "$?"
	if [ $# -eq 0 ]; then
		want refused/connect ECONNREFUSED
		want "bind/bind in use" EADDRINUSE
		want nonblock_connect/connect EINPROGRESS
		want "backlog_full/3 once there is room" OUT
		want "shutdown/peer reads EOF" 0:
		want "linger/{1,0}: peer read" ECONNRESET
		want "oob/recv OOB" 1:d
		want sigpipe/SIGPIPE 1
		want "epoll_many/requests seen by epoll" 1000
		check "urgent data counted ($run)" test "$(sdp_stat RxUrgent)" -gt 0
	fi
	check "SDP sockets carried the SDP run ($run)" \
		test "$(sdp_stat ActiveOpens)" -gt 0
	check_eq "no protocol error ($run)" 0 "$(sdp_stat ProtoErrors)"
	if [ "$local" = 1 ]; then
		check "carried by the local transport ($run)" \
			test "$(sdp_stat LocalActiveOpens)" -gt 0
		check_eq "every connection local ($run)" \
			"$(sdp_stat ActiveOpens)" "$(sdp_stat LocalActiveOpens)"
	else
		check_eq "no local connection ($run)" 0 "$(sdp_stat LocalActiveOpens)"
		[ $# -eq 0 ] && want unreachable/connect EHOSTUNREACH
	fi
	[ -n "${SDP_PARITY_ENV:-}" ] && echo "# AzSends $(sdp_stat AzSends)"
	sdp_check_clean
}

# SDP_PARITY_RUNS: which runs (tcp_parity_addr.sh, in make check-full,
# gives the third alone).  SDP_PARITY_SHIFT moves every run's ports: a
# caller that runs the suite shortly before another does (az.sh) must
# not meet its TCP connections still in TIME_WAIT (60 s) on the same
# ports, which listen_on() binds without SO_REUSEADDR.
shift_=${SDP_PARITY_SHIFT:-0}
for r in ${SDP_PARITY_RUNS:-rdma loopback}; do
	case $r in
	rdma) parity rdma 0 "$addr" "$addr6" $((9000 + shift_)) "$@" ;;
	loopback) parity loopback 1 127.0.0.1 ::1 $((12000 + shift_)) "$@" ;;
	address) parity "local address" 1 "$addr" "$addr6" $((15000 + shift_)) "$@" ;;
	esac
done
finish
