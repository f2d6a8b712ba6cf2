// SPDX-License-Identifier: GPL-2.0
/*
 * socket(AF_INET, SOCK_STREAM, IPPROTO_SDP) and its AF_INET6 twin: an SDP
 * socket (Documentation/sdp.rst, "IPPROTO_SDP").
 *
 *   sdp_ipproto ADDR ADDR6 PORT
 *	For each family: the socket says AF_INET(6) and IPPROTO_SDP (and
 *	so does an accepted one), is listed in /proc/net/sdp while
 *	connected, names its addresses in the family's sockaddr, moves
 *	8 MiB both ways with every byte checked, and SO_ZEROCOPY with
 *	MSG_ZEROCOPY completes every send (where the kernel lets
 *	SOL_SOCKET reach the protocol, SOCK_CUSTOM_SOCKOPT: else
 *	EOPNOTSUPP, as on family 27).  Other socket types with
 *	IPPROTO_SDP are refused as inet_create() refuses them.  32
 *	non-blocking connects SDP carries, each used once: the TCP sockets
 *	made in case of a fallback are freed (/proc/net/sockstat).
 *   sdp_ipproto fallback ADDR ADDR6 PORT
 *	A server of plain TCP, and IPPROTO_SDP clients: a blocking
 *	connect, and a non-blocking one watched by epoll (registered before
 *	connect()), each goes on by TCP (ConnFallbacks), the descriptor then
 *	a TCP socket (SO_PROTOCOL 6, SO_ERROR 0), 1 MiB each way checked;
 *	with no server at all, ECONNREFUSED as TCP says it.
 *   sdp_ipproto twin ADDR ADDR6 PORT
 *	An IPPROTO_SDP listener serves plain TCP clients too: accept()
 *	gives a TCP socket and its peer's address (1 MiB each way checked,
 *	AcceptFallbacks), epoll
 *	sees both kinds; shut down or closed it refuses TCP too;
 *	SDP_FALLBACK 0 makes it SDP-only; on a port a TCP listener holds
 *	it is SDP-only (ListenFallbackFails) and TCP's clients reach TCP's
 *	listener.
 *   sdp_ipproto nofallback ADDR PORT
 *	(ipproto_fallback=0) the same client: ECONNREFUSED.
 *   sdp_ipproto fbopt ADDR PORT
 *	SDP_FALLBACK: 1 by default on IPPROTO_SDP, 0 (and not settable to
 *	1) on family 27; set to 0, the client is refused.
 * Exits 0 if all was right.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "check.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif

#define BULK	(8 << 20)
#define NB_CONNS	32

static int proto;

static int getint(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(fd, level, name, &v, &len))
		return -errno;
	return v;
}

static socklen_t mkaddr(int fam, const char *a, int port,
			struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (fam == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		inet_pton(AF_INET, a, &s->sin_addr);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	inet_pton(AF_INET6, a, &s6->sin6_addr);
	return sizeof(*s6);
}

/* Is a row of /proc/net/sdp on local port @port? */
static bool proc_has_port(int port)
{
	FILE *f = fopen("/proc/net/sdp", "r");
	char line[512], hex[16];
	bool found = false;

	snprintf(hex, sizeof(hex), ":%04X ", port);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, hex))
			found = true;
	if (f)
		fclose(f);
	return found;
}

static void fill(unsigned char *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 131 + seed + (i >> 12));
}

static bool full_io(int fd, unsigned char *b, size_t n, bool tx)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = tx ? send(fd, b + done, n - done, MSG_NOSIGNAL) :
				 recv(fd, b + done, n - done, 0);

		if (r <= 0)
			return false;
		done += r;
	}
	return true;
}

