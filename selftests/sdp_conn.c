// SPDX-License-Identifier: GPL-2.0
/*
 * Connection semantics, printed so that a TCP run and an SDP run can be
 * compared line by line: each case prints "case: what a program sees".
 *
 * Usage: sdp_conn tcp|sdp ADDR BASEPORT
 *        sdp_conn sdp-only ADDR BASEPORT   (what TCP has no answer for)
 *
 * Cases: ECONNREFUSED, EADDRINUSE, SO_REUSEADDR, non-blocking connect
 * (EINPROGRESS, POLLOUT, SO_ERROR) to a listener and to nothing,
 * connect twice (EISCONN), recv/send unconnected, accept non-blocking,
 * getsockname/getpeername on both ends, half-close in both directions,
 * EOF after an orderly close with data queued, SO_LINGER {1,0} reset,
 * close with unread data, write after the peer closed, poll masks along
 * the way.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "check.h"

static int family;
static const char *addr;
static int base_port;

#define OUT(name, fmt, ...) \
	do { printf("%-28s| " fmt "\n", name, ##__VA_ARGS__); fflush(stdout); } while (0)

static const char *res(int ret)
{
	return ret < 0 ? errname(errno) : "ok";
}

static const char *pollmask(short m)
{
	static char buf[128];

	buf[0] = 0;
	if (m & POLLIN)
		strcat(buf, "IN|");
	if (m & POLLOUT)
		strcat(buf, "OUT|");
	if (m & POLLERR)
		strcat(buf, "ERR|");
	if (m & POLLHUP)
		strcat(buf, "HUP|");
	if (m & POLLRDHUP)
		strcat(buf, "RDHUP|");
	if (!buf[0])
		return "0";
	buf[strlen(buf) - 1] = 0;
	return buf;
}

static short pollfd_mask(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP };

	if (poll(&p, 1, timeout_ms) < 0)
		return -1;
	return p.revents;
}

static struct sockaddr_in sa(int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	inet_pton(AF_INET, addr, &s.sin_addr);
	return s;
}

static int mk(void)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0) {
		perror("socket");
		exit(2);
	}
	return fd;
}

static int listener(int port)
{
	struct sockaddr_in s = sa(port);
	int fd = mk();

	if (bind(fd, (struct sockaddr *)&s, sizeof(s)) || listen(fd, 16)) {
		perror("listener");
		exit(2);
	}
	return fd;
}

static int conn(int port)
{
	struct sockaddr_in s = sa(port);
	int fd = mk();

	if (connect(fd, (struct sockaddr *)&s, sizeof(s))) {
		perror("connect");
		exit(2);
	}
	return fd;
}

/* A connected pair: *c the client end, *s the accepted end. */
static void pair(int port, int *c, int *s)
{
	int l = listener(port);

	*c = conn(port);
	*s = accept(l, NULL, NULL);
	if (*s < 0) {
		perror("accept");
		exit(2);
	}
	close(l);
}

static const char *rd(int fd, int flags)
{
	static char buf[64];
	char b[16];
	ssize_t n = recv(fd, b, sizeof(b), flags);

	if (n < 0)
		return errname(errno);
	snprintf(buf, sizeof(buf), "%zd bytes", n);
	return buf;
}

static int ioctl_inq(int fd)
{
	int n = -1;

	ioctl(fd, FIONREAD, &n);
	return n;
}

static void case_refused(int port)
{
	struct sockaddr_in s = sa(port);
	int fd = mk();

	OUT("refused", "%s", res(connect(fd, (struct sockaddr *)&s, sizeof(s))));
	OUT("refused retry", "%s", res(connect(fd, (struct sockaddr *)&s, sizeof(s))));
	close(fd);
}

