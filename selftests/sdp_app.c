// SPDX-License-Identifier: GPL-2.0
/*
 * An ordinary TCP program, for libsdp's tests: it knows nothing of SDP
 * (AF_INET sockets only), so whatever SDP it uses, libsdp gave it.
 *
 *   sdp_app server ADDR PORT epoll|poll|select|block|fork N
 *	an echo server for N connections, its listener waited on with
 *	epoll, poll(), select() (non-blocking sockets) or a blocking
 *	accept(), or N forked children each blocking in accept() for one;
 *	prints "served N" and exits 0 once all N ended cleanly.
 *   sdp_app client ADDR PORT block|poll|ppoll|select|epoll
 *	connects (non-blocking, waiting with the given call, then SO_ERROR;
 *	or blocking), then echoes 1 MiB through the server in 64 KiB pieces,
 *	every byte checked.  Prints "ok" or "connect: ERRNO".
 *   sdp_app props ADDR PORT
 *	a non-blocking, close-on-exec socket with options, an owner and a
 *	dup()'d copy, connected: afterwards (libsdp may have put another
 *	socket behind the descriptor) the flags, options, owner and copy
 *	are all still there, and SO_ZEROCOPY with MSG_ZEROCOPY works.
 *   sdp_app threads ADDR PORT N
 *	N threads at once each create a socket, connect, echo 64 KiB with
 *	their own pattern and close; exits 0 if all did.
 *   sdp_app bigselect ADDR PORT
 *	a listener on ADDR:PORT (under a "both" rule, one libsdp must
 *	watch), then select() over 1502 descriptors (more than FD_SETSIZE)
 *	with a never-readable pipe at 1500 and a writable one at 1501:
 *	prints what select() reported for them.
 *   sdp_app closes ADDR PORT
 *	a listener on ADDR:PORT closed behind libsdp's back, by fclose() of
 *	a stream on it, close_range() and closefrom(): each time prints how
 *	many SDP sockets still listen on PORT (libsdp's own, under "both")
 *	and whether a UDP socket that takes the number next binds as UDP.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif

#include "check.h"

#define PIECE	(64 << 10)
#define TOTAL	(1 << 20)
#define MAXC	256

static struct sockaddr_in sa;

static unsigned char pat(size_t i, unsigned int seed)
{
	return (i * 131 + seed * 7 + (i >> 9)) & 0xff;
}

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Write all of @n, waiting for room on a non-blocking socket. */
static int write_all(int fd, const unsigned char *p, size_t n, int flags)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | flags);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd q = { .fd = fd, .events = POLLOUT };

			poll(&q, 1, 1000);
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

/* ---- server ------------------------------------------------------------ */

static int served, failed;

/* One read's worth of echo; returns 0 while the connection lasts. */
static int echo_once(int fd)
{
	static unsigned char buf[PIECE];
	ssize_t r = recv(fd, buf, sizeof(buf), 0);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r > 0)
		return write_all(fd, buf, r, 0) ? -1 : 0;
	if (r < 0)
		failed++;
	close(fd);
	served++;
	return 1;
}

static int listener(void)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 128)) {
		printf("listen: %s\n", errname(errno));
		exit(2);
	}
	printf("listening\n");
	fflush(stdout);
	return l;
}

/* The listener's O_NONBLOCK is what the program made it, whatever libsdp
 * does underneath; FIONBIO and F_SETFL agree.
 */
static int check_flags(int l, bool nb)
{
	int on = 1, off = 0, ok = !!(fcntl(l, F_GETFL) & O_NONBLOCK) == nb;

	ioctl(l, FIONBIO, &on);
	ok &= !!(fcntl(l, F_GETFL) & O_NONBLOCK);
	ioctl(l, FIONBIO, &off);
	ok &= !(fcntl(l, F_GETFL) & O_NONBLOCK);
	if (nb)
		nonblock(l);
	if (!ok)
		printf("the listener's O_NONBLOCK is not the program's\n");
	return ok ? 0 : 1;
}