/* MSG_ZEROCOPY sends of 1 MiB: each completion id once. */
static void zerocopy(int c, int s, unsigned char *buf)
{
	int on = 1, sends = 8, ids = 0, r;
	char cbuf[128];

	r = setsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof(on));
	if (r && errno == EOPNOTSUPP) {
		CHECK(getint(c, SOL_SOCKET, SO_ZEROCOPY) == 0,
		      "SO_ZEROCOPY: EOPNOTSUPP, this kernel keeps SOL_SOCKET to itself");
		return;
	}
	CHECK(!r && getint(c, SOL_SOCKET, SO_ZEROCOPY) == 1,
	      "SO_ZEROCOPY set through the socket core: %s",
	      errname(r ? errno : 0));
	if (!fork()) {
		unsigned char *in = malloc(1 << 20);
		int i;

		for (i = 0; i < sends; i++)
			if (!full_io(s, in, 1 << 20, false))
				_exit(1);
		free(in);
		_exit(0);
	}
	for (int i = 0; i < sends; i++)
		CHECK(send(c, buf, 1 << 20, MSG_ZEROCOPY) == 1 << 20,
		      "MSG_ZEROCOPY send %d", i);
	while (ids < sends) {
		struct msghdr m = { .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct pollfd p = { .fd = c, .events = 0 };
		struct cmsghdr *cm;

		if (poll(&p, 1, 10000) != 1)
			break;
		if (recvmsg(c, &m, MSG_ERRQUEUE) < 0)
			continue;
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			struct sock_extended_err *e = (void *)CMSG_DATA(cm);

			if (e->ee_origin == SO_EE_ORIGIN_ZEROCOPY)
				ids += e->ee_data - e->ee_info + 1;
		}
	}
	CHECK(ids == sends, "every MSG_ZEROCOPY send completed (%d of %d)",
	      ids, sends);
	wait(&r);
	CHECK(WIFEXITED(r) && !WEXITSTATUS(r), "... and the peer read them");
}

static void one_family(int fam, const char *addr, int port)
{
	const char *fn = fam == AF_INET ? "AF_INET" : "AF_INET6";
	unsigned char *out = malloc(BULK), *in = malloc(BULK);
	struct sockaddr_storage ss, got;
	socklen_t len = mkaddr(fam, addr, port, &ss), glen;
	int l, c, s, one = 1;

	l = socket(fam, SOCK_STREAM, proto);
	CHECK(l >= 0, "%s: socket(%s, SOCK_STREAM, IPPROTO_SDP): %s", fn, fn,
	      errname(l < 0 ? errno : 0));
	if (l < 0)
		return;
	CHECK(getint(l, SOL_SOCKET, SO_DOMAIN) == fam &&
	      getint(l, SOL_SOCKET, SO_PROTOCOL) == proto &&
	      getint(l, SOL_SOCKET, SO_TYPE) == SOCK_STREAM,
	      "%s: SO_DOMAIN %d, SO_PROTOCOL %d, SO_TYPE %d", fn,
	      getint(l, SOL_SOCKET, SO_DOMAIN),
	      getint(l, SOL_SOCKET, SO_PROTOCOL),
	      getint(l, SOL_SOCKET, SO_TYPE));
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(!bind(l, (struct sockaddr *)&ss, len) && !listen(l, 4),
	      "%s: bind and listen", fn);
	c = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, proto);
	CHECK(!connect(c, (struct sockaddr *)&ss, len), "%s: connect: %s", fn,
	      errname(errno));
	s = accept(l, NULL, NULL);
	CHECK(s >= 0 && getint(s, SOL_SOCKET, SO_PROTOCOL) == proto &&
	      getint(s, SOL_SOCKET, SO_DOMAIN) == fam,
	      "%s: accepted, the same protocol and family", fn);
	glen = sizeof(got);
	CHECK(!getpeername(c, (struct sockaddr *)&got, &glen) &&
	      got.ss_family == fam && glen == len,
	      "%s: getpeername gives the family's sockaddr", fn);
	CHECK(proc_has_port(port), "%s: listed in /proc/net/sdp", fn);

	fill(out, BULK, fam);
	if (!fork())
		_exit(!full_io(c, out, BULK, true));
	CHECK(full_io(s, in, BULK, false) && !memcmp(in, out, BULK),
	      "%s: 8 MiB client to server, every byte", fn);
	wait(NULL);
	fill(out, BULK, fam + 7);
	if (!fork())
		_exit(!full_io(s, out, BULK, true));
	CHECK(full_io(c, in, BULK, false) && !memcmp(in, out, BULK),
	      "%s: 8 MiB server to client, every byte", fn);
	wait(NULL);
	zerocopy(c, s, out);
	close(c);
	CHECK(recv(s, in, 1, 0) == 0, "%s: EOF after close", fn);
	close(s);
	close(l);
	free(in);
	free(out);
}

