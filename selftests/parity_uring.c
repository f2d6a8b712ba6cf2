// SPDX-License-Identifier: GPL-2.0
/*
 * The differential suite's io_uring cases (run by sdp_parity.c, through
 * Debian's liburing): what a program that drives its sockets by io_uring
 * observes, on TCP and on SDP.
 *
 *   uring_send_recv   SEND and RECV; a RECV waiting before the bytes come;
 *                     a RECV at the end (0); POLL_ADD for input
 *   uring_send_zc     SEND_ZC of 1 MiB (SDP: by SrcAvail) and of 100 bytes
 *                     (copied), SENDMSG_ZC of two iovecs, SEND_ZC from a
 *                     registered (fixed) buffer: each a result CQE with
 *                     IORING_CQE_F_MORE, then its notification
 *                     (IORING_CQE_F_NOTIF) once the bytes have gone; the
 *                     buffer rewritten only after the notification, every
 *                     byte right at the reader
 *   uring_accept      multishot ACCEPT of three connections, each one used
 *   uring_bufring     RECV with a provided buffer ring (IOSQE_BUFFER_SELECT)
 */
#include <liburing.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "parity.h"

/* The next CQE, waiting up to 10 s; NULL if none. */
static struct io_uring_cqe *cqe_next(struct io_uring *r)
{
	struct __kernel_timespec ts = { .tv_sec = 10 };
	struct io_uring_cqe *cqe;

	return io_uring_wait_cqe_timeout(r, &cqe, &ts) ? NULL : cqe;
}

/* The result of the CQE of @user_data (CQEs of others are dropped). */
static int cqe_res(struct io_uring *r, __u64 user_data, unsigned int *flags)
{
	struct io_uring_cqe *cqe;
	int res;

	while ((cqe = cqe_next(r))) {
		if (cqe->user_data != user_data) {
			io_uring_cqe_seen(r, cqe);
			continue;
		}
		res = cqe->res;
		if (flags)
			*flags = cqe->flags;
		io_uring_cqe_seen(r, cqe);
		return res;
	}
	return -ETIME;
}

static const char *ures(int res)
{
	static char s[4][64];
	static int i;

	i = (i + 1) % 4;
	if (res < 0)
		snprintf(s[i], sizeof(s[i]), "%s", errname(-res));
	else
		snprintf(s[i], sizeof(s[i]), "%d", res);
	return s[i];
}

static struct io_uring_sqe *sqe_get(struct io_uring *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);

	MUST(sqe);
	return sqe;
}

static void submit(struct io_uring *r, struct io_uring_sqe *sqe, __u64 ud)
{
	sqe->user_data = ud;
	MUST(io_uring_submit(r) == 1);
}

void case_uring_send_recv(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring r;
	char buf[64] = "";
	int c, s, res;

	pair_at(0, &c, &s);
	MUST(!io_uring_queue_init(8, &r, 0));
	sqe = sqe_get(&r);
	io_uring_prep_send(sqe, c, "hello", 5, 0);
	submit(&r, sqe, 1);
	OBS("SEND", "%s", ures(cqe_res(&r, 1, NULL)));
	sqe = sqe_get(&r);
	io_uring_prep_recv(sqe, s, buf, sizeof(buf), 0);
	submit(&r, sqe, 2);
	res = cqe_res(&r, 2, NULL);
	OBS("RECV", "%s:%.*s", ures(res), res > 0 ? res : 0, buf);
	/* a RECV posted before the bytes come */
	sqe = sqe_get(&r);
	io_uring_prep_recv(sqe, s, buf, sizeof(buf), 0);
	submit(&r, sqe, 3);
	msleep(100);
	MUST(send(c, "abc", 3, 0) == 3);
	res = cqe_res(&r, 3, NULL);
	OBS("RECV waiting", "%s:%.*s", ures(res), res > 0 ? res : 0, buf);
	/* POLL_ADD, then the bytes */
	sqe = sqe_get(&r);
	io_uring_prep_poll_add(sqe, s, POLLIN);
	submit(&r, sqe, 4);
	msleep(100);
	MUST(send(c, "z", 1, 0) == 1);
	res = cqe_res(&r, 4, NULL);
	OBS("POLL_ADD POLLIN", "%s", res == -ETIME ? "none" :
	    (res & POLLIN) ? "IN" : ures(res));
	MUST(recv(s, buf, 1, 0) == 1);
	shutdown(c, SHUT_WR);
	sqe = sqe_get(&r);
	io_uring_prep_recv(sqe, s, buf, sizeof(buf), 0);
	submit(&r, sqe, 5);
	OBS("RECV at the end", "%s", ures(cqe_res(&r, 5, NULL)));
	io_uring_queue_exit(&r);
	close(c);
	close(s);
}