static void case_addrinuse(int port)
{
	struct sockaddr_in s = sa(port);
	int a = listener(port), b = mk(), one = 1;

	OUT("bind in use", "%s", res(bind(b, (struct sockaddr *)&s, sizeof(s))));
	close(b);
	close(a);
	a = mk();
	b = mk();
	setsockopt(a, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	OUT("reuseaddr bind 1", "%s", res(bind(a, (struct sockaddr *)&s, sizeof(s))));
	OUT("reuseaddr bind 2", "%s", res(bind(b, (struct sockaddr *)&s, sizeof(s))));
	OUT("reuseaddr listen 1", "%s", res(listen(a, 1)));
	close(a);
	close(b);
	a = mk();
	OUT("bind after close", "%s", res(bind(a, (struct sockaddr *)&s, sizeof(s))));
	OUT("bind twice", "%s", res(bind(a, (struct sockaddr *)&s, sizeof(s))));
	close(a);
}

static void case_nonblock(int port)
{
	struct sockaddr_in s = sa(port);
	int l = listener(port), fd = mk(), err = -1, n;
	socklen_t len = sizeof(err);

	fcntl(fd, F_SETFL, O_NONBLOCK);
	OUT("nb connect", "%s", res(connect(fd, (struct sockaddr *)&s, sizeof(s))));
	OUT("nb poll", "%s", pollmask(pollfd_mask(fd, 30000)));
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
	OUT("nb SO_ERROR", "%s", errname(err));
	OUT("nb connect again", "%s", res(connect(fd, (struct sockaddr *)&s, sizeof(s))));
	OUT("nb connect third", "%s", res(connect(fd, (struct sockaddr *)&s, sizeof(s))));
	n = accept(l, NULL, NULL);
	OUT("nb accepted", "%s", res(n));
	OUT("nb recv empty", "%s", rd(fd, 0));
	close(n);
	close(fd);

	fcntl(l, F_SETFL, O_NONBLOCK);
	OUT("accept nonblock", "%s", res(accept(l, NULL, NULL)));
	close(l);

	fd = mk();
	fcntl(fd, F_SETFL, O_NONBLOCK);
	OUT("nb refused connect", "%s", res(connect(fd, (struct sockaddr *)&s, sizeof(s))));
	OUT("nb refused poll", "%s", pollmask(pollfd_mask(fd, 30000)));
	err = -1;
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
	OUT("nb refused SO_ERROR", "%s", errname(err));
	OUT("nb refused SO_ERROR 2", "%s",
	    (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len), errname(err)));
	close(fd);
}

static void case_unconnected(int port)
{
	struct sockaddr_in s = sa(port), got;
	socklen_t len = sizeof(got);
	int fd = mk();
	char c = 0;

	OUT("new poll", "%s", pollmask(pollfd_mask(fd, 0)));
	OUT("recv unconnected", "%s", rd(fd, MSG_DONTWAIT));
	OUT("send unconnected", "%s", res(send(fd, &c, 1, MSG_NOSIGNAL)));
	OUT("getpeername unconn", "%s", res(getpeername(fd, (struct sockaddr *)&got, &len)));
	OUT("shutdown unconnected", "%s", res(shutdown(fd, SHUT_WR)));
	OUT("bind short addr", "%s", res(bind(fd, (struct sockaddr *)&s, 8)));
	s.sin_family = AF_UNIX;
	OUT("bind bad family", "%s", res(bind(fd, (struct sockaddr *)&s, sizeof(s))));
	OUT("connect bad family", "%s", res(connect(fd, (struct sockaddr *)&s, sizeof(s))));
	close(fd);
}

