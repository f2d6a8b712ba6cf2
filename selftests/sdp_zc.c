// SPDX-License-Identifier: GPL-2.0
/*
 * ZCopy on SDP sockets, what a program can see of it.
 *
 *   sdp_zc sizes ADDR PORT
 *	one process, both ends: sizes around the ZCopy threshold (threshold
 *	- 1, threshold, + 1, 1 MiB, 16 MiB + 7) from unaligned start and end
 *	addresses, received into unaligned buffers both in one large read
 *	(the peer's pages read straight into it) and in 1000-byte reads
 *	(read ahead into kernel buffers); every byte checked.
 *   sdp_zc sizes-server ADDR PORT / sdp_zc sizes-client ADDR PORT
 *	the same between two hosts.
 *   sdp_zc sink ADDR PORT
 *	the receiver is waiting in recv() with an empty queue before each
 *	send (threshold, + 1, 512 KiB + 3, 1 MiB, unaligned at both ends):
 *	its buffer is offered to the peer (SinkAvail), which writes straight
 *	into it; every byte checked, and the bytes counted as written.
 *   sdp_zc sink-server ADDR PORT / sdp_zc sink-client ADDR PORT
 *	the same between two hosts (the server receives).
 *   sdp_zc sink-nb ADDR PORT
 *	sink, the sender non-blocking (MSG_DONTWAIT, poll() for POLLOUT):
 *	it too writes straight into the waiting reader's buffer.
 *   sdp_zc overwrite ADDR PORT
 *	after each blocking send of 1 MiB returns, the sender overwrites its
 *	buffer at once; the receiver, reading as it goes or only later, must
 *	see what was sent, never the overwrite.
 *   sdp_zc msgzc ADDR PORT
 *	SDP_ZEROCOPY and send(MSG_ZEROCOPY): the completion of a 4 MiB send
 *	arrives only once the receiver has read it; a small send completes
 *	at once as copied; eight sends in flight complete as one range.
 *   sdp_zc interrupt ADDR PORT
 *	64 MiB by ZCopy while both ends take a signal every millisecond
 *	(no SA_RESTART): interrupted calls are retried, every byte checked.
 *   sdp_zc kill ADDR PORT
 *	a receiver killed in the middle of 64 MiB: the blocking ZCopy send
 *	fails instead of hanging; then a sender killed mid-send: the
 *	receiver gets a prefix of the stream, then an end.
 *   sdp_zc closeahead ADDR PORT
 *	twenty times: a receiver that never reads closes while its SrcAvails
 *	are being read ahead (half of them once a SrcAvail has come, a few
 *	ms later); the blocking sender gets a reset (the send
 *	returns what it advertised, as TCP returns what it queued, and the
 *	next send fails).
 *   sdp_zc shutread ADDR PORT
 *	the reader shuts its side down first; the sender sends 8 MiB with
 *	MSG_ZEROCOPY and closes at once, so that both DisConns are through
 *	while the SrcAvails are still unread: the reader must still get all
 *	8 MiB, then end of file.
 *   sdp_zc forkcow ADDR PORT
 *	a reader waits in recv() of 1 MiB with its buffer offered to the peer
 *	(SinkAvail); the process forks and writes into the buffer (which
 *	would copy the page for one of them); then the peer writes: the
 *	reader must see the peer's bytes (pages pinned FOLL_LONGTERM stay
 *	the parent's).
 *   sdp_zc sendwait ADDR PORT
 *	a reader waits in recv() of 1 MiB with its buffer offered to the peer
 *	(SinkAvail: one registration of the connection's); another thread
 *	sends 64 MiB on the same socket, which the peer does not read for
 *	3 s: waiting for a registration, the sender sleeps (the process uses
 *	under 1 s of CPU in those 3 s); then every byte arrives both ways.
 *   sdp_zc sendfile ADDR PORT
 *	64 KiB splice()d from a pipe with SPLICE_F_MORE and nothing after it
 *	until the receiver says it has them (what is held for "more" must
 *	still go), sendfile() of a 16 MiB file (blocking), 5 MiB + 3 of it
 *	from offset 1000 (non-blocking, poll() for POLLOUT, as an
 *	event-driven server sends), a sendfile() asking 1 MiB more than the
 *	file has, then 8 MiB from offset 4096 and close() at once: the
 *	receiver checks every byte and the end.
 *	The sender checks its pages went by reference (TxZcopyPageBytes):
 *	all of the blocking 16 MiB; it prints the non-blocking share.
 *   sdp_zc sendfile-copy ADDR PORT
 *	the same with SDP_ZCOPY_THRESH 0 on the sender: nothing by
 *	reference, every byte still right.
 *   sdp_zc sendfile-hold ADDR PORT
 *	a receiver that never reads: a non-blocking sendfile() loop ends in
 *	EAGAIN with the pages held (ZcopyPageRefs) within the bound, one
 *	1 MiB run over net.ipv4.tcp_wmem[2]; a blocking sendfile() ends at
 *	SO_SNDTIMEO (1 s) with EAGAIN; after a close() with SO_LINGER {1,0}
 *	every page is released.
 *   sdp_zc sendfile-shutdown ADDR PORT
 *	a blocking sendfile() of 16 MiB waits for room (the reader reads
 *	nothing) when another thread calls shutdown(SHUT_WR): the sendfile()
 *	ends in EPIPE, and the reader gets every byte it reported sent, then
 *	the end.
 *   sdp_zc sendfile-threads ADDR PORT
 *	four threads sendfile() 16 MiB each on one blocking socket at once,
 *	so that one starts a run of pages while another is gathering one:
 *	the receiver must get all 64 MiB, then the end.
 *   sdp_zc sendfile-server ADDR PORT / sdp_zc sendfile-client ADDR PORT
 *	sendfile between two hosts (the client sends).
 *   sdp_zc blast-recv ADDR PORT SIZE / sdp_zc blast-send ADDR PORT SIZE
 *	receive / send SIZE bytes at a time until an error: for the kill
 *	tests; print "ready", then how it ended.
 *   sdp_zc holdrecv ADDR PORT
 *	for sdp_evil's zc-sink-stale: accept two connections; on the first
 *	recv() 256 KiB (a SinkAvail), print what came, send 4 bytes "done";
 *	keep the second until stdin ends.
 *   sdp_zc holdsend ADDR PORT block|linger0
 *	for sdp_evil's stale-key cases: accept two connections; on the first
 *	send 256 KiB, blocking (block, then 4 bytes "done"), or with
 *	MSG_ZEROCOPY, then at a line on stdin close it with SO_LINGER {1,0}
 *	(linger0); keep the second until stdin ends.
 * SDP_ZC_FAMILY=tcp in the environment runs a mode over TCP (AF_INET), where
 * TCP defines the answer (sendfile-shutdown).
 * Each mode prints what it checked and exits 0 if all was right.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "check.h"

#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif

static const char *addr;
static int port;
static int family = AF_INET_SDP;	/* AF_INET with SDP_ZC_FAMILY=tcp */

