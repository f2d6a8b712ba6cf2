#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libsdp on the build host, where there is no ib_sdp at all:
#  - the rules parser and matcher's unit tests (every statement form,
#    prefixes, port ranges, first match, malformed lines reported with
#    their file and line), also under valgrind when it is installed;
#  - "both" falls back to TCP for curl against python3's http.server, for
#    each way sdp_app waits for a connect, and for sdp_app's servers;
#  - "sdp" gives the error (EAFNOSUPPORT);
#  - a malformed configuration line is reported as FILE:LINE and the good
#    lines still apply; nothing is ever written to the program's stdout;
#  - epoll of a socket settled by the rules gives the program's data back
#    and costs no system call of libsdp's own.
. "$(dirname "$0")/lib.sh"

if [ ! -f "$LIBSDP" ] || [ -d /sys/module/ib_sdp ]; then
	echo "libsdp not built, or ib_sdp loaded on the host"
	exit $KSFT_SKIP
fi

out=$(make -s -C "$SDP_REPO/userspace/libsdp" check 2>&1)
check_eq "parser and matcher unit tests" "# 0 failed" \
	"$(tail -n 1 <<<"$out" | sed 's/.* passed, /# /')"
if command -v valgrind >/dev/null; then
	check "unit tests clean under valgrind" sh -c 'valgrind -q \
		--leak-check=full --error-exitcode=1 "$0" >/dev/null' \
		"$SDP_REPO/userspace/libsdp/test_config"
fi

printf 'use both server * *:*\nuse both client * *:*\n' >/tmp/host-both.conf
printf 'use sdp server * *:*\nuse sdp client * *:*\n' >/tmp/host-sdp.conf

# curl against http.server, both under "both": TCP
dir=$(mktemp -d)
head -c $((4 << 20)) /dev/urandom >"$dir/f"
port=$((20000 + RANDOM % 20000))
libsdp_bg /tmp/host-both.conf python3 -m http.server $port --bind 127.0.0.1 \
	--directory "$dir" >/dev/null 2>&1
srv=$bg_pid
wait_for tcp_listening $port
with_libsdp /tmp/host-both.conf curl -sS -o "$dir/g" "http://127.0.0.1:$port/f"
check_eq "both, no SDP: curl gets the file over TCP" \
	"$(sha256sum <"$dir/f")" "$(sha256sum <"$dir/g" 2>/dev/null)"
kill $srv
wait $srv 2>/dev/null
rm -rf "$dir"

# sdp_app: servers and every kind of client under "both", then "sdp"
port=$((20000 + RANDOM % 20000))
for kind in epoll poll select block; do
	libsdp_bg /tmp/host-both.conf sdp_app server 127.0.0.1 $port $kind 1 \
		>/tmp/host-srv.out 2>&1
	srv=$bg_pid
	wait_for grep -q listening /tmp/host-srv.out
	out=$(with_libsdp /tmp/host-both.conf sdp_app client 127.0.0.1 $port $kind 2>&1)
	check_eq "both, no SDP: $kind client" ok "$out"
	wait $srv
	rc=$?
	check_eq "both, no SDP: $kind server ($(tail -n 1 /tmp/host-srv.out))" 0 "$rc"
	port=$((port + 1))
done
sdp_app server 127.0.0.1 $port epoll 1 >/tmp/host-srv.out 2>&1 &
srv=$!
wait_for grep -q listening /tmp/host-srv.out
out=$(with_libsdp /tmp/host-sdp.conf sdp_app client 127.0.0.1 $port block 2>/dev/null)
check_eq "sdp, no SDP: the error" "connect: EAFNOSUPPORT" "$out"
sdp_app client 127.0.0.1 $port block >/dev/null
wait $srv

# a malformed line: reported with its place, the rest applies; stdout clean
printf '%s\n' '# comment' 'use sdp client * *:99999' 'use sdp client * *:*' \
	>/tmp/host-bad.conf
