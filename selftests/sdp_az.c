// SPDX-License-Identifier: GPL-2.0
/*
 * AZ-SDP seen from an unmodified program: a plain TCP program (AF_INET
 * sockets, blocking sends) that rewrites its buffers as soon as a send
 * returns.  Run under libsdp with a "use sdp" rule and LIBSDP_ASYNC=1,
 * its sends return before the peer has read them; it must not be able to
 * tell, except by speed.  The receiver (a thread of the same process)
 * checks every byte.
 *
 *   sdp_az overwrite ADDR PORT
 *	send(), write(), sendmsg() and writev() (with small iovecs around
 *	the large one) of 256 KiB, 1 MiB and 16 MiB + 7 from offsets 0, 1
 *	and 4095 into a page; the sender memset()s the buffer at once after
 *	each call: the receiver sees only what was sent.
 *   sdp_az kwrite ADDR PORT
 *	the same overwrite done by the kernel on the program's behalf:
 *	read() from a pipe, pread() of a file, an O_DIRECT pread() (where the
 *	file system has it), recv() from another socket, an io_uring READ:
 *	each takes its
 *	bytes whole (never EFAULT), and the receiver sees only what was sent.
 *   sdp_az echo ADDR PORT
 *	send 1 MiB, then recv() the peer's echo of it into the same buffer on
 *	the same socket, 16 times: no deadlock, every byte right both ways.
 *   sdp_az memops ADDR PORT
 *	right after a send: free(), munmap(), realloc() to twice the size
 *	(the data moves: mremap()), madvise(MADV_DONTNEED), mprotect() to
 *	PROT_NONE and back, each followed by a write into what is left; the
 *	receiver sees only what was sent.
 *   sdp_az fork ADDR PORT
 *	right after a send, fork(): the child writes its copy of the buffer,
 *	sends from it on the socket it inherited and exits; the parent then
 *	sends again; the receiver sees only what was sent, in order.
 *   sdp_az ownuffd ADDR PORT
 *	after a send from a buffer, the program registers that buffer with a
 *	userfaultfd of its own: the registration succeeds (libsdp hands the
 *	mapping over), the program writes and sends from it again: the
 *	receiver sees only what was sent.
 *   sdp_az cross ADDR PORT
 *	two connections, each echoed by its peer: 1 MiB from buffer X on the
 *	first and from Y on the second, then at once one thread receives
 *	the first's echo into Y and another the second's into X, both still
 *	in flight: no deadlock, every byte right.
 *   sdp_az close ADDR PORT
 *	a child process sends 4 MiB and exits at once: the receiver gets all
 *	of it, then the end.
 *   sdp_az closeall ADDR PORT
 *	a child process sends 1 MiB and overwrites it, closefrom(3) (the
 *	socket too, as a daemon closes all it inherited), then connects
 *	again (PORT + 1) and does it again: both receivers get what was
 *	sent, then the end (libsdp keeps its own descriptors).
 *   sdp_az pinned ADDR PORT
 *	a buffer registered as an io_uring fixed buffer (pinned: the
 *	kernel's writes through it never fault): a send from it, then at
 *	once an io_uring READ_FIXED into it: all of it, and the receiver
 *	sees only what was sent (the send must have been synchronous).
 *   sdp_az linger ADDR PORT
 *	send 4 MiB, then close() with SO_LINGER {1,0} at once: the reset
 *	ends the transfer, and the buffer is the program's again within
 *	seconds (a write into it returns).
 *   sdp_az signals ADDR PORT
 *	64 sends of 1 MiB, each overwritten at once, while a timer signal
 *	(no SA_RESTART) comes every millisecond: every byte right.
 *   sdp_az noread ADDR PORT
 *	the receiver reads nothing for 5 s while the sender sends 4 x 4 MiB,
 *	overwriting each buffer at once (a write waits while its pages are
 *	still in flight); then it reads: every byte right, no hang.
 *   sdp_az stress ADDR PORT [SECONDS]
 *	4 threads, each on its own connection, send sizes from 1 byte to
 *	4 MiB at random offsets and overwrite at once or a moment later,
 *	for SECONDS (20); the receivers check every byte.
 *   sdp_az bench ADDR PORT SIZE COMPUTE_US SECONDS [TOUCH]
 *	for testbed/bench-az, not a test: a child process receives; the
 *	parent sends SIZE bytes from one buffer, then computes for
 *	COMPUTE_US microseconds, for SECONDS; with TOUCH n > 0 it writes a
 *	byte of the buffer after every n sends (the fault window).  Prints
 *	"MB/s send_us cpu_s_per_GB": throughput, the mean time a send call
 *	took, and the sender's CPU time per GB.  SDP_AZ_BENCH_SENDS=n in
 *	the environment: at least n sends, however long they take (az.sh:
 *	what the choice by cost measures is counted in sends, not seconds).
 *   sdp_az hotspot ADDR PORT SIZE CLIENTS SECONDS
 *	for testbed/bench-az, not a test: the paper's hot-spot test.  One
 *	server (ADDR its address), CLIENTS client processes; each round
 *	the server sends SIZE bytes to each client in turn, then takes a
 *	byte from each.  Prints "us_per_client cpu_s_per_GB".
 *   sdp_az sink ADDR PORT
 *	the receiving end of bench on another host (SDP_AZ_ROLE=send
 *	there): drains every connection to PORT; one to PORT + 1 ends it.
 * SDP_AZ_ROLE=send or recv in the environment runs one end of overwrite,
 * stress, bench or hotspot, for two hosts (ADDR the receiver's; for
 * hotspot, the server's).
 * Each mode prints what it checked and exits 0 if all was right.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const char *addr;
static int port;

static int tcp_listener(int p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, addr, &a.sin_addr);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 8)) {
		perror("listener");
		exit(KSFT_FAIL);
	}
	return l;
}

static int tcp_connector(int p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p) };
	int c = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, addr, &a.sin_addr);
	if (c < 0 || connect(c, (void *)&a, sizeof(a))) {
		perror("connect");
		exit(KSFT_FAIL);
	}
	return c;
}

/* SDP_AZ_ROLE=send or recv: this process is one end of the modes that
 * run between two hosts (overwrite, stress), ADDR the receiver's.
 */
