// SPDX-License-Identifier: GPL-2.0
/*
 * The newest surfaces as hostile ground: what a local user, unprivileged,
 * may try on the TCP twin and fallback of IPPROTO_SDP sockets, on
 * /dev/sdp_az, and against a sandbox (harden.sh drives it).
 *
 *   sdp_harden twin-race ADDR PORT SECONDS
 *	two threads poll() and accept4() on an IPPROTO_SDP listener while
 *	the main thread turns it into a client and back: connect(AF_UNSPEC),
 *	connect() to an SDP server of its own, connect(AF_UNSPEC), listen().
 *	Each connect that SDP completes used to free the listener's TCP
 *	twin under the other two (an oops, or a read of freed memory).
 *   sdp_harden fb-race ADDR PORT SECONDS
 *	two threads connect() one IPPROTO_SDP socket, blocking, to a port
 *	nobody listens on (SDP refused, then TCP's fallback refused too) and
 *	disconnect it, together: a connect() waiting on TCP's connect used
 *	its fallback after another's connect() had freed it.
 *   sdp_harden az-walk ADDR PORT
 *	an SDP_AZ_SEND naming 64 TiB of write-protected, never touched
 *	memory on a 1-byte send (the module used to look at every page of
 *	it, unkillable), and a send naming its own 8 MiB past
 *	RLIMIT_MEMLOCK: both answered at once.
 *   sdp_harden landlock ADDR PORT
 *	(6.7+) a Landlock ruleset that handles TCP connects and allows
 *	PORT + 1 and PORT + 3 only: a TCP connect elsewhere is EACCES, and
 *	so is an SDP one (families 27 and IPPROTO_SDP), whatever carries
 *	it, and the TCP fallback a denied connect prepared carries no later
 *	one; PORT + 1 is reached, by SDP.
 *   sdp_harden sandbox PORT -- COMMAND [ARG...]
 *	COMMAND under the same ruleset (connects to PORT only), as nobody.
 *   sdp_harden connect ADDR PORT
 *	a plain TCP client (for libsdp and the BPF policy to move): prints
 *	"connect ok PROTO" or "connect ERRNO".
 *   sdp_harden bind ADDR PORT
 *	a plain TCP bind: prints "bind ok" or "bind ERRNO".
 *   sdp_harden region-life ADDR PORT dereg|close
 *	(root: a userfaultfd for the kernel's faults) a peer's WRITE into a
 *	region stalls on a fault of its source; SDP_REGION_DEREG or close()
 *	returns at once and no byte of the region moves afterwards (the
 *	local transport went on copying after either, or DEREG waited for
 *	the fault for ever).
 *   sdp_harden region-zc ADDR PORT
 *	a MSG_ZEROCOPY WRITE by nobody with RLIMIT_MEMLOCK 0: it returns
 *	once complete, its notification saying "copied" (it went on
 *	asynchronously, its pages pinned uncharged).
 *   sdp_harden region-order ADDR PORT
 *	a region registered and deregistered while data waits for the
 *	peer's credits: the connection lives (the RegionRevoke overtook its
 *	RegionAdv: the peer reset it).
 * The race, az-walk and landlock modes run as nobody (uid 65534) when
 * started by root.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/errqueue.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "check.h"

#ifndef IPPROTO_SDP
#define IPPROTO_SDP 261
#endif

static atomic_bool stop;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in addr_of(const char *a, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };

	inet_pton(AF_INET, a, &sin.sin_addr);
	return sin;
}

/* Root drops to nobody: what follows is what any local user may do. */
static void become_nobody(void)
{
	if (geteuid())
		return;
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
		perror("drop to nobody");
		exit(KSFT_FAIL);
	}
}

static int listener(int proto, struct sockaddr_in *sin, int nonblock)
{
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | nonblock, proto);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)sin, sizeof(*sin)) ||
	    listen(fd, 64)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- twin-race ---------------------------------------------------------- */

struct race {
	int		fd;
	atomic_long	polls, accepts;
};

static void *poller(void *arg)
{
	struct race *r = arg;
	struct pollfd p = { .fd = r->fd, .events = POLLIN };

	while (!stop) {
		poll(&p, 1, 1);
		r->polls++;
	}
	return NULL;
}

static void *acceptor(void *arg)
{
	struct race *r = arg;
	int c;

	while (!stop) {
		c = accept4(r->fd, NULL, NULL, SOCK_NONBLOCK);
		if (c >= 0)
			close(c);
		r->accepts++;
	}
	return NULL;
}

