// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_echo: two peers that both write before they read (issue 33).
 *
 *   sdp_echo [OPTIONS] pair FAM ADDR PORT NCONN BYTES MAXCHUNK
 *	server and clients in one process
 *   sdp_echo [OPTIONS] server FAM ADDR PORT NCONN
 *   sdp_echo [OPTIONS] client FAM ADDR PORT NCONN BYTES MAXCHUNK
 *	the two ends apart (two hosts)
 *
 * Each of NCONN client connections writes a chunk of 1 to MAXCHUNK bytes
 * (random, seeded), in full, with blocking writes, then reads the echo
 * back and checks it, then writes the next, until BYTES went each way.
 * The server reads up to 4 MiB at a time and writes what it read back in
 * full before it reads again.  So while a client writes a chunk it does
 * not read, and while the server writes an echo it does not read: what
 * each direction of the connection can hold (the sender's send buffer and
 * the receiver's receive window) decides whether the two meet or both
 * wait for ever.  Over TCP with the host's default sysctls chunks of
 * 4 MiB go through.
 *
 * OPTIONS
 *   -b BYTES	SO_SNDBUF and SO_RCVBUF on every socket of both ends
 *   -r STEP	chunk k is (k + 1) * STEP bytes instead of random (a ramp:
 *		the chunks completed before a stall measure what the
 *		connection holds)
 *   -s SECS	a stall: no byte moved for SECS seconds (default 10)
 *   -S SEED	seed of the chunk sizes and bytes (default 1)
 *
 * FAM is "tcp" (AF_INET) or "sdp" (AF_INET_SDP); an IPv6 ADDR makes it
 * AF_INET6 or AF_INET6_SDP.  The client (and pair) prints one line:
 *   echo: ok, NCONN x BYTES each way, CHUNKS chunks, T s
 *   echo: STALLED, no byte moved for S s, CHUNKS chunks echoed (...)
 * and exits 0, 3 on a stall, 1 on any other failure (a byte that came
 * back wrong, an I/O error).  On a stall it first runs the shell command
 * in SDP_ECHO_ON_STALL, if set (to look at the stuck sockets).  The
 * server prints "served NCONN, ERR errors" and exits 0 once every
 * connection has ended.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <linux/sdp.h>

#define ECHO_READ	(4 << 20)	/* the server's read size */
#define MAX_CONN	64

static int family;
static int opt_buf;		/* -b */
static size_t opt_step;		/* -r */
static int opt_stall = 10;	/* -s */
static uint64_t opt_seed = 1;	/* -S */

/* bytes moved by anyone: the stall watchdog's clock */
static atomic_ullong progress;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

union sa {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

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

static int new_socket(void)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0) {
		perror("socket");
		exit(2);
	}
	if (opt_buf &&
	    (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &opt_buf, sizeof(opt_buf)) ||
	     setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &opt_buf, sizeof(opt_buf)))) {
		perror("SO_SNDBUF/SO_RCVBUF");
		exit(2);
	}
	return fd;
}

static int listen_on(const char *addr, int port)
{
	int fd = new_socket(), one = 1;
	union sa u;
	socklen_t len = addr_of(&u, addr, port);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, &u.sa, len) || listen(fd, MAX_CONN)) {
		perror("bind/listen");
		exit(2);
	}
	return fd;
}

static int connect_to(const char *addr, int port)
{
	union sa u;
	socklen_t len = addr_of(&u, addr, port);
	double end = now() + 20;
	int fd;

	for (;;) {
		fd = new_socket();
		if (!connect(fd, &u.sa, len))
			return fd;
		if ((errno != ECONNREFUSED && errno != ETIMEDOUT) || now() > end) {
			perror("connect");
			exit(2);
		}
		close(fd);
		usleep(200 * 1000);
	}
}