enum { BOTH_ENDS, SEND_END, RECV_END } role;

/* A connected pair: *@c the sender's end, *@s the receiver's (-1 for
 * the end another host has).
 */
static void tcp_pair(int p, int *c, int *s)
{
	int l = -1, i;

	*c = *s = -1;
	if (role != SEND_END)
		l = tcp_listener(p);
	if (role == SEND_END) {
		for (i = 0; i < 300 && *c < 0; i++) {	/* until it listens */
			struct sockaddr_in a = { .sin_family = AF_INET,
						 .sin_port = htons(p) };

			*c = socket(AF_INET, SOCK_STREAM, 0);
			inet_pton(AF_INET, addr, &a.sin_addr);
			if (connect(*c, (void *)&a, sizeof(a))) {
				close(*c);
				*c = -1;
				usleep(100000);
			}
		}
		if (*c < 0) {
			perror("connect");
			exit(KSFT_FAIL);
		}
		return;
	}
	if (role == BOTH_ENDS)
		*c = tcp_connector(p);
	*s = accept(l, NULL, NULL);
	close(l);
	if (*s < 0) {
		perror("accept");
		exit(KSFT_FAIL);
	}
}

static ssize_t recv_full(int fd, unsigned char *p, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = recv(fd, p + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return got ? (ssize_t)got : r;
		got += r;
	}
	return got;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* ---- the receiver: rounds of (size, byte) ---------------------------- */

#define MAX_ROUNDS	64

struct rx {
	int fd;
	int n;
	size_t size[MAX_ROUNDS];
	unsigned char pat[MAX_ROUNDS];
	const char *name[MAX_ROUNDS];
	bool eof;		/* the end must follow */
	pthread_t t;
};

static void *rx_run(void *arg)
{
	struct rx *rx = arg;
	unsigned char *got, c;
	size_t k;
	ssize_t r;
	int i;

	for (i = 0; i < rx->n; i++) {
		got = malloc(rx->size[i]);
		r = recv_full(rx->fd, got, rx->size[i]);
		for (k = 0; r == (ssize_t)rx->size[i] && k < rx->size[i] &&
		     got[k] == rx->pat[i]; k++)
			;
		CHECK(r == (ssize_t)rx->size[i] && k == rx->size[i],
		      "%s: the receiver got only what was sent (%zu of %zu, first wrong '%c')",
		      rx->name[i], k, rx->size[i],
		      k < rx->size[i] && r > 0 ? got[k] : '-');
		free(got);
	}
	if (rx->eof)
		CHECK(recv(rx->fd, &c, 1, 0) == 0, "then the end");
	return NULL;
}

static void rx_add(struct rx *rx, size_t size, unsigned char pat,
		   const char *name)
{
	rx->size[rx->n] = size;
	rx->pat[rx->n] = pat;
	rx->name[rx->n] = name;
	rx->n++;
}

/* ---- overwrite --------------------------------------------------------- */

enum { BY_SEND, BY_WRITE, BY_SENDMSG, BY_WRITEV, NCALLS };
static const char *const call_name[] = { "send", "write", "sendmsg",
					 "writev" };

/* Send @n bytes at @p by @how, all of them (the small iovecs around the
 * large one carry the same byte).
 */
static int send_by(int fd, int how, unsigned char *p, size_t n)
{
	struct iovec iov[3];
	struct msghdr m = { .msg_iov = iov };
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		size_t left = n - done;

		switch (how) {
		case BY_SEND:
			r = send(fd, p + done, left, 0);
			break;
		case BY_WRITE:
			r = write(fd, p + done, left);
			break;
		case BY_SENDMSG:
			iov[0] = (struct iovec){ p + done, left };
			m.msg_iovlen = 1;
			r = sendmsg(fd, &m, 0);
			break;
		default:	/* 100 bytes, the rest but 100, 100 */
			if (left > 200) {
				iov[0] = (struct iovec){ p + done, 100 };
				iov[1] = (struct iovec){ p + done + 100,
							 left - 200 };
				iov[2] = (struct iovec){ p + done + left - 100,
							 100 };
				r = writev(fd, iov, 3);
			} else {
				r = write(fd, p + done, left);
			}
			break;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

static char names[MAX_ROUNDS][64];

static int run_overwrite(void)
{
	static const size_t sizes[] = { 256 << 10, 1 << 20, (16 << 20) + 7 };
	static const size_t offs[] = { 0, 1, 4095 };
	struct rx rx = { 0 };
	unsigned char *buf, pat = 'A';
	size_t si, oi, n;
	int c, how;

	tcp_pair(port, &c, &rx.fd);
	for (how = 0; how < NCALLS; how++)
		for (si = 0; si < 3; si++)
			for (oi = 0; oi < 3; oi++, pat++) {
				snprintf(names[rx.n], sizeof(names[0]),
					 "%s of %zu at offset %zu",
					 call_name[how], sizes[si], offs[oi]);
				rx_add(&rx, sizes[si], pat, names[rx.n]);
			}
	if (role != SEND_END)
		pthread_create(&rx.t, NULL, rx_run, &rx);
	buf = malloc((16 << 20) + 8192);
	for (n = 0, pat = 'A', how = 0; role != RECV_END && how < NCALLS; how++)
		for (si = 0; si < 3; si++)
			for (oi = 0; oi < 3; oi++, pat++, n++) {
				unsigned char *p = buf + offs[oi];

				memset(p, pat, sizes[si]);
				CHECK(!send_by(c, how, p, sizes[si]), "%s: sent",
				      names[n]);
				memset(p, 'x', sizes[si]);	/* ours again */
			}
	if (role != SEND_END)
		pthread_join(rx.t, NULL);
	close(c);
	close(rx.fd);
	free(buf);
	return check_exit();
}

/* ---- kwrite ------------------------------------------------------------ */

#define KW	(1 << 20)

#define KW_WAYS	5

/* One IORING_OP_READ of @n bytes of @fd into @p: its result. */
static ssize_t uring_read(int fd, unsigned char *p, size_t n)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	ssize_t r;

	if (io_uring_queue_init(4, &ring, 0))
		return -1;
	io_uring_prep_read(io_uring_get_sqe(&ring), fd, p, n, 0);
	io_uring_submit(&ring);
	r = io_uring_wait_cqe(&ring, &cqe) ? -1 : cqe->res;
	io_uring_queue_exit(&ring);
	return r;
}

/* The kernel writes @n bytes of 'y' into @p by @how; its result. */
static ssize_t kernel_write(int how, unsigned char *p, size_t n, int other)
{
	static unsigned char src[KW] __attribute__((aligned(4096)));
	char path[] = "/var/tmp/sdp_az.XXXXXX";
	int fds[2], fd;
	ssize_t r;

	memset(src, 'y', sizeof(src));
	switch (how) {
	case 0:	/* read() from a pipe, which holds the bytes already */
		if (pipe(fds))
			return -1;
		fcntl(fds[1], F_SETPIPE_SZ, (int)n);
		if (write(fds[1], src, n) != (ssize_t)n)
			return -1;
		r = read(fds[0], p, n);
		close(fds[0]);
		close(fds[1]);
		return r;
	case 1:	/* pread() of a file; 2: the same, O_DIRECT */
	case 2:
		fd = mkstemp(path);
		if (fd < 0 || write(fd, src, n) != (ssize_t)n)
			return -1;
		fsync(fd);
		close(fd);
		fd = open(path, O_RDONLY | (how == 2 ? O_DIRECT : 0));
		unlink(path);
		if (fd < 0)
			return -2;	/* no O_DIRECT here */
		r = pread(fd, p, n, 0);
		if (r < 0 && how == 2 && errno == EINVAL)
			r = -2;
		close(fd);
		return r;
	case 3: /* recv() from another socket, which holds the bytes */
		return recv_full(other, p, n);
	default: /* an io_uring READ of a file */
		fd = mkstemp(path);
		if (fd < 0 || write(fd, src, n) != (ssize_t)n)
			return -1;
		unlink(path);
		r = uring_read(fd, p, n);
		close(fd);
		return r;
	}
}

static int run_kwrite(void)
{
	static const char *const how_name[] = {
		"read() from a pipe", "pread() of a file",
		"pread() with O_DIRECT", "recv() from another socket",
		"an io_uring READ of a file" };
	struct rx rx = { 0 };
	unsigned char *buf, *p;
	int c, how, oc, os;
	ssize_t r;

	tcp_pair(port, &c, &rx.fd);
	tcp_pair(port + 1, &oc, &os);
	for (how = 0; how < KW_WAYS; how++)
		rx_add(&rx, KW, 'A' + how, how_name[how]);
	pthread_create(&rx.t, NULL, rx_run, &rx);
	buf = aligned_alloc(4096, KW + 4096);
	for (how = 0; how < KW_WAYS; how++) {
		p = buf + (how == 2 ? 0 : 1);	/* O_DIRECT: aligned */
		memset(p, 'A' + how, KW);
		CHECK(!send_by(c, BY_SEND, p, KW), "%s: sent", how_name[how]);
		if (how == 3) {
			/* the other socket holds KW bytes of 'y' already */
			unsigned char *o = malloc(KW);

			memset(o, 'y', KW);
			CHECK(!send_by(oc, BY_SEND, o, KW),
			      "the other socket's bytes sent");
			free(o);
		}
		r = kernel_write(how, p, KW, os);
		if (r == -2) {
			printf("# O_DIRECT: not on this file system\n");
			memset(p, 'y', KW);
			continue;
		}
		CHECK(r == KW, "%s into the buffer just sent: all of it (%zd, %s)",
		      how_name[how], r, r < 0 ? errname(errno) : "0");
		CHECK(r == KW && p[0] == 'y' && p[KW - 1] == 'y',
		      "%s: the bytes are there", how_name[how]);
	}
	pthread_join(rx.t, NULL);
	close(c);
	close(rx.fd);
	close(oc);
	close(os);
	return check_exit();
}

/* ---- echo -------------------------------------------------------------- */

static void *echo_run(void *arg)
{
	int fd = *(int *)arg;
	unsigned char *b = malloc(1 << 20);
	ssize_t r;

	while ((r = recv_full(fd, b, 1 << 20)) > 0)
		if (send_by(fd, BY_SEND, b, r))
			break;
	free(b);
	return NULL;
}

static int run_echo(void)
{
	enum { N = 1 << 20, ROUNDS = 16 };
	unsigned char *buf = malloc(N);
	int c, s, i;
	size_t k;
	pthread_t t;
	ssize_t r;

	tcp_pair(port, &c, &s);
	pthread_create(&t, NULL, echo_run, &s);
	for (i = 0; i < ROUNDS; i++) {
		memset(buf, 'a' + i, N);
		CHECK(!send_by(c, BY_SEND, buf, N), "round %d: sent", i);
		/* into the buffer still in flight, on the same socket */
		r = recv_full(c, buf, N);
		for (k = 0; r == N && k < N && buf[k] == 'a' + i; k++)
			;
		CHECK(r == N && k == N, "round %d: the echo whole (%zu)", i, k);
	}
	shutdown(c, SHUT_WR);
	pthread_join(t, NULL);
	close(c);
	close(s);
	return check_exit();
}

/* ---- ownuffd ----------------------------------------------------------- */

static int run_ownuffd(void)
{
	enum { N = 2 << 20 };
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	unsigned char *p = mmap(NULL, N, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rx rx = { 0 };
	int c, u, r;

	tcp_pair(port, &c, &rx.fd);
	rx_add(&rx, N, 'U', "sent before the program's own registration");
	rx_add(&rx, N, 'V', "sent after it");
	pthread_create(&rx.t, NULL, rx_run, &rx);
	memset(p, 'U', N);
	CHECK(!send_by(c, BY_SEND, p, N), "sent");
	u = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	CHECK(u >= 0 && !ioctl(u, UFFDIO_API, &api), "the program's userfaultfd");
	reg.range.start = (uintptr_t)p;
	reg.range.len = N;
	r = ioctl(u, UFFDIO_REGISTER, &reg);
	CHECK(!r, "it registers the buffer just sent (%s)",
	      r ? errname(errno) : "0");
	memset(p, 'V', N);
	CHECK(!send_by(c, BY_SEND, p, N), "sent again from it");
	memset(p, 'x', N);
	pthread_join(rx.t, NULL);
	close(u);
	close(c);
	close(rx.fd);
	return check_exit();
}

/* ---- cross ------------------------------------------------------------- */

struct cross {
	int fd;
	unsigned char *into;
	unsigned char want;
	bool ok;
	ssize_t r;		/* what recv gave, */
	size_t k;		/* the first wrong byte's place, */
	int err;		/* errno */
};

static void *cross_recv(void *arg)
{
	struct cross *x = arg;
	size_t k = 0;

	x->r = recv_full(x->fd, x->into, 1 << 20);
	x->err = errno;
	while (x->r == 1 << 20 && k < (1 << 20) && x->into[k] == x->want)
		k++;
	x->k = k;
	x->ok = k == 1 << 20;
	return NULL;
}

static int run_cross(void)
{
	enum { N = 1 << 20, ROUNDS = 8 };
	unsigned char *bx = malloc(N), *by = malloc(N);
	int c1, s1, c2, s2, i;
	pthread_t e1, e2, t1, t2;
	struct cross x1, x2;

	tcp_pair(port, &c1, &s1);
	tcp_pair(port + 1, &c2, &s2);
	pthread_create(&e1, NULL, echo_run, &s1);
	pthread_create(&e2, NULL, echo_run, &s2);
	for (i = 0; i < ROUNDS; i++) {
		memset(bx, 'p' + i, N);
		memset(by, 'P' + i, N);
		CHECK(!send_by(c1, BY_SEND, bx, N) && !send_by(c2, BY_SEND, by, N),
		      "round %d: X and Y sent", i);
		/* each echo into the other's buffer, both in flight */
		x1 = (struct cross){ .fd = c1, .into = by, .want = 'p' + i };
		x2 = (struct cross){ .fd = c2, .into = bx, .want = 'P' + i };
		pthread_create(&t1, NULL, cross_recv, &x1);
		pthread_create(&t2, NULL, cross_recv, &x2);
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		CHECK(x1.ok && x2.ok,
		      "round %d: both echoes whole, crossed (recv %zd/%zd, %s/%s, first wrong %zu/%zu: '%c'/'%c')",
		      i, x1.r, x2.r, errname(x1.err), errname(x2.err), x1.k,
		      x2.k, x1.k < N && x1.r > 0 ? by[x1.k] : '-',
		      x2.k < N && x2.r > 0 ? bx[x2.k] : '-');
	}
	shutdown(c1, SHUT_WR);
	shutdown(c2, SHUT_WR);
	pthread_join(e1, NULL);
	pthread_join(e2, NULL);
	close(c1);
	close(c2);
	close(s1);
	close(s2);
	return check_exit();
}

/* ---- memops ------------------------------------------------------------ */

#define MO	(2 << 20)

static unsigned char *mo_map(unsigned char pat)
{
	unsigned char *p = mmap(NULL, MO, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(KSFT_FAIL);
	}
	memset(p, pat, MO);
	return p;
}

static int run_memops(void)
{
	static const char *const ops[] = { "free()", "munmap()",
		"realloc() to twice the size", "madvise(MADV_DONTNEED)",
		"mprotect(PROT_NONE) and back" };
	struct rx rx = { 0 };
	unsigned char *p, *q;
	int c, i;

	tcp_pair(port, &c, &rx.fd);
	for (i = 0; i < 5; i++)
		rx_add(&rx, MO, 'A' + i, ops[i]);
	pthread_create(&rx.t, NULL, rx_run, &rx);
	for (i = 0; i < 5; i++) {
		if (i == 0 || i == 2) {		/* malloc()ed: glibc mmap()s it */
			p = malloc(MO);
			memset(p, 'A' + i, MO);
		} else {
			p = mo_map('A' + i);
		}
		CHECK(!send_by(c, BY_SEND, p, MO), "%s: sent", ops[i]);
		switch (i) {
		case 0:
			free(p);
			q = malloc(MO);	/* likely the same address */
			memset(q, 'x', MO);
			free(q);
			break;
		case 1:
			munmap(p, MO);
			q = mo_map('x');
			munmap(q, MO);
			break;
		case 2:
			q = realloc(p, 2 * MO);
			CHECK(q && q[0] == 'A' + i && q[MO - 1] == 'A' + i,
			      "realloc(): the bytes moved along");
			if (q)
				memset(q, 'x', 2 * MO);
			free(q);
			break;
		case 3:
			madvise(p, MO, MADV_DONTNEED);
			memset(p, 'x', MO);
			munmap(p, MO);
			break;
		default:
			CHECK(!mprotect(p, MO, PROT_NONE) &&
			      !mprotect(p, MO, PROT_READ | PROT_WRITE),
			      "mprotect() away and back");
			memset(p, 'x', MO);
			munmap(p, MO);
			break;
		}
	}
	pthread_join(rx.t, NULL);
	close(c);
	close(rx.fd);
	return check_exit();
}

/* ---- fork, close ------------------------------------------------------- */

static int run_fork(void)
{
	enum { N = 4 << 20 };
	unsigned char *p = malloc(N);
	struct rx rx = { 0 };
	int c, st;
	pid_t pid;

	tcp_pair(port, &c, &rx.fd);
	rx_add(&rx, N, 'F', "sent before fork()");
	rx_add(&rx, N, 'K', "the child's send on the inherited socket");
	rx_add(&rx, N, 'G', "the parent's next send");
	pthread_create(&rx.t, NULL, rx_run, &rx);
	memset(p, 'F', N);
	CHECK(!send_by(c, BY_SEND, p, N), "sent");
	pid = fork();
	if (!pid) {
		memset(p, 'c', N);	/* the child's own copy */
		if (p[N - 1] != 'c')
			_exit(1);
		/* then it sends on the socket it inherited */
		memset(p, 'K', N);
		if (send_by(c, BY_SEND, p, N))
			_exit(2);
		memset(p, 'x', N);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st),
	      "the child wrote its copy, sent on the inherited socket, exited (%d)",
	      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	memset(p, 'G', N);
	CHECK(!send_by(c, BY_SEND, p, N), "the parent sends again");
	memset(p, 'x', N);
	pthread_join(rx.t, NULL);
	close(c);
	close(rx.fd);
	return check_exit();
}

static int run_close(void)
{
	enum { N = 4 << 20 };
	struct rx rx = { .eof = true };
	int c, st;
	pid_t pid;

	tcp_pair(port, &c, &rx.fd);
	rx_add(&rx, N, 'E', "sent, then exit()");
	pid = fork();
	if (!pid) {
		unsigned char *p = malloc(N);

		memset(p, 'E', N);
		if (send_by(c, BY_SEND, p, N))
			_exit(1);
		_exit(0);	/* close() and exit() at once, in flight */
	}
	close(c);
	pthread_create(&rx.t, NULL, rx_run, &rx);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "the sender exited");
	pthread_join(rx.t, NULL);
	close(rx.fd);
	return check_exit();
}

/* A child sends 1 MiB on @c and overwrites it, closes every descriptor
 * from 3 up (closefrom(), as a daemon does), then connects to @p2 and
 * does it again.
 */
static void closeall_child(int c, int p2)
{
	unsigned char *p = aligned_alloc(4096, KW);

	memset(p, 'C', KW);
	if (send_by(c, BY_SEND, p, KW))
		_exit(1);
	memset(p, 'x', KW);
	closefrom(3);	/* the socket too, and libsdp's, were they not kept */
	c = tcp_connector(p2);
	memset(p, 'D', KW);
	if (send_by(c, BY_SEND, p, KW))
		_exit(2);
	memset(p, 'x', KW);
	_exit(0);
}

static int run_closeall(void)
{
	struct rx rx = { .eof = true }, rx2 = { .eof = true };
	int c, l2, st;
	pid_t pid;

	tcp_pair(port, &c, &rx.fd);
	l2 = tcp_listener(port + 1);
	rx_add(&rx, KW, 'C', "sent, then closefrom(3)");
	rx_add(&rx2, KW, 'D', "after closefrom(3), a new connection");
	pid = fork();
	if (!pid)
		closeall_child(c, port + 1);
	close(c);
	pthread_create(&rx.t, NULL, rx_run, &rx);
	rx2.fd = accept(l2, NULL, NULL);
	CHECK(rx2.fd >= 0, "the second connection");
	pthread_create(&rx2.t, NULL, rx_run, &rx2);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "the sender exited (%d)",
	      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	pthread_join(rx.t, NULL);
	pthread_join(rx2.t, NULL);
	close(rx.fd);
	close(rx2.fd);
	close(l2);
	return check_exit();
}

/* ---- pinned ------------------------------------------------------------ */

/* A buffer registered as an io_uring fixed buffer (long-term pinned: the
 * kernel writes through the pin, no fault): a send from it, then at once
 * an IORING_OP_READ_FIXED of a file into it.
 */
static int run_pinned(void)
{
	char path[] = "/var/tmp/sdp_az.XXXXXX";
	unsigned char *buf = aligned_alloc(4096, KW), *src = malloc(KW);
	struct io_uring_cqe *cqe;
	struct rx rx = { 0 };
	struct io_uring ring;
	struct iovec iov = { buf, KW };
	int c, fd, r = -1;

	tcp_pair(port, &c, &rx.fd);
	rx_add(&rx, KW, 'P', "a send from an io_uring fixed buffer");
	pthread_create(&rx.t, NULL, rx_run, &rx);
	memset(src, 'y', KW);
	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, src, KW) == KW, "a file of 1 MiB");
	unlink(path);
	CHECK(!io_uring_queue_init(4, &ring, 0) &&
	      !io_uring_register_buffers(&ring, &iov, 1),
	      "the buffer registered with io_uring (pinned)");
	memset(buf, 'P', KW);
	CHECK(!send_by(c, BY_SEND, buf, KW), "sent from it");
	io_uring_prep_read_fixed(io_uring_get_sqe(&ring), fd, buf, KW, 0, 0);
	io_uring_submit(&ring);
	if (!io_uring_wait_cqe(&ring, &cqe))
		r = cqe->res;
	CHECK(r == KW && buf[0] == 'y' && buf[KW - 1] == 'y',
	      "a READ_FIXED into it at once: all of it (%d)", r);
	pthread_join(rx.t, NULL);
	io_uring_queue_exit(&ring);
	close(fd);
	close(c);
	close(rx.fd);
	return check_exit();
}

