// SPDX-License-Identifier: GPL-2.0
/*
 * What only SDP has, and TCP therefore cannot be compared with (the
 * differential suite, sdp_parity.c, covers everything else): no RDMA
 * device behind an address, SDP_LAST_BIND_ERR, SO_RCVBUF/SO_SNDBUF sizing
 * the rings, the bound on requests waiting for a full accept queue, and
 * TCP_CORK / TCP_NODELAY seen in the message counters.  Each case prints
 * "case | what a program sees" for conn_semantics.sh to check.
 *
 * Usage: sdp_conn ADDR BASEPORT
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

static int ioctl_inq(int fd)
{
	int n = -1;

	ioctl(fd, FIONREAD, &n);
	return n;
}

/* SO_RCVBUF on the listener (4 receive buffers for its children) and
 * SO_SNDBUF on the client (2 send buffers): a non-blocking sender with a
 * peer that does not read fits exactly 4 messages into the peer (one per
 * credit) and 2 more into its own send buffers.
 */
static void small_buffers(int port)
{
	static char buf[1 << 16];
	int rcv = 64 * 1024, snd = 32 * 1024, l, cl, sv, err;
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
	/* until no send buffer comes back: the peer's window is full */
	for (;;) {
		n = send(cl, buf, sizeof(buf), 0);
		if (n > 0) {
			sent += n;
			continue;
		}
		err = errno;
		if (err != EAGAIN || !(pollfd_mask(cl, 500) & POLLOUT))
			break;
	}
	OUT("small buffers: send took", "%zu bytes, then %s", sent,
	    errname(err));
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

/* listen(fd, 1) with net.ipv4.tcp_max_syn_backlog = 1 (set by the
 * caller): two connections wait in the accept queue, a third waits for
 * room, a fourth finds even that full and is refused.
 */
static void backlog(int port)
{
	struct sockaddr_in s = sa(port);
	int l = mk(), c[4], i, err;
	socklen_t len = sizeof(err);

	if (bind(l, (struct sockaddr *)&s, sizeof(s)) || listen(l, 1))
		exit(2);
	for (i = 0; i < 4; i++) {
		c[i] = mk();
		if (i >= 2)
			fcntl(c[i], F_SETFL, O_NONBLOCK);
		OUT(i < 2 ? "backlog 1: connect 1-2" : i == 2 ?
		    "backlog 1: connect 3" : "backlog 1: connect 4",
		    "%s", res(connect(c[i], (struct sockaddr *)&s, sizeof(s))));
	}
	OUT("backlog 1: 3 waits", "%s", pollmask(pollfd_mask(c[2], 1000)));
	OUT("backlog 1: 4 refused", "%s", pollmask(pollfd_mask(c[3], 10000)));
	err = 0;
	getsockopt(c[3], SOL_SOCKET, SO_ERROR, &err, &len);
	OUT("backlog 1: 4 SO_ERROR", "%s", errname(err));
	close(accept(l, NULL, NULL));
	OUT("backlog 1: 3 once there is room", "%s",
	    pollmask(pollfd_mask(c[2], 10000)));
	for (i = 0; i < 4; i++)
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
	before = sdp_stat_of("TxData");
	for (i = 0; i < 100; i++)
		send(cl, &c, 1, 0);
	/* well inside the cork's 200 ms ceiling (its own test is in
	 * sdp_parity), which the 100 sends on a slow test bed used to reach
	 */
	usleep(50000);
	OUT("corked: messages sent", "%ld", sdp_stat_of("TxData") - before);
	setsockopt(cl, IPPROTO_TCP, TCP_CORK, &zero, sizeof(zero));
	usleep(200000);
	OUT("uncorked: messages sent", "%ld", sdp_stat_of("TxData") - before);
	OUT("peer has", "%d bytes", (usleep(100000), ioctl_inq(sv)));

	setsockopt(cl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	before = sdp_stat_of("TxData");
	for (i = 0; i < 100; i++)
		send(cl, &c, 1, 0);
	usleep(200000);
	OUT("nodelay: messages sent", "%ld", sdp_stat_of("TxData") - before);
	close(cl);
	close(sv);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sdp_conn ADDR BASEPORT\n");
		return 2;
	}
	alarm(300);
	family = 27;
	addr = argv[1];
	base_port = atoi(argv[2]);
	sdp_extras(base_port);
	return 0;
}