/* The SDP server the victim connects to: accepts and closes. */
static void *server(void *arg)
{
	int l = *(int *)arg, c;

	while (!stop) {
		c = accept(l, NULL, NULL);
		if (c >= 0)
			close(c);
	}
	return NULL;
}

static int run_twin_race(const char *a, int port, int secs)
{
	struct sockaddr_in me = addr_of(a, port), srv = addr_of(a, port + 1);
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	struct race r = { 0 };
	pthread_t t[3];
	long rounds = 0, sdp_connects = 0;
	double end;
	struct timeval tv = { .tv_usec = 10000 };
	int s;

	become_nobody();
	s = listener(IPPROTO_SDP, &srv, 0);
	r.fd = listener(IPPROTO_SDP, &me, 0);
	CHECK(s >= 0 && r.fd >= 0, "IPPROTO_SDP listeners on %s:%d, %d as nobody",
	      a, port + 1, port);
	if (s < 0 || r.fd < 0)
		return check_exit();
	/* accept() waits, blocking, a while at a time */
	setsockopt(r.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	pthread_create(&t[0], NULL, poller, &r);
	pthread_create(&t[1], NULL, acceptor, &r);
	pthread_create(&t[2], NULL, server, &s);
	end = now() + secs;
	while (now() < end) {
		connect(r.fd, &unspec, sizeof(unspec));
		/* blocking: SDP's success is known before connect() returns */
		sdp_connects += !connect(r.fd, (struct sockaddr *)&srv,
					 sizeof(srv));
		connect(r.fd, &unspec, sizeof(unspec));
		listen(r.fd, 64);
		rounds++;
	}
	stop = true;
	shutdown(s, SHUT_RDWR);
	shutdown(r.fd, SHUT_RDWR);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	pthread_join(t[2], NULL);
	printf("# %ld rounds, %ld connected by SDP, %ld polls, %ld accepts\n",
	       rounds, sdp_connects, (long)r.polls, (long)r.accepts);
	CHECK(rounds > 10 && sdp_connects > 10,
	      "the listener became a client and a listener again, many times");
	close(r.fd);
	close(s);
	return check_exit();
}

/* ---- fb-race ------------------------------------------------------------ */

struct fbr {
	int			fd;
	struct sockaddr_in	dst;
	atomic_long		refused, other;
};

static void *fb_connector(void *arg)
{
	struct fbr *f = arg;
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };

	while (!stop) {
		if (connect(f->fd, (struct sockaddr *)&f->dst, sizeof(f->dst)) &&
		    errno == ECONNREFUSED)
			f->refused++;
		else
			f->other++;
		connect(f->fd, &unspec, sizeof(unspec));
	}
	return NULL;
}

static int run_fb_race(const char *a, int port, int secs)
{
	struct fbr f = { .dst = addr_of(a, port) };
	pthread_t t[2];

	become_nobody();
	f.fd = socket(AF_INET, SOCK_STREAM, IPPROTO_SDP);
	CHECK(f.fd >= 0, "an IPPROTO_SDP socket as nobody");
	if (f.fd < 0)
		return check_exit();
	pthread_create(&t[0], NULL, fb_connector, &f);
	pthread_create(&t[1], NULL, fb_connector, &f);
	sleep(secs);
	stop = true;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	printf("# %ld refused, %ld other answers\n", (long)f.refused,
	       (long)f.other);
	CHECK(f.refused > 10, "connects refused by SDP and by TCP's fallback");
	close(f.fd);
	return check_exit();
}

/* ---- az-walk ------------------------------------------------------------ */

/* A connected pair: @c the client, bound to the AZ channel @chan. */
static bool az_pair(const char *a, int port, int chan, int *c, int *s)
{
	struct sockaddr_in sin = addr_of(a, port);
	int l = socket(AF_INET_SDP, SOCK_STREAM, 0), one = 1;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(l, 4))
		return false;
	*c = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (*c < 0 || connect(*c, (struct sockaddr *)&sin, sizeof(sin)))
		return false;
	*s = accept(l, NULL, NULL);
	close(l);
	return *s >= 0 &&
	       !setsockopt(*c, SOL_SDP, SDP_ASYNC, &chan, sizeof(chan));
}

/* One send of @n bytes at @buf naming [@addr, @addr + @len): its
 * result, and how long it took in *@secs.
 */