/* the server's side of one connection */
static void *echo_serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char *buf = malloc(ECHO_READ);
	ssize_t n, w, off;
	intptr_t err = 0;

	for (;;) {
		n = read(fd, buf, ECHO_READ);
		if (n <= 0) {
			err = n < 0;
			break;
		}
		atomic_fetch_add(&progress, n);
		for (off = 0; off < n; off += w) {
			w = write(fd, buf + off, n - off);
			if (w < 0)
				goto out;
			atomic_fetch_add(&progress, w);
		}
	}
out:
	if (n > 0)
		err = 1;
	close(fd);
	free(buf);
	return (void *)err;
}

struct server {
	int lfd, nconn, errors;
};

static void *serve_all(void *arg)
{
	struct server *s = arg;
	pthread_t t[MAX_CONN];
	void *ret;
	int i;

	for (i = 0; i < s->nconn; i++) {
		int fd = accept(s->lfd, NULL, NULL);

		if (fd < 0) {
			perror("accept");
			exit(2);
		}
		pthread_create(&t[i], NULL, echo_serve, (void *)(intptr_t)fd);
	}
	for (i = 0; i < s->nconn; i++) {
		pthread_join(t[i], &ret);
		s->errors += !!ret;
	}
	return NULL;
}

/* one client connection */
struct client {
	int fd, id;
	uint64_t bytes;		/* each way */
	size_t maxchunk;
	/* its state, for the stall report */
	atomic_int chunks;	/* echoed whole */
	atomic_size_t chunk;	/* the chunk's size */
	atomic_size_t written, echoed;	/* of the chunk */
	int result;		/* 0, or 1 */
	char why[96];
};

static size_t chunk_size(struct client *c, uint64_t *s, uint64_t left)
{
	size_t n;

	if (opt_step)
		n = (size_t)(c->chunks + 1) * opt_step;
	else
		n = 1 + rng(s) % c->maxchunk;
	return n < left ? n : left;
}

static void *client_run(void *arg)
{
	struct client *c = arg;
	uint64_t s = opt_seed * 1000003 + c->id + 1, left = c->bytes;
	unsigned char *out = malloc(c->maxchunk), *in = malloc(c->maxchunk);
	ssize_t n;
	size_t i, len;

	if (opt_step) {
		free(out);
		free(in);
		out = malloc(c->bytes);
		in = malloc(c->bytes);
	}
	while (left) {
		len = chunk_size(c, &s, left);
		for (i = 0; i < len; i += 8) {
			uint64_t r = rng(&s);

			memcpy(out + i, &r, len - i < 8 ? len - i : 8);
		}
		c->echoed = 0;
		c->written = 0;
		c->chunk = len;
		while (c->written < len) {
			n = write(c->fd, out + c->written, len - c->written);
			if (n < 0) {
				snprintf(c->why, sizeof(c->why), "write: %s",
					 strerror(errno));
				goto fail;
			}
			c->written += n;
			atomic_fetch_add(&progress, n);
		}
		while (c->echoed < len) {
			n = read(c->fd, in + c->echoed, len - c->echoed);
			if (n <= 0) {
				snprintf(c->why, sizeof(c->why), "read: %s",
					 n ? strerror(errno) : "end of stream");
				goto fail;
			}
			c->echoed += n;
			atomic_fetch_add(&progress, n);
		}
		if (memcmp(in, out, len)) {
			snprintf(c->why, sizeof(c->why),
				 "chunk %d came back different", c->chunks);
			goto fail;
		}
		c->chunks++;
		left -= len;
	}
	free(out);
	free(in);
	return NULL;
fail:
	c->result = 1;
	free(out);
	free(in);
	return NULL;
}

