// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: AZ-SDP, asynchronous zero copy for blocking sends (opt-in:
 * LIBSDP_ASYNC=1, or a rule's "async"; sdp(7), "AZ-SDP").
 *
 * A blocking send of a buffer whose page-aligned middle is at least
 * LIBSDP_ASYNC_MIN bytes, on an SDP socket, goes so: the middle's pages
 * are write-protected through a userfaultfd of libsdp's, then sent with an
 * SDP_AZ_SEND control message naming them; the module offers them to the
 * peer and the call returns without waiting for the peer to read them.
 * The module's channel (/dev/sdp_az) later says the pages are released,
 * and the protection is lifted.  Meanwhile any write into them - the
 * program's stores, a read() into them, O_DIRECT, another thread - waits
 * in its page fault, so that the peer reads the bytes as they were at the
 * call, as TCP's copy would have kept them.
 *
 * Objects: one op per such send in flight (az_ops[], a fixed table: the
 * monitor must not allocate), with the ranges it protects, which move
 * when the program mremap()s them (UFFD_EVENT_REMAP).  A page is
 * protected while any op covers it.  The monitor thread reads the
 * channel's records and the userfaultfd's messages: a record ends an op
 * and unprotects the pages no other op covers; a fault on a page no op
 * covers (a race with an unprotect) unprotects it again, which wakes the
 * writer.
 *
 * Locking: az_mu guards the table and every protect/unprotect, taken with
 * signals blocked (a handler may send); never held across a send.  The
 * monitor takes it too, and otherwise blocks only in poll().  az_start_mu
 * makes the start once; fork() holds both (after libsdp's own lock).
 *
 * Needs: a userfaultfd that handles faults of the kernel's own writes,
 * that is CAP_SYS_PTRACE, vm.unprivileged_userfaultfd=1 or access to
 * /dev/userfaultfd (a group the site grants it to); without one, and
 * without the module's /dev/sdp_az, every send stays synchronous (logged
 * once).  A user-mode-only userfaultfd is never used: a read() into a
 * protected page would fail with EFAULT instead of waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sdp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "async.h"
#include "log.h"
#include "real.h"

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW	_IO(0xAA, 0x00)
#endif

#define AZ_OPS		256	/* sends in flight, process-wide */
#define AZ_EXTS		4	/* pieces an op's range may be moved in */
#define AZ_FD_MIN	512	/* libsdp's descriptors sit at or above */

struct az_ext {
	uintptr_t addr;
	size_t len;
};

struct az_op {
	uint64_t cookie;	/* 0: free */
	int fd;			/* the socket it went on */
	bool faulted;		/* a write waited for it */
	int next;		/* extents used */
	struct az_ext ext[AZ_EXTS];
};

/* The paper's fallback, made adaptive: a socket whose program keeps
 * writing into its buffers in flight (more than one send in AZ_FAULTY
 * waited for) sends synchronously for the next AZ_SYNC_RUN sends, then
 * tries again.  By descriptor number (modulo the table: a collision
 * only mixes two sockets' figures).
 */
#define AZ_WINDOW	64
#define AZ_FAULTY	4
#define AZ_SYNC_RUN	512
#define AZ_FDS		1024

struct az_fdstat {
	unsigned int sends, faults, sync_left;
};

enum az_state { AZ_UNTRIED, AZ_ON, AZ_FAILED };

bool sdp_az_wanted;		/* LIBSDP_ASYNC or a rule: try it */
bool sdp_az_env;		/* LIBSDP_ASYNC: every SDP socket */
bool sdp_az_noprotect;		/* LIBSDP_ASYNC_NOPROTECT: tests only */
size_t sdp_az_min = 262144;	/* LIBSDP_ASYNC_MIN */