/* TCP sockets allocated on the host (/proc/net/sockstat "alloc"), or -1. */
static long tcp_alloc(void)
{
	FILE *f = fopen("/proc/net/sockstat", "r");
	char line[256];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "TCP: inuse %*d orphan %*d tw %*d alloc %ld",
			   &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/*
 * Non-blocking connects SDP carries (as a Go program's): each made a TCP
 * socket in case it had to fall back, which must not stay once the
 * connection is SDP's and used.
 */
static void unused_fallback(const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(AF_INET, addr, port, &ss);
	int l, c[NB_CONNS], one = 1, ok = 0, i;
	long before, after;

	l = socket(AF_INET, SOCK_STREAM, proto);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&ss, len) || listen(l, NB_CONNS)) {
		CHECK(0, "unused fallback: listen: %s", errname(errno));
		return;
	}
	before = tcp_alloc();
	for (i = 0; i < NB_CONNS; i++) {
		struct pollfd p;
		char b = 'x';
		int s;

		c[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, proto);
		if (connect(c[i], (struct sockaddr *)&ss, len) &&
		    errno != EINPROGRESS)
			continue;
		p = (struct pollfd){ .fd = c[i], .events = POLLOUT };
		if (poll(&p, 1, 10000) != 1 ||
		    getint(c[i], SOL_SOCKET, SO_ERROR) ||
		    send(c[i], &b, 1, 0) != 1)
			continue;
		s = accept(l, NULL, NULL);
		if (s >= 0 && recv(s, &b, 1, 0) == 1 && b == 'x' &&
		    getint(c[i], SOL_SOCKET, SO_PROTOCOL) == proto)
			ok++;
		if (s >= 0)
			close(s);
	}
	after = tcp_alloc();
	CHECK(ok == NB_CONNS, "%d non-blocking connects by SDP, each used (%d)",
	      NB_CONNS, ok);
	CHECK(before >= 0 && after - before < NB_CONNS / 2,
	      "... their unused TCP sockets freed (TCP alloc %ld -> %ld)",
	      before, after);
	for (i = 0; i < NB_CONNS; i++)
		close(c[i]);
	close(l);
}

/* 1 MiB each way on a connected pair, every byte. */
static bool both_ways(int c, int s)
{
	unsigned char *out = malloc(1 << 20), *in = malloc(1 << 20);
	bool ok;

	fill(out, 1 << 20, c);
	if (!fork())
		_exit(!full_io(c, out, 1 << 20, true) ||
		      !full_io(c, in, 1 << 20, false) ||
		      memcmp(in, out, 1 << 20));
	ok = full_io(s, in, 1 << 20, false) && full_io(s, in, 1 << 20, true);
	wait(&c);
	ok = ok && WIFEXITED(c) && !WEXITSTATUS(c);
	free(in);
	free(out);
	return ok;
}

/* accept() on a listener that has a connection coming: -1 if none
 * within 10 s
 */
static int accept_one(int l)
{
	struct pollfd p = { .fd = l, .events = POLLIN };

	if (poll(&p, 1, 10000) != 1)
		return -1;
	return accept(l, NULL, NULL);
}

/* A listener of @proto on @ss, or -1. */
static int listener_on(int fam, int p, struct sockaddr_storage *ss,
		       socklen_t len, int fallback)
{
	int l = socket(fam, SOCK_STREAM, p), one = 1;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fallback >= 0)
		setsockopt(l, SOL_SDP, SDP_FALLBACK, &fallback,
			   sizeof(fallback));
	if (bind(l, (struct sockaddr *)ss, len) || listen(l, 8)) {
		close(l);
		return -1;
	}
	return l;
}

static int tcp_connect(int fam, struct sockaddr_storage *ss, socklen_t len)
{
	int c = socket(fam, SOCK_STREAM, IPPROTO_TCP);

	if (connect(c, (struct sockaddr *)ss, len)) {
		int err = errno;

		close(c);
		errno = err;
		return -1;
	}
	return c;
}