static int run_server(const char *kind, int n)
{
	int l = listener(), c, i, conns[MAXC], nc = 0;

	if (check_flags(l, false))
		return 1;

	if (!strcmp(kind, "fork")) {
		/* a pre-forking server: N children, one accept() each */
		pid_t kids[MAXC];
		int st, bad = 0;

		for (i = 0; i < n && i < MAXC; i++) {
			kids[i] = fork();
			if (kids[i])
				continue;
			c = accept(l, NULL, NULL);
			if (c < 0) {
				printf("child accept: %s\n", errname(errno));
				_exit(1);
			}
			while (!echo_once(c))
				;
			_exit(failed);
		}
		for (i = 0; i < n && i < MAXC; i++) {
			waitpid(kids[i], &st, 0);
			bad += !WIFEXITED(st) || WEXITSTATUS(st);
		}
		served = n - bad;
		failed = bad;
	} else if (!strcmp(kind, "block")) {
		while (served < n) {
			c = accept(l, NULL, NULL);
			if (c < 0) {
				printf("accept: %s\n", errname(errno));
				return 1;
			}
			while (!echo_once(c))
				;
		}
	} else if (!strcmp(kind, "epoll")) {
		int ep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = l };
		struct epoll_event evs[64];

		nonblock(l);
		epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
		while (served < n) {
			int k = epoll_wait(ep, evs, 64, 10000);

			if (k <= 0) {
				printf("epoll_wait: %d %s\n", k, errname(errno));
				return 1;
			}
			for (i = 0; i < k; i++) {
				if (evs[i].data.fd != l) {
					echo_once(evs[i].data.fd);
					continue;
				}
				/* edge or level: take every waiting one */
				while ((c = accept4(l, NULL, NULL,
						    SOCK_NONBLOCK)) >= 0) {
					ev.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				}
				if (errno != EAGAIN) {
					printf("accept: %s\n", errname(errno));
					return 1;
				}
			}
		}
	} else {	/* poll or select */
		bool use_select = !strcmp(kind, "select");

		nonblock(l);
		while (served < n) {
			struct pollfd p[MAXC + 1];
			fd_set r;
			int k, maxfd = l;

			FD_ZERO(&r);
			FD_SET(l, &r);
			p[0] = (struct pollfd){ .fd = l, .events = POLLIN };
			for (i = 0; i < nc; i++) {
				p[i + 1] = (struct pollfd){ .fd = conns[i],
							    .events = POLLIN };
				FD_SET(conns[i], &r);
				if (conns[i] > maxfd)
					maxfd = conns[i];
			}
			if (use_select) {
				struct timeval tv = { 10, 0 };

				k = select(maxfd + 1, &r, NULL, NULL, &tv);
				for (i = 0; i <= nc; i++)
					p[i].revents = FD_ISSET(p[i].fd, &r) ?
						       POLLIN : 0;
			} else {
				k = poll(p, nc + 1, 10000);
			}
			if (k <= 0) {
				printf("%s: %d %s\n", kind, k, errname(errno));
				return 1;
			}
			for (i = nc; i > 0; i--) {
				if (p[i].revents && echo_once(p[i].fd))
					conns[i - 1] = conns[--nc];
			}
			if (p[0].revents) {
				while (nc < MAXC &&
				       (c = accept4(l, NULL, NULL,
						    SOCK_NONBLOCK)) >= 0)
					conns[nc++] = c;
			}
		}
	}
	printf("served %d, %d failed\n", served, failed);
	return failed ? 1 : 0;
}

/* ---- client ------------------------------------------------------------ */

/* 0 once a non-blocking connect() has completed, else a negative errno */
static int wait_connected(int fd, const char *kind)
{
	int k = 0, err = 0, ep;
	socklen_t len = sizeof(err);

	if (!strcmp(kind, "poll") || !strcmp(kind, "ppoll")) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		struct timespec ts = { 30, 0 };

		k = !strcmp(kind, "poll") ? poll(&p, 1, 30000) :
					    ppoll(&p, 1, &ts, NULL);
	} else if (!strcmp(kind, "select")) {
		struct timeval tv = { 30, 0 };
		fd_set w;

		FD_ZERO(&w);
		FD_SET(fd, &w);
		k = select(fd + 1, NULL, &w, NULL, &tv);
	} else {
		struct epoll_event ev = { .events = EPOLLOUT, .data.u64 = 42 };

		ep = epoll_create1(0);
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
		ev.data.u64 = 0;
		k = epoll_wait(ep, &ev, 1, 30000);
		if (k == 1 && ev.data.u64 != 42) {
			printf("epoll: the event came with data %llu, not 42\n",
			       (unsigned long long)ev.data.u64);
			return -EPROTO;
		}
		close(ep);
	}
	if (k != 1)
		return k ? -errno : -ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	return -err;
}

static int echo_check(int fd, size_t total, unsigned int seed)
{
	static __thread unsigned char out[PIECE], in[PIECE];
	size_t done, i, got;

	for (done = 0; done < total; done += PIECE) {
		for (i = 0; i < PIECE; i++)
			out[i] = pat(done + i, seed);
		if (write_all(fd, out, PIECE, 0))
			return -1;
		for (got = 0; got < PIECE; ) {
			ssize_t r = recv(fd, in + got, PIECE - got, 0);

			if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
				struct pollfd q = { .fd = fd, .events = POLLIN };

				poll(&q, 1, 1000);
				continue;
			}
			if (r <= 0)
				return -1;
			got += r;
		}
		if (memcmp(in, out, PIECE))
			return -2;
	}
	return 0;
}