err=$(with_libsdp /tmp/host-bad.conf sdp_app client 127.0.0.1 1 block 2>&1 >/dev/null)
out=$(with_libsdp /tmp/host-bad.conf sdp_app client 127.0.0.1 1 block 2>/dev/null)
check "a malformed line is reported as FILE:LINE" \
	grep -q '/tmp/host-bad.conf:2:' <<<"$err"
check_eq "the good line after it applies (sdp: no SDP here)" \
	"connect: EAFNOSUPPORT" "$out"
out=$(LIBSDP_LOG_LEVEL=1 with_libsdp /tmp/host-bad.conf true)
check_eq "nothing on the program's stdout, even logging everything" "" "$out"

# the log file: never through a link another user planted, ours alone
rm -f /tmp/host-log /tmp/host-log-target /tmp/host-log-link
ln -s /tmp/host-log-target /tmp/host-log-link
printf 'log destination file /tmp/host-log-link min-level 1\nuse tcp client * *:*\n' \
	>/tmp/host-loglink.conf
with_libsdp /tmp/host-loglink.conf sdp_app client 127.0.0.1 1 block &>/dev/null
check "a log file that is a symbolic link is not followed" \
	test ! -e /tmp/host-log-target
printf 'log destination file /tmp/host-log min-level 1\nuse tcp client * *:*\n' \
	>/tmp/host-logmode.conf
(umask 022; with_libsdp /tmp/host-logmode.conf sdp_app client 127.0.0.1 1 block &>/dev/null)
check_eq "a new log file is readable by its owner alone" 600 \
	"$(stat -c %a /tmp/host-log 2>/dev/null)"
rm -f /tmp/host-log /tmp/host-log-link

# what any program may do, with libsdp as without (the old library: an
# abort, a deadlock SIGTERM cannot end, an event lost or mistranslated)
safe() {
	with_libsdp /tmp/host-both.conf timeout -s KILL 30 \
		sdp_libsafe "$1" 127.0.0.1 $((20000 + RANDOM % 20000)) 2>&1
}
out=$(safe sigclose)
check "close() in a signal handler that interrupts malloc() ($out)" \
	grep -q '^closes in the handler: ok' <<<"$out"
out=$(safe forksig)
check "close() in a signal handler during fork() ($out)" \
	grep -q '^forks: ok' <<<"$out"
out=$(safe vfork)
check_eq "a vfork() child's close() leaves the parent's socket alone" \
	"epoll after the vfork child's close: 1 event, data 42" "$out"
out=$(safe epolldata | paste -sd' ')
check_eq "epoll data that looks like libsdp's own comes back as it was" \
	"event data 0x5d5d000000000001 event data 0x7 events: 2" "$out"

# epoll of a socket the rules have settled: the program's data on every
# event, and no cost once nothing is left for libsdp to translate (the
# old library blocked and restored every signal around each epoll_ctl()
# of a tracked socket: two system calls, each costly, in every call of an
# event loop)
port=$((20000 + RANDOM % 20000))
out=$(with_libsdp /tmp/host-both.conf timeout -s KILL 30 strace -f -qq \
	-e trace=rt_sigprocmask,write -o /tmp/host-strace.out \
	sdp_libsafe epollsettled 127.0.0.1 $port 2>/dev/null | paste -sd' ')
check_eq "epoll of a settled socket: the program's data, each time" \
	"added before connect: data 0x1 moved: data 0x2 added after connect: data 0x3 moved again: data 0x4 moved to a mark's likeness: data 0x5d5d000000000002 moved back: data 0x5 deleted: 0 events" \
	"$out"
n=$(awk '/write\(2, "loop/ { on = 1; next } /write\(2, "end/ { on = 0 }
	on && /rt_sigprocmask/ { n++ } END { print n + 0 }' /tmp/host-strace.out)
check_eq "1000 epoll_ctl() of a settled socket: no signal mask changes" 0 "$n"
finish