static ssize_t az_send(int fd, void *buf, size_t n, uint64_t addr,
		       uint64_t len, double *secs)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sdp_az_send))];
		struct cmsghdr align;
	} ctl;
	struct sdp_az_send req = { .addr = addr, .len = len, .cookie = 7 };
	struct iovec iov = { .iov_base = buf, .iov_len = n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	double t = now();
	ssize_t r;

	c->cmsg_level = SOL_SDP;
	c->cmsg_type = SDP_AZ_SEND;
	c->cmsg_len = CMSG_LEN(sizeof(req));
	memcpy(CMSG_DATA(c), &req, sizeof(req));
	r = sendmsg(fd, &m, 0);
	*secs = now() - t;
	return r;
}

/* A userfaultfd of user faults only (any user may make one) registered
 * for write-protection over [@p, @p + @len), attached to @chan.
 */
static bool az_uffd(int chan, void *p, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)p, .len = len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct sdp_az_attach at = { .probe = (uintptr_t)p };
	int u = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);

	if (u < 0 || ioctl(u, UFFDIO_API, &api) ||
	    ioctl(u, UFFDIO_REGISTER, &reg)) {
		printf("# userfaultfd: %s\n", strerror(errno));
		return false;
	}
	at.uffd = u;
	return !ioctl(chan, SDP_AZ_IOC_ATTACH, &at);
}

static void *drain(void *arg)
{
	static char buf[1 << 16];
	int fd = *(int *)arg;

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

static int run_az_walk(const char *a, int port)
{
	const struct rlimit lim = { 64 << 10, 64 << 10 };
	size_t huge = 1ULL << 46, big = 8 << 20;
	char byte = 'x', *p, *b;
	int chan, c = -1, s = -1;
	pthread_t reader;
	double secs;
	ssize_t r;

	become_nobody();
	chan = open("/dev/sdp_az", O_RDWR | O_CLOEXEC);
	CHECK(chan >= 0, "/dev/sdp_az opened as nobody");
	for (p = MAP_FAILED; p == MAP_FAILED && huge >= (1ULL << 40);
	     huge >>= 1)
		p = mmap(NULL, huge, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	huge <<= 1;
	CHECK(p != MAP_FAILED, "%zu TiB of MAP_NORESERVE memory", huge >> 40);
	if (chan < 0 || p == MAP_FAILED)
		return check_exit();
	CHECK(az_uffd(chan, p, huge),
	      "write-protected by a user-mode userfaultfd, attached to the channel");
	CHECK(az_pair(a, port, chan, &c, &s), "an SDP connection bound to it");
	pthread_create(&reader, NULL, drain, &s);
	/* the old module looked at each of its 2^34 pages, twice, with no
	 * look at the scheduler or at signals: soft lockups; now refused
	 */
	alarm(60);
	r = az_send(c, &byte, 1, (uintptr_t)p, huge, &secs);
	CHECK(r < 0 && errno == EINVAL && secs < 2,
	      "a 1-byte send naming all of it: EINVAL at once (%s, %.3f s)",
	      r < 0 ? errname(errno) : "sent", secs);
	/* a range that is the send's own, past RLIMIT_MEMLOCK: charged
	 * before its pages are looked at, so it goes as a copy at once
	 */
	b = mmap(NULL, big, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(b != MAP_FAILED && !setrlimit(RLIMIT_MEMLOCK, &lim),
	      "8 MiB buffer, RLIMIT_MEMLOCK 64 KiB");
	memset(b, 'y', big);
	r = az_send(c, b, big, (uintptr_t)b, big, &secs);
	CHECK(r == (ssize_t)big, "a send naming its own 8 MiB: sent (%zd, %.3f s)",
	      r, secs);
	alarm(0);
	shutdown(c, SHUT_WR);
	pthread_join(reader, NULL);
	close(c);
	close(s);
	close(chan);
	return check_exit();
}

/* ---- region-life, region-order ---------------------------------------- */

#define RG_LEN	(4 << 20)	/* the owner's region */
#define RG_GOOD	(1 << 20)	/* bytes of the user's buffer there at once */

static int rg_pair(const char *a, int port, int *own, int *user)
{
	struct sockaddr_in sin = addr_of(a, port);
	int one = 1, l = socket(AF_INET_SDP, SOCK_STREAM, 0);

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(l, SOL_SDP, SDP_REGIONS, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(l, 4))
		return -1;
	*user = socket(AF_INET_SDP, SOCK_STREAM, 0);
	setsockopt(*user, SOL_SDP, SDP_REGIONS, &one, sizeof(one));
	if (*user < 0 || connect(*user, (struct sockaddr *)&sin, sizeof(sin)))
		return -1;
	*own = accept(l, NULL, NULL);
	close(l);
	return *own < 0 ? -1 : 0;
}

static int rg_reg(int fd, void *p, uint64_t len, uint64_t *token)
{
	struct sdp_region r = { .addr = (uintptr_t)p, .len = len,
				.access = SDP_REGION_READ | SDP_REGION_WRITE };
	socklen_t l = sizeof(r);

	if (getsockopt(fd, SOL_SDP, SDP_REGION_REG, &r, &l))
		return -1;
	*token = r.token;
	return 0;
}

static ssize_t rg_write_flags(int fd, uint64_t token, void *buf,
			      size_t len, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sdp_rdma))];
		struct cmsghdr align;
	} ctl = { 0 };
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	struct sdp_rdma r = { .token = token, .op = SDP_RDMA_WRITE };

	cm->cmsg_level = SOL_SDP;
	cm->cmsg_type = SDP_RDMA;
	cm->cmsg_len = CMSG_LEN(sizeof(r));
	memcpy(CMSG_DATA(cm), &r, sizeof(r));
	return sendmsg(fd, &m, MSG_NOSIGNAL | flags);
}

