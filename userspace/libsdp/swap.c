// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: putting a new socket behind a program's descriptor.
 *
 * The rules are applied only once the address is known, so a socket the
 * program created as TCP may have to become SDP (or, when an SDP connect
 * fails under "both", TCP again).  The new socket gets everything the
 * program gave the old one: the file status flags (O_NONBLOCK, O_ASYNC),
 * the owner and signal of F_SETOWN/F_SETSIG, every option set with
 * setsockopt() (replayed in order), each descriptor's FD_CLOEXEC, and the
 * epoll registrations, which the kernel drops with the old socket.  Then
 * dup3() puts it behind every descriptor of the old one at once, so the
 * program's descriptor numbers never change.
 *
 * Everything here runs under the state lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "log.h"
#include "real.h"
#include "state.h"
#include "swap.h"
#include "why.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif

/* the errors that say the peer has no SDP: those sdp_why_fallback()
 * names a reason for (one list for both)
 */
bool sdp_fallback_errno(int err)
{
	return sdp_why_fallback(err) != SDP_WHY_FAILED;
}

int sdp_family_of(int domain)
{
	return domain == AF_INET6 ? sdp_settings.af_sdp6 :
				    sdp_settings.af_sdp;
}

bool sdp_fd_is_sdp(int fd)
{
	int dom = 0, proto = 0;
	socklen_t len = sizeof(dom);

	if (!sdp_real.getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) &&
	    (dom == sdp_settings.af_sdp || dom == sdp_settings.af_sdp6))
		return true;
	len = sizeof(proto);
	return sdp_settings.ipproto_sdp &&
	       !sdp_real.getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) &&
	       proto == sdp_settings.ipproto_sdp;
}

/**
 * sdp_socket_sdp - a new SDP stream socket for a program's of @domain
 * @domain: AF_INET or AF_INET6
 * @flags: SOCK_CLOEXEC, SOCK_NONBLOCK
 *
 * An IPPROTO_SDP socket where the module has it: of the program's own
 * family, so SO_REUSEPORT (and from 6.7 SO_ZEROCOPY) work as on TCP and
 * nothing needs translating; the kernel's own fallback to TCP is turned
 * off, since the rules say what happens when SDP fails (SDP_FALLBACK).
 * Else (LIBSDP_IPPROTO_SDP=0, a module without it) one of the SDP
 * families.
 *
 * Return: the descriptor, or -1 with errno set.
 */
int sdp_socket_sdp(int domain, int flags)
{
	int fd, off = 0;

	if (sdp_settings.ipproto_sdp) {
		fd = sdp_real.socket(domain, SOCK_STREAM | flags,
				     sdp_settings.ipproto_sdp);
		if (fd >= 0 && !sdp_real.setsockopt(fd, SOL_SDP, SDP_FALLBACK,
						    &off, sizeof(off)))
			return fd;
		if (fd >= 0)
			sdp_real.close(fd);
	}
	return sdp_real.socket(sdp_family_of(domain), SOCK_STREAM | flags, 0);
}

/* setsockopt() as the program meant it on an SDP socket: SO_ZEROCOPY is
 * SDP_ZEROCOPY there (the kernel's socket core keeps SO_ZEROCOPY to its
 * own families).
 */
int sdp_setsockopt_sdp(int fd, int level, int name, const void *val,
		       socklen_t len)
{
	if (level == SOL_SOCKET && name == SO_ZEROCOPY)
		return sdp_real.setsockopt(fd, SOL_SDP, SDP_ZEROCOPY, val, len);
	return sdp_real.setsockopt(fd, level, name, val, len);
}

static void sdp_replay_opts(struct sdp_sock *s, int fd, bool sdp)
{
	int i;

	for (i = 0; i < s->nopts; i++) {
		struct sdp_opt *o = s->opts[i];
		int ret = sdp ? sdp_setsockopt_sdp(fd, o->level, o->name,
						   o->val, o->len) :
			  sdp_real.setsockopt(fd, o->level, o->name, o->val,
					      o->len);

		if (ret)
			sdp_log(SDP_LOG_INFO, "option %d/%d not carried over to the %s socket: %m",
				o->level, o->name, sdp ? "SDP" : "TCP");
	}
}

