// SPDX-License-Identifier: GPL-2.0
/*
 * Large blocking sends lent by reference on one host (sdp_local_lend.c):
 * the same program over TCP loopback and over SDP's local transport,
 * every byte checked, the sender writing over its buffer as soon as each
 * send returns (what it sent must be what is read):
 *
 *   sdp_llend tcp|sdp PORT [MODE...]
 *
 * MODEs (all by default):
 *   stream   blocking sends of 256 KiB to 3 MiB + 5 at odd buffer offsets,
 *            one of two iovecs, read in 4 KiB and 64 KiB pieces (and each
 *            piece checked before the next: a slow reader, whose loans are
 *            mostly taken back); with SDP_LLEND_LENT=1 in the environment
 *            (sdp_local_lend_us long), most bytes lent (LocalLendBytes)
 *   idle     the reader does not read for 2 s: each 1 MiB send returns
 *            within 1 s all the same, as on TCP, its bytes taken back
 *            (LocalLendReclaimed over SDP), and read intact later
 *   both     both ends send 1 MiB before either reads: both return
 *   kill     a sender waiting for its reader is killed: it dies at once
 *            and what it sent is read intact
 *   close    a reader closes unread while its sender waits: the send
 *            returns at once
 *
 * Run kill and close with sdp_local_lend_us set long (10 s): so that
 * over SDP the sender is still waiting for its reader when it is killed
 * or the reader closes; and stream so too, so that the reader copies
 * from lent pages.
 *
 * Buffers are mmap()ed without huge pages (MADV_NOHUGEPAGE): pages of a
 * huge page are copied, not lent.  TCP's answers are the reference.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
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

#include "check.h"

#define MIB		(1 << 20)
#define BUF_LEN		(4 * MIB)

static int family, port;
static bool sdp;

static unsigned char pat(size_t pos, unsigned int seed)
{
	return (unsigned char)((pos * 2654435761u + seed * 40503u) >> 7);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	perror(what);
	exit(KSFT_FAIL);
}

static unsigned char *buf_new(void)
{
	unsigned char *b = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED)
		fail("mmap");
	madvise(b, BUF_LEN, MADV_NOHUGEPAGE);
	return b;
}

static void fill(unsigned char *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = pat(i, seed);
}

/* A connected pair on 127.0.0.1: *@c the client, the accepted returned. */
static int pair(int *c)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port++),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int l = socket(family, SOCK_STREAM, 0), one = 1, win = BUF_LEN, s;

	if (l < 0)
		fail("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* room for what a test sends unread, on TCP as on SDP */
	setsockopt(l, SOL_SOCKET, SO_RCVBUF, &win, sizeof(win));
	setsockopt(l, SOL_SOCKET, SO_SNDBUF, &win, sizeof(win));
	if (bind(l, (void *)&a, sizeof(a)) || listen(l, 1))
		fail("bind/listen");
	*c = socket(family, SOCK_STREAM, 0);
	if (*c < 0)
		fail("socket");
	setsockopt(*c, SOL_SOCKET, SO_RCVBUF, &win, sizeof(win));
	setsockopt(*c, SOL_SOCKET, SO_SNDBUF, &win, sizeof(win));
	if (connect(*c, (void *)&a, sizeof(a)))
		fail("connect");
	s = accept(l, NULL, NULL);
	if (s < 0)
		fail("accept");
	close(l);
	return s;
}

/* Send @len bytes of pattern @seed from @b + @off, blocking; then write
 * over them.  Return: the send's result.
 */
static ssize_t send_over(int fd, unsigned char *b, size_t off, size_t len,
			 unsigned int seed, bool two)
{
	struct iovec iov[2] = {
		{ b + off, two ? len / 3 : len },
		{ b + off + len / 3, len - len / 3 },
	};
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = two ? 2 : 1 };
	size_t done = 0;
	ssize_t n = 0;

	fill(b + off, len, seed);
	if (two) {
		n = sendmsg(fd, &m, 0);
		done = n > 0 ? (size_t)n : 0;
	}
	while (done < len) {
		n = send(fd, b + off + done, len - done, 0);
		if (n <= 0)
			break;
		done += n;
	}
	memset(b + off, 0xee, len);	/* what was sent is gone */
	return n < 0 ? n : (ssize_t)done;
}

