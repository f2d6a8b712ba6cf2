// SPDX-License-Identifier: GPL-2.0
/*
 * One program for every family on one host: latency and bandwidth of a
 * stream socket, so that SDP, TCP and AF_UNIX are measured the same way.
 *
 *   sdp_lbench FAM ADDR PORT lat SIZE ITERS
 *	SIZE-byte ping-pong, ITERS round trips: prints "lat US" (one way,
 *	half the mean round trip)
 *   sdp_lbench FAM ADDR PORT bw SIZE SECONDS
 *	SIZE-byte send()s for SECONDS; the reader acknowledges the end:
 *	prints "bw MB/s" (10^6 bytes per second, as qperf)
 *
 * With SDP_LBENCH_DIST=1 in the environment, lat also prints each round
 * trip's distribution: "rtt p50 P p90 P p99 P p999 P max M" (us), and the
 * round trips over 10 x the median ("slow N"), with the first's index.
 *
 *   sdp_lbench FAM ADDR PORT place SIZE SENDS
 *	where the sender's buffer lies: SENDS non-blocking SIZE-byte
 *	sends (as an event-driven program makes) from a buffer at each of
 *	SDP_LBENCH_PAGES (default 128) page offsets of one region, twice
 *	over; prints "place K US US" (us per send, each pass) per offset,
 *	then "placed median US mean US slow N": N offsets over 2x the
 *	median in both passes (a cost that follows the placement, not
 *	noise; see Documentation/testbed.rst)
 *
 *   sdp_lbench FAM ADDR PORT rplace SIZE READS
 *	where the reader's buffer lies: the server sends SIZE-byte
 *	messages without blocking, as fast as they go, and this side
 *	reads READS of them into a buffer at each page offset (as
 *	place); the same report, in us per SIZE bytes read
 *
 *   sdp_lbench FAM ADDR PORT serve
 *	a server for the modes above on another host (or under a preloaded
 *	socket library): one connection after another, until killed
 *
 * FAM is "sdp" (AF_INET_SDP, or AF_INET6_SDP for an IPv6 ADDR), "tcp",
 * "smc" (AF_SMC: SMC, Linux's own RDMA socket, on 6.1 as on 6.12), or
 * "unix" (an abstract AF_UNIX address named after PORT; ADDR ignored).
 * The server is a child process on this host, unless "remote" follows
 * the lat/bw arguments: then the client connects to a "serve" at ADDR.
 * The client's first 8 bytes tell the server the mode and the size.
 * SDP_LBENCH_ZCOPY_THRESH=N in the environment sets the client socket's
 * SDP_ZCOPY_THRESH (a fixed threshold: no adapting), SDP_LBENCH_BUSY_POLL=US
 * its SO_BUSY_POLL, and SDP_LBENCH_DELAY_US=US makes the server wait that
 * long before each echo of lat (a slow peer), SDP_LBENCH_SPLIT=N makes
 * it echo in two writes, the first N bytes and then the rest (a header
 * and a body, as a web server answers), SDP_LBENCH_RBUF=N the
 * server's read() size in bw (default SIZE: a reader smaller than the
 * writes), and SDP_LBENCH_CPU=1 makes bw print "cpu S R" too: the
 * sender's and the reader's CPU time (user and system) per MB, in us.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int fam_of(const char *fam, const char *addr)
{
	if (!strcmp(fam, "unix"))
		return AF_UNIX;
	if (!strcmp(fam, "smc"))
		return AF_SMC;
	if (!strcmp(fam, "tcp"))
		return strchr(addr, ':') ? AF_INET6 : AF_INET;
	return strchr(addr, ':') ? AF_INET6_SDP : AF_INET_SDP;
}

#ifndef AF_SMC
#define AF_SMC 43
#endif

/* AF_SMC's protocol says which addresses: SMCPROTO_SMC6 (1) for IPv6 */
static int proto_of(const char *fam, const char *addr)
{
	return strcmp(fam, "smc") ? 0 : !!strchr(addr, ':');
}

static socklen_t mkaddr(const char *fam, const char *addr, int port,
			struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (!strcmp(fam, "unix")) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;

		un->sun_family = AF_UNIX;
		snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1,
			 "sdp_lbench.%d", port);
		return offsetof(struct sockaddr_un, sun_path) + 1 +
		       strlen(un->sun_path + 1);
	}
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	inet_pton(AF_INET, addr, &s4->sin_addr);
	return sizeof(*s4);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The round trips' distribution, in microseconds. */
static void print_dist(double *rtt, long n)
{
	double *s = malloc(n * sizeof(*s)), med;
	long i, slow = 0, first = -1;

	if (!s || !n)
		return;
	memcpy(s, rtt, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_dbl);
	med = s[n / 2];
	for (i = 0; i < n; i++)
		if (rtt[i] > 10 * med && slow++ == 0)
			first = i;
	printf("rtt p50 %.1f p90 %.1f p99 %.1f p999 %.1f max %.1f slow %ld first %ld\n",
	       med * 1e6, s[n * 9 / 10] * 1e6, s[n * 99 / 100] * 1e6,
	       s[n * 999 / 1000] * 1e6, s[n - 1] * 1e6, slow, first);
	free(s);
}

