/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdp: AZ-SDP, asynchronous zero copy for blocking sends (async.c),
 * and the send calls libsdp interposes for it (send.c).
 */
#ifndef SDP_ASYNC_H
#define SDP_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

extern bool sdp_az_wanted;	/* LIBSDP_ASYNC=1 or a rule's "async" */
extern bool sdp_az_env;		/* LIBSDP_ASYNC=1: every SDP socket */
extern size_t sdp_az_min;	/* LIBSDP_ASYNC_MIN: smallest middle */
/* LIBSDP_ASYNC_NOPROTECT=1, for the tests only: send asynchronously
 * without protecting the pages (the module refuses unless its
 * sdp_az_verify is off), to show that the tests catch it
 */
extern bool sdp_az_noprotect;

/* Send @msg so if it may go asynchronously (*@done set, its result
 * returned); else *@done clear, and the caller sends it.
 */
ssize_t sdp_az_sendmsg(int fd, const struct msghdr *msg, int flags,
		       bool *done);

/* A rule's "async": bind @fd to the process's AZ channel. */
void sdp_az_bind(int fd);
/* accept() returned @fd (or -1): rebind it if its listener was bound by
 * another process (a forking server's parent); returns @fd, errno kept.
 */
int sdp_az_accepted(int fd);

/* ioctl(@fd, UFFDIO_REGISTER, @arg) by the program, on a userfaultfd
 * of its own: the mappings libsdp registered in that range are handed
 * over (unregistered once no send in flight covers them; no AZ-SDP
 * there afterwards), so that the program's call does not fail with
 * EBUSY.
 */
void sdp_az_yield(int fd, const void *arg);

/* fork(): in the child, under the atfork lock */
void sdp_az_fork_prepare(void);
void sdp_az_fork_parent(void);
void sdp_az_forked(void);

/* Is @fd libsdp's own (its userfaultfd or channel)?  The program never
 * opened it: close() says EBADF, dup2() onto it moves it first
 * (sdp_az_evict(): 0 or -errno), close_range() leaves it open.
 */
bool sdp_az_fd(int fd);
int sdp_az_evict(int fd);
int sdp_az_close_range(unsigned int first, unsigned int last, int flags);

#endif /* SDP_ASYNC_H */
