// SPDX-License-Identifier: GPL-2.0
/*
 * One-sided RDMA through an SDP socket (SDP_REGION_REG, SDP_RDMA,
 * SDP_REGION_DEREG; Documentation/sdp.rst, "One-sided RDMA").  Two
 * processes of this program: the owner (a child) registers a 64 MiB
 * region at an odd address and tells its token in-band; the user (the parent) writes into it
 * and reads from it, and the owner checks / fills its memory on request.
 *
 *   sdp_region rw ADDR PORT
 *	WRITE and READ of 4 KiB, 64 KiB, 1 MiB, 16 MiB + 7 and 64 MiB - 5 at
 *	offsets 0, 1, 4095 and odd ones, every byte checked by the other
 *	side (and the bytes around each WRITE unchanged); each WRITE
 *	followed at once by a stream message that asks the owner to check:
 *	the WRITE's bytes are there when it arrives; 1 MiB of stream bytes
 *	between the ops, checked; MSG_ZEROCOPY WRITEs (completions on the
 *	error queue, then the check); io_uring SENDMSG_ZC READs (the
 *	notification, then the check); 1 MiB of stream bytes by io_uring
 *	SEND_ZC, rewritten once notified, checked by the owner, then the
 *	same from a fixed buffer (by reference over RDMA: TxZcopyBytes).
 *   sdp_region errors ADDR PORT
 *	every errno: not connected, bad sizes, flags and access, a region
 *	past the limit, an unmapped range, a 17th region, an unknown token,
 *	beyond the end, the wrong access, a malformed control message,
 *	MSG_OOB, after SDP_REGION_DEREG, another connection's token, and
 *	after the owner closed the connection.
 *   sdp_region hold ADDR PORT
 *	for hostile_peer.sh: one connection, a 1 MiB write-only region for
 *	it (token in-band), then wait for the end and print it.
 *   sdp_region bench ADDR PORT HOW SIZE SECONDS
 *	for testbed/bench-region, not a test: MB/s of one-sided WRITEs or
 *	READs (HOW write, read) or of stream sends (send, zc, uring).
 * SDP_REGION_ROLE=owner or user runs one end of rw, for two hosts (ADDR
 * the owner's).
 * Each mode prints what it checked and exits 0 if all was right.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "check.h"

#define RLEN	(64 << 20)	/* SDP_REGION_MAX_LEN, from an odd address */

static int family = AF_INET_SDP;
static const char *addr;
static int port;

/* Regions on this connection: SDP_REGIONS before connect() or listen(),
 * on both ends (regions_off: a socket that does not ask).
 */
static bool regions_off;

static void regions_on(int fd)
{
	int one = 1;

	if (!regions_off)
		setsockopt(fd, SOL_SDP, SDP_REGIONS, &one, sizeof(one));
}

static int sdp_listen(int p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p) };
	int one = 1, l = socket(family, SOCK_STREAM, 0);

	inet_pton(AF_INET, addr, &a.sin_addr);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	regions_on(l);
	if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 4)) {
		perror("listen");
		exit(KSFT_FAIL);
	}
	return l;
}

static int sdp_connect(int p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p) };
	int c = socket(family, SOCK_STREAM, 0);

	inet_pton(AF_INET, addr, &a.sin_addr);
	regions_on(c);
	if (c < 0 || connect(c, (void *)&a, sizeof(a))) {
		perror("connect");
		exit(KSFT_FAIL);
	}
	return c;
}

static int full(int fd, void *p, size_t n, bool out)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = out ? send(fd, (char *)p + done, n - done, MSG_NOSIGNAL) :
			  recv(fd, (char *)p + done, n - done, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

static unsigned char pat(uint64_t seed, uint64_t i)
{
	return (unsigned char)((i * 131 + seed * 7 + (i >> 12)) ^ seed);
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pat(seed, i);
}

static size_t bad_at(const unsigned char *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pat(seed, i))
			return i;
	return n;
}

/* ---- the owner's side: requests on the stream -------------------------- */

enum { REQ_CHECK = 1, REQ_FILL, REQ_BULK, REQ_DEREG, REQ_END };

struct req {
	uint32_t type;
	uint32_t pad;
	uint64_t off, len, seed;
};