static pthread_mutex_t az_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t az_start_mu = PTHREAD_MUTEX_INITIALIZER;
static enum az_state az_state;
static int az_uffd = -1, az_chan = -1;
static struct az_op az_ops[AZ_OPS];
static uint64_t az_cookie;
static size_t az_page;
static unsigned long az_stale;
static struct az_fdstat az_fds[AZ_FDS];
#define AZ_YIELDED	32
static struct az_ext az_yielded[AZ_YIELDED];	/* the program's uffd's */
static int az_nyielded;
static struct sdp_az_count az_count;	/* not reported yet */

static void az_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&az_mu);
}

static void az_unlock(const sigset_t *old)
{
	pthread_mutex_unlock(&az_mu);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void az_uffd_drain(void);

/* Under az_mu: write-protect (@wp) or release [addr, addr + len); 0 or
 * an errno.  The kernel refuses either (EAGAIN) while an mremap()'s event
 * is unread: a release must not fail so, or a writer waiting on those
 * pages would wait for ever, so it reads the events and tries again.
 */
static int az_protect(uintptr_t addr, size_t len, bool wp)
{
	struct uffdio_writeprotect w = {
		.range = { .start = addr, .len = len },
		.mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};
	static int depth;
	int i, err = 0;

	for (i = 0; i < 1000; i++) {
		if (!sdp_real.ioctl(az_uffd, UFFDIO_WRITEPROTECT, &w))
			return 0;
		err = errno;
		if (err != EAGAIN || wp || depth)
			break;
		depth++;
		az_uffd_drain();
		depth--;
	}
	if (!wp && err != ENOENT)	/* (unmapped since: nothing to do) */
		sdp_log(SDP_LOG_ERR, "async: cannot unprotect %#lx+%zu: %s",
			(unsigned long)addr, len, strerror(err));
	return err;
}

/* Under az_mu: an op other than @skip that covers the page at @a. */
static struct az_op *az_covering_but(uintptr_t a, const struct az_op *skip)
{
	struct az_op *op;
	int i, j;

	for (i = 0; i < AZ_OPS; i++) {
		op = &az_ops[i];
		if (!op->cookie || op == skip)
			continue;
		for (j = 0; j < op->next; j++)
			if (a >= op->ext[j].addr &&
			    a < op->ext[j].addr + op->ext[j].len)
				return op;
	}
	return NULL;
}

static bool az_covered(uintptr_t a, const struct az_op *skip)
{
	return az_covering_but(a, skip);
}

static struct az_op *az_covering(uintptr_t a)
{
	return az_covering_but(a, NULL);
}

/* Under az_mu: @op is over; lift what no other op covers. */
static void az_op_end(struct az_op *op)
{
	uintptr_t a, run, end;
	int j;

	for (j = 0; j < op->next; j++) {
		end = op->ext[j].addr + op->ext[j].len;
		for (a = run = op->ext[j].addr; a < end; a += az_page) {
			if (!az_covered(a, op))
				continue;
			if (a > run)
				az_protect(run, a - run, false);
			run = a + az_page;
		}
		if (end > run)
			az_protect(run, end - run, false);
	}
	op->cookie = 0;
	op->next = 0;
}

static struct az_op *az_op_find(uint64_t cookie)
{
	int i;

	for (i = 0; i < AZ_OPS; i++)
		if (az_ops[i].cookie == cookie)
			return &az_ops[i];
	return NULL;
}

/* What only libsdp sees, into the module's counters (sdpstats). */
static void az_report(void)
{
	struct sdp_az_count c;
	sigset_t old;

	az_lock(&old);
	c = az_count;
	memset(&az_count, 0, sizeof(az_count));
	az_unlock(&old);
	if (c.faults || c.fault_syncs)
		sdp_real.ioctl(az_chan, SDP_AZ_IOC_COUNT, &c);
}

/* Under az_mu: may a send on @fd go asynchronously, by its faults? */
static bool az_fd_async(int fd)
{
	struct az_fdstat *st = &az_fds[fd % AZ_FDS];

	if (st->sync_left) {
		st->sync_left--;
		az_count.fault_syncs++;
		return false;
	}
	if (++st->sends >= AZ_WINDOW) {
		if (st->faults * AZ_FAULTY > st->sends)
			st->sync_left = AZ_SYNC_RUN;
		st->sends = 0;
		st->faults = 0;
	}
	return true;
}

/* Records the channel holds: each ends its op. */
static void az_reap(void)
{
	struct sdp_az_done recs[32];
	struct az_op *op;
	sigset_t old;
	ssize_t n;
	int i;

	while ((n = read(az_chan, recs, sizeof(recs))) > 0) {
		az_lock(&old);
		for (i = 0; i < n / (ssize_t)sizeof(recs[0]); i++) {
			op = az_op_find(recs[i].cookie);
			if (op)
				az_op_end(op);
		}
		az_unlock(&old);
		if (n < (ssize_t)sizeof(recs))
			break;
	}
	az_report();
}

/* Under az_mu: the program moved [from, from + len) to @to. */
static void az_remap(uintptr_t from, uintptr_t to, size_t len)
{
	struct az_ext *e, rest;
	struct az_op *op;
	uintptr_t lo, hi;
	int i, j;

	for (i = 0; i < AZ_OPS; i++) {
		op = &az_ops[i];
		for (j = 0; op->cookie && j < op->next; j++) {
			e = &op->ext[j];
			lo = e->addr > from ? e->addr : from;
			hi = e->addr + e->len < from + len ?
			     e->addr + e->len : from + len;
			if (lo >= hi)
				continue;
			/* the part before stays; the part moved and the
			 * part after become extents of their own
			 */
			rest.addr = hi;
			rest.len = e->addr + e->len - hi;
			if (lo > e->addr) {
				e->len = lo - e->addr;
				if (op->next == AZ_EXTS)
					goto full;
				e = &op->ext[op->next++];
			}
			e->addr = lo - from + to;
			e->len = hi - lo;
			if (rest.len) {
				if (op->next == AZ_EXTS)
					goto full;
				op->ext[op->next++] = rest;
			}
		}
	}
	return;
full:
	sdp_log(SDP_LOG_ERR, "async: a send's buffer moved in too many pieces");
}

/* Under az_mu: the userfaultfd's messages, all that are there. */
static void az_uffd_drain(void)
{
	struct uffd_msg msgs[16];
	struct az_op *op;
	uintptr_t a;
	ssize_t n;
	int i;

	while ((n = read(az_uffd, msgs, sizeof(msgs))) > 0) {
		for (i = 0; i < n / (ssize_t)sizeof(msgs[0]); i++) {
			if (msgs[i].event == UFFD_EVENT_REMAP) {
				az_remap(msgs[i].arg.remap.from,
					 msgs[i].arg.remap.to,
					 msgs[i].arg.remap.len);
				continue;
			}
			if (msgs[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			a = msgs[i].arg.pagefault.address & ~(az_page - 1);
			op = az_covering(a);
			if (!op) {
				az_stale++;	/* lifted already: wake it */
				az_protect(a, az_page, false);
			} else if (!op->faulted) {
				op->faulted = true;
				az_count.faults++;
				az_fds[op->fd % AZ_FDS].faults++;
			}
		}
	}
}

static void az_uffd_events(void)
{
	sigset_t old;

	az_lock(&old);
	az_uffd_drain();
	az_unlock(&old);
}

static void *az_monitor(void *arg)
{
	struct pollfd p[2] = {
		{ .events = POLLIN },
		{ .events = POLLIN },
	};

	(void)arg;
	for (;;) {
		/* moved by sdp_az_evict() at times */
		p[0].fd = __atomic_load_n(&az_uffd, __ATOMIC_ACQUIRE);
		p[1].fd = __atomic_load_n(&az_chan, __ATOMIC_ACQUIRE);
		if (sdp_real.poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents)
			az_uffd_events();
		if (p[1].revents)
			az_reap();
	}
	return NULL;
}

/* A descriptor of libsdp's own, moved out of the program's way. */
static int az_fd_aside(int fd)
{
	int nfd;

	if (fd < 0)
		return fd;
	nfd = sdp_real.fcntl(fd, F_DUPFD_CLOEXEC, AZ_FD_MIN);
	if (nfd >= 0) {
		sdp_real.close(fd);
		return nfd;
	}
	return fd;
}

static int az_uffd_open(void)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_EVENT_REMAP,
	};
	int fd, dev;

	fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == EPERM) {
		/* the group the site gave /dev/userfaultfd to */
		dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
		if (dev < 0)
			return -1;
		fd = sdp_real.ioctl(dev, USERFAULTFD_IOC_NEW,
				    O_CLOEXEC | O_NONBLOCK);
		sdp_real.close(dev);
	}
	if (fd < 0)
		return -1;
	if (sdp_real.ioctl(fd, UFFDIO_API, &api)) {
		sdp_real.close(fd);
		return -1;
	}
	return az_fd_aside(fd);
}

