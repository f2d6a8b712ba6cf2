// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: resolving the real functions, and initialisation.
 *
 * Everything runs once, under pthread_once(), the first time any
 * interposed function is called: the real functions first (so that nothing
 * later can reach an unresolved pointer), then the environment, then the
 * configuration file.  Environment:
 *
 *   LIBSDP_CONFIG_FILE   the rules (default /etc/libsdp.conf)
 *   LIBSDP_DEFAULT       tcp|sdp|both: what sockets no rule matches use
 *                        (default tcp: a program is left alone unless a
 *                        rule says otherwise)
 *   SIMPLE_LIBSDP        set: every stream socket is SDP, rules unread
 *                        (the old library's switch)
 *   LIBSDP_LOG_LEVEL     1..9, overrides the file's "log min-level"
 *   LIBSDP_AF_INET_SDP, LIBSDP_AF_INET6_SDP
 *                        the SDP family numbers, when the module was
 *                        loaded with others than 27 and 28 (read from
 *                        /sys/module/ib_sdp/parameters if it is loaded)
 *   LIBSDP_IPPROTO_SDP   the protocol number of SDP's AF_INET sockets
 *                        (default the module's ipproto_sdp, else 261);
 *                        0: swap in sockets of the SDP families instead
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/sdp.h>

#include "async.h"
#include "log.h"
#include "real.h"
#include "why.h"
#include "state.h"

struct sdp_real sdp_real;
struct sdp_settings sdp_settings = {
	.dflt = SDP_USE_TCP,
	.af_sdp = 27,
	.af_sdp6 = 28,
};

static pthread_once_t sdp_init_once = PTHREAD_ONCE_INIT;

static void *sdp_resolve(const char *name, bool required)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn && required) {
		sdp_log(SDP_LOG_ERR, "cannot find %s: %s", name, dlerror());
		abort();
	}
	return fn;
}

#define RESOLVE(name)	(sdp_real.name = sdp_resolve(#name, true))
#define RESOLVE_OPT(name) (sdp_real.name = sdp_resolve(#name, false))

/* An environment variable, a module parameter, or @dflt; a number from
 * @min to @max.
 */
static int sdp_param_number(const char *param, const char *env, int dflt,
			    int min, int max)
{
	char path[128], buf[16];
	const char *s = secure_getenv(env);
	FILE *f;
	int v;

	if (s && *s) {
		v = atoi(s);
		if (v >= min && v <= max)
			return v;
		sdp_log(SDP_LOG_ERR, "%s=%s: out of range", env, s);
		return dflt;
	}
	snprintf(path, sizeof(path), "/sys/module/ib_sdp/parameters/%s",
		 param);
	f = fopen(path, "re");
	if (!f)
		return dflt;
	v = fgets(buf, sizeof(buf), f) ? atoi(buf) : dflt;
	fclose(f);
	return v >= min && v <= max ? v : dflt;
}

static int sdp_parse_use(const char *s, enum sdp_use *use)
{
	if (!strcmp(s, "tcp"))
		*use = SDP_USE_TCP;
	else if (!strcmp(s, "sdp"))
		*use = SDP_USE_SDP;
	else if (!strcmp(s, "both"))
		*use = SDP_USE_BOTH;
	else
		return -1;
	return 0;
}

/* LIBSDP_ASYNC=1: AZ-SDP for this program's blocking sends (async.c);
 * LIBSDP_ASYNC_MIN: the smallest page-aligned part worth it.
 */
static void sdp_init_async(void)
{
	const char *s = secure_getenv("LIBSDP_ASYNC");
	char *end;
	long min;

	sdp_az_env = s && !strcmp(s, "1");
	sdp_az_wanted = sdp_az_env;
	s = secure_getenv("LIBSDP_ASYNC_NOPROTECT");
	sdp_az_noprotect = s && !strcmp(s, "1");
	s = secure_getenv("LIBSDP_ASYNC_MIN");
	if (!s || !*s)
		return;
	min = strtol(s, &end, 0);
	if (*end || min < 4096)
		sdp_log(SDP_LOG_ERR, "LIBSDP_ASYNC_MIN=%s: not a size of at least 4096",
			s);
	else
		sdp_az_min = min;
}

