// SPDX-License-Identifier: GPL-2.0
/*
 * Socket creation on AF_INET_SDP / AF_INET6_SDP, compared with what
 * AF_INET / AF_INET6 do for the same arguments.
 *
 *  - socket(SDP, SOCK_STREAM, 0 or IPPROTO_TCP) works; SO_TYPE, SO_PROTOCOL
 *    and SO_DOMAIN read back as for TCP (SO_DOMAIN is the SDP family);
 *  - SOCK_NONBLOCK and SOCK_CLOEXEC set O_NONBLOCK and FD_CLOEXEC;
 *  - every (type, protocol) that AF_INET refuses, SDP refuses with the
 *    same errno; those AF_INET accepts but SDP does not provide (UDP, raw,
 *    SCTP, MPTCP, ...) fail with the errno AF_INET gives for a type or
 *    protocol it does not provide: ESOCKTNOSUPPORT / EPROTONOSUPPORT;
 *  - the SOL_SDP options: SDP_ZCOPY_THRESH defaults to the module
 *    parameter and is settable, SDP_LAST_BIND_ERR is 0 on a new socket;
 *  - 2000 sockets open at once, then closed.
 *
 * Usage: sdp_socket [FAMILY4 FAMILY6]   (default 27 28)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "check.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/* Returns 0 or the errno of socket(); closes the socket. */
static int try_socket(int family, int type, int protocol)
{
	int fd = socket(family, type, protocol);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int sockopt_int(int fd, int level, int name)
{
	int val = -12345;
	socklen_t len = sizeof(val);

	if (getsockopt(fd, level, name, &val, &len) < 0)
		return -errno;
	return val;
}

static void check_basic(int sdp)
{
	int protos[] = { 0, IPPROTO_TCP };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		int fd = socket(sdp, SOCK_STREAM, protos[i]);

		CHECK(fd >= 0, "socket(%d, SOCK_STREAM, %d): %s", sdp,
		      protos[i], fd < 0 ? errname(errno) : "fd");
		if (fd < 0)
			continue;
		CHECK(sockopt_int(fd, SOL_SOCKET, SO_TYPE) == SOCK_STREAM,
		      "SO_TYPE is SOCK_STREAM");
		CHECK(sockopt_int(fd, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP,
		      "SO_PROTOCOL is IPPROTO_TCP");
		CHECK(sockopt_int(fd, SOL_SOCKET, SO_DOMAIN) == sdp,
		      "SO_DOMAIN is %d", sdp);
		CHECK(sockopt_int(fd, SOL_SOCKET, SO_ACCEPTCONN) == 0,
		      "SO_ACCEPTCONN is 0");
		CHECK(sockopt_int(fd, SOL_SOCKET, SO_ERROR) == 0,
		      "SO_ERROR is 0");
		CHECK(!(fcntl(fd, F_GETFL) & O_NONBLOCK), "blocking by default");
		CHECK(!(fcntl(fd, F_GETFD) & FD_CLOEXEC), "no FD_CLOEXEC by default");
		CHECK(close(fd) == 0, "close");
	}
}

static void check_flags(int sdp, int inet)
{
	int fd = socket(sdp, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int tfd = socket(inet, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0 && tfd >= 0, "socket(%d, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC, 0)", sdp);
	if (fd < 0 || tfd < 0)
		return;
	CHECK(fcntl(fd, F_GETFL) == fcntl(tfd, F_GETFL) &&
	      (fcntl(fd, F_GETFL) & O_NONBLOCK),
	      "O_NONBLOCK set, file flags as TCP's (0x%x vs 0x%x)",
	      fcntl(fd, F_GETFL), fcntl(tfd, F_GETFL));
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "FD_CLOEXEC set");
	close(fd);
	close(tfd);
}

/*
 * Same arguments on both families.  Where AF_INET fails, SDP must fail the
 * same way; where AF_INET succeeds with a type or protocol SDP does not
 * provide, SDP must give the errno AF_INET uses for that situation.
 */
static void check_errors(int sdp, int inet)
{
	static const int types[] = {
		SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP,
		SOCK_PACKET, 11, 64,
	};
	static const int protos[] = {
		IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_SCTP, IPPROTO_UDPLITE,
		IPPROTO_RAW, 200, IPPROTO_MPTCP, IPPROTO_MAX,
		1000, -1, 0x7fffffff,
	};
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int ie = try_socket(inet, types[i], 0);
		int se = try_socket(sdp, types[i], 0);
		int want = ie ? ie : ESOCKTNOSUPPORT;

		CHECK(se == want, "type %d: SDP %s, expected %s (AF_INET: %s)",
		      types[i], errname(se), errname(want), errname(ie));
	}
	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		int ie = try_socket(inet, SOCK_STREAM, protos[i]);
		int se = try_socket(sdp, SOCK_STREAM, protos[i]);
		int want = ie ? ie : EPROTONOSUPPORT;

		CHECK(se == want,
		      "SOCK_STREAM protocol %d: SDP %s, expected %s (AF_INET: %s)",
		      protos[i], errname(se), errname(want), errname(ie));
	}
	/* A bad type with a bad protocol: the protocol range is checked first. */
	CHECK(try_socket(sdp, SOCK_DGRAM, -1) == try_socket(inet, SOCK_DGRAM, -1),
	      "SOCK_DGRAM protocol -1: same errno as AF_INET (%s)",
	      errname(try_socket(inet, SOCK_DGRAM, -1)));
}