/* The userfaultfd, the channel, the monitor; 0 or an errno. */
static int az_start(void)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct sdp_az_attach at = { 0 };
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	void *probe;
	int err;

	az_page = sysconf(_SC_PAGESIZE);
	az_uffd = az_uffd_open();
	if (az_uffd < 0)
		return errno;
	az_chan = az_fd_aside(open("/dev/sdp_az", O_RDWR | O_CLOEXEC |
				   O_NONBLOCK));
	if (az_chan < 0)
		return errno;
	probe = mmap(NULL, az_page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED)
		return errno;
	reg.range.start = (uintptr_t)probe;
	reg.range.len = az_page;
	if (sdp_real.ioctl(az_uffd, UFFDIO_REGISTER, &reg))
		return errno;
	at.uffd = az_uffd;
	at.probe = (uintptr_t)probe;
	if (sdp_real.ioctl(az_chan, SDP_AZ_IOC_ATTACH, &at))
		return errno;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, az_monitor, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* Once per process (again in a child after fork()). */
static bool az_ready(void)
{
	int err;

	if (__atomic_load_n(&az_state, __ATOMIC_ACQUIRE) != AZ_UNTRIED)
		return az_state == AZ_ON;
	pthread_mutex_lock(&az_start_mu);
	if (az_state == AZ_UNTRIED) {
		err = az_start();
		if (err) {
			sdp_log(SDP_LOG_WARN,
				"async: off, sends stay synchronous: %s",
				strerror(err));
			if (az_uffd >= 0)
				sdp_real.close(az_uffd);
			if (az_chan >= 0)
				sdp_real.close(az_chan);
			az_uffd = -1;
			az_chan = -1;
		}
		__atomic_store_n(&az_state, err ? AZ_FAILED : AZ_ON,
				 __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&az_start_mu);
	return az_state == AZ_ON;
}

/* Under az_mu: does [addr, addr + len) touch what the program's own
 * userfaultfd took (sdp_az_yield()), or, with @ops, only an op in
 * flight?
 */
static bool az_overlaps(uintptr_t addr, size_t len, bool ops)
{
	const struct az_op *op;
	int i, j;

	for (i = 0; !ops && i < az_nyielded; i++)
		if (addr < az_yielded[i].addr + az_yielded[i].len &&
		    az_yielded[i].addr < addr + len)
			return true;
	for (i = 0; ops && i < AZ_OPS; i++) {
		op = &az_ops[i];
		for (j = 0; op->cookie && j < op->next; j++)
			if (addr < op->ext[j].addr + op->ext[j].len &&
			    op->ext[j].addr < addr + len)
				return true;
	}
	return false;
}

/* Is every mapping over [addr, addr + len) private anonymous memory
 * registered to our userfaultfd (registered now if it was not)?
 */
static bool az_vmas(uintptr_t addr, size_t len)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct sdp_az_vma v;
	uintptr_t at;

	if (az_overlaps(addr, len, false))	/* (it only grows) */
		return false;
	for (at = addr; at < addr + len; at = v.end) {
		memset(&v, 0, sizeof(v));
		v.addr = at;
		if (sdp_real.ioctl(az_chan, SDP_AZ_IOC_VMA, &v) ||
		    !(v.flags & SDP_AZ_VMA_ANON) ||
		    (v.flags & SDP_AZ_VMA_OTHER))
			return false;
		if (v.flags & SDP_AZ_VMA_OURS)
			continue;
		reg.range.start = v.start;
		reg.range.len = v.end - v.start;
		if (sdp_real.ioctl(az_uffd, UFFDIO_REGISTER, &reg))
			return false;
	}
	return true;
}

