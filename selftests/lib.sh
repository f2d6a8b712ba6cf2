# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the ib_sdp shell selftests (sourced).

SELFTESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SDP_REPO=${SDP_REPO:-$(cd "$SELFTESTS_DIR/.." && pwd)}
KVER=${KVER:-$(uname -r)}
# the module built for this kernel (testbed/build-kmod), else make's
if [ -z "${SDP_KO:-}" ]; then
	SDP_KO=$SDP_REPO/build/kmod/$KVER/net/sdp/ib_sdp.ko
	[ -f "$SDP_KO" ] || SDP_KO=$SDP_REPO/net/sdp/ib_sdp.ko
fi
# Soft-iWARP built for this kernel (testbed/build-siw): with the test
# bed's fixes, and without
SIW_KO=$SDP_REPO/build/kmod/$KVER/siw/siw.ko
SIW_STOCK_KO=$SDP_REPO/build/kmod/$KVER/siw-stock/siw.ko
PATH=$SELFTESTS_DIR:$SDP_REPO/testbed:$PATH
KSFT_SKIP=4

checks=0
failures=0
check_at=$SECONDS

# With SDP_CHECK_TIMES=1, each check's line ends in the seconds since
# the one before ("[+12s]", in $ct): where a test spends its time.
check_time() {
	ct=
	[ "${SDP_CHECK_TIMES:-0}" = 1 ] || return 0
	ct=" [+$((SECONDS - check_at))s]"
	check_at=$SECONDS
}

# check DESCRIPTION COMMAND [ARG...]: run COMMAND, record the result.
check() {
	local desc=$1
	shift
	checks=$((checks + 1))
	if "$@"; then
		check_time
		echo "ok   $desc$ct"
	else
		check_time
		failures=$((failures + 1))
		echo "FAIL $desc$ct"
		return 1
	fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	checks=$((checks + 1))
	check_time
	if [ "$2" = "$3" ]; then
		echo "ok   $1 ($3)$ct"
	else
		failures=$((failures + 1))
		echo "FAIL $1: expected '$2', got '$3'$ct"
		return 1
	fi
}

# prog_result DESCRIPTION OUTPUT RC: a check-printing program's result
# (selftests/check.h): its lines other than "# ok", then one check that
# it exited 0, naming its first failure, so that the suite's own line
# says what broke where only the lines near it are kept (a CI summary).
prog_result() {
	local first

	echo "$2" | grep -v '^# ok '
	first=$(echo "$2" | grep -m1 '^# FAIL ' | cut -c8-)
	check_eq "$1${first:+ [first: $first]}" 0 "$3"
}

finish() {
	echo "$checks checks, $failures failed"
	[ "$failures" = 0 ] && exit 0
	exit 1
}

sdp_loaded() {
	[ -d /sys/module/ib_sdp ]
}

# sdp_load [PARAM=VALUE...]: load the module built in this tree.  The
# local transport is off (sdp_local=0, SDP_LOCAL to change) unless asked
# for: most suites test what goes over RDMA, in one VM too.
sdp_load() {
	modprobe rdma_cm && insmod "$SDP_KO" sdp_local="${SDP_LOCAL:-0}" "$@"
}

sdp_unload() {
	if sdp_loaded; then
		rmmod ib_sdp
	fi
}

# sdp_fresh [PARAM=VALUE...]: the preamble of most tests: the test bed's
# Soft-RoCE device up (its address in SDP_ADDR) and the module loaded
# afresh.
sdp_fresh() {
	SDP_ADDR=$(rxe-up) || return 1
	sdp_unload
	sdp_load "$@"
}

# Number of protection domains ib_sdp holds (one per RDMA device).
sdp_pd_count() {
	rdma resource show pd 2>/dev/null | grep -c 'comm \[ib_sdp\]'
}

# sdp_inuse: SDP sockets in use in this namespace (families 27/28 and
# IPPROTO_SDP's).
sdp_inuse() {
	awk '$1 ~ /^SDP(-INET6?)?$/ {n += $3} END {print n + 0}' /proc/net/protocols
}

# sdp_stat NAME: a counter of /proc/net/sdpstats.
sdp_stat() {
	awk -v n="$1" '$1 == n {print $2}' /proc/net/sdpstats
}

# sdp_tx_bytes / sdp_rx_bytes: payload bytes sent / received by any path:
# BCopy (Data messages), SrcAvail (read directly or ahead by the peer),
# SinkAvail (written into the peer's buffer).
sdp_tx_bytes() {
	echo $(($(sdp_stat TxBytes) + $(sdp_stat TxZcopyBytes) + \
		$(sdp_stat TxZcopyWriteBytes)))
}