static int full(int fd, char *b, size_t n, int rd)
{
	while (n) {
		ssize_t r = rd ? read(fd, b, n) : write(fd, b, n);

		if (r <= 0)
			return -1;
		b += r;
		n -= r;
	}
	return 0;
}

static void nodelay(int fd, int f)
{
	int one = 1;

	if (f != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* What the client asks for, first on the connection (network order). */
struct lb_hdr {
	uint32_t lat;	/* LB_BW, LB_LAT or LB_STREAM */
	uint32_t size;
};

enum { LB_BW, LB_LAT, LB_STREAM };

/* rplace's server side: SIZE-byte messages without blocking (as an
 * event-driven server writes), until the reader goes.
 */
static void stream_to(int fd, const char *buf, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	size_t off = 0;
	ssize_t r;

	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		r = send(fd, buf + off, size - off, MSG_DONTWAIT);
		if (r < 0 && errno == EAGAIN) {
			poll(&p, 1, -1);
			continue;
		}
		if (r <= 0)
			return;
		off = (off + r) % size;
	}
}

/* One connection's server side: echo (lat) or drain and acknowledge (bw). */
static void serve_one(int fd, int f)
{
	struct lb_hdr h;
	size_t size;
	char *buf;

	nodelay(fd, f);
	if (full(fd, (char *)&h, sizeof(h), 1))
		return;
	size = ntohl(h.size);
	buf = size && size <= (64u << 20) ? malloc(size) : NULL;
	if (!buf)
		return;
	if (ntohl(h.lat) == LB_STREAM) {
		memset(buf, 'x', size);	/* not the shared zero page */
		stream_to(fd, buf, size);
	} else if (ntohl(h.lat) == LB_LAT) {
		long delay = getenv("SDP_LBENCH_DELAY_US") ?
			     atol(getenv("SDP_LBENCH_DELAY_US")) : 0;
		size_t split = getenv("SDP_LBENCH_SPLIT") ?
			       strtoul(getenv("SDP_LBENCH_SPLIT"), NULL, 0) : 0;

		if (split >= size)
			split = 0;
		while (!full(fd, buf, size, 1)) {
			if (delay)
				usleep(delay);
			if (split && full(fd, buf, split, 0))
				break;
			if (full(fd, buf + split, size - split, 0))
				break;
		}
	} else {
		size_t rd = getenv("SDP_LBENCH_RBUF") ?
			    strtoul(getenv("SDP_LBENCH_RBUF"), NULL, 0) : 0;

		if (!rd || rd > size)
			rd = size;
		while (read(fd, buf, rd) > 0)
			;
		if (write(fd, "k", 1) != 1)
			perror("ack");
	}
	free(buf);
}

/* serve: one connection after another, in this process (no fork, so
 * that preloaded socket libraries such as rsockets work as they do for
 * any simple server).
 */
static int serve(int ls, int f)
{
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		int fd = accept(ls, NULL, NULL);

		if (fd < 0)
			die("accept");
		serve_one(fd, f);
		close(fd);
	}
	return 0;
}

static void run_lat(int fd, char *buf, size_t size, long iters)
{
	double t = now(), t0 = t, t1;
	double *rtt = getenv("SDP_LBENCH_DIST") ?
		      calloc(iters, sizeof(*rtt)) : NULL;
	long i;

	for (i = 0; i < iters; i++) {
		if (full(fd, buf, size, 0) || full(fd, buf, size, 1))
			die("ping-pong");
		if (rtt) {
			t1 = now();
			rtt[i] = t1 - t0;
			t0 = t1;
		}
	}
	printf("lat %.1f\n", (now() - t) / iters / 2 * 1e6);
	if (rtt)
		print_dist(rtt, iters);
	free(rtt);
}

static unsigned long long bw_bytes;

/* CPU time per MB moved, the sender (this process) and the reader (the
 * child, reaped): "cpu SEND_US RECV_US".
 */
static void print_cpu(void)
{
	struct rusage s, r;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &r);
	printf("cpu %.0f %.0f\n",
	       (s.ru_utime.tv_sec + s.ru_stime.tv_sec) * 1e6 / (bw_bytes / 1e6) +
	       (s.ru_utime.tv_usec + s.ru_stime.tv_usec) / (bw_bytes / 1e6),
	       (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 / (bw_bytes / 1e6) +
	       (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / (bw_bytes / 1e6));
}

static void run_bw(int fd, char *buf, size_t size, long secs)
{
	double t = now(), end = t + secs;
	unsigned long long bytes = 0;

	while (now() < end) {
		if (full(fd, buf, size, 0))
			die("send");
		bytes += size;
	}
	shutdown(fd, SHUT_WR);
	if (read(fd, buf, 1) != 1)
		die("ack");
	printf("bw %.1f\n", bytes / (now() - t) / 1e6);
	bw_bytes = bytes;
}

static void send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t r = send(fd, b, n, MSG_DONTWAIT);
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (r < 0 && errno == EAGAIN) {
			poll(&p, 1, -1);
			continue;
		}
		if (r <= 0)
			die("send");
		b += r;
		n -= r;
	}
}

