/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdp: replacing the socket behind a descriptor (swap.c).  All under
 * the state lock.
 */
#ifndef SDP_SWAP_H
#define SDP_SWAP_H

#include <stdbool.h>

#include "state.h"

/* An SDP connect that failed so: the peer may still speak TCP. */
bool sdp_fallback_errno(int err);

/* The SDP family for AF_INET or AF_INET6. */
int sdp_family_of(int domain);

/* Is @fd an SDP socket? */
bool sdp_fd_is_sdp(int fd);

/* A new SDP socket for a program's of @domain (IPPROTO_SDP if it can). */
int sdp_socket_sdp(int domain, int flags);

/* setsockopt() on an SDP socket, SO_ZEROCOPY translated. */
int sdp_setsockopt_sdp(int fd, int level, int name, const void *val,
		       socklen_t len);

/* Put a new SDP (or TCP) socket behind every descriptor of @s, @fd one of
 * them.  0 or -errno (nothing changed when the new socket cannot be made).
 */
int sdp_swap(int fd, struct sdp_sock *s, bool sdp);

/* Bind @fd again where the program bound its socket, if it did. */
int sdp_rebind(int fd, struct sdp_sock *s);

/* An SDP socket bound where the TCP socket on @fd is, its twin, in
 * s->twin (-1, logged, if there can be none).
 */
void sdp_twin_open(int fd, struct sdp_sock *s);

/* Register the twin wherever the socket is registered. */
void sdp_twin_register(struct sdp_sock *s);
void sdp_twin_moved(struct sdp_sock *s, int nfd);

/* Under "both", the SDP connect failed: TCP instead, to s->peer.  Returns
 * 0, -EINPROGRESS or the connect's error; without @wait the connect does
 * not block (a blocking socket is non-blocking for that call).
 */
int sdp_fallback_start(int fd, struct sdp_sock *s, bool wait);

enum sdp_check {
	SDP_CHECK_PENDING,	/* still connecting */
	SDP_CHECK_DONE,		/* connected, or failed (s->pending_err) */
	SDP_CHECK_FELL_BACK,	/* a TCP connect replaced the SDP one */
};

/* A BOTH_CONNECT socket reported an event: what became of it? */
enum sdp_check sdp_connect_check(int fd, struct sdp_sock *s);

#endif /* SDP_SWAP_H */
