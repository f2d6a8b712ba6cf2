// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: the interposed socket calls.
 *
 * socket() makes the TCP socket the program asked for and tracks it: which
 * transport it gets depends on the address, known only later.
 *
 *   bind()     the server rules for the address: "sdp" swaps an SDP socket
 *              in and binds it; "both" binds the TCP socket and an SDP twin
 *              on the same port; "tcp" binds as asked.
 *   listen()   listens on what bind() prepared (a socket never bound is
 *              looked up as the wildcard address, port 0).
 *   connect()  the client rules for the peer: "sdp" connects over SDP or
 *              fails; "both" tries SDP and, on an error that says the peer
 *              has no SDP, carries on over TCP, also when a non-blocking
 *              connect fails later (see wait.c).
 *   accept()   on a "both" listener, a connection from either socket;
 *              both are non-blocking underneath, the program's own
 *              O_NONBLOCK is kept by fcntl() and ioctl(FIONBIO).
 *   close(), dup*(), fcntl(F_DUPFD*)  keep the descriptor table true.
 *   setsockopt() records options for a later swap; getsockopt() answers
 *              as for TCP where the SDP socket would say otherwise.
 *
 * A rule "sdp" whose SDP socket cannot be made (no ib_sdp) fails the call
 * with socket()'s errno (EAFNOSUPPORT).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "async.h"
#include "log.h"
#include "real.h"
#include "state.h"
#include "swap.h"
#include "why.h"

#define SDP_EXPORT __attribute__((visibility("default")))

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif

static bool sdp_is_tcp(int domain, int type, int protocol)
{
	return (domain == AF_INET || domain == AF_INET6) &&
	       (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) == SOCK_STREAM &&
	       (protocol == 0 || protocol == IPPROTO_TCP);
}

static int sdp_fail(int err)
{
	errno = err;
	return -1;
}

/* How long getsockopt(SO_ERROR) looks for the outcome of a TCP connect
 * libsdp has just fallen back to: a handshake on a LAN, not its timeout.
 */
#define SDP_FALLBACK_PEEK_MS	1000

/* poll() one descriptor for up to @ms, through signals. */
static void sdp_poll_for(struct pollfd *p, int ms)
{
	struct timespec end, now;
	long left = ms;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	while (sdp_real.poll(p, 1, left) < 0 && errno == EINTR) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (end.tv_sec - now.tv_sec) * 1000L +
		       (end.tv_nsec - now.tv_nsec) / 1000000L;
		if (left <= 0)
			break;
	}
}

SDP_EXPORT int socket(int domain, int type, int protocol)
{
	int fd;

	sdp_init();
	fd = sdp_real.socket(domain, type, protocol);
	if (fd < 0)
		return fd;
	/* a number libsdp still knows was closed behind its back (a
	 * syscall, an fclose() libsdp missed): not that socket any more
	 */
	if (sdp_fd_tracked(fd)) {
		sdp_lock();
		sdp_fd_detach(fd);
		sdp_unlock();
	}
	if (!sdp_settings.any_sdp || !sdp_is_tcp(domain, type, protocol))
		return fd;
	sdp_lock();
	if (!sdp_sock_track(fd, domain))
		sdp_log(SDP_LOG_ERR, "out of memory: descriptor %d stays TCP",
			fd);
	sdp_unlock();
	return fd;
}

/* The wildcard address of @domain, port @port (network order). */
static socklen_t sdp_any(int domain, struct sockaddr_storage *ss,
			 in_port_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (domain == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		return sizeof(*sin6);
	}
	((struct sockaddr_in *)ss)->sin_family = AF_INET;
	((struct sockaddr_in *)ss)->sin_port = port;
	return sizeof(struct sockaddr_in);
}

/* May the program bind a TCP socket to @addr?  The kernel runs the
 * security hooks of bind() on the socket it is given, and an SDP
 * socket's are not a TCP socket's: a sandbox that rules TCP binds
 * (Landlock's LANDLOCK_ACCESS_NET_BIND_TCP, SELinux's name_bind) would
 * not see an "sdp" rule's bind.  So a TCP socket of the same family is
 * bound there first, for a moment, and what the hooks say (EACCES,
 * EPERM) is bind()'s answer; any other error (the port TCP's already)
 * says nothing about SDP's own port space.  Return: 0 or an errno.
 */