static int sdp_region_reg(int fd, void *p, uint64_t len, uint32_t access,
			  uint64_t *token)
{
	struct sdp_region r = { .addr = (uintptr_t)p, .len = len,
				.access = access };
	socklen_t l = sizeof(r);

	if (getsockopt(fd, SOL_SDP, SDP_REGION_REG, &r, &l))
		return -1;
	*token = r.token;
	return 0;
}

/* The region's resting state: byte i is pat(0, i). */
static void rest(unsigned char *region, uint64_t off, uint64_t len)
{
	uint64_t i;

	for (i = off; i < off + len; i++)
		region[i] = pat(0, i);
}

/* A WRITE of @seed at @off, @len: there, and the bytes around it at rest. */
static bool written(const unsigned char *region, const struct req *q)
{
	size_t at = bad_at(region + q->off, q->len, q->seed);

	if (at != q->len)
		printf("# owner: first bad byte at %zu of %llu (off %llu)\n",
		       at, (unsigned long long)q->len,
		       (unsigned long long)q->off);
	return at == q->len &&
	       (!q->off || region[q->off - 1] == pat(0, q->off - 1)) &&
	       (q->off + q->len >= RLEN ||
		region[q->off + q->len] == pat(0, q->off + q->len));
}

/* The owner: registers its region, says its token, answers requests:
 * CHECK a WRITE (then back to rest), FILL with a seed (0: back to rest),
 * BULK stream bytes, DEREG.
 */
static int owner(int s)
{
	unsigned char *mem = mmap(NULL, RLEN + 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *region = mem + 4096 + 3, *bulk = malloc(1 << 20);
	uint64_t token;
	struct req q;
	char ok;

	memset(mem, 0xee, RLEN + 8192);
	rest(region, 0, RLEN);
	if (sdp_region_reg(s, region, RLEN, SDP_REGION_READ | SDP_REGION_WRITE,
			   &token)) {
		printf("# FAIL owner: SDP_REGION_REG: %s\n", errname(errno));
		token = 0;
	}
	full(s, &token, sizeof(token), true);
	while (!full(s, &q, sizeof(q), false) && q.type != REQ_END) {
		switch (q.type) {
		case REQ_CHECK:
			ok = written(region, &q);
			rest(region, q.off, q.len);
			break;
		case REQ_FILL:
			if (q.seed)
				fill(region + q.off, q.len, q.seed);
			else
				rest(region, q.off, q.len);
			ok = 1;
			break;
		case REQ_BULK:	/* q.len stream bytes of seed follow */
			ok = !full(s, bulk, q.len, false) &&
			     bad_at(bulk, q.len, q.seed) == q.len;
			break;
		case REQ_DEREG:
			ok = !setsockopt(s, SOL_SDP, SDP_REGION_DEREG, &token,
					 sizeof(token));
			break;
		default:
			ok = 0;
		}
		if (full(s, &ok, 1, true))
			break;
	}
	/* outside the region, nothing was ever written */
	ok = mem[4096 + 2] == 0xee && region[RLEN] == 0xee;
	return ok ? 0 : 2;
}

static int ask(int c, uint32_t type, uint64_t off, uint64_t len,
	       uint64_t seed)
{
	struct req q = { .type = type, .off = off, .len = len, .seed = seed };
	char ok = 0;

	if (full(c, &q, sizeof(q), true) || full(c, &ok, 1, false))
		return 0;
	return ok;
}

/* ---- the user's side ---------------------------------------------------- */

/* One op by sendmsg(): @buf, @len at @off of region @token. */
static ssize_t rdma_op(int fd, uint32_t op, uint64_t token, uint64_t off,
		       void *buf, size_t len, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(struct sdp_rdma))] = { 0 };
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	struct sdp_rdma r = { .token = token, .offset = off, .op = op };

	cm->cmsg_level = SOL_SDP;
	cm->cmsg_type = SDP_RDMA;
	cm->cmsg_len = CMSG_LEN(sizeof(r));
	memcpy(CMSG_DATA(cm), &r, sizeof(r));
	return sendmsg(fd, &m, flags | MSG_NOSIGNAL);
}

