#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dkms.conf builds the module against the installed headers: 'dkms add'
# and 'dkms build' in a private DKMS tree and source tree (dkms itself may
# create its module signing key in /var/lib/dkms the first time), and
# the module built has the version dkms.conf declares and the kernel's
# vermagic.
# The kernel 'make' builds for (before lib.sh defaults KVER to uname -r).
KVER=$(. "$(dirname "$0")/../testbed/lib.sh" && testbed_kver)
. "$(dirname "$0")/lib.sh"

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
check "dkms build -k $KVER" "${d[@]}" build "ib_sdp/$ver" -k "$KVER"
ko=$(find "$tmp/tree" -name 'ib_sdp.ko*' -path "*$KVER*" | head -n 1)
check "dkms produced ib_sdp.ko" test -n "$ko"
check_eq "module version matches dkms.conf" "$ver" "$(modinfo -F version "$ko" 2>/dev/null)"
check "vermagic is $KVER's" bash -c "modinfo -F vermagic '$ko' | grep -q '^$KVER '"
check_eq "module version matches the source" "$ver" \
	"$(sed -n 's/^#define SDP_MODULE_VERSION\t"\(.*\)"$/\1/p' "$SDP_REPO/net/sdp/sdp.h")"
finish
