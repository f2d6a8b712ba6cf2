// SPDX-License-Identifier: GPL-2.0
/*
 * Stress of the local transport: many connections on 127.0.0.1 over
 * AF_INET_SDP, every byte checked, while everything that may happen to a
 * connection happens at random points.
 *
 *   sdp_lstress SECONDS PORT CLIENTS THREADS
 *
 * Two servers (PORT, PORT + 1), processes with a thread per connection:
 * each reads into buffers of random sizes around the single copy's
 * threshold (16 KiB) with a 5 ms SO_RCVTIMEO and signals arriving every
 * millisecond or so (no SA_RESTART: EAGAIN and EINTR all the time), and
 * checks every byte against the stream's pattern; at EOF it answers the
 * byte count.  The second server is killed and started again every
 * 700 ms.  CLIENTS client processes of THREADS threads each, killed and
 * started again at random (one every 250 ms): each thread connects,
 * sends a random-sized stream in writes of sizes around the threshold
 * (under signals too), and ends it in one of four ways: shutdown() and
 * the count compared; close() with SO_LINGER {1, 0} half way;
 * connect(AF_UNSPEC) half way and a connect() of the same socket to a
 * server again; or that while a second thread waits in recv() on the
 * socket (its buffer offered to the single copy), which then reads the
 * new connection's answer.  At the end the clients and the first server stop
 * cleanly and report; prints
 *   "server: streams N, bytes N, bad N, aborted N"
 *   "clients: streams N, bad N, aborted N, reconnects N, kills N"
 * ("bad": a byte not as sent, or a count not as sent; must be 0).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/uapi/linux/sdp.h"

#define MAXCLI	16

struct stats {			/* shared between the processes */
	atomic_long srv_streams, srv_bytes, srv_bad, srv_aborted;
	atomic_long cli_streams, cli_bad, cli_aborted, cli_reconnects;
};

static struct stats *st;
static struct sockaddr_in sa;
static volatile sig_atomic_t stopping;

static uint8_t pat(uint32_t seed, uint64_t i)
{
	uint32_t x = (uint32_t)i ^ (seed * 0x9e3779b9u) ^ (uint32_t)(i >> 32);

	x *= 0x85ebca6bu;
	x ^= x >> 13;
	return x >> 7;
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* A size around the single copy's threshold, or small, or large. */
static size_t some_size(uint32_t *r)
{
	switch (rnd(r) % 6) {
	case 0:
		return 1 + rnd(r) % 200;
	case 1:
		return 16384 - 64 + rnd(r) % 129;
	case 2:
		return 12288 + rnd(r) % 8192;
	case 3:
		return 65536;
	case 4:
		return 1 + rnd(r) % 65536;
	default:
		return 131072 + rnd(r) % 131072;
	}
}

static void on_signal(int sig)
{
	(void)sig;
}

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction a = { .sa_handler = fn };	/* no SA_RESTART */

	sigaction(sig, &a, NULL);
}

/* Sends SIGUSR1 to the process now and then, until it exits. */
static void *pester(void *arg)
{
	(void)arg;
	for (;;) {
		usleep(700 + rand() % 600);
		kill(getpid(), SIGUSR1);
	}
	return NULL;
}

/* ---- servers ----------------------------------------------------------- */

/* recv() through EAGAIN (SO_RCVTIMEO) and EINTR; <0 on error. */
static ssize_t recv_some(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = recv(fd, buf, len, 0);

		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return n;
	}
}

static int send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static void *serve(void *arg)
{
	static __thread uint8_t buf[262144];
	struct timeval tv = { 0, 5000 };
	int fd = (int)(long)arg;
	uint32_t seed, r = (uint32_t)fd * 2654435761u | 1;
	uint64_t off = 0, bad = 0;
	ssize_t n, i;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (i = 0; i < 4; i += n) {
		n = recv_some(fd, (char *)&seed + i, 4 - i);
		if (n <= 0)
			goto out;
	}
	while ((n = recv_some(fd, buf, some_size(&r))) > 0) {
		for (i = 0; i < n; i++)
			bad += buf[i] != pat(seed, off + i);
		off += n;
	}
	st->srv_bytes += off;
	st->srv_bad += bad != 0;
	if (n == 0 && !send_all(fd, &off, sizeof(off)))
		st->srv_streams++;
	else
		st->srv_aborted++;
out:
	close(fd);
	return NULL;
}

