// SPDX-License-Identifier: GPL-2.0
/*
 * SO_REUSEPORT: many listeners on one port, connections spread across
 * them (Documentation/sdp.rst, "SO_REUSEPORT").
 *
 *   sdp_reuseport PROTO BIND CONNECT PORT
 *	PROTO is 261 (IPPROTO_SDP) or 6 (TCP, to show TCP gives the same
 *	answers).  Four sockets with SO_REUSEPORT bind BIND:PORT and
 *	listen, a fifth binds and does not listen; a socket without
 *	SO_REUSEPORT, and one of another user with it, are refused
 *	(EADDRINUSE).  64 clients connect to CONNECT:PORT: every one is
 *	accepted by one of the four listeners (never the fifth), each
 *	listener gets some, and every connection carries 16 KiB checked.
 *	One listener closes: 32 more clients are all accepted by the other
 *	three.  All close: a client is refused, and a socket without
 *	SO_REUSEPORT may listen on the port again.
 *   sdp_reuseport 6 BIND CONNECT PORT libsdp
 *	The same, under libsdp's rules, without what libsdp cannot show
 *	(it swaps in an SDP socket at listen(), so bind() is TCP's): no
 *	idle member, no refused binds.
 * Exits 0 if all was right.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define NLISTEN		4
#define NCONN		64
#define NMORE		32
#define PAYLOAD		(16 * 1024)

static int proto;
static struct sockaddr_storage bind_addr, conn_addr;
static socklen_t bind_len, conn_len;

static socklen_t parse(const char *s, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		return sizeof(*sin);
	}
	if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return sizeof(*sin6);
	}
	fprintf(stderr, "bad address %s\n", s);
	exit(KSFT_FAIL);
}

/* A socket bound to BIND:PORT, with option @opt (SO_REUSEPORT,
 * SO_REUSEADDR or 0): fd, or -errno.
 */