static void sdp_init_once_fn(void)
{
	int saved_errno = errno;
	const char *s;

	RESOLVE(socket);
	RESOLVE(bind);
	RESOLVE(listen);
	RESOLVE(connect);
	RESOLVE(accept);
	RESOLVE(accept4);
	RESOLVE(close);
	RESOLVE_OPT(close_range);
	RESOLVE_OPT(closefrom);
	RESOLVE(dup);
	RESOLVE(dup2);
	RESOLVE(dup3);
	RESOLVE(fcntl);
	RESOLVE_OPT(fcntl64);
	RESOLVE(ioctl);
	RESOLVE(setsockopt);
	RESOLVE(getsockopt);
	RESOLVE(getsockname);
	RESOLVE(getpeername);
	RESOLVE(poll);
	RESOLVE(ppoll);
	RESOLVE(select);
	RESOLVE(pselect);
	RESOLVE(epoll_ctl);
	RESOLVE(epoll_wait);
	RESOLVE(epoll_pwait);
	RESOLVE_OPT(epoll_pwait2);
	RESOLVE(send);
	RESOLVE(sendto);
	RESOLVE(sendmsg);
	RESOLVE(write);
	RESOLVE(writev);
	if (!sdp_real.fcntl64)
		sdp_real.fcntl64 = sdp_real.fcntl;

	sdp_state_init();

	s = secure_getenv("LIBSDP_LOG_LEVEL");
	if (s && *s)
		sdp_log_set_min_level(atoi(s));
	sdp_settings.af_sdp = sdp_param_number("af_inet_sdp",
					       "LIBSDP_AF_INET_SDP", 27, 1, 255);
	sdp_settings.af_sdp6 = sdp_param_number("af_inet6_sdp",
						"LIBSDP_AF_INET6_SDP", 28, 1,
						255);
	sdp_settings.ipproto_sdp = sdp_param_number("ipproto_sdp",
						    "LIBSDP_IPPROTO_SDP",
						    IPPROTO_SDP, 0, 262);

	sdp_init_async();

	s = secure_getenv("SIMPLE_LIBSDP");
	if (s && *s) {
		sdp_settings.simple = true;
		sdp_settings.any_sdp = true;
		sdp_log(SDP_LOG_INFO, "SIMPLE_LIBSDP: every stream socket is SDP");
		goto out;
	}
	sdp_settings.config = sdp_config_load(NULL);
	s = secure_getenv("LIBSDP_LOG_LEVEL");
	if (s && *s)	/* over the file's "log min-level" */
		sdp_log_set_min_level(atoi(s));
	s = secure_getenv("LIBSDP_DEFAULT");
	if (s && *s && sdp_parse_use(s, &sdp_settings.dflt))
		sdp_log(SDP_LOG_ERR, "LIBSDP_DEFAULT=%s: not tcp, sdp or both",
			s);
	sdp_settings.any_sdp = sdp_settings.dflt != SDP_USE_TCP ||
			       sdp_config_may_use_sdp(sdp_settings.config);
	if (sdp_config_may_async(sdp_settings.config))
		sdp_az_wanted = true;
	sdp_log(SDP_LOG_INFO, "%s: %d rules from %s%s",
		program_invocation_short_name,
		sdp_config_rule_count(sdp_settings.config), sdp_config_path(),
		sdp_settings.any_sdp ? "" : "; no socket will use SDP");
out:
	if (sdp_settings.any_sdp)
		sdp_why_init();
	errno = saved_errno;
}

void sdp_init(void)
{
	pthread_once(&sdp_init_once, sdp_init_once_fn);
}

enum sdp_use sdp_decide(enum sdp_role role, const struct sockaddr *addr,
			socklen_t len, bool *async, unsigned int *line)
{
	int use;

	*async = false;
	*line = 0;
	if (sdp_settings.simple)
		return SDP_USE_SDP;
	use = sdp_config_lookup_rule(sdp_settings.config, role, NULL, addr,
				     len, async, line);
	return use < 0 ? sdp_settings.dflt : (enum sdp_use)use;
}
