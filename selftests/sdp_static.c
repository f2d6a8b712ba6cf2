// SPDX-License-Identifier: GPL-2.0
/*
 * A program that knows nothing of SDP, linked statically (no LD_PRELOAD
 * can reach it): for bpf_policy.sh, which runs it under and outside an
 * sdp_bpf(8) policy.
 *
 *   sdp_static ADDR PORT
 *	socket(AF_INET, SOCK_STREAM, 0) three times (listener, client,
 *	accepted), 4 MiB from client to server and back, every byte
 *	checked; prints "protocols L C A" (each socket's SO_PROTOCOL) and
 *	"rows N" (rows of /proc/net/sdp while connected).
 * Exits 0 if every byte came back right.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BULK	(4 << 20)

static int proto(int fd)
{
	socklen_t len = sizeof(int);
	int v = -1;

	getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len);
	return v;
}

static int rows(void)
{
	FILE *f = fopen("/proc/net/sdp", "r");
	char line[512];
	int n = -1;

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n;
}

static int io(int fd, unsigned char *b, size_t n, int tx)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = tx ? write(fd, b + done, n - done) :
				 read(fd, b + done, n - done);

		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *out = malloc(BULK), *in = malloc(BULK);
	struct sockaddr_in a = { .sin_family = AF_INET };
	int l, c, s, one = 1, ok;
	size_t i;

	if (argc < 3 || !out || !in)
		return 2;
	a.sin_port = htons(atoi(argv[2]));
	inet_pton(AF_INET, argv[1], &a.sin_addr);
	l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1)) {
		perror("sdp_static: bind/listen");
		return 1;
	}
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, sizeof(a))) {
		perror("sdp_static: connect");
		return 1;
	}
	s = accept(l, NULL, NULL);
	printf("protocols %d %d %d\nrows %d\n", proto(l), proto(c), proto(s),
	       rows());
	for (i = 0; i < BULK; i++)
		out[i] = (unsigned char)(i * 7 + (i >> 16));
	if (!fork())
		_exit(io(c, out, BULK, 1) || io(c, in, BULK, 0) ||
		      memcmp(in, out, BULK));
	ok = !io(s, in, BULK, 0) && !io(s, in, BULK, 1);
	wait(&one);
	ok = ok && WIFEXITED(one) && !WEXITSTATUS(one);
	printf("bytes %s\n", ok ? "ok" : "BAD");
	return !ok;
}
