#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SDP over iWARP: Soft-iWARP (siw, built by testbed/build-siw) in place of
# Soft-RoCE, in one VM, a short run of what differs most between them:
#  - stream_integrity.sh with 4 streams of 16 MiB each way: the set-up
#    through iw_cm (MPA: the initiator speaks first), Hello/HelloAck in
#    the private data, BCopy, ZCopy by RDMA READ (on iWARP the READ's
#    sink needs remote write access: rdma_rw takes care of it), the close
#    and the teardown; every byte checked, nothing left;
#  - sdp_zc sink: a waiting reader's SinkAvail, written by RDMA WRITE.
# make check-full runs whole suites over siw (testbed/check), zcopy.sh's
# hostile peer among them.  Runs last in the VM suite: it puts Soft-RoCE
# back when done.
. "$(dirname "$0")/lib.sh"

if [ ! -f "$SDP_REPO/build/siw/siw.ko" ]; then
	echo "no build/siw/siw.ko (testbed/build-siw did not build it): skipped"
	exit 4
fi
sdp_unload
rdma link delete rxe0 2>/dev/null
export SDP_RDMA=siw
addr=$(rxe-up) || exit 1
check "siw0 is an iWARP device" \
	bash -c 'ibv_devinfo -d siw0 | grep -q "transport:.*iWARP"'

SDP_STREAMS=4 SDP_STREAM_MIB=16 ./stream_integrity.sh 2>&1 | sed 's/^/# /'
check_eq "stream_integrity.sh over siw" 0 "${PIPESTATUS[0]}"

sdp_load || exit 1
out=$(timeout 300 sdp_zc sink "$addr" 8105 2>&1)
rc=$?
echo "$out" | grep -vE '^# ok '
check_eq "sdp_zc sink over siw" 0 "$rc"
check "the reader's SinkAvails were written into" \
	test "$(sdp_stat RxZcopySinkBytes)" -gt 0
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean

rdma link delete siw0
rmmod siw
unset SDP_RDMA
check "Soft-RoCE back" rxe-up
finish