/* ---- linger, signals, noread ----------------------------------------- */

static int run_linger(void)
{
	enum { N = 4 << 20 };
	struct linger lg = { 1, 0 };
	unsigned char *p = malloc(N), *r = malloc(N);
	int c, s;

	tcp_pair(port, &c, &s);
	memset(p, 'L', N);
	CHECK(!send_by(c, BY_SEND, p, N), "sent 4 MiB");
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c);
	alarm(30);	/* a write that waited for ever fails the test */
	memset(p, 'x', N);
	alarm(0);
	CHECK(1, "after the reset, the buffer is the program's again");
	CHECK(recv_full(s, r, N) < N, "the receiver got a reset, not all");
	close(s);
	return check_exit();
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int run_signals(void)
{
	enum { N = 1 << 20, ROUNDS = 64 };
	struct sigaction sa = { .sa_handler = on_alarm };	/* no restart */
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	unsigned char *p = malloc(N);
	struct rx rx = { 0 };
	int c, i;

	tcp_pair(port, &c, &rx.fd);
	for (i = 0; i < ROUNDS; i++)
		rx_add(&rx, N, 'a' + i % 26, "a send under a signal storm");
	pthread_create(&rx.t, NULL, rx_run, &rx);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < ROUNDS; i++) {
		memset(p, 'a' + i % 26, N);
		if (send_by(c, BY_SEND, p, N))
			break;
		memset(p, 'x', N);
	}
	CHECK(i == ROUNDS, "all %d sends made (%d)", ROUNDS, i);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_join(rx.t, NULL);
	close(c);
	close(rx.fd);
	return check_exit();
}

