#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sdp_bpf(8): programs moved onto SDP by a BPF policy, no LD_PRELOAD
# (Documentation/sdp-bpf.rst), over rxe:
#  - on a kernel without the update_socket_protocol hook (6.1), sdp_bpf
#    says so, points to libsdp and exits 2;
#  - a statically linked program in the policy's cgroup gets IPPROTO_SDP
#    sockets (SO_PROTOCOL, /proc/net/sdp, ActiveOpens) and moves 4 MiB
#    each way byte-checked; the same program outside the cgroup, or once
#    the policy is detached, stays on TCP;
#  - a policy naming programs moves those only (the others counted as
#    kept), named by --program or by a file in libsdp.conf's language;
#  - a Go HTTP server and a Go client (Go makes its own system calls),
#    each under "sdp_bpf run", 1 MiB bodies checked; the Go client under
#    the policy reaches a TCP-only Go server by TCP (ConnFallbacks);
#  - redis-server and redis-cli under "sdp_bpf run": a 64 KiB value set
#    and read back, redis-benchmark; a redis-cli outside any policy
#    reaches the moved server by TCP (its listener's TCP twin);
#  - nothing leaks, the module unloads.
. "$(dirname "$0")/lib.sh"

BPF=$SDP_REPO/userspace/sdp_bpf/sdp_bpf
T=$(dirname "$0")

sdp_fresh || exit 1
addr=$SDP_ADDR

out=$($BPF check 2>&1)
rc=$?
if [ "$rc" != 0 ]; then
	echo "$out" | sed 's/^/# /'
	check_eq "no hook on $(uname -r): sdp_bpf exits 2" 2 "$rc"
	check "... and points to libsdp" grep -q libsdp <<<"$out"
	sdp_check_clean
	finish
fi

grep -q cgroup2 /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup
cg=/sys/fs/cgroup/sdp_bpf_test
mkdir -p "$cg"
in_cg() {
	(echo "$BASHPID" >"$cg/cgroup.procs" && exec "$@")
}

# a static binary, in the cgroup and outside it
check_eq "attach a policy on the cgroup" 0 \
	"$($BPF attach t1 --cgroup "$cg" >/dev/null; echo $?)"
opens=$(sdp_stat ActiveOpens)
out=$(in_cg timeout 60 "$T/sdp_static" "$addr" 8700)
echo "$out" | sed 's/^/# /'
check_eq "static binary in the cgroup: IPPROTO_SDP sockets" \
	"protocols 261 261 261" "$(grep protocols <<<"$out")"
check "... listed in /proc/net/sdp while connected" \
	test "$(awk '/^rows/ {print $2}' <<<"$out")" -ge 3
check_eq "... every byte" "bytes ok" "$(grep bytes <<<"$out")"
check_eq "... one SDP connection (ActiveOpens)" $((opens + 1)) \
	"$(sdp_stat ActiveOpens)"
out=$(timeout 60 "$T/sdp_static" "$addr" 8701)
check_eq "the same binary outside the cgroup: TCP" "protocols 6 6 6" \
	"$(grep protocols <<<"$out")"
check_eq "... no SDP connection" $((opens + 1)) "$(sdp_stat ActiveOpens)"
st=$($BPF status)
echo "$st" | sed 's/^/# /'
# socket() twice (listener, client); accept() asks no policy
check "sdp_bpf status counts the sockets moved" \
	grep -q "policy t1: moved 2," <<<"$st"
check_eq "detach" 0 "$($BPF detach t1; echo $?)"
out=$(in_cg timeout 60 "$T/sdp_static" "$addr" 8702)
check_eq "detached: TCP in the cgroup too" "protocols 6 6 6" \
	"$(grep protocols <<<"$out")"

# a policy that names programs
$BPF attach t2 --cgroup "$cg" --program 'sdp_stat*' >/dev/null
out=$(in_cg timeout 60 "$T/sdp_static" "$addr" 8703)
check_eq "--program 'sdp_stat*': sdp_static moved" "protocols 261 261 261" \
	"$(grep protocols <<<"$out")"
check_eq "... python3 in the same cgroup kept on TCP" 6 \
	"$(in_cg python3 -c 'import socket; print(socket.socket().getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL))')"
st=$($BPF status)
echo "$st" | sed 's/^/# /'
check "... counted as kept" grep -q "policy t2: moved 2, kept 1" <<<"$st"
$BPF detach t2
# the same from a file in libsdp.conf's language: the rules a policy can
# follow, and a word for the others
printf 'use both client sdp_stat* *:*\nuse sdp server redis-server *:6379\nuse tcp client * *:*\n' >/tmp/policy.conf
warn=$($BPF attach t3 --cgroup "$cg" --config /tmp/policy.conf 2>&1 >/dev/null)
echo "$warn" | sed 's/^/# /'
check "--config: rules for some addresses, and 'use tcp', said not followed" \
	test "$(grep -c 'not followed' <<<"$warn")" -eq 2
