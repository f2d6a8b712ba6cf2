#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ZCopy, read-based (SrcAvail) and write-based (SinkAvail) (sdp_zc,
# sdp_evil):
#  - sizes around the threshold (threshold - 1, threshold, + 1, 1 MiB,
#    16 MiB + 7) from unaligned addresses into unaligned buffers, read in
#    one piece (straight into the user's pages) and in 1000-byte reads
#    (read ahead into kernel buffers), every byte checked, and the counters
#    show that both receive paths and the SrcAvail path moved them;
#  - a reader waiting with an empty queue offers its buffer (SinkAvail) and
#    the sender writes straight into it, a non-blocking sender too;
#  - a buffer overwritten as soon as a blocking send returns never changes
#    what the peer receives, with a slow wire too (lo delayed 20 ms);
#  - sendfile() (blocking and non-blocking) and splice() send the file's
#    and the pipe's pages by reference (SrcAvail), with a close() at once
#    behind them; every byte checked; with SDP_ZCOPY_THRESH 0, copied; to
#    a peer that never reads, the pages held stay within the bound, a
#    blocking sendfile() ends at SO_SNDTIMEO, and a reset releases them;
#    four threads' sendfile() on one socket at once all arrive whole;
#    a shutdown(SHUT_WR) while another thread's sendfile() waits ends it
#    in EPIPE with every byte it reported sent delivered, as on TCP;
#  - past RLIMIT_MEMLOCK (without CAP_IPC_LOCK) sends are copied instead;
#  - MSG_ZEROCOPY: the completion comes only once the peer has read;
#  - a signal every millisecond at both ends, killed peers, and receivers
#    closed while their SrcAvails are read ahead (on the slow wire too:
#    no buffer memory left after);
#  - SrcAvails still unread when both DisConns are through are read all
#    the same; a fork() while the peer writes into a buffer cannot divert
#    its bytes to the child's copy;
#  - keys work only where and while they should: a raw-verbs peer with two
#    connections tries a live SrcAvail's and SinkAvail's key on the other
#    connection (refused: a PD per connection), an old key once the
#    transfer is over and a guessed next key (refused), while the same
#    access with the live key is the control; a sender killed, or closed
#    with SO_LINGER {1,0} with a MSG_ZEROCOPY send outstanding, resets the
#    connection; no advertised address is a kernel address;
#  - and nothing leaks (sdp_check_clean counts MRs too).
# With SDP_SMOKE=1 (make check's smoke suite on the test bed's other
# kernels) only what leans on interfaces that differ between kernels:
# the sizes and SinkAvail (iov_iter), sendfile's pages (MSG_SPLICE_PAGES),
# pinning (RLIMIT_MEMLOCK, fork), MSG_ZEROCOPY's completions, an
# overwritten buffer; make check-full runs all of it on every kernel.
. "$(dirname "$0")/lib.sh"
smoke() { [ "${SDP_SMOKE:-0}" = 1 ]; }

sdp_fresh || exit 1
addr=$SDP_ADDR

no_buf_left() {	# what: once the sockets are gone, no buffer is accounted
	sdp_wait_gone
	check_eq "$1: no buffer memory left" 0 "$(sdp_stat BufferBytes)"
}

