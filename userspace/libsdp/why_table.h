/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdp: the record of why each socket is on SDP or on TCP, as
 * `sdpstat --why` reads it (why.c writes it).
 *
 * libsdp keeps one table per process in a shared mapping of a memfd named
 * SDP_WHY_NAME, which /proc/PID/maps shows as "/memfd:libsdp-why
 * (deleted)"; sdpstat reads the memfd itself through /proc/PID/map_files/
 * (root only: CAP_SYS_ADMIN), never the process's memory, so that a
 * process cannot make the reader wait (a userfaultfd, a FUSE file named
 * alike).  Nothing is written to the file system.
 *
 * Each decision libsdp takes for a socket is a record, keyed by the
 * socket's inode number (the N of /proc/PID/fd's "socket:[N]"), in a ring
 * of SDP_WHY_SLOTS: a process with more sockets than that loses the
 * oldest records, and sdpstat says "no record" for them.  A child after
 * fork() gets a table of its own, a copy of its parent's (the sockets
 * the records name are its too).
 *
 * A record is written ino last, after a zero: a reader that sees the ino
 * it looks for sees the fields written before it.
 */
#ifndef SDP_WHY_TABLE_H
#define SDP_WHY_TABLE_H

#include <stdint.h>

#define SDP_WHY_NAME	"libsdp-why"
#define SDP_WHY_MAGIC	0x31796877u	/* "why1" */
#define SDP_WHY_SLOTS	4096

enum sdp_why {
	SDP_WHY_NONE,
	/* on SDP */
	SDP_WHY_RULE_SDP,	/* a "use sdp" rule (or SIMPLE_LIBSDP) */
	SDP_WHY_BOTH_SDP,	/* a "use both" rule; the peer took SDP */
	SDP_WHY_BOTH_LISTEN,	/* a "use both" listener: TCP and SDP */
	SDP_WHY_ACCEPT_SDP,	/* accepted on a "both" listener, by SDP */
	/* on TCP */
	SDP_WHY_NO_RULE,	/* no rule matched (the default: tcp) */
	SDP_WHY_RULE_TCP,	/* a "use tcp" rule */
	SDP_WHY_NO_SOCKET,	/* no SDP socket could be made (err) */
	SDP_WHY_REFUSED,	/* "both": the peer refused SDP */
	SDP_WHY_NO_ROUTE,	/* "both": no RDMA device reaches the peer */
	SDP_WHY_TIMEOUT,	/* "both": SDP's connect timed out */
	SDP_WHY_FAILED,		/* "both": SDP's connect failed (err) */
	SDP_WHY_TWIN_FAILED,	/* "both" listener: its SDP twin failed (err) */
	SDP_WHY_ACCEPT_TCP,	/* accepted on a "both" listener, by TCP */
	SDP_WHY_MAX
};

struct sdp_why_rec {
	uint64_t ino;		/* the socket's inode; 0: free */
	uint16_t why;		/* enum sdp_why */
	uint16_t err;		/* the errno that decided, or 0 */
	uint16_t line;		/* the rule's line in the file, or 0 */
	uint16_t role;		/* SDP_WHY_ROLE_* */
};

#define SDP_WHY_ROLE_CLIENT	0	/* connect() */
#define SDP_WHY_ROLE_SERVER	1	/* bind(), listen() */
#define SDP_WHY_ROLE_ACCEPTED	2	/* accept() */

struct sdp_why_table {
	uint32_t magic;		/* SDP_WHY_MAGIC */
	uint32_t slots;		/* SDP_WHY_SLOTS */
	uint32_t next;		/* the slot the next new record takes */
	uint32_t reserved;
	struct sdp_why_rec rec[SDP_WHY_SLOTS];
};

#endif /* SDP_WHY_TABLE_H */
