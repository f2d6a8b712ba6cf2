// SPDX-License-Identifier: GPL-2.0
/*
 * Stream integrity over TCP or SDP, with the same code for both.
 *
 *   sdp_stream server FAM ADDR PORT NCONN
 *	accept NCONN connections; on each, read a header {seed, bytes},
 *	then verify every byte received against the seeded stream and
 *	echo it back; exit 0 if all NCONN streams were right.
 *   sdp_stream client FAM ADDR PORT NCONN BYTES SEED
 *	NCONN concurrent connections; each sends BYTES of its seeded stream
 *	in random write sizes (1 B .. 256 KiB) while reading the echo in
 *	random read sizes and checking it; then half-closes and expects EOF
 *	after exactly BYTES.
 *   sdp_stream sink FAM ADDR PORT NCONN [DELAY]
 *	accept NCONN connections one after the other and read each until
 *	end of file or an error (starting DELAY seconds after the accept);
 *	print what each ended with.
 *   sdp_stream bothfull FAM ADDR PORT BYTES
 *	one connection to itself; both ends write BYTES before either reads
 *	(readers start 2 s after the writers); both streams checked.
 *   sdp_stream gated FAM ADDR PORT BYTES
 *	one connection to a sink; prints "connected" and waits for a line
 *	on standard input, a number: allocates and touches that many bytes
 *	(a script fills the process's memory cgroup so), prints "filled",
 *	waits for another line, then writes BYTES in 64 KiB writes and
 *	half-closes; prints "sent BYTES" or the write's error (exit 1).
 *
 *   sdp_stream incast FAM ADDR PORT NCONN SECONDS
 *	accept NCONN connections; once all are there, read from all of them
 *	for SECONDS and print the bytes each delivered meanwhile and
 *	"fairness MIN/MEAN", then close them all.
 *   sdp_stream flood FAM ADDR PORT
 *	one connection that writes until the peer closes it; exit 0 if the
 *	write then failed with EPIPE or ECONNRESET.
 *
 *   sdp_stream greeter FAM ADDR PORT NCONN
 *	a server that speaks first: accept NCONN connections one after the
 *	other; on each, write a 100-byte greeting at once, read the
 *	client's answer (2 bytes, within 10 s), close.
 *   sdp_stream greeted FAM ADDR PORT NCONN
 *	NCONN connections one after the other; on each, read the greeting
 *	(within 5 s), answer, close.  Prints how many were greeted and
 *	what happened to the others; exit 0 if all NCONN were.
 *
 * FAM is "tcp" (AF_INET) or "sdp" (AF_INET_SDP); an IPv6 ADDR (one with a
 * ':', v4-mapped ones too) makes it AF_INET6 or AF_INET6_SDP.
 *
 * Clients retry connect() while the server is not up yet, for up to
 * SDP_STREAM_WAIT seconds (default 20; its host may still be booting).
 * With SDP_STREAM_TIMEOUT=SECONDS every connection gets TCP_USER_TIMEOUT
 * and keepalive (idle 1 s, 1 s apart, SECONDS probes).  An I/O error
 * says how long after the connection's last progress it came, and when
 * (CLOCK_REALTIME, seconds).  SIGPIPE is ignored: writes report EPIPE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <linux/sdp.h>

#include "check.h"

#define MAX_IO	(256 * 1024)

static int family;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* wall-clock time, to compare with another program's (ping -D) */
static double wall(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : def;
}

/* SDP_STREAM_TIMEOUT: give up on a silent peer as TCP would */
static void conn_timeouts(int fd)
{
	int secs = env_int("SDP_STREAM_TIMEOUT", 0), one = 1;
	int ms = secs * 1000;

	if (secs <= 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &secs, sizeof(secs));
}

struct prng {
	uint64_t s;
	uint64_t word;
	int left;	/* bytes of word not yet used */
};

static void prng_init(struct prng *p, uint64_t seed)
{
	p->s = seed * 0x9E3779B97F4A7C15ull + 1;
	p->left = 0;
}