static void *rx_late(void *arg)
{
	sleep(5);
	return rx_run(arg);
}

static int run_noread(void)
{
	enum { N = 4 << 20 };
	unsigned char *p = malloc(N);
	struct rx rx = { 0 };
	int c, i;

	tcp_pair(port, &c, &rx.fd);
	for (i = 0; i < 4; i++)
		rx_add(&rx, N, 'n' + i, "sent while the receiver slept");
	pthread_create(&rx.t, NULL, rx_late, &rx);
	for (i = 0; i < 4; i++) {
		memset(p, 'n' + i, N);
		CHECK(!send_by(c, BY_SEND, p, N), "send %d", i);
		memset(p, 'x', N);
	}
	pthread_join(rx.t, NULL);
	close(c);
	close(rx.fd);
	return check_exit();
}

/* ---- stress ----------------------------------------------------------- */

#define ST_THREADS	4
#define ST_MAX		(4 << 20)

struct st {
	int id, c, s;
	double end;
	unsigned long rounds, bad;
	unsigned int seed;
};

/* The stream of one thread: rounds of (size, byte), the same for both
 * ends (a seeded generator each).
 */
static size_t st_size(unsigned int *seed)
{
	static const size_t sizes[] = { 1, 4095, 65536, 262144 + 5,
					1 << 20, (1 << 20) + 4097, ST_MAX };

	return sizes[rand_r(seed) % 7];
}

