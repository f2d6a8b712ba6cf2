#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make deb builds ib-sdp-dkms, libsdp1 and sdp-utils from the sources,
# lintian finds no error or warning in them, and each holds what it
# should: the module's source with a dkms.conf of the package's version
# (which is the module's), the preload library under its soname with
# sdp_run pointing at it and /etc/libsdp.conf as a conffile, sdpstat and
# the man pages.  The test bed VM's suite installs them (deb_install.sh).
. "$(dirname "$0")/lib.sh"

command -v dpkg-buildpackage >/dev/null || { echo "dpkg-dev missing (make deps)"; exit 1; }
check "make deb (lintian: no error, no warning)" make -s -C "$SDP_REPO" deb
ver=$(cd "$SDP_REPO" && dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
d=$SDP_REPO/build/deb
dkms=$d/ib-sdp-dkms_${ver}_all.deb lib=$d/libsdp1_${ver}_$arch.deb
utils=$d/sdp-utils_${ver}_$arch.deb
for f in "$dkms" "$lib" "$utils"; do
	check "built $(basename "$f")" test -f "$f"
done
contents() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|'; }

check_eq "the package's version is the module's" "$ver" \
	"$(sed -n 's/^#define SDP_MODULE_VERSION\t"\(.*\)"$/\1/p' "$SDP_REPO/net/sdp/sdp.h")"
check_eq "and dkms.conf's" "$ver" \
	"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$SDP_REPO/dkms.conf")"
src=/usr/src/ib_sdp-$ver
check "ib-sdp-dkms: dkms.conf, Kbuild, the sources, the kernel probes and the uapi headers" bash -c "
	c=\$(dpkg-deb -c '$dkms' | awk '{print \$6}' | sed 's|^\./|/|')
	for f in $src/dkms.conf $src/Kbuild $src/net/sdp/Kbuild $src/net/sdp/af_sdp.c \
		$src/net/sdp/conftest.sh $src/net/sdp/conftest/kernel.c \
		$src/net/sdp/sdp_diag.c $src/net/sdp/sdp_trace.h \
		$src/include/uapi/linux/sdp.h $src/include/uapi/linux/sdp_diag.h; do
		grep -qx \"\$f\" <<<\"\$c\" || { echo \"missing \$f\"; exit 1; }
	done"
# (and nothing a build here generated: sdp_config.h is the target's)
check_eq "ib-sdp-dkms: every .c and .h of net/sdp and its probes" \
	"$(cd "$SDP_REPO" && git ls-files 'net/sdp/*.[ch]' | sed "s|^|$src/|" | sort)" \
	"$(contents "$dkms" | grep '/net/sdp/.*\.[ch]$' | sort)"
check "ib-sdp-dkms: depends on dkms" bash -c "dpkg-deb -f '$dkms' Depends | grep -q '^dkms'"
check_eq "ib-sdp-dkms: dkms.conf is the tree's" "$(cat "$SDP_REPO/dkms.conf")" \
	"$(dpkg-deb --fsys-tarfile "$dkms" | tar xOf - ".$src/dkms.conf")"
check_eq "ib-sdp-dkms: its postinst builds ib_sdp $ver" "DKMS_NAME=ib_sdp DKMS_VERSION=$ver" \
	"$(dpkg-deb -I "$dkms" postinst | grep -E '^DKMS_(NAME|VERSION)=' | xargs)"

check_eq "libsdp1: library, sdp_run, the rules, AZ-SDP's udev rule, two man pages" \
	"/etc/libsdp.conf /usr/bin/sdp_run /usr/lib/$multi/libsdp.so.1 /usr/share/ib-sdp/60-sdp-userfaultfd.rules /usr/share/man/man5/libsdp.conf.5.gz /usr/share/man/man8/sdp_run.8.gz" \
	"$(contents "$lib" | grep -v '/$' | grep -v /usr/share/doc/ | sort | xargs)"
check_eq "libsdp1: /etc/libsdp.conf is a conffile" /etc/libsdp.conf \
	"$(dpkg-deb -I "$lib" conffiles)"
check_eq "libsdp1: soname libsdp.so.1" libsdp.so.1 \
	"$(dpkg-deb --fsys-tarfile "$lib" | tar xOf - "./usr/lib/$multi/libsdp.so.1" >/tmp/libsdp.so.1 &&
	   objdump -p /tmp/libsdp.so.1 | awk '$1 == "SONAME" {print $2}')"
check "libsdp1: sdp_run preloads the packaged library" bash -c \
	"dpkg-deb --fsys-tarfile '$lib' | tar xOf - ./usr/bin/sdp_run | grep -qx 'lib=/usr/lib/$multi/libsdp.so.1'"
check_eq "sdp-utils: sdpstat, sdp_bpf and three man pages" \
	"/usr/sbin/sdp_bpf /usr/sbin/sdpstat /usr/share/man/man7/sdp.7.gz /usr/share/man/man8/sdp_bpf.8.gz /usr/share/man/man8/sdpstat.8.gz" \
	"$(contents "$utils" | grep -v '/$' | grep -v /usr/share/doc/ | sort | xargs)"
check "no dkms.conf outside ib-sdp-dkms" bash -c \
	"! dpkg-deb -c '$lib' | grep -q dkms.conf && ! dpkg-deb -c '$utils' | grep -q dkms.conf"
finish
