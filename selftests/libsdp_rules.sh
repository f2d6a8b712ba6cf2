#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libsdp with an ordinary TCP program (sdp_app), rule by rule:
#  - "sdp": SDP or the error; the connection is SDP (sdpstats), and what libsdp put
#    behind the descriptor keeps its flags, options, owner and dup()'d copy;
#  - "both" client to a TCP-only server: SDP is refused, TCP carries it,
#    for a blocking connect and for non-blocking ones waited on with
#    poll, ppoll, select and epoll (the program never sees the refusal);
#  - "both" server, waiting with epoll, poll, select, a blocking accept or
#    forked children's blocking accepts: a plain TCP client and an SDP
#    client on the same port;
#  - "both" to 127.0.0.1 (no RDMA device there): TCP;
#  - "sdp" servers sharing a port by SO_REUSEPORT (libsdp's IPPROTO_SDP
#    sockets): four listeners, each serving some of 96 connections;
#  - rules by port range and prefix pick SDP or TCP as written;
#  - 50 threads creating and connecting sockets at once;
#  - select() beyond FD_SETSIZE while libsdp watches a "both" listener,
#    and over sets another thread changes meanwhile;
#  - a "both" listener's twin: its number taken by dup2() or closed by
#    the program, which never opened it, and SDP clients still served;
#  - getsockopt(SO_ERROR) of a "both" connect gone over to a TCP connect
#    whose SYNs go unanswered answers at once, as TCP's;
#  - a socket closed by fclose(), close_range() or closefrom(): its twin
#    goes with it and the number is a new socket's;
#  - without ib_sdp: "sdp" fails with EAFNOSUPPORT, "both" uses TCP.
# Over iWARP (SDP_RDMA=siw, make check-full) an SDP port is a TCP port
# (Documentation/sdp.rst, "iWARP"): the cases that put a TCP and an SDP
# end on one port are skipped, and the servers of the others take the
# rule their clients are to use.
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
# a failed case must not leave servers holding SDP sockets for the next test
trap 'pkill -x sdp_app' EXIT
sdp_unload
sdp_load || exit 1
sdp_conf=/tmp/sdp.conf both_conf=/tmp/both.conf
printf 'use sdp server * *:*\nuse sdp client * *:*\n' >$sdp_conf
printf 'use both server * *:*\nuse both client * *:*\n' >$both_conf
iwarp=0
[ "${SDP_RDMA:-rxe}" = siw ] && iwarp=1
# one_port CASE: may TCP and SDP share a port here?  Says so if not.
one_port() {
	[ $iwarp = 0 ] && return 0
	echo "# skipped over iWARP, one port for TCP and SDP: $1"
	return 1
}

# app PORT -- a server: start it in the background, wait till it listens
server() {	# conf|- port kind n
	local conf=$1 port=$2
	shift 2
	if [ "$conf" = - ]; then
		sdp_app server "$addr" "$port" "$@" >/tmp/server.out 2>&1 &
	else
		with_libsdp "$conf" sdp_app server "$addr" "$port" "$@" \
			>/tmp/server.out 2>&1 &
	fi
	srv=$!
	wait_for grep -q listening /tmp/server.out
}

server_done() {	# description
	local rc
	wait "$srv"
	rc=$?
	check_eq "$1 ($(tail -n 1 /tmp/server.out))" 0 "$rc"
}

# "sdp": SDP or the error
if one_port "sdp client to a TCP-only server"; then
	server - 7400 epoll 1
	out=$(with_libsdp $sdp_conf sdp_app client "$addr" 7400 block 2>&1)
	check_eq "sdp client to a TCP-only server: refused" "connect: ECONNREFUSED" "$out"
	out=$(sdp_app client "$addr" 7400 block 2>&1)
	check_eq "the TCP-only server is there for TCP" ok "$out"
	server_done "the TCP-only server served the TCP client"
fi

# "sdp", and what libsdp put behind the descriptor keeps its properties
server $sdp_conf 7401 epoll 1
opens=$(sdp_stat ActiveOpens)
out=$(with_libsdp $sdp_conf sdp_app props "$addr" 7401 2>&1)
echo "$out" | grep -v '^# ok'
check "sdp to an SDP server: flags, options, owner, copy, SO_ZEROCOPY" \
	grep -q '0 failed' <<<"$out"
