# SPDX-License-Identifier: GPL-2.0
#
# ib_sdp: Sockets Direct Protocol for Linux.
#
#   make                build net/sdp/ib_sdp.ko, userspace/, selftests/ and,
#                       for each kernel the test bed boots (6.1 and 6.12),
#                       ib_sdp, Soft-RoCE and Soft-iWARP in build/kmod/KVER/
#                       (rxe/ and siw/ with testbed/rxe-patches and
#                       siw-patches, rxe-stock/ and siw-stock/ without)
#   make deps           install (apt) what building and testing need
#   make install        install the module (updates/), run depmod, and
#                       install the uapi header and userspace tools
#   make check          deps + build + all tests in the qemu test bed
#   make fuzz           deps + build + the protocol fuzzer, long: SEEDS
#                       seeds (default 20) of MESSAGES messages (5000)
#   make demo           deps + build + boot the test bed and show ib_sdp
#   make bench          deps + build + how fast (not a test): tables and
#                       plots in build/bench/
#   make checkpatch     checkpatch --strict on every C file, findings not
#                       in testbed/checkpatch-known
#   make static         the netdev CI's static checks (testbed/static-checks:
#                       W=1 and sparse builds, kernel-doc, checkpatch,
#                       codespell, shellcheck), as make check runs them
#   make deb            Debian packages (ib-sdp-dkms, libsdp1, sdp-utils)
#                       in build/deb/, checked by lintian
#
# KVER selects the kernel net/sdp/ib_sdp.ko is built for (default: the
# newest installed kernel with headers); KDIR its build tree (default
# /lib/modules/$(KVER)/build).  What the kernel has is probed at build
# time (net/sdp/conftest/, sdp_compat.h): one tree for 6.1 to 6.12.