static int run_clients(const char *addr, int port, int nconn, uint64_t bytes,
		       size_t maxchunk)
{
	static struct client cl[MAX_CONN];
	pthread_t t[MAX_CONN];
	bool joined[MAX_CONN] = { 0 };
	unsigned long long last = ~0ull;
	double start = now(), still = now();
	int i, chunks = 0, bad = 0;
	bool done;

	for (i = 0; i < nconn; i++) {
		cl[i].fd = connect_to(addr, port);
		cl[i].id = i;
		cl[i].bytes = bytes;
		cl[i].maxchunk = maxchunk;
	}
	for (i = 0; i < nconn; i++)
		pthread_create(&t[i], NULL, client_run, &cl[i]);

	do {
		unsigned long long p;

		usleep(100 * 1000);
		p = atomic_load(&progress);
		if (p != last) {
			last = p;
			still = now();
		}
		done = true;
		for (i = 0; i < nconn; i++) {
			if (!joined[i])
				joined[i] = !pthread_tryjoin_np(t[i], NULL);
			done &= joined[i] || cl[i].result;
		}
		if (!done && now() - still > opt_stall) {
			for (i = 0; i < nconn; i++)
				chunks += cl[i].chunks;
			printf("echo: STALLED, no byte moved for %d s, %d chunks echoed\n",
			       opt_stall, chunks);
			for (i = 0; i < nconn; i++) {
				printf("  conn %d: %d chunks echoed;",
				       i, cl[i].chunks);
				printf(" chunk of %zu: %zu written, %zu echoed\n",
				       cl[i].chunk, cl[i].written, cl[i].echoed);
			}
			fflush(stdout);
			/* a look at the stuck sockets before they go */
			if (getenv("SDP_ECHO_ON_STALL") &&
			    system(getenv("SDP_ECHO_ON_STALL")) < 0)
				perror("SDP_ECHO_ON_STALL");
			_exit(3);
		}
	} while (!done);

	for (i = 0; i < nconn; i++) {
		chunks += cl[i].chunks;
		if (cl[i].result) {
			printf("echo: conn %d failed: %s\n", i, cl[i].why);
			bad++;
		}
		close(cl[i].fd);
	}
	if (bad)
		return 1;
	printf("echo: ok, %d x %llu each way, %d chunks, %.1f s\n", nconn,
	       (unsigned long long)bytes, chunks, now() - start);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sdp_echo [-b BYTES] [-r STEP] [-s SECS] [-S SEED] pair|client FAM ADDR PORT NCONN BYTES MAXCHUNK\n"
		"       sdp_echo [-b BYTES] server FAM ADDR PORT NCONN\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct server srv = { 0 };
	const char *mode, *addr;
	pthread_t st;
	int opt, port, nconn, rc;
	uint64_t bytes = 0;
	size_t maxchunk = 0;

	while ((opt = getopt(argc, argv, "b:r:s:S:")) != -1) {
		switch (opt) {
		case 'b':
			opt_buf = atoi(optarg);
			break;
		case 'r':
			opt_step = strtoull(optarg, NULL, 0);
			break;
		case 's':
			opt_stall = atoi(optarg);
			break;
		case 'S':
			opt_seed = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	argv += optind;
	argc -= optind;
	if (argc < 5)
		usage();
	mode = argv[0];
	addr = argv[2];
	port = atoi(argv[3]);
	nconn = atoi(argv[4]);
	if (!strcmp(argv[1], "tcp"))
		family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	else if (!strcmp(argv[1], "sdp"))
		family = strchr(addr, ':') ? AF_INET6_SDP : AF_INET_SDP;
	else
		usage();
	if (nconn < 1 || nconn > MAX_CONN)
		usage();
	if (strcmp(mode, "server")) {
		if (argc < 7)
			usage();
		bytes = strtoull(argv[5], NULL, 0);
		maxchunk = strtoull(argv[6], NULL, 0);
		if (!bytes || !maxchunk)
			usage();
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "server") || !strcmp(mode, "pair")) {
		srv.lfd = listen_on(addr, port);
		srv.nconn = nconn;
	}
	if (!strcmp(mode, "server")) {
		serve_all(&srv);
		printf("served %d, %d errors\n", nconn, srv.errors);
		return 0;
	}
	if (!strcmp(mode, "pair"))
		pthread_create(&st, NULL, serve_all, &srv);
	else if (strcmp(mode, "client"))
		usage();
	rc = run_clients(addr, port, nconn, bytes, maxchunk);
	if (!strcmp(mode, "pair") && !rc)
		pthread_join(st, NULL);
	return rc;
}