static void *st_recv(void *arg)
{
	struct st *t = arg;
	unsigned char *r = malloc(ST_MAX);
	unsigned int seed = t->seed;
	unsigned long i;
	size_t n, k;

	for (i = 0;; i++) {
		n = st_size(&seed);
		rand_r(&seed);	/* the sender's offset and timing */
		if (recv_full(t->s, r, n) != (ssize_t)n)
			break;
		for (k = 0; k < n; k++)
			if (r[k] != (unsigned char)(t->id * 64 + i))
				break;
		if (k < n)
			t->bad++;
	}
	free(r);
	return NULL;
}

static void *st_send(void *arg)
{
	struct st *t = arg;
	unsigned char *b = malloc(ST_MAX + 8192);
	unsigned int seed = t->seed, x;
	unsigned long i;
	size_t n, off;

	for (i = 0; now_s() < t->end; i++) {
		n = st_size(&seed);
		x = rand_r(&seed);
		off = x % 4096;
		memset(b + off, (unsigned char)(t->id * 64 + i), n);
		if (send_by(t->c, (int)(x >> 12) % NCALLS, b + off, n))
			break;
		if (x & 0x100000)
			usleep(x % 2000);	/* a moment later */
		memset(b + off, 'x', n);
	}
	t->rounds = i;
	shutdown(t->c, SHUT_WR);
	free(b);
	return NULL;
}

