// SPDX-License-Identifier: GPL-2.0
/*
 * socket(AF_INET, SOCK_STREAM, IPPROTO_SDP) and its AF_INET6 twin: an SDP
 * socket (Documentation/sdp.rst, "IPPROTO_SDP").
 *
 *   sdp_ipproto ADDR ADDR6 PORT
 *	For each family: the socket says AF_INET(6) and IPPROTO_SDP (and
 *	so does an accepted one), is listed in /proc/net/sdp while
 *	connected, names its addresses in the family's sockaddr, moves
 *	8 MiB both ways with every byte checked, and SO_ZEROCOPY with
 *	MSG_ZEROCOPY completes every send (where the kernel lets
 *	SOL_SOCKET reach the protocol, SOCK_CUSTOM_SOCKOPT: else
 *	EOPNOTSUPP, as on family 27).  Other socket types with
 *	IPPROTO_SDP are refused as inet_create() refuses them.
 * Exits 0 if all was right.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "check.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif

#define BULK	(8 << 20)

static int proto;

static int getint(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(fd, level, name, &v, &len))
		return -errno;
	return v;
}

static socklen_t mkaddr(int fam, const char *a, int port,
			struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (fam == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		inet_pton(AF_INET, a, &s->sin_addr);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	inet_pton(AF_INET6, a, &s6->sin6_addr);
	return sizeof(*s6);
}

/* Is a row of /proc/net/sdp on local port @port? */
static bool proc_has_port(int port)
{
	FILE *f = fopen("/proc/net/sdp", "r");
	char line[512], hex[16];
	bool found = false;

	snprintf(hex, sizeof(hex), ":%04X ", port);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, hex))
			found = true;
	if (f)
		fclose(f);
	return found;
}

static void fill(unsigned char *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 131 + seed + (i >> 12));
}

static bool full_io(int fd, unsigned char *b, size_t n, bool tx)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = tx ? send(fd, b + done, n - done, MSG_NOSIGNAL) :
				 recv(fd, b + done, n - done, 0);

		if (r <= 0)
			return false;
		done += r;
	}
	return true;
}

/* MSG_ZEROCOPY sends of 1 MiB: each completion id once. */
static void zerocopy(int c, int s, unsigned char *buf)
{
	int on = 1, sends = 8, ids = 0, r;
	char cbuf[128];

	r = setsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof(on));
	if (r && errno == EOPNOTSUPP) {
		CHECK(getint(c, SOL_SOCKET, SO_ZEROCOPY) == 0,
		      "SO_ZEROCOPY: EOPNOTSUPP, this kernel keeps SOL_SOCKET to itself");
		return;
	}
	CHECK(!r && getint(c, SOL_SOCKET, SO_ZEROCOPY) == 1,
	      "SO_ZEROCOPY set through the socket core: %s",
	      errname(r ? errno : 0));
	if (!fork()) {
		unsigned char *in = malloc(1 << 20);
		int i;

		for (i = 0; i < sends; i++)
			if (!full_io(s, in, 1 << 20, false))
				_exit(1);
		free(in);
		_exit(0);
	}
	for (int i = 0; i < sends; i++)
		CHECK(send(c, buf, 1 << 20, MSG_ZEROCOPY) == 1 << 20,
		      "MSG_ZEROCOPY send %d", i);
	while (ids < sends) {
		struct msghdr m = { .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct pollfd p = { .fd = c, .events = 0 };
		struct cmsghdr *cm;

		if (poll(&p, 1, 10000) != 1)
			break;
		if (recvmsg(c, &m, MSG_ERRQUEUE) < 0)
			continue;
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			struct sock_extended_err *e = (void *)CMSG_DATA(cm);

			if (e->ee_origin == SO_EE_ORIGIN_ZEROCOPY)
				ids += e->ee_data - e->ee_info + 1;
		}
	}
	CHECK(ids == sends, "every MSG_ZEROCOPY send completed (%d of %d)",
	      ids, sends);
	wait(&r);
	CHECK(WIFEXITED(r) && !WEXITSTATUS(r), "... and the peer read them");
}

