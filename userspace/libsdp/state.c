// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: the descriptor table, tracked sockets and epoll marks (see
 * state.h for what they are and the locking).
 *
 * The table is an array of slots indexed by descriptor number, grown by
 * doubling.  A grown table is published before its size, and a replaced
 * one is never freed, so lock-free readers (sdp_fd_tracked()) always see a
 * valid array at least as large as the size they read: the old arrays add
 * up to less than the current one.
 */
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "real.h"
#include "async.h"
#include "state.h"
#include "why.h"

#define SDP_SLOT_EPFD	0x1	/* an epoll descriptor with marks */
#define SDP_SLOT_TWIN	0x2	/* libsdp's own: a "both" socket's twin */
#define SDP_SLOT_PLAIN	0x4	/* tracked, but epoll needs nothing of us */
#define SDP_MAX_OPTS	64

struct sdp_slot {
	struct sdp_sock *sock;
	unsigned char flags;
};

/* Sockets no descriptor refers to any more, freed by the next call that
 * allocates: close() runs in signal handlers, where free() may not.
 */
static struct sdp_sock *sdp_graveyard;

/* The process the state is for: a vfork() child shares it (no atfork
 * handler runs), so it must not change it (sdp_state_ours()).
 */
static pid_t sdp_state_pid;

static pthread_mutex_t sdp_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct sdp_slot *sdp_slots;
static int sdp_nslots;
static int sdp_special_count;
static int sdp_mark_count;

static struct sdp_mark *sdp_marks;	/* index 0 unused */
static uint32_t sdp_marks_cap;
static uint32_t sdp_marks_hint = 1;

/* Signals are blocked while the lock is held: a handler that closes a
 * socket (close() takes the lock) must not find its own thread holding it.
 */
static __thread sigset_t sdp_saved_mask;

void sdp_lock(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &sdp_saved_mask);
	pthread_mutex_lock(&sdp_mutex);
}

void sdp_unlock(void)
{
	int saved_errno = errno;

	pthread_mutex_unlock(&sdp_mutex);
	pthread_sigmask(SIG_SETMASK, &sdp_saved_mask, NULL);
	errno = saved_errno;
}

/* fork() holds the lock as sdp_lock() does, signals blocked: a handler
 * that closes a socket while fork() holds it would wait for ever.
 */
static void sdp_atfork_prepare(void)
{
	sdp_lock();
	sdp_az_fork_prepare();
}

static void sdp_atfork_parent(void)
{
	sdp_az_fork_parent();
	sdp_unlock();
}

static void sdp_atfork_child(void)
{
	sdp_state_pid = getpid();
	sdp_az_forked();
	sdp_why_forked();
	sdp_unlock();
}

void sdp_state_init(void)
{
	sdp_state_pid = getpid();
	pthread_atfork(sdp_atfork_prepare, sdp_atfork_parent,
		       sdp_atfork_child);
}

bool sdp_state_ours(void)
{
	return getpid() == __atomic_load_n(&sdp_state_pid, __ATOMIC_RELAXED);
}

static struct sdp_slot *sdp_slot_peek(int fd)
{
	int n = __atomic_load_n(&sdp_nslots, __ATOMIC_ACQUIRE);
	struct sdp_slot *slots = __atomic_load_n(&sdp_slots, __ATOMIC_ACQUIRE);

	return fd >= 0 && fd < n ? &slots[fd] : NULL;
}

bool sdp_fd_tracked(int fd)
{
	struct sdp_slot *sl = sdp_slot_peek(fd);

	return sl && __atomic_load_n(&sl->sock, __ATOMIC_RELAXED);
}

bool sdp_fd_epoll_direct(int fd)
{
	struct sdp_slot *sl = sdp_slot_peek(fd);

	return !sl || !__atomic_load_n(&sl->sock, __ATOMIC_RELAXED) ||
	       (__atomic_load_n(&sl->flags, __ATOMIC_RELAXED) &
		SDP_SLOT_PLAIN);
}

bool sdp_fd_is_twin(int fd)
{
	struct sdp_slot *sl = sdp_slot_peek(fd);

	return sl && (__atomic_load_n(&sl->flags, __ATOMIC_RELAXED) &
		      SDP_SLOT_TWIN);
}

bool sdp_fd_is_epfd(int fd)
{
	struct sdp_slot *sl = sdp_slot_peek(fd);

	return sl && (__atomic_load_n(&sl->flags, __ATOMIC_RELAXED) &
		      SDP_SLOT_EPFD);
}

int sdp_nspecial(void)
{
	return __atomic_load_n(&sdp_special_count, __ATOMIC_RELAXED);
}

int sdp_nmarks(void)
{
	return __atomic_load_n(&sdp_mark_count, __ATOMIC_RELAXED);
}

