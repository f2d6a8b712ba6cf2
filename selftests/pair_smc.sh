#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SMC-R, Linux's own RDMA socket, on the test bed's wire and RDMA device,
# as testbed/bench-peers sets it beside SDP: proof that its connections
# are SMC-R and not its TCP fallback, and the fallback's reason named
# where there is one.
#   a: sdp_lbench servers, AF_SMC (port 7900) and plain TCP (7910); then
#      waits for b's word and reads SMC's counters: server connections by
#      SMC-Rv2, no fallback of its own.
#   b: over AF_SMC, 64 B ping-pong and 5 s of 1 MiB writes to a's SMC
#      server (the counters say SMC-Rv2 carried them, every byte the
#      stream counted; sock_diag says SMCR while one is open); an AF_SMC
#      connect to the TCP server falls back with reason 0x03010000 (the
#      peer has no SMC), as SMC's counters say.
# Argument: "a" (servers, on SDP_IP) or "b" (clients, to SDP_PEER_IP).
. "$(dirname "$0")/lib.sh"

role=${1:?a or b}
T=$(dirname "$0")
PEERNOSMC=0x03010000
kv=$(uname -r | cut -d. -f1,2)
if [ "$(printf '6.12\n%s\n' "$kv" | sort -V | head -n 1)" != 6.12 ]; then
	# seen on 6.1.0-57: the first connection's link group comes up, then
	# rxe refuses one of SMC's QP modifications (rxe_modify_qp: -22) and
	# the connection hangs; IPPROTO_SMC, which bench-peers moves programs
	# with, is 6.11's anyway
	echo "# SKIP: SMC-R over Soft-RoCE hangs on $(uname -r); 6.12 runs it"
	exit "$KSFT_SKIP"
fi
rxe-up >/dev/null || exit 1
check "SMC's modules and user EID" smc_up || finish

if [ "$role" = a ]; then
	srv=$(smc_stat smcr_server_v2)
	"$T/sdp_lbench" smc "$SDP_IP" 7900 serve >/tmp/smcsrv.out 2>&1 &
	"$T/sdp_lbench" tcp "$SDP_IP" 7910 serve >/tmp/tcpsrv.out 2>&1 &
	check "b is done" pair_release 7920 900
	check "server connections by SMC-Rv2" \
		test "$(smc_stat smcr_server_v2)" -ge $((srv + 3))
	check_eq "no server fallback" 0 "$(smc_stat fallbacks_server)"
	pkill -f "sdp_lbench .* serve"
	wait
	finish
fi

peer=$SDP_PEER_IP
check "a's servers are up" wait_for -t 120 bash -c "echo 2>/dev/null >/dev/tcp/$peer/7910"
cli=$(smc_stat smcr_client_v2)
lat=$(timeout 300 "$T/sdp_lbench" smc "$peer" 7900 lat 64 200 remote)
check "AF_SMC ping-pong, 64 B: $lat" grep -q '^lat [0-9]' <<<"$lat"
tx=$(smc_stat smcr_tx_bytes)
bw=$(timeout 300 "$T/sdp_lbench" smc "$peer" 7900 bw 1048576 5 remote)
check "AF_SMC 1 MiB writes for 5 s: $bw MB/s" grep -q '^bw [0-9]' <<<"$bw"
sent=$(awk '{ printf "%d", $2 * 5 * 1e6 * 0.9 }' <<<"$bw")
check "... SMC-R carried them (smcr_tx_bytes up by at least $sent)" \
	test "$(smc_stat smcr_tx_bytes)" -ge $((tx + sent))
check "client connections by SMC-Rv2" \
	test "$(smc_stat smcr_client_v2)" -ge $((cli + 2))
# one held open: sock_diag's mode for it
"$T/sdp_lbench" smc "$peer" 7900 lat 64 100000 remote >/dev/null 2>&1 &
sleep 3
socks=$("$T/smc_ctl" socks)
echo "$socks" | sed 's/^/# /'
check "sock_diag: an open AF_SMC connection is SMCR" \
	grep -q 'mode SMCR state 1 ' <<<"$socks"
kill %1 2>/dev/null
wait
# a TCP server: the connect falls back, and says why
fb=$(timeout 60 "$T/sdp_lbench" smc "$peer" 7910 lat 64 10 remote)
check "AF_SMC to a TCP server works, by TCP: $fb" grep -q '^lat [0-9]' <<<"$fb"
check "... SMC counts the fallback's reason (peer has no SMC)" \
	test "$(smc_stat "fallback_client_$PEERNOSMC")" -ge 1
"$T/smc_ctl" stats | sed 's/^/# /'
pair_await 7920 60
finish
