/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny assertion helpers for the ib_sdp selftests, and the few other
 * helpers several of them share.  Each CHECK prints one
 * "# ok" or "# FAIL" diagnostic line (TAP comments); the program's exit
 * status tells the runner whether the test passed.
 */
#ifndef SDP_SELFTEST_CHECK_H
#define SDP_SELFTEST_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

static int check_failures;
static int check_count;

#define CHECK(cond, fmt, ...) do {					\
	check_count++;							\
	if (cond) {							\
		printf("# ok   " fmt "\n", ##__VA_ARGS__);		\
	} else {							\
		check_failures++;					\
		printf("# FAIL " fmt "  [%s:%d]\n", ##__VA_ARGS__,	\
		       __FILE__, __LINE__);				\
	}								\
	fflush(stdout);							\
} while (0)

/* Print "N checks, M failed" and return the exit status. */
static inline int check_exit(void)
{
	printf("# %d checks, %d failed\n", check_count, check_failures);
	return check_failures ? KSFT_FAIL : KSFT_PASS;
}

/* "0" for success, else the errno's name, for messages. */
static inline const char *errname(int err)
{
	static char buf[8][32];
	static int i;

	if (!err)
		return "success";
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s", strerrorname_np(err) ?: "?");
	return buf[i];
}

/* A counter of /proc/net/sdpstats, or -1. */
static inline long sdp_stat_of(const char *name)
{
	FILE *f = fopen("/proc/net/sdpstats", "r");
	char n[64];
	long v = -1, x;

	while (f && fscanf(f, "%63s %ld", n, &x) == 2)
		if (!strcmp(n, name))
			v = x;
	if (f)
		fclose(f);
	return v;
}

/* SDP_TIME_SCALE: how many times slower than the test bed's usual kernel
 * the one under test runs (make check-full's debug kernel: 3), for the
 * times a test waits to call something quiet; 1 if unset.
 */
static inline int sdp_time_scale(void)
{
	const char *s = getenv("SDP_TIME_SCALE");

	return s && atoi(s) > 1 ? atoi(s) : 1;
}

/* ib_sdp's module parameter @name (e.g. "af_inet_sdp"), or @dflt if the
 * module is not loaded or the parameter cannot be read.
 */
static inline int sdp_module_param(const char *name, int dflt)
{
	char path[128];
	FILE *f;
	int v = dflt;

	snprintf(path, sizeof(path), "/sys/module/ib_sdp/parameters/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

#endif