static unsigned char pat(uint64_t i, unsigned int seed)
{
	uint64_t x = (i + seed) * 0x9E3779B97F4A7C15ull;

	return x >> 56;
}

static struct sockaddr_in sa(int p)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(p) };

	inet_pton(AF_INET, addr, &s.sin_addr);
	return s;
}

static int listener(int p)
{
	struct sockaddr_in s = sa(p);
	int fd = socket(family, SOCK_STREAM, 0), one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&s, sizeof(s)) ||
	    listen(fd, 8)) {
		perror("listen");
		exit(2);
	}
	return fd;
}

static int connector(int p)
{
	struct sockaddr_in s = sa(p);
	int fd, tries;

	for (tries = 0; tries < 300; tries++) {
		fd = socket(family, SOCK_STREAM, 0);
		if (!connect(fd, (struct sockaddr *)&s, sizeof(s)))
			return fd;
		close(fd);
		usleep(100000);
	}
	perror("connect");
	exit(2);
}

static int accept_one(int l)
{
	int fd = accept(l, NULL, NULL);

	if (fd < 0) {
		perror("accept");
		exit(2);
	}
	return fd;
}

static int zcopy_thresh(int fd)
{
	int v = 65536;
	socklen_t len = sizeof(v);

	getsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &v, &len);
	return v;
}

/* Write all of @n, retrying after signals; returns 0 or the errno. */
static int send_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += w;
		n -= w;
	}
	return 0;
}

/* send_all() by non-blocking sends, waiting in poll() for room. */
static int send_all_nb(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return errno;
			poll(&pfd, 1, 1000);
			continue;
		}
		p += w;
		n -= w;
	}
	return 0;
}

/* Read exactly @n (in reads of at most @chunk), retrying after signals. */
static ssize_t recv_all(int fd, unsigned char *p, size_t n, size_t chunk)
{
	size_t got = 0;

	while (got < n) {
		size_t want = n - got < chunk ? n - got : chunk;
		ssize_t r = recv(fd, p + got, want, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : (ssize_t)got;
		got += r;
	}
	return got;
}

static size_t first_bad(const unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pat(i, seed))
			return i;
	return n;
}

/* ---- sizes ------------------------------------------------------------ */

struct size_case {
	uint32_t size, soff, roff, chunk, seed;
};

static int size_cases(int thresh, struct size_case *c)
{
	const uint32_t sizes[] = { thresh - 1, thresh, thresh + 1, 1 << 20,
				   (16 << 20) + 7 };
	const uint32_t offs[][2] = { { 0, 0 }, { 1, 3 }, { 4095, 17 } };
	int n = 0;
	size_t i, o, k;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
			for (k = 0; k < 2; k++) {
				c[n].size = sizes[i];
				c[n].soff = offs[o][0];
				c[n].roff = offs[o][1];
				c[n].chunk = k ? 1000 : sizes[i];
				c[n].seed = n * 31 + 7;
				n++;
			}
	return n;
}

static int sizes_send(int fd)
{
	struct size_case c[64];
	int n = size_cases(zcopy_thresh(fd), c), i;
	unsigned char *buf = malloc((17 << 20) + 4096);

	for (i = 0; i < n; i++) {
		unsigned char *p = buf + c[i].soff;
		uint32_t j;

		for (j = 0; j < c[i].size; j++)
			p[j] = pat(j, c[i].seed);
		if (send_all(fd, p, c[i].size))
			return 1;
	}
	free(buf);
	return 0;
}

static void sizes_recv(int fd)
{
	int thresh = zcopy_thresh(fd), i;
	struct size_case c[64];
	int n = size_cases(thresh, c);
	unsigned char *buf = malloc((17 << 20) + 4096);

	printf("# threshold %d\n", thresh);
	for (i = 0; i < n; i++) {
		unsigned char *p = buf + c[i].roff;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t got;
		size_t at;

		/* the SrcAvail first: these reads take the read-based path
		 * (a reader already waiting offers a SinkAvail: "sink")
		 */
		poll(&pfd, 1, 10000);
		got = recv_all(fd, p, c[i].size, c[i].chunk);
		at = got == (ssize_t)c[i].size ?
			    first_bad(p, got, c[i].seed) : 0;

		CHECK(got == (ssize_t)c[i].size && at == c[i].size,
		      "%u bytes from offset %u into offset %u, %s reads (%zd, first bad %zu)",
		      c[i].size, c[i].soff, c[i].roff,
		      c[i].chunk == 1000 ? "1000-byte" : "whole", got, at);
	}
	free(buf);
}

/* A sender and a receiver: in one process (@both, the sender forked), or
 * one end of a connection between two hosts, the receiving @server or the
 * sending client (which then waits for the receiver to close).
 */
static int run_pair(int both, int server, int (*send_fn)(int fd),
		    void (*recv_fn)(int fd))
{
	int l = -1, fd, st = 0;
	pid_t pid = 0;

	if (both || server)
		l = listener(port);
	if (both) {
		pid = fork();
		if (!pid)
			_exit(send_fn(connector(port)));
	}
	if (both || server) {
		fd = accept_one(l);
		recv_fn(fd);
		close(fd);
		if (pid) {
			waitpid(pid, &st, 0);
			CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "sender done");
		}
	} else {
		fd = connector(port);
		CHECK(!send_fn(fd), "all sent");
		shutdown(fd, SHUT_WR);
		CHECK(recv(fd, &st, 1, 0) == 0, "EOF from the receiver");
	}
	return check_exit();
}