mode() {	# name port: run one sdp_zc mode, show its failures
	local out rc perr
	perr=$(sdp_stat ProtoErrors)
	out=$(timeout 300 sdp_zc "$1" "$addr" "$2" 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "sdp_zc $1" 0 "$rc"
	check_eq "sdp_zc $1: no protocol error" "$perr" "$(sdp_stat ProtoErrors)" ||
		dmesg | grep 'protocol error' | tail -3
}

mode sizes 8100
check "SrcAvails carried them" test "$(sdp_stat TxSrcAvail)" -gt 0
check "read straight into user buffers" test "$(sdp_stat RxZcopyDirectBytes)" -gt 0
check "and read ahead into kernel buffers" test "$(sdp_stat RxZcopyBounceBytes)" -gt 0
check "below the threshold, BCopy" test "$(sdp_stat TxData)" -gt 0
mode sink 8105
smoke || mode sink-nb 8106
# sendfile()/splice(): the file's pages by reference, every byte checked
mode sendfile 8108
check "sendfile's pages went by reference" \
	test "$(sdp_stat TxZcopyPageBytes)" -ge $((16 << 20))
pages=$(sdp_stat TxZcopyPageBytes)
if ! smoke; then
	mode sendfile-copy 8109
	check_eq "with SDP_ZCOPY_THRESH 0, copied" "$pages" "$(sdp_stat TxZcopyPageBytes)"
fi
mode sendfile-hold 8112
if ! smoke; then
	mode sendfile-threads 8113
	# shutdown(SHUT_WR) while another thread's sendfile() waits for
	# room: EPIPE and every byte reported sent, then the end, on SDP as
	# on TCP
	mode sendfile-shutdown 8114
	out=$(SDP_ZC_FAMILY=tcp timeout 300 sdp_zc sendfile-shutdown "$addr" 8115 2>&1)
	rc=$?
	echo "$out" | grep -vE '^# ok '
	check_eq "sdp_zc sendfile-shutdown over TCP: the same" 0 "$rc"
fi

# past RLIMIT_MEMLOCK (no CAP_IPC_LOCK, 32 KiB): every send is copied
# instead, and nothing fails
srcavail=$(sdp_stat TxSrcAvail) fallbacks=$(sdp_stat ZcopyFallbacks)
out=$(timeout 300 setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock \
	bash -c "ulimit -l 32; exec sdp_zc sizes $addr 8107" 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "past RLIMIT_MEMLOCK: every size arrives whole" 0 "$rc"
check_eq "no SrcAvail was sent" "$srcavail" "$(sdp_stat TxSrcAvail)"
check "the sends fell back to BCopy" \
	test "$(sdp_stat ZcopyFallbacks)" -gt "$fallbacks"
check "SinkAvails offered the buffers" test "$(sdp_stat TxSinkAvail)" -gt 0
check_eq "past RLIMIT_MEMLOCK: no protocol error" 0 "$(sdp_stat ProtoErrors)"
mode overwrite 8110
# the same with the wire slow to send, every packet held 20 ms on lo: a
# WRITE's bytes are still on their way when its send() has returned and
# the program writes its buffer again (sink refills it at once).  Over
# iWARP a WRITE completes once the local TCP has it, and Soft-iWARP gave
# TCP an unsignaled request's pages by reference: the peer got the
# program's next bytes (sdp_zc_rw_chain())
tc qdisc add dev lo root netem delay 20ms
check_eq "lo holds every packet 20 ms" 0 "$?"
written=$(sdp_stat TxZcopyWriteBytes)
mode sink 8111
check "on the slow wire, written into the waiting reader's buffers" \
	test "$(sdp_stat TxZcopyWriteBytes)" -gt "$written"
mode overwrite 8116
# a receiver closed while its read-ahead's READs are on the slow wire:
# close() waits for them before it drops the queue (else the READs'
# buffers, queued after the drop, were lost)
mode closeahead 8117
no_buf_left "closed during read-ahead on the slow wire"
tc qdisc del dev lo root
mode msgzc 8120
# pinned FOLL_LONGTERM: a fork() cannot divert the peer's writes
mode forkcow 8147
if smoke; then
	sdp_check_clean
	finish
fi
mode interrupt 8130
mode kill 8140
mode closeahead 8145
no_buf_left "closed during read-ahead"
# unread SrcAvails after both DisConns: the reader still gets them all
mode shutread 8146
mode sendwait 8148

# Keys: valid on their own connection only, and only while their transfer
# lasts; advertised addresses say nothing about kernel memory.
kaddr() {	# text: no advertised address is a kernel address (bit 63)
	local a x
	a=$(grep -oE 'Avail: .* at 0x[0-9a-f]+' <<<"$1" | grep -oE '0x[0-9a-f]+$')
	[ -n "$a" ] || return 1
	for x in $a; do
		[ $((x)) -ge 0 ] || return 1
	done
}
# held MODE PORT [HOW]: sdp_zc MODE in the background, holding its
# transfer while its stdin is open (60 s at most); unheld MODE PORT ends
# it and the sleep that holds its stdin, which would otherwise keep the
# test's output open (and run_tests.sh waiting) for the rest of the 60 s
held() {
	sleep 60 | sdp_zc "$1" "$addr" "$2" ${3:+"$3"} >/tmp/hold.out 2>&1 &
	sleep 1
}
unheld() {
	pkill -f "$1 $addr $2"
	# shellcheck disable=SC2046 # PIDs
	kill $(jobs -p) 2>/dev/null
	wait
}

held holdsend 8150 block
out=$(timeout 60 sdp_evil "$addr" 8150 zc-stale 2>&1)
echo "$out"
check "control: the live key reads" grep -q "control: read ok" <<<"$out"
check "after the transfer the old key is refused" grep -q "old key: refused" <<<"$out"
check "the SrcAvail's address is not a kernel address" kaddr "$out"
unheld holdsend 8150

held holdsend 8155 block
out=$(timeout 60 sdp_evil "$addr" 8155 zc-guess 2>&1)
echo "$out"
check "guess: control: the live key reads" grep -q "control: read ok" <<<"$out"
check "guess: the next key is refused" grep -q "guessed key: refused" <<<"$out"
unheld holdsend 8155

hold() {	# port mode how-to-end
	local hp ep
	: >/tmp/evil.out
	rm -f /tmp/hold.fifo
	mkfifo /tmp/hold.fifo
	sdp_zc holdsend "$addr" "$1" "$2" </tmp/hold.fifo >/tmp/hold.out 2>&1 &
	hp=$!
	exec 7>/tmp/hold.fifo
	sleep 1
	timeout 60 sdp_evil "$addr" "$1" zc-hold >/tmp/evil.out 2>&1 &
	ep=$!
	for _ in $(seq 200); do
		grep -q holding /tmp/evil.out && break
		sleep 0.1
	done
	case "$3" in
	kill) kill -9 "$hp" ;;
	close) echo close >&7 ;;
	esac
	wait "$ep"
	exec 7>&-
	wait "$hp" 2>/dev/null	# (killed: a message from bash)
	cat /tmp/evil.out
	check "$3: control: the live key reads" grep -q "control: read ok" /tmp/evil.out
	check "$3: the live key is refused on another connection" \
		grep -q "other connection: refused" /tmp/evil.out
	check "$3: then the connection is reset" grep -q "^reset" /tmp/evil.out
}
hold 8160 block kill
hold 8170 linger0 close

# a SinkAvail's key, once recv() returned
held holdrecv 8180
out=$(timeout 60 sdp_evil "$addr" 8180 zc-sink-stale 2>&1)
echo "$out"
check "SinkAvail: the live key is refused on another connection" \
	grep -q "other connection: refused" <<<"$out"
check "SinkAvail: control: the live key writes" grep -q "control: write ok" <<<"$out"
check "SinkAvail: once recv() returned the old key is refused" \
	grep -q "old key: refused" <<<"$out"
check "the SinkAvail's address is not a kernel address" kaddr "$out"
unheld holdrecv 8180
sdp_check_clean
finish
