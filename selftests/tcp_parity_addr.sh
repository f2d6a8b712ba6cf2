#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The differential suite by the local transport on the Soft-RoCE address,
# an address of this host (tcp_parity.sh's third run; make check-full).
SDP_PARITY_RUNS=address exec "$(dirname "$0")/tcp_parity.sh" "$@"