static int run_stress(double secs)
{
	struct st t[ST_THREADS];
	pthread_t ts[ST_THREADS], tr[ST_THREADS];
	unsigned long rounds = 0, bad = 0;
	int i;

	for (i = 0; i < ST_THREADS; i++) {
		t[i] = (struct st){ .id = i, .seed = 1234 + i,
				    .end = now_s() + secs };
		tcp_pair(port + i, &t[i].c, &t[i].s);
		if (role != SEND_END)
			pthread_create(&tr[i], NULL, st_recv, &t[i]);
		if (role != RECV_END)
			pthread_create(&ts[i], NULL, st_send, &t[i]);
	}
	for (i = 0; i < ST_THREADS; i++) {
		if (role != RECV_END)
			pthread_join(ts[i], NULL);
		if (role != SEND_END)
			pthread_join(tr[i], NULL);
		rounds += t[i].rounds;
		bad += t[i].bad;
		close(t[i].c);
		close(t[i].s);
	}
	if (role != RECV_END)
		CHECK(rounds > 0, "stress: %lu sends in all", rounds);
	CHECK(!bad, "stress: every byte as sent (%lu rounds wrong)", bad);
	return check_exit();
}

/* ---- bench ------------------------------------------------------------ */

/* Busy for @us microseconds: the program's computation. */
static void compute(double us)
{
	double end = now_s() + us / 1e6;
	volatile unsigned long x = 0;

	while (now_s() < end)
		x++;
}

