// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: poll(), select() and epoll for the "both" sockets.
 *
 * Two kinds of socket need libsdp in the waits, and only while one exists
 * (sdp_nspecial(), sdp_nmarks()); otherwise every call goes straight to
 * the C library:
 *
 *  - a "both" listener: the program waits on its TCP listener, but SDP
 *    connections arrive on the twin.  poll() and select() wait on the twin
 *    as well and report its readiness as the listener's; epoll_ctl()
 *    registers the twin beside the listener, and epoll_wait() reports its
 *    events as the listener's (one event for both).
 *
 *  - a "both" connect under way: when it fails because the peer has no
 *    SDP, the event that says so is not the program's to see.  The wait
 *    starts a TCP connect on the same descriptor (swap.c), drops the event
 *    and goes on waiting, for the time that is left; the TCP connect's own
 *    completion is what the program sees.
 *
 * epoll registrations of tracked sockets carry marked data (state.h), so
 * that epoll_wait() can tell which socket an event is for: the program's
 * data is put back before it sees the event.  A socket whose state is
 * final (SDP or TCP) and has no registration recorded needs none:
 * epoll_ctl() passes it through untouched (sdp_fd_epoll_direct()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "real.h"
#include "state.h"
#include "swap.h"

#define SDP_EXPORT __attribute__((visibility("default")))
#define SDP_STACK_FDS	64

static void sdp_now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

static void sdp_ts_add(struct timespec *a, const struct timespec *b)
{
	a->tv_sec += b->tv_sec;
	a->tv_nsec += b->tv_nsec;
	if (a->tv_nsec >= 1000000000L) {
		a->tv_sec++;
		a->tv_nsec -= 1000000000L;
	}
}

/* Time left until @deadline, at least 0; false once it has passed. */
static bool sdp_left(const struct timespec *deadline, struct timespec *left)
{
	struct timespec now;

	sdp_now(&now);
	left->tv_sec = deadline->tv_sec - now.tv_sec;
	left->tv_nsec = deadline->tv_nsec - now.tv_nsec;
	if (left->tv_nsec < 0) {
		left->tv_sec--;
		left->tv_nsec += 1000000000L;
	}
	if (left->tv_sec < 0) {
		left->tv_sec = 0;
		left->tv_nsec = 0;
		return false;
	}
	return true;
}

static void sdp_ms_to_ts(int ms, struct timespec *ts)
{
	ts->tv_sec = ms / 1000;
	ts->tv_nsec = (ms % 1000) * 1000000L;
}

static int sdp_ts_to_ms(const struct timespec *ts)
{
	long long ms = ts->tv_sec * 1000LL + (ts->tv_nsec + 999999) / 1000000;

	return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

/* The "both" sockets among @fds: listeners' twins appended to @ext (the
 * entry they stand for in @map); returns how many.  Under the lock.
 */
static nfds_t sdp_poll_twins(const struct pollfd *fds, nfds_t n,
			     struct pollfd *ext, nfds_t *map)
{
	nfds_t i, nx = 0;

	for (i = 0; i < n; i++) {
		struct sdp_sock *s;

		if (!(fds[i].events & (POLLIN | POLLRDNORM)) ||
		    !sdp_fd_tracked(fds[i].fd))
			continue;
		s = sdp_sock_get(fds[i].fd);
		if (!s || s->state != SDP_SOCK_BOTH_LISTEN || s->twin < 0)
			continue;
		if (ext) {
			ext[n + nx].fd = s->twin;
			ext[n + nx].events = POLLIN;
			ext[n + nx].revents = 0;
			map[nx] = i;
		}
		nx++;
	}
	return nx;
}

/* Drop the events of "both" connects that went over to TCP.  Returns the
 * entries still with events.
 */
static int sdp_poll_connects(struct pollfd *fds, nfds_t n)
{
	nfds_t i;
	int count = 0;

	sdp_lock();
	for (i = 0; i < n; i++) {
		struct sdp_sock *s;

		if (fds[i].revents && sdp_fd_tracked(fds[i].fd)) {
			s = sdp_sock_get(fds[i].fd);
			if (s && s->state == SDP_SOCK_BOTH_CONNECT &&
			    sdp_connect_check(fds[i].fd, s) ==
			    SDP_CHECK_FELL_BACK)
				fds[i].revents = 0;
		}
		count += !!fds[i].revents;
	}
	sdp_unlock();
	return count;
}

static int sdp_poll_core(struct pollfd *fds, nfds_t n,
			 const struct timespec *tmo, const sigset_t *mask)
{
	struct pollfd stack_ext[SDP_STACK_FDS], *ext;
	nfds_t stack_map[SDP_STACK_FDS], *map;
	struct timespec deadline, left;
	nfds_t nx, i;
	int ret, count;

	if (tmo) {
		sdp_now(&deadline);
		sdp_ts_add(&deadline, tmo);
	}
	for (;;) {
		sdp_lock();
		nx = sdp_poll_twins(fds, n, NULL, NULL);
		ext = stack_ext;
		map = stack_map;
		if (n + nx > SDP_STACK_FDS) {
			ext = malloc((n + nx) * sizeof(*ext));
			map = malloc((nx + 1) * sizeof(*map));
			if (!ext || !map) {
				sdp_unlock();
				free(ext);
				free(map);
				errno = ENOMEM;
				return -1;
			}
		}
		memcpy(ext, fds, n * sizeof(*fds));
		nx = sdp_poll_twins(fds, n, ext, map);
		sdp_unlock();

		if (tmo)
			sdp_left(&deadline, &left);
		ret = sdp_real.ppoll(ext, n + nx, tmo ? &left : NULL, mask);
		if (ret >= 0) {
			for (i = 0; i < n; i++)
				fds[i].revents = ext[i].revents;
			for (i = 0; i < nx; i++)
				if (ext[n + i].revents & POLLIN)
					fds[map[i]].revents |= fds[map[i]].events &
						(POLLIN | POLLRDNORM);
		}
		if (ext != stack_ext) {
			free(ext);
			free(map);
		}
		if (ret <= 0)
			return ret;
		count = sdp_poll_connects(fds, n);
		if (count)
			return count;
		/* only a connect that went over to TCP: wait on */
		if (tmo && !sdp_left(&deadline, &left))
			return 0;
	}
}

SDP_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts;

	sdp_init();
	if (!sdp_nspecial())
		return sdp_real.poll(fds, n, timeout);
	if (timeout >= 0)
		sdp_ms_to_ts(timeout, &ts);
	return sdp_poll_core(fds, n, timeout >= 0 ? &ts : NULL, NULL);
}

SDP_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
			  size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();	/* as the C library's own check */
	return poll(fds, n, timeout);
}

