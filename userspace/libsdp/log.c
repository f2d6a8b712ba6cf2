// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: logging; see log.h.
 *
 * The state is a few words read with relaxed atomics, so sdp_log() needs no
 * lock: each message is formatted on the stack and written with a single
 * write(2) (or syslog(3), which has its own lock).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

static int sdp_log_dest = SDP_LOG_TO_STDERR;
static int sdp_log_fd = -1;		/* the file, for SDP_LOG_TO_FILE */
static int sdp_log_min = SDP_LOG_MIN_LEVEL_DEFAULT;
static sdp_log_hook_t sdp_log_hook;

#define LOAD(v)		__atomic_load_n(&(v), __ATOMIC_ACQUIRE)
#define STORE(v, x)	__atomic_store_n(&(v), (x), __ATOMIC_RELEASE)

static int sdp_log_syslog_prio(int level)
{
	if (level >= SDP_LOG_ERR)
		return LOG_ERR;
	if (level >= SDP_LOG_WARN)
		return LOG_WARNING;
	if (level >= SDP_LOG_INFO)
		return LOG_INFO;
	return LOG_DEBUG;
}

static void sdp_log_write(int fd, const char *buf, size_t len)
{
	while (len) {
		/* not write(): libsdp's own (send.c) */
		ssize_t n = syscall(SYS_write, fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

void sdp_log(int level, const char *fmt, ...)
{
	char buf[SDP_LOG_MAX];
	int saved_errno = errno;
	sdp_log_hook_t hook;
	va_list ap;
	int pre, n, fd;
	size_t len;

	if (level < LOAD(sdp_log_min))
		return;

	pre = snprintf(buf, sizeof(buf), "libsdp[%d]: ", (int)getpid());
	if (pre < 0 || (size_t)pre >= sizeof(buf))
		pre = 0;
	va_start(ap, fmt);
	n = vsnprintf(buf + pre, sizeof(buf) - pre - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	len = pre + n;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;	/* cut; keep room for '\n' */
	buf[len] = '\0';

	hook = LOAD(sdp_log_hook);
	if (hook) {
		hook(level, buf + pre);
		goto out;
	}

	switch (LOAD(sdp_log_dest)) {
	case SDP_LOG_TO_SYSLOG:
		syslog(LOG_USER | sdp_log_syslog_prio(level), "%s", buf);
		goto out;
	case SDP_LOG_TO_FILE:
		fd = LOAD(sdp_log_fd);
		break;
	default:
		fd = STDERR_FILENO;
		break;
	}
	if (fd < 0 || fd == STDOUT_FILENO)
		goto out;
	buf[len++] = '\n';
	sdp_log_write(fd, buf, len);
out:
	errno = saved_errno;
}

/*
 * Open @path for appending on a descriptor above 2, so that it can never
 * be (or later become) stdout or stderr of the program.
 */
static int sdp_log_open(const char *path)
{
	int fd, hi;

	/* not through a link another user planted; readable by us alone:
	 * it may name the program's peers
	 */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY |
		  O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (fd > STDERR_FILENO)
		return fd;
	/* raw system calls: libsdp interposes fcntl() and close() */
	hi = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	if (hi < 0)
		hi = -errno;
	syscall(SYS_close, fd);
	return hi;
}

int sdp_log_set_destination(enum sdp_log_dest dest, const char *path)
{
	int saved_errno = errno;
	int fd = -1, old;

	switch (dest) {
	case SDP_LOG_TO_STDERR:
	case SDP_LOG_TO_SYSLOG:
		break;
	case SDP_LOG_TO_FILE:
		if (!path || !*path)
			return -EINVAL;
		fd = sdp_log_open(path);
		if (fd < 0) {
			errno = saved_errno;
			return fd;
		}
		break;
	default:
		return -EINVAL;
	}

	/* Publish the new file before the destination that uses it. */
	old = __atomic_exchange_n(&sdp_log_fd, fd, __ATOMIC_ACQ_REL);
	STORE(sdp_log_dest, (int)dest);
	if (old >= 0)
		syscall(SYS_close, old);
	errno = saved_errno;
	return 0;
}

enum sdp_log_dest sdp_log_get_destination(void)
{
	return (enum sdp_log_dest)LOAD(sdp_log_dest);
}

void sdp_log_set_min_level(int level)
{
	if (level < SDP_LOG_LEVEL_MIN)
		level = SDP_LOG_LEVEL_MIN;
	if (level > SDP_LOG_LEVEL_MAX)
		level = SDP_LOG_LEVEL_MAX;
	STORE(sdp_log_min, level);
}

int sdp_log_get_min_level(void)
{
	return LOAD(sdp_log_min);
}

void sdp_log_set_hook(sdp_log_hook_t fn)
{
	STORE(sdp_log_hook, fn);
}

void sdp_log_reset(void)
{
	sdp_log_set_hook(NULL);
	sdp_log_set_destination(SDP_LOG_TO_STDERR, NULL);
	sdp_log_set_min_level(SDP_LOG_MIN_LEVEL_DEFAULT);
}
