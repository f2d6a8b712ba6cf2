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
 *
 * And a client that waits for room in one listener's full accept queue,
 * disconnects (connect(AF_UNSPEC)) and connects to another listener,
 * also full (claim 5): when the first makes room, it must not take the
 * client that has gone; the second gets it, with its data.
 *
 * With a seventh argument NS (a name under /run/netns), the other binds
 * and listens in that network namespace instead, as root or nobody: its
 * loopback is its own, so it gets its own clients and never root's; and
 * a client there finds no listener of root's namespace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
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
static const char *other_ns;	/* the other's network namespace, if set */

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

static int enter_ns(const char *name)
{
	char path[128];
	int fd, err;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	err = setns(fd, CLONE_NEWNET);
	close(fd);
	return err;
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
		if (other_ns && enter_ns(other_ns))
			exit(2);
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

static int sa_port(int fd, bool peer)
{
	union sa u;
	socklen_t len = sizeof(u);

	if ((peer ? getpeername : getsockname)(fd, &u.sa, &len))
		return -errno;
	return ntohs(u.sa.sa_family == AF_INET6 ? u.in6.sin6_port :
		     u.in.sin_port);
}

/* a listener on 127.0.0.1:@port with backlog 0, its queue full (one
 * connection in it); *filler that connection's client
 */
static int full_listener(int port, int *filler)
{
	union sa u;
	socklen_t len = addr_of(&u, "127.0.0.1", port);
	int ls = new_sock("127.0.0.1", true);

	if (bind(ls, &u.sa, len) || listen(ls, 0))
		exit(2);
	*filler = new_sock("127.0.0.1", false);
	if (connect(*filler, &u.sa, len))
		exit(2);
	return ls;
}

static const char *nb_connect(int c, int port)
{
	union sa u;
	socklen_t len = addr_of(&u, "127.0.0.1", port);

	if (connect(c, &u.sa, len))
		return ename(errno);
	return "ok";
}

/* Claim 5: a connect() abandoned while it waited is not answered. */
static void moved(int port)
{
	const char *n = "waiting client moves to another listener";
	struct pollfd p = { .events = POLLIN };
	int l1, l2, f1, f2, c, a, err = 0;
	socklen_t elen = sizeof(err);
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	char b = 0;

	l1 = full_listener(port + 1, &f1);
	l2 = full_listener(port + 2, &f2);
	c = new_sock("127.0.0.1", false);
	fcntl(c, F_SETFL, O_NONBLOCK);
	printf("%s: connect to the first: %s\n", n, nb_connect(c, port + 1));
	printf("%s: AF_UNSPEC: %s\n", n,
	       connect(c, &unspec, sizeof(unspec)) ? ename(errno) : "ok");
	printf("%s: connect to the second: %s\n", n, nb_connect(c, port + 2));
	close(accept(l1, NULL, NULL));	/* room in the first */
	p.fd = l1;
	printf("%s: the first gets: %s\n", n,
	       poll(&p, 1, 1500) > 0 ? "a connection" : "nothing");
	close(accept(l2, NULL, NULL));	/* room in the second */
	p.fd = c;
	p.events = POLLOUT;
	poll(&p, 1, 8000);
	getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &elen);
	printf("%s: client: %s\n", n, err ? ename(err) : "connected");
	printf("%s: the client's peer: %s\n", n,
	       sa_port(c, true) == port + 2 ? "the second" : "not the second");
	if (write(c, "x", 1) != 1)
		b = '!';
	p.fd = l2;
	p.events = POLLIN;
	a = poll(&p, 1, 5000) > 0 ? accept(l2, NULL, NULL) : -1;
	p.fd = a;
	if (a >= 0 && poll(&p, 1, 5000) > 0 && read(a, &b, 1) != 1)
		b = '?';
	printf("%s: the second reads: %c\n", n, b ?: '-');
	close(a);
	close(c);
	close(f1);
	close(f2);
	close(l1);
	close(l2);
}

/* a client in @ns to 127.0.0.1:@port, where only root's namespace has a
 * listener
 */
static void ns_refused(const char *ns, int port)
{
	const char *n = "other namespace";
	union sa u;
	socklen_t len = addr_of(&u, "127.0.0.1", port);
	const char *r;
	int ls, c, st;
	pid_t pid;

	r = bind_listen("127.0.0.1", port, &ls);
	printf("%s: root listens: %s\n", n, r);
	pid = fork();
	if (!pid) {
		if (enter_ns(ns))
			exit(2);
		c = new_sock("127.0.0.1", false);
		if (!connect(c, &u.sa, len))
			exit(0);
		exit(errno == ECONNREFUSED ? 1 : 3);
	}
	waitpid(pid, &st, 0);
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 4;
	printf("%s: a client there to root's port: %s\n", n,
	       st == 0 ? "connected" : st == 1 ? "ECONNREFUSED" : "failed");
	close(ls);
}

static void ns_cases(const char *ns, int port)
{
	other_ns = ns;
	run("other namespace, root", "127.0.0.1", "127.0.0.1", 0, ++port);
	run("other namespace, other user", "127.0.0.1", "127.0.0.1", NOBODY,
	    ++port);
	run("other namespace, on the wildcard", "127.0.0.1", "0.0.0.0",
	    NOBODY, ++port);
	run("other namespace, IPv6", "::1", "::1", NOBODY, ++port);
	other_ns = NULL;
	ns_refused(ns, ++port);
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

	if (argc < 6 || argc > 7 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "sdp"))) {
		fprintf(stderr, "usage: sdp_ports tcp|sdp PORT V4 V4B V6 [NS]\n");
		return 2;
	}
	sdp = !strcmp(argv[1], "sdp");
	port = atoi(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	port = cases("loopback", "127.0.0.1", "127.0.0.2", "::1", port);
	port = cases("no RDMA device", argv[3], argv[4], argv[5], port);
	moved(port);
	if (argc == 7)
		ns_cases(argv[6], port + 2);
	return 0;
}