static uint64_t prng_next(struct prng *p)
{
	p->s ^= p->s >> 12;
	p->s ^= p->s << 25;
	p->s ^= p->s >> 27;
	return p->s * 0x2545F4914F6CDD1Dull;
}

static void prng_fill(struct prng *p, unsigned char *buf, size_t n)
{
	while (n--) {
		if (!p->left) {
			p->word = prng_next(p);
			p->left = 8;
		}
		*buf++ = p->word;
		p->word >>= 8;
		p->left--;
	}
}

/* Sizes: log-uniform from 1 to MAX_IO, so that both tiny and large I/O
 * happen often.
 */
static size_t io_size(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return 1 + (*r >> 20) % (1u << ((*r >> 8) % 19));
}

union sa {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/* @addr, IPv4 or IPv6 (the socket family says which); returns its length */
static socklen_t addr_of(union sa *u, const char *addr, int port)
{
	bool v6 = strchr(addr, ':');
	int ok;

	memset(u, 0, sizeof(*u));
	if (v6) {
		u->in6.sin6_family = AF_INET6;
		u->in6.sin6_port = htons(port);
		ok = inet_pton(AF_INET6, addr, &u->in6.sin6_addr);
	} else {
		u->in.sin_family = AF_INET;
		u->in.sin_port = htons(port);
		ok = inet_pton(AF_INET, addr, &u->in.sin_addr);
	}
	if (ok != 1) {
		fprintf(stderr, "bad address %s\n", addr);
		exit(2);
	}
	return v6 ? sizeof(u->in6) : sizeof(u->in);
}

static int stream_socket(void)
{
	int fd = socket(family, SOCK_STREAM, 0), one = 1;

	if (fd < 0) {
		perror("socket");
		exit(2);
	}
	/* SDP_STREAM_REGIONS=1: one-sided RDMA's room (the hostile peer's
	 * region messages are then parsed, not refused as not negotiated)
	 */
	if (family != AF_INET && env_int("SDP_STREAM_REGIONS", 0))
		setsockopt(fd, SOL_SDP, SDP_REGIONS, &one, sizeof(one));
	return fd;
}

static int listen_on(const char *addr, int port)
{
	union sa u;
	int fd = stream_socket(), one = 1;
	socklen_t len = addr_of(&u, addr, port);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, &u.sa, len) ||
	    listen(fd, 128)) {
		perror("bind/listen");
		exit(2);
	}
	return fd;
}

static int connect_to(const char *addr, int port)
{
	double end = now() + env_int("SDP_STREAM_WAIT", 20);
	union sa u;
	int fd;
	socklen_t len = addr_of(&u, addr, port);

	do {
		fd = stream_socket();
		if (!connect(fd, &u.sa, len)) {
			conn_timeouts(fd);
			return fd;
		}
		/* the server, or its host, may not be up yet */
		if (errno != ECONNREFUSED && errno != EHOSTUNREACH &&
		    errno != ETIMEDOUT && errno != ENETUNREACH) {
			perror("connect");
			exit(2);
		}
		close(fd);
		usleep(200000);
	} while (now() < end);
	fprintf(stderr, "connect %s port %d: %s for %d s\n", addr, port,
		strerror(errno), env_int("SDP_STREAM_WAIT", 20));
	exit(2);
}

/* accept(), with the connection's timeouts */
static int accept_conn(int lfd)
{
	int fd = accept(lfd, NULL, NULL);

	if (fd >= 0)
		conn_timeouts(fd);
	return fd;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= w;
	}
	return 0;
}

struct stream {
	int fd;
	uint64_t seed;
	uint64_t bytes;
	int delay;		/* seconds before reading */
	int result;		/* 0 ok, else an error was printed */
	double last;		/* time of the last byte read or written */
	const char *who;
	unsigned char *wbuf, *rbuf, *want;	/* MAX_IO each */
};