/* Read @len bytes in pieces of @piece and check them against @seed.
 * Return: bytes that matched in a row from the start.
 */
static size_t read_check(int fd, size_t len, unsigned int seed, size_t piece)
{
	unsigned char *b = malloc(64 << 10);
	size_t at = 0, i;
	ssize_t n;

	if (!b)
		fail("malloc");
	if (piece > 64 << 10)
		piece = 64 << 10;
	while (at < len) {
		n = recv(fd, b, piece < len - at ? piece : len - at, 0);
		if (n <= 0)
			break;
		for (i = 0; i < (size_t)n && b[i] == pat(at + i, seed); i++)
			;
		at += i;
		if (i < (size_t)n)
			break;
	}
	free(b);
	return at;
}

/* ---- stream ------------------------------------------------------- */

static const struct {
	size_t len, off;
	bool two;
	size_t piece;
} sends[] = {
	{ 256 << 10, 0, false, 64 << 10 },
	{ MIB + 13, 1, false, 4096 },
	{ 3 * MIB + 5, 4095, false, 64 << 10 },
	{ 2 * MIB, 777, true, 64 << 10 },
	{ 512 << 10, 4097, false, 4096 },
	{ MIB, 0, false, 64 << 10 },
};

#define NSENDS (sizeof(sends) / sizeof(sends[0]))
#define ROUNDS 4

static void *stream_reader(void *arg)
{
	int fd = *(int *)arg;
	size_t r, i, bad = 0;

	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < NSENDS; i++)
			if (read_check(fd, sends[i].len, r * 16 + i,
				       sends[i].piece) != sends[i].len)
				bad++;
	return (void *)bad;
}

static void run_stream(void)
{
	long lent = sdp_stat_of("LocalLendBytes");
	unsigned char *b = buf_new();
	size_t r, i, total = 0, ok = 0;
	pthread_t t;
	void *bad;
	int c, s = pair(&c);

	pthread_create(&t, NULL, stream_reader, &s);
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < NSENDS; i++) {
			total += sends[i].len;
			ok += send_over(c, b, sends[i].off, sends[i].len,
					r * 16 + i, sends[i].two) ==
			      (ssize_t)sends[i].len;
		}
	pthread_join(t, &bad);
	CHECK(ok == ROUNDS * NSENDS, "stream: %zu sends of %zu whole", ok,
	      ROUNDS * NSENDS);
	CHECK(!bad, "stream: every byte read is the byte sent (%zu sends bad)",
	      (size_t)bad);
	if (sdp && getenv("SDP_LLEND_LENT")) {
		lent = sdp_stat_of("LocalLendBytes") - lent;
		CHECK(lent >= (long)total / 4,
		      "stream: bytes lent (LocalLendBytes) %ld of %zu", lent,
		      total);
	}
	close(c);
	close(s);
	munmap(b, BUF_LEN);
}

/* ---- idle: the reader does not come -------------------------------- */

static void run_idle(void)
{
	long back = sdp_stat_of("LocalLendReclaimed");
	unsigned char *b = buf_new();
	int c, s = pair(&c), i, fast = 0, whole = 0, good = 0;
	double t;

	for (i = 0; i < 2; i++) {
		t = now();
		whole += send_over(c, b, 4096 * i + 3, MIB, 100 + i,
				   false) == MIB;
		fast += now() - t < 1.0;
	}
	CHECK(whole == 2 && fast == 2,
	      "idle: two 1 MiB sends to a reader that does not read return at once (%d whole, %d within 1 s)",
	      whole, fast);
	sleep(2);
	for (i = 0; i < 2; i++)
		good += read_check(s, MIB, 100 + i, 64 << 10) == MIB;
	CHECK(good == 2, "idle: read later, intact (%d of 2)", good);
	if (sdp) {
		back = sdp_stat_of("LocalLendReclaimed") - back;
		CHECK(back >= MIB,
		      "idle: the unread bytes were taken back (LocalLendReclaimed %ld)",
		      back);
	}
	close(c);
	close(s);
	munmap(b, BUF_LEN);
}

