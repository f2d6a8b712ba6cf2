// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: the configuration parser and rule matcher; the grammar and the
 * matching rules are described in config.h.
 *
 * Design: a configuration is two arrays of rules, one per role (server and
 * client), in file order; a lookup walks the array of its role and the
 * first rule whose port range, address prefix and program pattern all
 * match decides. Each rule keeps its address in network order (IPv4 in
 * the first four bytes) with a prefix length in bits, so that IPv4, IPv6
 * and "*" rules compare the same way; an IPv4-mapped IPv6 address is
 * offered to IPv4 rules as its last four bytes.
 *
 * Parsing is line by line: a line is cut at '#', split into whitespace
 * separated tokens and checked completely before anything is kept, so a
 * malformed line is reported once (FILE:LINE: why) and leaves no trace.
 * "log" lines configure log.c as soon as they are read.
 *
 * Nothing is global except an empty configuration returned when memory
 * runs out; a loaded configuration is only read, so lookups need no lock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

struct sdp_rule {
	char *prog;		/* fnmatch(3) pattern */
	enum sdp_use use;
	int family;		/* 0 for "*", AF_INET or AF_INET6 */
	unsigned int prefix;	/* leading bits of addr that must match */
	unsigned char addr[16];	/* network order; IPv4 in addr[0..3] */
	unsigned int port_lo;	/* host order, inclusive */
	unsigned int port_hi;
	bool async;		/* "async": AZ-SDP for the socket's sends */
	unsigned int line;	/* in the file, for sdpstat --why */
};

struct sdp_rules {
	struct sdp_rule *v;
	int n;
	int cap;
};

struct sdp_config {
	struct sdp_rules role[2];	/* indexed by enum sdp_role */
};

/* Returned when even the configuration cannot be allocated; never freed. */
static struct sdp_config sdp_config_empty;

struct sdp_parser {
	struct sdp_config *cfg;
	const char *name;
	unsigned int line;
};

#define SDP_MAX_TOKENS	8
#define SDP_SPACE	" \t\r\n\v\f"

const char *sdp_use_name(enum sdp_use use)
{
	switch (use) {
	case SDP_USE_TCP:
		return "tcp";
	case SDP_USE_SDP:
		return "sdp";
	case SDP_USE_BOTH:
		return "both";
	}
	return "?";
}

const char *sdp_config_path(void)
{
	const char *path = secure_getenv(SDP_CONFIG_PATH_ENV);

	return path && *path ? path : SDP_CONFIG_DEFAULT_PATH;
}