/* A new op over [addr, addr + len) for a send on @fd, protected; NULL:
 * send synchronously.
 */
static struct az_op *az_op_start(int fd, uintptr_t addr, size_t len)
{
	struct az_op *op = NULL;
	sigset_t old;
	int i;

	if (!az_vmas(addr, len))
		return NULL;
	az_lock(&old);
	for (i = 0; i < AZ_OPS && !op; i++)
		if (!az_ops[i].cookie)
			op = &az_ops[i];
	if (op && (az_overlaps(addr, len, false) || !az_fd_async(fd)))
		op = NULL;	/* (a mapping the program's own uffd took) */
	if (op && (sdp_az_noprotect || !az_protect(addr, len, true))) {
		op->cookie = ++az_cookie;
		op->fd = fd;
		op->faulted = false;
		op->ext[0].addr = addr;
		op->ext[0].len = len;
		op->next = 1;
	} else if (op) {
		op = NULL;	/* (EAGAIN: a remap's event unread) */
	}
	az_unlock(&old);
	return op;
}

/* Give the program the mapping [start, end) libsdp registered: no new
 * op there, then, once none is in flight there, unregister it.
 */
static void az_yield_vma(uintptr_t start, uintptr_t end)
{
	struct uffdio_range rg = { .start = start, .len = end - start };
	bool busy;
	sigset_t old;
	int i;

	az_lock(&old);
	if (az_nyielded < AZ_YIELDED)
		az_yielded[az_nyielded++] = (struct az_ext){ start, end - start };
	else
		sdp_log(SDP_LOG_ERR, "async: too many mappings handed back");
	for (i = 0; (busy = az_overlaps(start, end - start, true)) &&
	     i < 30000; i++) {
		az_unlock(&old);
		usleep(1000);
		az_reap();
		az_lock(&old);
	}
	if (!busy)
		sdp_real.ioctl(az_uffd, UFFDIO_UNREGISTER, &rg);
	az_unlock(&old);
}