/* ---- sendfile() and splice(): pages by reference --------------------- */

#define SF_FILE		(16 << 20)
#define SF_PIPE		65536
#define SF_SEED		7
#define SF_PIPE_SEED	9

static int sf_copy;	/* sendfile-copy: SDP_ZCOPY_THRESH 0 */

/* The stream: a pipe's 64 KiB (first: no other send has armed a timer
 * that would push what it holds), the file, 5 MiB + 3 of it from 1000,
 * the file's last 1 MiB + 5, 8 MiB of the file from 4096.
 */
static const struct sf_part {
	off_t off;
	size_t len;
	int nb;		/* non-blocking */
	int pipe;	/* splice(SPLICE_F_MORE), then wait for the reader */
	size_t past;	/* asked for this much more than the file has */
} sf_parts[] = {
	{ .len = SF_PIPE, .pipe = 1 },
	{ .off = 0, .len = SF_FILE },
	{ .off = 1000, .len = (5 << 20) + 3, .nb = 1 },
	{ .off = SF_FILE - (1 << 20) - 5, .len = (1 << 20) + 5, .past = 1 << 20 },
	{ .off = 4096, .len = 8 << 20 },
};

#define SF_NPARTS	(sizeof(sf_parts) / sizeof(sf_parts[0]))

static size_t sf_total(void)
{
	size_t i, t = 0;

	for (i = 0; i < SF_NPARTS; i++)
		t += sf_parts[i].len;
	return t;
}

/* The byte at @pos of the stream. */
static unsigned char sf_byte(size_t pos)
{
	size_t i;

	for (i = 0; i < SF_NPARTS; i++) {
		if (pos < sf_parts[i].len)
			return sf_parts[i].pipe ? pat(pos, SF_PIPE_SEED) :
			       pat(sf_parts[i].off + pos, SF_SEED);
		pos -= sf_parts[i].len;
	}
	return 0;
}

static int sf_file(void)
{
	char path[] = "/tmp/sdp_zc_sf.XXXXXX";
	unsigned char *buf = malloc(SF_FILE);
	int f = mkstemp(path);
	size_t i;

	if (f < 0 || !buf) {
		perror("mkstemp");
		exit(2);
	}
	unlink(path);
	for (i = 0; i < SF_FILE; i++)
		buf[i] = pat(i, SF_SEED);
	if (write(f, buf, SF_FILE) != SF_FILE) {
		perror("write");
		exit(2);
	}
	free(buf);
	return f;
}

/* sendfile() all of a part, waiting in poll() if non-blocking. */
static int sf_sendfile(int fd, int f, const struct sf_part *p)
{
	off_t off = p->off, end = p->off + p->len;

	fcntl(fd, F_SETFL, p->nb ? O_NONBLOCK : 0);
	while (off < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t n = sendfile(fd, f, &off, end - off + p->past);

		if (n < 0 && errno == EAGAIN && p->nb) {
			poll(&pfd, 1, 1000);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
	}
	fcntl(fd, F_SETFL, 0);
	return 0;
}

static int sf_splice(int fd)
{
	unsigned char buf[SF_PIPE];
	size_t i, done = 0;
	int p[2];

	for (i = 0; i < SF_PIPE; i++)
		buf[i] = pat(i, SF_PIPE_SEED);
	if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, SF_PIPE) < SF_PIPE ||
	    write(p[1], buf, SF_PIPE) != SF_PIPE)
		return errno ? errno : EIO;
	while (done < SF_PIPE) {
		ssize_t n = splice(p[0], NULL, fd, NULL, SF_PIPE - done,
				   SPLICE_F_MORE);

		if (n <= 0)
			return n < 0 ? errno : EIO;
		done += n;
	}
	close(p[0]);
	close(p[1]);
	return 0;
}

/* Nothing more sent until the reader says it has it all so far. */
static int sf_wait_reader(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c = 0;

	return poll(&pfd, 1, 10000) == 1 && recv(fd, &c, 1, 0) == 1 &&
	       c == 'k' ? 0 : ETIMEDOUT;
}

static int sendfile_send(int fd)
{
	long before = sdp_stat_of("TxZcopyPageBytes"), after;
	int f = sf_file(), zero = 0, err = 0;
	size_t i;

	if (sf_copy)
		setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &zero, sizeof(zero));
	for (i = 0; i < SF_NPARTS && !err; i++) {
		const struct sf_part *p = &sf_parts[i];

		err = p->pipe ? sf_splice(fd) : sf_sendfile(fd, f, p);
		if (!err && p->pipe) {
			err = sf_wait_reader(fd);
			CHECK(!err,
			      "after splice(SPLICE_F_MORE) and nothing more, the reader has it: %s",
			      errname(err));
		}
		after = sdp_stat_of("TxZcopyPageBytes");
		CHECK(!err, "%s %zu bytes%s: %s (%ld by reference)",
		      p->pipe ? "splice" : "sendfile", p->len,
		      p->nb ? ", non-blocking" : p->past ? ", to the file's end" : "",
		      errname(err), after - before);
		if (!err && i == 1)
			CHECK(sf_copy ? after == before :
			      after - before == (long)p->len,
			      "%s", sf_copy ? "none by reference" :
			      "all of it by reference");
		before = after;
	}
	close(f);
	return check_failures;
}