static void sdp_parse_error(const struct sdp_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sdp_parse_error(const struct sdp_parser *p, const char *fmt, ...)
{
	char msg[SDP_LOG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sdp_log(SDP_LOG_ERR, "%s:%u: %s", p->name, p->line, msg);
}

/*
 * The decimal number in the @len bytes at @s, at most @max.
 * Returns 0, -EINVAL if it is not a number or -ERANGE if it is too large.
 */
static int sdp_parse_uint(const char *s, size_t len, unsigned long max,
			  unsigned long *val)
{
	unsigned long v = 0;
	size_t i;

	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	for (i = 0; i < len; i++) {
		v = v * 10 + (s[i] - '0');
		if (v > max)
			return -ERANGE;
	}
	*val = v;
	return 0;
}

/* ADDRESS[/PREFIX] in the @len bytes at @s. */
static int sdp_parse_addr(const struct sdp_parser *p, const char *s,
			  size_t len, struct sdp_rule *r)
{
	char buf[INET6_ADDRSTRLEN + 1];
	const char *end = s + len, *a = s, *slash;
	unsigned long prefix, max;
	bool bracket = false;
	size_t alen;
	int err;

	if (len == 1 && *s == '*') {
		r->family = 0;
		r->prefix = 0;
		return 0;
	}
	if (len && *s == '[') {
		const char *close = memchr(s, ']', len);

		if (!close) {
			sdp_parse_error(p, "bad address '%.*s': no ']'",
					(int)len, s);
			return -1;
		}
		bracket = true;
		a = s + 1;
		alen = close - a;
		slash = close + 1 < end ? close + 1 : NULL;
		if (slash && *slash != '/') {
			sdp_parse_error(p, "bad address '%.*s': '%.*s' after ']'",
					(int)len, s, (int)(end - slash),
					slash);
			return -1;
		}
	} else {
		slash = memchr(s, '/', len);
		alen = (slash ? slash : end) - s;
	}

	if (!alen || alen >= sizeof(buf))
		goto bad;
	memcpy(buf, a, alen);
	buf[alen] = '\0';
	if (!bracket && inet_pton(AF_INET, buf, r->addr) == 1) {
		r->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, r->addr) == 1) {
		r->family = AF_INET6;
		max = 128;
	} else {
		goto bad;
	}

	r->prefix = max;
	if (!slash)
		return 0;
	err = sdp_parse_uint(slash + 1, end - slash - 1, max, &prefix);
	if (err == -ERANGE) {
		sdp_parse_error(p, "prefix '%.*s' out of range (0..%lu for %s)",
				(int)(end - slash - 1), slash + 1, max,
				r->family == AF_INET ? "IPv4" : "IPv6");
		return -1;
	}
	if (err) {
		sdp_parse_error(p, "bad prefix '%.*s' in '%.*s'",
				(int)(end - slash - 1), slash + 1, (int)len, s);
		return -1;
	}
	r->prefix = prefix;
	return 0;
bad:
	sdp_parse_error(p, "bad address '%.*s'", (int)len, s);
	return -1;
}

/* PORTS: "*", N or N-M. */
static int sdp_parse_ports(const struct sdp_parser *p, const char *s,
			   struct sdp_rule *r)
{
	const char *dash = strchr(s, '-');
	unsigned long lo, hi;
	int err;

	if (!*s) {
		sdp_parse_error(p, "missing port after ':'");
		return -1;
	}
	if (!strcmp(s, "*")) {
		r->port_lo = 0;
		r->port_hi = 65535;
		return 0;
	}
	if (!dash) {
		err = sdp_parse_uint(s, strlen(s), 65535, &lo);
		hi = lo;
	} else {
		err = sdp_parse_uint(s, dash - s, 65535, &lo);
		if (!err)
			err = sdp_parse_uint(dash + 1, strlen(dash + 1), 65535,
					     &hi);
	}
	if (err == -ERANGE) {
		sdp_parse_error(p, "port out of range (0..65535) in '%s'", s);
		return -1;
	}
	if (err) {
		sdp_parse_error(p, "bad port '%s' (expected *, N or N-M)", s);
		return -1;
	}
	if (lo > hi) {
		sdp_parse_error(p, "bad port range '%s': %lu > %lu", s, lo, hi);
		return -1;
	}
	r->port_lo = lo;
	r->port_hi = hi;
	return 0;
}

static int sdp_rules_add(struct sdp_rules *rules, const struct sdp_rule *r)
{
	if (rules->n == rules->cap) {
		int cap = rules->cap ? 2 * rules->cap : 8;
		struct sdp_rule *v = realloc(rules->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rules->v = v;
		rules->cap = cap;
	}
	rules->v[rules->n++] = *r;
	return 0;
}

/* use tcp|sdp|both [async] server|listen|client|connect PROGRAM
 * ADDRESS:PORTS
 */
static void sdp_parse_use(struct sdp_parser *p, char **tok, int n)
{
	bool async = n > 2 && !strcmp(tok[2], "async");
	static const char *const field[] = {
		"", "tcp|sdp|both", "server|listen|client|connect", "PROGRAM",
		"ADDRESS:PORTS",
	};
	struct sdp_rule r;
	enum sdp_role role;
	char *colon;

	if (async) {
		/* the rest as without it */
		if (!strcmp(tok[1], "tcp")) {
			sdp_parse_error(p, "use: 'async' is for sdp and both, not tcp");
			return;
		}
		tok[2] = tok[1];
		tok++;
		n--;
	}
	if (n < 5) {
		sdp_parse_error(p, "use: missing %s", field[n]);
		return;
	}
	if (n > 5) {
		sdp_parse_error(p, "use: unexpected '%s' after %s", tok[5],
				tok[4]);
		return;
	}

	memset(&r, 0, sizeof(r));
	r.async = async;
	r.line = p->line;
	if (!strcmp(tok[1], "tcp")) {
		r.use = SDP_USE_TCP;
	} else if (!strcmp(tok[1], "sdp")) {
		r.use = SDP_USE_SDP;
	} else if (!strcmp(tok[1], "both")) {
		r.use = SDP_USE_BOTH;
	} else {
		sdp_parse_error(p, "use: unknown '%s' (expected tcp, sdp or both)",
				tok[1]);
		return;
	}

	if (!strcmp(tok[2], "server") || !strcmp(tok[2], "listen")) {
		role = SDP_ROLE_SERVER;
	} else if (!strcmp(tok[2], "client") || !strcmp(tok[2], "connect")) {
		role = SDP_ROLE_CLIENT;
	} else {
		sdp_parse_error(p,
				"use: unknown role '%s' (expected server, listen, client or connect)",
				tok[2]);
		return;
	}

	/* A bare IPv6 address has colons of its own: the port is last. */
	colon = strrchr(tok[4], ':');
	if (!colon) {
		sdp_parse_error(p, "use: missing ':PORTS' in '%s'", tok[4]);
		return;
	}
	if (sdp_parse_addr(p, tok[4], colon - tok[4], &r) ||
	    sdp_parse_ports(p, colon + 1, &r))
		return;

	r.prog = strdup(tok[3]);
	if (!r.prog || sdp_rules_add(&p->cfg->role[role], &r)) {
		free(r.prog);
		sdp_parse_error(p, "out of memory, rule ignored");
	}
}

/* log [destination stderr|syslog|file PATH] [min-level N] */
static void sdp_parse_log(struct sdp_parser *p, char **tok, int n)
{
	enum sdp_log_dest dest = SDP_LOG_TO_STDERR;
	bool have_dest = false, have_level = false, is_dest;
	const char *path = NULL, *arg;
	unsigned long level = 0;
	int i, err;

	if (n == 1) {
		sdp_parse_error(p, "log: missing 'destination' or 'min-level'");
		return;
	}
	/* The longest is: log destination file PATH min-level N */
	if (n > 6) {
		sdp_parse_error(p, "log: unexpected '%s'", tok[6]);
		return;
	}

	for (i = 1; i < n; i += 2) {
		is_dest = !strcmp(tok[i], "destination");
		if (!is_dest && strcmp(tok[i], "min-level")) {
			sdp_parse_error(p,
					"log: unexpected '%s' (expected 'destination' or 'min-level')",
					tok[i]);
			return;
		}
		if (is_dest ? have_dest : have_level) {
			sdp_parse_error(p, "log: '%s' given twice", tok[i]);
			return;
		}
		if (i + 1 >= n) {
			sdp_parse_error(p, "log: missing %s after '%s'",
					is_dest ? "stderr, syslog or file PATH" :
						  "level",
					tok[i]);
			return;
		}
		arg = tok[i + 1];

		if (!is_dest) {
			have_level = true;
			err = sdp_parse_uint(arg, strlen(arg),
					     SDP_LOG_LEVEL_MAX, &level);
			if (err || level < SDP_LOG_LEVEL_MIN) {
				sdp_parse_error(p, "log: bad min-level '%s' (expected %d..%d)",
						arg, SDP_LOG_LEVEL_MIN,
						SDP_LOG_LEVEL_MAX);
				return;
			}
			continue;
		}

		have_dest = true;
		if (!strcmp(arg, "stderr")) {
			dest = SDP_LOG_TO_STDERR;
		} else if (!strcmp(arg, "syslog")) {
			dest = SDP_LOG_TO_SYSLOG;
		} else if (!strcmp(arg, "file")) {
			if (i + 2 >= n) {
				sdp_parse_error(p, "log: missing PATH after 'file'");
				return;
			}
			dest = SDP_LOG_TO_FILE;
			path = tok[i + 2];
			i++;
		} else {
			sdp_parse_error(p,
					"log: unknown destination '%s' (expected stderr, syslog or file PATH)",
					arg);
			return;
		}
	}

	/* Only a complete, valid line changes anything. */
	if (have_dest) {
		err = sdp_log_set_destination(dest, path);
		if (err) {
			sdp_parse_error(p, "log: cannot open log file '%s': %s",
					path, strerror(-err));
			return;
		}
	}
	if (have_level)
		sdp_log_set_min_level(level);
}

/* One line, without its '\n'; it is modified. */
static void sdp_parse_line(struct sdp_parser *p, char *line)
{
	char *tok[SDP_MAX_TOKENS], *save = NULL, *t, *hash;
	int n = 0;

	hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	for (t = strtok_r(line, SDP_SPACE, &save); t;
	     t = strtok_r(NULL, SDP_SPACE, &save)) {
		if (n < SDP_MAX_TOKENS)
			tok[n] = t;
		n++;
	}
	if (!n)
		return;

	if (!strcmp(tok[0], "use"))
		sdp_parse_use(p, tok, n);
	else if (!strcmp(tok[0], "log"))
		sdp_parse_log(p, tok, n);
	else
		sdp_parse_error(p, "unknown keyword '%s' (expected use or log)",
				tok[0]);
}

static struct sdp_config *sdp_config_alloc(void)
{
	struct sdp_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg) {
		sdp_log(SDP_LOG_ERR, "out of memory: no configuration, default %s",
			sdp_use_name(SDP_CONFIG_DEFAULT_USE));
		return &sdp_config_empty;
	}
	return cfg;
}

struct sdp_config *sdp_config_parse(const char *text, const char *name)
{
	struct sdp_parser p = { .name = name ? name : "(config)" };
	char *copy, *line, *nl;

	p.cfg = sdp_config_alloc();
	if (p.cfg == &sdp_config_empty || !text)
		return p.cfg;
	copy = strdup(text);
	if (!copy) {
		sdp_log(SDP_LOG_ERR, "%s: out of memory, not parsed", p.name);
		return p.cfg;
	}
	for (line = copy; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		p.line++;
		sdp_parse_line(&p, line);
	}
	free(copy);
	return p.cfg;
}

struct sdp_config *sdp_config_load(const char *path)
{
	struct sdp_parser p = { .name = path };
	size_t cap = 0;
	char *line = NULL;
	ssize_t len;
	FILE *f;

	if (!path) {
		path = sdp_config_path();
		p.name = path;
	}
	p.cfg = sdp_config_alloc();
	if (p.cfg == &sdp_config_empty)
		return p.cfg;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			sdp_log(SDP_LOG_DEBUG, "%s: no such file, default %s",
				path, sdp_use_name(SDP_CONFIG_DEFAULT_USE));
		else
			sdp_log(SDP_LOG_ERR, "%s: %s; no rules, default %s",
				path, strerror(errno),
				sdp_use_name(SDP_CONFIG_DEFAULT_USE));
		return p.cfg;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		p.line++;
		if (len && line[len - 1] == '\n')
			line[len - 1] = '\0';
		sdp_parse_line(&p, line);
	}
	if (ferror(f))
		sdp_log(SDP_LOG_ERR, "%s: read error after line %u: %s", path,
			p.line, strerror(errno));
	free(line);
	fclose(f);
	sdp_log(SDP_LOG_DEBUG, "%s: %d rules", path,
		sdp_config_rule_count(p.cfg));
	return p.cfg;
}