out=$(in_cg timeout 60 "$T/sdp_static" "$addr" 8704)
check_eq "--config 'use both client sdp_stat* *:*': moved" \
	"protocols 261 261 261" "$(grep protocols <<<"$out")"
check_eq "... python3 kept on TCP" 6 \
	"$(in_cg python3 -c 'import socket; print(socket.socket().getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL))')"
$BPF detach t3

# Go: a server and a client, each in a policy of its own
opens=$(sdp_stat ActiveOpens)
$BPF run -- "$T/sdp_gohttp" serve "$addr:8710" >/tmp/gosrv.out 2>&1 &
for _ in $(seq 50); do grep -q proto /tmp/gosrv.out && break; sleep 0.2; done
out=$($BPF run -- timeout 120 "$T/sdp_gohttp" get "$addr:8710" 20 2>&1)
echo "$out" | sed 's/^/# /'
check_eq "Go server: IPPROTO_SDP listener" "listener proto 261" \
	"$(grep proto /tmp/gosrv.out)"
check_eq "Go client: IPPROTO_SDP" "client proto 261" "$(grep proto <<<"$out")"
check_eq "Go: 20 bodies of 1 MiB right" "20 responses ok" \
	"$(grep responses <<<"$out")"
check "Go: over SDP connections" test "$(sdp_stat ActiveOpens)" -gt "$opens"
pkill -f "sdp_gohttp serve $addr:8710"
wait

# the Go client under the policy, the server on plain TCP outside it:
# the client's SDP connects find no SDP listener and go on by TCP
fbs=$(sdp_stat ConnFallbacks)
"$T/sdp_gohttp" serve "$addr:8720" >/tmp/gotcp.out 2>&1 &
for _ in $(seq 50); do grep -q proto /tmp/gotcp.out && break; sleep 0.2; done
out=$($BPF run -- timeout 120 "$T/sdp_gohttp" get "$addr:8720" 5 2>&1)
echo "$out" | sed 's/^/# /'
check_eq "a TCP-only Go server" "listener proto 6" "$(grep proto /tmp/gotcp.out)"
check_eq "... the Go client's socket made IPPROTO_SDP" "client proto 261" \
	"$(grep proto <<<"$out")"
check_eq "... reaches it by TCP: 5 bodies right" "5 responses ok" \
	"$(grep responses <<<"$out")"
check "... ConnFallbacks counts it" test "$(sdp_stat ConnFallbacks)" -gt "$fbs"
pkill -f "sdp_gohttp serve $addr:8720"
wait

# redis
opens=$(sdp_stat ActiveOpens)
$BPF run -- redis-server --bind "$addr" --port 6390 --save "" \
	--appendonly no --protected-mode no >/tmp/redis.out 2>&1 &
for _ in $(seq 50); do grep -q "Ready to accept" /tmp/redis.out && break; sleep 0.2; done
val=$(head -c 49152 /dev/urandom | base64 -w0)
check_eq "redis-cli SET under the policy" OK \
	"$($BPF run -- redis-cli -h "$addr" -p 6390 SET k "$val")"
check "redis-cli GET under the policy: the 64 KiB value" \
	test "$($BPF run -- redis-cli -h "$addr" -p 6390 GET k)" = "$val"
out=$($BPF run -- redis-benchmark -h "$addr" -p 6390 -n 2000 -d 4096 -t set,get -q 2>&1)
echo "$out" | tr '\r' '\n' | grep -E "^(SET|GET):" | sed 's/^/# /'
check "redis-benchmark under the policy" \
	test "$(grep -cE '^(SET|GET): .*requests per second' <<<"$(tr '\r' '\n' <<<"$out")")" -eq 2
check "redis: over SDP (ActiveOpens)" test "$(sdp_stat ActiveOpens)" -ge $((opens + 3))
check "redis: its listener in /proc/net/sdp" \
	grep -q ":18F6 " /proc/net/sdp
acc=$(sdp_stat AcceptFallbacks)
check_eq "a redis-cli outside the policy reaches it by TCP" PONG \
	"$(timeout 10 redis-cli -h "$addr" -p 6390 PING)"
check "... accepted by TCP (AcceptFallbacks)" \
	test "$(sdp_stat AcceptFallbacks)" -gt "$acc"
pkill -x redis-server
wait
rmdir "$cg"
check_eq "no policy left" 0 "$(ls /sys/fs/bpf/sdp_bpf 2>/dev/null | wc -l)"
sdp_check_clean
finish
