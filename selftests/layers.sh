#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module's layers (Documentation/layers.json, Documentation/
# architecture.rst) hold against its code: every break of a "never" rule
# is one testbed/layers-known still lists, and every listed one is still
# there; no function takes the socket where it uses only its connection.
# And the check can fail: a copy of the sources in which the socket core
# calls the local transport, one in which the verbs layer calls the
# stream, and one with a helper that takes the socket for its connection
# alone are each caught.
. "$(dirname "$0")/lib.sh"

layers=$SDP_REPO/testbed/layers
check "the code keeps the picture, but for the listed breaks" "$layers" --check

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# mutate FILE SED-EXPR: a copy of net/sdp with FILE changed
mutate() {
	rm -rf "$tmp/net"
	mkdir -p "$tmp/net"
	cp -r "$SDP_REPO/net/sdp" "$tmp/net/"
	sed -i "$2" "$tmp/net/sdp/$1"
}
mutate sdp_close.c '0,/^{$/s//{\n\tsdp_local_kick(NULL);/'
check_eq "a core file calling the local transport is a new break" \
	"NEW break (not in testbed/layers-known): Core -> Local: sdp_close.c -> sdp_local_link.c: sdp_local_kick" \
	"$("$layers" --check --code "$tmp" | grep '^NEW')"
mutate sdp_dev.c '0,/^{$/s//{\n\tsdp_connect_failed(NULL, 0);/'
check_eq "the verbs layer calling up is a new break" \
	"NEW break (not in testbed/layers-known): Verbs -> Core: sdp_dev.c -> sdp_cm.c: sdp_connect_failed" \
	"$("$layers" --check --code "$tmp" | grep '^NEW')"
# a helper that takes the socket but reads only its connection
mutate sdp_tx.c '$a static u32 sdp_rx_bufs(struct sdp_sock *ssk)\n{\n\treturn ssk->conn->rx_size;\n}'
check_eq "a function taking the socket for its connection alone is caught" \
	"takes the socket for its connection only: sdp_rx_bufs (sdp_tx.c)" \
	"$("$layers" --check --code "$tmp" | grep '^takes')"
finish
