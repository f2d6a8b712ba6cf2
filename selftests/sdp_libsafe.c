// SPDX-License-Identifier: GPL-2.0
/*
 * An ordinary TCP program doing what any program may, for libsdp's
 * safety tests: each mode prints "NAME: RESULT" lines a test compares
 * with what the C library and kernel alone give.
 *
 *   sdp_libsafe twin ADDR PORT
 *	under a "both" rule: a listener on ADDR:PORT; the descriptors that
 *	appeared with it, which the program never opened (libsdp's twin):
 *	dup2() a pipe onto one (the number is free as far as the program
 *	knows), use the pipe, accept a connection and echo it (the shell
 *	connects over SDP once "ready 1" is printed), then close() of the
 *	twin's new number (EBADF: never opened) and, after "ready 2",
 *	accept and echo another.
 *   sdp_libsafe vfork ADDR PORT
 *	a TCP connection to itself through a listener on ADDR:PORT, its
 *	socket in epoll with data 42; a vfork() child closes the socket
 *	and exits; the peer sends: what epoll_wait() reports.
 *   sdp_libsafe epolldata ADDR PORT
 *	a pipe in epoll with data 0x5d5d000000000001 (libsdp's own mark
 *	pattern) next to a TCP socket with data 7: what epoll_wait()
 *	reports for each.
 *   sdp_libsafe epollsettled ADDR PORT
 *	a socket registered in epoll before its connect() (data 1), then
 *	moved, deleted and added again after it (libsdp's rules settle it
 *	there), each time with new data, at the end with data like libsdp's
 *	mark: the data of each event and the events after the last DEL;
 *	then 1000 EPOLL_CTL_MODs of the connected socket (a test counts the
 *	system calls they make).
 *   sdp_libsafe forksig ADDR PORT
 *	for 3 s: fork() while a 100 us timer's handler closes a socket
 *	made before; prints how many forks (a deadlock never returns).
 *   sdp_libsafe sigclose ADDR PORT
 *	for 3 s: malloc()/free() while a 100 us timer's handler closes a
 *	socket made before; prints how many closes.
 *   sdp_libsafe soerror ADDR PORT
 *	under a "both" rule, to a TCP listener on ADDR:PORT whose queue is
 *	full (its SYNs go unanswered): a non-blocking connect(), 0.5 s, then
 *	getsockopt(SO_ERROR): prints its answer and whether it came within
 *	3 s (TCP's never waits).
 *   sdp_libsafe selectrace ADDR PORT
 *	under a "both" rule: a listener (libsdp watches select() for it),
 *	then for 3 s select() over sets another thread keeps filling and
 *	emptying; prints "survived".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static struct sockaddr_in sa;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Is @fd open?  Past libsdp: the kernel's answer. */
static bool fd_open(int fd)
{
	return syscall(SYS_fcntl, fd, F_GETFD) >= 0;
}

static int listener(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 8)) {
		printf("listen: %s\n", errname(errno));
		exit(1);
	}
	return l;
}

/* The one descriptor below 256 that is open now and was not in @before. */
static int appeared(const bool *before)
{
	int fd, found = -1;

	for (fd = 0; fd < 256; fd++) {
		if (!before[fd] && fd_open(fd)) {
			if (found >= 0)
				return -2;
			found = fd;
		}
	}
	return found;
}

static void snapshot(bool *open)
{
	int fd;

	for (fd = 0; fd < 256; fd++)
		open[fd] = fd_open(fd);
}

/* accept() one connection within 10 s and echo it to its end. */
static const char *serve_one(int l)
{
	struct pollfd p = { .fd = l, .events = POLLIN };
	static char buf[1 << 16];
	long total = 0;
	ssize_t n;
	int c;

	if (poll(&p, 1, 10000) != 1)
		return "no connection";
	c = accept(l, NULL, NULL);
	if (c < 0)
		return errname(errno);
	while ((n = recv(c, buf, sizeof(buf), 0)) > 0) {
		total += n;
		if (send(c, buf, n, MSG_NOSIGNAL) != n)
			break;
	}
	close(c);
	return n == 0 && total ? "ok" : "broken";
}

