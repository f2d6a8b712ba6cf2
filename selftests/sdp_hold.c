// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper: hold SDP sockets open until standard input reaches EOF (or
 * the process is killed), after printing "ready".
 *
 * Usage: sdp_hold [FAMILY]          one unconnected socket (default 27)
 *        sdp_hold many N            N unconnected sockets (AF_INET_SDP)
 *        sdp_hold pair ADDR PORT    a connection to itself: a listener
 *                                   on ADDR:PORT, a client and the
 *                                   accepted end (AF_INET_SDP)
 *        sdp_hold listen ADDR PORT  a listener bound to ADDR:PORT that
 *                                   accepts nothing until told: each line
 *                                   on stdin, "listen" or "accept", does
 *                                   that on the same socket and prints
 *                                   "listen: ERR" / "accept: ERR"
 *                                   ("success", or the errno's name)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int hold_pair(const char *addr, int port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	int l = socket(27, SOCK_STREAM, 0), c = socket(27, SOCK_STREAM, 0);
	int one = 1, a;

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 || l < 0 || c < 0) {
		perror("sdp_hold: socket");
		return -1;
	}
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) || listen(l, 4) ||
	    connect(c, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("sdp_hold: bind/listen/connect");
		return -1;
	}
	a = accept(l, NULL, NULL);
	if (a < 0) {
		perror("sdp_hold: accept");
		return -1;
	}
	return 0;
}

/* The listener of "listen": told what to do, line by line. */
static int hold_listener(const char *addr, int port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	struct timeval tv = { 15, 0 };
	int l = socket(27, SOCK_STREAM, 0);
	char line[64];

	if (l < 0 || inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
	    bind(l, (struct sockaddr *)&sin, sizeof(sin)) || listen(l, 8)) {
		perror("sdp_hold: listen");
		return 1;
	}
	setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		int r = -2;

		if (!strncmp(line, "listen", 6))
			r = listen(l, 8);
		else if (!strncmp(line, "accept", 6))
			r = accept(l, NULL, NULL) < 0 ? -1 : 0;
		if (r == -2)
			continue;
		printf("%.6s: %s\n", line, r ? strerrorname_np(errno) : "success");
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char c;

	if (argc == 4 && !strcmp(argv[1], "listen"))
		return hold_listener(argv[2], atoi(argv[3]));

	if (argc == 3 && !strcmp(argv[1], "many")) {
		int i, n = atoi(argv[2]);
		struct rlimit rl = { n + 64, n + 64 };

		setrlimit(RLIMIT_NOFILE, &rl);
		for (i = 0; i < n; i++)
			if (socket(27, SOCK_STREAM, 0) < 0) {
				perror("sdp_hold: socket");
				return 1;
			}
	} else if (argc == 4 && !strcmp(argv[1], "pair")) {
		if (hold_pair(argv[2], atoi(argv[3])))
			return 1;
	} else {
		int family = argc > 1 ? atoi(argv[1]) : 27;

		if (socket(family, SOCK_STREAM, 0) < 0) {
			perror("sdp_hold: socket");
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
