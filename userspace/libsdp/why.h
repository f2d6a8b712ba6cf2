/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdp: why each socket is on SDP or on TCP (why.c; the table sdpstat
 * --why reads: why_table.h).
 */
#ifndef SDP_WHY_H
#define SDP_WHY_H

#include "why_table.h"

/* Make the table, once, at initialisation (LIBSDP_WHY=0: none). */
void sdp_why_init(void);
/* In a child after fork(): a table of its own, a copy of its parent's. */
void sdp_why_forked(void);

/* Record that the socket of descriptor @fd is where it is for @why, with
 * the errno @err that decided it (or 0), the configuration line @line of
 * the rule that did (or 0) and its SDP_WHY_ROLE_* @role.  Keeps errno.
 */
void sdp_why_note(int fd, enum sdp_why why, int err, unsigned int line,
		  int role);

/* The reason a "both" connect that failed over SDP with @err went on by
 * TCP.
 */
enum sdp_why sdp_why_fallback(int err);

#endif /* SDP_WHY_H */
