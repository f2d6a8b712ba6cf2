#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# When bare credit updates go out (sdp_need_credit_update() in sdp_tx.c),
# by the counters TxCreditUpdate and RxCreditUpdate, over rxe in one VM:
#  - request and reply: sdp_lbench's 64 B ping-pong begins with a header
#    the client sends on its own, so the server reads two messages before
#    its first reply and tells of both buffers in an update.  From then on
#    the replies carry the credits: at most 2 updates in 2000 round trips.
#    Before the fix, the client answered that update and the reply with an
#    update of its own, the server answered the same way, and so on for as
#    long as the connection lived: 2 updates per round trip, 4000 here.
#  - a reply in two messages (a header, then a body): the client's next
#    request carries the two credits it owes, no update between them.
#  - a one-way stream: the reader's updates are what let the writer go on,
#    so some go out and the stream ends (sdp_lbench's bw waits for the
#    reader's acknowledgement of the end).
#  - nothing is left afterwards.
. "$(dirname "$0")/lib.sh"

sdp_fresh || exit 1
addr=$SDP_ADDR

u0=$(sdp_stat TxCreditUpdate) d0=$(sdp_stat TxData)
out=$(timeout 120 sdp_lbench sdp "$addr" 7711 lat 64 2000 2>&1)
check "2000 round trips of 64 B ($out)" test "${out%% *}" = lat
upd=$(($(sdp_stat TxCreditUpdate) - u0)) data=$(($(sdp_stat TxData) - d0))
check "request and reply: at most 2 updates ($upd, with $data Data)" \
	test "$upd" -le 2

# A reply in two messages (a header, then a body, as nginx answers): the
# client owes the server two credits after each, which its next request
# carries.  Before the fix (updates from a quarter of the ring on) the
# client sent an update for them after every reply: 2000 here, and the
# server took in two messages per request instead of one.
u0=$(sdp_stat TxCreditUpdate) d0=$(sdp_stat TxData)
out=$(SDP_LBENCH_SPLIT=200 timeout 120 sdp_lbench sdp "$addr" 7713 lat 1224 2000 2>&1)
check "2000 round trips, replies in two messages ($out)" test "${out%% *}" = lat
upd=$(($(sdp_stat TxCreditUpdate) - u0)) data=$(($(sdp_stat TxData) - d0))
check "the replies went as two messages each ($data Data, 6000 asked)" \
	test "$data" -ge 6000
check "replies in two messages: at most 2 updates ($upd, with $data Data)" \
	test "$upd" -le 2

u0=$(sdp_stat TxCreditUpdate)
out=$(timeout 120 sdp_lbench sdp "$addr" 7712 bw 65536 2 2>&1)
check "a one-way stream of 64 KiB sends ends ($out)" test "${out%% *}" = bw
upd=$(($(sdp_stat TxCreditUpdate) - u0))
check "the reader sent updates ($upd)" test "$upd" -gt 0

sdp_check_clean
finish