static int sdp_bind_allowed(int domain, const struct sockaddr *addr,
			    socklen_t len)
{
	int one = 1, fd, err = 0;

	fd = sdp_real.socket(domain, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? errno : 0;
	sdp_real.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sdp_real.bind(fd, addr, len) && (errno == EACCES || errno == EPERM))
		err = errno;
	sdp_real.close(fd);
	return err;
}

SDP_EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct sdp_sock *s;
	enum sdp_use use;
	bool async;
	int ret, err;

	sdp_init();
	if (!sdp_fd_tracked(fd))
		return sdp_real.bind(fd, addr, len);
	sdp_lock();
	s = sdp_sock_get(fd);
	if (!s || s->state != SDP_SOCK_UNDECIDED || s->bound ||
	    len > sizeof(s->bind_addr)) {
		sdp_unlock();
		return sdp_real.bind(fd, addr, len);
	}
	use = sdp_decide(SDP_ROLE_SERVER, addr, len, &async, &s->rule_line);
	if (use == SDP_USE_SDP) {
		err = sdp_bind_allowed(s->domain, addr, len);
		if (err) {
			sdp_unlock();
			return sdp_fail(err);
		}
		err = sdp_swap(fd, s, true);
		if (err) {
			sdp_log(SDP_LOG_WARN, "bind: no SDP socket: %s",
				strerror(-err));
			sdp_unlock();
			return sdp_fail(-err);
		}
		sdp_sock_set_state(s, SDP_SOCK_SDP);
		sdp_why_note(fd, SDP_WHY_RULE_SDP, 0, s->rule_line,
			     SDP_WHY_ROLE_SERVER);
		if (async)
			sdp_az_bind(fd);
	}
	ret = sdp_real.bind(fd, addr, len);
	if (!ret) {
		s->bound = true;
		s->bind_len = len;
		memcpy(&s->bind_addr, addr, len);
		if (use == SDP_USE_BOTH)
			sdp_twin_open(fd, s);
	}
	sdp_unlock();
	return ret;
}

/* Under the lock: listen on @s's twin too, or give it up. */
static void sdp_listen_twin(int fd, struct sdp_sock *s, int backlog)
{
	int fl, err = 0;

	if (s->twin < 0)
		err = s->twin_err;	/* 0: the rule said tcp */
	if (s->twin >= 0 && sdp_real.listen(s->twin, backlog)) {
		err = errno;
		sdp_log(SDP_LOG_INFO, "listen: TCP only, the SDP twin cannot listen: %m");
		sdp_sock_close_twin(s);
	}
	if (s->twin < 0) {
		sdp_sock_set_state(s, SDP_SOCK_TCP);
		sdp_why_note(fd, err ? SDP_WHY_TWIN_FAILED :
			     s->rule_line ? SDP_WHY_RULE_TCP : SDP_WHY_NO_RULE,
			     err, s->rule_line, SDP_WHY_ROLE_SERVER);
		return;
	}
	sdp_sock_set_state(s, SDP_SOCK_BOTH_LISTEN);
	sdp_why_note(fd, SDP_WHY_BOTH_LISTEN, 0, s->rule_line,
		     SDP_WHY_ROLE_SERVER);
	sdp_why_note(s->twin, SDP_WHY_BOTH_LISTEN, 0, s->rule_line,
		     SDP_WHY_ROLE_SERVER);
	/* accept() must never block on one of the two while the other has
	 * a connection (another process or thread may take the one poll()
	 * saw): the listener is non-blocking from now on, and libsdp keeps
	 * the program's own O_NONBLOCK (fcntl(), FIONBIO) in nb_user
	 */
	fl = sdp_real.fcntl(fd, F_GETFL);
	s->nb_user = fl >= 0 && (fl & O_NONBLOCK);
	if (fl >= 0 && !(fl & O_NONBLOCK))
		sdp_real.fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	sdp_twin_register(s);
	sdp_log(SDP_LOG_DEBUG, "descriptor %d listens on TCP and SDP", fd);
}