SDP_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		     const sigset_t *mask)
{
	sdp_init();
	if (!sdp_nspecial())
		return sdp_real.ppoll(fds, n, tmo, mask);
	return sdp_poll_core(fds, n, tmo, mask);
}

SDP_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
			   const struct timespec *tmo, const sigset_t *mask,
			   size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return ppoll(fds, n, tmo, mask);
}

/* Bits of an fd_set of @nfds descriptors, which may be more than
 * FD_SETSIZE: the kernel takes any size, and programs with many
 * descriptors allocate larger sets; FD_ISSET() and FD_ZERO() stop at
 * FD_SETSIZE (or abort, fortified).
 */
#define SDP_FDBITS	(8 * (int)sizeof(__fd_mask))

static bool sdp_fds_isset(const fd_set *s, int fd)
{
	return s && (((const __fd_mask *)s)[fd / SDP_FDBITS] >>
		     (fd % SDP_FDBITS)) & 1;
}

static void sdp_fds_set(fd_set *s, int fd)
{
	((__fd_mask *)s)[fd / SDP_FDBITS] |= (__fd_mask)1 << (fd % SDP_FDBITS);
}

static void sdp_fds_zero(fd_set *s, int nfds)
{
	if (s)
		memset(s, 0, (nfds + SDP_FDBITS - 1) / SDP_FDBITS *
			     sizeof(__fd_mask));
}

