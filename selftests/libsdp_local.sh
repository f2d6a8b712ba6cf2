#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libsdp_apps.sh against localhost: iperf3, redis, qperf and python3's
# http.server with curl, under libsdp with "use sdp" rules, on 127.0.0.1,
# carried by the local transport.
SDP_LOCAL=1 SDP_APPS_ADDR=127.0.0.1 exec "$(dirname "$0")/libsdp_apps.sh"