void sdp_config_free(struct sdp_config *cfg)
{
	int i, j;

	if (!cfg || cfg == &sdp_config_empty)
		return;
	for (i = 0; i < 2; i++) {
		for (j = 0; j < cfg->role[i].n; j++)
			free(cfg->role[i].v[j].prog);
		free(cfg->role[i].v);
	}
	free(cfg);
}

int sdp_config_rule_count(const struct sdp_config *cfg)
{
	return cfg ? cfg->role[0].n + cfg->role[1].n : 0;
}

/* Do the first @bits bits of @a and @b agree? */
static bool sdp_prefix_eq(const unsigned char *a, const unsigned char *b,
			  unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;
	unsigned char mask;

	if (memcmp(a, b, bytes))
		return false;
	if (!rest)
		return true;
	mask = 0xff << (8 - rest);
	return !((a[bytes] ^ b[bytes]) & mask);
}

bool sdp_config_may_use_sdp(const struct sdp_config *cfg)
{
	int r, i;

	for (r = 0; cfg && r < 2; r++)
		for (i = 0; i < cfg->role[r].n; i++)
			if (cfg->role[r].v[i].use != SDP_USE_TCP)
				return true;
	return false;
}

enum sdp_use sdp_config_match(const struct sdp_config *cfg, enum sdp_role role,
			      const char *prog, const struct sockaddr *addr,
			      socklen_t len)
{
	int use = sdp_config_lookup(cfg, role, prog, addr, len);

	return use < 0 ? SDP_CONFIG_DEFAULT_USE : (enum sdp_use)use;
}