static int run_twin(void)
{
	bool known[256];
	int l, twin, p[2], r;
	char c = 0;

	snapshot(known);
	l = listener();
	known[l] = true;
	twin = appeared(known);
	printf("twin: %s\n", twin >= 0 ? "found" : "none");
	if (twin < 0 || pipe(p))
		return 1;

	/* the number is free as far as the program knows: take it */
	r = dup2(p[0], twin);
	printf("dup2 onto it: %s\n", r == twin ? "ok" : errname(errno));
	known[twin] = known[p[0]] = known[p[1]] = true;
	write(p[1], "x", 1);
	printf("the pipe at that number: %s\n",
	       read(twin, &c, 1) == 1 && c == 'x' ? "ok" : "broken");
	printf("ready 1\n");
	printf("accept after dup2: %s\n", serve_one(l));
	write(p[1], "y", 1);
	printf("the pipe still: %s\n",
	       read(twin, &c, 1) == 1 && c == 'y' ? "ok" : "broken");

	/* the twin moved: a number the program never opened, closed */
	twin = appeared(known);
	printf("twin again: %s\n", twin >= 0 ? "found" : "none");
	if (twin >= 0) {
		r = close(twin);
		printf("close of it: %s\n", r ? errname(errno) : "0");
	}
	printf("ready 2\n");
	printf("accept after close: %s\n", serve_one(l));
	close(l);
	return 0;
}

/* A connected pair of TCP sockets through a listener on ADDR:PORT. */
static void tcp_pair(int *c, int *s)
{
	int l = listener();

	*c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*c, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("connect: %s\n", errname(errno));
		exit(1);
	}
	*s = accept(l, NULL, NULL);
	close(l);
}

static int run_vfork(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 };
	int c, s, ep = epoll_create1(0), n, st;
	pid_t pid;

	tcp_pair(&c, &s);
	epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
	pid = vfork();
	if (!pid) {
		close(c);	/* the child's copy only */
		_exit(0);
	}
	waitpid(pid, &st, 0);
	send(s, "z", 1, 0);
	memset(&ev, 0, sizeof(ev));
	n = epoll_wait(ep, &ev, 1, 2000);
	printf("epoll after the vfork child's close: %d event%s, data %llu\n",
	       n, n == 1 ? "" : "s", n == 1 ? (unsigned long long)ev.data.u64 : 0ULL);
	return 0;
}

static int run_epolldata(void)
{
	struct epoll_event ev[4] = {
		{ .events = EPOLLIN, .data.u64 = 0x5d5d000000000001ULL },
		{ .events = EPOLLIN, .data.u64 = 7 },
	};
	int c, s, p[2], ep = epoll_create1(0), n, i;

	tcp_pair(&c, &s);
	if (pipe(p))
		return 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev[0]);
	epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev[1]);
	write(p[1], "x", 1);
	send(s, "y", 1, 0);
	usleep(100000);
	memset(ev, 0, sizeof(ev));
	n = epoll_wait(ep, ev, 4, 2000);
	for (i = 0; i < n; i++)
		printf("event data %#llx\n", (unsigned long long)ev[i].data.u64);
	printf("events: %d\n", n);
	return 0;
}

/* One event from @ep within 2 s: "data D" or what came instead. */
static void epoll_once(int ep, const char *what)
{
	struct epoll_event ev = { 0 };
	int n = epoll_wait(ep, &ev, 1, 2000);

	if (n == 1)
		printf("%s: data %#llx\n", what,
		       (unsigned long long)ev.data.u64);
	else
		printf("%s: %d events\n", what, n);
}

static void epoll_set(int ep, int op, int fd, uint64_t data)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data };

	if (epoll_ctl(ep, op, fd, &ev))
		printf("epoll_ctl %d, data %#llx: %s\n", op,
		       (unsigned long long)data, errname(errno));
}

