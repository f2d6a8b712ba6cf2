// SPDX-License-Identifier: GPL-2.0
/*
 * Many connections, and connections made fast: what a connection costs
 * and how quickly one is set up, with the same code for TCP and SDP.
 *
 *   sdp_scale hold FAM ADDR PORT N
 *	a listener and N client connections to it in this process (2N
 *	sockets), each verified with a 100-byte echo; prints the setup
 *	rate, then "ready", and holds them until standard input ends.
 *   sdp_scale serve FAM ADDR PORT
 *	an echo server: every connection echoes what it gets until the
 *	peer closes (for hold-client and cycle between two hosts).
 *   sdp_scale hold-client FAM ADDR PORT N
 *	N connections to a serve on another host, each echo-verified, held
 *	until standard input ends.
 *   sdp_scale cycle FAM ADDR PORT SECONDS [local]
 *	connect, 100-byte echo, close, again and again for SECONDS against
 *	a serve (started here with "local"); prints cycles per second.
 *   sdp_scale burst ADDR PORT BYTES IDLE [oneway]
 *	one SDP connection to a local echo server: BYTES echoed in 64 KiB
 *	sends, then IDLE seconds with the connection open; prints "burst
 *	ECHOED BUSY IDLE": the bytes echoed and /proc/net/sdpstats'
 *	BufferBytes at the end of the burst and after the idle time; then
 *	the same burst again, "again ECHOED".  With "oneway" the server
 *	only reads (nothing comes back): ECHOED is then what it read.
 *
 * FAM is "tcp" or "sdp".  Prints "# " lines for the log and one result
 * line a script can read: "rate N/s" or "cycles N/s".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>

static int family;
static struct sockaddr_in sa;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void files(int n)
{
	struct rlimit rl = { n, n };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
}

static int listener(void)
{
	int l = socket(family, SOCK_STREAM, 0), one = 1;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 4096)) {
		perror("listen");
		exit(2);
	}
	return l;
}

static int connector(void)
{
	int fd = socket(family, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* 100 bytes out, the same 100 back. */
static int echo_check(int fd, unsigned int salt)
{
	char out[100], in[100];
	size_t got = 0;
	int i;

	for (i = 0; i < 100; i++)
		out[i] = salt + i * 7;
	if (send(fd, out, sizeof(out), MSG_NOSIGNAL) != sizeof(out))
		return -1;
	while (got < sizeof(in)) {
		ssize_t r = recv(fd, in + got, sizeof(in) - got, 0);

		if (r <= 0)
			return -1;
		got += r;
	}
	return memcmp(in, out, sizeof(in)) ? -1 : 0;
}

/* An echo of whatever comes on @fd; false once the peer closed. */
static int echo_recv(int fd, int flags)
{
	char buf[4096];
	ssize_t r = recv(fd, buf, sizeof(buf), flags);

	if (r < 0 && errno == EAGAIN)
		return 1;
	return r > 0 && send(fd, buf, r, MSG_NOSIGNAL) == r;
}

static int echo_some(int fd)
{
	return echo_recv(fd, MSG_DONTWAIT);
}

static int echo_some_wait(int fd)
{
	return echo_recv(fd, 0);
}

/* With SDP_SCALE_THREADS set: a thread per connection (rsockets'
 * preload library has no epoll).
 */
static void *echo_conn(void *arg)
{
	int fd = (long)arg;

	while (echo_some_wait(fd))
		;
	close(fd);
	return NULL;
}

static void *serve_threads(int l)
{
	for (;;) {
		long fd = accept(l, NULL, NULL);
		pthread_attr_t at;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break;
		}
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64 << 10);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, echo_conn, (void *)fd))
			close(fd);
		pthread_attr_destroy(&at);
	}
	return NULL;
}

/* One thread, one epoll set, every connection: the server's own cost per
 * connection is its socket alone, as it would be for a real server.
 */
static void *serve_loop(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[64];
	int l = (long)arg, ep, i, n;

	if (getenv("SDP_SCALE_THREADS"))
		return serve_threads(l);
	ep = epoll_create1(0);
	ev.data.fd = l;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev)) {
		perror("epoll");
		exit(2);
	}
	for (;;) {
		n = epoll_wait(ep, evs, 64, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == l) {
				fd = accept(l, NULL, NULL);
				if (fd < 0)
					continue;
				ev.data.fd = fd;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
					close(fd);
			} else if (!echo_some(fd)) {
				close(fd);	/* leaves the epoll set */
			}
		}
	}
	return NULL;
}

static void hold_until_eof(void)
{
	char c;

	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
}

