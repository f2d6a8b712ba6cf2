// SPDX-License-Identifier: GPL-2.0
/*
 * Keepalive against a peer that vanishes, on TCP and on SDP at once.
 *
 *   sdp_ka server ADDR PORT
 *	accept one TCP connection on PORT and one SDP connection on PORT + 1
 *	(on iWARP an SDP port is a TCP port too), turn on SO_KEEPALIVE
 *	with TCP_KEEPIDLE 1, TCP_KEEPINTVL 1, TCP_KEEPCNT 3 on both, and
 *	wait in recv() on both; print how each ended ("ETIMEDOUT after N s")
 *	and exit 0 if both ended with ETIMEDOUT within 30 s.
 *   sdp_ka client ADDR PORT SECONDS
 *	connect over TCP and SDP (retrying until the server listens), print
 *	"connected", stay SECONDS, then close both.  The caller makes this
 *	host silent meanwhile.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/tcp.h>
#include <sys/socket.h>

#include <linux/sdp.h>

#include "check.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct sockaddr_in sa(const char *a, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

static int server(const char *addr, int port)
{
	int fam[2] = { AF_INET, AF_INET_SDP }, l[2], c[2], i, ok = 0;
	const char *name[2] = { "TCP", "SDP" };
	struct sockaddr_in s = sa(addr, port);
	struct pollfd p[2];
	double start, end[2] = { 0, 0 };
	int err[2] = { 0, 0 };

	for (i = 0; i < 2; i++) {
		int one = 1;

		s.sin_port = htons(port + i);	/* see the top */
		l[i] = socket(fam[i], SOCK_STREAM, 0);
		setsockopt(l[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (l[i] < 0 || bind(l[i], (struct sockaddr *)&s, sizeof(s)) ||
		    listen(l[i], 1)) {
			perror("listen");
			return 2;
		}
	}
	printf("listening\n");
	fflush(stdout);
	for (i = 0; i < 2; i++) {
		int on = 1, idle = 1, intvl = 1, cnt = 3;

		c[i] = accept(l[i], NULL, NULL);
		if (c[i] < 0) {
			perror("accept");
			return 2;
		}
		setsockopt(c[i], SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
		setsockopt(c[i], IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
		setsockopt(c[i], IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
		setsockopt(c[i], IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
		p[i].fd = c[i];
		p[i].events = POLLIN;
	}
	printf("accepted both, keepalive 1 s / 1 s / 3\n");
	fflush(stdout);
	start = now();
	while (now() - start < 30 && (!end[0] || !end[1])) {
		if (poll(p, 2, 1000) <= 0)
			continue;
		for (i = 0; i < 2; i++) {
			char b;
			ssize_t n;

			if (!p[i].revents || end[i])
				continue;
			n = recv(c[i], &b, 1, MSG_DONTWAIT);
			if (n > 0)
				continue;
			end[i] = now();
			err[i] = n < 0 ? errno : 0;
			p[i].fd = -1;
		}
	}
	for (i = 0; i < 2; i++) {
		if (!end[i]) {
			printf("%s: still open after 30 s\n", name[i]);
			continue;
		}
		printf("%s: %s after %.1f s\n", name[i],
		       err[i] ? errname(err[i]) : "EOF", end[i] - start);
		ok += err[i] == ETIMEDOUT;
	}
	return ok == 2 ? 0 : 1;
}

static int client(const char *addr, int port, int secs)
{
	int fam[2] = { AF_INET, AF_INET_SDP }, c[2], i, tries;
	struct sockaddr_in s = sa(addr, port);

	for (i = 0; i < 2; i++) {
		s.sin_port = htons(port + i);
		for (tries = 0; tries < 600; tries++) {
			c[i] = socket(fam[i], SOCK_STREAM, 0);
			if (!connect(c[i], (struct sockaddr *)&s, sizeof(s)))
				break;
			close(c[i]);
			c[i] = -1;
			usleep(100000);
		}
		if (c[i] < 0) {
			perror("connect");
			return 2;
		}
	}
	printf("connected\n");
	fflush(stdout);
	sleep(secs);
	close(c[0]);
	close(c[1]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "server"))
		return server(argv[2], atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