/* Under the lock: a slot for @fd, growing the table (NULL on ENOMEM). */
static struct sdp_slot *sdp_slot(int fd)
{
	struct sdp_slot *slots;
	size_t n;

	if (fd < 0)
		return NULL;
	if (fd < sdp_nslots)
		return &sdp_slots[fd];
	/* doubling, in size_t: an int would overflow for huge descriptors */
	n = sdp_nslots ? sdp_nslots : 256;
	while (n <= (size_t)fd)
		n *= 2;
	if (n > INT_MAX)
		n = (size_t)fd + 1;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return NULL;
	if (sdp_nslots)
		memcpy(slots, sdp_slots, sdp_nslots * sizeof(*slots));
	/* the old array stays: a lock-free reader may be looking at it */
	__atomic_store_n(&sdp_slots, slots, __ATOMIC_RELEASE);
	__atomic_store_n(&sdp_nslots, (int)n, __ATOMIC_RELEASE);
	return &sdp_slots[fd];
}

struct sdp_sock *sdp_sock_get(int fd)
{
	return fd >= 0 && fd < sdp_nslots ? sdp_slots[fd].sock : NULL;
}

static bool sdp_state_special(enum sdp_sock_state state)
{
	return state == SDP_SOCK_BOTH_LISTEN || state == SDP_SOCK_BOTH_CONNECT;
}

/* Plain: settled for good (SDP and TCP are final states: nothing swaps
 * the socket again) and no epoll registration recorded, so epoll_ctl()
 * may go straight to the kernel with the program's own data.
 */
static bool sdp_sock_plain(const struct sdp_sock *s)
{
	return (s->state == SDP_SOCK_SDP || s->state == SDP_SOCK_TCP) &&
	       !s->nregs;
}

static void sdp_slot_set_plain(int fd, bool plain)
{
	if (plain)
		__atomic_or_fetch(&sdp_slots[fd].flags, SDP_SLOT_PLAIN,
				  __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&sdp_slots[fd].flags, ~SDP_SLOT_PLAIN,
				   __ATOMIC_RELAXED);
}

static void sdp_slot_set_plain_cb(int fd, void *arg)
{
	sdp_slot_set_plain(fd, *(bool *)arg);
}

/* Under the lock, after @s changed as @was_plain says it was: every
 * descriptor of @s says what it now is.
 */
static void sdp_sock_plain_update(struct sdp_sock *s, bool was_plain)
{
	bool plain = sdp_sock_plain(s);

	if (plain != was_plain)
		sdp_sock_walk_fds(s, sdp_slot_set_plain_cb, &plain);
}

void sdp_sock_set_state(struct sdp_sock *s, enum sdp_sock_state state)
{
	int d = sdp_state_special(state) - sdp_state_special(s->state);
	bool was_plain = sdp_sock_plain(s);

	if (d)
		__atomic_add_fetch(&sdp_special_count, d, __ATOMIC_RELAXED);
	s->state = state;
	sdp_sock_plain_update(s, was_plain);
}

/* Under the lock, where allocating is allowed anyway. */
static void sdp_graveyard_reap(void)
{
	struct sdp_sock *s;
	int i;

	while ((s = sdp_graveyard)) {
		sdp_graveyard = s->next_free;
		for (i = 0; i < s->nopts; i++)
			free(s->opts[i]);
		free(s->opts);
		free(s->regs);
		free(s);
	}
}

struct sdp_sock *sdp_sock_track(int fd, int domain)
{
	struct sdp_slot *sl;
	struct sdp_sock *s;

	sdp_graveyard_reap();
	sl = sdp_slot(fd);
	if (!sl)
		return NULL;
	if (sl->sock)	/* a descriptor closed behind libsdp's back */
		sdp_fd_detach(fd);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->refs = 1;
	s->domain = domain;
	s->state = SDP_SOCK_UNDECIDED;
	s->twin = -1;
	__atomic_and_fetch(&sl->flags, ~SDP_SLOT_PLAIN, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->sock, s, __ATOMIC_RELAXED);
	return s;
}

void sdp_fd_attach(int fd, struct sdp_sock *s)
{
	struct sdp_slot *sl = sdp_slot(fd);

	if (!sl) {
		sdp_log(SDP_LOG_ERR, "out of memory: descriptor %d untracked",
			fd);
		return;
	}
	if (sl->sock)
		sdp_fd_detach(fd);
	s->refs++;
	sdp_slot_set_plain(fd, sdp_sock_plain(s));
	__atomic_store_n(&sl->sock, s, __ATOMIC_RELAXED);
}

/**
 * sdp_sock_set_twin - @s's twin is now @tfd (or none, -1)
 * @s: the "both" socket
 * @tfd: its twin's descriptor, or -1
 *
 * The twin's slot says so, for close(), dup2() and dup3() on its number:
 * the program does not know it is open.  Under the lock.
 */