void sdp_az_yield(int fd, const void *arg)
{
	const struct uffdio_register *r = arg;
	struct sdp_az_vma v;
	uintptr_t at;
	int err = errno;

	if (__atomic_load_n(&az_state, __ATOMIC_ACQUIRE) != AZ_ON ||
	    fd == az_uffd || !r)
		return;
	for (at = r->range.start; at < r->range.start + r->range.len;
	     at = v.end) {
		memset(&v, 0, sizeof(v));
		v.addr = at;
		if (sdp_real.ioctl(az_chan, SDP_AZ_IOC_VMA, &v))
			break;
		if (v.flags & SDP_AZ_VMA_OURS)
			az_yield_vma(v.start, v.end);
	}
	errno = err;
}

/* The send did not reach the module: no record will come. */
static void az_op_abort(struct az_op *op)
{
	sigset_t old;

	az_lock(&old);
	az_op_end(op);
	az_unlock(&old);
}

/* The segment of @iov worth protecting: its index, *@m0 and *@len. */
static int az_pick(const struct iovec *iov, int n, uintptr_t *m0, size_t *len)
{
	uintptr_t a, b;
	int i;

	for (i = 0; i < n; i++) {
		a = ((uintptr_t)iov[i].iov_base + az_page - 1) & ~(az_page - 1);
		b = ((uintptr_t)iov[i].iov_base + iov[i].iov_len) &
		    ~(az_page - 1);
		if (b > a && b - a >= sdp_az_min) {
			*m0 = a;
			*len = b - a;
			return i;
		}
	}
	return -1;
}