/* An I/O buffer, its pages touched now. */
static unsigned char *io_buf(void)
{
	unsigned char *b = malloc(MAX_IO);

	if (!b) {
		perror("malloc");
		exit(2);
	}
	memset(b, 0xa5, MAX_IO);	/* not 0: malloc + memset 0 may become calloc */
	return b;
}

/* A stream's buffers, before its connection: the program's memory is all
 * in place before the traffic starts (a test in a memory cgroup measures
 * what the sockets add to it).
 */
static void stream_bufs(struct stream *s)
{
	s->wbuf = io_buf();
	s->rbuf = io_buf();
	s->want = io_buf();
}

static struct stream *streams_new(int n)
{
	struct stream *s = calloc(n, sizeof(*s));
	int i;

	for (i = 0; s && i < n; i++)
		stream_bufs(&s[i]);
	return s;
}

static void *writer(void *arg)
{
	struct stream *s = arg;
	unsigned char *buf = s->wbuf;
	uint64_t done = 0, r = s->seed | 1;
	struct prng p;

	prng_init(&p, s->seed);
	s->last = now();
	while (done < s->bytes) {
		size_t n = io_size(&r);

		if (n > s->bytes - done)
			n = s->bytes - done;
		prng_fill(&p, buf, n);
		if (write_all(s->fd, buf, n)) {
			fprintf(stderr,
				"%s: write after %llu bytes: %s (%.1f s after the last progress, at %.1f)\n",
				s->who, (unsigned long long)done,
				strerror(errno), now() - s->last, wall());
			s->result = 1;
			break;
		}
		s->last = now();
		done += n;
	}
	return NULL;
}

/* Read and check s->bytes of the stream, then expect EOF. */
static int reader(struct stream *s, int echo_fd)
{
	unsigned char *buf = s->rbuf, *want = s->want;
	uint64_t done = 0, r = (s->seed * 7) | 1;
	struct prng p;
	ssize_t n;

	if (s->delay)
		sleep(s->delay);
	prng_init(&p, s->seed);
	s->last = now();
	for (;;) {
		n = read(s->fd, buf, io_size(&r));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr,
				"%s: read after %llu bytes: %s (%.1f s after the last progress, at %.1f)\n",
				s->who, (unsigned long long)done,
				strerror(errno), now() - s->last, wall());
			return 1;
		}
		if (n == 0)
			break;
		s->last = now();
		if (done + n > s->bytes) {
			fprintf(stderr, "%s: %llu bytes too many\n", s->who,
				(unsigned long long)(done + n - s->bytes));
			return 1;
		}
		prng_fill(&p, want, n);
		if (memcmp(buf, want, n)) {
			ssize_t i = 0;

			while (buf[i] == want[i])
				i++;
			fprintf(stderr, "%s: byte %llu differs\n", s->who,
				(unsigned long long)(done + i));
			return 1;
		}
		if (echo_fd >= 0 && write_all(echo_fd, buf, n)) {
			fprintf(stderr, "%s: echo: %s (%.1f s after the last progress, at %.1f)\n",
				s->who, strerror(errno), now() - s->last,
				wall());
			return 1;
		}
		done += n;
	}
	if (done != s->bytes) {
		fprintf(stderr, "%s: EOF after %llu of %llu bytes\n", s->who,
			(unsigned long long)done,
			(unsigned long long)s->bytes);
		return 1;
	}
	return 0;
}

/* The writer half-closes once done, so the echo ends with EOF. */
static void *writer_then_shut(void *arg)
{
	struct stream *s = arg;

	writer(s);
	shutdown(s->fd, SHUT_WR);
	return NULL;
}