SDP_EXPORT int listen(int fd, int backlog)
{
	struct sockaddr_storage any;
	struct sdp_sock *s;
	enum sdp_use use;
	bool async;
	int ret, err;

	sdp_init();
	if (!sdp_fd_tracked(fd))
		return sdp_real.listen(fd, backlog);
	sdp_lock();
	s = sdp_sock_get(fd);
	if (!s) {
		sdp_unlock();
		return sdp_real.listen(fd, backlog);
	}
	switch (s->state) {
	case SDP_SOCK_UNDECIDED:
		if (s->bound) {
			ret = sdp_real.listen(fd, backlog);
			if (!ret)
				sdp_listen_twin(fd, s, backlog);
			break;
		}
		use = sdp_decide(SDP_ROLE_SERVER, (struct sockaddr *)&any,
				 sdp_any(s->domain, &any, 0), &async,
				 &s->rule_line);
		if (use == SDP_USE_SDP) {
			err = sdp_swap(fd, s, true);
			if (err) {
				sdp_unlock();
				return sdp_fail(-err);
			}
			sdp_sock_set_state(s, SDP_SOCK_SDP);
			sdp_why_note(fd, SDP_WHY_RULE_SDP, 0, s->rule_line,
				     SDP_WHY_ROLE_SERVER);
			if (async)
				sdp_az_bind(fd);
			ret = sdp_real.listen(fd, backlog);
			break;
		}
		ret = sdp_real.listen(fd, backlog);
		if (ret || use == SDP_USE_TCP) {
			if (!ret) {
				sdp_sock_set_state(s, SDP_SOCK_TCP);
				sdp_why_note(fd, s->rule_line ? SDP_WHY_RULE_TCP :
					     SDP_WHY_NO_RULE, 0, s->rule_line,
					     SDP_WHY_ROLE_SERVER);
			}
			break;
		}
		sdp_twin_open(fd, s);
		sdp_listen_twin(fd, s, backlog);
		break;
	case SDP_SOCK_BOTH_LISTEN:
		ret = sdp_real.listen(fd, backlog);
		if (!ret)
			sdp_real.listen(s->twin, backlog);
		break;
	default:
		ret = sdp_real.listen(fd, backlog);
		break;
	}
	sdp_unlock();
	return ret;
}

/* The SDP connect of a "both" socket (state BOTH_CONNECT, unlocked):
 * its outcome, or TCP's if the peer has no SDP.
 */
static int sdp_connect_both(int fd, const struct sockaddr *addr,
			    socklen_t len)
{
	struct sdp_sock *s;
	int ret, err, sdp_err;

	ret = sdp_real.connect(fd, addr, len);
	err = ret ? errno : 0;
	if (err == EINPROGRESS || err == EINTR || err == EALREADY)
		return ret;	/* poll(), epoll or connect() again tell */
	sdp_lock();
	s = sdp_sock_get(fd);
	if (!s || s->state != SDP_SOCK_BOTH_CONNECT) {
		/* another thread looked at it meanwhile */
		sdp_unlock();
		return ret ? sdp_fail(err) : 0;
	}
	if (!err || !sdp_fallback_errno(err)) {
		sdp_sock_set_state(s, SDP_SOCK_SDP);
		if (!err)
			sdp_why_note(fd, SDP_WHY_BOTH_SDP, 0, s->rule_line,
				     SDP_WHY_ROLE_CLIENT);
		sdp_unlock();
		return ret ? sdp_fail(err) : 0;
	}
	sdp_log(SDP_LOG_DEBUG, "descriptor %d: SDP connect failed (%s)", fd,
		strerror(err));
	sdp_err = err;
	err = sdp_swap(fd, s, false);
	if (!err)
		err = sdp_rebind(fd, s);
	sdp_sock_set_state(s, SDP_SOCK_TCP);
	if (!err)
		sdp_why_note(fd, sdp_why_fallback(sdp_err), sdp_err,
			     s->rule_line, SDP_WHY_ROLE_CLIENT);
	sdp_unlock();
	if (err)
		return sdp_fail(-err);
	sdp_log(SDP_LOG_INFO, "descriptor %d: no SDP connection, TCP instead",
		fd);
	return sdp_real.connect(fd, addr, len);
}