static void case_names(int port)
{
	struct sockaddr_in a, b, c, d;
	socklen_t len = sizeof(a);
	int cl, sv;

	pair(port, &cl, &sv);
	getsockname(cl, (struct sockaddr *)&a, &len);
	len = sizeof(b);
	getpeername(sv, (struct sockaddr *)&b, &len);
	len = sizeof(c);
	getpeername(cl, (struct sockaddr *)&c, &len);
	len = sizeof(d);
	getsockname(sv, (struct sockaddr *)&d, &len);
	OUT("names families", "%d %d %d %d len %u", a.sin_family,
	    b.sin_family, c.sin_family, d.sin_family, len);
	OUT("client name = peer of server", "%s",
	    a.sin_port == b.sin_port && a.sin_addr.s_addr == b.sin_addr.s_addr &&
	    a.sin_port ? "yes" : "no");
	OUT("server name = peer of client", "%s",
	    c.sin_port == d.sin_port && c.sin_addr.s_addr == d.sin_addr.s_addr &&
	    ntohs(d.sin_port) == port ? "yes" : "no");
	OUT("connect twice", "%s", res(connect(cl, (struct sockaddr *)&c, sizeof(c))));
	OUT("established poll", "%s", pollmask(pollfd_mask(cl, 0)));
	close(cl);
	close(sv);
}

static void case_halfclose(int port)
{
	int cl, sv;

	pair(port, &cl, &sv);
	OUT("shut wr", "%s", res(shutdown(cl, SHUT_WR)));
	OUT("peer reads EOF", "%s", rd(sv, 0));
	OUT("peer poll after EOF", "%s", pollmask(pollfd_mask(sv, 0)));
	OUT("peer sends back", "%s", res(send(sv, "pong", 4, 0)));
	OUT("half-closed reads", "%s", rd(cl, 0));
	OUT("write after shut wr", "%s", res(send(cl, "x", 1, MSG_NOSIGNAL)));
	OUT("peer closes", "%s", res(close(sv)));
	OUT("then EOF", "%s", rd(cl, 0));
	OUT("poll after both", "%s", pollmask(pollfd_mask(cl, 0)));
	close(cl);

	/* the other order: the accepted end half-closes first */
	pair(port + 1, &cl, &sv);
	OUT("srv shut wr", "%s", res(shutdown(sv, SHUT_WR)));
	OUT("cli reads EOF", "%s", rd(cl, 0));
	OUT("cli sends", "%s", res(send(cl, "ping", 4, 0)));
	OUT("srv reads", "%s", rd(sv, 0));
	OUT("shut rdwr", "%s", res(shutdown(cl, SHUT_RDWR)));
	OUT("srv EOF", "%s", rd(sv, 0));
	close(cl);
	close(sv);
}

static void case_eof(int port)
{
	static char buf[1 << 20];
	size_t total = 0;
	ssize_t n;
	int cl, sv;

	pair(port, &cl, &sv);
	memset(buf, 'e', sizeof(buf));
	OUT("write 1 MiB then close", "%s",
	    send(sv, buf, sizeof(buf), 0) == sizeof(buf) ? "ok" : "short");
	close(sv);
	while ((n = recv(cl, buf, sizeof(buf), 0)) > 0)
		total += n;
	OUT("read all then", "%zu bytes, %s", total, n < 0 ? errname(errno) : "EOF");
	close(cl);
}