void sdp_sock_set_twin(struct sdp_sock *s, int tfd)
{
	struct sdp_slot *sl;

	if (s->twin >= 0 && s->twin < sdp_nslots)
		__atomic_and_fetch(&sdp_slots[s->twin].flags, ~SDP_SLOT_TWIN,
				   __ATOMIC_RELAXED);
	s->twin = -1;
	if (tfd < 0)
		return;
	sl = sdp_slot(tfd);
	if (sl)
		__atomic_or_fetch(&sl->flags, SDP_SLOT_TWIN, __ATOMIC_RELAXED);
	s->twin = tfd;
}

/* The socket whose twin @tfd is, or NULL.  Under the lock. */
struct sdp_sock *sdp_twin_owner(int tfd)
{
	int fd;

	if (!sdp_fd_is_twin(tfd))
		return NULL;
	for (fd = 0; fd < sdp_nslots; fd++) {
		struct sdp_sock *s = sdp_slots[fd].sock;

		if (s && s->twin == tfd)
			return s;
	}
	return NULL;
}

void sdp_sock_close_twin(struct sdp_sock *s)
{
	int i, tfd = s->twin;

	if (tfd < 0)
		return;
	/* its registrations go with it */
	for (i = 0; i < s->nregs; i++) {
		if (s->regs[i].twin_id)
			sdp_mark_free(s->regs[i].twin_id);
		s->regs[i].twin_id = 0;
	}
	sdp_sock_set_twin(s, -1);
	sdp_real.close(tfd);
}

static void sdp_sock_free(struct sdp_sock *s)
{
	int i;

	sdp_sock_set_state(s, SDP_SOCK_TCP);	/* for the counter */
	sdp_sock_close_twin(s);
	for (i = 0; i < s->nregs; i++)
		sdp_mark_free(s->regs[i].id);
	s->next_free = sdp_graveyard;
	sdp_graveyard = s;
}

void sdp_fd_detach(int fd)
{
	struct sdp_sock *s = sdp_sock_get(fd);
	int i;

	if (!s)
		return;
	__atomic_store_n(&sdp_slots[fd].sock, NULL, __ATOMIC_RELAXED);
	sdp_slot_set_plain(fd, false);
	/* this descriptor's registrations end with it */
	for (i = 0; i < s->nregs; ) {
		if (s->regs[i].fd == fd) {
			sdp_reg_del(s, &s->regs[i]);
			continue;
		}
		i++;
	}
	if (--s->refs == 0)
		sdp_sock_free(s);
}

/**
 * sdp_fds_closing - descriptors @first..@last are about to be closed
 * @first: the range's first descriptor
 * @last: its last (inclusive)
 *
 * By close_range() or closefrom(): each is forgotten as by close(), and a
 * "both" socket whose twin (libsdp's own descriptor) is in the range, but
 * not itself, loses the twin, closed first, to be taken by nothing else.
 * Under the lock.
 */
void sdp_fds_closing(unsigned int first, unsigned int last)
{
	unsigned int fd;

	if (first >= (unsigned int)sdp_nslots)
		return;
	if (last >= (unsigned int)sdp_nslots)
		last = sdp_nslots - 1;
	for (fd = first; fd <= last; fd++) {
		if (sdp_slots[fd].sock)
			sdp_fd_detach(fd);
		if (sdp_slots[fd].flags & SDP_SLOT_EPFD)
			sdp_epfd_closed(fd);
	}
	for (fd = 0; fd < (unsigned int)sdp_nslots; fd++) {
		struct sdp_sock *s = sdp_slots[fd].sock;

		if (s && s->twin >= 0 && (unsigned int)s->twin >= first &&
		    (unsigned int)s->twin <= last)
			sdp_sock_close_twin(s);
	}
}

void sdp_fd_set_epfd(int fd)
{
	struct sdp_slot *sl = sdp_slot(fd);

	if (sl)
		__atomic_or_fetch(&sl->flags, SDP_SLOT_EPFD, __ATOMIC_RELAXED);
}

/* The epoll descriptor @epfd is closed: its registrations are gone. */
void sdp_epfd_closed(int epfd)
{
	int fd, i;

	if (epfd < 0 || epfd >= sdp_nslots)
		return;
	__atomic_and_fetch(&sdp_slots[epfd].flags, ~SDP_SLOT_EPFD,
			   __ATOMIC_RELAXED);
	for (fd = 0; fd < sdp_nslots; fd++) {
		struct sdp_sock *s = sdp_slots[fd].sock;

		if (!s)
			continue;
		for (i = 0; i < s->nregs; ) {
			if (s->regs[i].epfd == epfd) {
				sdp_reg_del(s, &s->regs[i]);
				continue;
			}
			i++;
		}
	}
}

