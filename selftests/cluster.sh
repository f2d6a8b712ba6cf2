#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SDP between several hosts on one switch (testbed/vm-cluster, four VMs by
# default; run on every host at once, SDP_HOSTS and SDP_HOST_INDEX say
# which is which):
#  1. all to all: every host connects to every other host at the same
#     time, one SDP stream of 8 MiB each way per ordered pair (12 for four
#     hosts), every byte checked on both ends; every peer's address was
#     resolved through ARP on the shared segment;
#  2. incast: every other host floods host 1 at once; over 15 s of all of
#     them sending, none delivers less than half the mean;
#  3. a host powered off mid-stream: the last host streams to and from
#     every other host, and powers off (run_tests.sh does, after this
#     test's results) while those streams run; on the others each of
#     their connections to it fails with ETIMEDOUT within its timeouts
#     (TCP_USER_TIMEOUT and keepalive, 10 s, plus slack) of the host's last
#     answer to ping, while streams
#     among themselves, running meanwhile, are all verified.
# Each phase's ports are apart; clients retry until their server is up,
# so hosts need not start a phase together.
. "$(dirname "$0")/lib.sh"

IFS=, read -r -a hosts <<<"${SDP_HOSTS:?run by testbed/vm-cluster}"
n=${#hosts[@]} me=${SDP_HOST_INDEX:?}
if [ "$n" -lt 3 ]; then
	echo "needs three hosts or more: skipped"
	exit 4
fi
others=()
for i in $(seq "$n"); do
	[ "$i" != "$me" ] && others+=("$i")
done
host() { echo "${hosts[$(($1 - 1))]}"; }

sdp_fresh || exit 1
export SDP_STREAM_WAIT=300	# the other VMs may still be booting

# mesh_start NAME PORT MIB [SKIP]: in the background, a server for every
# other host but SKIP, and a stream of MIB each way to each of them
mesh_start() {
	local name=$1 port=$2 mib=$3 skip=${4:-0} j
	mesh_peers=()
	for j in "${others[@]}"; do
		[ "$j" != "$skip" ] && mesh_peers+=("$j")
	done
	sdp_stream server sdp "$SDP_IP" "$port" ${#mesh_peers[@]} \
		>"/tmp/$name.server" 2>&1 &
	mesh_srv=$!
	mesh_pids=()
	for j in "${mesh_peers[@]}"; do
		sdp_stream client sdp "$(host "$j")" "$port" 1 $((mib << 20)) \
			$((me * 100 + j)) >"/tmp/$name.$j" 2>&1 &
		mesh_pids+=($!)
	done
}

# mesh_check WHAT NAME: every stream of mesh_start NAME verified
mesh_check() {
	local what=$1 name=$2 k=0 j rc
	for j in "${mesh_peers[@]}"; do
		wait "${mesh_pids[$k]}"
		rc=$?
		check_eq "$what: to host $j, verified both ways ($(cat "/tmp/$name.$j"))" 0 "$rc"
		k=$((k + 1))
	done
	wait "$mesh_srv"
	rc=$?
	check_eq "$what: from the ${#mesh_peers[@]} others, verified ($(cat "/tmp/$name.server"))" 0 "$rc"
}

# --- 1. all to all
mesh_start a2a 7700 8
mesh_check "all to all" a2a
for j in "${others[@]}"; do
	check "host $j's address resolved by ARP" \
		bash -c "ip neigh show $(host "$j") dev eth0 | grep -q lladdr"
done

# --- 2. incast to host 1
# every SDP socket's state 8 s into the flood, printed if this host's
# part looks starved: for a post-mortem of a sender that got nowhere
(sleep 8; "$SDP_REPO/userspace/sdpstat/sdpstat" -i >/tmp/incast.diag 2>&1) &
if [ "$me" = 1 ]; then
	out=$(sdp_stream incast sdp "$SDP_IP" 7710 $((n - 1)) 15 2>&1)
	check_eq "incast: $((n - 1)) senders, none ended early" 0 "$?"
	echo "$out" | sed 's/^/  /'
	check "incast: every sender at least half the mean" \
		awk '/^fairness/ {exit !($2 >= 0.5)}' <<<"$out" ||
		sed 's/^/  diag: /' /tmp/incast.diag
else
	out=$(sdp_stream flood sdp "$(host 1)" 7710 2>&1)
	rc=$?
	check_eq "incast: flooded host 1 until it closed ($out)" 0 "$rc"
	# a fair share over 15 s is megabytes
	sent=$(grep -o '[0-9]* bytes' <<<"$out" | cut -d' ' -f1)
	if [ "${sent:-0}" -lt $((1 << 20)) ]; then
		sed 's/^/  diag: /' /tmp/incast.diag
	fi
fi
wait

# --- 3. the last host powers off mid-stream
victim=$n big=$((1 << 30))
if [ "$me" = "$victim" ]; then
	# its streams run on after this test ends, until the power goes
	setsid sdp_stream server sdp "$SDP_IP" 7720 $((n - 1)) </dev/null \
		>/tmp/off.server 2>&1 &
	for j in "${others[@]}"; do
		setsid sdp_stream client sdp "$(host "$j")" 7721 1 $big "$j" \
			</dev/null >"/tmp/off.$j" 2>&1 &
	done
	want=$((2 * (n - 1)))
	for _ in $(seq 240); do
		est=$(awk 'NR > 1 && $NF == "1"' /proc/net/sdp | wc -l)
		[ "$est" -ge "$want" ] && break
		sleep 0.5
	done
	check_eq "power-off: streams to and from every other host" "$want" "$est"
	if [ "$est" -lt "$want" ]; then
		# what was missing, before the power goes
		sed 's/^/# sdp: /' /proc/net/sdp
		tail -n 3 /tmp/off.* | sed 's/^/# /'
		echo "# counters: $(awk '$2 != 0 {printf "%s %s ", $1, $2}' /proc/net/sdpstats)"
		dmesg | grep -E 'ib_sdp|siw|rxe' | tail -n 20 | sed 's/^/# dmesg: /'
	fi
	sleep 3
	check "power-off: they are running" \
		test "$(sdp_stat TxBytes)" -gt 0
	touch /run/sdp-poweroff	# run_tests.sh powers off once done
	finish
fi

export SDP_STREAM_TIMEOUT=10
# the host's last answer to ping marks when it went
stdbuf -oL ping -D -i 0.2 "$(host "$victim")" >/tmp/ping.out 2>&1 &
pinger=$!
sdp_stream client sdp "$(host "$victim")" 7720 1 $big "$me" >/tmp/off.to 2>&1 &
to=$!
sdp_stream server sdp "$SDP_IP" 7721 1 >/tmp/off.from 2>&1 &
from=$!
# meanwhile among the survivors: 16 MiB each way per ordered pair
mesh_start live 7722 16 "$victim"
wait $to $from
kill $pinger
gone=$(awk -F'[][]' '/bytes from/ {t = $2} END {print t}' /tmp/ping.out)
check "power-off: the host answered ping until it went ($gone)" test -n "$gone"
for f in to from; do
	out=$(cat "/tmp/off.$f")
	echo "$out" | sed 's/^/  /'
	check "power-off: the stream $f the host ended in ETIMEDOUT" \
		grep -q "Connection timed out" <<<"$out"
	# TCP_USER_TIMEOUT and keepalive say 10 s; the test bed's VMs are slow
	check "power-off: ... within 10 s + 15 s of slack after it went" \
		awk -v gone="$gone" '/timed out/ && match($0, /at [0-9.]+\)/) {
			t = substr($0, RSTART + 3, RLENGTH - 4) - gone; found = 1 }
		     END { printf "%.1f s\n", t; exit !(found && t >= 0 && t <= 25) }' <<<"$out"
done
mesh_check untouched live
check "the connections ended on the transport's retries or keepalive" \
	test $(($(sdp_stat TransportTimeouts) + $(sdp_stat KeepaliveTimeouts) + $(sdp_stat StallTimeouts))) -ge 2
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
# for a failure's post-mortem: what the counters and the kernel log say
echo "# counters: $(awk '$2 != 0 {printf "%s %s ", $1, $2}' /proc/net/sdpstats)"
dmesg | grep -E 'ib_sdp|siw|rxe' | tail -n 20 | sed 's/^/# dmesg: /'
sdp_check_clean
finish