/* MSG_ZEROCOPY completions read so far: the next id expected. */
static unsigned int zc_drain(int fd, unsigned int next, int ms)
{
	char cbuf[128];
	struct msghdr m = { .msg_control = cbuf };
	struct sock_extended_err *e;
	struct cmsghdr *cm;
	struct pollfd pf = { .fd = fd, .events = 0 };

	while (poll(&pf, 1, ms) >= 0) {
		m.msg_controllen = sizeof(cbuf);
		if (recvmsg(fd, &m, MSG_ERRQUEUE) < 0)
			break;
		cm = CMSG_FIRSTHDR(&m);
		e = cm ? (void *)CMSG_DATA(cm) : NULL;
		if (e && e->ee_origin == SO_EE_ORIGIN_ZEROCOPY)
			next = e->ee_data + 1;
	}
	return next;
}

static const size_t sizes[] = { 4096, 65536, 1 << 20, (16 << 20) + 7,
				(64 << 20) - 5 };
static const uint64_t offs[] = { 0, 1, 4095, 12345, 3 };

static void rw_sync(int c, uint64_t token, unsigned char *buf)
{
	uint64_t seed = 1;
	struct req bulk;
	size_t i, j;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < sizeof(offs) / sizeof(offs[0]); j++, seed++) {
			size_t n = sizes[i];
			uint64_t off = offs[j] + n <= RLEN ? offs[j] : 0;
			ssize_t r;

			if (j > 1 && n > (1 << 20))
				continue;	/* the large ones twice */
			fill(buf, n, seed);
			r = rdma_op(c, SDP_RDMA_WRITE, token, off, buf, n, 0);
			CHECK(r == (ssize_t)n, "WRITE %zu at %llu: %zd (%s)", n,
			      (unsigned long long)off, r,
			      r < 0 ? errname(errno) : "-");
			memset(buf, 0, n);	/* the op is over: ours */
			CHECK(ask(c, REQ_CHECK, off, n, seed),
			      "... the owner finds it whole, at once after it");
			CHECK(ask(c, REQ_FILL, off, n, seed + 1000),
			      "the owner fills %zu at %llu", n,
			      (unsigned long long)off);
			r = rdma_op(c, SDP_RDMA_READ, token, off, buf, n, 0);
			CHECK(r == (ssize_t)n && bad_at(buf, n, seed + 1000) == n,
			      "READ %zu at %llu: every byte (%zd %s)", n,
			      (unsigned long long)off, r,
			      r < 0 ? errname(errno) : "-");
			CHECK(ask(c, REQ_FILL, off, n, 0), "... put back");
		}
		/* stream bytes between the ops, on the same connection */
		fill(buf, 1 << 20, seed);
		bulk = (struct req){ .type = REQ_BULK, .len = 1 << 20,
				     .seed = seed };
		CHECK(!full(c, &bulk, sizeof(bulk), true) &&
		      !full(c, buf, 1 << 20, true) &&
		      !full(c, &(char){0}, 1, false),
		      "1 MiB of stream bytes between them");
	}
}

/* A zero-copy send's result CQE and its notification: the result;
 * *@notif whether the notification came (or none will: no F_MORE),
 * *@flags the result's flags.
 */
static int uring_zc_wait(struct io_uring *ring, int *notif, int *flags)
{
	struct io_uring_cqe *cqe;
	int res = -1, got = 0;

	*notif = 0;
	while ((!*notif || !got) && !io_uring_wait_cqe(ring, &cqe)) {
		if (cqe->flags & IORING_CQE_F_NOTIF) {
			*notif = 1;
		} else {
			res = cqe->res;
			got = 1;
			if (flags)
				*flags = cqe->flags;
			*notif |= !(cqe->flags & IORING_CQE_F_MORE);
		}
		io_uring_cqe_seen(ring, cqe);
	}
	return res;
}

/* 1 MiB of stream bytes by io_uring SEND_ZC, rewritten as soon as its
 * notification came: the owner gets the bytes as they were.
 */
static void zc_stream(int c, unsigned char *buf)
{
	struct req q = { .type = REQ_BULK, .len = 1 << 20, .seed = 77 };
	struct io_uring ring;
	int res, notif;
	char ok = 0;

	fill(buf, 1 << 20, 77);
	CHECK(!full(c, &q, sizeof(q), true), "a stream request");
	io_uring_queue_init(4, &ring, 0);
	io_uring_prep_send_zc(io_uring_get_sqe(&ring), c, buf, 1 << 20, 0, 0);
	io_uring_submit(&ring);
	res = uring_zc_wait(&ring, &notif, NULL);
	io_uring_queue_exit(&ring);
	memset(buf, 'X', 1 << 20);	/* the kernel is done with it */
	CHECK(res == 1 << 20 && notif, "io_uring SEND_ZC of 1 MiB: %d, notified",
	      res);
	CHECK(!full(c, &ok, 1, false) && ok,
	      "... the owner got the bytes as they were at the call");
}

