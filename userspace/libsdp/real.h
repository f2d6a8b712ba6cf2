/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdp: the C library's own functions behind the ones libsdp interposes,
 * and the library's one-time initialisation.
 *
 * sdp_init() resolves every real function with dlsym(RTLD_NEXT) once
 * (pthread_once), then reads the environment and the configuration file.
 * libsdp's own code calls the real functions only through sdp_real, never
 * the interposed names, so that it can never recurse into itself; log.c,
 * which runs during initialisation, uses raw system calls instead.
 */
#ifndef SDP_REAL_H
#define SDP_REAL_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "config.h"

struct sdp_real {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*close)(int);
	int (*close_range)(unsigned int, unsigned int, int);	/* or NULL */
	void (*closefrom)(int);					/* or NULL */
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*ioctl)(int, unsigned long, ...);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *,
		     const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *,
		       const struct timespec *, const sigset_t *);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int,
			   const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int,
			    const struct timespec *, const sigset_t *);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
};

extern struct sdp_real sdp_real;

/* What the process was told to do. */
struct sdp_settings {
	struct sdp_config *config;
	enum sdp_use dflt;	/* no rule matches: LIBSDP_DEFAULT, else tcp */
	bool simple;		/* SIMPLE_LIBSDP: every socket is SDP */
	bool any_sdp;		/* some socket may become SDP: track them */
	int af_sdp;		/* the SDP families (module parameters) */
	int af_sdp6;
	int ipproto_sdp;	/* IPPROTO_SDP, or 0: families only */
};

extern struct sdp_settings sdp_settings;

/* Idempotent, thread-safe, cheap once done. */
void sdp_init(void);

/* What the rules say for @role, @addr in this program; *@async: the
 * rule asks for AZ-SDP; *@line: the rule's line in the configuration
 * file, 0 when none decided (no rule matched, or SIMPLE_LIBSDP).
 */
enum sdp_use sdp_decide(enum sdp_role role, const struct sockaddr *addr,
			socklen_t len, bool *async, unsigned int *line);

#endif /* SDP_REAL_H */