static void *server_conn(void *arg)
{
	struct stream *s = arg;
	uint64_t hdr[2];
	size_t got = 0;

	while (got < sizeof(hdr)) {
		ssize_t n = read(s->fd, (char *)hdr + got, sizeof(hdr) - got);

		if (n <= 0) {
			fprintf(stderr, "server: no header\n");
			s->result = 1;
			return NULL;
		}
		got += n;
	}
	s->seed = hdr[0];
	s->bytes = hdr[1];
	s->result = reader(s, s->fd);
	shutdown(s->fd, SHUT_WR);
	close(s->fd);
	return NULL;
}

static int run_server(const char *addr, int port, int nconn)
{
	struct stream *s = streams_new(nconn);
	pthread_t *t = calloc(nconn, sizeof(*t));
	int lfd = listen_on(addr, port), i, bad = 0;

	printf("listening\n");
	fflush(stdout);
	for (i = 0; i < nconn; i++) {
		s[i].fd = accept_conn(lfd);
		if (s[i].fd < 0) {
			perror("accept");
			return 1;
		}
		s[i].who = "server";
		pthread_create(&t[i], NULL, server_conn, &s[i]);
	}
	for (i = 0; i < nconn; i++) {
		pthread_join(t[i], NULL);
		bad += s[i].result;
	}
	close(lfd);
	printf("server: %d of %d streams verified\n", nconn - bad, nconn);
	return bad ? 1 : 0;
}

static void *client_conn(void *arg)
{
	struct stream *s = arg;
	uint64_t hdr[2] = { s->seed, s->bytes };
	pthread_t w;

	if (write_all(s->fd, hdr, sizeof(hdr))) {
		s->result = 1;
		return NULL;
	}
	pthread_create(&w, NULL, writer_then_shut, s);
	s->result = reader(s, -1);
	pthread_join(w, NULL);
	close(s->fd);
	return NULL;
}

static int run_client(const char *addr, int port, int nconn,
		      uint64_t bytes, uint64_t seed)
{
	struct stream *s = streams_new(nconn);
	pthread_t *t = calloc(nconn, sizeof(*t));
	int i, bad = 0;

	for (i = 0; i < nconn; i++) {
		s[i].fd = connect_to(addr, port);
		s[i].seed = seed + i;
		s[i].bytes = bytes;
		s[i].who = "client";
	}
	for (i = 0; i < nconn; i++)
		pthread_create(&t[i], NULL, client_conn, &s[i]);
	for (i = 0; i < nconn; i++) {
		pthread_join(t[i], NULL);
		bad += s[i].result;
	}
	printf("client: %d of %d streams verified both ways, %llu bytes each\n",
	       nconn - bad, nconn, (unsigned long long)bytes);
	return bad ? 1 : 0;
}

static int run_bothfull(const char *addr, int port, uint64_t bytes)
{
	struct stream a = { .seed = 11, .bytes = bytes, .delay = 2,
			    .who = "end a" };
	struct stream b = { .seed = 22, .bytes = bytes, .delay = 2,
			    .who = "end b" };
	int lfd = listen_on(addr, port), bad;
	pthread_t wa, wb;

	stream_bufs(&a);
	stream_bufs(&b);

	a.fd = connect_to(addr, port);
	b.fd = accept(lfd, NULL, NULL);
	if (b.fd < 0) {
		perror("accept");
		return 1;
	}
	/* each end reads what the other end's writer sends */
	pthread_create(&wa, NULL, writer_then_shut, &a);
	pthread_create(&wb, NULL, writer_then_shut, &b);
	{
		struct stream ra = a, rb = b;

		ra.seed = b.seed;	/* a reads b's stream */
		rb.seed = a.seed;
		ra.who = "reader a";
		rb.who = "reader b";
		bad = reader(&ra, -1);
		bad += reader(&rb, -1);
	}
	pthread_join(wa, NULL);
	pthread_join(wb, NULL);
	bad += a.result + b.result;
	printf("bothfull: %s, %llu bytes each way\n", bad ? "FAILED" : "ok",
	       (unsigned long long)bytes);
	return bad ? 1 : 0;
}