/* 1 MiB of stream bytes by io_uring SEND_ZC from a registered (fixed)
 * buffer, rewritten once notified: over RDMA it goes by reference (the
 * sender's TxZcopyBytes grow by all of it but a short tail), and the
 * owner gets the bytes as they were.
 */
static void zc_fixed(int c, unsigned char *buf)
{
	struct req q = { .type = REQ_BULK, .len = 1 << 20, .seed = 78 };
	struct iovec fixed = { buf, 1 << 20 };
	long zc = sdp_stat_of("TxZcopyBytes");
	bool local = sdp_stat_of("LocalActiveOpens") > 0;
	struct io_uring ring;
	int res, notif;
	char ok = 0;

	fill(buf, 1 << 20, 78);
	CHECK(!full(c, &q, sizeof(q), true), "a stream request");
	io_uring_queue_init(4, &ring, 0);
	CHECK(!io_uring_register_buffers(&ring, &fixed, 1),
	      "a fixed buffer registered");
	io_uring_prep_send_zc_fixed(io_uring_get_sqe(&ring), c, buf, 1 << 20,
				    0, 0, 0);
	io_uring_submit(&ring);
	res = uring_zc_wait(&ring, &notif, NULL);
	io_uring_queue_exit(&ring);
	memset(buf, 'X', 1 << 20);	/* the kernel is done with it */
	CHECK(res == 1 << 20 && notif,
	      "io_uring SEND_ZC of 1 MiB from a fixed buffer: %d, notified", res);
	zc = sdp_stat_of("TxZcopyBytes") - zc;
	/* all but the tail past the last page boundary (buf is unaligned),
	 * which is below any threshold
	 */
	CHECK(local || zc >= (1 << 20) - 4096,
	      "... by reference, not copied: TxZcopyBytes +%ld", zc);
	CHECK(!full(c, &ok, 1, false) && ok,
	      "... the owner got the bytes as they were at the call");
}

/* MSG_ZEROCOPY WRITEs, io_uring SENDMSG_ZC READs. */
static void rw_async(int c, uint64_t token, unsigned char *buf)
{
	char cbuf[CMSG_SPACE(sizeof(struct sdp_rdma))] = { 0 };
	struct sdp_rdma r = { .token = token, .op = SDP_RDMA_READ };
	struct iovec iov = { buf, 4 << 20 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	struct io_uring ring;
	unsigned int next = 0, k;
	int one = 1, res, flags = 0, notif;
	ssize_t n;

	CHECK(!setsockopt(c, SOL_SDP, SDP_ZEROCOPY, &one, sizeof(one)),
	      "SDP_ZEROCOPY");
	for (k = 0; k < 4; k++) {
		fill(buf + k * (1 << 20), 1 << 20, 500 + k);
		n = rdma_op(c, SDP_RDMA_WRITE, token, k * (2 << 20) + 7,
			    buf + k * (1 << 20), 1 << 20, MSG_ZEROCOPY);
		CHECK(n == 1 << 20, "MSG_ZEROCOPY WRITE %u: %zd", k, n);
	}
	while (next < 4 && (k = zc_drain(c, next, 2000)) != next)
		next = k;
	CHECK(next == 4, "their 4 completions on the error queue (%u)", next);
	for (k = 0; k < 4; k++)
		CHECK(ask(c, REQ_CHECK, k * (2 << 20) + 7, 1 << 20, 500 + k),
		      "... the owner finds WRITE %u whole", k);

	CHECK(ask(c, REQ_FILL, 77, 4 << 20, 900), "the owner fills 4 MiB");
	memset(buf, 0, 4 << 20);
	r.offset = 77;
	cm->cmsg_level = SOL_SDP;
	cm->cmsg_type = SDP_RDMA;
	cm->cmsg_len = CMSG_LEN(sizeof(r));
	memcpy(CMSG_DATA(cm), &r, sizeof(r));
	io_uring_queue_init(4, &ring, 0);
	io_uring_prep_sendmsg_zc(io_uring_get_sqe(&ring), c, &m, 0);
	io_uring_submit(&ring);
	res = uring_zc_wait(&ring, &notif, &flags);
	io_uring_queue_exit(&ring);
	CHECK(res == 4 << 20 && (flags & IORING_CQE_F_MORE),
	      "io_uring SENDMSG_ZC READ of 4 MiB: %d, F_MORE", res);
	CHECK(notif && bad_at(buf, 4 << 20, 900) == 4 << 20,
	      "... its notification, then every byte is there");
	CHECK(ask(c, REQ_FILL, 77, 4 << 20, 0), "... put back");
	zc_stream(c, buf);
	zc_fixed(c, buf);
}

/* SDP_REGION_ROLE=owner or user: one end only, for two hosts (ADDR the
 * owner's).
 */
static const char *role;

static int sdp_connect_retry(int p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p) };
	int c = -1, i;

	inet_pton(AF_INET, addr, &a.sin_addr);
	for (i = 0; i < 300 && c < 0; i++) {	/* until it listens */
		c = socket(family, SOCK_STREAM, 0);
		regions_on(c);
		if (connect(c, (void *)&a, sizeof(a))) {
			close(c);
			c = -1;
			usleep(100000);
		}
	}
	if (c < 0) {
		perror("connect");
		exit(KSFT_FAIL);
	}
	return c;
}