check "sdp to an SDP server: it was SDP" test "$(sdp_stat ActiveOpens)" -gt "$opens"
server_done "sdp: the SDP server served it"

# "both" client, TCP-only server: every way of waiting for the connect
if one_port "both clients to a TCP-only server"; then
	server - 7410 epoll 5
	refused=$(sdp_stat ConnRefused) opens=$(sdp_stat ActiveOpens)
	for kind in block poll ppoll select epoll; do
		out=$(with_libsdp $both_conf sdp_app client "$addr" 7410 $kind 2>&1)
		check_eq "both client ($kind) to a TCP-only server" ok "$out"
	done
	server_done "the TCP-only server served 5"
	check_eq "each tried SDP first: 5 refused" $((refused + 5)) "$(sdp_stat ConnRefused)"
	check_eq "none connected over SDP" "$opens" "$(sdp_stat ActiveOpens)"
fi

# "both" server: a TCP client and an SDP client on the same port
port=7420 kinds="epoll poll select block fork"
one_port "both servers" || kinds=
for kind in $kinds; do
	server $both_conf $port $kind 2
	check "both server ($kind) listens on TCP" tcp_listening $port
	check "both server ($kind) listens on SDP" sdp_listening $port
	passive=$(sdp_stat PassiveOpens)
	out=$(sdp_app client "$addr" $port poll 2>&1)
	check_eq "both server ($kind): a plain TCP client" ok "$out"
	out=$(with_libsdp $sdp_conf sdp_app client "$addr" $port poll 2>&1)
	check_eq "both server ($kind): an SDP client" ok "$out"
	server_done "both server ($kind) served both"
	check_eq "both server ($kind): one SDP connection" $((passive + 1)) \
		"$(sdp_stat PassiveOpens)"
	port=$((port + 1))
done

# "both" to loopback: rdma_cm has no device there, TCP it is
sdp_app server 127.0.0.1 7430 epoll 1 >/tmp/server.out 2>&1 &
srv=$!
wait_for grep -q listening /tmp/server.out
out=$(with_libsdp $both_conf sdp_app client 127.0.0.1 7430 epoll 2>&1)
check_eq "both client to 127.0.0.1: TCP" ok "$out"
server_done "the loopback server served it"

