// SPDX-License-Identifier: GPL-2.0
/*
 * A local sender's memory faulting, seen from the reader.
 *
 *   sdp_uffd PORT
 *	an SDP connection on 127.0.0.1 (the local transport); a child reads
 *	64 KiB, blocking, so that it offers its buffer for the single copy;
 *	then the parent sends 64 KiB from memory registered with userfaultfd
 *	and never served, so the copy stalls on the fault for ever; the
 *	reader is sent SIGKILL and must be gone within 5 s.  Prints
 *	"reader killed in N ms" or "reader still there" (exit 1).
 *   sdp_uffd PORT partial
 *	the parent sends 8 KiB of which the second page is not mapped: the
 *	bytes send() says it took must reach the reader at once, with no
 *	further send.  Prints "sent N, read M" (exit 1 unless M == N).
 *   sdp_uffd PORT lend
 *	the parent sends 1 MiB, blocking, lent to a reader (a child) that
 *	comes 200 ms later and reads into memory registered with userfaultfd
 *	and never served, so its copy stalls for ever on its own buffer: the
 *	send must still return, its pages taken back, within 5 s (the
 *	caller sets sdp_local_lend_us to 1 s).  Prints "sent N in M ms"
 *	(exit 1 unless all of it, in time).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sdp.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LEN	65536

static int cfd;
static void *region;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void *sender(void *arg)
{
	(void)arg;
	send(cfd, region, LEN, 0);	/* stalls on the unserved fault */
	return NULL;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A send that faults half way: what it took must not wait for more. */
static int partial(int c, int s)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timeval tv = { .tv_sec = 2 };
	static char buf[LEN];
	ssize_t n, m = 0, r;

	if (p == MAP_FAILED)
		die("mmap");
	memset(p, 'p', pg);
	munmap(p + pg, pg);
	n = send(c, p, 2 * pg, 0);
	if (n < 0)
		n = 0;	/* EFAULT with nothing taken: nothing to read */
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (m < n && (r = recv(s, buf + m, sizeof(buf) - m, 0)) > 0)
		m += r;
	printf("sent %zd, read %zd\n", n, m);
	return m == n && (n == 0 || !memcmp(buf, p, n)) ? 0 : 1;
}

/* memory registered with a userfaultfd nobody serves */
static void *unserved(size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	void *p;

	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		die("userfaultfd");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	reg.range.start = (unsigned long)p;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	return p;
}

/* A reader stalled on its own buffer's fault, lent pages in its queue:
 * the sender takes them back without it and returns.
 */
static int lend(int c, int s)
{
	size_t len = 1 << 20;
	char *src = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec t0;
	pid_t reader;
	ssize_t n;
	long ms;

	if (src == MAP_FAILED)
		die("mmap");
	madvise(src, len, MADV_NOHUGEPAGE);	/* lent, not copied */
	memset(src, 'l', len);
	reader = fork();
	if (!reader) {
		void *dst = unserved(len);

		usleep(200 * 1000);	/* after the send lent its pages */
		recv(s, dst, len, MSG_WAITALL);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = send(c, src, len, 0);
	ms = ms_since(&t0);
	printf("sent %zd in %ld ms\n", n, ms);
	fflush(stdout);
	kill(reader, SIGKILL);
	waitpid(reader, NULL, 0);
	return n == (ssize_t)len && ms < 5000 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timespec t0;
	pthread_t th;
	int ls, sfd, st;
	pid_t reader;

	if (argc != 2 && argc != 3)
		return 2;
	a.sin_port = htons(atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ls, 1))
		die("listen");
	cfd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	sfd = accept(ls, NULL, NULL);
	if (sfd < 0)
		die("accept");
	if (argc == 3 && !strcmp(argv[2], "lend"))
		return lend(cfd, sfd);
	if (argc == 3)
		return partial(cfd, sfd);

	reader = fork();
	if (!reader) {
		static char buf[LEN];

		recv(sfd, buf, LEN, 0);
		_exit(0);
	}
	usleep(300 * 1000);	/* the reader waits, its buffer offered */

	region = unserved(LEN);
	pthread_create(&th, NULL, sender, NULL);
	usleep(500 * 1000);	/* the sender stalls on its fault */

	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(reader, SIGKILL);
	while (ms_since(&t0) < 5000) {
		if (waitpid(reader, &st, WNOHANG) == reader) {
			printf("reader killed in %ld ms\n", ms_since(&t0));
			fflush(stdout);
			_exit(0);	/* the stalled sender goes with us */
		}
		usleep(10 * 1000);
	}
	printf("reader still there\n");
	fflush(stdout);
	_exit(1);
}