static void case_reset(int port)
{
	struct linger lg = { 1, 0 };
	int cl, sv;

	pair(port, &cl, &sv);
	setsockopt(cl, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(cl);
	usleep(500000);
	OUT("linger0: peer poll", "%s", pollmask(pollfd_mask(sv, 0)));
	OUT("linger0: peer read", "%s", rd(sv, 0));
	OUT("linger0: peer read 2", "%s", rd(sv, 0));
	OUT("linger0: peer write", "%s", res(send(sv, "x", 1, MSG_NOSIGNAL)));
	close(sv);

	pair(port + 1, &cl, &sv);
	send(sv, "unread", 6, 0);
	usleep(500000);
	close(cl);
	usleep(500000);
	OUT("unread close: peer read", "%s", rd(sv, 0));
	close(sv);
}

/* SO_LINGER {1, 1} with the peer not reading: close() waits the second,
 * then the data still arrives in full once the peer reads.
 */
static void case_linger(int port)
{
	static char buf[1 << 16];
	struct linger lg = { 1, 1 };
	struct timespec a, b;
	size_t sent = 0, got = 0;
	ssize_t n;
	int cl, sv;

	pair(port, &cl, &sv);
	fcntl(cl, F_SETFL, O_NONBLOCK);
	while ((n = send(cl, buf, sizeof(buf), 0)) > 0)
		sent += n;
	fcntl(cl, F_SETFL, 0);
	setsockopt(cl, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	clock_gettime(CLOCK_MONOTONIC, &a);
	OUT("linger 1s: close", "%s", res(close(cl)));
	clock_gettime(CLOCK_MONOTONIC, &b);
	OUT("linger 1s: close took", "%.0f s", (b.tv_sec - a.tv_sec) +
	    (b.tv_nsec - a.tv_nsec) / 1e9);
	while ((n = recv(sv, buf, sizeof(buf), 0)) > 0)
		got += n;
	OUT("linger 1s: peer got all", "%s, then %s", got == sent ? "yes" : "no",
	    n < 0 ? errname(errno) : "EOF");
	close(sv);
}

static void case_peer_closed(int port)
{
	int cl, sv;
	char c = 'x';

	signal(SIGPIPE, SIG_IGN);
	pair(port, &cl, &sv);
	close(sv);
	usleep(500000);
	OUT("peer closed: read", "%s", rd(cl, 0));
	OUT("peer closed: write 1", "%s", res(send(cl, &c, 1, 0)));
	usleep(500000);
	OUT("peer closed: write 2", "%s", res(send(cl, &c, 1, 0)));
	OUT("peer closed: write 3", "%s", res(send(cl, &c, 1, 0)));
	OUT("peer closed: poll", "%s", pollmask(pollfd_mask(cl, 0)));
	close(cl);
	signal(SIGPIPE, SIG_DFL);
}

static void case_unreachable(void)
{
	struct sockaddr_in s = sa(9);
	int fd = mk();

	/* an address on the test bed's subnet that nobody answers ARP for */
	s.sin_addr.s_addr = htonl(ntohl(s.sin_addr.s_addr) + 98);
	OUT("unreachable", "%s", res(connect(fd, (struct sockaddr *)&s, sizeof(s))));
	close(fd);
}

static long stat_of(const char *name)
{
	FILE *f = fopen("/proc/net/sdpstats", "r");
	char n[64];
	long v = -1, x;

	while (f && fscanf(f, "%63s %ld", n, &x) == 2)
		if (!strcmp(n, name))
			v = x;
	if (f)
		fclose(f);
	return v;
}

/* SO_RCVBUF on the listener (4 receive buffers for its children) and
 * SO_SNDBUF on the client (2 send buffers): a non-blocking sender with a
 * peer that does not read fits exactly 3 messages into the peer (one
 * credit is kept back) and 2 more into its own send buffers.
 */
static void small_buffers(int port)
{
	static char buf[1 << 16];
	int rcv = 64 * 1024, snd = 32 * 1024, l, cl, sv;
	struct sockaddr_in s = sa(port);
	size_t sent = 0, got = 0;
	ssize_t n;

	l = mk();
	setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (bind(l, (struct sockaddr *)&s, sizeof(s)) || listen(l, 1))
		exit(2);
	cl = mk();
	setsockopt(cl, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
	if (connect(cl, (struct sockaddr *)&s, sizeof(s)))
		exit(2);
	sv = accept(l, NULL, NULL);
	fcntl(cl, F_SETFL, O_NONBLOCK);
	usleep(200000);
	while ((n = send(cl, buf, sizeof(buf), 0)) > 0)
		sent += n;
	OUT("small buffers: send took", "%zu bytes, then %s", sent,
	    errname(errno));
	fcntl(cl, F_SETFL, 0);
	if (!fork()) {
		/* 3.2 MiB more through the 4 buffers while the peer reads */
		for (n = 0; n < 50; n++)
			send(cl, buf, sizeof(buf), 0);
		shutdown(cl, SHUT_WR);
		_exit(0);
	}
	sent += 50 * sizeof(buf);
	while ((n = recv(sv, buf, sizeof(buf), 0)) > 0)
		got += n;
	wait(NULL);
	OUT("small buffers: peer got all", "%s", got == sent ? "yes" : "no");
	close(cl);
	close(sv);
	close(l);
}

/* listen(fd, 1): two connections wait for accept(), a third is refused
 * (TCP would let it wait in SYN_SENT instead).
 */
static void backlog(int port)
{
	struct sockaddr_in s = sa(port);
	int l = mk(), c[3], i;

	if (bind(l, (struct sockaddr *)&s, sizeof(s)) || listen(l, 1))
		exit(2);
	for (i = 0; i < 3; i++) {
		c[i] = mk();
		OUT(i == 2 ? "backlog 1: connect 3" : "backlog 1: connect 1-2",
		    "%s", res(connect(c[i], (struct sockaddr *)&s, sizeof(s))));
	}
	for (i = 0; i < 3; i++)
		close(c[i]);
	close(l);
}

/* What only SDP has: no RDMA device behind an address, SDP_LAST_BIND_ERR,
 * TCP_CORK and Nagle seen in the message counters.
 */
static void sdp_extras(int port)
{
	struct sockaddr_in lo = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	int fd = mk(), err = -1, one = 1, zero = 0, cl, sv, i;
	socklen_t len = sizeof(err);
	long before;
	char c = 'c';

	inet_pton(AF_INET, "127.0.0.1", &lo.sin_addr);
	OUT("connect 127.0.0.1", "%s", res(connect(fd, (struct sockaddr *)&lo, sizeof(lo))));
	getsockopt(fd, SOL_SDP, SDP_LAST_BIND_ERR, &err, &len);
	OUT("  SDP_LAST_BIND_ERR", "%s", errname(err));
	close(fd);
	fd = mk();
	OUT("bind 127.0.0.1", "%s", res(bind(fd, (struct sockaddr *)&lo, sizeof(lo))));
	getsockopt(fd, SOL_SDP, SDP_LAST_BIND_ERR, &err, &len);
	OUT("  SDP_LAST_BIND_ERR", "%s", errname(err));
	close(fd);

	small_buffers(port + 1);
	backlog(port + 2);

	pair(port, &cl, &sv);
	setsockopt(cl, IPPROTO_TCP, TCP_CORK, &one, sizeof(one));
	before = stat_of("TxData");
	for (i = 0; i < 100; i++)
		send(cl, &c, 1, 0);
	usleep(200000);
	OUT("corked: messages sent", "%ld", stat_of("TxData") - before);
	setsockopt(cl, IPPROTO_TCP, TCP_CORK, &zero, sizeof(zero));
	usleep(200000);
	OUT("uncorked: messages sent", "%ld", stat_of("TxData") - before);
	OUT("peer has", "%d bytes", (usleep(100000), ioctl_inq(sv)));

	setsockopt(cl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	before = stat_of("TxData");
	for (i = 0; i < 100; i++)
		send(cl, &c, 1, 0);
	usleep(200000);
	OUT("nodelay: messages sent", "%ld", stat_of("TxData") - before);
	close(cl);
	close(sv);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: sdp_conn tcp|sdp ADDR BASEPORT\n");
		return 2;
	}
	alarm(300);
	family = !strcmp(argv[1], "tcp") ? AF_INET : 27;
	addr = argv[2];
	base_port = atoi(argv[3]);
	if (!strcmp(argv[1], "sdp-only")) {
		sdp_extras(base_port);
		return 0;
	}

	case_refused(base_port);
	case_addrinuse(base_port + 1);
	case_nonblock(base_port + 2);
	case_unconnected(base_port + 3);
	case_names(base_port + 4);
	case_halfclose(base_port + 5);
	case_eof(base_port + 7);
	case_reset(base_port + 8);
	case_peer_closed(base_port + 10);
	case_linger(base_port + 11);
	case_unreachable();
	return 0;
}