static void run_server(int port)
{
	struct sockaddr_in a = sa;
	int l = socket(AF_INET_SDP, SOCK_STREAM, 0), one = 1;
	pthread_t t;

	a.sin_port = htons(port);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 128)) {
		perror("server: listen");
		_exit(1);
	}
	handle(SIGUSR1, on_signal);
	handle(SIGTERM, on_stop);
	pthread_create(&t, NULL, pester, NULL);
	while (!stopping) {
		int fd = accept(l, NULL, NULL);
		pthread_attr_t at;

		if (fd < 0)
			continue;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 1 << 20);
		if (pthread_create(&t, &at, serve, (void *)(long)fd))
			close(fd);
	}
	close(l);
	sleep(2);	/* the streams under way end */
	_exit(0);
}

/* ---- clients ----------------------------------------------------------- */

static int connect_to(int fd, uint32_t *r)
{
	struct sockaddr_in a = sa;
	int tries;

	for (tries = 0; tries < 200 && !stopping; tries++) {
		a.sin_port = htons(ntohs(sa.sin_port) + rnd(r) % 2);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return 0;
		if (errno == EINTR || errno == EISCONN)
			return errno == EISCONN ? 0 : -1;
		usleep(2000);
	}
	return -1;
}

/* The stream's count, as the server answers it: @have bytes of it came
 * to a reader thread already.
 */
static int read_count(int fd, uint64_t *back, size_t have)
{
	ssize_t got;

	for (; have < sizeof(*back); have += got) {
		got = recv(fd, (char *)back + have, sizeof(*back) - have, 0);
		if (got < 0 && errno == EINTR)
			got = 0;
		else if (got <= 0)
			return -1;
	}
	return 0;
}

/* One stream on @fd: 0 done and counted, 1 ended half way on purpose. */
static int stream(int fd, uint32_t *r, int how)
{
	static __thread uint8_t buf[262144];
	uint64_t len = rnd(r) % (4 << 20), off = 0, half = len / 2, back;
	uint32_t seed = rnd(r);
	struct linger lg = { 1, 0 };
	size_t n, i;

	if (send_all(fd, &seed, 4))
		return -1;
	while (off < len) {
		n = some_size(r);
		if (n > len - off)
			n = len - off;
		for (i = 0; i < n; i++)
			buf[i] = pat(seed, off + i);
		if (send_all(fd, buf, n))
			return -1;
		off += n;
		if (how && off >= half) {
			if (how == 1)
				setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg,
					   sizeof(lg));
			return 1;
		}
	}
	shutdown(fd, SHUT_WR);
	if (read_count(fd, &back, 0))
		return -1;
	st->cli_bad += back != len;
	st->cli_streams++;
	return 0;
}

/* A second thread reading the socket: it waits (offering its buffer to
 * the single copy) while the first one disconnects it and connects it
 * again, then takes what the new connection answers, to its end.
 */
struct reader {
	int fd;
	size_t got;
	uint64_t back;
};