/* Seconds on @clock: CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID. */
static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A peer that never reads cannot make us hold more than the bound. */
static int run_sendfile_hold(void)
{
	int l = listener(port), c = connector(port), s = accept_one(l);
	struct timeval tv = { .tv_sec = 1 };
	struct linger lg = { 1, 0 };
	long wmem[3] = { 0, 0, 0 }, refs, bound, taken = 0;
	int f = sf_file(), idle = 0, eagain = 0, i;
	const int quiet = 20 * sdp_time_scale();	/* 2 s without progress */
	FILE *w = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");
	off_t off = 0;
	ssize_t n = 0;
	double t;

	if (!w || fscanf(w, "%ld %ld %ld", &wmem[0], &wmem[1], &wmem[2]) != 3)
		exit(2);
	fclose(w);
	bound = (wmem[2] + (1 << 20)) / 4096;
	fcntl(c, F_SETFL, O_NONBLOCK);
	while (idle < quiet) {
		struct pollfd pfd = { .fd = c, .events = POLLOUT };

		n = sendfile(c, f, &off, SF_FILE - off);
		if (n > 0) {
			taken += n;
			idle = 0;
			if (off == SF_FILE)
				off = 0;
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			eagain++;
			idle++;
			poll(&pfd, 1, 100);
			continue;
		}
		break;
	}
	CHECK(idle == quiet,
	      "a peer that never reads: non-blocking sendfile() ends in EAGAIN (%ld bytes taken, %s)",
	      taken, n < 0 ? errname(errno) : "no error");
	refs = sdp_stat_of("ZcopyPageRefs");
	CHECK(refs > 0 && refs <= bound, "pages held for it: %ld, at most %ld", refs, bound);

	fcntl(c, F_SETFL, 0);
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	t = clock_s(CLOCK_MONOTONIC);
	n = sendfile(c, f, &off, 1 << 20);
	t = clock_s(CLOCK_MONOTONIC) - t;
	CHECK(n < 0 && errno == EAGAIN && t >= 0.9 && t < 5,
	      "a blocking sendfile() to it ends at SO_SNDTIMEO: %zd (%s) after %.1f s",
	      n, n < 0 ? errname(errno) : "-", t);

	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c);
	for (i = 0; i < 100 && (refs = sdp_stat_of("ZcopyPageRefs")) != 0; i++)
		usleep(100000);
	CHECK(refs == 0, "after close() with SO_LINGER {1,0}, every page released (%ld held)",
	      refs);
	close(s);
	close(l);
	close(f);
	return check_exit();
}

/* ---- shutdown(SHUT_WR) while another thread's sendfile() waits ---------- */

struct sf_shut {
	int fd, f, err;
	size_t sent;
	pid_t tid;
};