static int run_sink(const char *addr, int port, int nconn, int delay)
{
	int lfd = listen_on(addr, port), i, fd;
	char buf[4096];
	ssize_t n, total;

	printf("listening\n");
	fflush(stdout);
	for (i = 0; i < nconn; i++) {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0) {
			perror("accept");
			return 1;
		}
		total = 0;
		sleep(delay);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			total += n;
		printf("conn %d: %zd bytes, then %s\n", i, total,
		       n < 0 ? strerror(errno) : "EOF");
		fflush(stdout);
		close(fd);
	}
	close(lfd);
	return 0;
}

static int run_gated(const char *addr, int port, uint64_t bytes)
{
	struct stream s = { .bytes = bytes, .who = "gated" };
	uint64_t done = 0, fill;
	char line[64];

	stream_bufs(&s);
	s.fd = connect_to(addr, port);
	printf("connected\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	fill = strtoull(line, NULL, 0);
	if (fill) {
		char *p = malloc(fill);

		if (!p)
			return 2;
		memset(p, 0x5a, fill);
	}
	printf("filled\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	while (done < bytes) {
		size_t n = bytes - done < 65536 ? bytes - done : 65536;

		if (write_all(s.fd, s.wbuf, n)) {
			printf("write after %llu bytes: %s\n",
			       (unsigned long long)done, strerror(errno));
			return 1;
		}
		done += n;
	}
	shutdown(s.fd, SHUT_WR);
	printf("sent %llu\n", (unsigned long long)done);
	return 0;
}

static int run_incast(const char *addr, int port, int nconn, int secs)
{
	int lfd = listen_on(addr, port), i, live = nconn;
	unsigned long long *got = calloc(nconn, sizeof(*got)), sum = 0, min;
	struct pollfd *pf = calloc(nconn, sizeof(*pf));
	unsigned char *buf = io_buf();
	double end;

	printf("listening\n");
	fflush(stdout);
	for (i = 0; i < nconn; i++) {
		pf[i].fd = accept_conn(lfd);
		pf[i].events = POLLIN;
		if (pf[i].fd < 0) {
			perror("accept");
			return 1;
		}
	}
	end = now() + secs;
	while (live && now() < end) {
		if (poll(pf, nconn, 100) < 0 && errno != EINTR)
			return 1;
		for (i = 0; i < nconn; i++) {
			ssize_t n;

			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLERR | POLLHUP)))
				continue;
			n = read(pf[i].fd, buf, MAX_IO);
			if (n > 0) {
				got[i] += n;
				continue;
			}
			printf("conn %d: ended early: %s\n", i,
			       n ? strerror(errno) : "EOF");
			close(pf[i].fd);
			pf[i].fd = -1;
			live--;
		}
	}
	min = got[0];
	for (i = 0; i < nconn; i++) {
		printf("conn %d: %llu bytes\n", i, got[i]);
		sum += got[i];
		if (got[i] < min)
			min = got[i];
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	}
	printf("fairness %.2f\n", sum ? min * (double)nconn / sum : 0.0);
	close(lfd);
	return live == nconn ? 0 : 1;
}

