# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the host-side test bed scripts (sourced, not run).

TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$TESTBED_DIR/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO_DIR/build}

# The kernel the module is built for and the VM boots: $KVER if set, else
# the newest installed kernel that has headers (the Makefile's rule too).
testbed_kver() {
	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return
	fi
	# shellcheck disable=SC2012
	ls -d /lib/modules/*/build 2>/dev/null | awk -F/ '{print $4}' |
		sort -V | tail -n 1
}

die() {
	echo "testbed: $*" >&2
	exit 125
}

# Lines in a guest kernel log that make a run fail.
KERNEL_BAD_RE='Oops|BUG:|WARNING:|KASAN|UBSAN|Kernel panic|general protection fault|kernel BUG|Call Trace:|blocked for more than|list_(add|del) corruption|refcount_t:|unreferenced object'
