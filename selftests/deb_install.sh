#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The packages make deb built (the host suite's packages.sh) install on
# the test bed with dpkg -i: DKMS builds ib_sdp for the running kernel,
# modprobe loads it, a verified stream runs over it, sdpstat lists the
# connection and counts it, sdp_run moves an unmodified TCP program onto
# SDP with the packaged library, the man pages are there; dpkg --purge
# then leaves nothing behind: no module, no DKMS tree, no source, no
# /etc/libsdp.conf.  The test bed's root is a throw-away overlay.
# DKMS builds for every kernel with headers, in the TCG guest: 8 minutes
# each.  The test bed has 6.1 and 6.12, and make check-full boots each, so
# each run hides the other kernels' /lib/modules for the install: DKMS
# builds for the running kernel here, for the other in that kernel's run
# (and host_dkms.sh builds for both on the host).
# timeout: 1800
. "$(dirname "$0")/lib.sh"

hidden=()
for m in /lib/modules/*/; do
	m=${m%/}
	[ "$m" = "/lib/modules/$KVER" ] && continue
	mount -t tmpfs none "$m" && hidden+=("$m")
done

d=$SDP_REPO/build/deb
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$SDP_REPO/dkms.conf")
debs=("$d"/ib-sdp-dkms_"$ver"_all.deb "$d"/libsdp1_"$ver"_amd64.deb "$d"/sdp-utils_"$ver"_amd64.deb)
for f in "${debs[@]}"; do
	[ -f "$f" ] || { echo "# $f missing: run make deb first"; exit $KSFT_SKIP; }
done

sdp_unload
rm -f /etc/libsdp.conf	# an earlier test's; the package brings its own
t0=$SECONDS
# (dpkg's output in a file, the check's own line kept)
check "dpkg -i the three packages (DKMS builds ib_sdp)" \
	bash -c 'dpkg -i "$@" >/tmp/dpkg.log 2>&1' _ "${debs[@]}" || tail -n 30 /tmp/dpkg.log
echo "# installed in $((SECONDS - t0)) s"
check "dkms: ib_sdp/$ver installed for $KVER" \
	bash -c "dkms status ib_sdp/$ver -k $KVER | grep -q 'installed'"
ko=$(modinfo -F filename ib_sdp 2>/dev/null)
check "modinfo finds DKMS's module under updates/dkms ($ko)" \
	bash -c "[[ '$ko' == /lib/modules/$KVER/updates/dkms/ib_sdp.ko* ]]"
check_eq "its version" "$ver" "$(modinfo -F version ib_sdp)"
check "modprobe ib_sdp" modprobe ib_sdp sdp_local=0
check_eq "the module loaded is DKMS's" "$ver" "$(cat /sys/module/ib_sdp/version)"

addr=$(rxe-up) || exit 1
port=7490
sdp_stream server sdp "$addr" $port 1 >/dev/null 2>&1 &
srv=$!
wait_for sdp_listening $port
sdp_stream client sdp "$addr" $port 1 $((4 << 20)) 7 >/dev/null 2>&1
check_eq "a verified 4 MiB stream each way" 0 "$?"
wait $srv
check_eq "server verified its stream" 0 "$?"
check_eq "sdpstat -s counts it" 1 "$(sdpstat -s | awk '$1 == "ActiveOpens" {print $2}')"

coproc PAIR { sdp_hold pair "$addr" $((port + 1)); }
read -r -t 30 line <&"${PAIR[0]}"
check_eq "pair held" ready "$line"
check_eq "sdpstat (installed in /usr/sbin) lists both ends" "ESTAB ESTAB" \
	"$(/usr/sbin/sdpstat | awk 'NR > 1 {print $1}' | xargs)"
fd=${PAIR[1]}; exec {fd}>&-
wait "$PAIR_PID"

check "/etc/libsdp.conf installed" test -f /etc/libsdp.conf
check_eq "sdp_run preloads the packaged library" \
	"/usr/lib/x86_64-linux-gnu/libsdp.so.1" "$(/usr/bin/sdp_run sh -c 'echo $LD_PRELOAD')"
# an unmodified TCP program (the tcp stream) moved onto SDP by sdp_run -d sdp
opens=$(sdp_stat ActiveOpens)
sdp_run -d sdp sdp_stream server tcp "$addr" $((port + 2)) 1 >/dev/null 2>&1 &
srv=$!
wait_for sdp_listening $((port + 2))
/usr/bin/sdp_run -d sdp sdp_stream client tcp "$addr" $((port + 2)) 1 $((1 << 20)) 9 >/dev/null 2>&1
check_eq "a TCP program's stream under sdp_run, verified" 0 "$?"
wait $srv
check_eq "its server too" 0 "$?"
check_eq "and it went over SDP" $((opens + 1)) "$(sdp_stat ActiveOpens)"
for m in sdp.7 sdpstat.8 sdp_run.8 libsdp.conf.5; do
	check "man page $m" bash -c "man -w ${m%.*} ${m##*.} 2>/dev/null | grep -q '^/usr/share/man/'"
done

check "modprobe -r ib_sdp" modprobe -r ib_sdp
check "dpkg --purge" bash -c 'dpkg --purge ib-sdp-dkms libsdp1 sdp-utils >/tmp/purge.log 2>&1' ||
	tail -n 30 /tmp/purge.log
check "no module left" bash -c "! ls /lib/modules/$KVER/updates/dkms/ib_sdp.ko* 2>/dev/null"
check "modprobe ib_sdp fails" bash -c "! modprobe ib_sdp 2>/dev/null"
check "no DKMS tree left" test ! -e /var/lib/dkms/ib_sdp
check "no source left" test ! -e "/usr/src/ib_sdp-$ver"
check "no /etc/libsdp.conf (a purged conffile)" test ! -e /etc/libsdp.conf
check "no sdpstat, no libsdp" test ! -e /usr/sbin/sdpstat -a \
	! -e /usr/lib/x86_64-linux-gnu/libsdp.so.1 -a ! -e /usr/bin/sdp_run
check_eq "dpkg knows none of them" "" \
	"$(dpkg-query -W -f='${db:Status-Status} ' ib-sdp-dkms libsdp1 sdp-utils 2>/dev/null | tr -d ' ' | sed 's/not-installed//g')"
for m in "${hidden[@]}"; do
	umount "$m"
done
finish