/* Bind @fd to our channel (a rule's "async"); harmless on TCP. */
void sdp_az_bind(int fd)
{
	if (az_ready())
		sdp_real.setsockopt(fd, SOL_SDP, SDP_ASYNC, &az_chan,
				    sizeof(az_chan));
}

/* SDP_ASYNC of @fd: 0 unbound, 1 ours, 2 another process's; -1 not SDP. */
static int az_bound(int fd)
{
	int bound = -1;
	socklen_t l = sizeof(bound);

	if (sdp_real.getsockopt(fd, SOL_SDP, SDP_ASYNC, &bound, &l))
		return -1;
	return bound;
}

/* accept()'s socket @fd: a listener bound in the parent of a forking
 * server binds what the worker accepts to the parent's channel: ours.
 */
int sdp_az_accepted(int fd)
{
	int err = errno;

	if (fd >= 0 && sdp_az_wanted && az_bound(fd) == 2)
		sdp_az_bind(fd);
	errno = err;
	return fd;
}

/* May a send with @flags on @fd go so?  With LIBSDP_ASYNC every SDP
 * socket is bound at its first such send; with rules only those the
 * rules bound.
 */
static bool az_socket_ok(int fd, int flags)
{
	int bound, fl;

	if (flags & (MSG_DONTWAIT | MSG_OOB | MSG_ZEROCOPY))
		return false;
	fl = sdp_real.fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK))
		return false;
	bound = az_bound(fd);
	if (bound == 1)
		return true;
	if (bound < 0 || !sdp_az_env || !az_ready())
		return false;
	return !sdp_real.setsockopt(fd, SOL_SDP, SDP_ASYNC, &az_chan,
				    sizeof(az_chan));
}

/**
 * sdp_az_sendmsg - a send that may go asynchronously
 * @fd: the socket
 * @msg: the program's send
 * @flags: its flags
 * @done: set if the send was made here (its result returned)
 *
 * Return: with @done set, sendmsg()'s result (errno set as it left it);
 * else 0, and the caller sends as it would have.
 */