# "sdp" servers sharing a port by SO_REUSEPORT: libsdp's IPPROTO_SDP
# sockets keep the option, so all four listen and take connections
if one_port "SO_REUSEPORT listeners under libsdp"; then
	p0=$(sdp_stat PassiveOpens)
	out=$(with_libsdp $sdp_conf sdp_reuseport 6 0.0.0.0 "$addr" 7480 libsdp 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "four SO_REUSEPORT listeners under libsdp, every connection served" 0 "$rc"
	check_eq "... by SDP (PassiveOpens)" 96 $(($(sdp_stat PassiveOpens) - p0))
fi

# rules by port range and by prefix
printf '%s\n' "use tcp client * *:7441" "use sdp client * *:7440-7449" \
	"use tcp client * 10.0.0.0/8:*" "use sdp client * $addr/32:7450" >/tmp/ranges.conf
for case in "7440 1" "7441 0" "7449 1" "7450 0"; do
	set -- $case
	# a "both" server takes either; the counter says which came (on
	# iWARP the server takes the one the client should use)
	conf=$both_conf
	if [ $iwarp = 1 ]; then
		conf=-
		[ "$2" = 1 ] && conf=$sdp_conf
	fi
	server $conf "$1" epoll 1
	opens=$(sdp_stat ActiveOpens)
	out=$(with_libsdp /tmp/ranges.conf sdp_app client "$addr" "$1" poll 2>&1)
	check_eq "port $1: connected" ok "$out"
	server_done "port $1 served"
	check_eq "port $1: SDP by the rules ($2)" "$2" \
		"$(($(sdp_stat ActiveOpens) - opens))"
done

# 50 threads at once
conf=$both_conf
[ $iwarp = 1 ] && conf=$sdp_conf
server $conf 7460 epoll 50
passive=$(sdp_stat PassiveOpens)
out=$(with_libsdp $sdp_conf sdp_app threads "$addr" 7460 50 2>&1)
echo "$out" | grep -v ' threads connected'
check_eq "50 threads connected and echoed at once" \
	"50 of 50 threads connected and echoed" "$(tail -n 1 <<<"$out")"
server_done "the server served all 50"
check_eq "all 50 over SDP" $((passive + 50)) "$(sdp_stat PassiveOpens)"

# select() over more descriptors than FD_SETSIZE while libsdp watches a
# "both" listener: the answer select() gives without libsdp
want="select: 1, 1500 readable: no, 1501 writable: yes"
check_eq "select() beyond FD_SETSIZE, without libsdp" "$want" \
	"$(sdp_app bigselect "$addr" 7480 2>&1)"
check_eq "select() beyond FD_SETSIZE, with a both listener" "$want" \
	"$(with_libsdp $both_conf sdp_app bigselect "$addr" 7481 2>&1)"

# closes libsdp does not see: its twin goes too, and the number is free
if one_port "the both listener's twin"; then
	out=$(with_libsdp $both_conf sdp_app closes "$addr" 7482 2>&1)
	echo "$out"
	for how in fclose close_range closefrom; do
		check "$how: the both listener had its SDP twin" \
			grep -q "^$how: before: 1 SDP listening" <<<"$out"
		check "$how: the twin closed with it, a UDP socket after it is UDP" \
			grep -q "^$how: after: 0 SDP listening, UDP socket .* bind success, SOCK_DGRAM" <<<"$out"
	done
fi

# the twin's number is libsdp's: the program may take it (dup2()) or
# close it (EBADF, a number it never opened), and SDP clients still come
if one_port "the both listener's twin number"; then
	with_libsdp $both_conf sdp_libsafe twin "$addr" 7483 >/tmp/twin.out 2>&1 &
	tw=$!
	wait_for grep -q "^ready 1" /tmp/twin.out
	out=$(with_libsdp $sdp_conf sdp_app client "$addr" 7483 block 2>&1)
	check_eq "an SDP client after dup2() onto the twin's number" ok "$out"
	wait_for grep -q "^ready 2" /tmp/twin.out
	out=$(with_libsdp $sdp_conf sdp_app client "$addr" 7483 block 2>&1)
	check_eq "an SDP client after close() of the twin's number" ok "$out"
	wait $tw
	want="twin: found|dup2 onto it: ok|the pipe at that number: ok|ready 1"
	want+="|accept after dup2: ok|the pipe still: ok|twin again: found"
	want+="|close of it: EBADF|ready 2|accept after close: ok"
	check_eq "the program's view of the twin's number" "$want" \
		"$(paste -sd'|' /tmp/twin.out)"
fi
# SO_ERROR of a "both" connect that falls back to a TCP connect whose
# SYNs go unanswered (a listener with a full queue): TCP's answer, at once.
# Over iWARP the SDP connect is itself a TCP connect to that port, which
# stalls instead of failing: the answer is the same, at once, and close()
# returns at once too (Soft-iWARP's blocking connect is made without the
# socket's lock: sdp_iw_connect())
python3 -c '
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((sys.argv[1], 7485)); l.listen(0)
cs = []
for i in range(4):
    c = socket.socket(); c.setblocking(False); c.connect_ex((sys.argv[1], 7485)); cs.append(c)
time.sleep(1); print("full", flush=True); time.sleep(60)' "$addr" >/tmp/full.out 2>&1 &
full=$!
wait_for grep -q full /tmp/full.out
out=$(with_libsdp $both_conf timeout -s KILL 30 sdp_libsafe soerror "$addr" 7485 2>&1)
check_eq "SO_ERROR of a both connect gone over to a stalled TCP connect" \
	"SO_ERROR: success, at once" "$out"
kill $full
out=$(with_libsdp $both_conf timeout -s KILL 30 sdp_libsafe selectrace "$addr" 7484 2>&1)
check "select() over sets another thread changes ($out)" \
	grep -q "^select with sets changing: survived" <<<"$out"

check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean	# unloads ib_sdp

# without the module (it is not installed: no autoload either)
server - 7470 epoll 1
out=$(with_libsdp $sdp_conf sdp_app client "$addr" 7470 block 2>/dev/null)
check_eq "sdp rule without ib_sdp: the error" "connect: EAFNOSUPPORT" "$out"
out=$(with_libsdp $both_conf sdp_app client "$addr" 7470 epoll 2>&1)
check_eq "both rule without ib_sdp: TCP" ok "$out"
server_done "served without ib_sdp"
check "ib_sdp was not loaded by any of it" test ! -d /sys/module/ib_sdp
finish