/* connect() again on a socket whose "both" connect is under way. */
static int sdp_connect_again(int fd, struct sdp_sock *s,
			     const struct sockaddr *addr, socklen_t len)
{
	enum sdp_check c = sdp_connect_check(fd, s);
	int ret, err = s->pending_err;

	if (c == SDP_CHECK_DONE && err) {
		s->pending_err = 0;
		sdp_unlock();
		return sdp_fail(err);
	}
	sdp_unlock();
	if (c == SDP_CHECK_PENDING)	/* SDP still: wait or tell again */
		return sdp_connect_both(fd, addr, len);
	ret = sdp_real.connect(fd, addr, len);
	/* the program's second call: the TCP connect started for it is
	 * one already under way
	 */
	if (ret && errno == EINPROGRESS && c == SDP_CHECK_FELL_BACK)
		errno = EALREADY;
	return ret;
}

SDP_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct sdp_sock *s;
	enum sdp_use use;
	bool async;
	int err;

	sdp_init();
	if (!sdp_fd_tracked(fd))
		return sdp_real.connect(fd, addr, len);
	sdp_lock();
	s = sdp_sock_get(fd);
	if (s && s->state == SDP_SOCK_BOTH_CONNECT)
		return sdp_connect_again(fd, s, addr, len);
	if (!s || s->state != SDP_SOCK_UNDECIDED || !addr ||
	    len > sizeof(s->peer) ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) {
		sdp_unlock();
		return sdp_real.connect(fd, addr, len);
	}
	use = sdp_decide(SDP_ROLE_CLIENT, addr, len, &async, &s->rule_line);
	sdp_sock_close_twin(s);	/* a server rule's, for a bind */
	if (use == SDP_USE_TCP) {
		sdp_sock_set_state(s, SDP_SOCK_TCP);
		sdp_why_note(fd, s->rule_line ? SDP_WHY_RULE_TCP :
			     SDP_WHY_NO_RULE, 0, s->rule_line,
			     SDP_WHY_ROLE_CLIENT);
		sdp_unlock();
		return sdp_real.connect(fd, addr, len);
	}
	err = sdp_swap(fd, s, true);
	if (!err) {
		err = sdp_rebind(fd, s);
		if (err && use == SDP_USE_BOTH) {
			/* back to a TCP socket bound as the program asked */
			int e2 = sdp_swap(fd, s, false);

			if (!e2)
				e2 = sdp_rebind(fd, s);
			if (e2) {
				sdp_unlock();
				return sdp_fail(-e2);
			}
		}
	}
	if (err) {
		if (use == SDP_USE_SDP) {
			sdp_log(SDP_LOG_WARN, "connect: no SDP socket: %s",
				strerror(-err));
			sdp_unlock();
			return sdp_fail(-err);
		}
		sdp_log(SDP_LOG_INFO, "connect: no SDP socket (%s), TCP instead",
			strerror(-err));
		sdp_sock_set_state(s, SDP_SOCK_TCP);
		sdp_why_note(fd, SDP_WHY_NO_SOCKET, -err, s->rule_line,
			     SDP_WHY_ROLE_CLIENT);
		sdp_unlock();
		return sdp_real.connect(fd, addr, len);
	}
	if (async)
		sdp_az_bind(fd);	/* TCP after all: harmless */
	if (use == SDP_USE_SDP) {
		sdp_sock_set_state(s, SDP_SOCK_SDP);
		sdp_why_note(fd, SDP_WHY_RULE_SDP, 0, s->rule_line,
			     SDP_WHY_ROLE_CLIENT);
		sdp_unlock();
		return sdp_real.connect(fd, addr, len);
	}
	memcpy(&s->peer, addr, len);
	s->peer_len = len;
	sdp_sock_set_state(s, SDP_SOCK_BOTH_CONNECT);
	sdp_unlock();

	return sdp_connect_both(fd, addr, len);
}

