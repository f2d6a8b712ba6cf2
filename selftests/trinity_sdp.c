// SPDX-License-Identifier: GPL-2.0
/*
 * An LD_PRELOAD shim that points an unmodified syscall fuzzer, Debian's
 * trinity, at SDP sockets (syscall_fuzz.sh).
 *
 * trinity builds its pool of sockets at start with socket(3) for the
 * families of its own table, which knows neither 27 nor IPPROTO_SDP
 * (its -P takes a name: 28 is "MPLS", 27 has none), and crashes on a
 * socket cache file naming them.  So every TCP socket(3) it makes
 * becomes an SDP socket: families 27 and 28, and
 * IPPROTO_SDP in AF_INET and AF_INET6, in turn, with the flags it asked
 * for; the other triplets it tries fail, as most do for nobody.  Then some are set up
 * as a program would have them, so that the fuzzing reaches more than
 * closed sockets: one in four listens on a port of its own, one in four
 * connects to SDP_FUZZ_PEER (ADDR:PORT, a listener of the test's) with
 * SDP_REGIONS asked first; the rest stay closed.  Everything after that
 * (its fuzzed calls) goes by syscall(2), past this shim.
 *
 * SDP_FUZZ_PEER unset: sockets only.  rand() is wrapped too (below), for
 * a bug of trinity's own.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/sdp.h>

#ifndef IPPROTO_SDP
#define IPPROTO_SDP 261
#endif

static const struct { int family, protocol; } triplets[] = {
	{ AF_INET_SDP, 0 },
	{ AF_INET6_SDP, 0 },
	{ AF_INET, IPPROTO_SDP },
	{ AF_INET6, IPPROTO_SDP },
};

static int (*real_socket)(int, int, int);

/* @fd as a program might have it: listening, connected, or closed. */
static void sdp_fuzz_setup(int fd, int family, unsigned int n)
{
	static unsigned short next_port = 20000;
	const char *peer = getenv("SDP_FUZZ_PEER");
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char a[64], *colon;
	int one = 1;

	/* sockaddr_in: families 27/28 take one (the old stack's rule), the
	 * IPPROTO_SDP AF_INET6 ones do not: left closed
	 */
	if (!peer || family == AF_INET6 || strlen(peer) >= sizeof(a))
		return;
	strcpy(a, peer);
	colon = strchr(a, ':');
	if (!colon)
		return;
	*colon = '\0';
	inet_pton(AF_INET, a, &sin.sin_addr);
	switch (n % 4) {
	case 0:
		sin.sin_port = htons(next_port++);
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
			listen(fd, 8);
		break;
	case 1:
		sin.sin_port = htons(atoi(colon + 1));
		setsockopt(fd, SOL_SDP, SDP_REGIONS, &one, sizeof(one));
		connect(fd, (struct sockaddr *)&sin, sizeof(sin));
		break;
	}
}

/* Debian's trinity (2023.01) sets a random option now and then by the
 * table of net_protocols[rand() % 46], which has 45 entries
 * (do_random_sso(): nm -S shows 0x168 bytes): one pick in 46 reads past
 * its end and the fuzzer crashes itself, at start or in a child.  No
 * number of ours is 45 modulo 46; the others are as random as they were.
 */
int rand(void)
{
	static int (*real_rand)(void);
	int r;

	if (!real_rand)
		real_rand = (int (*)(void))dlsym(RTLD_NEXT, "rand");
	r = real_rand();
	return r % 46 == 45 ? r - 1 : r;
}

int socket(int domain, int type, int protocol)
{
	static unsigned int n;
	int flags = type & (SOCK_NONBLOCK | SOCK_CLOEXEC), fd, i;

	if (!real_socket)
		real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	/* TCP's triplets only: trinity goes on to set options by its table
	 * of the protocol asked for, whose entries for protocols nobody may
	 * create (raw ones, say) it never reaches natively, and some crash
	 */
	if ((domain != AF_INET && domain != AF_INET6) ||
	    (type & ~flags) != SOCK_STREAM ||
	    (protocol && protocol != IPPROTO_TCP)) {
		errno = EPERM;		// as a raw socket for nobody
		return -1;
	}
	i = n % (sizeof(triplets) / sizeof(triplets[0]));
	fd = real_socket(triplets[i].family, SOCK_STREAM | flags,
			 triplets[i].protocol);
	if (fd >= 0)
		sdp_fuzz_setup(fd, triplets[i].family, n / 4);
	n++;
	return fd;
}
