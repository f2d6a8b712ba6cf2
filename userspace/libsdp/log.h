/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdp: logging.
 *
 * Every message has a level from 1 to 9; it is emitted when its level is
 * at least the minimum level (the old OFED libsdp's convention: "min-level
 * 9" prints only errors, "min-level 1" prints everything):
 *
 *	SDP_LOG_DEBUG	1
 *	SDP_LOG_INFO	3
 *	SDP_LOG_WARN	5
 *	SDP_LOG_ERR	9
 *
 * Defaults: destination stderr, minimum level SDP_LOG_WARN (warnings and
 * errors). The configuration file's "log" statement changes both.
 *
 * Destinations: stderr (fd 2), syslog (syslog(3) without openlog(), so the
 * program's own syslog identity is left alone) or a file opened with
 * O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC on a descriptor above 2. Nothing is
 * ever written to stdout. A message is one write(2) of
 * "libsdp[PID]: MESSAGE\n", at most SDP_LOG_MAX bytes; sdp_log() keeps
 * errno unchanged, so it may be called from within interposed calls.
 *
 * sdp_log() is thread-safe. The sdp_log_set_*() functions are meant for
 * initialisation (configuration loading) and for tests; calling them while
 * other threads log is safe except that a message may go to a file that is
 * being replaced.
 */
#ifndef SDP_LOG_H
#define SDP_LOG_H

#define SDP_LOG_DEBUG		1
#define SDP_LOG_INFO		3
#define SDP_LOG_WARN		5
#define SDP_LOG_ERR		9

#define SDP_LOG_LEVEL_MIN	1
#define SDP_LOG_LEVEL_MAX	9
#define SDP_LOG_MIN_LEVEL_DEFAULT	SDP_LOG_WARN

/* Longest message, prefix and newline included; longer ones are cut. */
#define SDP_LOG_MAX		1024

enum sdp_log_dest {
	SDP_LOG_TO_STDERR,
	SDP_LOG_TO_SYSLOG,
	SDP_LOG_TO_FILE,
};

void sdp_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Send messages to @dest; @path is the file for SDP_LOG_TO_FILE and
 * ignored otherwise. Returns 0, or -errno if the file cannot be opened, in
 * which case the previous destination stays.
 */
int sdp_log_set_destination(enum sdp_log_dest dest, const char *path);
enum sdp_log_dest sdp_log_get_destination(void);

/* Clamped to SDP_LOG_LEVEL_MIN..SDP_LOG_LEVEL_MAX. */
void sdp_log_set_min_level(int level);
int sdp_log_get_min_level(void);

/*
 * For tests: while a hook is set, every message that passes the minimum
 * level is given to @fn (without the "libsdp[PID]: " prefix and the
 * newline) instead of the destination. NULL removes the hook.
 */
typedef void (*sdp_log_hook_t)(int level, const char *msg);
void sdp_log_set_hook(sdp_log_hook_t fn);

/* Back to the defaults: stderr, SDP_LOG_MIN_LEVEL_DEFAULT, no hook. */
void sdp_log_reset(void);

#endif /* SDP_LOG_H */