static int run_rw(void)
{
	unsigned char *buf = malloc((64 << 20) + 4096);
	int l, c, s, st;
	uint64_t token = 0;
	pid_t pid = 0;

	if (role && !strcmp(role, "owner")) {
		l = sdp_listen(port);
		s = accept(l, NULL, NULL);
		close(l);
		st = owner(s);
		CHECK(!st, "the owner: nothing outside its region changed");
		close(s);
		return check_exit();
	}
	if (role) {
		c = sdp_connect_retry(port);
	} else {
		l = sdp_listen(port);
		c = sdp_connect(port);
		s = accept(l, NULL, NULL);
		close(l);
		pid = fork();
		if (!pid) {
			close(c);
			_exit(owner(s));
		}
		close(s);
	}
	CHECK(!full(c, &token, sizeof(token), false) && token,
	      "the owner's token, in-band");
	rw_sync(c, token, buf + 1);
	rw_async(c, token, buf);
	CHECK(ask(c, REQ_DEREG, 0, 0, 0), "SDP_REGION_DEREG");
	CHECK(rdma_op(c, SDP_RDMA_WRITE, token, 0, buf, 10, 0) < 0 &&
	      errno == ENOENT, "after it, a WRITE: ENOENT (%s)", errname(errno));
	full(c, &(struct req){ .type = REQ_END }, sizeof(struct req), true);
	if (pid) {
		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st) && !WEXITSTATUS(st),
		      "the owner: nothing outside its region changed (%d)",
		      WEXITSTATUS(st));
	}
	close(c);
	return check_exit();
}

/* ---- errors -------------------------------------------------------------- */