static void *sf_shut_fn(void *arg)
{
	struct sf_shut *t = arg;
	off_t off = 0;
	ssize_t n;

	t->tid = gettid();
	while (off < SF_FILE) {
		n = sendfile(t->fd, t->f, &off, SF_FILE - off);
		if (n <= 0) {
			t->err = n < 0 ? errno : EIO;
			break;
		}
		__atomic_add_fetch(&t->sent, n, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/* Is thread @tid asleep, with nothing leaving @fd, for half a second? */
static int sf_blocked(pid_t tid, int fd)
{
	int outq = -1, last = -2, calm = 0, i;
	char path[64], st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	for (i = 0; i < 200 && calm < 5; i++) {
		usleep(100000);
		f = fopen(path, "r");
		if (!f || fscanf(f, "%*d (%*[^)]) %c", &st) != 1)
			st = 0;
		if (f)
			fclose(f);
		ioctl(fd, SIOCOUTQ, &outq);
		calm = st == 'S' && outq == last ? calm + 1 : 0;
		last = outq;
	}
	return calm == 5;
}

/* A blocking sendfile() waits for room (the reader reads nothing); another
 * thread shuts the socket's sending side down.  As on TCP, the sendfile()
 * ends in EPIPE (after a short count, perhaps), and the reader gets what
 * it reported sent, every byte right, then the end: nothing that was
 * started after the DisConn.
 */
static int run_sendfile_shutdown(void)
{
	int l = listener(port), c = connector(port), s = accept_one(l);
	struct sf_shut t = { .fd = c, .f = sf_file() };
	unsigned char *buf = malloc(1 << 20);
	size_t pos = 0, bad = (size_t)-1, i;
	pthread_t th;
	ssize_t r;
	int blocked;

	signal(SIGPIPE, SIG_IGN);
	pthread_create(&th, NULL, sf_shut_fn, &t);
	while (!__atomic_load_n(&t.tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	blocked = sf_blocked(t.tid, c);
	CHECK(blocked,
	      "sendfile() of 16 MiB to a reader that reads nothing waits (%zu bytes taken)",
	      __atomic_load_n(&t.sent, __ATOMIC_SEQ_CST));
	shutdown(c, SHUT_WR);
	usleep(200000);
	while ((r = recv(s, buf, 1 << 20, 0)) > 0 ||
	       (r < 0 && errno == EINTR)) {
		for (i = 0; r > 0 && i < (size_t)r; i++)
			if (bad == (size_t)-1 && buf[i] != pat(pos + i, SF_SEED))
				bad = pos + i;
		if (r > 0)
			pos += r;
	}
	pthread_join(th, NULL);
	CHECK(t.err == EPIPE, "the sendfile() ends in EPIPE (%s)", errname(t.err));
	CHECK(pos == t.sent && bad == (size_t)-1,
	      "the reader gets the %zu bytes sent: %zu, then %s (first bad %zd)",
	      t.sent, pos, r ? errname(errno) : "the end", (ssize_t)bad);
	close(c);
	close(s);
	close(l);
	close(t.f);
	free(buf);
	return check_exit();
}

/* Threads, one socket: every byte of every sendfile() arrives. */
#define SF_THREADS	4

struct sf_thread {
	int fd, f, err;
};

static void *sf_thread_fn(void *arg)
{
	struct sf_thread *t = arg;
	struct sf_part p = { .len = SF_FILE };

	t->err = sf_sendfile(t->fd, t->f, &p);
	return NULL;
}

static int sendfile_threads_send(int fd)
{
	struct sf_thread t[SF_THREADS];
	pthread_t th[SF_THREADS];
	int i;

	for (i = 0; i < SF_THREADS; i++) {
		t[i] = (struct sf_thread){ .fd = fd, .f = sf_file() };
		pthread_create(&th[i], NULL, sf_thread_fn, &t[i]);
	}
	for (i = 0; i < SF_THREADS; i++) {
		pthread_join(th[i], NULL);
		CHECK(!t[i].err, "thread %d: sendfile() of 16 MiB: %s", i,
		      errname(t[i].err));
	}
	return check_failures;
}

static void sendfile_threads_recv(int fd)
{
	unsigned char *buf = malloc(1 << 20);
	size_t total = 0;
	ssize_t r;

	while ((r = recv(fd, buf, 1 << 20, 0)) > 0 ||
	       (r < 0 && errno == EINTR))
		total += r > 0 ? r : 0;
	CHECK(total == SF_THREADS * (size_t)SF_FILE, "received %zu of %zu bytes, then %s",
	      total, SF_THREADS * (size_t)SF_FILE, r ? errname(errno) : "the end");
	free(buf);
}

/* Every byte in order, then the end (the sender closed at once). */
static void sendfile_recv(int fd)
{
	size_t total = sf_total(), pos = 0, bad = (size_t)-1, i, ack = 0;
	unsigned char *buf = malloc(1 << 20);
	ssize_t r;

	for (i = 0; i < SF_NPARTS && !sf_parts[i].pipe; i++)
		ack += sf_parts[i].len;
	ack += sf_parts[i].len;	/* up to the end of the held splice */
	while ((r = recv(fd, buf, 1 << 20, 0)) > 0 ||
	       (r < 0 && errno == EINTR)) {
		for (i = 0; r > 0 && i < (size_t)r; i++)
			if (bad == (size_t)-1 && buf[i] != sf_byte(pos + i))
				bad = pos + i;
		if (r > 0 && pos < ack && pos + r >= ack)
			send(fd, "k", 1, MSG_NOSIGNAL);
		if (r > 0)
			pos += r;
	}
	CHECK(pos == total && bad == (size_t)-1,
	      "received %zu of %zu bytes, then %s (first bad %zd)",
	      pos, total, r ? errname(errno) : "the end", (ssize_t)bad);
	free(buf);
}

/* The SinkAvail cases: a waiting reader's buffer, unaligned at both ends. */
static void sink_sizes(int thresh, uint32_t *sizes)
{
	sizes[0] = thresh;
	sizes[1] = thresh + 1;
	sizes[2] = (512 << 10) + 3;
	sizes[3] = 1 << 20;
}

/* Sender: for each case wait for the receiver's go (it is about to wait in
 * recv(), its SinkAvail on the way), give the SinkAvail time to arrive,
 * then send.
 */
static int sink_send_flags(int fd, int flags)
{
	unsigned char *buf = malloc((1 << 20) + 4096);
	uint32_t sizes[4];
	int i;

	sink_sizes(zcopy_thresh(fd), sizes);
	for (i = 0; i < 4; i++) {
		uint32_t j;
		char go;

		for (j = 0; j < sizes[i]; j++)
			buf[5 + j] = pat(j, i + 40);
		if (recv(fd, &go, 1, MSG_WAITALL) != 1)
			return 1;
		usleep(300000);
		if (flags ? send_all_nb(fd, buf + 5, sizes[i]) :
			    send_all(fd, buf + 5, sizes[i]))
			return 1;
	}
	free(buf);
	return 0;
}

static int sink_send(int fd)
{
	return sink_send_flags(fd, 0);
}

static int sink_send_nb(int fd)
{
	return sink_send_flags(fd, MSG_DONTWAIT);
}

/* Receiver: every byte right, and (on this host's counters) written
 * straight into the buffers.
 */
static void sink_recv(int fd)
{
	unsigned char *buf = malloc((1 << 20) + 4096);
	long before = sdp_stat_of("RxZcopySinkBytes"), want = 0;
	uint32_t sizes[4];
	int i;

	sink_sizes(zcopy_thresh(fd), sizes);
	for (i = 0; i < 4; i++) {
		unsigned char *r = buf + 3;
		ssize_t got;
		size_t at;

		if (send(fd, "g", 1, MSG_NOSIGNAL) != 1)
			break;
		got = recv_all(fd, r, sizes[i], sizes[i]);
		at = got == (ssize_t)sizes[i] ? first_bad(r, got, i + 40) : 0;
		CHECK(got == (ssize_t)sizes[i] && at == sizes[i],
		      "%u bytes into a waiting reader's buffer (%zd, first bad %zu)",
		      sizes[i], got, at);
		/* a SinkAvail covers one registration, 256 pages: at least
		 * 255 pages' worth of a buffer that starts inside a page
		 */
		want += sizes[i] < (255 << 12) ? sizes[i] : (255 << 12);
	}
	CHECK(sdp_stat_of("RxZcopySinkBytes") - before >= want,
	      "written straight into the buffers: %ld bytes (at least %ld)",
	      sdp_stat_of("RxZcopySinkBytes") - before, want);
	free(buf);
}

static int run_holdrecv(void)
{
	int l = listener(port), c1, c2;
	unsigned char *buf = malloc(256 << 10);
	char line[64];
	ssize_t r;

	printf("listening\n");
	fflush(stdout);
	c1 = accept_one(l);
	c2 = accept_one(l);
	r = recv(c1, buf, 256 << 10, 0);
	printf("recv: %s\n", r < 0 ? errname(errno) : "some bytes");
	fflush(stdout);
	send(c1, "done", 4, MSG_NOSIGNAL);
	while (fgets(line, sizeof(line), stdin))
		;
	close(c2);
	return 0;
}

/* ---- overwrite ------------------------------------------------------- */

static int run_overwrite(void)
{
	enum { N = 1 << 20, ROUNDS = 8 };
	int l = listener(port), c, s, late, i, st;
	unsigned char *buf = malloc(N), *got = malloc(N);
	pid_t pid;

	for (late = 0; late < 2; late++) {
		c = connector(port);
		s = accept_one(l);
		pid = fork();
		if (!pid) {
			for (i = 0; i < ROUNDS; i++) {
				memset(buf, 'A' + i, N);
				if (send_all(c, buf, N))
					_exit(1);
				/* ours again: scribble over it at once */
				memset(buf, 'x', N);
			}
			_exit(0);
		}
		close(c);
		if (late)
			sleep(2);	/* the sends complete by read-ahead */
		for (i = 0; i < ROUNDS; i++) {
			ssize_t r = recv_all(s, got, N, N);
			size_t k = 0;

			while (r == N && k < N && got[k] == 'A' + i)
				k++;
			CHECK(r == N && k == N,
			      "%s reader, send %d: only what was sent (%zu of %d)",
			      late ? "late" : "waiting", i, k, N);
		}
		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "sender done");
		close(s);
	}
	return check_exit();
}

/* ---- MSG_ZEROCOPY ------------------------------------------------------ */

/* Read zerocopy completions; returns how many, with the range seen. */
static int zc_completions(int fd, int ms, uint32_t *lo, uint32_t *hi,
			  int *copied)
{
	struct pollfd p = { .fd = fd, .events = 0 };
	char ctl[256];
	int n = 0;

	while (poll(&p, 1, ms) > 0 && (p.revents & POLLERR)) {
		struct msghdr m = { .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		struct cmsghdr *cm;

		if (recvmsg(fd, &m, MSG_ERRQUEUE) < 0)
			break;
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			struct sock_extended_err *e = (void *)CMSG_DATA(cm);

			if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
				continue;
			*lo = e->ee_info;
			*hi = e->ee_data;
			*copied = !!(e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED);
			n++;
		}
		ms = 0;
	}
	return n;
}

static int run_msgzc(void)
{
	enum { N = 4 << 20 };
	int l = listener(port), c, s, one = 1, i, copied = -1, n;
	unsigned char *buf = malloc(N), *got = malloc(N);
	uint32_t lo = ~0u, hi = ~0u;
	ssize_t r;

	c = connector(port);
	s = accept_one(l);
	CHECK(!setsockopt(c, SOL_SDP, SDP_ZEROCOPY, &one, sizeof(one)),
	      "SDP_ZEROCOPY set");
	CHECK(!setsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) ||
	      errno == EOPNOTSUPP, "SO_ZEROCOPY: ok or EOPNOTSUPP (%s)",
	      errname(errno));
	i = 0;
	{
		socklen_t len = sizeof(i);

		getsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &i, &len);
		CHECK(i == 1, "SO_ZEROCOPY reads the flag (%d)", i);
	}
	/* a small receive buffer: read-ahead stops short of 4 MiB */
	i = 65536;
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &i, sizeof(i));

	memset(buf, 'z', N);
	r = send(c, buf, N, MSG_ZEROCOPY);
	CHECK(r == N, "send(4 MiB, MSG_ZEROCOPY) returns at once (%zd)", r);
	n = zc_completions(c, 1000, &lo, &hi, &copied);
	CHECK(n == 0, "no completion while the receiver has not read (%d)", n);
	r = recv_all(s, got, N, N);
	CHECK(r == N && got[0] == 'z' && got[N - 1] == 'z', "the receiver read it");
	n = zc_completions(c, 5000, &lo, &hi, &copied);
	CHECK(n == 1 && lo == 0 && hi == 0 && !copied,
	      "then the completion: [%u, %u], %s", lo, hi,
	      copied ? "copied" : "zero copy");

	r = send(c, buf, 100, MSG_ZEROCOPY);
	n = zc_completions(c, 5000, &lo, &hi, &copied);
	CHECK(r == 100 && n == 1 && lo == 1 && hi == 1 && copied,
	      "100 bytes: completion [%u, %u] at once, copied", lo, hi);
	recv_all(s, got, 100, 100);

	for (i = 0; i < 8; i++) {
		memset(buf + i * (N / 8), 'a' + i, N / 8);
		r = send(c, buf + i * (N / 8), N / 8, MSG_ZEROCOPY);
		CHECK(r == N / 8, "send %d of 8 in flight (%zd)", i, r);
	}
	r = recv_all(s, got, N, N);
	CHECK(r == N && got[0] == 'a' && got[N - 1] == 'h', "the receiver read all 8");
	lo = 0;
	hi = 0;
	n = 0;
	while (hi < 9 && zc_completions(c, 5000, &lo, &hi, &copied) > 0)
		n++;
	CHECK(hi == 9 && !copied, "completions up to send 9 (last range [%u, %u], %d notes)",
	      lo, hi, n);
	close(c);
	close(s);
	return check_exit();
}

/* ---- signals ---------------------------------------------------------- */

static void on_alarm(int sig)
{
	(void)sig;
}

static void signal_storm(void)
{
	struct sigaction act = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	sigaction(SIGALRM, &act, NULL);	/* no SA_RESTART */
	setitimer(ITIMER_REAL, &it, NULL);
}

static int run_interrupt(void)
{
	enum { N = 64 << 20, IO = 1 << 20 };
	int l = listener(port), c, s, st;
	unsigned char *buf = malloc(IO);
	uint64_t done = 0;
	pid_t pid;

	c = connector(port);
	s = accept_one(l);
	pid = fork();
	if (!pid) {
		uint64_t k;

		signal_storm();
		for (done = 0; done < N; done += IO) {
			for (k = 0; k < IO; k++)
				buf[k] = pat(done + k, 5);
			if (send_all(c, buf, IO))
				_exit(1);
		}
		_exit(0);
	}
	close(c);
	signal_storm();
	while (done < N) {
		ssize_t r = recv_all(s, buf, IO, IO);
		uint64_t k;

		if (r != IO)
			break;
		for (k = 0; k < IO && buf[k] == pat(done + k, 5); k++)
			;
		if (k != IO)
			break;
		done += IO;
	}
	CHECK(done == N, "64 MiB through a signal every ms, every byte right (%llu)",
	      (unsigned long long)done);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "the sender was not disturbed");
	close(s);
	return check_exit();
}