int sdp_config_lookup(const struct sdp_config *cfg, enum sdp_role role,
		      const char *prog, const struct sockaddr *addr,
		      socklen_t len)
{
	return sdp_config_lookup_async(cfg, role, prog, addr, len, NULL);
}

int sdp_config_lookup_async(const struct sdp_config *cfg, enum sdp_role role,
			    const char *prog, const struct sockaddr *addr,
			    socklen_t len, bool *async)
{
	return sdp_config_lookup_rule(cfg, role, prog, addr, len, async, NULL);
}

int sdp_config_lookup_rule(const struct sdp_config *cfg, enum sdp_role role,
			   const char *prog, const struct sockaddr *addr,
			   socklen_t len, bool *async, unsigned int *line)
{
	const unsigned char *a4 = NULL, *a6 = NULL;
	const struct sdp_rules *rules;
	unsigned int port;
	int i;

	if (!cfg || (role != SDP_ROLE_SERVER && role != SDP_ROLE_CLIENT) ||
	    !addr || len < sizeof(sa_family_t))
		return -1;
	if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const void *)addr;

		a4 = (const unsigned char *)&sin->sin_addr;
		port = ntohs(sin->sin_port);
	} else if (addr->sa_family == AF_INET6 &&
		   len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 = (const void *)addr;

		a6 = sin6->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr))
			a4 = a6 + 12;
		port = ntohs(sin6->sin6_port);
	} else {
		return -1;
	}
	if (!prog)
		prog = program_invocation_short_name;

	rules = &cfg->role[role];
	for (i = 0; i < rules->n; i++) {
		const struct sdp_rule *r = &rules->v[i];

		if (port < r->port_lo || port > r->port_hi)
			continue;
		if (r->family == AF_INET &&
		    !(a4 && sdp_prefix_eq(r->addr, a4, r->prefix)))
			continue;
		if (r->family == AF_INET6 &&
		    !(a6 && sdp_prefix_eq(r->addr, a6, r->prefix)))
			continue;
		if (fnmatch(r->prog, prog, 0))
			continue;
		if (async)
			*async = r->async;
		if (line)
			*line = r->line;
		return r->use;
	}
	return -1;
}

bool sdp_config_may_async(const struct sdp_config *cfg)
{
	int role, i;

	for (role = 0; cfg && role < 2; role++)
		for (i = 0; i < cfg->role[role].n; i++)
			if (cfg->role[role].v[i].async)
				return true;
	return false;
}