static int run_hold(int n, int local)
{
	int *fds = calloc(n, sizeof(int)), i, bad = 0;
	double t0, t1;
	pthread_t t;

	files(2 * n + 64);
	if (local)
		pthread_create(&t, NULL, serve_loop, (void *)(long)listener());
	usleep(200000);
	t0 = now();
	for (i = 0; i < n; i++) {
		fds[i] = connector();
		if (fds[i] < 0 || echo_check(fds[i], i)) {
			printf("# connection %d: %s\n", i, strerror(errno));
			bad++;
			if (bad > 10)
				return 1;
		}
	}
	t1 = now();
	printf("# %d connections, %d failed, in %.2f s\n", n, bad, t1 - t0);
	printf("rate %.0f/s\n", n / (t1 - t0));
	fflush(stdout);
	if (bad)
		return 1;
	hold_until_eof();
	for (i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

static int run_cycle(double secs, int local)
{
	double t0, end;
	long n = 0, bad = 0;
	pthread_t t;

	if (local)
		pthread_create(&t, NULL, serve_loop, (void *)(long)listener());
	usleep(200000);
	t0 = now();
	end = t0 + secs;
	while (now() < end) {
		int fd = connector();

		if (fd < 0 || echo_check(fd, n)) {
			bad++;
			if (fd >= 0)
				close(fd);
			if (bad > 10)
				break;
			continue;
		}
		close(fd);
		n++;
	}
	printf("# %ld cycles, %ld failed, in %.2f s\n", n, bad, now() - t0);
	printf("cycles %.0f/s\n", n / (now() - t0));
	return bad ? 1 : 0;
}

static long buffer_bytes(void)
{
	FILE *f = fopen("/proc/net/sdpstats", "r");
	char name[64];
	long v, r = -1;

	while (f && fscanf(f, "%63s %ld", name, &v) == 2)
		if (!strcmp(name, "BufferBytes"))
			r = v;
	if (f)
		fclose(f);
	return r;
}

struct burst {
	int fd;
	long want, got;
};

/* The server end of a one-way burst: reads and counts until EOF. */
static long sunk;

static long sunk_since(long base)
{
	return __atomic_load_n(&sunk, __ATOMIC_ACQUIRE) - base;
}

static void *sink_loop(void *arg)
{
	int fd = accept((long)arg, NULL, NULL);
	char buf[65536];
	ssize_t r;

	while (fd >= 0 && (r = recv(fd, buf, sizeof(buf), 0)) > 0)
		__atomic_add_fetch(&sunk, r, __ATOMIC_RELEASE);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *burst_reader(void *arg)
{
	struct burst *b = arg;
	char buf[65536];
	ssize_t r;

	while (b->got < b->want && (r = recv(b->fd, buf, sizeof(buf), 0)) > 0)
		b->got += r;
	return NULL;
}

static long burst_once(struct burst *b, long bytes, int oneway)
{
	static char chunk[65536];
	long sent = 0, base = sunk_since(0);
	pthread_t t;
	int i;

	b->want = bytes;
	b->got = 0;
	if (!oneway)
		pthread_create(&t, NULL, burst_reader, b);
	while (sent < bytes) {
		ssize_t w = send(b->fd, chunk, sizeof(chunk), MSG_NOSIGNAL);

		if (w <= 0)
			break;
		sent += w;
	}
	if (!oneway) {
		pthread_join(t, NULL);
		return b->got;
	}
	/* until the reader has it all, for 10 s at most */
	for (i = 0; i < 1000 && sunk_since(base) < sent; i++)
		usleep(10000);
	return sunk_since(base);
}

static int run_burst(long bytes, int idle, int oneway)
{
	struct burst b = { -1, 0, 0 };
	long got, again, busy;
	pthread_t t;

	pthread_create(&t, NULL, oneway ? sink_loop : serve_loop,
		       (void *)(long)listener());
	usleep(200000);
	b.fd = connector();
	if (b.fd < 0) {
		perror("connect");
		return 1;
	}
	got = burst_once(&b, bytes, oneway);
	busy = buffer_bytes();
	sleep(idle);
	printf("burst %ld %ld %ld\n", got, busy, buffer_bytes());
	/* and again, through the buffers shrunk meanwhile */
	again = burst_once(&b, bytes, oneway);
	printf("again %ld\n", again);
	close(b.fd);
	return got == bytes && again == bytes ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
		return 2;
	}
	family = !strcmp(argv[2], "tcp") ? AF_INET : AF_INET_SDP;
	sa.sin_family = AF_INET;
	sa.sin_port = htons(atoi(argv[4]));
	inet_pton(AF_INET, argv[3], &sa.sin_addr);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "hold") && argc == 6)
		return run_hold(atoi(argv[5]), 1);
	if (!strcmp(argv[1], "hold-client") && argc == 6)
		return run_hold(atoi(argv[5]), 0);
	if (!strcmp(argv[1], "cycle") && argc >= 6)
		return run_cycle(atof(argv[5]), argc == 7 && !strcmp(argv[6], "local"));
	if (!strcmp(argv[1], "burst") && (argc == 6 || argc == 7)) {
		family = AF_INET_SDP;
		sa.sin_port = htons(atoi(argv[3]));
		inet_pton(AF_INET, argv[2], &sa.sin_addr);
		return run_burst(atol(argv[4]), atoi(argv[5]),
				 argc == 7 && !strcmp(argv[6], "oneway"));
	}
	if (!strcmp(argv[1], "serve")) {
		files(65536);
		serve_loop((void *)(long)listener());
		return 1;
	}
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