/* ---- killed peers ------------------------------------------------------ */

static int run_kill(void)
{
	enum { N = 64 << 20, IO = 1 << 20 };
	int l = listener(port), c, s, st, err = 0;
	unsigned char *buf = malloc(IO);
	uint64_t done = 0;
	pid_t pid;
	ssize_t r;

	memset(buf, 'k', IO);
	/* the receiver dies while the sender is in a ZCopy send */
	c = connector(port);
	s = accept_one(l);
	pid = fork();
	if (!pid) {
		close(c);
		for (;;)
			if (recv(s, buf, 4096, 0) <= 0)
				_exit(0);
	}
	close(s);
	for (done = 0; done < N && !err; done += IO) {
		if (done == 8 * IO)
			kill(pid, SIGKILL);
		err = send_all(c, buf, IO);
	}
	CHECK(err == ECONNRESET || err == EPIPE,
	      "receiver killed: the send fails (%s after %llu MiB)",
	      errname(err), (unsigned long long)(done >> 20));
	waitpid(pid, &st, 0);
	close(c);

	/* the sender dies in the middle of a ZCopy send */
	c = connector(port);
	s = accept_one(l);
	pid = fork();
	if (!pid) {
		unsigned char *big = malloc(N);

		close(s);
		memset(big, 'k', N);
		send_all(c, big, N);
		_exit(0);
	}
	close(c);
	r = recv_all(s, buf, IO, IO);
	kill(pid, SIGKILL);
	done = r > 0 ? r : 0;
	while ((r = recv(s, buf, IO, 0)) > 0)
		done += r;
	CHECK(done < N && (r == 0 || errno == ECONNRESET),
	      "sender killed: a prefix (%llu MiB), then %s",
	      (unsigned long long)(done >> 20), r ? errname(errno) : "EOF");
	waitpid(pid, &st, 0);
	close(s);
	close(l);
	return check_exit();
}