static int run_bench(size_t size, double us, double secs, int touch)
{
	unsigned char *buf = aligned_alloc(4096, size);
	double t0, t1, c0, sent_s = 0, mb;
	const char *e = getenv("SDP_AZ_BENCH_SENDS");
	unsigned long n = 0, min_sends = e ? strtoul(e, NULL, 0) : 0;
	int c, s, st;
	pid_t pid;

	tcp_pair(port, &c, &s);
	pid = role == SEND_END ? -1 : fork();	/* else "sink" on the peer */
	if (!pid) {	/* the receiver */
		unsigned char *r = malloc(1 << 20);

		close(c);
		while (recv(s, r, 1 << 20, 0) > 0)
			;
		_exit(0);
	}
	if (s >= 0)
		close(s);
	memset(buf, 'b', size);
	t0 = now_s();
	c0 = cpu_s();
	while ((t1 = now_s()) - t0 < secs || n < min_sends) {
		if (send_by(c, BY_SEND, buf, size))
			return KSFT_FAIL;
		sent_s += now_s() - t1;
		n++;
		if (touch && !(n % touch))
			buf[n % size] = 'c';	/* waits if still in flight */
		if (us > 0)
			compute(us);
	}
	mb = (double)n * size / 1e6;
	printf("%.1f %.1f %.3f\n", mb / (now_s() - t0), sent_s / n * 1e6,
	       (cpu_s() - c0) / (mb / 1e3));
	shutdown(c, SHUT_WR);
	if (pid > 0)
		waitpid(pid, &st, 0);
	close(c);
	return 0;
}

/* The receiving end of bench and hotspot on another host: every
 * connection to PORT is drained by a child of its own; a connection to
 * PORT + 1 ends it.
 */