static ssize_t rg_write(int fd, uint64_t token, void *buf, size_t len)
{
	return rg_write_flags(fd, token, buf, len, 0);
}

struct rg_op {
	int		fd;
	uint64_t	token;
	unsigned char	*src;
	ssize_t		ret;
	int		err;
};

static void *rg_writer(void *arg)
{
	struct rg_op *o = arg;

	o->ret = rg_write(o->fd, o->token, o->src, RG_LEN);
	o->err = errno;
	return NULL;
}

/* The user's source: RG_GOOD bytes of 'A', the rest of it missing,
 * behind a userfaultfd that serves nothing until asked (root: the
 * kernel's own faults wait there too).  Return: the userfaultfd.
 */
static int rg_stalled_source(unsigned char **src)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int u;

	*src = mmap(NULL, RG_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*src == MAP_FAILED)
		return -1;
	madvise(*src, RG_LEN, MADV_NOHUGEPAGE);	/* the stall where meant */
	memset(*src, 'A', RG_GOOD);
	reg.range.start = (uintptr_t)*src + RG_GOOD;
	reg.range.len = RG_LEN - RG_GOOD;
	u = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (u < 0 || ioctl(u, UFFDIO_API, &api) ||
	    ioctl(u, UFFDIO_REGISTER, &reg))
		return -1;
	return u;
}

/* Serve every missing page of the source with 'B's, from now on. */
static void *rg_serve(void *arg)
{
	static unsigned char page[4096] __attribute__((aligned(4096)));
	int u = *(int *)arg;
	struct uffd_msg msg;
	struct uffdio_copy cp = { .src = (uintptr_t)page, .len = 4096 };

	memset(page, 'B', sizeof(page));
	while (read(u, &msg, sizeof(msg)) == sizeof(msg)) {
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		cp.dst = msg.arg.pagefault.address & ~4095ULL;
		ioctl(u, UFFDIO_COPY, &cp);
	}
	return NULL;
}