/* select() and pselect() by way of sdp_poll_core(), as the kernel does
 * them: readable is POLLIN, POLLHUP or POLLERR; writable POLLOUT or
 * POLLERR; exceptional POLLPRI.
 */
static int sdp_select_core(int nfds, fd_set *r, fd_set *w, fd_set *e,
			   const struct timespec *tmo, const sigset_t *mask)
{
	struct pollfd stack_p[SDP_STACK_FDS], *p = stack_p;
	int fd, n = 0, i, ret, count = 0;

	for (fd = 0; fd < nfds; fd++)
		n += sdp_fds_isset(r, fd) || sdp_fds_isset(w, fd) ||
		     sdp_fds_isset(e, fd);
	if (n > SDP_STACK_FDS) {
		p = malloc(n * sizeof(*p));
		if (!p) {
			errno = ENOMEM;
			return -1;
		}
	}
	/* the sets may change meanwhile (another thread): never more than
	 * the n counted
	 */
	for (fd = 0, i = 0; fd < nfds && i < n; fd++) {
		short ev = (sdp_fds_isset(r, fd) ? POLLIN : 0) |
			   (sdp_fds_isset(w, fd) ? POLLOUT : 0) |
			   (sdp_fds_isset(e, fd) ? POLLPRI : 0);

		if (ev)
			p[i++] = (struct pollfd){ .fd = fd, .events = ev };
	}
	n = i;
	ret = sdp_poll_core(p, n, tmo, mask);
	if (ret < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (p[i].revents & POLLNVAL) {
			errno = EBADF;
			ret = -1;
			goto out;
		}
	}
	sdp_fds_zero(r, nfds);
	sdp_fds_zero(w, nfds);
	sdp_fds_zero(e, nfds);
	for (i = 0; i < n; i++) {
		short ev = p[i].events, rev = p[i].revents;

		if ((ev & POLLIN) && (rev & (POLLIN | POLLHUP | POLLERR))) {
			sdp_fds_set(r, p[i].fd);
			count++;
		}
		if ((ev & POLLOUT) && (rev & (POLLOUT | POLLERR))) {
			sdp_fds_set(w, p[i].fd);
			count++;
		}
		if ((ev & POLLPRI) && (rev & POLLPRI)) {
			sdp_fds_set(e, p[i].fd);
			count++;
		}
	}
	ret = count;
out:
	if (p != stack_p)
		free(p);
	return ret;
}

SDP_EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *e,
		      struct timeval *tv)
{
	struct timespec ts, deadline, left;
	int ret;

	sdp_init();
	if (!sdp_nspecial() || nfds <= 0)
		return sdp_real.select(nfds, r, w, e, tv);
	if (tv) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0 ||
		    tv->tv_usec >= 1000000) {
			errno = EINVAL;
			return -1;
		}
		ts.tv_sec = tv->tv_sec;
		ts.tv_nsec = tv->tv_usec * 1000L;
		sdp_now(&deadline);
		sdp_ts_add(&deadline, &ts);
	}
	ret = sdp_select_core(nfds, r, w, e, tv ? &ts : NULL, NULL);
	if (tv) {	/* Linux's select() says how much time is left */
		sdp_left(&deadline, &left);
		tv->tv_sec = left.tv_sec;
		tv->tv_usec = left.tv_nsec / 1000;
	}
	return ret;
}

SDP_EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e,
		       const struct timespec *tmo, const sigset_t *mask)
{
	sdp_init();
	if (!sdp_nspecial() || nfds <= 0)
		return sdp_real.pselect(nfds, r, w, e, tmo, mask);
	return sdp_select_core(nfds, r, w, e, tmo, mask);
}

/* Would the program's own data look like libsdp's marks? */
static bool sdp_epoll_data_marked(int op, const struct epoll_event *ev)
{
	return (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) && ev &&
	       (ev->data.u64 & SDP_MARK_MASK) == SDP_MARK;
}