static void one_family(int fam, const char *addr, int port)
{
	const char *fn = fam == AF_INET ? "AF_INET" : "AF_INET6";
	unsigned char *out = malloc(BULK), *in = malloc(BULK);
	struct sockaddr_storage ss, got;
	socklen_t len = mkaddr(fam, addr, port, &ss), glen;
	int l, c, s, one = 1;

	l = socket(fam, SOCK_STREAM, proto);
	CHECK(l >= 0, "%s: socket(%s, SOCK_STREAM, IPPROTO_SDP): %s", fn, fn,
	      errname(l < 0 ? errno : 0));
	if (l < 0)
		return;
	CHECK(getint(l, SOL_SOCKET, SO_DOMAIN) == fam &&
	      getint(l, SOL_SOCKET, SO_PROTOCOL) == proto &&
	      getint(l, SOL_SOCKET, SO_TYPE) == SOCK_STREAM,
	      "%s: SO_DOMAIN %d, SO_PROTOCOL %d, SO_TYPE %d", fn,
	      getint(l, SOL_SOCKET, SO_DOMAIN),
	      getint(l, SOL_SOCKET, SO_PROTOCOL),
	      getint(l, SOL_SOCKET, SO_TYPE));
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(!bind(l, (struct sockaddr *)&ss, len) && !listen(l, 4),
	      "%s: bind and listen", fn);
	c = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, proto);
	CHECK(!connect(c, (struct sockaddr *)&ss, len), "%s: connect: %s", fn,
	      errname(errno));
	s = accept(l, NULL, NULL);
	CHECK(s >= 0 && getint(s, SOL_SOCKET, SO_PROTOCOL) == proto &&
	      getint(s, SOL_SOCKET, SO_DOMAIN) == fam,
	      "%s: accepted, the same protocol and family", fn);
	glen = sizeof(got);
	CHECK(!getpeername(c, (struct sockaddr *)&got, &glen) &&
	      got.ss_family == fam && glen == len,
	      "%s: getpeername gives the family's sockaddr", fn);
	CHECK(proc_has_port(port), "%s: listed in /proc/net/sdp", fn);

	fill(out, BULK, fam);
	if (!fork()) {
		_exit(!full_io(c, out, BULK, true));
	}
	CHECK(full_io(s, in, BULK, false) && !memcmp(in, out, BULK),
	      "%s: 8 MiB client to server, every byte", fn);
	wait(NULL);
	fill(out, BULK, fam + 7);
	if (!fork()) {
		_exit(!full_io(s, out, BULK, true));
	}
	CHECK(full_io(c, in, BULK, false) && !memcmp(in, out, BULK),
	      "%s: 8 MiB server to client, every byte", fn);
	wait(NULL);
	zerocopy(c, s, out);
	close(c);
	CHECK(recv(s, in, 1, 0) == 0, "%s: EOF after close", fn);
	close(s);
	close(l);
	free(in);
	free(out);
}

int main(int argc, char **argv)
{
	int fd;

	if (argc < 4) {
		fprintf(stderr, "usage: %s ADDR ADDR6 PORT\n", argv[0]);
		return 2;
	}
	proto = sdp_module_param("ipproto_sdp", IPPROTO_SDP);
	one_family(AF_INET, argv[1], atoi(argv[3]));
	one_family(AF_INET6, argv[2], atoi(argv[3]) + 1);

	fd = socket(AF_INET, SOCK_DGRAM, proto);
	CHECK(fd < 0 && errno == EPROTONOSUPPORT,
	      "SOCK_DGRAM with IPPROTO_SDP: %s", errname(fd < 0 ? errno : 0));
	fd = socket(AF_INET6, SOCK_SEQPACKET, proto);
	CHECK(fd < 0 && (errno == EPROTONOSUPPORT || errno == ESOCKTNOSUPPORT),
	      "SOCK_SEQPACKET with IPPROTO_SDP: %s",
	      errname(fd < 0 ? errno : 0));
	return check_exit();
}