/* The cost of a send (place) or of a read (rplace, @rd) against where
 * its buffer lies.
 */
static void run_place(int fd, size_t size, long sends, int rd)
{
	long pages = getenv("SDP_LBENCH_PAGES") ?
		     atol(getenv("SDP_LBENCH_PAGES")) : 128;
	double *us, *s, t, med, mean = 0;
	long k, i, slow = 0, pass;
	char *reg, ack;

	if (pages < 1 || pages > 4096)
		die("SDP_LBENCH_PAGES");
	reg = mmap(NULL, pages * 4096 + size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	us = calloc(2 * pages, sizeof(*us));
	s = calloc(2 * pages, sizeof(*s));
	if (reg == MAP_FAILED || !us || !s)
		die("place");
	memset(reg, 'x', pages * 4096 + size);
	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < pages; k++) {
			t = now();
			for (i = 0; i < sends; i++)
				if (!rd)
					send_all(fd, reg + k * 4096, size);
				else if (full(fd, reg + k * 4096, size, 1))
					die("read");
			us[pass * pages + k] = (now() - t) / sends * 1e6;
		}
	if (!rd) {
		shutdown(fd, SHUT_WR);
		if (read(fd, &ack, 1) != 1)
			die("ack");
	}
	memcpy(s, us, 2 * pages * sizeof(*s));
	qsort(s, 2 * pages, sizeof(*s), cmp_dbl);
	med = s[pages];
	for (k = 0; k < pages; k++) {
		printf("place %ld %.1f %.1f\n", k, us[k], us[pages + k]);
		mean += (us[k] + us[pages + k]) / (2 * pages);
		slow += us[k] > 2 * med && us[pages + k] > 2 * med;
	}
	printf("placed median %.1f mean %.1f slow %ld\n", med, mean, slow);
	free(us);
	free(s);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct lb_hdr h;
	socklen_t len;
	int f, proto, ls, fd, one = 1, lat, remote;
	size_t size;
	long iters;
	char *buf;
	pid_t pid = 0;

	if (argc == 5 && !strcmp(argv[4], "serve")) {
		remote = 0;
	} else if ((argc == 7 || (argc == 8 && !strcmp(argv[7], "remote"))) &&
		   (!strcmp(argv[4], "lat") || !strcmp(argv[4], "bw") ||
		    !strcmp(argv[4], "place") || !strcmp(argv[4], "rplace"))) {
		remote = argc == 8;
	} else {
		fprintf(stderr, "usage: see the comment at the top of %s\n",
			__FILE__);
		return 2;
	}
	f = fam_of(argv[1], argv[2]);
	proto = proto_of(argv[1], argv[2]);
	len = mkaddr(argv[1], argv[2], atoi(argv[3]), &ss);
	if (!remote) {
		ls = socket(f, SOCK_STREAM, proto);
		if (ls < 0)
			die("socket");
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(ls, (struct sockaddr *)&ss, len) || listen(ls, 8))
			die("bind/listen");
		if (argc == 5)
			return serve(ls, f);
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			fd = accept(ls, NULL, NULL);
			if (fd < 0)
				die("accept");
			serve_one(fd, f);
			_exit(0);
		}
		close(ls);
	}
	lat = !strcmp(argv[4], "lat");
	size = strtoul(argv[5], NULL, 0);
	iters = strtol(argv[6], NULL, 0);
	buf = size ? malloc(size) : NULL;
	if (!buf)
		die("size");
	/* written, as a program's data is: not the shared zero page */
	memset(buf, 'x', size);
	fd = socket(f, SOCK_STREAM, proto);
	if (fd < 0)
		die("socket");
	if (getenv("SDP_LBENCH_BUSY_POLL")) {
		int t = atoi(getenv("SDP_LBENCH_BUSY_POLL"));

		if (setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &t, sizeof(t)))
			die("SO_BUSY_POLL");
	}
	if (getenv("SDP_LBENCH_ZCOPY_THRESH")) {
		int t = atoi(getenv("SDP_LBENCH_ZCOPY_THRESH"));

		if (setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &t, sizeof(t)))
			die("SDP_ZCOPY_THRESH");
	}
	if (connect(fd, (struct sockaddr *)&ss, len))
		die("connect");
	nodelay(fd, f);
	h.lat = htonl(lat ? LB_LAT : !strcmp(argv[4], "rplace") ? LB_STREAM :
		      LB_BW);
	h.size = htonl(size);
	if (full(fd, (char *)&h, sizeof(h), 0))
		die("header");
	if (lat)
		run_lat(fd, buf, size, iters);
	else if (!strcmp(argv[4], "place") || !strcmp(argv[4], "rplace"))
		run_place(fd, size, iters, !strcmp(argv[4], "rplace"));
	else
		run_bw(fd, buf, size, iters);
	close(fd);
	if (pid)
		waitpid(pid, NULL, 0);
	if (!lat && pid && getenv("SDP_LBENCH_CPU"))
		print_cpu();
	return 0;
}