ssize_t sdp_az_sendmsg(int fd, const struct msghdr *msg, int flags,
		       bool *done)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sdp_az_send))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov[66];
	struct sdp_az_send req;
	struct msghdr m = *msg;
	struct cmsghdr *c;
	struct az_op *op;
	uintptr_t base, m0;
	size_t len;
	ssize_t n;
	int i, k, e;

	*done = false;
	if (msg->msg_controllen || msg->msg_name || msg->msg_iovlen > 64)
		return 0;
	if (!az_page)
		az_page = sysconf(_SC_PAGESIZE);
	i = az_pick(msg->msg_iov, msg->msg_iovlen, &m0, &len);
	if (i < 0 || !az_socket_ok(fd, flags) || az_state != AZ_ON)
		return 0;
	req.addr = m0;
	req.len = len;
	op = az_op_start(fd, req.addr, req.len);
	if (!op)
		return 0;
	req.cookie = op->cookie;

	/* head, the protected middle, tail of segment i */
	memcpy(iov, msg->msg_iov, i * sizeof(iov[0]));
	base = (uintptr_t)msg->msg_iov[i].iov_base;
	k = i;
	if (req.addr > base)
		iov[k++] = (struct iovec){ (void *)base, req.addr - base };
	iov[k++] = (struct iovec){ (void *)req.addr, req.len };
	if (base + msg->msg_iov[i].iov_len > req.addr + req.len)
		iov[k++] = (struct iovec){ (void *)(req.addr + req.len),
			base + msg->msg_iov[i].iov_len - req.addr - req.len };
	memcpy(iov + k, msg->msg_iov + i + 1,
	       (msg->msg_iovlen - i - 1) * sizeof(iov[0]));
	m.msg_iov = iov;
	m.msg_iovlen = k + msg->msg_iovlen - i - 1;
	m.msg_control = ctl.buf;
	m.msg_controllen = sizeof(ctl.buf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SDP;
	c->cmsg_type = SDP_AZ_SEND;
	c->cmsg_len = CMSG_LEN(sizeof(req));
	memcpy(CMSG_DATA(c), &req, sizeof(req));

	n = sdp_real.sendmsg(fd, &m, flags);
	e = errno;
	if (n < 0 && (e == EINVAL || e == ENOBUFS)) {
		/* the module took no op: send as it was */
		az_op_abort(op);
		return 0;
	}
	az_reap();	/* what is over already, without the monitor */
	*done = true;
	errno = e;
	return n;
}

/* fork() with neither lock held by another thread: the child could
 * never take it.  (Order: sdp_lock(), az_start_mu, az_mu.)
 */
void sdp_az_fork_prepare(void)
{
	pthread_mutex_lock(&az_start_mu);
	pthread_mutex_lock(&az_mu);
}

void sdp_az_fork_parent(void)
{
	pthread_mutex_unlock(&az_mu);
	pthread_mutex_unlock(&az_start_mu);
}

/* fork(): the child's copies of the pages are its own and unprotected,
 * but the userfaultfd and the channel still act on the parent's memory.
 * The monitor did not come along; a child that sends so starts its own.
 */
void sdp_az_forked(void)
{
	if (az_uffd >= 0)
		syscall(SYS_close, az_uffd);
	if (az_chan >= 0)
		syscall(SYS_close, az_chan);
	az_uffd = -1;
	az_chan = -1;
	memset(az_ops, 0, sizeof(az_ops));
	memset(az_fds, 0, sizeof(az_fds));
	memset(&az_count, 0, sizeof(az_count));
	az_state = AZ_UNTRIED;
	pthread_mutex_unlock(&az_mu);
	pthread_mutex_unlock(&az_start_mu);
}

/* Is @fd one of libsdp's own (the program never opened it)? */
bool sdp_az_fd(int fd)
{
	return fd >= 0 && (fd == az_uffd || fd == az_chan);
}

/* dup2()/dup3() are about to take @fd, ours: move it to another number. */
int sdp_az_evict(int fd)
{
	int nfd = sdp_real.fcntl(fd, F_DUPFD_CLOEXEC, AZ_FD_MIN);
	int *ours = fd == az_uffd ? &az_uffd : &az_chan;

	if (nfd < 0)
		return -errno;
	__atomic_store_n(ours, nfd, __ATOMIC_RELEASE);
	return 0;	/* dup2() closes the old number */
}

/* close_range() around our descriptors. */
int sdp_az_close_range(unsigned int first, unsigned int last, int flags)
{
	unsigned int keep[2], at = first;
	int i, err = 0;

	keep[0] = az_uffd < az_chan ? az_uffd : az_chan;
	keep[1] = az_uffd < az_chan ? az_chan : az_uffd;
	for (i = 0; i < 2 && !err; i++) {
		if ((int)keep[i] < 0 || keep[i] < at || keep[i] > last)
			continue;
		if (keep[i] > at)
			err = sdp_real.close_range(at, keep[i] - 1, flags);
		at = keep[i] + 1;
	}
	if (!err && at <= last)
		err = sdp_real.close_range(at, last, flags);
	return err;
}