/* ---- both: each end sends before it reads --------------------------- */

struct end {
	int fd;
	unsigned int seed;
	ssize_t sent;
	size_t got;
};

static void *both_end(void *arg)
{
	struct end *e = arg;
	unsigned char *b = buf_new();

	e->sent = send_over(e->fd, b, 11, MIB, e->seed, false);
	e->got = read_check(e->fd, MIB, e->seed ^ 1, 64 << 10);
	munmap(b, BUF_LEN);
	return NULL;
}

static void run_both(void)
{
	struct end e[2];
	pthread_t t[2];
	int i;

	e[0].fd = pair(&e[1].fd);
	e[0].seed = 200;
	e[1].seed = 201;
	alarm(60);	/* a deadlock fails the run */
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, both_end, &e[i]);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	alarm(0);
	CHECK(e[0].sent == MIB && e[1].sent == MIB &&
	      e[0].got == MIB && e[1].got == MIB,
	      "both: each end sent 1 MiB before reading; both got all (%zd %zd, %zu %zu)",
	      e[0].sent, e[1].sent, e[0].got, e[1].got);
	close(e[0].fd);
	close(e[1].fd);
}

/* ---- kill: a waiting sender dies at once ---------------------------- */

static void run_kill(void)
{
	int c, s = pair(&c), st;
	double t;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		fail("fork");
	if (!pid) {
		unsigned char *b = buf_new();

		close(s);
		send_over(c, b, 0, MIB, 300, false);
		pause();
		_exit(0);
	}
	close(c);
	usleep(300 * 1000);
	t = now();
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && now() - t < 1.0,
	      "kill: the sender died at once (%.3f s)", now() - t);
	CHECK(read_check(s, MIB, 300, 64 << 10) == MIB,
	      "kill: what it sent is read intact");
	close(s);
}

/* ---- close: the reader goes unread ---------------------------------- */

static void *close_later(void *arg)
{
	usleep(300 * 1000);
	close(*(int *)arg);
	return NULL;
}

static void run_close(void)
{
	unsigned char *b = buf_new();
	int c, s = pair(&c);
	pthread_t t;
	ssize_t n;
	double at;

	pthread_create(&t, NULL, close_later, &s);
	at = now();
	n = send_over(c, b, 5, MIB, 400, false);
	at = now() - at;
	pthread_join(t, NULL);
	/* TCP's send may end short or in an error: the bytes are lost */
	CHECK(n != 0 && at < 1.5,
	      "close: the send to a reader that closed unread returned (%zd, %.3f s)",
	      n, at);
	close(c);
	munmap(b, BUF_LEN);
}

int main(int argc, char **argv)
{
	bool all = argc < 4;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: %s tcp|sdp PORT [stream|idle|both|kill|close]...\n",
			argv[0]);
		return KSFT_FAIL;
	}
	signal(SIGPIPE, SIG_IGN);
	sdp = !strcmp(argv[1], "sdp");
	family = sdp ? sdp_module_param("af_inet_sdp", 27) : AF_INET;
	port = atoi(argv[2]);
	for (i = all ? 2 : 3; i < argc || all; i++) {
		const char *m = all ? "" : argv[i];

		if (all || !strcmp(m, "stream"))
			run_stream();
		if (all || !strcmp(m, "idle"))
			run_idle();
		if (all || !strcmp(m, "both"))
			run_both();
		if (all || !strcmp(m, "kill"))
			run_kill();
		if (all || !strcmp(m, "close"))
			run_close();
		if (all)
			break;
	}
	return check_exit();
}