static void errors_reg(int c, unsigned char *mem)
{
	uint64_t t, toks[SDP_REGIONS_MAX];
	int i, u = socket(family, SOCK_STREAM, 0), n = 0;

#define REGION_ERR(fd, p, len, acc, want, what) do {			\
	int err_want = (want);						\
									\
	errno = 0;							\
	CHECK(sdp_region_reg(fd, p, len, acc, &t) < 0 &&		\
	      errno == err_want,					\
	      "SDP_REGION_REG %s: %s (%s)", what, errname(err_want),	\
	      errname(errno));						\
} while (0)
	REGION_ERR(u, mem, 4096, SDP_REGION_READ, ENOTCONN, "not connected");
	REGION_ERR(c, mem, 0, SDP_REGION_READ, EINVAL, "of 0 bytes");
	REGION_ERR(c, mem, SDP_REGION_MAX_LEN + 1, SDP_REGION_READ, EINVAL,
		   "past SDP_REGION_MAX_LEN");
	REGION_ERR(c, mem, 4096, 0, EINVAL, "without access");
	REGION_ERR(c, mem, 4096, 4, EINVAL, "with an unknown access bit");
	REGION_ERR(c, (void *)4096, 4096, SDP_REGION_READ, EFAULT, "unmapped");
	for (i = 0; i < SDP_REGIONS_MAX; i++)
		n += !sdp_region_reg(c, mem + i * 4096, 4096, SDP_REGION_READ,
				     &toks[i]);
	CHECK(n == SDP_REGIONS_MAX, "%d regions (%d)", SDP_REGIONS_MAX, n);
	REGION_ERR(c, mem, 4096, SDP_REGION_READ, ENOBUFS, "one more");
	for (i = 0; i < n; i++)
		setsockopt(c, SOL_SDP, SDP_REGION_DEREG, &toks[i], 8);
	CHECK(!sdp_region_reg(c, mem, 4096, SDP_REGION_READ, &t),
	      "after their SDP_REGION_DEREG, one again");
	setsockopt(c, SOL_SDP, SDP_REGION_DEREG, &t, 8);
	t = 12345;
	CHECK(setsockopt(c, SOL_SDP, SDP_REGION_DEREG, &t, 8) < 0 &&
	      errno == ENOENT, "SDP_REGION_DEREG of no region: ENOENT");
	CHECK(setsockopt(c, SOL_SDP, SDP_REGION_DEREG, &t, 4) < 0 &&
	      errno == EINVAL, "SDP_REGION_DEREG, short: EINVAL");
	close(u);
}

/* SDP_REGIONS: read back, refused once connected; a connection whose
 * other end did not ask has no regions (@l2 listens without it).
 */
static void errors_asked(int c, unsigned char *mem, int l2)
{
	int v = 0, one = 1, n, s;
	socklen_t len = sizeof(v);
	uint64_t t;

	CHECK(!getsockopt(c, SOL_SDP, SDP_REGIONS, &v, &len) && v == 1,
	      "SDP_REGIONS reads 1 (%d)", v);
	CHECK(setsockopt(c, SOL_SDP, SDP_REGIONS, &one, sizeof(one)) < 0 &&
	      errno == EISCONN, "SDP_REGIONS once connected: EISCONN (%s)",
	      errname(errno));
	n = sdp_connect(port + 1);
	s = accept(l2, NULL, NULL);
	REGION_ERR(n, mem, 4096, SDP_REGION_READ, EOPNOTSUPP,
		   "where the other end did not ask for regions");
	errno = 0;
	CHECK(rdma_op(n, SDP_RDMA_WRITE, 1, 0, mem, 10, 0) < 0 &&
	      errno == EOPNOTSUPP, "... and an op: EOPNOTSUPP (%s)",
	      errname(errno));
	close(n);
	close(s);
	close(l2);
}

/* The owner's side of the errors: a read-only and a write-only region of
 * 1 MiB, their tokens in-band, then requests.
 */
static int owner_errors(int s)
{
	unsigned char *m = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t tok[2] = { 0, 0 };
	struct req q;
	char ok = 1;

	sdp_region_reg(s, m, 1 << 20, SDP_REGION_READ, &tok[0]);
	sdp_region_reg(s, m + (1 << 20), 1 << 20, SDP_REGION_WRITE, &tok[1]);
	full(s, tok, sizeof(tok), true);
	while (!full(s, &q, sizeof(q), false) && q.type != REQ_END) {
		if (q.type == REQ_DEREG)
			ok = !setsockopt(s, SOL_SDP, SDP_REGION_DEREG,
					 &tok[q.off], 8);
		if (full(s, &ok, 1, true))
			break;
	}
	return 0;
}

#define OP_ERR(fd, op, tok, off, len, fl, want, what) do {		\
	int err_want = (want);						\
									\
	errno = 0;							\
	CHECK(rdma_op(fd, op, tok, off, buf, len, fl) < 0 &&		\
	      errno == err_want,					\
	      "%s: %s (%s)", what, errname(err_want), errname(errno));	\
} while (0)