static uint64_t rg_sum(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* A peer's WRITE into the owner's region stalls on a page fault of its
 * source after RG_GOOD bytes; the owner ends the region (@how: "dereg"
 * or "close") meanwhile.  That returns at once, and once the fault is
 * served no byte of the region changes any more.
 */
static int run_region_life(const char *a, int port, const char *how)
{
	struct rg_op o = { 0 };
	pthread_t w, srv;
	unsigned char *mem;
	uint64_t before, token;
	int own, u, i, grace;
	double t;

	mem = mmap(NULL, RG_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED && !rg_pair(a, port, &own, &o.fd),
	      "a connection with regions on %s", a);
	CHECK(!rg_reg(own, mem, RG_LEN, &token), "a 4 MiB region of the owner's");
	u = rg_stalled_source(&o.src);
	CHECK(u >= 0, "the user's source stalls after 1 MiB (userfaultfd)");
	if (check_failures)
		return check_exit();
	o.token = token;
	pthread_create(&w, NULL, rg_writer, &o);
	/* the first MiB arrives, then the WRITE waits on the fault */
	for (i = 0; i < 3000 && mem[RG_GOOD - 1] != 'A'; i++)
		usleep(10000);
	CHECK(mem[RG_GOOD - 1] == 'A', "the first MiB written");
	usleep(200000);
	t = now();
	if (!strcmp(how, "dereg"))
		CHECK(!setsockopt(own, SOL_SDP, SDP_REGION_DEREG, &token,
				  sizeof(token)), "SDP_REGION_DEREG (%s)",
		      errname(errno));
	else
		CHECK(!close(own), "close() of the owner's socket");
	t = now() - t;
	/* over RDMA the writer may hold its socket while it waits on its
	 * fault (pinning its pages), and our RegionRevoke with it: its key
	 * is invalidated after the grace then, as for any peer that does not
	 * answer; the local transport waits for the chunk under way only
	 */
	grace = strcmp(a, "127.0.0.1") ? SDP_REGION_GRACE_MS / 1000 : 0;
	CHECK(t < grace + 5,
	      "... returned while the WRITE waits on its fault (%.2f s)", t);
	before = rg_sum(mem, RG_LEN);
	pthread_create(&srv, NULL, rg_serve, &u);
	pthread_join(w, NULL);
	printf("# the WRITE: %zd (%s)\n", o.ret, o.ret < 0 ? errname(o.err) : "bytes");
	CHECK(rg_sum(mem, RG_LEN) == before,
	      "no byte of the region changed after %s returned",
	      !strcmp(how, "dereg") ? "SDP_REGION_DEREG" : "close()");
	CHECK(o.ret < RG_LEN, "... the WRITE ended short of its 4 MiB");
	close(u);
	pthread_cancel(srv);
	pthread_join(srv, NULL);
	close(o.fd);
	if (!strcmp(how, "dereg"))
		close(own);
	return check_exit();
}

/* The MSG_ZEROCOPY notification queued already: its code, or -1. */
static int rg_zc_code(int fd)
{
	char cbuf[256];
	struct msghdr m = { .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct sock_extended_err *ee;
	struct cmsghdr *cm;

	if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		ee = (struct sock_extended_err *)CMSG_DATA(cm);
		if (ee->ee_origin == SO_EE_ORIGIN_ZEROCOPY)
			return ee->ee_code;
	}
	return -1;
}

/* A MSG_ZEROCOPY WRITE by a user past RLIMIT_MEMLOCK: its pages cannot
 * be charged, so it must not stay pinned after the call (it did, by as
 * many ops as a connection has, on every connection): the call returns
 * with the bytes in the region, its notification saying "copied".
 */
static int run_region_zc(const char *a, int port)
{
	const struct rlimit none = { 0, 0 };
	unsigned char *mem, *src;
	uint64_t token;
	int own, user, one = 1, code;
	ssize_t n;
	size_t i;

	mem = mmap(NULL, RG_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = mmap(NULL, RG_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED && src != MAP_FAILED &&
	      !rg_pair(a, port, &own, &user), "a connection with regions on %s", a);
	CHECK(!rg_reg(own, mem, RG_LEN, &token), "a 4 MiB region (root's)");
	become_nobody();
	CHECK(!setrlimit(RLIMIT_MEMLOCK, &none) &&
	      !setsockopt(user, SOL_SDP, SDP_ZEROCOPY, &one, sizeof(one)),
	      "the writer: nobody, RLIMIT_MEMLOCK 0, SDP_ZEROCOPY");
	memset(src, 'Z', RG_LEN);
	n = rg_write_flags(user, token, src, RG_LEN, MSG_ZEROCOPY);
	code = rg_zc_code(user);	/* at once: the op is over */
	for (i = 0; i < RG_LEN && mem[i] == 'Z'; i++)
		;
	CHECK(n == RG_LEN && i == RG_LEN,
	      "a 4 MiB MSG_ZEROCOPY WRITE returned (%zd) with every byte there (%zu)",
	      n, i);
	CHECK(code == SO_EE_CODE_ZEROCOPY_COPIED,
	      "... its notification queued by then, saying copied (%d)", code);
	close(own);
	close(user);
	return check_exit();
}

/* A RegionAdv queued behind data that waits for the peer's credits, then
 * SDP_REGION_DEREG: the peer must not hear of the region's end before
 * of the region (it used to: "RegionRevoke for no region", a reset).
 */
static int run_region_order(const char *a, int port)
{
	static unsigned char chunk[16384], mem[1 << 20];
	size_t sent = 0, got = 0;
	uint64_t token;
	int own, user, i, notsent = 0;
	ssize_t n;

	CHECK(!rg_pair(a, port, &own, &user), "a connection with regions on %s", a);
	memset(chunk, 'd', sizeof(chunk));
	/* the user reads nothing: sent data waits for credits, queued */
	for (i = 0; i < 4096; i++) {
		n = send(own, chunk, sizeof(chunk), MSG_DONTWAIT);
		if (n > 0)
			sent += n;
		if (n <= 0 || (!ioctl(own, SIOCOUTQNSD, &notsent) &&
			       notsent > 4 * (int)sizeof(chunk)))
			break;
	}
	ioctl(own, SIOCOUTQNSD, &notsent);
	printf("# %zu bytes sent, %d not sent yet\n", sent, notsent);
	CHECK(notsent > 0, "data queued behind the peer's credits");
	CHECK(!rg_reg(own, mem, sizeof(mem), &token), "a region registered then");
	CHECK(!setsockopt(own, SOL_SDP, SDP_REGION_DEREG, &token, sizeof(token)),
	      "... and deregistered at once (%s)", errname(errno));
	n = send(own, "end", 3, 0);
	while (got < sent + 3) {
		n = recv(user, chunk, sizeof(chunk), 0);
		if (n <= 0)
			break;
		got += n;
	}
	CHECK(got == sent + 3, "the peer read every byte (%zu of %zu): not reset",
	      got, sent + 3);
	close(own);
	close(user);
	return check_exit();
}

/* ---- landlock ----------------------------------------------------------- */

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION	(1U << 0)
#endif
#define LL_RULE_NET_PORT		2
#define LL_ACCESS_NET_BIND_TCP		(1ULL << 0)
#define LL_ACCESS_NET_CONNECT_TCP	(1ULL << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
};

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

/* This thread and what it execs may connect by TCP to @port (and
 * @port2, if not 0) only, and bind nowhere.  Return: 0, or -1 if the
 * kernel has no network rules.
 */
static int landlock_connect_only2(int port, int port2)
{
	struct ll_ruleset_attr attr = {
		.handled_access_net = LL_ACCESS_NET_BIND_TCP |
				      LL_ACCESS_NET_CONNECT_TCP,
	};
	struct ll_net_port_attr rule = {
		.allowed_access = LL_ACCESS_NET_CONNECT_TCP, .port = port,
	};
	int abi, fd;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
		      LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 4) {
		printf("# Landlock ABI %d: no network rules here\n", abi);
		return -1;
	}
	fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd >= 0 && port2) {
		rule.port = port2;
		if (syscall(SYS_landlock_add_rule, fd, LL_RULE_NET_PORT, &rule, 0))
			fd = -1;
		rule.port = port;
	}
	if (fd < 0 ||
	    syscall(SYS_landlock_add_rule, fd, LL_RULE_NET_PORT, &rule, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_landlock_restrict_self, fd, 0)) {
		perror("landlock");
		exit(KSFT_FAIL);
	}
	close(fd);
	return 0;
}