sdp_rx_bytes() {
	echo $(($(sdp_stat RxBytes) + $(sdp_stat RxZcopyDirectBytes) + \
		$(sdp_stat RxZcopyBounceBytes) + $(sdp_stat RxZcopySinkBytes)))
}

# sdp_qp_count: QPs of kernel rdma_cm users (rdma_create_qp() names them
# [rdma_cm], not [ib_sdp]; in the test bed ib_sdp is the only one).
sdp_qp_count() {
	rdma resource show qp 2>/dev/null | grep -c 'comm \[rdma_cm\]'
}

# sdp_rdma_objects: "QPs CQs MRs" that ib_sdp holds.
sdp_rdma_objects() {
	echo "$(sdp_qp_count)" \
	     "$(rdma resource show cq 2>/dev/null | grep -c 'comm \[ib_sdp\]')" \
	     "$(rdma resource show mr 2>/dev/null | grep -c 'comm \[ib_sdp\]')"
}

# sdp_slab_objs: objects allocated from the SDP socket cache (the test
# bed boots with slab_nomerge, so the cache is SDP's alone); shrinking it
# first flushes the per-CPU slabs, whose free objects would count as used.
sdp_slab_objs() {
	local c
	for c in SDP SDP-INET SDP-INET6; do
		echo 1 >/sys/kernel/slab/$c/shrink 2>/dev/null
	done
	awk '$1 ~ /^SDP(-INET6?)?$/ {n += $2} END {print n + 0}' /proc/slabinfo
}

# sdp_wait_gone: up to 10 s for every SDP socket and its verbs objects
# to be gone (a closed socket's teardown runs from a work item).
sdp_wait_gone() {
	local i
	for i in $(seq 50); do
		[ "$(sdp_inuse)" = 0 ] && [ "$(sdp_rdma_objects)" = "0 0 0" ] && return
		sleep 0.2
	done
}

# sdp_check_clean: after a test, every SDP socket, its memory and every
# RDMA object is gone (teardown is asynchronous: sdp_wait_gone first).
sdp_check_clean() {
	sdp_wait_gone
	check_eq "no SDP socket left" 0 "$(sdp_inuse)"
	check_eq "no ib_sdp QP, CQ or MR left" "0 0 0" "$(sdp_rdma_objects)"
	check_eq "no row left in /proc/net/sdp" 1 "$(wc -l </proc/net/sdp)"
	check_eq "no SDP socket left in its slab cache" 0 "$(sdp_slab_objs)"
	check_eq "no page held for sendfile()" 0 "$(sdp_stat ZcopyPageRefs)"
	check_eq "no buffer memory left" 0 "$(sdp_stat BufferBytes)"
	check "ib_sdp unloads" rmmod ib_sdp
}

# ---- libsdp -------------------------------------------------------------

LIBSDP=${SDP_LIBSDP:-$SDP_REPO/userspace/libsdp/libsdp.so}
SDP_RUN=$SDP_REPO/userspace/libsdp/sdp_run

# with_libsdp CONF CMD [ARG...]: CMD preloaded with libsdp, rules from CONF.
with_libsdp() {
	local conf=$1
	shift
	LD_PRELOAD=$LIBSDP LIBSDP_CONFIG_FILE=$conf "$@"
}

# libsdp_bg CONF CMD [ARG...]: with_libsdp in the background, CMD's own
# pid (not a subshell's) in $bg_pid, to kill it.
libsdp_bg() {
	local conf=$1
	shift
	(LD_PRELOAD=$LIBSDP LIBSDP_CONFIG_FILE=$conf exec "$@") &
	bg_pid=$!
}

# http_over_sdp ADDR PORT MIB RULEADDR: python3's http.server on ADDR:PORT
# and curl, both under libsdp with rules by program name for
# RULEADDR:PORT (* or an address, [v6] for IPv6); a MIB MiB file checked by
# SHA-256, the listener and curl's bytes seen on SDP.
http_over_sdp() {
	local addr=$1 port=$2 mib=$3 raddr=$4 host=$1 www=/tmp/www.$2 srv rx want
	local conf=/tmp/http.$2.conf

	[[ $addr == *:* ]] && host="[$addr]"
	mkdir -p "$www"
	head -c $((mib << 20)) /dev/urandom >"$www/f"
	want=$(sha256sum <"$www/f")
	printf '%s\n' "use sdp server python3* $raddr:$port" 'use tcp server * *:*' \
		"use sdp client curl $raddr:$port" >"$conf"
	libsdp_bg "$conf" python3 -m http.server "$port" --bind "$addr" \
		--directory "$www" >/tmp/http.$port.out 2>&1
	srv=$bg_pid
	wait_for sdp_listening "$port"
	check "http.server on $addr: its listener is SDP" sdp_listening "$port"
	rx=$(sdp_rx_bytes)
	with_libsdp "$conf" timeout 300 curl -sS -g -o /tmp/got.$port \
		"http://$host:$port/f"
	check_eq "curl done" 0 "$?"
	check_eq "$mib MiB through SDP, SHA-256 as sent" "$want" \
		"$(sha256sum </tmp/got.$port)"
	check "curl read them from SDP" \
		test $(($(sdp_rx_bytes) - rx)) -ge $((mib << 20))
	kill "$srv"
	wait "$srv" 2>/dev/null
	rm -rf "$www" /tmp/got.$port
}

