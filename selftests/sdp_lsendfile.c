// SPDX-License-Identifier: GPL-2.0
/*
 * Pages by reference on one host - sendfile(), splice(), MSG_ZEROCOPY -
 * every byte checked, the same program over TCP loopback and over SDP's
 * local transport (where the pages go by reference: sdp_local_page.c):
 *
 *   sdp_lsendfile tcp|sdp PORT [MODE...]
 *
 * MODEs (all by default):
 *   sizes     a pipe's 64 KiB spliced with SPLICE_F_MORE and nothing after
 *             it (the reader must still get it), then sendfile() of 1 B to
 *             64 MiB at odd offsets, blocking and non-blocking, on one
 *             connection; over SDP every byte of the files by reference
 *             (LocalPageBytes)
 *   rewrite   a file sent but not yet read is written over: the reader
 *             reads the pages as they are when it reads them
 *   truncate  ... truncated to nothing: the reader reads them as they were
 *             (the references keep them), no error
 *   hold      a reader that never reads: non-blocking sendfile() ends in
 *             EAGAIN with the pages held within the window (TCP's most,
 *             tcp_rmem[2] + tcp_wmem[2]); they go when the reader closes,
 *             unread, after the sender's reset (close with SO_LINGER
 *             {1, 0}) or before the sender's close
 *   zerocopy  send(MSG_ZEROCOPY) of 8 x 256 KiB to a reader that has not
 *             read: over SDP no completion comes until it reads, then all
 *             eight, zero copy (TCP loopback copies them early: its
 *             completions say so); again, and the reader closes unread:
 *             the completions come
 *
 * TCP's answers are the reference: run it first; SDP must give the same.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/sdp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

#define FILE_LEN	((64 << 20) + 8192)
#define WIN		(4 << 20)	/* SO_RCVBUF and SO_SNDBUF, rewrite */

static int family, port;
static bool sdp;

static unsigned char pat(size_t pos, unsigned int seed)
{
	return (unsigned char)((pos * 2654435761u + seed * 40503u) >> 7);
}

static int sock_new(void)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0) {
		perror("socket");
		exit(KSFT_FAIL);
	}
	return fd;
}

/* A connected pair on 127.0.0.1: *@c the client, the accepted one
 * returned; @rcvbuf: the accepted one's SO_RCVBUF (set on the listener),
 * 0 for the default.
 */
static int pair(int *c, int rcvbuf)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port++),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int l = sock_new(), one = 1, s;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (rcvbuf)
		setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(l, (void *)&a, sizeof(a)) || listen(l, 1)) {
		perror("bind/listen");
		exit(KSFT_FAIL);
	}
	*c = sock_new();
	if (rcvbuf)
		setsockopt(*c, SOL_SOCKET, SO_SNDBUF, &rcvbuf, sizeof(rcvbuf));
	if (connect(*c, (void *)&a, sizeof(a))) {
		perror("connect");
		exit(KSFT_FAIL);
	}
	s = accept(l, NULL, NULL);
	if (s < 0) {
		perror("accept");
		exit(KSFT_FAIL);
	}
	close(l);
	return s;
}

/* A file of @len bytes of pattern @seed, unlinked. */
static int pat_file(size_t len, unsigned int seed)
{
	char path[] = "/tmp/sdp_lsendfile.XXXXXX";
	size_t chunk = 1 << 20, i, at;
	unsigned char *buf = malloc(chunk);
	int f = mkstemp(path);

	if (f < 0 || !buf) {
		perror("mkstemp");
		exit(KSFT_FAIL);
	}
	unlink(path);
	for (at = 0; at < len; at += chunk) {
		size_t n = len - at < chunk ? len - at : chunk;

		for (i = 0; i < n; i++)
			buf[i] = pat(at + i, seed);
		if (pwrite(f, buf, n, at) != (ssize_t)n) {
			perror("pwrite");
			exit(KSFT_FAIL);
		}
	}
	free(buf);
	return f;
}

/* ---- sizes: 1 B to 64 MiB at odd offsets --------------------------- */

#define PIPE_LEN	65536
#define PIPE_SEED	9
#define FILE_SEED	7

static const struct part {
	off_t off;
	size_t len;
	bool nb;	/* non-blocking, poll() between */
	bool pipe;	/* splice() from a pipe, SPLICE_F_MORE */
} parts[] = {
	{ .len = PIPE_LEN, .pipe = true },
	{ .off = 0, .len = 1 },
	{ .off = 1, .len = 3 },
	{ .off = 1, .len = 4095 },
	{ .off = 4095, .len = 4097 },
	{ .off = 12345, .len = 65537 },
	{ .off = 333, .len = (1 << 20) + 7, .nb = true },
	{ .off = 4097, .len = (16 << 20) + 1 },
	{ .off = 1, .len = 64 << 20 },
	{ .off = 8191, .len = (3 << 20) + 5, .nb = true },
};

