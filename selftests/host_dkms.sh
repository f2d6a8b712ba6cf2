#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dkms.conf builds the module against the installed headers of every
# kernel the test bed runs (6.1 and 6.12): 'dkms add' and 'dkms build' in
# a private DKMS tree and source tree (dkms itself may create its module
# signing key in /var/lib/dkms the first time), and the module built has
# the version dkms.conf declares and that kernel's vermagic.  A kernel
# the module does not support is named and left alone (exit 77), not
# half built.  With SDP_QUICK=1 (make check, whose VM suites have built
# and loaded the module on both kernels by Kbuild) the DKMS build runs for
# the newest test bed kernel only; make check-full builds for each.
kernels=$(. "$(dirname "$0")/../testbed/lib.sh" && testbed_kernels)
. "$(dirname "$0")/lib.sh"
nkernels=$(wc -w <<<"$kernels")
[ "${SDP_QUICK:-0}" = 1 ] && kernels=$(tail -n 1 <<<"$kernels")

command -v dkms >/dev/null || { echo "dkms missing (make deps)"; exit 1; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$SDP_REPO/dkms.conf")
check "dkms.conf has a version" test -n "$ver"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree" "$tmp/src/ib_sdp-$ver"
# The sources as a release tarball would have them.
(cd "$SDP_REPO" && git ls-files -z -c -o --exclude-standard | xargs -0 tar cf -) |
	tar xf - -C "$tmp/src/ib_sdp-$ver"

d=(dkms --dkmstree "$tmp/tree" --sourcetree "$tmp/src")
check "dkms add" "${d[@]}" add "ib_sdp/$ver"
for k in $kernels; do
	check "dkms build -k $k" "${d[@]}" build "ib_sdp/$ver" -k "$k"
	ko=$(find "$tmp/tree" -name 'ib_sdp.ko*' -path "*/$k/*" | head -n 1)
	check "dkms produced ib_sdp.ko for $k" test -n "$ko"
	check_eq "$k: module version matches dkms.conf" "$ver" \
		"$(modinfo -F version "$ko" 2>/dev/null)"
	check "vermagic is $k's" bash -c "modinfo -F vermagic '$ko' | grep -q '^$k '"
done
check "a test bed kernel of each series (6.1, 6.12)" test "$nkernels" = 2
out=$("${d[@]}" build "ib_sdp/$ver" -k 6.13.0-1-amd64 2>&1)
check_eq "a kernel it does not support: dkms skips it (77)" 77 "$?"
check "and says why (BUILD_EXCLUSIVE)" grep -q BUILD_EXCLUSIVE <<<"$out"
check_eq "module version matches the source" "$ver" \
	"$(sed -n 's/^#define SDP_MODULE_VERSION\t"\(.*\)"$/\1/p' "$SDP_REPO/net/sdp/sdp.h")"
finish