/* Under the lock: track @fd, which is not a socket libsdp follows, for
 * the one reason that its epoll data looks like a mark: it gets a mark
 * of its own, and epoll_wait() gives the data back exactly.  It stays
 * what it is (SDP_SOCK_TCP: no rule applies) and is forgotten at close.
 */
static struct sdp_sock *sdp_epoll_escape(int fd)
{
	struct sdp_sock *s = sdp_sock_track(fd, AF_UNSPEC);

	if (s)
		sdp_sock_set_state(s, SDP_SOCK_TCP);
	return s;
}

/* Under the lock: record @fd's registration in @epfd and make it (@op:
 * an ADD, or a MOD of one made unrecorded while @s was plain, to data
 * that looks like a mark) under a mark of its own.  Returns 0 or -errno.
 */
static int sdp_epoll_record(int epfd, int op, int fd, struct sdp_sock *s,
			    const struct epoll_event *ev)
{
	struct epoll_event mev = { .events = ev->events };
	struct sdp_reg *r = sdp_reg_add(s, epfd, fd, ev->events, ev->data.u64);
	int err;

	if (!r)
		return -ENOMEM;
	mev.data.u64 = SDP_MARK | r->id;
	if (!sdp_real.epoll_ctl(epfd, op, fd, &mev))
		return 0;
	err = errno;
	sdp_reg_del(s, r);
	return -err;
}

SDP_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct epoll_event mev;
	struct sdp_sock *s;
	struct sdp_reg *r;
	int ret = -1, err = 0;

	sdp_init();
	if (sdp_fd_epoll_direct(fd) && !sdp_epoll_data_marked(op, ev))
		return sdp_real.epoll_ctl(epfd, op, fd, ev);
	sdp_lock();
	s = sdp_sock_get(fd);
	if (!s && sdp_epoll_data_marked(op, ev))
		s = sdp_epoll_escape(fd);
	if (!s || (op != EPOLL_CTL_DEL && !ev)) {
		sdp_unlock();
		return sdp_real.epoll_ctl(epfd, op, fd, ev);
	}
	r = sdp_reg_find(s, epfd, fd);
	switch (op) {
	case EPOLL_CTL_ADD:
		if (r) {
			err = EEXIST;
			break;
		}
		err = -sdp_epoll_record(epfd, op, fd, s, ev);
		if (err)
			break;
		ret = 0;
		if (s->state == SDP_SOCK_BOTH_LISTEN)
			sdp_twin_register(s);
		break;
	case EPOLL_CTL_MOD:
		if (!r && sdp_epoll_data_marked(op, ev)) {
			/* added unrecorded (plain), now with data like a mark */
			err = -sdp_epoll_record(epfd, op, fd, s, ev);
			ret = err ? -1 : 0;
			break;
		}
		if (!r) {
			sdp_unlock();
			return sdp_real.epoll_ctl(epfd, op, fd, ev);
		}
		mev.events = ev->events;
		mev.data.u64 = SDP_MARK | r->id;
		ret = sdp_real.epoll_ctl(epfd, op, fd, &mev);
		if (ret) {
			err = errno;
			break;
		}
		r->events = ev->events;
		r->data = ev->data.u64;
		sdp_mark_get(r->id)->data = r->data;
		if (r->twin_id && s->twin >= 0) {
			sdp_mark_get(r->twin_id)->data = r->data;
			mev.data.u64 = SDP_MARK | r->twin_id;
			sdp_real.epoll_ctl(epfd, op, s->twin, &mev);
		}
		break;
	case EPOLL_CTL_DEL:
		ret = sdp_real.epoll_ctl(epfd, op, fd, ev);
		err = ret ? errno : 0;
		if (r) {
			if (r->twin_id && s->twin >= 0)
				sdp_real.epoll_ctl(epfd, op, s->twin, NULL);
			sdp_reg_del(s, r);
		}
		break;
	default:
		ret = sdp_real.epoll_ctl(epfd, op, fd, ev);
		err = ret ? errno : 0;
		break;
	}
	sdp_unlock();
	if (err) {
		errno = err;
		return -1;
	}
	return ret;
}

