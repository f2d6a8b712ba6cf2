// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_ports: ports and listeners between users, as TCP has them (issue
 * 34, claim 3).
 *
 *   sdp_ports tcp|sdp PORT V4 V4B V6
 *
 * Runs every case below on that family and prints one line per step,
 * "CASE: STEP: RESULT", RESULT "ok", the errno's name, or whose listener
 * took a client; local_ports.sh runs it for tcp and for sdp and compares
 * the lines.  A listener of root's holds a port on a local address;
 * another user (nobody, 65534), or root again, binds and listens there
 * with SO_REUSEADDR, keeping its listener while a client connects to
 * root's address.  On loopback (which rdma_cm binds without a device),
 * and on V4, V4B and V6, addresses of an interface no RDMA device has
 * (where only local connections come).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <linux/sdp.h>

#define NOBODY	65534

static bool sdp;

union sa {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

static const char *ename(int e)
{
	return strerrorname_np(e) ?: "?";
}

static socklen_t addr_of(union sa *u, const char *a, int port)
{
	memset(u, 0, sizeof(*u));
	if (strchr(a, ':')) {
		u->in6.sin6_family = AF_INET6;
		u->in6.sin6_port = htons(port);
		inet_pton(AF_INET6, a, &u->in6.sin6_addr);
		return sizeof(u->in6);
	}
	u->in.sin_family = AF_INET;
	u->in.sin_port = htons(port);
	inet_pton(AF_INET, a, &u->in.sin_addr);
	return sizeof(u->in);
}

static int new_sock(const char *a, bool reuse)
{
	bool v6 = strchr(a, ':');
	int fam = sdp ? (v6 ? AF_INET6_SDP : AF_INET_SDP) :
			(v6 ? AF_INET6 : AF_INET);
	int fd = socket(fam, SOCK_STREAM, 0), one = 1;

	if (fd >= 0 && reuse)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	return fd;
}

/* bind and listen; "ok" or "bind E..." / "listen E..."; *fd the listener */
static const char *bind_listen(const char *a, int port, int *fd)
{
	static char res[64];
	union sa u;
	socklen_t len = addr_of(&u, a, port);

	*fd = new_sock(a, true);
	if (*fd < 0) {
		snprintf(res, sizeof(res), "socket %s", ename(errno));
		return res;
	}
	if (bind(*fd, &u.sa, len)) {
		snprintf(res, sizeof(res), "bind %s", ename(errno));
		close(*fd);
		*fd = -1;
		return res;
	}
	if (listen(*fd, 8)) {
		snprintf(res, sizeof(res), "listen %s", ename(errno));
		close(*fd);
		*fd = -1;
		return res;
	}
	return "ok";
}

/* connect to a:port; which of the two listeners took it */
static const char *whose(const char *a, int port, int root_fd, int other_fd)
{
	static char res[64];
	union sa u;
	socklen_t len = addr_of(&u, a, port);
	struct pollfd p[2] = {
		{ .fd = root_fd, .events = POLLIN },
		{ .fd = other_fd, .events = POLLIN },
	};
	int c = new_sock(a, false), n;

	if (connect(c, &u.sa, len)) {
		snprintf(res, sizeof(res), "%s", ename(errno));
		close(c);
		return res;
	}
	n = poll(p, other_fd >= 0 ? 2 : 1, 5000);
	close(c);
	if (n <= 0)
		return "nobody accepted";
	if (p[0].revents & POLLIN) {
		close(accept(root_fd, NULL, NULL));
		return "root";
	}
	close(accept(other_fd, NULL, NULL));
	return "other";
}

static void run(const char *name, const char *mine, const char *theirs,
		uid_t uid, int port)
{
	char out[128] = "";
	const char *r;
	int ls, pfd[2], fd;
	pid_t pid;

	r = bind_listen(mine, port, &ls);
	printf("%s: root listens: %s\n", name, r);
	if (ls < 0)
		return;
	if (pipe(pfd))
		exit(2);
	pid = fork();
	if (!pid) {
		close(pfd[0]);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			exit(2);
		r = bind_listen(theirs, port, &fd);
		snprintf(out, sizeof(out), "%s", r);
		if (fd >= 0)
			snprintf(out, sizeof(out),
				 "ok, a client to root's address: %s",
				 whose(mine, port, ls, fd));
		if (write(pfd[1], out, strlen(out)) < 0)
			exit(2);
		exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], out, sizeof(out) - 1) < 0)
		out[0] = 0;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	printf("%s: the other binds and listens: %s\n", name, out);
	printf("%s: a client to root's address: %s\n", name,
	       whose(mine, port, ls, -1));
	close(ls);
}

/* The cases on @v4 (and the IPv4 wildcard) and @v6 (and [::]); @v4b
 * another address of the same interface.
 */
static int cases(const char *what, const char *v4, const char *v4b,
		 const char *v6, int port)
{
	char n[128];

	snprintf(n, sizeof(n), "%s, other user", what);
	run(n, v4, v4, NOBODY, ++port);
	snprintf(n, sizeof(n), "%s, same user", what);
	run(n, v4, v4, 0, ++port);
	snprintf(n, sizeof(n), "%s, other user on the wildcard", what);
	run(n, v4, "0.0.0.0", NOBODY, ++port);
	snprintf(n, sizeof(n), "%s, wildcard first, other user", what);
	run(n, "0.0.0.0", v4, NOBODY, ++port);
	snprintf(n, sizeof(n), "%s IPv6, other user", what);
	run(n, v6, v6, NOBODY, ++port);
	snprintf(n, sizeof(n), "%s IPv6, other user on [::]", what);
	run(n, v6, "::", NOBODY, ++port);
	snprintf(n, sizeof(n), "%s, other user on another address", what);
	run(n, v4, v4b, NOBODY, ++port);
	return port;
}

int main(int argc, char **argv)
{
	int port;

	if (argc != 6 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "sdp"))) {
		fprintf(stderr, "usage: sdp_ports tcp|sdp PORT V4 V4B V6\n");
		return 2;
	}
	sdp = !strcmp(argv[1], "sdp");
	port = atoi(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	port = cases("loopback", "127.0.0.1", "127.0.0.2", "::1", port);
	cases("no RDMA device", argv[3], argv[4], argv[5], port);
	return 0;
}