/*
 * An IPPROTO_SDP listener takes TCP's clients too, as a TCP server would
 * (sdp_fallback_listen.c): a blocking accept() gives a TCP socket, epoll
 * sees both kinds; stopped, it refuses TCP's too; SDP_FALLBACK 0 makes an
 * SDP-only listener; a port TCP holds leaves it SDP-only, counted.
 */
static void twin_family(int fam, const char *addr, int port)
{
	const char *fn = fam == AF_INET ? "AF_INET" : "AF_INET6";
	long acc = sdp_stat_of("AcceptFallbacks");
	long fails = sdp_stat_of("ListenFallbackFails");
	struct sockaddr_storage ss, peer, cname;
	socklen_t len = mkaddr(fam, addr, port, &ss), plen, cname_len;
	int l, c, s, ep, nsdp = 0, ntcp = 0, t;
	struct epoll_event ev = { .events = EPOLLIN };

	l = listener_on(fam, proto, &ss, len, -1);
	CHECK(l >= 0, "%s: an IPPROTO_SDP listener", fn);
	c = tcp_connect(fam, &ss, len);
	CHECK(c >= 0, "%s: a TCP client connects to it: %s", fn,
	      errname(c < 0 ? errno : 0));
	plen = sizeof(peer);
	s = accept(l, (struct sockaddr *)&peer, &plen);
	CHECK(s >= 0 && getint(s, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP &&
	      getint(s, SOL_SOCKET, SO_DOMAIN) == fam,
	      "%s: accept() gives a TCP socket (SO_PROTOCOL %d)", fn,
	      s >= 0 ? getint(s, SOL_SOCKET, SO_PROTOCOL) : -1);
	cname_len = sizeof(cname);
	getsockname(c, (struct sockaddr *)&cname, &cname_len);
	CHECK(s >= 0 && plen == cname_len && !memcmp(&peer, &cname, cname_len),
	      "%s: ... and the client's address (%u bytes, family %d)", fn,
	      plen, peer.ss_family);
	CHECK(c >= 0 && s >= 0 && both_ways(c, s),
	      "%s: 1 MiB each way over it, every byte", fn);
	CHECK(sdp_stat_of("AcceptFallbacks") == acc + 1,
	      "%s: AcceptFallbacks counts it", fn);
	close(c);
	close(s);

	/* one of each kind, seen by epoll, accepted non-blocking */
	fcntl(l, F_SETFL, O_NONBLOCK);
	ep = epoll_create1(0);
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	c = socket(fam, SOCK_STREAM, proto);
	connect(c, (struct sockaddr *)&ss, len);
	t = tcp_connect(fam, &ss, len);
	while (nsdp + ntcp < 2 && epoll_wait(ep, &ev, 1, 10000) == 1) {
		while ((s = accept(l, NULL, NULL)) >= 0) {
			if (getint(s, SOL_SOCKET, SO_PROTOCOL) == proto)
				nsdp++;
			else if (getint(s, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP)
				ntcp++;
			close(s);
		}
	}
	CHECK(nsdp == 1 && ntcp == 1,
	      "%s: epoll: an SDP and a TCP connection accepted (%d, %d)", fn,
	      nsdp, ntcp);
	close(c);
	close(t);
	close(ep);

	shutdown(l, SHUT_RD);
	c = tcp_connect(fam, &ss, len);
	CHECK(c < 0 && errno == ECONNREFUSED,
	      "%s: shut down, it refuses TCP's clients too: %s", fn,
	      errname(c < 0 ? errno : 0));
	if (c >= 0)
		close(c);
	close(l);

	len = mkaddr(fam, addr, port + 2, &ss);
	l = listener_on(fam, proto, &ss, len, 0);
	c = tcp_connect(fam, &ss, len);
	CHECK(l >= 0 && c < 0 && errno == ECONNREFUSED,
	      "%s: SDP_FALLBACK 0: an SDP-only listener: %s", fn,
	      errname(c < 0 ? errno : 0));
	if (c >= 0)
		close(c);
	close(l);

	len = mkaddr(fam, addr, port + 6, &ss);
	l = listener_on(fam, proto, &ss, len, -1);
	close(l);
	c = tcp_connect(fam, &ss, len);
	CHECK(l >= 0 && c < 0 && errno == ECONNREFUSED,
	      "%s: closed, it refuses TCP's clients too: %s", fn,
	      errname(c < 0 ? errno : 0));
	if (c >= 0)
		close(c);

	len = mkaddr(fam, addr, port + 4, &ss);
	t = listener_on(fam, IPPROTO_TCP, &ss, len, -1);
	l = listener_on(fam, proto, &ss, len, -1);
	CHECK(t >= 0 && l >= 0 &&
	      sdp_stat_of("ListenFallbackFails") == fails + 1,
	      "%s: a port TCP holds: SDP only, ListenFallbackFails", fn);
	c = tcp_connect(fam, &ss, len);
	s = accept_one(t);
	CHECK(c >= 0 && s >= 0, "%s: ... TCP's clients reach TCP's listener",
	      fn);
	close(s);
	close(c);
	close(l);
	close(t);
}

static void fallback_family(int fam, const char *addr, int port)
{
	const char *fn = fam == AF_INET ? "AF_INET" : "AF_INET6";
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(fam, addr, port, &ss);
	long fbs = sdp_stat_of("ConnFallbacks");
	struct epoll_event ev = { .events = EPOLLOUT };
	int l, c, s, one = 1, ep, r;

	l = socket(fam, SOCK_STREAM, IPPROTO_TCP);	/* TCP only */
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(!bind(l, (struct sockaddr *)&ss, len) && !listen(l, 4),
	      "%s: a TCP-only server", fn);

	c = socket(fam, SOCK_STREAM, proto);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	r = connect(c, (struct sockaddr *)&ss, len);
	CHECK(!r, "%s: blocking IPPROTO_SDP connect reaches it: %s", fn,
	      errname(r ? errno : 0));
	s = accept(l, NULL, NULL);
	CHECK(getint(c, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP &&
	      getint(c, IPPROTO_TCP, TCP_NODELAY) == 1,
	      "%s: ... by TCP (SO_PROTOCOL %d), TCP_NODELAY carried over", fn,
	      getint(c, SOL_SOCKET, SO_PROTOCOL));
	CHECK(s >= 0 && both_ways(c, s), "%s: ... 1 MiB each way", fn);
	close(c);
	CHECK(s >= 0 && recv(s, &r, 1, 0) == 0, "%s: ... EOF after close", fn);
	close(s);

	c = socket(fam, SOCK_STREAM | SOCK_NONBLOCK, proto);
	ep = epoll_create1(0);
	ev.data.fd = c;
	CHECK(!epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev), "%s: epoll set", fn);
	r = connect(c, (struct sockaddr *)&ss, len);
	CHECK(!r || errno == EINPROGRESS,
	      "%s: non-blocking connect: %s", fn, errname(r ? errno : 0));
	r = epoll_wait(ep, &ev, 1, 20000);
	CHECK(r == 1 && (ev.events & EPOLLOUT) &&
	      getint(c, SOL_SOCKET, SO_ERROR) == 0 &&
	      getint(c, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP,
	      "%s: ... epoll says writable, SO_ERROR 0, a TCP socket", fn);
	s = accept(l, NULL, NULL);
	fcntl(c, F_SETFL, 0);
	CHECK(s >= 0 && both_ways(c, s), "%s: ... 1 MiB each way", fn);
	close(c);
	close(s);
	close(ep);
	CHECK(sdp_stat_of("ConnFallbacks") == fbs + 2,
	      "%s: two connects went on by TCP (ConnFallbacks +%ld)", fn,
	      sdp_stat_of("ConnFallbacks") - fbs);

	close(l);	/* no server at all: TCP's answer */
	c = socket(fam, SOCK_STREAM, proto);
	r = connect(c, (struct sockaddr *)&ss, len);
	CHECK(r && errno == ECONNREFUSED, "%s: no server: %s", fn,
	      errname(r ? errno : 0));
	close(c);
}

int main(int argc, char **argv)
{
	int fd;

	proto = sdp_module_param("ipproto_sdp", IPPROTO_SDP);
	if (argc >= 5 && !strcmp(argv[1], "fallback")) {
		fallback_family(AF_INET, argv[2], atoi(argv[4]));
		fallback_family(AF_INET6, argv[3], atoi(argv[4]) + 1);
		return check_exit();
	}
	if (argc >= 5 && !strcmp(argv[1], "twin")) {
		twin_family(AF_INET, argv[2], atoi(argv[4]));
		twin_family(AF_INET6, argv[3], atoi(argv[4]) + 1);
		return check_exit();
	}
	if (argc >= 4 && !strcmp(argv[1], "fbopt")) {
		struct sockaddr_storage ss;
		socklen_t len = mkaddr(AF_INET, argv[2], atoi(argv[3]), &ss);
		int l = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP), one = 1, r;
		int zero = 0, two = 2;
		int f27 = socket(sdp_module_param("af_inet_sdp", AF_INET_SDP),
				 SOCK_STREAM, 0);

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		bind(l, (struct sockaddr *)&ss, len);
		listen(l, 4);
		fd = socket(AF_INET, SOCK_STREAM, proto);
		CHECK(getint(fd, SOL_SDP, SDP_FALLBACK) == 1 &&
		      getint(f27, SOL_SDP, SDP_FALLBACK) == 0,
		      "SDP_FALLBACK: 1 on IPPROTO_SDP, 0 on family 27");
		CHECK(setsockopt(f27, SOL_SDP, SDP_FALLBACK, &one,
				 sizeof(one)) && errno == EOPNOTSUPP,
		      "... family 27 cannot fall back: %s", errname(errno));
		CHECK(setsockopt(fd, SOL_SDP, SDP_FALLBACK, &two,
				 sizeof(two)) && errno == EINVAL,
		      "... 2: %s", errname(errno));
		CHECK(!setsockopt(fd, SOL_SDP, SDP_FALLBACK, &zero,
				  sizeof(zero)) &&
		      getint(fd, SOL_SDP, SDP_FALLBACK) == 0,
		      "... set to 0");
		r = connect(fd, (struct sockaddr *)&ss, len);
		CHECK(r && errno == ECONNREFUSED,
		      "SDP_FALLBACK 0: a TCP-only server refuses: %s",
		      errname(r ? errno : 0));
		return check_exit();
	}
	if (argc >= 4 && !strcmp(argv[1], "nofallback")) {
		struct sockaddr_storage ss;
		socklen_t len = mkaddr(AF_INET, argv[2], atoi(argv[3]), &ss);
		int l = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP), one = 1, r;

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		bind(l, (struct sockaddr *)&ss, len);
		listen(l, 4);
		fd = socket(AF_INET, SOCK_STREAM, proto);
		r = connect(fd, (struct sockaddr *)&ss, len);
		CHECK(r && errno == ECONNREFUSED,
		      "ipproto_fallback=0: a TCP-only server refuses: %s",
		      errname(r ? errno : 0));
		return check_exit();
	}
	if (argc < 4) {
		fprintf(stderr, "usage: %s ADDR ADDR6 PORT\n", argv[0]);
		return 2;
	}
	one_family(AF_INET, argv[1], atoi(argv[3]));
	one_family(AF_INET6, argv[2], atoi(argv[3]) + 1);
	unused_fallback(argv[1], atoi(argv[3]) + 2);

	fd = socket(AF_INET, SOCK_DGRAM, proto);
	CHECK(fd < 0 && errno == EPROTONOSUPPORT,
	      "SOCK_DGRAM with IPPROTO_SDP: %s", errname(fd < 0 ? errno : 0));
	fd = socket(AF_INET6, SOCK_SEQPACKET, proto);
	CHECK(fd < 0 && (errno == EPROTONOSUPPORT || errno == ESOCKTNOSUPPORT),
	      "SOCK_SEQPACKET with IPPROTO_SDP: %s",
	      errname(fd < 0 ? errno : 0));
	return check_exit();
}
