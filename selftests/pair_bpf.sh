#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bpf_policy.sh between two hosts (kernels with update_socket_protocol,
# 6.6 and later): unmodified programs moved onto SDP by sdp_bpf(8)
# policies on both VMs, over rxe across the wire.
#   a: under "sdp_bpf run", a Go HTTP server and redis-server; outside any
#      policy, a TCP-only Go server; then waits for b's word (a control
#      connection, plain TCP) and checks it accepted SDP connections.
#   b: under "sdp_bpf run", the Go client (20 bodies of 1 MiB checked),
#      redis-cli (a 48 KiB value set and read back) and redis-benchmark,
#      all over SDP; the Go client reaches the TCP-only server by TCP.
# Argument: "a" (servers, on SDP_IP) or "b" (clients, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
BPF=$SDP_REPO/userspace/sdp_bpf/sdp_bpf
T=$(dirname "$0")
sdp_fresh || exit 1
if ! $BPF check >/dev/null 2>&1; then
	echo "# SKIP: $(uname -r) has no update_socket_protocol hook"
	sdp_check_clean
	finish
fi
grep -q cgroup2 /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup

if [ "$role" = a ]; then
	opens=$(sdp_stat PassiveOpens)
	$BPF run -- "$T/sdp_gohttp" serve "$SDP_IP:8810" >/tmp/gosrv.out 2>&1 &
	"$T/sdp_gohttp" serve "$SDP_IP:8820" >/tmp/gotcp.out 2>&1 &
	$BPF run -- redis-server --bind "$SDP_IP" --port 6391 --save "" \
		--appendonly no --protected-mode no >/tmp/redis.out 2>&1 &
	# b says when it is done, on a plain TCP connection
	word=$(timeout 900 python3 -c 'import socket, sys
l = socket.create_server((sys.argv[1], 8899))
c, _ = l.accept()
print(c.recv(16).decode())' "$SDP_IP")
	check_eq "b is done" "done" "$word"
	check_eq "Go server under the policy: IPPROTO_SDP" "listener proto 261" \
		"$(grep proto /tmp/gosrv.out)"
	check_eq "the Go server outside it: TCP" "listener proto 6" \
		"$(grep proto /tmp/gotcp.out)"
	check "SDP connections accepted (PassiveOpens)" \
		test "$(sdp_stat PassiveOpens)" -ge $((opens + 3))
	pkill -f "sdp_gohttp serve"
	pkill -x redis-server
	wait
	sdp_check_clean
	finish
fi

peer=$SDP_PEER_IP
# a's servers are up once its TCP-only one answers (the others are
# SDP's: a TCP probe cannot tell)
for _ in $(seq 150); do
	timeout 5 bash -c "echo > /dev/tcp/$peer/8820" 2>/dev/null && break
	sleep 1
done
sleep 3
opens=$(sdp_stat ActiveOpens)
out=$($BPF run -- timeout 300 "$T/sdp_gohttp" get "$peer:8810" 20 2>&1)
echo "$out" | sed 's/^/# /'
check_eq "Go client under the policy: IPPROTO_SDP" "client proto 261" \
	"$(grep proto <<<"$out")"
check_eq "... 20 bodies of 1 MiB from the SDP server" "20 responses ok" \
	"$(grep responses <<<"$out")"
fbs=$(sdp_stat ConnFallbacks)
out=$($BPF run -- timeout 300 "$T/sdp_gohttp" get "$peer:8820" 5 2>&1)
check_eq "... 5 from the TCP-only server, by TCP" "5 responses ok" \
	"$(grep responses <<<"$out")"
check "... ConnFallbacks counts it" test "$(sdp_stat ConnFallbacks)" -gt "$fbs"
fbs=$(sdp_stat ConnFallbacks)
val=$(head -c 36864 /dev/urandom | base64 -w0)
check_eq "redis-cli SET under the policy" OK \
	"$($BPF run -- timeout 60 redis-cli -h "$peer" -p 6391 SET k "$val")"
check "redis-cli GET under the policy: the 48 KiB value" \
	test "$($BPF run -- timeout 60 redis-cli -h "$peer" -p 6391 GET k)" = "$val"
out=$($BPF run -- timeout 300 redis-benchmark -h "$peer" -p 6391 -n 2000 -d 4096 -t set,get -q 2>&1 | tr '\r' '\n')
grep -E "^(SET|GET): [0-9.]+ requests" <<<"$out" | sed 's/^/# /'
check "redis-benchmark under the policy" \
	test "$(grep -cE '^(SET|GET): [0-9.]+ requests per second' <<<"$out")" -eq 2
check "over SDP connections (ActiveOpens)" \
	test "$(sdp_stat ActiveOpens)" -ge $((opens + 3))
check_eq "no fallback for redis's clients: its server is SDP's" "$fbs" \
	"$(sdp_stat ConnFallbacks)"
echo "done" >"/dev/tcp/$peer/8899"
sdp_check_clean
finish