static int run_flood(const char *addr, int port)
{
	unsigned char *buf = io_buf();
	unsigned long long done = 0;
	int fd = connect_to(addr, port);
	ssize_t n;

	while ((n = write(fd, buf, 65536)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			done += n;
	printf("flood: %llu bytes, then %s\n", done, strerror(errno));
	close(fd);
	return errno == EPIPE || errno == ECONNRESET ? 0 : 1;
}

static int run_greeter(const char *addr, int port, int nconn)
{
	struct timeval tv = { 10, 0 };
	int lfd = listen_on(addr, port), i, fd;
	char hello[100], reply[2];

	memset(hello, 'g', sizeof(hello));
	printf("listening\n");
	fflush(stdout);
	for (i = 0; i < nconn; i++) {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0) {
			perror("accept");
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (write_all(fd, hello, sizeof(hello)) == 0)
			(void)!read(fd, reply, sizeof(reply));
		close(fd);
	}
	close(lfd);
	return 0;
}

enum greeted { GREETED, NO_CONNECT, NO_GREETING, NO_ANSWER, GREETED_N };

/* One greeted connection; a failed connect() leaves its errno. */
static enum greeted greeted_one(const char *addr, int port, bool first)
{
	struct timeval tv = { 5, 0 };
	enum greeted ret = GREETED;
	char buf[100];
	size_t got = 0;
	ssize_t n;
	int fd;

	if (first) {
		fd = connect_to(addr, port);	/* waits for the server */
	} else {
		union sa u;
		socklen_t len = addr_of(&u, addr, port);

		fd = stream_socket();
		if (connect(fd, &u.sa, len)) {
			int err = errno;

			close(fd);
			errno = err;
			return NO_CONNECT;
		}
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got < sizeof(buf) &&
	       (n = read(fd, buf + got, sizeof(buf) - got)) > 0)
		got += n;
	if (got < sizeof(buf) || buf[0] != 'g' || buf[99] != 'g')
		ret = NO_GREETING;
	else if (write(fd, "ok", 2) != 2)
		ret = NO_ANSWER;
	close(fd);
	return ret;
}

static int run_greeted(const char *addr, int port, int nconn)
{
	int i, n[GREETED_N] = { 0 }, conn_err = 0;

	for (i = 0; i < nconn; i++) {
		enum greeted g = greeted_one(addr, port, !i);

		if (g == NO_CONNECT && !conn_err)
			conn_err = errno;
		n[g]++;
	}
	printf("%d of %d greeted; connect failed %d%s%s, no greeting %d, no answer %d\n",
	       n[GREETED], nconn, n[NO_CONNECT], conn_err ? ": " : "",
	       conn_err ? strerror(conn_err) : "", n[NO_GREETING],
	       n[NO_ANSWER]);
	return n[GREETED] == nconn ? 0 : 1;
}

int main(int argc, char **argv)
{
	alarm(1500);	/* a hang fails the test instead of stalling it */
	signal(SIGPIPE, SIG_IGN);	/* a write's error is printed instead */
	if (argc < 5)
		goto usage;
	if (strchr(argv[3], ':'))
		family = !strcmp(argv[2], "tcp") ? AF_INET6 :
			 sdp_module_param("af_inet6_sdp", AF_INET6_SDP);
	else
		family = !strcmp(argv[2], "tcp") ? AF_INET :
			 sdp_module_param("af_inet_sdp", AF_INET_SDP);

	if (!strcmp(argv[1], "server") && argc == 6)
		return run_server(argv[3], atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(argv[1], "client") && argc == 8)
		return run_client(argv[3], atoi(argv[4]), atoi(argv[5]),
				  strtoull(argv[6], NULL, 0),
				  strtoull(argv[7], NULL, 0));
	if (!strcmp(argv[1], "sink") && (argc == 6 || argc == 7))
		return run_sink(argv[3], atoi(argv[4]), atoi(argv[5]),
				argc == 7 ? atoi(argv[6]) : 0);
	if (!strcmp(argv[1], "gated") && argc == 6)
		return run_gated(argv[3], atoi(argv[4]),
				 strtoull(argv[5], NULL, 0));
	if (!strcmp(argv[1], "incast") && argc == 7)
		return run_incast(argv[3], atoi(argv[4]), atoi(argv[5]),
				  atoi(argv[6]));
	if (!strcmp(argv[1], "flood") && argc == 5)
		return run_flood(argv[3], atoi(argv[4]));
	if (!strcmp(argv[1], "greeter") && argc == 6)
		return run_greeter(argv[3], atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(argv[1], "greeted") && argc == 6)
		return run_greeted(argv[3], atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(argv[1], "bothfull") && argc == 6)
		return run_bothfull(argv[3], atoi(argv[4]),
				    strtoull(argv[5], NULL, 0));
usage:
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
