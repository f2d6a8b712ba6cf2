# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the host-side test bed scripts (sourced, not run).

TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$TESTBED_DIR/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO_DIR/build}

# The kernels the test bed boots, one a line: Debian 12's own (6.1) and
# the 6.12 of its archive, the newest installed of each with headers
# (make deps installs both).  make check runs every suite on the first
# and a smoke set on the others; make check-full everything on each.
testbed_kernels() {
	local xy
	for xy in 6.1 6.12; do
		# shellcheck disable=SC2012
		ls -d /lib/modules/"$xy".*/build 2>/dev/null |
			awk -F/ '{print $4}' | sort -V | tail -n 1
	done
}

# The kernel a test bed VM boots and its modules are built for: $KVER if
# set, else the first of testbed_kernels (Debian 12's 6.1).
testbed_kver() {
	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return
	fi
	# (not "| head": with pipefail its early exit would fail us)
	local k
	k=$(testbed_kernels)
	echo "${k%%$'\n'*}"
}

# testbed_nic: the NIC model of a VM on a virtual wire: $SDP_VM_NIC if
# set (e1000e is the other model the guest has a driver for), else
# virtio-net-pci.
testbed_nic() {
	echo "${SDP_VM_NIC:-virtio-net-pci}"
}

# testbed_cpu KVER: the guest CPU model: $SDP_VM_CPU if set, else "max" on
# 6.1 and "max,-cx16" (no CMPXCHG16B) on the others.  QEMU 7.2's TCG
# (Debian 12's) corrupts a 6.12 guest's EFLAGS around the CMPXCHG16B of
# SLUB's lockless fast path: the guest dies of a double fault in
# kmalloc, just after that instruction, with RFLAGS holding bits of RAX
# (0x024fda42 with RAX ...024fd800; NT set, so the IRET faults).  Under
# the SDP traffic of pair_echo.sh that was 4 runs in 4 with virtio-net,
# 1 in 4 with e1000e, with this tree's module and 66ea332's alike, and
# never with slub_debug (no fast path); without CMPXCHG16B (SLUB takes
# its locked path) 0 in 3.  6.1's SLUB ran thousands of runs clean.
testbed_cpu() {
	if [ -n "${SDP_VM_CPU:-}" ]; then
		echo "$SDP_VM_CPU"
		return
	fi
	case "$1" in
	6.1.*) echo max ;;
	*) echo max,-cx16 ;;
	esac
}

# The ib_sdp module built for the test bed's kernel (make: build-kmods),
# relative to the repository: net/sdp/ib_sdp.ko is make's, for the
# newest kernel with headers, which need not be the one the VM boots.
testbed_ko() {
	echo "build/kmod/$(testbed_kver)/net/sdp/ib_sdp.ko"
}

# make's -j for a module build: every CPU, unless a make above already
# shares its job slots (then the build takes its share of those)
kbuild_jobs() {
	[[ ${MAKEFLAGS:-} == *jobserver* ]] || echo "-j$(nproc)"
}

die() {
	echo "testbed: $*" >&2
	exit 125
}

# Lines in a guest kernel log that make a run fail.
KERNEL_BAD_RE='Oops|BUG:|WARNING:|KASAN|UBSAN|Kernel panic|general protection fault|kernel BUG|Call Trace:|blocked for more than|list_(add|del) corruption|refcount_t:|unreferenced object'