/* ---- zero copy --------------------------------------------------------- */

enum { ZC_BIG = 1 << 20, ZC_SMALL = 100 };

struct zc_rd {
	int fd;
	long got, bad;
};

/* Reads until the end: every byte must be its offset's pattern (the
 * sender's buffers are rewritten to 'X' only after their notification).
 */
static void *zc_rd_run(void *arg)
{
	struct zc_rd *z = arg;
	static unsigned char b[1 << 16];
	ssize_t n, i;

	while ((n = recv(z->fd, b, sizeof(b), 0)) > 0) {
		for (i = 0; i < n; i++)
			if (b[i] != (unsigned char)('a' + (z->got + i) % 26))
				z->bad++;
		z->got += n;
	}
	return NULL;
}

static void pattern(unsigned char *p, size_t n, long at)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = 'a' + (at + i) % 26;
}

/* Waits for the send's result and its notification; reports both. */
static long zc_wait(struct io_uring *r, const char *what, __u64 ud)
{
	struct io_uring_cqe *cqe;
	bool more = false, notif = false, after = true;
	char step[96];
	int res = -ETIME;

	while ((!notif || res == -ETIME) && (cqe = cqe_next(r))) {
		if (cqe->user_data == ud && (cqe->flags & IORING_CQE_F_NOTIF)) {
			notif = true;
			after = res != -ETIME;
		} else if (cqe->user_data == ud) {
			res = cqe->res;
			more = cqe->flags & IORING_CQE_F_MORE;
		}
		io_uring_cqe_seen(r, cqe);
		if (res < 0 && res != -ETIME)
			break;
	}
	snprintf(step, sizeof(step), "%s: result", what);
	OBS(step, "%s", ures(res));
	snprintf(step, sizeof(step), "%s: IORING_CQE_F_MORE", what);
	OBS(step, "%s", yesno(more));
	snprintf(step, sizeof(step), "%s: notification, after the result", what);
	OBS(step, "%s", yesno(notif && after));
	return res > 0 ? res : 0;
}