/* Put the program's data back in @ev's marked events, as one event per
 * descriptor; drop the events of "both" connects that went over to TCP
 * and stale ones.  Returns the events left.
 */
static int sdp_epoll_unmark(struct epoll_event *ev, int n)
{
	int stack_who[SDP_STACK_FDS], *who = stack_who;
	int i, j, out = 0;

	for (i = 0; i < n; i++)
		if ((ev[i].data.u64 & SDP_MARK_MASK) == SDP_MARK)
			break;
	if (i == n)
		return n;
	if (n > SDP_STACK_FDS) {
		who = malloc(n * sizeof(*who));
		if (!who)
			return n;	/* better marked than lost */
	}
	sdp_lock();
	for (i = 0; i < n; i++) {
		struct epoll_event e = ev[i];
		struct sdp_mark *m;
		struct sdp_sock *s;
		int fd;

		if ((e.data.u64 & SDP_MARK_MASK) != SDP_MARK) {
			who[out] = -1;
			ev[out++] = e;
			continue;
		}
		/* (the program may wait on a dup() of the epoll descriptor
		 * it registered with: m->epfd need not be @epfd)
		 */
		m = sdp_mark_get((uint32_t)e.data.u64);
		if (!m)
			continue;	/* its registration is gone */
		fd = m->fd;
		e.data.u64 = m->data;
		if (!m->twin) {
			s = sdp_sock_get(fd);
			if (s && s->state == SDP_SOCK_BOTH_CONNECT &&
			    sdp_connect_check(fd, s) == SDP_CHECK_FELL_BACK)
				continue;
		}
		for (j = 0; j < out; j++)
			if (who[j] == fd)
				break;
		if (j < out) {	/* a listener and its twin: one event */
			ev[j].events |= e.events;
			continue;
		}
		who[out] = fd;
		ev[out++] = e;
	}
	sdp_unlock();
	if (who != stack_who)
		free(who);
	return out;
}

static int sdp_epoll_core(int epfd, struct epoll_event *ev, int max,
			  const struct timespec *tmo, const sigset_t *mask,
			  bool pwait2)
{
	struct timespec deadline, left;
	int n;

	if (tmo) {
		sdp_now(&deadline);
		sdp_ts_add(&deadline, tmo);
	}
	for (;;) {
		if (tmo)
			sdp_left(&deadline, &left);
		if (pwait2)
			n = sdp_real.epoll_pwait2(epfd, ev, max,
						  tmo ? &left : NULL, mask);
		else
			n = sdp_real.epoll_pwait(epfd, ev, max,
						 tmo ? sdp_ts_to_ms(&left) : -1,
						 mask);
		if (n <= 0)
			return n;
		n = sdp_epoll_unmark(ev, n);
		if (n)
			return n;
		if (tmo && !sdp_left(&deadline, &left))
			return 0;
	}
}

SDP_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max,
			  int timeout)
{
	struct timespec ts;

	sdp_init();
	if (!sdp_nmarks())
		return sdp_real.epoll_wait(epfd, ev, max, timeout);
	if (timeout >= 0)
		sdp_ms_to_ts(timeout, &ts);
	return sdp_epoll_core(epfd, ev, max, timeout >= 0 ? &ts : NULL, NULL,
			      false);
}

SDP_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max,
			   int timeout, const sigset_t *mask)
{
	struct timespec ts;

	sdp_init();
	if (!sdp_nmarks())
		return sdp_real.epoll_pwait(epfd, ev, max, timeout, mask);
	if (timeout >= 0)
		sdp_ms_to_ts(timeout, &ts);
	return sdp_epoll_core(epfd, ev, max, timeout >= 0 ? &ts : NULL, mask,
			      false);
}

SDP_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			    const struct timespec *tmo, const sigset_t *mask)
{
	sdp_init();
	if (!sdp_real.epoll_pwait2) {
		errno = ENOSYS;
		return -1;
	}
	if (!sdp_nmarks())
		return sdp_real.epoll_pwait2(epfd, ev, max, tmo, mask);
	return sdp_epoll_core(epfd, ev, max, tmo, mask, true);
}