/* SO_RCVTIMEO of @fd in ms, -1 for none. */
static int sdp_rcvtimeo_ms(int fd)
{
	struct timeval tv = { 0, 0 };
	socklen_t len = sizeof(tv);

	if (sdp_real.getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) ||
	    (!tv.tv_sec && !tv.tv_usec))
		return -1;
	return tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000;
}

/* After EINTR: would the kernel have restarted the call?  Only if every
 * signal with a handler has SA_RESTART (which one came is not known).
 */
static bool sdp_restartable(void)
{
	struct sigaction sa;
	int sig;

	for (sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &sa))
			continue;
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN &&
		    !(sa.sa_flags & SA_RESTART))
			return false;
	}
	return true;
}

static long long sdp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* accept() on a "both" listener: from whichever has a connection, as
 * TCP's accept() waits: not at all when the program made it non-blocking,
 * up to SO_RCVTIMEO (then EAGAIN), restarted after a signal only without
 * a timeout and if the handlers say SA_RESTART.  Both sockets are
 * non-blocking: one a poll() saw ready may have been taken meanwhile.
 */
static int sdp_accept_both(int fd, int twin, bool nonblock,
			   struct sockaddr *addr, socklen_t *len, int flags,
			   unsigned int line)
{
	int timeout = nonblock ? 0 : sdp_rcvtimeo_ms(fd);
	long long deadline = sdp_now_ms() + (timeout > 0 ? timeout : 0);
	struct pollfd p[2];
	int n, ret, wait, i;

	for (;;) {
		for (i = 0; i < 2; i++) {
			ret = sdp_real.accept4(i ? fd : twin, addr, len, flags);
			if (ret >= 0)
				sdp_why_note(ret, i ? SDP_WHY_ACCEPT_TCP :
					     SDP_WHY_ACCEPT_SDP, 0, line,
					     SDP_WHY_ROLE_ACCEPTED);
			if (ret >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
				return ret;
		}
		if (nonblock)
			return sdp_fail(EAGAIN);
		wait = -1;
		if (timeout > 0) {
			long long left = deadline - sdp_now_ms();

			if (left <= 0)
				return sdp_fail(EAGAIN);	/* SO_RCVTIMEO */
			wait = left;
		}
		p[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = twin, .events = POLLIN };
		n = sdp_real.poll(p, 2, wait);
		if (n < 0 && errno == EINTR &&
		    (timeout > 0 || !sdp_restartable()))
			return -1;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

static int sdp_accept(int fd, struct sockaddr *addr, socklen_t *len,
		      int flags)
{
	struct sdp_sock *s;
	bool nonblock = false;
	unsigned int line = 0;
	int twin = -1;

	if (sdp_fd_tracked(fd)) {
		sdp_lock();
		s = sdp_sock_get(fd);
		if (s && s->state == SDP_SOCK_BOTH_LISTEN && s->twin >= 0) {
			/* a copy of our own: another thread may close the
			 * listener, its twin with it, and the number be
			 * reused, while this one waits
			 */
			twin = sdp_real.fcntl(s->twin, F_DUPFD_CLOEXEC, 0);
			nonblock = s->nb_user;
			line = s->rule_line;
		}
		sdp_unlock();
	}
	if (twin >= 0) {
		int ret = sdp_accept_both(fd, twin, nonblock, addr, len, flags,
					  line);
		int err = errno;

		sdp_real.close(twin);
		errno = err;
		return sdp_az_accepted(ret);
	}
	return sdp_az_accepted(sdp_real.accept4(fd, addr, len, flags));
}

SDP_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	sdp_init();
	if (!sdp_fd_tracked(fd))
		return sdp_real.accept(fd, addr, len);
	return sdp_accept(fd, addr, len, 0);
}

SDP_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len,
		       int flags)
{
	sdp_init();
	return sdp_accept(fd, addr, len, flags);
}

/* Does @fd concern libsdp's state, in the process it is for? */
static bool sdp_fd_noted(int fd)
{
	return (sdp_fd_tracked(fd) || sdp_fd_is_epfd(fd) ||
		sdp_fd_is_twin(fd)) && sdp_state_ours();
}

/* Before @fd is closed or replaced. */
static void sdp_forget(int fd)
{
	if (!sdp_fd_noted(fd))
		return;
	sdp_lock();
	sdp_fd_detach(fd);
	if (sdp_fd_is_epfd(fd))
		sdp_epfd_closed(fd);
	sdp_unlock();
}

/* Under the lock: @fd is about to be taken by dup2()/dup3().  If it is a
 * twin, move the twin (and its epoll registrations) to another number:
 * the program is free to use a number it never had.
 */
static int sdp_twin_evict(int fd)
{
	struct sdp_sock *s = sdp_twin_owner(fd);
	int nfd;

	if (!s)
		return 0;
	nfd = sdp_real.fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
	if (nfd < 0)
		return -errno;
	sdp_twin_moved(s, nfd);
	sdp_real.close(fd);
	return 0;
}

/* close() of a twin's number: not open, as far as the program knows */
static bool sdp_close_twin_number(int fd)
{
	bool twin;

	if (!sdp_fd_is_twin(fd) || !sdp_state_ours())
		return false;
	sdp_lock();
	twin = sdp_twin_owner(fd);
	sdp_unlock();
	return twin;
}

SDP_EXPORT int close(int fd)
{
	sdp_init();
	if (sdp_close_twin_number(fd) || sdp_az_fd(fd))
		return sdp_fail(EBADF);
	sdp_forget(fd);
	return sdp_real.close(fd);
}

/* Before dup2()/dup3() take @nfd: forget it, and move a twin away. */
static int sdp_dup_target(int nfd)
{
	int err;

	if (sdp_az_fd(nfd))
		return sdp_az_evict(nfd);
	if (!sdp_fd_noted(nfd))
		return 0;
	sdp_lock();
	err = sdp_twin_evict(nfd);
	sdp_unlock();
	if (err)
		return err;
	sdp_forget(nfd);
	return 0;
}

/* Closes the C library does itself, which close() never sees. */
SDP_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	sdp_init();
	if (!sdp_real.close_range)
		return sdp_fail(ENOSYS);
	if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last &&
	    sdp_state_ours()) {
		sdp_lock();
		sdp_fds_closing(first, last);
		sdp_unlock();
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		return sdp_az_close_range(first, last, flags);
	return sdp_real.close_range(first, last, flags);
}

