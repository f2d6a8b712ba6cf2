#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# 'make install' puts ib_sdp where modprobe finds it; then 'modprobe
# ib_sdp' works and socket(27, ...) / socket(28, ...) load the module by
# themselves (net-pf-27 / net-pf-28 aliases); libsdp.so, sdp_run, their
# man pages and the example /etc/libsdp.conf are installed.  'make
# uninstall' undoes it, but for /etc/libsdp.conf.
# The test bed's root is a throw-away overlay, so installing is harmless.
. "$(dirname "$0")/lib.sh"

sdp_unload
# (make's output away, the check's own line kept)
check "make install" bash -c 'make -s -C "$1" install KO="$2" >/dev/null' _ \
	"$SDP_REPO" "$SDP_KO"
check "module installed under updates/" test -f "/lib/modules/$KVER/updates/ib_sdp.ko"
check "uapi header installed" test -f /usr/local/include/linux/sdp.h
check "libsdp.so installed" test -f /usr/local/lib/libsdp.so
check "sdp_run installed" test -x /usr/local/bin/sdp_run
check "sdpstat installed" test -x /usr/local/sbin/sdpstat
check "libsdp.so links to libsdp.so.1" test "$(readlink /usr/local/lib/libsdp.so)" = libsdp.so.1
check "man pages installed" test -f /usr/local/share/man/man5/libsdp.conf.5 -a \
	-f /usr/local/share/man/man8/sdp_run.8 -a -f /usr/local/share/man/man7/sdp.7 -a \
	-f /usr/local/share/man/man8/sdpstat.8
check "the example /etc/libsdp.conf installed" cmp -s /etc/libsdp.conf \
	"$SDP_REPO/userspace/libsdp/libsdp.conf"
check "the installed sdp_run runs a program with the installed libsdp" \
	grep -q /usr/local/lib/libsdp.so <<<"$(/usr/local/bin/sdp_run sh -c 'echo $LD_PRELOAD')"
check_eq "modinfo finds the installed module" \
	"/lib/modules/$KVER/updates/ib_sdp.ko" "$(modinfo -F filename ib_sdp)"

check "modprobe ib_sdp" modprobe ib_sdp
check "loaded" sdp_loaded
check "modprobe -r ib_sdp" modprobe -r ib_sdp
check "unloaded" bash -c '! [ -d /sys/module/ib_sdp ]'

for fam in 27 28; do
	check_eq "socket($fam, SOCK_STREAM, 0) autoloads ib_sdp" ready "$(sdp_hold $fam </dev/null)"
	check "loaded by socket($fam)" sdp_loaded
	check "unload" rmmod ib_sdp
done

check "make uninstall" bash -c 'make -s -C "$1" uninstall >/dev/null' _ "$SDP_REPO"
check "libsdp, sdp_run and sdpstat removed" test ! -e /usr/local/lib/libsdp.so -a \
	! -e /usr/local/lib/libsdp.so.1 -a ! -e /usr/local/bin/sdp_run -a \
	! -e /usr/local/sbin/sdpstat
check "/etc/libsdp.conf kept (the administrator's)" test -f /etc/libsdp.conf
check "modprobe ib_sdp fails once uninstalled" bash -c '! modprobe ib_sdp 2>/dev/null'
check "socket(27) fails with EAFNOSUPPORT once uninstalled" \
	bash -c '[ "$(sdp_hold 27 </dev/null 2>&1)" = "sdp_hold: socket: Address family not supported by protocol" ]'
rm -f /etc/libsdp.conf	# the tests after this one bring their own rules
finish