static void check_sdp_options(int sdp)
{
	int fd = socket(sdp, SOCK_STREAM, 0);
	int val, param = sdp_module_param("sdp_zcopy_thresh", -1);
	socklen_t len;

	if (fd < 0)
		return;
	CHECK(sockopt_int(fd, SOL_SDP, SDP_ZCOPY_THRESH) == param,
	      "SDP_ZCOPY_THRESH defaults to sdp_zcopy_thresh (%d)", param);
	val = 4096;
	CHECK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &val, sizeof(val)) == 0 &&
	      sockopt_int(fd, SOL_SDP, SDP_ZCOPY_THRESH) == 4096,
	      "SDP_ZCOPY_THRESH set to 4096 reads back");
	val = 0;
	CHECK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &val, sizeof(val)) == 0 &&
	      sockopt_int(fd, SOL_SDP, SDP_ZCOPY_THRESH) == 0,
	      "SDP_ZCOPY_THRESH 0 (off) reads back");
	val = -1;
	errno = 0;
	CHECK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &val, sizeof(val)) < 0 &&
	      errno == EINVAL, "SDP_ZCOPY_THRESH -1: EINVAL (%s)", errname(errno));
	errno = 0;
	CHECK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &val, 2) < 0 &&
	      errno == EINVAL, "SDP_ZCOPY_THRESH optlen 2: EINVAL (%s)", errname(errno));
	errno = 0;
	CHECK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, (void *)8, sizeof(val)) < 0 &&
	      errno == EFAULT, "SDP_ZCOPY_THRESH bad pointer: EFAULT (%s)", errname(errno));
	errno = 0;
	CHECK(setsockopt(fd, SOL_SDP, SDP_LAST_BIND_ERR, &val, sizeof(val)) < 0 &&
	      errno == ENOPROTOOPT, "SDP_LAST_BIND_ERR is read only: ENOPROTOOPT (%s)",
	      errname(errno));
	CHECK(sockopt_int(fd, SOL_SDP, SDP_LAST_BIND_ERR) == 0,
	      "SDP_LAST_BIND_ERR is 0 on a new socket");
	CHECK(sockopt_int(fd, SOL_SDP, 9999) == -ENOPROTOOPT,
	      "unknown SOL_SDP option: ENOPROTOOPT");
	len = 2;
	val = 0;
	CHECK(getsockopt(fd, SOL_SDP, SDP_LAST_BIND_ERR, &val, &len) == 0 && len == 2,
	      "getsockopt with a short buffer truncates (len %u)", len);
	close(fd);
}

static void check_many(int sdp)
{
	enum { N = 2000 };
	static int fds[N];
	struct rlimit rl = { N + 64, N + 64 };
	int i, opened = 0, closed = 0;

	setrlimit(RLIMIT_NOFILE, &rl);
	for (i = 0; i < N; i++) {
		fds[i] = socket(sdp, SOCK_STREAM, 0);
		if (fds[i] >= 0)
			opened++;
	}
	for (i = 0; i < N; i++)
		if (fds[i] >= 0 && close(fds[i]) == 0)
			closed++;
	CHECK(opened == N && closed == N, "%d sockets opened and closed (%d/%d)",
	      N, opened, closed);
}

int main(int argc, char **argv)
{
	int fam4 = argc > 2 ? atoi(argv[1]) : AF_INET_SDP;
	int fam6 = argc > 2 ? atoi(argv[2]) : AF_INET6_SDP;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# AF_INET_SDP=%d vs AF_INET\n", fam4);
	check_basic(fam4);
	check_flags(fam4, AF_INET);
	check_errors(fam4, AF_INET);
	check_sdp_options(fam4);
	check_many(fam4);

	printf("# AF_INET6_SDP=%d vs AF_INET6\n", fam6);
	check_basic(fam6);
	check_flags(fam6, AF_INET6);
	check_errors(fam6, AF_INET6);
	check_sdp_options(fam6);
	return check_exit();
}
