#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Socket creation on both SDP families compared with AF_INET/AF_INET6
# (sdp_socket.c has the cases), with the module loaded from this tree, and
# no socket left behind.
. "$(dirname "$0")/lib.sh"

rxe-up >/dev/null || exit 1
sdp_unload
check "load" sdp_load
check "sdp_socket: families 27/28 behave as AF_INET/AF_INET6" sdp_socket
check_eq "no SDP socket left in use" 0 "$(awk '$1 == "SDP" {print $3}' /proc/net/protocols)"
check "unload" rmmod ib_sdp
finish