void case_uring_send_zc(void)
{
	unsigned char *big = mmap(NULL, ZC_BIG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char small[ZC_SMALL], two[2][ZC_SMALL];
	struct iovec iov[2] = { { two[0], ZC_SMALL }, { two[1], ZC_SMALL } };
	struct iovec fixed = { big, ZC_BIG };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	struct zc_rd z = { 0 };
	struct io_uring_sqe *sqe;
	struct io_uring r;
	pthread_t t;
	long at = 0;
	int c;

	MUST(big != MAP_FAILED);
	pair_at(0, &c, &z.fd);
	MUST(!io_uring_queue_init(8, &r, 0));
	pthread_create(&t, NULL, zc_rd_run, &z);

	pattern(big, ZC_BIG, at);
	sqe = sqe_get(&r);
	io_uring_prep_send_zc(sqe, c, big, ZC_BIG, 0, 0);
	submit(&r, sqe, 1);
	at += zc_wait(&r, "SEND_ZC 1 MiB", 1);
	memset(big, 'X', ZC_BIG);	/* the kernel is done with it */

	pattern(small, ZC_SMALL, at);
	sqe = sqe_get(&r);
	io_uring_prep_send_zc(sqe, c, small, ZC_SMALL, 0, 0);
	submit(&r, sqe, 2);
	at += zc_wait(&r, "SEND_ZC 100 B", 2);
	memset(small, 'X', ZC_SMALL);

	pattern(two[0], ZC_SMALL, at);
	pattern(two[1], ZC_SMALL, at + ZC_SMALL);
	sqe = sqe_get(&r);
	io_uring_prep_sendmsg_zc(sqe, c, &m, 0);
	submit(&r, sqe, 3);
	at += zc_wait(&r, "SENDMSG_ZC 2 x 100 B", 3);
	memset(two, 'X', sizeof(two));

	MUST(!io_uring_register_buffers(&r, &fixed, 1));
	pattern(big, ZC_BIG, at);
	sqe = sqe_get(&r);
	io_uring_prep_send_zc_fixed(sqe, c, big, ZC_BIG, 0,
				    0, 0);
	submit(&r, sqe, 4);
	at += zc_wait(&r, "SEND_ZC fixed buffer 1 MiB", 4);
	memset(big, 'X', ZC_BIG);

	shutdown(c, SHUT_WR);
	pthread_join(t, NULL);
	OBS("the reader got every byte", "%s", yesno(z.got == at));
	OBS("every byte as it was at the call", "%s", yesno(!z.bad));
	io_uring_queue_exit(&r);
	munmap(big, ZC_BIG);
	close(c);
	close(z.fd);
}

/* ---- accept, provided buffers ------------------------------------------ */

void case_uring_accept(void)
{
	int l = listen_on(E.port, 8), c[3], a[3], n = 0, i, more = 0;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring r;
	char b;

	MUST(!io_uring_queue_init(8, &r, 0));
	sqe = sqe_get(&r);
	io_uring_prep_multishot_accept(sqe, l, NULL, NULL, 0);
	submit(&r, sqe, 1);
	for (i = 0; i < 3; i++)
		c[i] = connect_to(E.port);
	while (n < 3 && (cqe = cqe_next(&r))) {
		if (cqe->res >= 0)
			a[n++] = cqe->res;
		more += !!(cqe->flags & IORING_CQE_F_MORE);
		io_uring_cqe_seen(&r, cqe);
	}
	OBS("multishot ACCEPT: connections", "%d", n);
	OBS("each with IORING_CQE_F_MORE", "%s", yesno(more == 3));
	for (i = 0; i < n; i++) {
		MUST(send(c[i], &"0123"[i], 1, 0) == 1);
		OBS(i == 0 ? "accepted 1 reads" : i == 1 ? "accepted 2 reads" :
		    "accepted 3 reads", "%s", yesno(recv(a[i], &b, 1, 0) == 1 &&
						    b == "0123"[i]));
		close(a[i]);
	}
	for (i = 0; i < 3; i++)
		close(c[i]);
	io_uring_queue_exit(&r);
	close(l);
}

void case_uring_bufring(void)
{
	enum { NBUF = 4, BSZ = 64, BGID = 7 };
	static char bufs[NBUF][BSZ];
	struct io_uring_buf_reg reg = { .ring_entries = NBUF, .bgid = BGID };
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct io_uring r;
	unsigned int flags = 0;
	int c, s, i, res;

	pair_at(0, &c, &s);
	MUST(!io_uring_queue_init(8, &r, 0));
	br = mmap(NULL, NBUF * sizeof(struct io_uring_buf),
		  PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	MUST(br != MAP_FAILED);
	reg.ring_addr = (unsigned long)br;
	MUST(!io_uring_register_buf_ring(&r, &reg, 0));
	io_uring_buf_ring_init(br);
	for (i = 0; i < NBUF; i++)
		io_uring_buf_ring_add(br, bufs[i], BSZ, i,
				      io_uring_buf_ring_mask(NBUF), i);
	io_uring_buf_ring_advance(br, NBUF);

	MUST(send(c, "provided", 8, 0) == 8);
	sqe = sqe_get(&r);
	io_uring_prep_recv(sqe, s, NULL, BSZ, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	submit(&r, sqe, 1);
	res = cqe_res(&r, 1, &flags);
	OBS("RECV into a provided buffer", "%s:%.*s", ures(res),
	    res > 0 ? res : 0,
	    res > 0 && (flags & IORING_CQE_F_BUFFER) ?
	    bufs[flags >> IORING_CQE_BUFFER_SHIFT] : "");
	OBS("IORING_CQE_F_BUFFER", "%s", yesno(flags & IORING_CQE_F_BUFFER));
	io_uring_queue_exit(&r);
	close(c);
	close(s);
}