static int landlock_connect_only(int port)
{
	return landlock_connect_only2(port, 0);
}

/* connect() of a new socket (@fam, @proto) to @a:@port: 0 or the errno. */
static int try_connect(int fam, int proto, const char *a, int port)
{
	struct sockaddr_in sin = addr_of(a, port);
	int fd = socket(fam, SOCK_STREAM, proto), err = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		err = errno;
	close(fd);
	return err;
}

static int run_landlock(const char *a, int port)
{
	struct sockaddr_in tcp_at = addr_of(a, port), sdp_at = addr_of(a, port + 1);
	struct sockaddr_in sdp_no = addr_of(a, port + 2), other;
	long denied = sdp_stat_of("ConnLsmDenied");
	int lt, ls, ln, err, fd;

	become_nobody();
	/* servers first, outside the sandbox: TCP-only on PORT, SDP on
	 * PORT + 1 (allowed) and PORT + 2
	 */
	lt = listener(IPPROTO_TCP, &tcp_at, 0);
	ls = listener(IPPROTO_SDP, &sdp_at, 0);
	ln = listener(IPPROTO_SDP, &sdp_no, 0);
	CHECK(lt >= 0 && ls >= 0 && ln >= 0, "servers on %d, %d and %d",
	      port, port + 1, port + 2);
	if (landlock_connect_only2(port + 1, port + 3))
		return KSFT_SKIP;
	err = try_connect(AF_INET, IPPROTO_TCP, a, port);
	CHECK(err == EACCES, "sandboxed: TCP connect to %d: EACCES (%s)", port,
	      errname(err));
	err = try_connect(AF_INET, IPPROTO_SDP, a, port);
	CHECK(err == EACCES,
	      "IPPROTO_SDP connect to %d (TCP's fallback would carry it): EACCES (%s)",
	      port, errname(err));
	err = try_connect(AF_INET, IPPROTO_SDP, a, port + 2);
	CHECK(err == EACCES, "IPPROTO_SDP connect to an SDP server on %d: EACCES (%s)",
	      port + 2, errname(err));
	err = try_connect(AF_INET_SDP, 0, a, port + 2);
	CHECK(err == EACCES, "family 27 connect to %d: EACCES (%s)", port + 2,
	      errname(err));
	err = try_connect(AF_INET_SDP, 0, a, port + 1);
	CHECK(!err, "family 27 connect to the allowed %d (%s)", port + 1,
	      errname(err));
	err = try_connect(AF_INET, IPPROTO_SDP, a, port + 1);
	CHECK(!err, "IPPROTO_SDP connect to the allowed %d (%s)", port + 1,
	      errname(err));
	err = try_connect(AF_INET, IPPROTO_TCP, a, port + 1);
	CHECK(!err, "TCP connect to the allowed %d, by the twin (%s)", port + 1,
	      errname(err));
	/* a fallback made for a denied connect must not carry a later one:
	 * to the allowed PORT + 3, where nobody listens, named as family 27
	 * names it (no fallback of its own)
	 */
	fd = socket(AF_INET, SOCK_STREAM, IPPROTO_SDP);
	err = connect(fd, (struct sockaddr *)&tcp_at, sizeof(tcp_at)) ? errno : 0;
	CHECK(err == EACCES, "IPPROTO_SDP socket: connect to %d EACCES (%s)",
	      port, errname(err));
	other = addr_of(a, port + 3);
	other.sin_family = AF_INET_SDP;
	err = connect(fd, (struct sockaddr *)&other, sizeof(other)) ? errno : 0;
	CHECK(err == ECONNREFUSED,
	      "... then to the allowed %d, nobody there: ECONNREFUSED, not TCP to %d (%s)",
	      port + 3, port, errname(err));
	close(fd);
	CHECK(sdp_stat_of("ConnLsmDenied") - denied == 4,
	      "ConnLsmDenied counts the four (%ld)",
	      sdp_stat_of("ConnLsmDenied") - denied);
	close(lt);
	close(ls);
	close(ln);
	return check_exit();
}