static void *reader(void *arg)
{
	static __thread uint8_t buf[65536];
	struct reader *rd = arg;
	ssize_t n;

	for (;;) {
		n = recv(rd->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;	/* the old connection's end, or EOF */
		if (rd->got + n > sizeof(rd->back)) {
			rd->got = SIZE_MAX;	/* more than a count */
			return NULL;
		}
		memcpy((char *)&rd->back + rd->got, buf, n);
		rd->got += n;
	}
}

/* how 3: a reader waits in recv() while @fd is disconnected half way
 * and connected again; the new stream's count goes to whichever thread
 * reads it.  0 done and counted.
 */
static int stream_reread(int fd, uint32_t *r)
{
	static __thread uint8_t buf[65536];
	struct sockaddr un = { .sa_family = AF_UNSPEC };
	struct reader rd = { .fd = fd };
	uint64_t back = 0, len;
	uint32_t seed;
	pthread_t t;
	size_t off, n, i;
	int ret = -1;

	if (pthread_create(&t, NULL, reader, &rd))
		return -1;
	usleep(rnd(r) % 3000);
	if (stream(fd, r, 2) != 1 || connect(fd, &un, sizeof(un)) ||
	    connect_to(fd, r))
		goto out;
	st->cli_reconnects++;
	seed = rnd(r);
	len = rnd(r) % (1 << 20);
	if (send_all(fd, &seed, 4))
		goto out;
	for (off = 0; off < len; off += n) {
		n = len - off < sizeof(buf) ? len - off : sizeof(buf);
		for (i = 0; i < n; i++)
			buf[i] = pat(seed, off + i);
		if (send_all(fd, buf, n))
			goto out;
	}
	shutdown(fd, SHUT_WR);
	ret = 0;
out:
	if (ret)
		shutdown(fd, SHUT_RDWR);	/* the reader ends too */
	pthread_join(t, NULL);
	if (ret || rd.got == SIZE_MAX)
		return -1;
	back = rd.back;
	if (read_count(fd, &back, rd.got))
		return -1;
	st->cli_bad += back != len;
	st->cli_streams++;
	return 0;
}

static void *client(void *arg)
{
	uint32_t r = (uint32_t)(long)arg * 2654435761u ^ getpid();
	struct sockaddr un = { .sa_family = AF_UNSPEC };
	int fd = -1, how;

	r |= 1;
	while (!stopping) {
		if (fd < 0)
			fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
		if (connect_to(fd, &r)) {
			close(fd);
			fd = -1;
			continue;
		}
		/* 1: abort, 2: AF_UNSPEC, 3: that under a reader, else whole */
		how = rnd(&r) % 8;
		how = how > 3 ? 0 : how;
		if (how == 3) {
			if (stream_reread(fd, &r))
				st->cli_aborted++;
		} else if (stream(fd, &r, how) < 0) {
			st->cli_aborted++;
		} else if (how == 2) {
			st->cli_reconnects++;
			if (!connect(fd, &un, sizeof(un)))
				continue;	/* the same socket again */
		} else if (how == 1) {
			st->cli_aborted++;
		}
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void run_client(int threads)
{
	pthread_t t[64], p;
	int i;

	handle(SIGUSR1, on_signal);
	handle(SIGTERM, on_stop);
	pthread_create(&p, NULL, pester, NULL);
	for (i = 0; i < threads && i < 64; i++)
		pthread_create(&t[i], NULL, client, (void *)(long)i);
	for (i = 0; i < threads && i < 64; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

static pid_t spawn(void (*fn)(int), int arg)
{
	pid_t pid = fork();

	if (!pid)
		fn(arg);
	return pid;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	pid_t cli[MAXCLI], srv[2];
	int secs, port, ncli, threads, i, kills = 0;
	double end, next_kill, next_srv;

	if (argc != 5) {
		fprintf(stderr, "usage: see the comment at the top of %s\n",
			__FILE__);
		return 2;
	}
	secs = atoi(argv[1]);
	port = atoi(argv[2]);
	ncli = atoi(argv[3]) > MAXCLI ? MAXCLI : atoi(argv[3]);
	threads = atoi(argv[4]);
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	srv[0] = spawn(run_server, port);
	srv[1] = spawn(run_server, port + 1);
	usleep(300000);
	for (i = 0; i < ncli; i++)
		cli[i] = spawn(run_client, threads);
	end = now() + secs;
	next_kill = now() + 0.25;
	next_srv = now() + 0.7;
	while (now() < end) {
		usleep(20000);
		if (now() >= next_kill) {	/* a client dies anywhere */
			i = rand() % ncli;
			kill(cli[i], SIGKILL);
			waitpid(cli[i], NULL, 0);
			cli[i] = spawn(run_client, threads);
			kills++;
			next_kill += 0.25;
		}
		if (now() >= next_srv) {	/* and the second server */
			kill(srv[1], SIGKILL);
			waitpid(srv[1], NULL, 0);
			srv[1] = spawn(run_server, port + 1);
			kills++;
			next_srv += 0.7;
		}
	}
	for (i = 0; i < ncli; i++)
		kill(cli[i], SIGTERM);
	for (i = 0; i < ncli; i++)
		waitpid(cli[i], NULL, 0);
	kill(srv[1], SIGKILL);
	waitpid(srv[1], NULL, 0);
	kill(srv[0], SIGTERM);
	waitpid(srv[0], NULL, 0);
	printf("server: streams %ld, bytes %ld, bad %ld, aborted %ld\n",
	       st->srv_streams, st->srv_bytes, st->srv_bad, st->srv_aborted);
	printf("clients: streams %ld, bad %ld, aborted %ld, reconnects %ld, kills %d\n",
	       st->cli_streams, st->cli_bad, st->cli_aborted,
	       st->cli_reconnects, kills);
	return 0;
}