static int run_epollsettled(void)
{
	int l = listener(), c = socket(AF_INET, SOCK_STREAM, 0), s, i;
	int ep = epoll_create1(0);
	char buf[16];

	epoll_set(ep, EPOLL_CTL_ADD, c, 1);	/* before the rules apply */
	if (connect(c, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("connect: %s\n", errname(errno));
		return 1;
	}
	s = accept(l, NULL, NULL);
	send(s, "a", 1, 0);	/* readable from now on */
	epoll_once(ep, "added before connect");
	epoll_set(ep, EPOLL_CTL_MOD, c, 2);
	epoll_once(ep, "moved");
	epoll_set(ep, EPOLL_CTL_DEL, c, 0);
	epoll_set(ep, EPOLL_CTL_ADD, c, 3);
	epoll_once(ep, "added after connect");
	epoll_set(ep, EPOLL_CTL_MOD, c, 4);
	epoll_once(ep, "moved again");
	epoll_set(ep, EPOLL_CTL_MOD, c, 0x5d5d000000000002ULL);
	epoll_once(ep, "moved to a mark's likeness");
	epoll_set(ep, EPOLL_CTL_MOD, c, 5);
	epoll_once(ep, "moved back");
	epoll_set(ep, EPOLL_CTL_DEL, c, 0);
	epoll_once(ep, "deleted");
	recv(c, buf, sizeof(buf), 0);
	epoll_set(ep, EPOLL_CTL_ADD, c, 6);
	write(STDERR_FILENO, "loop\n", 5);	/* where the count starts */
	for (i = 0; i < 1000; i++)
		epoll_set(ep, EPOLL_CTL_MOD, c, 100 + i);
	write(STDERR_FILENO, "end\n", 4);
	return 0;
}

static volatile int victim = -1;
static volatile long handled;

static void close_victim(int sig)
{
	int fd = __atomic_exchange_n(&victim, -1, __ATOMIC_SEQ_CST);

	(void)sig;
	if (fd >= 0) {
		close(fd);
		handled++;
	}
}

static void start_timer(void)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction act = { .sa_handler = close_victim,
				 .sa_flags = SA_RESTART };

	sigaction(SIGALRM, &act, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_timer(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
}

/* A new victim, made with SIGALRM held: the handler never interrupts
 * libsdp's own socket() (allocating there is not what this tests).
 */
static void refill_victim(void)
{
	sigset_t m, old;

	sigemptyset(&m);
	sigaddset(&m, SIGALRM);
	sigprocmask(SIG_BLOCK, &m, &old);
	if (victim < 0)
		victim = socket(AF_INET, SOCK_STREAM, 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static int run_forksig(void)
{
	double end = now() + 3;
	long forks = 0;
	pid_t pid;

	start_timer();
	while (now() < end) {
		refill_victim();
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid > 0) {
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			forks++;
		}
	}
	stop_timer();
	printf("forks: %s (%ld, %ld closes in the handler)\n",
	       forks ? "ok" : "none", forks, handled);
	return 0;
}

static int run_sigclose(void)
{
	double end = now() + 3;
	void *keep[64] = { 0 };
	long rounds = 0;
	int i;

	start_timer();
	while (now() < end) {
		refill_victim();
		/* the sizes libsdp's socket state has, so its free() in a
		 * handler lands on the lists malloc() is using
		 */
		for (i = 0; i < 64; i++) {
			free(keep[i]);
			keep[i] = malloc(64 + (rounds + i) % 512);
		}
		rounds++;
	}
	stop_timer();
	for (i = 0; i < 64; i++)
		free(keep[i]);
	printf("closes in the handler: %s (%ld rounds, %ld closes)\n",
	       handled ? "ok" : "none", rounds, handled);
	return 0;
}

static fd_set shared;
static volatile bool stop;

/* Empty for a while, then full for a while: a select() that counts an
 * empty set and fills its array from a full one.
 */
static void *flipper(void *arg)
{
	volatile int k;

	(void)arg;
	while (!stop) {
		memset(&shared, 0, sizeof(shared));
		for (k = 0; k < 2000; k++)
			;
		memset(&shared, 0xff, sizeof(shared));
		for (k = 0; k < 2000; k++)
			;
	}
	return NULL;
}

static int run_selectrace(void)
{
	double end = now() + 3;
	struct timeval tv;
	pthread_t t;
	long rounds = 0;
	int l = listener();

	pthread_create(&t, NULL, flipper, NULL);
	while (now() < end) {
		tv.tv_sec = 0;
		tv.tv_usec = 0;
		select(FD_SETSIZE, &shared, NULL, NULL, &tv);
		rounds++;
	}
	stop = true;
	pthread_join(t, NULL);
	close(l);
	printf("select with sets changing: survived (%ld rounds)\n", rounds);
	return 0;
}

static int run_soerror(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), err = -1;
	socklen_t len = sizeof(err);
	double t;

	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    errno != EINPROGRESS) {
		printf("connect: %s\n", errname(errno));
		return 1;
	}
	usleep(500000);
	t = now();
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	t = now() - t;
	printf("SO_ERROR: %s, %s\n", errname(err),
	       t < 3 ? "at once" : "after waiting");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} modes[] = {
		{ "twin", run_twin }, { "vfork", run_vfork },
		{ "epolldata", run_epolldata }, { "forksig", run_forksig },
		{ "sigclose", run_sigclose }, { "selectrace", run_selectrace },
		{ "soerror", run_soerror },
		{ "epollsettled", run_epollsettled },
	};
	size_t i;

	if (argc != 4) {
		fprintf(stderr, "usage: see the comment at the top of %s\n",
			__FILE__);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(atoi(argv[3]));
	inet_pton(AF_INET, argv[2], &sa.sin_addr);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name))
			return modes[i].fn();
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