#define NPARTS	(sizeof(parts) / sizeof(parts[0]))

struct sender {
	int fd, f, err;
	size_t by_ref;		/* of the files' bytes (SDP) */
};

static int send_pipe(int fd)
{
	static unsigned char buf[PIPE_LEN];
	size_t i, done = 0;
	int p[2];

	for (i = 0; i < PIPE_LEN; i++)
		buf[i] = pat(i, PIPE_SEED);
	if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, PIPE_LEN) < PIPE_LEN ||
	    write(p[1], buf, PIPE_LEN) != PIPE_LEN)
		return errno ? errno : EIO;
	while (done < PIPE_LEN) {
		ssize_t n = splice(p[0], NULL, fd, NULL, PIPE_LEN - done,
				   SPLICE_F_MORE);

		if (n <= 0)
			return n < 0 ? errno : EIO;
		done += n;
	}
	close(p[0]);
	close(p[1]);
	return 0;
}

static int send_file(int fd, int f, const struct part *p)
{
	off_t off = p->off, end = p->off + p->len;

	fcntl(fd, F_SETFL, p->nb ? O_NONBLOCK : 0);
	while (off < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t n = sendfile(fd, f, &off, end - off);

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

static void *sender(void *arg)
{
	struct sender *s = arg;
	long before = sdp_stat_of("LocalPageBytes");
	char ack;
	size_t i;

	for (i = 0; i < NPARTS && !s->err; i++) {
		if (!parts[i].pipe) {
			s->err = send_file(s->fd, s->f, &parts[i]);
			continue;
		}
		/* nothing follows until the reader has it all */
		s->err = send_pipe(s->fd);
		if (!s->err && recv(s->fd, &ack, 1, 0) != 1)
			s->err = ETIMEDOUT;
		before = sdp_stat_of("LocalPageBytes");
	}
	s->by_ref = sdp_stat_of("LocalPageBytes") - before;
	return NULL;
}

static void run_sizes(void)
{
	size_t got, i, bad, total = 0, files = 0, bufsz = 1 << 16;
	unsigned char *buf = malloc(bufsz);
	struct sender s = { .f = pat_file(FILE_LEN, FILE_SEED) };
	struct timeval tv = { .tv_sec = 20 };
	pthread_t t;
	int r;

	r = pair(&s.fd, 0);
	setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	pthread_create(&t, NULL, sender, &s);
	for (i = 0; i < NPARTS; i++) {
		const struct part *p = &parts[i];
		size_t at = 0;

		bad = 0;
		while (at < p->len) {
			size_t want = p->len - at < bufsz ? p->len - at : bufsz;
			ssize_t n = recv(r, buf, want, 0);

			if (n <= 0)
				break;
			for (got = 0; got < (size_t)n; got++)
				bad += buf[got] != (p->pipe ?
					pat(at + got, PIPE_SEED) :
					pat(p->off + at + got, FILE_SEED));
			at += n;
		}
		CHECK(at == p->len && !bad,
		      "%s %zu bytes from %lld%s: %zu read, %zu wrong",
		      p->pipe ? "splice(SPLICE_F_MORE)" : "sendfile()", p->len,
		      (long long)p->off, p->nb ? ", non-blocking" : "", at, bad);
		if (p->pipe)
			send(r, "k", 1, 0);
		else
			files += p->len;
		total += at;
	}
	pthread_join(t, NULL);
	CHECK(!s.err, "the sender: %s", errname(s.err));
	if (sdp)
		CHECK(s.by_ref == files,
		      "every byte of the files by reference (%zu of %zu)",
		      s.by_ref, files);
	close(s.fd);
	CHECK(recv(r, buf, 1, 0) == 0, "then EOF, %zu bytes in all", total);
	close(r);
	close(s.f);
	free(buf);
}

/* ---- rewrite, truncate: the pages as they are when read ---------------- */

#define SENT_LEN	(1 << 20)
#define NEW_SEED	11

/* Non-blocking sendfile() of up to @len bytes: what it took. */
static size_t send_nb(int fd, int f, size_t len)
{
	off_t off = 0;
	ssize_t n;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while ((size_t)off < len) {
		n = sendfile(fd, f, &off, len - off);
		if (n <= 0)
			break;
	}
	fcntl(fd, F_SETFL, 0);
	return off;
}

static void run_changed(bool truncate)
{
	const char *what = truncate ? "truncated" : "written over";
	unsigned char *buf = malloc(SENT_LEN);
	int f = pat_file(SENT_LEN, FILE_SEED), c, r;
	size_t sent, at = 0, old = 0, new = 0, other = 0, i;
	struct timeval tv = { .tv_sec = 10 };
	int g;

	r = pair(&c, WIN);
	setsockopt(r, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sent = send_nb(c, f, SENT_LEN);
	CHECK(sent >= SENT_LEN / 8, "%s: sendfile() took %zu bytes, unread",
	      what, sent);
	if (truncate) {
		CHECK(!ftruncate(f, 0), "then the file truncated to 0: %s",
		      errname(errno));
	} else {
		g = pat_file(SENT_LEN, NEW_SEED);
		CHECK(pread(g, buf, SENT_LEN, 0) == SENT_LEN &&
		      pwrite(f, buf, SENT_LEN, 0) == SENT_LEN,
		      "then the file written over");
		close(g);
	}
	close(c);
	while (at < sent) {
		ssize_t n = recv(r, buf + at, sent - at, 0);

		if (n <= 0)
			break;
		at += n;
	}
	for (i = 0; i < at; i++) {
		if (buf[i] == pat(i, FILE_SEED))
			old++;
		else if (buf[i] == pat(i, NEW_SEED))
			new++;
		else
			other++;
	}
	/* bytes equal in both patterns count as old */
	CHECK(at == sent && !other && (truncate ? !new : new + old == at &&
				       new > at / 2),
	      "%s: the reader reads the pages as %s (%zu read: %zu old, %zu new, %zu neither)",
	      what, truncate ? "they were" : "they are now", at, old, new,
	      other);
	CHECK(recv(r, buf, 1, 0) == 0, "%s: then EOF, no error", what);
	close(r);
	close(f);
	free(buf);
}

/* ---- hold: a reader that never reads ----------------------------------- */

static long refs_settled(void)
{
	long refs = -1;
	int i;

	for (i = 0; i < 100 && (refs = sdp_stat_of("ZcopyPageRefs")) != 0; i++)
		usleep(100000);
	return refs;
}

/* The third of net.ipv4.tcp_@what. */
static long tcp_mem_max(const char *what)
{
	char path[64];
	long v[3] = { 0, 0, 0 };
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/tcp_%s", what);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%ld %ld %ld", &v[0], &v[1], &v[2]) != 3)
		exit(KSFT_FAIL);
	fclose(f);
	return v[2];
}

static void run_hold(bool reset)
{
	int f = pat_file(16 << 20, FILE_SEED), c, r, idle = 0;
	struct linger lg = { 1, 0 };
	long refs, bound, before = sdp ? sdp_stat_of("ZcopyPageRefs") : 0;
	size_t taken = 0;
	off_t off = 0;
	ssize_t n;

	r = pair(&c, 0);
	fcntl(c, F_SETFL, O_NONBLOCK);
	while (idle < 10) {
		struct pollfd pfd = { .fd = c, .events = POLLOUT };

		n = sendfile(c, f, &off, (16 << 20) - off);
		if (n > 0) {
			taken += n;
			idle = 0;
			if (off == 16 << 20)
				off = 0;
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			idle++;
			poll(&pfd, 1, 100);
			continue;
		}
		break;
	}
	CHECK(idle == 10 && taken > 0,
	      "a reader that never reads: non-blocking sendfile() ends in EAGAIN (%zu bytes taken)",
	      taken);
	if (sdp) {
		/* the window: the reader's buffer and ours, as TCP's */
		refs = sdp_stat_of("ZcopyPageRefs") - before;
		bound = (tcp_mem_max("rmem") + tcp_mem_max("wmem")) / 4096 + 32;
		CHECK(refs > 0 && refs <= bound,
		      "pages held for it: %ld, within the window (%ld)",
		      refs, bound);
	}
	if (reset) {
		setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(c);
		usleep(100000);
	}
	close(r);	/* unread */
	if (sdp)
		CHECK((refs = refs_settled()) == 0,
		      "the reader closed unread%s: every page released (%ld held)",
		      reset ? " after the sender's reset" : "", refs);
	if (!reset)
		close(c);
	close(f);
}

/* ---- MSG_ZEROCOPY: completed when the reader has copied ------------------ */

#define ZC_SENDS	8
#define ZC_LEN		(256 << 10)

/* Read zerocopy completions until [0, @want - 1] is covered or @ms pass
 * with none; return how many sends they covered, *@copied if any said
 * the bytes were copied.
 */
static unsigned int zc_reap(int fd, int ms, unsigned int want, bool *copied)
{
	struct pollfd p = { .fd = fd, .events = 0 };
	unsigned int got = 0;
	char ctl[256];

	while (got < want && poll(&p, 1, ms) > 0 && (p.revents & POLLERR)) {
		struct msghdr m = { .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		struct cmsghdr *cm;

		if (recvmsg(fd, &m, MSG_ERRQUEUE) < 0)
			break;
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			struct sock_extended_err *e = (void *)CMSG_DATA(cm);

			if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
				continue;
			got += e->ee_data - e->ee_info + 1;
			if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				*copied = true;
		}
	}
	return got;
}

static void run_zerocopy(bool unread)
{
	unsigned char *buf = malloc(ZC_SENDS * ZC_LEN), *in = malloc(1 << 16);
	const char *how = unread ? "the reader closes unread" : "read";
	int c, r, one = 1, i, n = 0;
	size_t at = 0, bad = 0, total;
	bool copied = false;
	unsigned int got, early = 0;
	ssize_t w;

	r = pair(&c, 0);
	if (setsockopt(c, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) && sdp)
		setsockopt(c, SOL_SDP, SDP_ZEROCOPY, &one, sizeof(one));
	for (at = 0; at < ZC_SENDS * ZC_LEN; at++)
		buf[at] = pat(at, FILE_SEED);
	for (i = 0; i < ZC_SENDS; i++) {
		w = send(c, buf + i * ZC_LEN, ZC_LEN,
			 MSG_ZEROCOPY | MSG_DONTWAIT);
		if (w != ZC_LEN)
			break;
		n++;
	}
	total = (size_t)n * ZC_LEN;
	CHECK(n >= 2, "%s: %d sends of 256 KiB with MSG_ZEROCOPY taken whole",
	      how, n);
	if (sdp) {
		got = zc_reap(c, 300, n, &copied);
		CHECK(!got, "%s: no completion before the reader reads (%u)",
		      how, got);
	}
	if (unread) {
		/* as tcp_close(): what was unread is dropped by close(),
		 * its completions queued before close() returns (and so
		 * before the sender can see the reset)
		 */
		close(r);
		early = zc_reap(c, 0, n, &copied);
		CHECK(early == (unsigned int)n,
		      "%s: every completion queued when close() returns (%u of %d)",
		      how, early, n);
	} else {
		for (at = 0; at < total; ) {
			ssize_t k = recv(r, in, 1 << 16, 0);

			if (k <= 0)
				break;
			for (i = 0; i < k; i++)
				bad += in[i] != pat(at + i, FILE_SEED);
			at += k;
		}
		CHECK(at == total && !bad, "%s: all %zu bytes, %zu wrong",
		      how, at, bad);
	}
	got = early + zc_reap(c, 5000, n - early, &copied);
	CHECK(got == (unsigned int)n,
	      "%s: then a completion for each of the %d sends (%u), %s", how,
	      n, got, copied ? "copied" : "zero copy");
	if (sdp)
		CHECK(!copied, "%s: zero copy, not copied", how);
	close(c);
	if (!unread)
		close(r);
	free(buf);
	free(in);
}

int main(int argc, char **argv)
{
	bool all = argc < 4;
	int i;

	if (argc < 3) {
		fprintf(stderr,
			"usage: %s tcp|sdp PORT [sizes|rewrite|truncate|hold|zerocopy]...\n",
			argv[0]);
		return KSFT_FAIL;
	}
	sdp = !strcmp(argv[1], "sdp");
	family = sdp ? sdp_module_param("af_inet_sdp", 27) : AF_INET;
	port = atoi(argv[2]);
	for (i = all ? 2 : 3; i < argc || all; i++) {
		const char *m = all ? NULL : argv[i];

		if (all || !strcmp(m, "sizes"))
			run_sizes();
		if (all || !strcmp(m, "rewrite"))
			run_changed(false);
		if (all || !strcmp(m, "truncate"))
			run_changed(true);
		if (all || !strcmp(m, "hold")) {
			run_hold(true);
			run_hold(false);
		}
		if (all || !strcmp(m, "zerocopy")) {
			run_zerocopy(false);
			run_zerocopy(true);
		}
		if (all)
			break;
	}
	return check_exit();
}