# sdp_listening PORT: an SDP socket listens on PORT.
sdp_listening() {
	awk -v p="$(printf '%04X' "$1")" \
		'NR > 1 && $2 ~ ":" p "$" && $NF == "A" {f = 1} END {exit !f}' \
		/proc/net/sdp
}

# tcp_listening PORT: a TCP socket listens on PORT.
tcp_listening() {
	[ -n "$(ss -Hltn "sport = :$1")" ]
}

# wait_for [-t SECONDS] TEST [ARG...]: until TEST succeeds, at most
# SECONDS (10 by default).
wait_for() {
	local i s=10
	if [ "$1" = -t ]; then
		s=$2
		shift 2
	fi
	for i in $(seq $((s * 10))); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# mem_settle: write back and drop the page cache, let the system settle,
# before reading mem_avail_kib for a memory cost.
mem_settle() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 2
}

# mem_avail_kib: MemAvailable in KiB.
mem_avail_kib() {
	awk '/^MemAvailable/ {print $2}' /proc/meminfo
}

# Pair suite barrier: pair_release PORT on one VM lets pair_await PORT
# on the other return (a TCP connection over the wire), each at most
# SECONDS (default 300).
pair_release() {
	timeout "${2:-300}" python3 -c '
import socket, sys
s = socket.create_server(("", int(sys.argv[1])))
s.accept()[0].close()' "$1"
}

pair_await() {
	local i
	for i in $(seq $((${2:-300} * 5))); do
		timeout 2 bash -c "exec 3<>/dev/tcp/$SDP_PEER_IP/$1" \
			2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# siw_use KO DELAY: Soft-iWARP from KO ($SIW_KO or $SIW_STOCK_KO, built
# for this kernel) in place of whatever RDMA device is up, with
# its test knob testbed_accept_delay_ms (testbed/siw-test-patches) at
# DELAY ms, and ib_sdp loaded again; siw_drop takes it away.
siw_use() {
	sdp_unload
	rdma link delete rxe0 2>/dev/null
	siw_drop
	SDP_RDMA=siw SDP_SIW_KO=$1 rxe-up >/dev/null || exit 1
	echo "$2" >/sys/module/siw/parameters/testbed_accept_delay_ms
	sdp_load || exit 1
}

siw_drop() {
	sdp_unload
	rdma link delete siw0 2>/dev/null
	rmmod siw 2>/dev/null
	return 0
}

# rdma_counter NAME: the RDMA device's (rxe0 or siw0, port 1) counter
# NAME, as `rdma statistic` shows it.
rdma_counter() {
	rdma statistic show link "${SDP_RDMA:-rxe}0/1" | tr ' ' '\n' |
		awk -v n="$1" 'p == n {print; exit} {p = $0}'
}

# rnr_naks: receive-not-ready NAKs the device sent, each a message that
# found no receive buffer posted; SDP's credits must make them impossible.
# iWARP has no RNR: such a message breaks the connection, which the
# tests see anyway, so over siw this is 0.
rnr_naks() {
	if [ "${SDP_RDMA:-rxe}" = siw ]; then
		echo 0
	else
		rdma_counter send_rnr_err
	fi
}

# sdp_rows: rows of /proc/net/sdp (sockets).
sdp_rows() {
	echo $(($(wc -l </proc/net/sdp) - 1))
}

# smc_up: SMC (net/smc, Linux's own RDMA socket) ready beside SDP on the
# same RDMA device (rxe0 on eth0), to set the two side by side: its
# modules, the user EID that SMC-Rv2 needs at both ends (a RoCE v2 device
# such as rxe can do no SMC-Rv1) and a PNET table entry joining eth0 and
# rxe0 (6.12 finds the device on the route's netdev without one; 6.1 asks
# the device's get_netdev, which rxe does not have, and finds none).
smc_up() {
	modprobe smc && modprobe smc_diag || return 1
	"$SELFTESTS_DIR/smc_ctl" ueid-add SDP-TESTBED >/dev/null &&
		"$SELFTESTS_DIR/smc_ctl" pnet-add SDPTESTBED eth0 rxe0 >/dev/null
}

# smc_stat KEY: one of smc_ctl stats' counters (0 when absent)
smc_stat() {
	"$SELFTESTS_DIR/smc_ctl" stats | awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }'
}