static int run_sandbox(int port, char **argv)
{
	become_nobody();
	if (landlock_connect_only(port))
		return KSFT_SKIP;
	execvp(argv[0], argv);
	perror(argv[0]);
	return KSFT_FAIL;
}

static int run_connect(const char *a, int port)
{
	struct sockaddr_in sin = addr_of(a, port);
	int fd = socket(AF_INET, SOCK_STREAM, 0), proto = 0;
	socklen_t l = sizeof(proto);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		printf("connect %s\n", errname(errno));
		return 1;
	}
	getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
	printf("connect ok %d\n", proto);
	return 0;
}

static int run_bind(const char *a, int port)
{
	struct sockaddr_in sin = addr_of(a, port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		printf("bind %s\n", errname(errno));
		return 1;
	}
	printf("bind ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "twin-race") && argc == 5)
		return run_twin_race(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(mode, "fb-race") && argc == 5)
		return run_fb_race(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(mode, "az-walk") && argc == 4)
		return run_az_walk(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "landlock") && argc == 4)
		return run_landlock(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "sandbox") && argc > 4 && !strcmp(argv[3], "--"))
		return run_sandbox(atoi(argv[2]), argv + 4);
	if (!strcmp(mode, "connect") && argc == 4)
		return run_connect(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "bind") && argc == 4)
		return run_bind(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "region-life") && argc == 5)
		return run_region_life(argv[2], atoi(argv[3]), argv[4]);
	if (!strcmp(mode, "region-order") && argc == 4)
		return run_region_order(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "region-zc") && argc == 4)
		return run_region_zc(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: see the top of %s.c\n", argv[0]);
	return 2;
}