static int run_client(const char *kind)
{
	bool block = !strcmp(kind, "block");
	int fd = socket(AF_INET, SOCK_STREAM | (block ? 0 : SOCK_NONBLOCK), 0);
	int err = 0, one = 1, dom = 0;
	socklen_t len = sizeof(dom);

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = errno;
		if (!block && err == EINPROGRESS)
			err = -wait_connected(fd, kind);
	}
	if (err) {
		printf("connect: %s\n", errname(err));
		return 1;
	}
	/* as TCP to the program, whatever carries it */
	getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len);
	if (dom != AF_INET) {
		printf("SO_DOMAIN %d, not AF_INET\n", dom);
		return 1;
	}
	err = echo_check(fd, TOTAL, 3);
	if (err) {
		printf("echo: %s\n", err == -2 ? "wrong bytes" : errname(errno));
		return 1;
	}
	close(fd);
	printf("ok\n");
	return 0;
}

/* ---- props ------------------------------------------------------------- */

static int getint(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, level, name, &v, &len))
		return -errno;
	return v;
}

static int run_props(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, rcv = 256 << 10, copy, err, zc = 1;
	struct sockaddr_in a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);
	unsigned char buf[100000];

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	fcntl(fd, F_SETOWN, getpid());
	copy = dup(fd);
	rcv = getint(fd, SOL_SOCKET, SO_RCVBUF);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    errno == EINPROGRESS) {
		err = wait_connected(fd, "poll");
		if (err) {
			printf("connect: %s\n", errname(-err));
			return 1;
		}
	}
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK, "still non-blocking");
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "still close-on-exec");
	CHECK(!(fcntl(copy, F_GETFD) & FD_CLOEXEC), "the copy is not close-on-exec");
	CHECK(getint(fd, IPPROTO_TCP, TCP_NODELAY) == 1, "TCP_NODELAY kept");
	CHECK(getint(fd, SOL_SOCKET, SO_KEEPALIVE) == 1, "SO_KEEPALIVE kept");
	CHECK(getint(fd, SOL_SOCKET, SO_RCVBUF) == rcv, "SO_RCVBUF kept (%d, %d)",
	      getint(fd, SOL_SOCKET, SO_RCVBUF), rcv);
	CHECK(fcntl(fd, F_GETOWN) == getpid(), "owner kept");
	CHECK(getint(fd, SOL_SOCKET, SO_DOMAIN) == AF_INET, "SO_DOMAIN AF_INET");
	CHECK(getint(fd, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP,
	      "SO_PROTOCOL IPPROTO_TCP");
	CHECK(!getpeername(fd, (struct sockaddr *)&a, &la) &&
	      !getpeername(copy, (struct sockaddr *)&b, &lb) &&
	      a.sin_family == AF_INET && !memcmp(&a, &b, sizeof(a)),
	      "the copy is the same connection");
	CHECK(!setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &zc, sizeof(zc)),
	      "SO_ZEROCOPY set (%s)", errname(errno));
	memset(buf, 'z', sizeof(buf));
	err = write_all(fd, buf, sizeof(buf), MSG_ZEROCOPY) ? errno : 0;
	CHECK(!err, "send(MSG_ZEROCOPY) (%s)", errname(err));
	for (size_t got = 0; !err && got < sizeof(buf); ) {
		struct pollfd q = { .fd = fd, .events = POLLIN };
		ssize_t r;

		poll(&q, 1, 5000);
		r = recv(fd, buf, sizeof(buf) - got, 0);
		if (r <= 0 && errno != EAGAIN) {
			CHECK(0, "the echo (%s)", errname(errno));
			break;
		}
		got += r > 0 ? r : 0;
	}
	close(copy);
	close(fd);
	return check_exit();
}

/* ---- threads ----------------------------------------------------------- */

static pthread_barrier_t go;

static void *thread_main(void *arg)
{
	long i = (long)arg;
	int fd, err;

	pthread_barrier_wait(&go);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("thread %ld: connect: %s\n", i, errname(errno));
		return (void *)1;
	}
	err = echo_check(fd, PIECE, i);
	close(fd);
	if (err)
		printf("thread %ld: echo: %s\n", i, err == -2 ? "wrong bytes" :
		       errname(errno));
	return (void *)(long)!!err;
}

