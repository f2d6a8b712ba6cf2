// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: the send calls, interposed for AZ-SDP only (async.c).
 *
 * send(), sendto() without an address, sendmsg(), write() and writev()
 * of at least LIBSDP_ASYNC_MIN bytes go through
 * sdp_az_sendmsg() when the program asked for AZ-SDP; everything else,
 * and everything when it did not, goes straight to the C library's
 * function, with nothing looked up but two integers.
 *
 * They never start libsdp's initialisation themselves (sdp_init()): it
 * may write (log.c, stdio), and a write() that waited for it there would
 * wait for itself.  Until it has run, AZ-SDP is off (sdp_az_wanted is
 * false) and the C library's function is found here.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "async.h"
#include "real.h"

#define SDP_EXPORT __attribute__((visibility("default")))

/* The C library's @name, before sdp_init() has resolved it. */
#define SDP_NEXT(name)							\
	(sdp_real.name ? sdp_real.name :				\
	 (__typeof__(sdp_real.name))dlsym(RTLD_NEXT, #name))

/* Worth a look: large, asked for (whether @fd is an SDP socket, even
 * one accept() made, which libsdp does not track, async.c asks).
 */
static bool sdp_az_maybe(int fd, size_t len)
{
	return sdp_az_wanted && len >= sdp_az_min && fd >= 0;
}

static ssize_t sdp_az_try(int fd, const struct iovec *iov, int n, int flags,
			  bool *done)
{
	struct msghdr m = {
		.msg_iov = (struct iovec *)iov,
		.msg_iovlen = n,
	};

	return sdp_az_sendmsg(fd, &m, flags, done);
}

static size_t sdp_iov_len(const struct iovec *iov, int n)
{
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

SDP_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct iovec iov = { (void *)buf, len };
	bool done = false;
	ssize_t n;

	if (sdp_az_maybe(fd, len)) {
		n = sdp_az_try(fd, &iov, 1, flags, &done);
		if (done)
			return n;
	}
	return SDP_NEXT(send)(fd, buf, len, flags);
}

SDP_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			  const struct sockaddr *addr, socklen_t alen)
{
	struct iovec iov = { (void *)buf, len };
	bool done = false;
	ssize_t n;

	if (!addr && sdp_az_maybe(fd, len)) {
		n = sdp_az_try(fd, &iov, 1, flags, &done);
		if (done)
			return n;
	}
	return SDP_NEXT(sendto)(fd, buf, len, flags, addr, alen);
}

SDP_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	bool done = false;
	ssize_t n;

	if (sdp_az_wanted && msg && msg->msg_iovlen <= 64 &&
	    sdp_az_maybe(fd, sdp_iov_len(msg->msg_iov, msg->msg_iovlen))) {
		n = sdp_az_sendmsg(fd, msg, flags, &done);
		if (done)
			return n;
	}
	return SDP_NEXT(sendmsg)(fd, msg, flags);
}

SDP_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	bool done = false;
	ssize_t n;

	if (sdp_az_maybe(fd, len)) {
		n = sdp_az_try(fd, &iov, 1, 0, &done);
		if (done)
			return n;
	}
	return SDP_NEXT(write)(fd, buf, len);
}

SDP_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	bool done = false;
	ssize_t r;

	if (sdp_az_wanted && n > 0 && n <= 64 &&
	    sdp_az_maybe(fd, sdp_iov_len(iov, n))) {
		r = sdp_az_try(fd, iov, n, 0, &done);
		if (done)
			return r;
	}
	return SDP_NEXT(writev)(fd, iov, n);
}