int sdp_sock_record_opt(struct sdp_sock *s, int level, int name,
			const void *val, socklen_t len)
{
	struct sdp_opt *o, **v;
	int i;

	if (len > 1024)
		return -EINVAL;
	o = malloc(sizeof(*o) + len);
	if (!o)
		return -ENOMEM;
	o->level = level;
	o->name = name;
	o->len = len;
	if (len)
		memcpy(o->val, val, len);
	/* the latest value of an option replaces the earlier one */
	for (i = 0; i < s->nopts; i++) {
		if (s->opts[i]->level == level && s->opts[i]->name == name) {
			free(s->opts[i]);
			memmove(&s->opts[i], &s->opts[i + 1],
				(s->nopts - i - 1) * sizeof(*s->opts));
			s->nopts--;
			break;
		}
	}
	if (s->nopts >= SDP_MAX_OPTS) {
		free(o);
		return -ENOSPC;
	}
	v = realloc(s->opts, (s->nopts + 1) * sizeof(*v));
	if (!v) {
		free(o);
		return -ENOMEM;
	}
	s->opts = v;
	s->opts[s->nopts++] = o;
	return 0;
}

void sdp_sock_walk_fds(struct sdp_sock *s, void (*fn)(int fd, void *arg),
		       void *arg)
{
	int fd, seen = 0;

	for (fd = 0; fd < sdp_nslots && seen < s->refs; fd++) {
		if (sdp_slots[fd].sock == s) {
			seen++;
			fn(fd, arg);
		}
	}
}

struct sdp_reg *sdp_reg_find(struct sdp_sock *s, int epfd, int fd)
{
	int i;

	for (i = 0; i < s->nregs; i++)
		if (s->regs[i].epfd == epfd && s->regs[i].fd == fd)
			return &s->regs[i];
	return NULL;
}

struct sdp_reg *sdp_reg_add(struct sdp_sock *s, int epfd, int fd,
			    uint32_t events, uint64_t data)
{
	bool was_plain = sdp_sock_plain(s);
	struct sdp_reg *v, *r;
	uint32_t id = sdp_mark_new(epfd, fd, false, data);

	if (!id)
		return NULL;
	v = realloc(s->regs, (s->nregs + 1) * sizeof(*v));
	if (!v) {
		sdp_mark_free(id);
		return NULL;
	}
	s->regs = v;
	r = &s->regs[s->nregs++];
	sdp_sock_plain_update(s, was_plain);
	r->epfd = epfd;
	r->fd = fd;
	r->events = events;
	r->data = data;
	r->id = id;
	r->twin_id = 0;
	sdp_fd_set_epfd(epfd);
	return r;
}

void sdp_reg_del(struct sdp_sock *s, struct sdp_reg *r)
{
	int i = r - s->regs;

	sdp_mark_free(r->id);
	if (r->twin_id)
		sdp_mark_free(r->twin_id);
	memmove(r, r + 1, (s->nregs - i - 1) * sizeof(*r));
	s->nregs--;
	sdp_sock_plain_update(s, false);
}

uint32_t sdp_mark_new(int epfd, int fd, bool twin, uint64_t data)
{
	uint32_t id, n;

	for (n = 0; n < sdp_marks_cap; n++) {
		id = (sdp_marks_hint + n) % sdp_marks_cap;
		if (id && !sdp_marks[id].used)
			goto found;
	}
	n = sdp_marks_cap ? sdp_marks_cap * 2 : 64;
	{
		struct sdp_mark *m = realloc(sdp_marks, n * sizeof(*m));

		if (!m)
			return 0;
		memset(m + sdp_marks_cap, 0,
		       (n - sdp_marks_cap) * sizeof(*m));
		id = sdp_marks_cap ? sdp_marks_cap : 1;
		sdp_marks = m;
		sdp_marks_cap = n;
	}
found:
	sdp_marks[id].used = true;
	sdp_marks[id].twin = twin;
	sdp_marks[id].epfd = epfd;
	sdp_marks[id].fd = fd;
	sdp_marks[id].data = data;
	sdp_marks_hint = id + 1;
	__atomic_add_fetch(&sdp_mark_count, 1, __ATOMIC_RELAXED);
	return id;
}

struct sdp_mark *sdp_mark_get(uint32_t id)
{
	return id && id < sdp_marks_cap && sdp_marks[id].used ?
	       &sdp_marks[id] : NULL;
}

void sdp_mark_free(uint32_t id)
{
	if (!sdp_mark_get(id))
		return;
	sdp_marks[id].used = false;
	__atomic_sub_fetch(&sdp_mark_count, 1, __ATOMIC_RELAXED);
}