static int run_sink(void)
{
	struct pollfd pf[2];
	unsigned char *r;
	int s;

	pf[0] = (struct pollfd){ .fd = tcp_listener(port), .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = tcp_listener(port + 1),
				 .events = POLLIN };
	signal(SIGCHLD, SIG_IGN);	/* no zombies */
	while (poll(pf, 2, -1) >= 0 && !(pf[1].revents & POLLIN)) {
		if (!(pf[0].revents & POLLIN))
			continue;
		s = accept(pf[0].fd, NULL, NULL);
		if (s < 0 || fork()) {
			close(s);
			continue;
		}
		r = malloc(1 << 20);
		while (recv(s, r, 1 << 20, 0) > 0)
			;
		_exit(0);
	}
	return 0;
}

/* ---- hotspot ----------------------------------------------------------- */

/* A client of the hot spot: each round, take SIZE bytes, answer 1. */
static void hotspot_client(int c, size_t size)
{
	unsigned char *r = malloc(size), ack = 'a';

	while (recv_full(c, r, size) == (ssize_t)size)
		if (send(c, &ack, 1, 0) != 1)
			break;
	_exit(0);
}

/* One server, @n clients: each round the server sends @size bytes from
 * one buffer to each client in turn (blocking sends), then takes each
 * one's 1-byte answer.  Prints the mean round time per client (us) and
 * the server's CPU per GB.  ADDR is the server's; with SDP_AZ_ROLE=send
 * only the server runs here, with recv only the clients.
 */
static int run_hotspot(size_t size, int n, double secs)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned char *buf = aligned_alloc(4096, size), ack;
	double t0, c0;
	unsigned long rounds = 0;
	int l = -1, i, *c = calloc(n, sizeof(int));

	inet_pton(AF_INET, addr, &a.sin_addr);
	if (role != RECV_END)
		l = tcp_listener(port);
	for (i = 0; role != SEND_END && i < n; i++) {
		int fd = -1, k;

		for (k = 0; k < 300 && fd < 0; k++) {	/* until it listens */
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(fd, (void *)&a, sizeof(a))) {
				close(fd);
				fd = -1;
				usleep(100000);
			}
		}
		if (fd < 0) {
			perror("connect");
			return KSFT_FAIL;
		}
		if (!fork())
			hotspot_client(fd, size);
		close(fd);
	}
	if (role == RECV_END) {
		while (wait(NULL) > 0)
			;
		return 0;
	}
	for (i = 0; i < n; i++)
		c[i] = accept(l, NULL, NULL);
	close(l);
	memset(buf, 'h', size);
	t0 = now_s();
	c0 = cpu_s();
	while (now_s() - t0 < secs) {
		for (i = 0; i < n; i++)
			if (send_by(c[i], BY_SEND, buf, size))
				return KSFT_FAIL;
		for (i = 0; i < n; i++)
			if (recv_full(c[i], &ack, 1) != 1)
				return KSFT_FAIL;
		rounds++;
	}
	printf("%.1f %.3f\n", (now_s() - t0) / rounds / n * 1e6,
	       (cpu_s() - c0) / ((double)rounds * n * size / 1e9));
	for (i = 0; i < n; i++)
		close(c[i]);
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: sdp_az MODE ADDR PORT\n");
		return KSFT_FAIL;
	}
	addr = argv[2];
	port = atoi(argv[3]);
	if (getenv("SDP_AZ_ROLE"))
		role = !strcmp(getenv("SDP_AZ_ROLE"), "send") ? SEND_END :
		       RECV_END;
	if (!strcmp(argv[1], "overwrite"))
		return run_overwrite();
	if (!strcmp(argv[1], "kwrite"))
		return run_kwrite();
	if (!strcmp(argv[1], "echo"))
		return run_echo();
	if (!strcmp(argv[1], "memops"))
		return run_memops();
	if (!strcmp(argv[1], "fork"))
		return run_fork();
	if (!strcmp(argv[1], "close"))
		return run_close();
	if (!strcmp(argv[1], "closeall"))
		return run_closeall();
	if (!strcmp(argv[1], "pinned"))
		return run_pinned();
	if (!strcmp(argv[1], "ownuffd"))
		return run_ownuffd();
	if (!strcmp(argv[1], "cross"))
		return run_cross();
	if (!strcmp(argv[1], "linger"))
		return run_linger();
	if (!strcmp(argv[1], "signals"))
		return run_signals();
	if (!strcmp(argv[1], "noread"))
		return run_noread();
	if (!strcmp(argv[1], "stress"))
		return run_stress(argc > 4 ? atof(argv[4]) : 20);
	if (!strcmp(argv[1], "sink"))
		return run_sink();
	if (!strcmp(argv[1], "hotspot") && argc >= 7)
		return run_hotspot(strtoul(argv[4], NULL, 0), atoi(argv[5]),
				   atof(argv[6]));
	if (!strcmp(argv[1], "bench") && argc >= 7)
		return run_bench(strtoul(argv[4], NULL, 0), atof(argv[5]),
				 atof(argv[6]), argc > 7 ? atoi(argv[7]) : 0);
	fprintf(stderr, "sdp_az: no mode %s\n", argv[1]);
	return KSFT_FAIL;
}