SDP_EXPORT void closefrom(int lowfd)
{
	sdp_init();
	if (lowfd >= 0 && sdp_state_ours()) {
		sdp_lock();
		sdp_fds_closing(lowfd, ~0U);
		sdp_unlock();
	}
	if (lowfd >= 0 && sdp_real.close_range &&
	    !sdp_az_close_range(lowfd, ~0U, 0))
		return;
	if (sdp_real.closefrom)
		sdp_real.closefrom(lowfd);
}

/* fclose() of a stream on a socket (fdopen()) closes the socket inside
 * the C library.  Not through sdp_init(): libsdp's own initialisation
 * reads files with stdio.
 */
SDP_EXPORT int fclose(FILE *f)
{
	static int (*real_fclose)(FILE *);

	if (!real_fclose)
		real_fclose = dlsym(RTLD_NEXT, "fclose");
	if (f)
		sdp_forget(fileno(f));
	return real_fclose(f);
}

/* @nfd is a new copy of @fd. */
static void sdp_copied(int fd, int nfd)
{
	struct sdp_sock *s;

	if (nfd < 0 || nfd == fd || !sdp_fd_noted(fd))
		return;
	sdp_lock();
	s = sdp_sock_get(fd);
	if (s)
		sdp_fd_attach(nfd, s);
	sdp_unlock();
}

