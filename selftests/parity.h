/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differential suite's frame (sdp_parity.c): every case runs twice, in
 * a child process of its own, once on TCP (AF_INET / AF_INET6) and once on
 * SDP (AF_INET_SDP / AF_INET6_SDP, or with SDP_PARITY_INET=1 AF_INET /
 * AF_INET6 with IPPROTO_SDP), over the same addresses.  A case
 * reports what a program can observe as "step<TAB>value" lines (OBS());
 * the runner compares the two runs step by step.
 */
#ifndef SDP_PARITY_H
#define SDP_PARITY_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* What a case runs on: filled in by the runner before each run. */
struct parity_env {
	bool sdp;		/* this run is the SDP one */
	int fam;		/* AF_INET or AF_INET_SDP */
	int fam6;		/* AF_INET6 or AF_INET6_SDP */
	int proto;		/* SDP_PARITY_INET: IPPROTO_SDP, in the
				 * SDP run, for every AF_INET/AF_INET6
				 * stream socket (fam is AF_INET then)
				 */
	const char *addr;	/* IPv4 address of the RDMA netdev */
	const char *addr6;	/* IPv6 address of the RDMA netdev */
	int port;		/* first of 20 ports this case may use */
	const char *self;	/* this program, for exec cases */
};

extern struct parity_env E;
extern FILE *obs_out;

/* Every socket a case makes: in the SDP run with SDP_PARITY_INET, an
 * AF_INET or AF_INET6 stream socket of protocol 0 or TCP is IPPROTO_SDP's.
 */
static inline int parity_socket(int domain, int type, int protocol)
{
	if (E.proto && (domain == AF_INET || domain == AF_INET6) &&
	    (type & 0xf) == SOCK_STREAM &&
	    (protocol == 0 || protocol == IPPROTO_TCP))
		protocol = E.proto;
	return socket(domain, type, protocol);
}

#define socket(d, t, p)	parity_socket(d, t, p)

/* One observation: STEP is the row's name within the case. */
#define OBS(step, fmt, ...) do {					\
	fprintf(obs_out, "%s\t" fmt "\n", step, ##__VA_ARGS__);	\
	fflush(obs_out);						\
} while (0)

/* A setup step that must work; anything else ends the case as broken. */
#define MUST(cond) do {							\
	if (!(cond)) {							\
		OBS("setup", "failed at line %d: %s (%s)", __LINE__,	\
		    #cond, errname(errno));				\
		_exit(3);						\
	}								\
} while (0)

/* "ok" or the errno's name, for a call returning -1 on error. */
static inline const char *res(long ret)
{
	return ret < 0 ? errname(errno) : "ok";
}

/* A count, or the errno's name. */
static inline const char *cnt(ssize_t n)
{
	static char buf[8][32];
	static int i;

	if (n < 0)
		return errname(errno);
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%zd", n);
	return buf[i];
}

static inline const char *yesno(bool b)
{
	return b ? "yes" : "no";
}

static inline double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static inline void msleep(int ms)
{
	usleep(ms * 1000);
}

static inline struct sockaddr_in sa4(const char *a, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

static inline struct sockaddr_in6 sa6(const char *a, int port)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6,
				  .sin6_port = htons(port) };

	inet_pton(AF_INET6, a, &s.sin6_addr);
	return s;
}

#define SA(s) ((struct sockaddr *)&(s))

static inline int sock_new(void)
{
	int fd = socket(E.fam, SOCK_STREAM, 0);

	MUST(fd >= 0);
	return fd;
}

/* A listener on E.addr:port. */
static inline int listen_on(int port, int backlog)
{
	struct sockaddr_in s = sa4(E.addr, port);
	int fd = sock_new();

	MUST(!bind(fd, SA(s), sizeof(s)));
	MUST(!listen(fd, backlog));
	return fd;
}

static inline int connect_to(int port)
{
	struct sockaddr_in s = sa4(E.addr, port);
	int fd = sock_new();

	MUST(!connect(fd, SA(s), sizeof(s)));
	return fd;
}

/* A connected pair on E.port + off: *c the client end, *s the accepted. */
static inline void pair_at(int off, int *c, int *s)
{
	int l = listen_on(E.port + off, 4);

	*c = connect_to(E.port + off);
	*s = accept(l, NULL, NULL);
	MUST(*s >= 0);
	close(l);
}