KVER ?= $(shell ls -d /lib/modules/*/build 2>/dev/null | awk -F/ '{print $$4}' | sort -V | tail -n 1)
KDIR ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
DESTDIR ?=
MODDIR := $(DESTDIR)/lib/modules/$(KVER)/updates

export KVER

.PHONY: all module userspace selftests kmods siw deps install uninstall check check-full demo \
	bench bench-more fuzz checkpatch static deb clean

all: module userspace selftests kmods

module:
	@test -d "$(KDIR)" || { echo "no kernel build tree at '$(KDIR)': run 'make deps' or set KVER/KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

userspace:
	$(MAKE) -C userspace

selftests:
	$(MAKE) -C selftests

# ib_sdp, Soft-RoCE (with the test bed's fixes) and Soft-iWARP (Debian's
# kernels do not build it) for each kernel the test bed boots.  A siw that fails does not stop the build:
# the tests over siw are then skipped on that kernel.
kmods:
	testbed/build-kmods

siw:
	-testbed/build-siw

deps:
	testbed/install-deps

# Installs what 'make' built; does not rebuild (it runs in the test bed
# too, where the source tree is not to be rebuilt).
# KO: the module to install (the test bed's for its kernel: build/kmod/)
KO ?= net/sdp/ib_sdp.ko
install:
	@test -f $(KO) || { echo "$(KO) missing: run 'make' first" >&2; exit 1; }
	install -D -m 0644 $(KO) $(MODDIR)/ib_sdp.ko
	install -D -m 0644 include/uapi/linux/sdp.h $(DESTDIR)$(PREFIX)/include/linux/sdp.h
	$(MAKE) -C userspace install
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

uninstall:
	rm -f $(MODDIR)/ib_sdp.ko $(DESTDIR)$(PREFIX)/include/linux/sdp.h
	$(MAKE) -C userspace uninstall
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

# Sub-makes, so that KVER is found after deps installed the kernel.
# (make check needs no net/sdp/ib_sdp.ko: the test bed loads the modules
# built for its kernels in build/kmod/; nor the software RDMA drivers'
# stock variants, which only make check-full's tests load)
check:
	$(MAKE) deps
	SDP_SWDEV_STOCK=0 $(MAKE) userspace selftests kmods
	testbed/check

# make check, and the VM suite's longer tests (TEST_FULL_PROGS)
check-full:
	$(MAKE) deps
	$(MAKE) all
	FULL=1 testbed/check

# From the files git knows (a fresh copy: nothing built leaks in).
deb:
	testbed/make-deb

demo:
	$(MAKE) deps
	$(MAKE) all
	testbed/demo

# selftests/fuzz.sh with more seeds than make check runs (one)
SEEDS ?= 20
MESSAGES ?= 5000
fuzz:
	$(MAKE) deps
	$(MAKE) all
	TEST_FUZZ_SEEDS=$(SEEDS) TEST_FUZZ_MESSAGES=$(MESSAGES) \
	TEST_TIMEOUT=$$(( $(SEEDS) * 900 + 600 )) \
	testbed/vm-run -t $$(( $(SEEDS) * 900 + 900 )) -- \
		selftests/run_tests.sh vm fuzz.sh

# Not a test: how fast.  testbed/bench: SDP next to raw RC verbs (SEND,
# READ, WRITE), TCP and rsockets, 64 B to 4 MiB, 1 and 8 streams, CPU per
# GB, in one VM and between two, over rxe and siw, tables and plots in
# build/bench/ (ROUNDS, SECS, WHERE=one|two|both, DEVS=rxe|siw|both);
# testbed/bench-local: same-host connections against TCP and AF_UNIX;
# testbed/bench-apps-local: nginx, redis and iperf3 on one host, SDP
# against TCP loopback (and AF_UNIX for redis); testbed/bench-placement:
# the cost of a 64 KiB send against where the program's buffer lies;
# testbed/bench-msg-offset: redis' 64 KiB SET and GET with the local
# transport's message moved by whole pages (a probe build);
# testbed/bench-az: AZ-SDP against synchronous ZCopy and BCopy;
# testbed/bench-region: one-sided RDMA through the socket against raw
# verbs, io_uring SEND_ZC against send() and MSG_ZEROCOPY;
# testbed/bench-peers: TCP, SDP and SMC-R (net/smc) side by side between
# two VMs on 6.12: latency, bandwidth, iperf3, redis with 1 to 512
# clients, nginx, memcached, server CPU per request.
ROUNDS ?= 5
SECS ?= 2
WHERE ?= both
DEVS ?= both
bench:
	$(MAKE) deps
	$(MAKE) all
	testbed/bench-run bench testbed/bench -r $(ROUNDS) -s $(SECS) -w $(WHERE) -d $(DEVS)
	testbed/bench-run local testbed/bench-local $(ROUNDS)
	testbed/bench-run apps-local testbed/bench-apps-local 3
	testbed/bench-run placement testbed/bench-placement
	testbed/bench-run msg-offset testbed/bench-msg-offset
	testbed/bench-run az testbed/bench-az $(SECS)
	testbed/bench-run region testbed/bench-region $(SECS)
	testbed/bench-run peers testbed/bench-peers 3
	testbed/bench-doc

# The narrower benchmarks: nginx and redis over SDP against TCP between
# two VMs (testbed/bench-apps, which installs nginx and ab itself), ZCopy against BCopy and RDMA READ
# (testbed/bench-zcopy), connection cost and setup rate against TCP and
# rsockets (testbed/bench-scale; BASE_KO= an older ib_sdp.ko adds "before"
# figures), where setup time goes (testbed/bench-setup).
bench-more:
	$(MAKE) deps
	$(MAKE) all
	testbed/bench-apps $(ROUNDS)
	testbed/bench-zcopy
	testbed/bench-scale $(BASE_KO)
	testbed/bench-setup

checkpatch:
	testbed/static-checks checkpatch

static: deps
	testbed/static-checks all

clean:
	-test -d "$(KDIR)" && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f net/sdp/sdp_config.h
	$(MAKE) -C userspace clean
	$(MAKE) -C selftests clean
	rm -rf build
