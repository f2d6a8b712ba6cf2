/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdp: what libsdp knows of the program's sockets.
 *
 * Every AF_INET/AF_INET6 stream socket the program creates is "tracked": a
 * struct sdp_sock records its family, the options set on it and its epoll
 * registrations, until the rules are applied at bind(), listen() or
 * connect() and afterwards.  Descriptors map to it through a table indexed
 * by descriptor number; dup()'s copies share it (refs counts them), so a
 * socket swapped for another is swapped behind every copy.
 *
 * Locking: one mutex (sdp_lock()) protects every struct sdp_sock, the
 * table's contents and the epoll marks.  sdp_fd_tracked(),
 * sdp_fd_epoll_direct() and the two counters are read without it, as
 * hints for fast paths: an untracked descriptor costs no lock, nor does
 * epoll_ctl() of a socket whose state is final and has no registration
 * recorded (the common case: a connection libsdp moved to SDP).  A hint
 * read while another thread closes the descriptor and reuses its number
 * may be stale, as the descriptor itself would be for the program.  The
 * lock is never held across a call that may block for long (a blocking
 * connect, accept or wait), and signals are blocked while it is held, so
 * that a signal handler may call what takes it.  fork() takes it
 * (pthread_atfork), so the child starts with it free.  Nothing reached
 * from close() frees memory (a dead socket waits on a list for a call
 * that allocates anyway): close() is async-signal-safe, and programs
 * call it from handlers.  A vfork() child shares this state with its
 * parent but not its descriptors: its close() and dup2() change nothing
 * here (sdp_state_ours()).
 *
 * A "both" socket's twin is libsdp's own descriptor, which the program
 * does not know is open: close() of its number fails with EBADF, and
 * dup2()/dup3() onto it move the twin to another number first.
 */
#ifndef SDP_STATE_H
#define SDP_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

enum sdp_sock_state {
	SDP_SOCK_UNDECIDED,	/* a TCP socket, rules still to apply */
	SDP_SOCK_SDP,		/* an SDP socket */
	SDP_SOCK_TCP,		/* stays TCP */
	SDP_SOCK_BOTH_LISTEN,	/* a TCP listener with an SDP twin */
	SDP_SOCK_BOTH_CONNECT,	/* an SDP connect under way; TCP if it fails */
};

/* An option set by the program, replayed on a replacement socket. */
struct sdp_opt {
	int level;
	int name;
	socklen_t len;
	unsigned char val[];
};

/* An epoll registration of a tracked socket.  The kernel holds it with
 * marked data (SDP_MARK | id), translated back in epoll_wait().
 */
struct sdp_reg {
	int epfd;
	int fd;
	uint32_t events;
	uint64_t data;		/* the program's */
	uint32_t id;		/* mark of this registration */
	uint32_t twin_id;	/* mark of the twin's registration, or 0 */
};

struct sdp_sock {
	int refs;		/* descriptors that refer to it */
	int domain;		/* AF_INET or AF_INET6 */
	enum sdp_sock_state state;
	int twin;		/* BOTH: the SDP socket beside, or -1 */
	int pending_err;	/* SO_ERROR libsdp read, for the program */
	unsigned int rule_line;	/* the deciding rule's line, or 0 (why.c) */
	int twin_err;		/* errno of the twin that could not be made */
	bool nb_user;		/* BOTH_LISTEN: the program's O_NONBLOCK */
	bool bound;
	socklen_t bind_len;
	struct sockaddr_storage bind_addr;
	socklen_t peer_len;	/* BOTH_CONNECT: where to */
	struct sockaddr_storage peer;
	struct sdp_opt **opts;
	int nopts;
	struct sdp_reg *regs;
	int nregs;
	struct sdp_sock *next_free;	/* on the graveyard, freed later */
};

/* epoll data libsdp registers in the program's place */
#define SDP_MARK	0x5d5d000000000000ULL
#define SDP_MARK_MASK	0xffff000000000000ULL

struct sdp_mark {
	bool used;
	bool twin;		/* the registration of a BOTH listener's twin */
	int epfd;
	int fd;			/* the program's descriptor */
	uint64_t data;		/* the program's data */
};

void sdp_state_init(void);
void sdp_lock(void);
void sdp_unlock(void);

/* Lock-free hints. */
bool sdp_fd_tracked(int fd);
/* Untracked, or a tracked socket epoll needs nothing of libsdp for: its
 * state final (SDP or TCP), no registration recorded.
 */
bool sdp_fd_epoll_direct(int fd);
bool sdp_fd_is_epfd(int fd);
bool sdp_fd_is_twin(int fd);	/* libsdp's own descriptor */
bool sdp_state_ours(void);	/* not a vfork() child sharing it */
int sdp_nspecial(void);		/* sockets in a BOTH state */
int sdp_nmarks(void);		/* epoll marks in use */

/* Under the lock. */
struct sdp_sock *sdp_sock_get(int fd);
struct sdp_sock *sdp_sock_track(int fd, int domain);
void sdp_fd_attach(int fd, struct sdp_sock *s);
void sdp_fd_detach(int fd);
void sdp_fd_set_epfd(int fd);
void sdp_epfd_closed(int epfd);
void sdp_fds_closing(unsigned int first, unsigned int last);
void sdp_sock_set_state(struct sdp_sock *s, enum sdp_sock_state state);
void sdp_sock_close_twin(struct sdp_sock *s);
void sdp_sock_set_twin(struct sdp_sock *s, int tfd);
struct sdp_sock *sdp_twin_owner(int tfd);
int sdp_sock_record_opt(struct sdp_sock *s, int level, int name,
			const void *val, socklen_t len);
/* Calls @fn for every descriptor that refers to @s. */
void sdp_sock_walk_fds(struct sdp_sock *s, void (*fn)(int fd, void *arg),
		       void *arg);

struct sdp_reg *sdp_reg_find(struct sdp_sock *s, int epfd, int fd);
struct sdp_reg *sdp_reg_add(struct sdp_sock *s, int epfd, int fd,
			    uint32_t events, uint64_t data);
void sdp_reg_del(struct sdp_sock *s, struct sdp_reg *r);

uint32_t sdp_mark_new(int epfd, int fd, bool twin, uint64_t data);
struct sdp_mark *sdp_mark_get(uint32_t id);
void sdp_mark_free(uint32_t id);

#endif /* SDP_STATE_H */