/* The poll mask of fd after waiting up to ms, as "IN|OUT|..." or "0". */
static inline const char *pmask(int fd, int ms)
{
	static char buf[4][64];
	static int i;
	struct pollfd p = { .fd = fd,
			    .events = POLLIN | POLLOUT | POLLPRI | POLLRDHUP };
	char *b;

	i = (i + 1) % 4;
	b = buf[i];
	b[0] = 0;
	if (poll(&p, 1, ms) < 0)
		return errname(errno);
	if (p.revents & POLLIN)
		strcat(b, "IN|");
	if (p.revents & POLLPRI)
		strcat(b, "PRI|");
	if (p.revents & POLLOUT)
		strcat(b, "OUT|");
	if (p.revents & POLLERR)
		strcat(b, "ERR|");
	if (p.revents & POLLHUP)
		strcat(b, "HUP|");
	if (p.revents & POLLRDHUP)
		strcat(b, "RDHUP|");
	if (p.revents & POLLNVAL)
		strcat(b, "NVAL|");
	if (!b[0])
		return "0";
	b[strlen(b) - 1] = 0;
	return b;
}

/* Wait until fd shows any of events (up to ms); true if it did. */
static inline bool wait_for(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	/* a signal (SIGURG, say) may come first: wait again, in 10 ms steps */
	while ((n = poll(&p, 1, ms < 10 ? ms : 10)) == 0 ||
	       (n < 0 && errno == EINTR)) {
		if (ms <= 0)
			return false;
		ms -= 10;
	}
	return n > 0 && (p.revents & events);
}

/* recv() into a string: "N:bytes" or the errno's name. */
static inline const char *rd(int fd, size_t len, int flags)
{
	static char buf[4][256];
	static int i;
	char data[200];
	ssize_t n;

	if (len > sizeof(data))
		len = sizeof(data);
	n = recv(fd, data, len, flags);
	if (n < 0)
		return errname(errno);
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%zd:%.*s", n,
		 flags & MSG_TRUNC ? 0 : (int)n, data);
	return buf[i];
}

static inline int inq(int fd)
{
	int n = -1;

	if (ioctl(fd, FIONREAD, &n))
		return -errno;
	return n;
}

static inline int getint(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, level, name, &v, &len))
		return -errno;
	return v;
}

static inline int setint(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v));
}

/* Fill what a socket takes while its peer does not read: non-blocking
 * sends until EAGAIN, and again while POLLOUT comes back within 300 ms
 * (times SDP_TIME_SCALE: under the debug kernel SDP's receiver spills
 * unread messages, giving room back, slower than that).
 * The first EAGAIN may come while bytes are still on their way to the
 * peer's buffers (TCP between two hosts; a peer that takes more as it
 * sees its program away): their room comes back, and a writer polling
 * goes on; and TCP takes sends into room too small for POLLOUT.  A
 * bounded number of rounds: one that never fills shows
 * POLLOUT to the caller's next look.  Returns the bytes sent; *shorts
 * (if given) says whether a short count came before an EAGAIN.
 */
static inline size_t fill(int fd, bool *shorts)
{
	static char buf[1 << 16];
	int fl = fcntl(fd, F_GETFL), round, err = 0;
	int quiet = 300 * sdp_time_scale();
	size_t total = 0;
	ssize_t n;

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	for (round = 0; round < 200; round++) {
		while ((n = send(fd, buf, sizeof(buf), MSG_NOSIGNAL)) > 0) {
			total += n;
			if (shorts && n < (ssize_t)sizeof(buf))
				*shorts = true;
		}
		err = n < 0 ? errno : 0;
		if (err != EAGAIN)
			break;
		if (wait_for(fd, POLLOUT, quiet))
			continue;
		/* TCP shows POLLOUT only once a third of its buffer is
		 * free (sk_stream_is_writeable()), and takes a send into
		 * less: full is a send refused after a quiet 300 ms
		 */
		n = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (n <= 0)
			break;
		total += n;
	}
	fcntl(fd, F_SETFL, fl);
	errno = err;
	return total;
}

/* Read until EOF or error; returns the byte count (or -errno). */
static inline long drain(int fd)
{
	static char buf[1 << 16];
	long total = 0;
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		total += n;
	return n < 0 ? -errno : total;
}

/* The io_uring cases (parity_uring.c). */
void case_uring_send_recv(void);
void case_uring_send_zc(void);
void case_uring_accept(void);
void case_uring_bufring(void);

#endif