/* @to gets @from's owner and signal (F_SETOWN_EX, F_SETSIG) and file
 * status flags (O_NONBLOCK, O_ASYNC); a twin stays non-blocking.
 */
static void sdp_copy_owner(int from, int to, bool twin)
{
	struct f_owner_ex owner;
	int fl = sdp_real.fcntl(from, F_GETFL), sig;

	if (!sdp_real.fcntl(from, F_GETOWN_EX, &owner) && owner.pid)
		sdp_real.fcntl(to, F_SETOWN_EX, &owner);
	sig = sdp_real.fcntl(from, F_GETSIG);
	if (sig > 0)
		sdp_real.fcntl(to, F_SETSIG, sig);
	if (fl >= 0)
		sdp_real.fcntl(to, F_SETFL, twin ? fl | O_NONBLOCK : fl);
}

/* A new socket like the program's on @fd: SDP (or TCP), options replayed,
 * close-on-exec (each descriptor gets its own flag at dup3()).
 */
static int sdp_new_socket(struct sdp_sock *s, int fd, bool sdp)
{
	int nfd;

	nfd = sdp ? sdp_socket_sdp(s->domain, SOCK_CLOEXEC) :
		    sdp_real.socket(s->domain, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (nfd < 0)
		return -errno;
	sdp_replay_opts(s, nfd, sdp);
	sdp_copy_owner(fd, nfd, false);
	return nfd;
}

struct sdp_dup_arg {
	int nfd;
	int err;
};

static void sdp_dup_over(int fd, void *arg)
{
	struct sdp_dup_arg *a = arg;
	int fdfl = sdp_real.fcntl(fd, F_GETFD);

	if (sdp_real.dup3(a->nfd, fd, fdfl > 0 && (fdfl & FD_CLOEXEC) ?
			  O_CLOEXEC : 0) < 0 && !a->err)
		a->err = -errno;
}

/* The kernel dropped the registrations with the old socket: again. */
static void sdp_reregister(struct sdp_sock *s)
{
	int i;

	for (i = 0; i < s->nregs; i++) {
		struct sdp_reg *r = &s->regs[i];
		struct epoll_event ev = {
			.events = r->events,
			.data.u64 = SDP_MARK | r->id,
		};

		if (sdp_real.epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->fd, &ev) &&
		    errno != EEXIST)
			sdp_log(SDP_LOG_WARN, "descriptor %d lost its epoll registration: %m",
				r->fd);
	}
}

int sdp_swap(int fd, struct sdp_sock *s, bool sdp)
{
	struct sdp_dup_arg a = { .err = 0 };

	a.nfd = sdp_new_socket(s, fd, sdp);
	if (a.nfd < 0)
		return a.nfd;
	sdp_sock_walk_fds(s, sdp_dup_over, &a);
	sdp_real.close(a.nfd);
	if (a.err)
		return a.err;
	sdp_reregister(s);
	sdp_log(SDP_LOG_DEBUG, "descriptor %d is %s now", fd,
		sdp ? "SDP" : "TCP");
	return 0;
}

int sdp_rebind(int fd, struct sdp_sock *s)
{
	if (!s->bound)
		return 0;
	if (sdp_real.bind(fd, (struct sockaddr *)&s->bind_addr, s->bind_len))
		return -errno;
	return 0;
}

void sdp_twin_open(int fd, struct sdp_sock *s)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int tfd;

	sdp_sock_set_twin(s, -1);
	if (sdp_real.getsockname(fd, (struct sockaddr *)&ss, &len))
		goto fail;
	tfd = sdp_socket_sdp(s->domain, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (tfd < 0)
		goto fail;
	sdp_replay_opts(s, tfd, true);
	sdp_copy_owner(fd, tfd, true);
	if (sdp_real.bind(tfd, (struct sockaddr *)&ss, len)) {
		int err = errno;

		sdp_real.close(tfd);
		errno = err;
		goto fail;
	}
	sdp_sock_set_twin(s, tfd);
	s->twin_err = 0;
	return;
fail:
	s->twin_err = errno;
	sdp_log(SDP_LOG_INFO, "descriptor %d: TCP only, no SDP twin: %m", fd);
}