SDP_EXPORT int dup(int fd)
{
	int nfd;

	sdp_init();
	nfd = sdp_real.dup(fd);
	sdp_copied(fd, nfd);
	return nfd;
}

SDP_EXPORT int dup2(int fd, int nfd)
{
	int ret;

	sdp_init();
	if (fd == nfd || sdp_real.fcntl(fd, F_GETFD) < 0)
		return sdp_real.dup2(fd, nfd);
	ret = sdp_dup_target(nfd);
	if (ret)
		return sdp_fail(-ret);
	ret = sdp_real.dup2(fd, nfd);
	sdp_copied(fd, ret);
	return ret;
}

SDP_EXPORT int dup3(int fd, int nfd, int flags)
{
	int ret;

	sdp_init();
	if (fd == nfd || sdp_real.fcntl(fd, F_GETFD) < 0)
		return sdp_real.dup3(fd, nfd, flags);
	ret = sdp_dup_target(nfd);
	if (ret)
		return sdp_fail(-ret);
	ret = sdp_real.dup3(fd, nfd, flags);
	sdp_copied(fd, ret);
	return ret;
}

/* fcntl(): copies, and a "both" listener's twin follows its flags and
 * owner (O_ASYNC, F_SETOWN: SIGIO for SDP connections too).
 */
static int sdp_fcntl(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	struct sdp_sock *s;
	int ret;

	if ((cmd == F_GETFL || cmd == F_SETFL) && sdp_fd_tracked(fd)) {
		sdp_lock();
		s = sdp_sock_get(fd);
		if (s && s->state == SDP_SOCK_BOTH_LISTEN) {
			/* the listener stays non-blocking (sdp_listen_twin()) */
			if (cmd == F_GETFL) {
				ret = real(fd, cmd);
				if (ret >= 0)
					ret = (ret & ~O_NONBLOCK) |
					      (s->nb_user ? O_NONBLOCK : 0);
			} else {
				ret = real(fd, cmd, (long)arg | O_NONBLOCK);
				if (!ret) {
					s->nb_user = (long)arg & O_NONBLOCK;
					real(s->twin, cmd, (long)arg | O_NONBLOCK);
				}
			}
			sdp_unlock();
			return ret;
		}
		sdp_unlock();
	}
	ret = real(fd, cmd, arg);
	if (ret < 0 || !sdp_fd_tracked(fd))
		return ret;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		sdp_copied(fd, ret);
		break;
	case F_SETFL:
	case F_SETOWN:
	case F_SETOWN_EX:
	case F_SETSIG:
		/* a twin bound, not yet listening */
		sdp_lock();
		s = sdp_sock_get(fd);
		if (s && s->twin >= 0)
			real(s->twin, cmd, cmd == F_SETFL ?
			     (void *)((long)arg | O_NONBLOCK) : arg);
		sdp_unlock();
		break;
	}
	return ret;
}

SDP_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	sdp_init();
	return sdp_fcntl(sdp_real.fcntl, fd, cmd, arg);
}

SDP_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	sdp_init();
	return sdp_fcntl(sdp_real.fcntl64, fd, cmd, arg);
}

/* ioctl(FIONBIO) on a "both" listener: the program's O_NONBLOCK (the
 * listener itself stays non-blocking).
 */
SDP_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	struct sdp_sock *s;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	sdp_init();
	if (req == UFFDIO_REGISTER && sdp_az_wanted)
		sdp_az_yield(fd, arg);	/* the program's own userfaultfd */
	if (req == FIONBIO && arg && sdp_fd_tracked(fd)) {
		sdp_lock();
		s = sdp_sock_get(fd);
		if (s && s->state == SDP_SOCK_BOTH_LISTEN) {
			s->nb_user = !!*(int *)arg;
			sdp_unlock();
			return 0;
		}
		sdp_unlock();
	}
	return sdp_real.ioctl(fd, req, arg);
}