static void errors_ops(int c, int c2, const uint64_t *tok,
		       unsigned char *buf)
{
	char cbuf[CMSG_SPACE(sizeof(struct sdp_rdma))] = { 0 };
	struct iovec iov = { buf, 10 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	struct sdp_rdma r = { .token = tok[0], .op = 3 };

	CHECK(rdma_op(c, SDP_RDMA_READ, tok[0], 0, buf, 1 << 20, 0) ==
	      1 << 20, "READ of the read-only region: the control");
	CHECK(rdma_op(c, SDP_RDMA_WRITE, tok[1], 0, buf, 1 << 20, 0) ==
	      1 << 20, "WRITE into the write-only one: the control");
	OP_ERR(c, SDP_RDMA_WRITE, 999, 0, 10, 0, ENOENT, "an unknown token");
	OP_ERR(c, SDP_RDMA_READ, tok[0], 1, 1 << 20, 0, ERANGE,
	       "a byte beyond the end");
	OP_ERR(c, SDP_RDMA_READ, tok[0], (1 << 20) + 1, 0 + 1, 0, ERANGE,
	       "an offset beyond the end");
	OP_ERR(c, SDP_RDMA_WRITE, tok[0], 0, 10, 0, EACCES,
	       "a WRITE into the read-only region");
	OP_ERR(c, SDP_RDMA_READ, tok[1], 0, 10, 0, EACCES,
	       "a READ of the write-only region");
	OP_ERR(c, SDP_RDMA_WRITE, tok[1], 0, 10, MSG_OOB, EINVAL, "MSG_OOB");
	OP_ERR(c2, SDP_RDMA_READ, tok[0], 0, 10, 0, ENOENT,
	       "the token on another connection");
	cm->cmsg_level = SOL_SDP;
	cm->cmsg_type = SDP_RDMA;
	cm->cmsg_len = CMSG_LEN(sizeof(r));
	memcpy(CMSG_DATA(cm), &r, sizeof(r));
	CHECK(sendmsg(c, &m, 0) < 0 && errno == EINVAL,
	      "an unknown op: EINVAL (%s)", errname(errno));
	r.op = SDP_RDMA_READ;
	r.flags = 1;
	memcpy(CMSG_DATA(cm), &r, sizeof(r));
	CHECK(sendmsg(c, &m, 0) < 0 && errno == EINVAL,
	      "an unknown flag: EINVAL (%s)", errname(errno));
	CHECK(ask(c, REQ_DEREG, 0, 0, 0), "the owner deregisters one");
	OP_ERR(c, SDP_RDMA_READ, tok[0], 0, 10, 0, ENOENT,
	       "... then a READ of it");
	CHECK(rdma_op(c, SDP_RDMA_WRITE, tok[1], 0, buf, 10, 0) == 10,
	      "... the other still works");
}

static int run_errors(void)
{
	unsigned char *mem = mmap(NULL, 32 << 20, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int l = sdp_listen(port), c, s, c2, s2, st, l2;
	uint64_t tok[2] = { 0, 0 };
	pid_t pid;

	memset(mem, 1, 32 << 20);
	c = sdp_connect(port);
	s = accept(l, NULL, NULL);
	c2 = sdp_connect(port);
	s2 = accept(l, NULL, NULL);
	close(l);
	regions_off = true;	/* a listener that does not ask */
	l2 = sdp_listen(port + 1);
	regions_off = false;
	errors_reg(c, mem);
	errors_asked(c, mem, l2);
	pid = fork();
	if (!pid) {
		close(c);
		_exit(owner_errors(s));
	}
	close(s);
	CHECK(!full(c, tok, sizeof(tok), false) && tok[0] && tok[1],
	      "the owner's two tokens");
	errors_ops(c, c2, tok, mem);
	full(c, &(struct req){ .type = REQ_END }, sizeof(struct req), true);
	waitpid(pid, &st, 0);	/* its socket closed at its exit */
	usleep(200000);
	errno = 0;
	CHECK(rdma_op(c, SDP_RDMA_WRITE, tok[1], 0, mem, 10, 0) < 0 &&
	      (errno == ENOENT || errno == EPIPE || errno == ECONNRESET),
	      "after the owner closed: %s", errname(errno));
	close(c);
	close(c2);
	close(s2);
	return check_exit();
}

/* ---- hold ---------------------------------------------------------------- */

/* For hostile_peer.sh: accept one connection on ADDR PORT, register a
 * 1 MiB region of ours, write-only, say its token in-band, and wait for
 * the end; prints how the connection ended.
 */
static int run_hold(void)
{
	unsigned char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int l = sdp_listen(port), s = accept(l, NULL, NULL);
	uint64_t token = 0;
	char b;
	ssize_t r;

	close(l);
	if (sdp_region_reg(s, m, 1 << 20, SDP_REGION_WRITE, &token))
		printf("SDP_REGION_REG: %s\n", errname(errno));
	full(s, &token, sizeof(token), true);
	while ((r = recv(s, &b, 1, 0)) > 0)
		;
	printf("ended: %s\n", r ? errname(errno) : "EOF");
	return 0;
}

/* ---- bench -------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* For testbed/bench-region, not a test: @secs of one-sided @how ops of
 * @size bytes (write, read; each call waits for its op), or of stream
 * sends (send: blocking, zc: MSG_ZEROCOPY, uring: io_uring SEND_ZC) into
 * a receiver that drains; prints MB/s.
 */
static int run_bench(const char *how, size_t size, double secs)
{
	unsigned char *buf = malloc(size + 4096), *reg;
	int l = sdp_listen(port), c, s, one = 1;
	struct io_uring ring;
	double t0, t;
	uint64_t token = 0, n = 0, next = 0;
	int inflight = 0;
	char drain[65536];

	c = sdp_connect(port);
	s = accept(l, NULL, NULL);
	close(l);
	memset(buf, 'b', size);
	if (!fork()) {	/* the other end: a region, or a drain */
		close(c);
		reg = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(reg, 'r', size);
		if (!sdp_region_reg(s, reg, size, SDP_REGION_READ |
				    SDP_REGION_WRITE, &token))
			full(s, &token, sizeof(token), true);
		while (recv(s, drain, sizeof(drain), 0) > 0)
			;
		_exit(0);
	}
	close(s);
	if (!strcmp(how, "write") || !strcmp(how, "read"))
		full(c, &token, sizeof(token), false);
	setsockopt(c, SOL_SDP, SDP_ZEROCOPY, &one, sizeof(one));
	io_uring_queue_init(64, &ring, 0);
	t0 = now_s();
	while ((t = now_s()) - t0 < secs) {
		struct io_uring_cqe *cqe;
		ssize_t r = -1;

		if (!strcmp(how, "write") || !strcmp(how, "read")) {
			r = rdma_op(c, how[0] == 'w' ? SDP_RDMA_WRITE :
				    SDP_RDMA_READ, token, 0, buf, size, 0);
		} else if (!strcmp(how, "send")) {
			r = send(c, buf, size, 0);
		} else if (!strcmp(how, "zc")) {
			r = send(c, buf, size, MSG_ZEROCOPY);
			next = zc_drain(c, next, 0);
		} else {	/* uring: SEND_ZCs, up to 8 unnotified */
			while (inflight < 8) {
				io_uring_prep_send_zc(io_uring_get_sqe(&ring),
						      c, buf, size, 0, 0);
				io_uring_submit(&ring);
				inflight++;
			}
			if (io_uring_wait_cqe(&ring, &cqe))
				return KSFT_FAIL;
			if (cqe->flags & IORING_CQE_F_NOTIF) {
				r = 0;
				inflight--;
			} else {
				r = cqe->res;
				if (r <= 0)
					return KSFT_FAIL;
				if (!(cqe->flags & IORING_CQE_F_MORE))
					inflight--;
			}
			io_uring_cqe_seen(&ring, cqe);
			n += r;
			continue;
		}
		if (r <= 0)
			return KSFT_FAIL;
		n += r;
	}
	printf("%.1f\n", n / 1e6 / (now_s() - t0));
	shutdown(c, SHUT_WR);
	while (wait(NULL) > 0)
		;
	close(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: sdp_region rw|errors ADDR PORT\n");
		return KSFT_FAIL;
	}
	addr = argv[2];
	port = atoi(argv[3]);
	family = sdp_module_param("af_inet_sdp", AF_INET_SDP);
	role = getenv("SDP_REGION_ROLE");
	if (!strcmp(argv[1], "rw"))
		return run_rw();
	if (!strcmp(argv[1], "errors"))
		return run_errors();
	if (!strcmp(argv[1], "hold"))
		return run_hold();
	if (!strcmp(argv[1], "bench") && argc >= 7)
		return run_bench(argv[4], strtoul(argv[5], NULL, 0),
				 atof(argv[6]));
	fprintf(stderr, "sdp_region: no mode %s\n", argv[1]);
	return KSFT_FAIL;
}
