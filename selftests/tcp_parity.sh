#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The differential suite: sdp_parity runs every case on TCP and on SDP
# over the same addresses and prints the table case/step x (TCP, SDP).
# Every step must be the same, or a documented difference
# (Documentation/sdp.rst, "Differences from TCP").
. "$(dirname "$0")/lib.sh"

addr=$(rxe-up) || exit 1
addr6=$(rxe-up -6) || exit 1
sdp_unload
sdp_load || exit 1

sdp_parity "$addr" "$addr6" 9000 "$@"
check_eq "every step as TCP, or a documented difference" 0 "$?"
check_eq "no protocol error" 0 "$(sdp_stat ProtoErrors)"
sdp_check_clean
finish