SDP_EXPORT int setsockopt(int fd, int level, int name, const void *val,
			  socklen_t len)
{
	struct sdp_sock *s;
	int ret;

	sdp_init();
	ret = sdp_real.setsockopt(fd, level, name, val, len);
	if (ret && errno == EOPNOTSUPP && level == SOL_SOCKET &&
	    name == SO_ZEROCOPY && sdp_fd_is_sdp(fd))
		ret = sdp_setsockopt_sdp(fd, level, name, val, len);
	if (ret || !sdp_fd_tracked(fd))
		return ret;
	sdp_lock();
	s = sdp_sock_get(fd);
	if (s && s->state != SDP_SOCK_SDP && s->state != SDP_SOCK_TCP) {
		/* for a socket put in its place, and for the twin */
		if (sdp_sock_record_opt(s, level, name, val, len))
			sdp_log(SDP_LOG_WARN,
				"option %d/%d not recorded: it will not follow a change of socket",
				level, name);
		if (s->twin >= 0)
			sdp_setsockopt_sdp(s->twin, level, name, val, len);
	}
	sdp_unlock();
	return 0;
}

SDP_EXPORT int getsockopt(int fd, int level, int name, void *val,
			  socklen_t *len)
{
	struct sdp_sock *s;
	int ret, *v = val;

	sdp_init();
	if (level == SOL_SOCKET && name == SO_ERROR && sdp_fd_tracked(fd) &&
	    val && len && *len >= sizeof(int)) {
		sdp_lock();
		s = sdp_sock_get(fd);
		if (s && s->state == SDP_SOCK_BOTH_CONNECT &&
		    sdp_connect_check(fd, s) == SDP_CHECK_FELL_BACK) {
			/* the program asks without waiting (no poll, no
			 * epoll): it gets the TCP connect's outcome if it
			 * comes within SDP_FALLBACK_PEEK_MS, else 0 (in
			 * progress), as TCP's SO_ERROR never waits
			 */
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			sdp_unlock();
			sdp_poll_for(&p, SDP_FALLBACK_PEEK_MS);
			sdp_lock();
			s = sdp_sock_get(fd);	/* closed meanwhile? */
		}
		if (s && s->pending_err) {
			*v = s->pending_err;
			*len = sizeof(int);
			s->pending_err = 0;
			sdp_unlock();
			return 0;
		}
		sdp_unlock();
	}
	ret = sdp_real.getsockopt(fd, level, name, val, len);
	if (ret || level != SOL_SOCKET || !val || !len || *len < sizeof(int))
		return ret;
	/* an SDP socket is a TCP socket to the program */
	if (name == SO_DOMAIN && *v == sdp_settings.af_sdp)
		*v = AF_INET;
	else if (name == SO_DOMAIN && *v == sdp_settings.af_sdp6)
		*v = AF_INET6;
	else if (name == SO_PROTOCOL && *v == 0 && sdp_fd_is_sdp(fd))
		*v = IPPROTO_TCP;
	else if (name == SO_PROTOCOL && sdp_settings.ipproto_sdp &&
		 *v == sdp_settings.ipproto_sdp && sdp_fd_tracked(fd))
		*v = IPPROTO_TCP;	/* libsdp's IPPROTO_SDP socket */
	return ret;
}

/* The SDP families' addresses are AF_INET and AF_INET6 ones. */
static void sdp_fix_family(struct sockaddr *addr, socklen_t *len)
{
	if (!addr || !len || *len < sizeof(sa_family_t))
		return;
	if (addr->sa_family == sdp_settings.af_sdp)
		addr->sa_family = AF_INET;
	else if (addr->sa_family == sdp_settings.af_sdp6)
		addr->sa_family = AF_INET6;
}

SDP_EXPORT int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	int ret;

	sdp_init();
	ret = sdp_real.getsockname(fd, addr, len);
	if (!ret)
		sdp_fix_family(addr, len);
	return ret;
}

SDP_EXPORT int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	int ret;

	sdp_init();
	ret = sdp_real.getpeername(fd, addr, len);
	if (!ret)
		sdp_fix_family(addr, len);
	return ret;
}