/* ---- closed while reading ahead ------------------------------------------ */

/* Wait up to a second until more than @n bytes are queued on @s (a
 * SrcAvail's bytes count once it has come).
 */
static void wait_inq(int s, int n)
{
	int i, q = 0;

	for (i = 0; i < 1000 && (ioctl(s, SIOCINQ, &q) || q <= n); i++)
		usleep(1000);
}

/* The receiver never reads: the module reads the SrcAvails ahead, and the
 * receiver closes at some point of that (unread data: a reset, as TCP).
 * The sender's blocking send must fail, and the module must survive the
 * read-ahead of a socket closed under it.  The first half of the rounds
 * close at a time swept from the start; the second half once a SrcAvail
 * has come (more queued than the receive buffer holds), a jiffy and more
 * later: its read-ahead is then under way (on a slow wire, surely).
 */
static int run_closeahead(void)
{
	enum { N = 8 << 20, ROUNDS = 20 };
	int l = listener(port), c, s, st, i, resets = 0, rcvbuf = 0;
	socklen_t len = sizeof(rcvbuf);
	unsigned char *buf = malloc(N);
	pid_t pid;

	memset(buf, 'c', N);
	for (i = 0; i < ROUNDS; i++) {
		c = connector(port);
		s = accept_one(l);
		pid = fork();
		if (!pid) {
			int err;

			close(s);
			err = send_all(c, buf, N);
			if (!err)	/* it returned what it advertised */
				err = send_all(c, buf, 1);
			if (err != ECONNRESET && err != EPIPE)
				printf("# send: %s\n", errname(err)), fflush(stdout);
			_exit(err == ECONNRESET || err == EPIPE ? 0 : 1);
		}
		close(c);
		if (i >= ROUNDS / 2) {
			getsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);
			wait_inq(s, rcvbuf);
			usleep(5000 + (i % 10) * 2000);
		} else {
			usleep((i % 10) * 3000);
		}
		close(s);
		waitpid(pid, &st, 0);
		resets += WIFEXITED(st) && !WEXITSTATUS(st);
	}
	CHECK(resets == ROUNDS,
	      "receiver closed during read-ahead: every send reset (%d of %d)",
	      resets, ROUNDS);
	close(l);
	return check_exit();
}

/* ---- unread SrcAvails after both DisConns -------------------------------- */

static int run_shutread(void)
{
	enum { N = 8 << 20 };
	int l = listener(port), c = connector(port), s = accept_one(l), one = 1;
	unsigned char *buf = malloc(N), *got = malloc(N + 1);
	ssize_t r, n;
	uint32_t i;

	for (i = 0; i < N; i++)
		buf[i] = pat(i, 5);
	shutdown(s, SHUT_WR);		/* the reader's DisConn goes first */
	usleep(200000);
	setsockopt(c, SOL_SDP, SDP_ZEROCOPY, &one, sizeof(one));
	r = send(c, buf, N, MSG_ZEROCOPY);
	close(c);			/* its DisConn, behind the SrcAvails */
	sleep(1);
	n = recv_all(s, got, N, 1 << 20);
	CHECK(r == N, "the sender's MSG_ZEROCOPY send took 8 MiB (%zd)", r);
	CHECK(n == N && first_bad(got, N, 5) == N,
	      "unread SrcAvails after both DisConns: all 8 MiB read (%zd%s)",
	      n, n < 0 ? ", an error" : "");
	r = recv(s, got, 1, 0);
	CHECK(r == 0, "then end of file (%s)", r ? errname(errno) : "eof");
	close(s);
	close(l);
	return check_exit();
}

/* ---- fork while the peer writes into our pinned buffer ------------------- */

struct reader {
	int fd;
	unsigned char *buf;
	ssize_t got;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;

	r->got = recv(r->fd, r->buf, 1 << 20, MSG_WAITALL);
	return NULL;
}