static int run_threads(int n)
{
	pthread_t t[MAXC];
	int i, bad = 0;
	void *r;

	pthread_barrier_init(&go, NULL, n);
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)(long)i);
	for (i = 0; i < n; i++) {
		pthread_join(t[i], &r);
		bad += !!r;
	}
	printf("%d of %d threads connected and echoed\n", n - bad, n);
	return bad ? 1 : 0;
}

/* ---- select() beyond FD_SETSIZE ------------------------------------------ */

static int run_bigselect(void)
{
	enum { NFDS = 1502 };
	__fd_mask r[(NFDS + 63) / 64] = { 0 }, w[(NFDS + 63) / 64] = { 0 };
	struct rlimit rl = { 4096, 4096 };
	struct timeval tv = { 0, 0 };
	int l = socket(AF_INET, SOCK_STREAM, 0), p[2], n;

	if (setrlimit(RLIMIT_NOFILE, &rl) || pipe(p) || dup2(p[0], 1500) < 0 ||
	    dup2(p[1], 1501) < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 4)) {
		printf("setup: %s\n", errname(errno));
		return 2;
	}
	r[1500 / 64] |= 1ULL << (1500 % 64);	/* never readable */
	w[1501 / 64] |= 1ULL << (1501 % 64);	/* writable */
	n = select(NFDS, (fd_set *)r, (fd_set *)w, NULL, &tv);
	printf("select: %d, 1500 readable: %s, 1501 writable: %s\n", n,
	       r[1500 / 64] >> (1500 % 64) & 1 ? "yes" : "no",
	       w[1501 / 64] >> (1501 % 64) & 1 ? "yes" : "no");
	return 0;
}

/* ---- closes libsdp does not see ----------------------------------------- */

/* SDP sockets listening on @port (their rows in /proc/net/sdp). */
static int sdp_listeners(int port)
{
	FILE *f = fopen("/proc/net/sdp", "r");
	char line[256], want[16];
	int n = 0;

	snprintf(want, sizeof(want), ":%04X ", port);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want) && strlen(line) > 2 &&
		    !strcmp(line + strlen(line) - 3, " A\n"))
			n++;
	fclose(f);
	return n;
}

static int run_closes(void)
{
	static const char * const how[] = { "fclose", "close_range", "closefrom" };
	int i, port = ntohs(sa.sin_port);

	for (i = 0; i < 3; i++) {
		int l = socket(AF_INET, SOCK_STREAM, 0), one = 1, u, type;
		struct sockaddr_in ua = sa;
		socklen_t tl = sizeof(type);

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 4)) {
			printf("%s: listen: %s\n", how[i], errname(errno));
			continue;
		}
		printf("%s: before: %d SDP listening\n", how[i],
		       sdp_listeners(port));
		if (i == 0)
			fclose(fdopen(l, "r+"));
		else if (i == 1)
			close_range(l, l, 0);
		else
			closefrom(l);
		u = socket(AF_INET, SOCK_DGRAM, 0);
		ua.sin_port = htons(port + 1 + i);
		printf("%s: after: %d SDP listening, UDP socket %s number, bind %s, %s\n",
		       how[i], sdp_listeners(port), u == l ? "on the same" : "on another",
		       errname(bind(u, (struct sockaddr *)&ua, sizeof(ua)) ? errno : 0),
		       getsockopt(u, SOL_SOCKET, SO_TYPE, &type, &tl) ? "?" :
		       type == SOCK_DGRAM ? "SOCK_DGRAM" : "not SOCK_DGRAM");
		close(u);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (argc < 5 && strcmp(argv[1], "props") &&
			 strcmp(argv[1], "bigselect") && strcmp(argv[1], "closes"))) {
		fprintf(stderr, "usage: see the comment at the top of %s\n",
			__FILE__);
		return 2;
	}
	sa.sin_family = AF_INET;
	sa.sin_port = htons(atoi(argv[3]));
	inet_pton(AF_INET, argv[2], &sa.sin_addr);
	alarm(300);
	if (!strcmp(argv[1], "server") && argc == 6)
		return run_server(argv[4], atoi(argv[5]));
	if (!strcmp(argv[1], "client"))
		return run_client(argv[4]);
	if (!strcmp(argv[1], "props"))
		return run_props();
	if (!strcmp(argv[1], "threads"))
		return run_threads(atoi(argv[4]) > MAXC ? MAXC : atoi(argv[4]));
	if (!strcmp(argv[1], "bigselect"))
		return run_bigselect();
	if (!strcmp(argv[1], "closes"))
		return run_closes();
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