/**
 * sdp_twin_moved - @s's twin has a copy at @nfd, which replaces it
 * @s: the "both" socket
 * @nfd: the twin's new descriptor
 *
 * Its epoll registrations follow (an epoll registration is of a
 * descriptor number and its file: it would outlive the old number).
 * Under the lock; the caller closes the old number.
 */
void sdp_twin_moved(struct sdp_sock *s, int nfd)
{
	int i;

	for (i = 0; i < s->nregs; i++) {
		struct sdp_reg *r = &s->regs[i];
		struct epoll_event ev;

		if (!r->twin_id)
			continue;
		ev.events = r->events;
		ev.data.u64 = SDP_MARK | r->twin_id;
		sdp_real.epoll_ctl(r->epfd, EPOLL_CTL_DEL, s->twin, &ev);
		if (sdp_real.epoll_ctl(r->epfd, EPOLL_CTL_ADD, nfd, &ev)) {
			sdp_mark_free(r->twin_id);
			r->twin_id = 0;
		}
	}
	sdp_sock_set_twin(s, nfd);
}

void sdp_twin_register(struct sdp_sock *s)
{
	int i;

	if (s->twin < 0)
		return;
	for (i = 0; i < s->nregs; i++) {
		struct sdp_reg *r = &s->regs[i];
		struct epoll_event ev;

		if (r->twin_id)
			continue;
		r->twin_id = sdp_mark_new(r->epfd, r->fd, true, r->data);
		if (!r->twin_id)
			continue;
		ev.events = r->events;
		ev.data.u64 = SDP_MARK | r->twin_id;
		if (sdp_real.epoll_ctl(r->epfd, EPOLL_CTL_ADD, s->twin, &ev)) {
			sdp_mark_free(r->twin_id);
			r->twin_id = 0;
		}
	}
}

int sdp_fallback_start(int fd, struct sdp_sock *s, bool wait)
{
	int err, fl, ret;

	err = sdp_swap(fd, s, false);
	if (!err)
		err = sdp_rebind(fd, s);
	sdp_sock_set_state(s, SDP_SOCK_TCP);
	if (err)
		return err;
	sdp_log(SDP_LOG_INFO, "descriptor %d: no SDP connection, TCP instead",
		fd);
	fl = sdp_real.fcntl(fd, F_GETFL);
	if (!wait && fl >= 0 && !(fl & O_NONBLOCK))
		sdp_real.fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	ret = sdp_real.connect(fd, (struct sockaddr *)&s->peer, s->peer_len);
	err = ret ? -errno : 0;
	if (!wait && fl >= 0 && !(fl & O_NONBLOCK))
		sdp_real.fcntl(fd, F_SETFL, fl);
	return err;
}

enum sdp_check sdp_connect_check(int fd, struct sdp_sock *s)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(int);
	int err = 0, sdp_err;

	if (s->state != SDP_SOCK_BOTH_CONNECT)
		return SDP_CHECK_DONE;
	if (sdp_real.getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (!err) {
		len = sizeof(ss);
		if (sdp_real.getpeername(fd, (struct sockaddr *)&ss, &len))
			return SDP_CHECK_PENDING;
		sdp_sock_set_state(s, SDP_SOCK_SDP);
		sdp_why_note(fd, SDP_WHY_BOTH_SDP, 0, s->rule_line,
			     SDP_WHY_ROLE_CLIENT);
		sdp_log(SDP_LOG_DEBUG, "descriptor %d connected over SDP", fd);
		return SDP_CHECK_DONE;
	}
	if (sdp_fallback_errno(err)) {
		sdp_log(SDP_LOG_DEBUG, "descriptor %d: SDP connect failed (%s)",
			fd, strerror(err));
		sdp_err = err;
		err = -sdp_fallback_start(fd, s, false);
		if (!err || err == EINPROGRESS) {
			sdp_why_note(fd, sdp_why_fallback(sdp_err), sdp_err,
				     s->rule_line, SDP_WHY_ROLE_CLIENT);
			return SDP_CHECK_FELL_BACK;
		}
	} else {
		sdp_sock_set_state(s, SDP_SOCK_SDP);
	}
	s->pending_err = err;	/* for the program's SO_ERROR */
	return SDP_CHECK_DONE;
}