static int run_forkcow(void)
{
	enum { N = 1 << 20 };
	int l = listener(port), c = connector(port), s = accept_one(l);
	unsigned char *data = malloc(N);
	struct reader rd = { s, NULL, 0 };
	long long sink0 = sdp_stat_of("RxZcopySinkBytes");
	pthread_t t;
	pid_t pid;
	uint32_t i;

	rd.buf = mmap(NULL, N, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(rd.buf, 0x11, N);
	for (i = 0; i < N; i++)
		data[i] = pat(i, 21);
	pthread_create(&t, NULL, reader_fn, &rd);
	usleep(500000);			/* its SinkAvail is out */
	pid = fork();
	if (!pid) {
		usleep(2000000);
		_exit(0);
	}
	rd.buf[100] = 0x22;		/* the parent writes into the buffer */
	send_all(c, data, N);
	pthread_join(t, NULL);
	waitpid(pid, NULL, 0);
	CHECK(sdp_stat_of("RxZcopySinkBytes") - sink0 >= N,
	      "the peer wrote into the buffer (SinkAvail)");
	CHECK(rd.got == N && first_bad(rd.buf, N, 21) == N,
	      "after a fork() and a write, the reader has the peer's bytes (%zd, first bad byte %zu)",
	      rd.got, first_bad(rd.buf, N, 21));
	return check_exit();
}

/* ---- sendwait: a sender waiting for room must sleep ---------------------- */

struct sender {
	int fd;
	unsigned char *buf;
	size_t n;
	int err;
	volatile int done;
};

static void *sender_fn(void *arg)
{
	struct sender *s = arg;

	s->err = send_all(s->fd, s->buf, s->n);
	s->done = 1;
	return NULL;
}

static int run_sendwait(void)
{
	enum { N = 64 << 20, M = 1 << 20 };
	int l = listener(port), c = connector(port), s = accept_one(l);
	struct reader rd = { c, malloc(M), 0 };
	struct sender sd = { c, malloc(N), N, 0, 0 };
	unsigned char *in = malloc(N);
	pthread_t tr, ts;
	double cpu;
	uint32_t i;

	for (i = 0; i < N; i++)
		sd.buf[i] = pat(i, 31);
	pthread_create(&tr, NULL, reader_fn, &rd);
	usleep(500000);		/* its SinkAvail holds one registration */
	pthread_create(&ts, NULL, sender_fn, &sd);
	usleep(1000000);	/* the other registrations are taken */
	cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	usleep(3000000);
	cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	CHECK(!sd.done, "the sender still waits for the peer to read");
	CHECK(cpu < 1.0,
	      "while it waits for a registration it sleeps (%.2f s of CPU in 3 s)",
	      cpu);
	CHECK(recv_all(s, in, N, N) == N && first_bad(in, N, 31) == N,
	      "then the peer reads all it sent");
	pthread_join(ts, NULL);
	CHECK(!sd.err, "and the send succeeds (%s)", errname(sd.err));
	memset(in, 7, M);
	send_all(s, in, M);
	pthread_join(tr, NULL);
	CHECK(rd.got == M, "the waiting reader gets its bytes (%zd)", rd.got);
	return check_exit();
}

/* ---- blast, for the kill tests -------------------------------------------- */

static int run_blast(int recv_side, size_t size)
{
	unsigned char *buf = calloc(1, size);
	int fd, err = 0;
	ssize_t r;

	if (recv_side) {
		int l = listener(port);

		printf("ready\n");	/* listening */
		fflush(stdout);
		fd = accept_one(l);
		close(l);
	} else {
		fd = connector(port);
		printf("ready\n");
		fflush(stdout);
	}
	alarm(0);
	for (;;) {
		r = recv_side ? recv(fd, buf, size, 0) :
				send(fd, buf, size, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r ? errno : 0;
			break;
		}
	}
	printf("end: %s\n", err ? errname(err) : "end of file");
	return 0;
}

/* ---- holdsend (sdp_evil's stale-key cases) ------------------------------ */

static int run_holdsend(const char *mode)
{
	enum { N = 256 << 10 };	/* one SrcAvail */
	int l = listener(port), c1, c2, one = 1;
	unsigned char *buf = malloc(N);
	struct linger lg = { 1, 0 };
	char line[64];
	uint32_t i;

	for (i = 0; i < N; i++)
		buf[i] = pat(i, 9);
	printf("listening\n");
	fflush(stdout);
	c1 = accept_one(l);
	c2 = accept_one(l);
	if (!strcmp(mode, "block")) {
		printf("send: %s\n", errname(send_all(c1, buf, N)));
		fflush(stdout);
		send(c1, "done", 4, MSG_NOSIGNAL);
	} else {
		setsockopt(c1, SOL_SDP, SDP_ZEROCOPY, &one, sizeof(one));
		printf("send: %zd\n", send(c1, buf, N, MSG_ZEROCOPY));
		fflush(stdout);
		if (fgets(line, sizeof(line), stdin)) {
			setsockopt(c1, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			close(c1);
			printf("closed\n");
			fflush(stdout);
		}
	}
	while (fgets(line, sizeof(line), stdin))
		;
	close(c2);
	return 0;
}

/* The modes that are one sender and one receiver (run_pair()). */
static const struct pair_mode {
	const char *name;
	int both, server;
	int (*send_fn)(int fd);
	void (*recv_fn)(int fd);
} pair_modes[] = {
	{ "sizes", 1, 0, sizes_send, sizes_recv },
	{ "sizes-server", 0, 1, sizes_send, sizes_recv },
	{ "sizes-client", 0, 0, sizes_send, sizes_recv },
	{ "sink", 1, 0, sink_send, sink_recv },
	{ "sink-nb", 1, 0, sink_send_nb, sink_recv },
	{ "sink-server", 0, 1, sink_send, sink_recv },
	{ "sink-client", 0, 0, sink_send, sink_recv },
	{ "sendfile", 1, 0, sendfile_send, sendfile_recv },
	{ "sendfile-copy", 1, 0, sendfile_send, sendfile_recv },
	{ "sendfile-threads", 1, 0, sendfile_threads_send, sendfile_threads_recv },
	{ "sendfile-server", 0, 1, sendfile_send, sendfile_recv },
	{ "sendfile-client", 0, 0, sendfile_send, sendfile_recv },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 4) {
		fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
		return 2;
	}
	addr = argv[2];
	port = atoi(argv[3]);
	alarm(600);
	if (getenv("SDP_ZC_FAMILY") && !strcmp(getenv("SDP_ZC_FAMILY"), "tcp"))
		family = AF_INET;
	sf_copy = !strcmp(argv[1], "sendfile-copy");
	for (i = 0; i < sizeof(pair_modes) / sizeof(pair_modes[0]); i++) {
		const struct pair_mode *m = &pair_modes[i];

		if (!strcmp(argv[1], m->name))
			return run_pair(m->both, m->server, m->send_fn,
					m->recv_fn);
	}
	if (!strcmp(argv[1], "overwrite"))
		return run_overwrite();
	if (!strcmp(argv[1], "sendfile-hold"))
		return run_sendfile_hold();
	if (!strcmp(argv[1], "sendfile-shutdown"))
		return run_sendfile_shutdown();
	if (!strcmp(argv[1], "holdrecv"))
		return run_holdrecv();
	if (!strcmp(argv[1], "msgzc"))
		return run_msgzc();
	if (!strcmp(argv[1], "interrupt"))
		return run_interrupt();
	if (!strcmp(argv[1], "kill"))
		return run_kill();
	if (!strcmp(argv[1], "closeahead"))
		return run_closeahead();
	if (!strcmp(argv[1], "shutread"))
		return run_shutread();
	if (!strcmp(argv[1], "sendwait"))
		return run_sendwait();
	if (!strcmp(argv[1], "forkcow"))
		return run_forkcow();
	if (!strcmp(argv[1], "blast-recv") && argc == 5)
		return run_blast(1, strtoul(argv[4], NULL, 0));
	if (!strcmp(argv[1], "blast-send") && argc == 5)
		return run_blast(0, strtoul(argv[4], NULL, 0));
	if (!strcmp(argv[1], "holdsend") && argc == 5)
		return run_holdsend(argv[4]);
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