static int bound_with(int opt)
{
	int fd, one = 1, err;

	fd = socket(bind_addr.ss_family, SOCK_STREAM, proto);
	if (fd < 0)
		return -errno;
	if (opt && setsockopt(fd, SOL_SOCKET, opt, &one, sizeof(one))) {
		err = -errno;
		close(fd);
		return err;
	}
	if (bind(fd, (struct sockaddr *)&bind_addr, bind_len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int bound(bool reuse)
{
	return bound_with(reuse ? SO_REUSEPORT : 0);
}

static int listener(void)
{
	int fd = bound(true);

	if (fd >= 0 && listen(fd, NCONN)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* bind() of a socket with SO_REUSEPORT made by user nobody: 0 or errno */
static int foreign_bind(void)
{
	int st, fd;
	pid_t pid = fork();

	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		fd = bound(true);
		_exit(fd >= 0 ? 0 : -fd);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int client(int idx)
{
	uint32_t v = idx;
	int fd;

	fd = socket(conn_addr.ss_family, SOCK_STREAM, proto);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&conn_addr, conn_len) ||
	    write(fd, &v, sizeof(v)) != sizeof(v)) {
		int err = -errno;

		close(fd);
		return err ? err : -EIO;
	}
	return fd;
}

static bool read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			return false;
		got += r;
	}
	return true;
}

static void pattern(unsigned char *p, int idx)
{
	for (int i = 0; i < PAYLOAD; i++)
		p[i] = (unsigned char)(idx * 131 + i * 7);
}

/*
 * Accept @n connections on the listeners in @ls (-1: closed), answering
 * each with its client's pattern, then closing both ends (the client's
 * first); count them per listener in @got.
 * Returns how many were accepted.
 */
static int serve(const int *ls, int n, int *got, int *clients)
{
	static unsigned char out[PAYLOAD], in[PAYLOAD];
	struct pollfd pfd[NLISTEN];
	int done = 0, bad = 0;

	while (done < n) {
		for (int i = 0; i < NLISTEN; i++) {
			pfd[i].fd = ls[i];
			pfd[i].events = POLLIN;
		}
		if (poll(pfd, NLISTEN, 20000) <= 0)
			break;
		for (int i = 0; i < NLISTEN; i++) {
			uint32_t idx;
			int c;

			if (!(pfd[i].revents & POLLIN))
				continue;
			c = accept(ls[i], NULL, NULL);
			if (c < 0)
				continue;
			if (!read_full(c, &idx, sizeof(idx)) ||
			    idx >= NCONN + NMORE) {
				bad++;
				close(c);
				continue;
			}
			pattern(out, idx);
			if (write(c, out, PAYLOAD) != PAYLOAD ||
			    !read_full(clients[idx], in, PAYLOAD) ||
			    memcmp(in, out, PAYLOAD))
				bad++;
			/* the client closes first: no TIME_WAIT on the port */
			close(clients[idx]);
			clients[idx] = -1;
			if (read(c, in, 1) != 0)
				bad++;
			close(c);
			got[i]++;
			done++;
		}
	}
	CHECK(!bad, "every accepted connection carried its 16 KiB (%d bad)",
	      bad);
	return done;
}

/* The last listener gone, the member that only bound keeps the port; it
 * may listen and take connections, and stop again; then it closes.
 */
static void idle_member(int idle, const char *name)
{
	struct pollfd pfd = { .fd = idle, .events = POLLIN };
	int fd, c = -1, err;

	fd = bound(false);
	CHECK(fd == -EADDRINUSE,
	      "%s: the bound member keeps the port: EADDRINUSE (%s)",
	      name, errname(fd < 0 ? -fd : 0));
	if (fd >= 0)
		close(fd);
	err = listen(idle, NCONN) ? errno : 0;
	fd = err ? -err : client(0);
	if (fd >= 0 && poll(&pfd, 1, 20000) == 1)
		c = accept(idle, NULL, NULL);
	CHECK(c >= 0, "%s: it listens now and takes a connection (%s)", name,
	      errname(fd < 0 ? -fd : c < 0 ? errno : 0));
	if (c >= 0)
		close(c);
	if (fd >= 0)
		close(fd);
	shutdown(idle, SHUT_RD);
	fd = client(0);
	CHECK(fd == -ECONNREFUSED, "%s: shut down, refused again (%s)", name,
	      errname(fd < 0 ? -fd : 0));
	if (fd >= 0)
		close(fd);
	close(idle);
}

int main(int argc, char **argv)
{
	int ls[NLISTEN], got[NLISTEN] = { 0 }, clients[NCONN + NMORE];
	int idle = -1, fd, err, n, fails, spread;
	bool libsdp = argc == 6 && !strcmp(argv[5], "libsdp");
	const char *name;

	if (argc != 5 && !libsdp) {
		fprintf(stderr, "usage: %s PROTO BIND CONNECT PORT [libsdp]\n",
			argv[0]);
		return KSFT_FAIL;
	}
	proto = atoi(argv[1]);
	name = proto == IPPROTO_TCP ? "TCP" : "SDP";
	bind_len = parse(argv[2], atoi(argv[4]), &bind_addr);
	conn_len = parse(argv[3], atoi(argv[4]), &conn_addr);

	for (int i = 0; i < NLISTEN; i++) {
		ls[i] = listener();
		CHECK(ls[i] >= 0, "%s: listener %d with SO_REUSEPORT on %s (%s)",
		      name, i, argv[2], errname(ls[i] < 0 ? -ls[i] : 0));
	}
	if (!libsdp) {
		idle = bound(true);
		CHECK(idle >= 0, "%s: a fifth binds with SO_REUSEPORT, no listen (%s)",
		      name, errname(idle < 0 ? -idle : 0));
		fd = bound(false);
		CHECK(fd == -EADDRINUSE, "%s: without SO_REUSEPORT: EADDRINUSE (%s)",
		      name, errname(fd < 0 ? -fd : 0));
		if (fd >= 0)
			close(fd);
		err = foreign_bind();
		CHECK(err == EADDRINUSE,
		      "%s: another user's, with SO_REUSEPORT: EADDRINUSE (%s)",
		      name, err < 0 ? "?" : errname(err));
	}

	fails = 0;
	for (int i = 0; i < NCONN; i++) {
		clients[i] = client(i);
		if (clients[i] < 0)
			fails++;
	}
	CHECK(!fails, "%s: %d clients connect (%d failed)", name, NCONN, fails);
	n = serve(ls, NCONN - fails, got, clients);
	spread = 0;
	for (int i = 0; i < NLISTEN; i++)
		spread += got[i] > 0;
	CHECK(n == NCONN, "%s: all accepted by the listeners (%d: %d %d %d %d)",
	      name, n, got[0], got[1], got[2], got[3]);
	CHECK(spread == NLISTEN, "%s: spread over all %d listeners (%d)",
	      name, NLISTEN, spread);
	for (int i = 0; i < NCONN; i++)
		if (clients[i] >= 0)
			close(clients[i]);

	/* one listener goes: the others take every connection */
	close(ls[0]);
	ls[0] = -1;
	memset(got, 0, sizeof(got));
	fails = 0;
	for (int i = NCONN; i < NCONN + NMORE; i++) {
		clients[i] = client(i);
		if (clients[i] < 0)
			fails++;
	}
	CHECK(!fails, "%s: listener 0 closed: %d more connect (%d failed)",
	      name, NMORE, fails);
	n = serve(ls, NMORE - fails, got, clients);
	CHECK(n == NMORE && !got[0],
	      "%s: all accepted by the other three (%d: %d %d %d)",
	      name, n, got[1], got[2], got[3]);
	for (int i = NCONN; i < NCONN + NMORE; i++)
		if (clients[i] >= 0)
			close(clients[i]);

	for (int i = 1; i < NLISTEN; i++)
		close(ls[i]);
	fd = client(0);
	CHECK(fd == -ECONNREFUSED, "%s: no listener left: refused (%s)", name,
	      errname(fd < 0 ? -fd : 0));
	if (fd >= 0)
		close(fd);
	if (idle >= 0)
		idle_member(idle, name);
	fd = bound(false);
	if (fd >= 0 && listen(fd, 1))
		fd = -errno;
	CHECK(fd >= 0, "%s: all closed: the port is free for any socket (%s)",
	      name, errname(fd < 0 ? -fd : 0));
	if (fd >= 0)
		close(fd);
	return check_exit();
}
