// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_mem: memory one end of a local connection makes the other hold
 * (issue 34, claims 4 and 7).
 *
 *   sdp_mem sink FAM ADDR PORT N
 *	accept N connections and never read; print "accepted N", then wait
 *	for standard input to close; at each line it reads, read up to 1 MiB
 *	of each connection and print "read"
 *   sdp_mem fill FAM ADDR PORT N SECS
 *	N connections, non-blocking, written in 64 KiB writes round robin
 *	until every one says EAGAIN, or SECS pass; print "filled BYTES,
 *	errors E" (errors other than EAGAIN)
 *   sdp_mem mapread FAM ADDR PORT FILE
 *	one connection to itself: the reader waits in recv() with its
 *	buffer a MAP_SHARED mapping of FILE (1 MiB), the writer sends 1 MiB
 *	of 'x' after a second; print "read BYTES ok" if the bytes arrived
 *
 * FAM is tcp or sdp.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <linux/sdp.h>

#define MAX_CONN	256
#define MAPLEN		(1 << 20)

static int family;

static int tcp_or_sdp(const char *f, const char *addr)
{
	bool v6 = strchr(addr, ':');

	if (!strcmp(f, "tcp"))
		return v6 ? AF_INET6 : AF_INET;
	return v6 ? AF_INET6_SDP : AF_INET_SDP;
}

static socklen_t addr_of(struct sockaddr_storage *ss, const char *a, int port)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(a, ':')) {
		struct sockaddr_in6 *s6 = (void *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, a, &s6->sin6_addr);
		return sizeof(*s6);
	}
	((struct sockaddr_in *)ss)->sin_family = AF_INET;
	((struct sockaddr_in *)ss)->sin_port = htons(port);
	inet_pton(AF_INET, a, &((struct sockaddr_in *)ss)->sin_addr);
	return sizeof(struct sockaddr_in);
}

static int must(int r, const char *what)
{
	if (r < 0) {
		perror(what);
		exit(2);
	}
	return r;
}

static int listen_on(const char *a, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(&ss, a, port);
	int fd = must(socket(family, SOCK_STREAM, 0), "socket"), one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	must(bind(fd, (void *)&ss, len), "bind");
	must(listen(fd, MAX_CONN), "listen");
	return fd;
}

static int connect_to(const char *a, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(&ss, a, port);
	int fd, tries;

	for (tries = 0; tries < 100; tries++) {
		fd = must(socket(family, SOCK_STREAM, 0), "socket");
		if (!connect(fd, (void *)&ss, len))
			return fd;
		close(fd);
		usleep(100 * 1000);
	}
	perror("connect");
	exit(2);
}

static int run_sink(const char *a, int port, int n)
{
	int l = listen_on(a, port), i, fds[MAX_CONN];
	char c;

	printf("listening\n");
	fflush(stdout);
	for (i = 0; i < n; i++)
		fds[i] = must(accept(l, NULL, NULL), "accept");
	printf("accepted %d\n", n);
	fflush(stdout);
	/* a line on standard input: read 1 MiB of each, and say so */
	while (read(0, &c, 1) > 0) {
		static char buf[1 << 20];

		if (c != '\n')
			continue;
		for (i = 0; i < n; i++)
			if (recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT) < 0 &&
			    errno != EAGAIN)
				perror("recv");
		printf("read\n");
		fflush(stdout);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

static int run_fill(const char *a, int port, int n, int secs)
{
	static char buf[64 << 10];
	int fds[MAX_CONN], i, errors = 0;
	long long total = 0;
	bool full[MAX_CONN] = { 0 };
	time_t end = time(NULL) + secs;
	int nfull = 0;

	memset(buf, 'f', sizeof(buf));
	for (i = 0; i < n; i++) {
		fds[i] = connect_to(a, port);
		fcntl(fds[i], F_SETFL, O_NONBLOCK);
	}
	while (nfull < n && time(NULL) < end) {
		for (i = 0; i < n; i++) {
			ssize_t w;

			if (full[i])
				continue;
			w = send(fds[i], buf, sizeof(buf), MSG_NOSIGNAL);
			if (w > 0) {
				total += w;
				continue;
			}
			if (w < 0 && errno != EAGAIN)
				errors++;
			full[i] = true;
			nfull++;
		}
	}
	printf("filled %lld, errors %d\n", total, errors);
	return 0;
}

struct mapread {
	int fd;
	char *map;
	ssize_t got;
};

static void *reader(void *arg)
{
	struct mapread *m = arg;

	m->got = recv(m->fd, m->map, MAPLEN, MSG_WAITALL);
	return NULL;
}

static int run_mapread(const char *a, int port, const char *file)
{
	int l = listen_on(a, port), c, s, f, i;
	static char buf[MAPLEN];
	struct mapread m;
	pthread_t t;

	f = must(open(file, O_RDWR | O_CREAT | O_TRUNC, 0600), "open");
	must(ftruncate(f, MAPLEN), "ftruncate");
	m.map = mmap(NULL, MAPLEN, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (m.map == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	memset(m.map, 0, MAPLEN);
	c = connect_to(a, port);
	s = must(accept(l, NULL, NULL), "accept");
	m.fd = s;
	pthread_create(&t, NULL, reader, &m);
	sleep(1);	/* the reader waits in recv() */
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < MAPLEN; ) {
		ssize_t w = send(c, buf + i, MAPLEN - i, 0);

		if (w <= 0) {
			perror("send");
			return 1;
		}
		i += w;
	}
	pthread_join(t, NULL);
	for (i = 0; i < MAPLEN && m.map[i] == 'x'; i++)
		;
	printf("read %zd %s\n", m.got, i == MAPLEN ? "ok" : "wrong");
	return !(m.got == MAPLEN && i == MAPLEN);
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: sdp_mem sink|fill|mapread FAM ADDR PORT ...\n");
		return 2;
	}
	family = tcp_or_sdp(argv[2], argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "sink"))
		return run_sink(argv[3], atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(argv[1], "fill") && argc == 7)
		return run_fill(argv[3], atoi(argv[4]), atoi(argv[5]),
				atoi(argv[6]));
	if (!strcmp(argv[1], "mapread"))
		return run_mapread(argv[3], atoi(argv[4]), argv[5]);
	fprintf(stderr, "sdp_mem: bad arguments\n");
	return 2;
}
