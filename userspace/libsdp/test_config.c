// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of libsdp's configuration parser, rule matcher and logging.
 * Output is TAP: "ok N - what" or "not ok N - what", then "1..N" and a
 * "# P passed, F failed" summary; the exit status is 0 iff all passed.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

static int n_test, n_fail;

static void check(bool ok, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check(bool ok, int line, const char *fmt, ...)
{
	va_list ap;

	n_test++;
	if (!ok)
		n_fail++;
	printf("%sok %d - ", ok ? "" : "not ", n_test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!ok)
		printf(" (test_config.c:%d)", line);
	printf("\n");
}

#define CHECK(cond, ...)	check(!!(cond), __LINE__, __VA_ARGS__)

/* Log capture. */

#define CAP_MAX		64

static struct {
	int level;
	char msg[SDP_LOG_MAX];
} cap[CAP_MAX];
static int n_cap;

static void cap_hook(int level, const char *msg)
{
	if (n_cap < CAP_MAX) {
		cap[n_cap].level = level;
		snprintf(cap[n_cap].msg, sizeof(cap[n_cap].msg), "%s", msg);
	}
	n_cap++;
}

static void cap_start(void)
{
	n_cap = 0;
	sdp_log_reset();
	sdp_log_set_hook(cap_hook);
}

static int cap_errors(void)
{
	int i, n = 0;

	for (i = 0; i < n_cap && i < CAP_MAX; i++)
		n += cap[i].level >= SDP_LOG_ERR;
	return n;
}

/* Addresses. */

static struct sockaddr_in6 sa_buf;

static const struct sockaddr *sa(const char *ip, unsigned int port,
				 socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&sa_buf;
	struct sockaddr_in6 *sin6 = &sa_buf;

	memset(&sa_buf, 0, sizeof(sa_buf));
	if (inet_pton(AF_INET, ip, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, ip, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
	} else {
		fprintf(stderr, "test bug: bad address %s\n", ip);
		exit(2);
	}
	return (const struct sockaddr *)&sa_buf;
}

static enum sdp_use match(const struct sdp_config *cfg, enum sdp_role role,
			  const char *prog, const char *ip, unsigned int port)
{
	socklen_t len;
	const struct sockaddr *a = sa(ip, port, &len);

	return sdp_config_match(cfg, role, prog, a, len);
}

#define S	SDP_ROLE_SERVER
#define C	SDP_ROLE_CLIENT
#define TCP	SDP_USE_TCP
#define SDP	SDP_USE_SDP
#define BOTH	SDP_USE_BOTH

/* Check that @cfg answers @want for (@role, @prog, @ip, @port). */
#define EXPECT(cfg, role, prog, ip, port, want) do {			\
	enum sdp_role e_role = (role);					\
	const char *e_prog = (prog), *e_ip = (ip);			\
	unsigned int e_port = (port);					\
	enum sdp_use e_want = (want);					\
									\
	CHECK(match(cfg, e_role, e_prog, e_ip, e_port) == e_want,	\
	      "%s %s %s [%s]:%u -> %s", #cfg,				\
	      e_role == S ? "server" : "client", e_prog, e_ip, e_port,	\
	      sdp_use_name(e_want));					\
} while (0)

static struct sdp_config *parse(const char *text)
{
	return sdp_config_parse(text, "t.conf");
}

/* Tests. */

static void test_forms(void)
{
	struct sdp_config *a, *b;

	cap_start();
	a = parse("use sdp server * *:*\n"
		  "use both client * *:*\n");
	CHECK(sdp_config_rule_count(a) == 2, "forms: two use rules load");
	EXPECT(a, S, "x", "1.2.3.4", 1, SDP);
	EXPECT(a, C, "x", "1.2.3.4", 1, BOTH);
	b = parse("use tcp server a *:*\n"
		  "use sdp server * *:*\n"
		  "use tcp client a *:*\n"
		  "use both client * *:*");	/* no final newline */
	CHECK(sdp_config_rule_count(b) == 4, "forms: four rules, last without newline");
	EXPECT(b, S, "a", "1.2.3.4", 1, TCP);
	EXPECT(b, S, "b", "1.2.3.4", 1, SDP);
	EXPECT(b, C, "a", "1.2.3.4", 1, TCP);
	EXPECT(b, C, "b", "1.2.3.4", 1, BOTH);
	sdp_config_free(a);
	sdp_config_free(b);

	a = parse("log destination syslog\n");
	CHECK(sdp_log_get_destination() == SDP_LOG_TO_SYSLOG,
	      "forms: log destination syslog");
	sdp_config_free(a);
	a = parse("log min-level 7\n");
	CHECK(sdp_log_get_min_level() == 7, "forms: log min-level 7");
	sdp_config_free(a);
	a = parse("log destination stderr min-level 2\n");
	CHECK(sdp_log_get_destination() == SDP_LOG_TO_STDERR &&
	      sdp_log_get_min_level() == 2,
	      "forms: log destination stderr min-level 2");
	sdp_config_free(a);
	a = parse("log min-level 6 destination syslog\n"
		  "log min-level 8\n");
	CHECK(sdp_log_get_destination() == SDP_LOG_TO_SYSLOG &&
	      sdp_log_get_min_level() == 8,
	      "forms: log clauses in either order, later line overrides");
	CHECK(sdp_config_rule_count(a) == 0, "forms: log lines are not rules");
	sdp_config_free(a);
	CHECK(cap_errors() == 0, "forms: no errors reported");
	sdp_log_reset();
}

static void test_roles(void)
{
	struct sdp_config *srv, *cli, *syn;

	cap_start();
	srv = parse("use sdp server * *:*\n");
	cli = parse("use sdp client * *:*\n");
	EXPECT(srv, S, "p", "10.0.0.1", 80, SDP);
	EXPECT(srv, C, "p", "10.0.0.1", 80, TCP);
	EXPECT(cli, C, "p", "10.0.0.1", 80, SDP);
	EXPECT(cli, S, "p", "10.0.0.1", 80, TCP);

	syn = parse("use sdp listen * *:1\n"
		    "use both connect * *:1\n");
	EXPECT(syn, S, "p", "10.0.0.1", 1, SDP);
	EXPECT(syn, C, "p", "10.0.0.1", 1, BOTH);
	CHECK(cap_errors() == 0, "roles: no errors reported");
	sdp_config_free(srv);
	sdp_config_free(cli);
	sdp_config_free(syn);
}

static void test_first_match(void)
{
	struct sdp_config *broad, *narrow;

	cap_start();
	broad = parse("use tcp server * 10.0.0.0/8:*\n"
		      "use sdp server * 10.1.2.3:80\n");
	narrow = parse("use sdp server * 10.1.2.3:80\n"
		       "use tcp server * 10.0.0.0/8:*\n"
		       "use both server * *:*\n");
	EXPECT(broad, S, "p", "10.1.2.3", 80, TCP);
	EXPECT(narrow, S, "p", "10.1.2.3", 80, SDP);
	EXPECT(narrow, S, "p", "10.1.2.3", 81, TCP);
	EXPECT(narrow, S, "p", "11.1.2.3", 80, BOTH);
	CHECK(cap_errors() == 0, "first match: no errors reported");
	sdp_config_free(broad);
	sdp_config_free(narrow);
}

/* "async": AZ-SDP for the sockets a rule gives (sdp, both; not tcp). */
static void test_async(void)
{
	struct sdp_config *a;
	const struct sockaddr *sa1;
	socklen_t len;
	bool async;

	cap_start();
	a = parse("use sdp async client * 10.0.0.1:*\n"
		  "use both async server * *:80\n"
		  "use sdp client * *:*\n");
	CHECK(sdp_config_rule_count(a) == 3, "async: three rules load");
	CHECK(cap_errors() == 0, "async: no errors reported");
	CHECK(sdp_config_may_async(a), "async: some rule says async");
	EXPECT(a, C, "p", "10.0.0.1", 5, SDP);
	EXPECT(a, S, "p", "10.0.0.1", 80, BOTH);
	sa1 = sa("10.0.0.1", 5, &len);
	async = false;
	CHECK(sdp_config_lookup_async(a, C, "p", sa1, len, &async) == SDP &&
	      async, "async: the client rule's async");
	sa1 = sa("10.0.0.2", 5, &len);
	async = true;
	CHECK(sdp_config_lookup_async(a, C, "p", sa1, len, &async) == SDP &&
	      !async, "async: a rule without it");
	sdp_config_free(a);

	a = parse("use sdp client * *:*\n");
	CHECK(!sdp_config_may_async(a), "async: no rule says async");
	sdp_config_free(a);

	cap_start();
	a = parse("use tcp async client * *:*\n");
	CHECK(sdp_config_rule_count(a) == 0 && cap_errors() == 1,
	      "async: refused after tcp");
	sdp_config_free(a);
	cap_start();
	a = parse("use sdp async client *\n");
	CHECK(sdp_config_rule_count(a) == 0 && cap_errors() == 1,
	      "async: a missing field still reported");
	sdp_config_free(a);
	sdp_log_reset();
}

static void test_program(void)
{
	struct sdp_config *cfg;
	char text[256];

	cap_start();
	cfg = parse("use sdp server redis* *:*\n"
		    "use both server nginx *:*\n"
		    "use sdp server memcache[dq] *:*\n"
		    "use both client * *:*\n");
	EXPECT(cfg, S, "redis", "1.1.1.1", 6379, SDP);
	EXPECT(cfg, S, "redis-server", "1.1.1.1", 6379, SDP);
	EXPECT(cfg, S, "xredis", "1.1.1.1", 6379, TCP);
	EXPECT(cfg, S, "nginx", "1.1.1.1", 80, BOTH);
	EXPECT(cfg, S, "nginx2", "1.1.1.1", 80, TCP);
	EXPECT(cfg, S, "memcached", "1.1.1.1", 80, SDP);
	EXPECT(cfg, S, "memcachex", "1.1.1.1", 80, TCP);
	EXPECT(cfg, S, "apache2", "1.1.1.1", 80, TCP);
	EXPECT(cfg, C, "anything", "1.1.1.1", 80, BOTH);
	EXPECT(cfg, C, "", "1.1.1.1", 80, BOTH);
	CHECK(cap_errors() == 0, "program: no errors reported");
	sdp_config_free(cfg);

	snprintf(text, sizeof(text), "use sdp server %s *:*\n",
		 program_invocation_short_name);
	cfg = parse(text);
	CHECK(sdp_config_match(cfg, S, NULL,
			       sa("1.1.1.1", 1, &(socklen_t){0}),
			       sizeof(struct sockaddr_in)) == SDP,
	      "program: NULL means program_invocation_short_name (%s)",
	      program_invocation_short_name);
	EXPECT(cfg, S, "other", "1.1.1.1", 1, TCP);
	sdp_config_free(cfg);
}

static void test_ipv4(void)
{
	struct sdp_config *p0, *p8, *p24, *p32, *bare, *p20, *host, *any,
		*zero;

	cap_start();
	p0 = parse("use sdp server * 0.0.0.0/0:*\n");
	p8 = parse("use sdp server * 10.0.0.0/8:*\n");
	p24 = parse("use sdp server * 192.168.1.0/24:*\n");
	p32 = parse("use sdp server * 192.168.1.7/32:*\n");
	bare = parse("use sdp server * 192.168.1.7:*\n");
	p20 = parse("use sdp server * 172.16.0.0/20:*\n");
	host = parse("use sdp server * 10.1.2.3/8:*\n");
	any = parse("use sdp server * *:*\n");
	zero = parse("use sdp server * 0.0.0.0:*\n");
	CHECK(cap_errors() == 0, "ipv4: no errors reported");

	EXPECT(p0, S, "p", "0.0.0.0", 1, SDP);
	EXPECT(p0, S, "p", "255.255.255.255", 1, SDP);
	EXPECT(p0, S, "p", "::1", 1, TCP);

	EXPECT(p8, S, "p", "10.0.0.0", 1, SDP);
	EXPECT(p8, S, "p", "10.255.255.255", 1, SDP);
	EXPECT(p8, S, "p", "9.255.255.255", 1, TCP);
	EXPECT(p8, S, "p", "11.0.0.0", 1, TCP);

	EXPECT(p24, S, "p", "192.168.1.0", 1, SDP);
	EXPECT(p24, S, "p", "192.168.1.255", 1, SDP);
	EXPECT(p24, S, "p", "192.168.0.255", 1, TCP);
	EXPECT(p24, S, "p", "192.168.2.0", 1, TCP);

	EXPECT(p32, S, "p", "192.168.1.7", 1, SDP);
	EXPECT(p32, S, "p", "192.168.1.6", 1, TCP);
	EXPECT(p32, S, "p", "192.168.1.8", 1, TCP);
	EXPECT(bare, S, "p", "192.168.1.7", 1, SDP);
	EXPECT(bare, S, "p", "192.168.1.6", 1, TCP);
	EXPECT(bare, S, "p", "192.168.1.8", 1, TCP);

	EXPECT(p20, S, "p", "172.16.15.255", 1, SDP);
	EXPECT(p20, S, "p", "172.16.16.0", 1, TCP);
	EXPECT(host, S, "p", "10.200.0.1", 1, SDP);

	/* The wildcard address is an address like any other. */
	EXPECT(any, S, "p", "0.0.0.0", 1, SDP);
	EXPECT(any, S, "p", "::", 1, SDP);
	EXPECT(any, S, "p", "2001:db8::1", 1, SDP);
	EXPECT(p8, S, "p", "0.0.0.0", 1, TCP);
	EXPECT(zero, S, "p", "0.0.0.0", 1, SDP);
	EXPECT(zero, S, "p", "0.0.0.1", 1, TCP);

	/* Bad sockaddrs get the default. */
	CHECK(sdp_config_match(any, S, "p", NULL, 0) == TCP,
	      "ipv4: NULL address -> default");
	CHECK(sdp_config_match(any, S, "p", sa("1.2.3.4", 1, &(socklen_t){0}),
			       sizeof(struct sockaddr_in) - 1) == TCP,
	      "ipv4: short sockaddr_in -> default");
	sa_buf.sin6_family = AF_UNIX;
	CHECK(sdp_config_match(any, S, "p", (struct sockaddr *)&sa_buf,
			       sizeof(sa_buf)) == TCP,
	      "ipv4: other family -> default");

	sdp_config_free(p0);
	sdp_config_free(p8);
	sdp_config_free(p24);
	sdp_config_free(p32);
	sdp_config_free(bare);
	sdp_config_free(p20);
	sdp_config_free(host);
	sdp_config_free(any);
	sdp_config_free(zero);
}

static void test_ipv6(void)
{
	struct sdp_config *ll, *llb, *lo, *lob, *lo128, *un, *unb, *all, *v4,
		*v6all, *mapped, *port;

	cap_start();
	ll = parse("use sdp server * fe80::/64:*\n");
	llb = parse("use sdp server * [fe80::]/64:*\n");
	lo = parse("use sdp server * ::1:*\n");
	lob = parse("use sdp server * [::1]:*\n");
	lo128 = parse("use sdp server * ::1/128:*\n");
	un = parse("use sdp server * :::*\n");
	unb = parse("use sdp server * [::]:*\n");
	all = parse("use sdp server * [::]/0:*\n");
	v4 = parse("use sdp server * 192.168.1.0/24:*\n");
	v6all = parse("use sdp server * ::/0:*\n");
	mapped = parse("use sdp server * ::ffff:0.0.0.0/96:*\n");
	port = parse("use sdp server * [2001:db8::1]:5000-5001\n"
		     "use both server * 2001:db8::2:7\n");
	CHECK(cap_errors() == 0, "ipv6: no errors reported");

	EXPECT(ll, S, "p", "fe80::1", 1, SDP);
	EXPECT(ll, S, "p", "fe80::ffff:ffff:ffff:ffff", 1, SDP);
	EXPECT(ll, S, "p", "fe80:0:0:1::", 1, TCP);
	EXPECT(ll, S, "p", "fe7f:ffff:ffff:ffff::", 1, TCP);
	EXPECT(llb, S, "p", "fe80::1", 1, SDP);
	EXPECT(llb, S, "p", "fe80:0:0:1::", 1, TCP);

	EXPECT(lo, S, "p", "::1", 1, SDP);
	EXPECT(lo, S, "p", "::2", 1, TCP);
	EXPECT(lo, S, "p", "::", 1, TCP);
	EXPECT(lob, S, "p", "::1", 1, SDP);
	EXPECT(lob, S, "p", "::2", 1, TCP);
	EXPECT(lo128, S, "p", "::1", 1, SDP);
	EXPECT(lo128, S, "p", "::3", 1, TCP);

	EXPECT(un, S, "p", "::", 1, SDP);
	EXPECT(un, S, "p", "::1", 1, TCP);
	EXPECT(unb, S, "p", "::", 1, SDP);
	EXPECT(unb, S, "p", "::1", 1, TCP);
	EXPECT(all, S, "p", "2001:db8::1", 1, SDP);
	EXPECT(all, S, "p", "1.2.3.4", 1, TCP);

	/* IPv4 rules match IPv4-mapped addresses; IPv6 rules no IPv4. */
	EXPECT(v4, S, "p", "::ffff:192.168.1.5", 1, SDP);
	EXPECT(v4, S, "p", "::ffff:192.168.2.1", 1, TCP);
	EXPECT(v4, S, "p", "2001:db8::c0a8:105", 1, TCP);
	EXPECT(v4, S, "p", "::192.168.1.5", 1, TCP);
	EXPECT(v6all, S, "p", "192.168.1.5", 1, TCP);
	EXPECT(v6all, S, "p", "0.0.0.0", 1, TCP);
	EXPECT(v6all, S, "p", "::ffff:192.168.1.5", 1, SDP);
	EXPECT(mapped, S, "p", "::ffff:192.168.1.5", 1, SDP);
	EXPECT(mapped, S, "p", "192.168.1.5", 1, TCP);

	EXPECT(port, S, "p", "2001:db8::1", 4999, TCP);
	EXPECT(port, S, "p", "2001:db8::1", 5000, SDP);
	EXPECT(port, S, "p", "2001:db8::1", 5001, SDP);
	EXPECT(port, S, "p", "2001:db8::1", 5002, TCP);
	EXPECT(port, S, "p", "2001:db8::2", 7, BOTH);
	EXPECT(port, S, "p", "2001:db8::2", 8, TCP);

	sdp_config_free(ll);
	sdp_config_free(llb);
	sdp_config_free(lo);
	sdp_config_free(lob);
	sdp_config_free(lo128);
	sdp_config_free(un);
	sdp_config_free(unb);
	sdp_config_free(all);
	sdp_config_free(v4);
	sdp_config_free(v6all);
	sdp_config_free(mapped);
	sdp_config_free(port);
}

static void test_ports(void)
{
	struct sdp_config *cfg, *edge;

	cap_start();
	cfg = parse("use sdp server * *:5000-5010\n"
		    "use both server * *:80\n"
		    "use sdp client * *:*\n");
	edge = parse("use sdp server * *:0-0\n"
		     "use both server * *:65535\n"
		     "use sdp client * *:0-65535\n");
	CHECK(cap_errors() == 0 && sdp_config_rule_count(edge) == 3,
	      "ports: edges 0 and 65535 load");
	EXPECT(cfg, S, "p", "1.2.3.4", 4999, TCP);
	EXPECT(cfg, S, "p", "1.2.3.4", 5000, SDP);
	EXPECT(cfg, S, "p", "1.2.3.4", 5010, SDP);
	EXPECT(cfg, S, "p", "1.2.3.4", 5011, TCP);
	EXPECT(cfg, S, "p", "1.2.3.4", 79, TCP);
	EXPECT(cfg, S, "p", "1.2.3.4", 80, BOTH);
	EXPECT(cfg, S, "p", "1.2.3.4", 81, TCP);
	EXPECT(cfg, C, "p", "1.2.3.4", 0, SDP);
	EXPECT(cfg, C, "p", "1.2.3.4", 65535, SDP);
	EXPECT(edge, S, "p", "1.2.3.4", 0, SDP);
	EXPECT(edge, S, "p", "1.2.3.4", 1, TCP);
	EXPECT(edge, S, "p", "1.2.3.4", 65534, TCP);
	EXPECT(edge, S, "p", "1.2.3.4", 65535, BOTH);
	EXPECT(edge, C, "p", "::1", 65535, SDP);
	sdp_config_free(cfg);
	sdp_config_free(edge);
}

static void test_malformed(void)
{
	/* @what: NULL for a good line, else a word the message must hold. */
	static const struct {
		const char *line;
		const char *what;
	} lines[] = {
		{ "use sdp server * 10.0.0.1:1", NULL },
		{ "frobnicate sdp server * *:*", "unknown keyword 'frobnicate'" },
		{ "use sdp server *", "missing ADDRESS:PORTS" },
		{ "use sdp", "missing server|listen|client|connect" },
		{ "use", "missing tcp|sdp|both" },
		{ "use sdp server * 1.2.3.4:80 extra", "unexpected 'extra'" },
		{ "use sdp server * 1.2.3.256:80", "bad address '1.2.3.256'" },
		{ "use sdp server * 1.2.3:80", "bad address" },
		{ "use sdp server * 1.2.3.0/33:80", "prefix '33' out of range" },
		{ "use sdp server * [::1]/129:80", "prefix '129' out of range" },
		{ "use sdp server * ::1/129:80", "prefix '129' out of range" },
		{ "use sdp server * 1.2.3.0/:80", "bad prefix" },
		{ "use sdp server * 1.2.3.0/x:80", "bad prefix" },
		{ "use sdp server * 1.2.3.0/-1:80", "bad prefix" },
		{ "use sdp client * 10.0.0.2:2", NULL },
		{ "use sdp server * [::1:80", "no ']'" },
		{ "use sdp server * [::1]x:80", "after ']'" },
		{ "use sdp server * [1.2.3.4]:80", "bad address" },
		{ "use sdp server * */8:80", "bad address" },
		{ "use sdp server * ::1", "bad address" },
		{ "use sdp server * 1.2.3.4", "missing ':PORTS'" },
		{ "use sdp server * 1.2.3.4:", "missing port" },
		{ "use sdp server * 1.2.3.4:65536", "port out of range" },
		{ "use sdp server * 1.2.3.4:99999999999999999999", "port out of range" },
		{ "use sdp server * 1.2.3.4:1-65536", "port out of range" },
		{ "use sdp server * 1.2.3.4:90-80", "bad port range '90-80'" },
		{ "use sdp server * 1.2.3.4:8a", "bad port '8a'" },
		{ "use sdp server * 1.2.3.4:-5", "bad port" },
		{ "use sdp server * 1.2.3.4:5-", "bad port" },
		{ "use sdp server * 1.2.3.4:1-2-3", "bad port" },
		{ "use sdp server * 1.2.3.4:**", "bad port" },
		{ "use fast server * *:*", "unknown 'fast'" },
		{ "use sdp bogus * *:*", "unknown role 'bogus'" },
		{ "Use sdp server * *:*", "unknown keyword 'Use'" },
		{ "use SDP server * *:*", "unknown 'SDP'" },
		{ "use sdp Server * *:*", "unknown role 'Server'" },
		{ "log", "missing 'destination' or 'min-level'" },
		{ "log destination", "missing stderr, syslog or file PATH after 'destination'" },
		{ "log destination file", "missing PATH" },
		{ "log destination tty", "unknown destination 'tty'" },
		{ "log destination stderr extra", "unexpected 'extra'" },
		{ "log min-level", "missing level after 'min-level'" },
		{ "log min-level 0", "bad min-level '0'" },
		{ "log min-level 10", "bad min-level '10'" },
		{ "log min-level x", "bad min-level 'x'" },
		{ "log min-level 1 min-level 2", "given twice" },
		{ "log min-level 1 destination bogus", "unknown destination" },
		{ "log destination stderr destination syslog", "given twice" },
		{ "log destination file /x min-level 1 extra", "unexpected 'extra'" },
		{ "log bogus", "unexpected 'bogus'" },
		{ "log destination file /nonexistent-dir/x.log min-level 1",
		  "cannot open log file '/nonexistent-dir/x.log'" },
		{ "use sdp server * 1.2.3.4:* # comment", NULL },
	};
	const int n = sizeof(lines) / sizeof(lines[0]);
	char text[8192], want[64];
	struct sdp_config *cfg;
	int i, m = 0, good = 0, bad = 0;
	size_t off = 0;

	for (i = 0; i < n; i++) {
		off += snprintf(text + off, sizeof(text) - off, "%s\n",
				lines[i].line);
		if (lines[i].what)
			bad++;
		else
			good++;
	}

	cap_start();
	cfg = parse(text);
	CHECK(sdp_config_rule_count(cfg) == good,
	      "malformed: the %d good lines around %d bad ones load (%d rules)",
	      good, bad, sdp_config_rule_count(cfg));
	CHECK(n_cap == bad, "malformed: one message per bad line (%d, want %d)",
	      n_cap, bad);
	for (i = 0; i < n; i++) {
		if (!lines[i].what)
			continue;
		snprintf(want, sizeof(want), "t.conf:%d: ", i + 1);
		CHECK(m < n_cap && m < CAP_MAX &&
		      cap[m].level == SDP_LOG_ERR &&
		      !strncmp(cap[m].msg, want, strlen(want)) &&
		      strstr(cap[m].msg, lines[i].what),
		      "malformed: '%s' reported as %s...%s (got \"%s\")",
		      lines[i].line, want, lines[i].what,
		      m < n_cap && m < CAP_MAX ? cap[m].msg : "(none)");
		m++;
	}
	EXPECT(cfg, S, "p", "10.0.0.1", 1, SDP);
	EXPECT(cfg, C, "p", "10.0.0.2", 2, SDP);
	EXPECT(cfg, S, "p", "1.2.3.4", 80, SDP);
	EXPECT(cfg, S, "p", "9.9.9.9", 80, TCP);
	CHECK(sdp_log_get_min_level() == SDP_LOG_MIN_LEVEL_DEFAULT &&
	      sdp_log_get_destination() == SDP_LOG_TO_STDERR,
	      "malformed: bad log lines change nothing");
	sdp_config_free(cfg);
}

static void test_comments(void)
{
	struct sdp_config *cfg;

	cap_start();
	cfg = parse("# a comment\n"
		    "\n"
		    "   \n"
		    "\t\n"
		    "  # indented comment use sdp server * *:*\n"
		    "use\tsdp \t server\t*\t10.0.0.1:80   # trailing\n"
		    "\tuse both client * *:*#tight\r\n"
		    "use sdp server * 10.0.0.2:80#\n"
		    "#use sdp server * *:*\n"
		    "use sdp server * 10.0.0.3:80 # use tcp extra\n");
	CHECK(cap_errors() == 0, "comments: no errors reported");
	CHECK(sdp_config_rule_count(cfg) == 4,
	      "comments: 4 rules among comments, blank lines and tabs (%d)",
	      sdp_config_rule_count(cfg));
	EXPECT(cfg, S, "p", "10.0.0.1", 80, SDP);
	EXPECT(cfg, S, "p", "10.0.0.2", 80, SDP);
	EXPECT(cfg, S, "p", "10.0.0.3", 80, SDP);
	EXPECT(cfg, S, "p", "10.0.0.4", 80, TCP);
	EXPECT(cfg, C, "p", "10.0.0.4", 80, BOTH);
	sdp_config_free(cfg);

	cfg = parse("");
	CHECK(sdp_config_rule_count(cfg) == 0 && n_cap == 0,
	      "comments: empty text, no rules, no messages");
	EXPECT(cfg, S, "p", "10.0.0.1", 80, TCP);
	sdp_config_free(cfg);
}

static char tmpdir[PATH_MAX];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) == EOF || fclose(f)) {
		fprintf(stderr, "test bug: cannot write %s\n", path);
		exit(2);
	}
}

/* The contents of @path, at most @size - 1 bytes; "" if none. */
static const char *read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	if (fd >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* The descriptor of ours that is open on @path, or -1. */
static int fd_of(const char *path)
{
	char target[PATH_MAX];
	struct dirent *d;
	int fd = -1;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		ssize_t n;

		if (d->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(dir), d->d_name, target,
			       sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, path)) {
			fd = atoi(d->d_name);
			break;
		}
	}
	closedir(dir);
	return fd;
}

static void test_files(void)
{
	char path[PATH_MAX + 32], text[2 * PATH_MAX];
	struct sdp_config *cfg;

	cap_start();
	cfg = sdp_config_load("/nonexistent-dir/libsdp.conf");
	CHECK(sdp_config_rule_count(cfg) == 0, "file: missing file, no rules");
	EXPECT(cfg, S, "p", "10.0.0.1", 80, SDP_CONFIG_DEFAULT_USE);
	EXPECT(cfg, C, "p", "::1", 80, SDP_CONFIG_DEFAULT_USE);
	CHECK(SDP_CONFIG_DEFAULT_USE == SDP_USE_TCP, "file: the default is tcp");
	CHECK(n_cap == 0, "file: a missing file is not reported");
	sdp_config_free(cfg);

	snprintf(path, sizeof(path), "%s/libsdp.conf", tmpdir);
	write_file(path, "use sdp server * *:1\n"
			 "use sdp server * *:bad\n"
			 "use sdp client * *:2\n");
	cfg = sdp_config_load(path);
	snprintf(text, sizeof(text), "%s:2: ", path);
	CHECK(sdp_config_rule_count(cfg) == 2, "file: two rules load");
	CHECK(n_cap == 1 && !strncmp(cap[0].msg, text, strlen(text)),
	      "file: bad line reported as %s (got \"%s\")", text,
	      n_cap ? cap[0].msg : "");
	EXPECT(cfg, S, "p", "1.1.1.1", 1, SDP);
	EXPECT(cfg, C, "p", "1.1.1.1", 2, SDP);
	sdp_config_free(cfg);

	cap_start();
	cfg = sdp_config_load(tmpdir);	/* a directory cannot be read */
	CHECK(sdp_config_rule_count(cfg) == 0 && cap_errors() == 1,
	      "file: an unreadable file is reported, no rules");
	sdp_config_free(cfg);

	unsetenv(SDP_CONFIG_PATH_ENV);
	CHECK(!strcmp(sdp_config_path(), "/etc/libsdp.conf"),
	      "file: default path /etc/libsdp.conf");
	setenv(SDP_CONFIG_PATH_ENV, path, 1);
	CHECK(!strcmp(sdp_config_path(), path), "file: $%s",
	      SDP_CONFIG_PATH_ENV);
	setenv(SDP_CONFIG_PATH_ENV, "", 1);
	CHECK(!strcmp(sdp_config_path(), SDP_CONFIG_DEFAULT_PATH),
	      "file: empty $%s means the default", SDP_CONFIG_PATH_ENV);
	unsetenv(SDP_CONFIG_PATH_ENV);
}

static void test_log(void)
{
	char a[PATH_MAX + 32], b[PATH_MAX + 32], c[PATH_MAX + 32];
	char out[PATH_MAX + 32], err[PATH_MAX + 32];
	char text[2 * PATH_MAX], buf[4096];
	struct sdp_config *cfg;
	int fd, save1, save2;

	snprintf(a, sizeof(a), "%s/a.log", tmpdir);
	snprintf(b, sizeof(b), "%s/b.log", tmpdir);
	snprintf(c, sizeof(c), "%s/c.log", tmpdir);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);

	sdp_log_reset();
	snprintf(text, sizeof(text), "log destination file %s min-level 1\n", a);
	cfg = parse(text);
	sdp_config_free(cfg);
	CHECK(sdp_log_get_destination() == SDP_LOG_TO_FILE &&
	      sdp_log_get_min_level() == 1,
	      "log: destination file, min-level 1");
	sdp_log(SDP_LOG_DEBUG, "debug %s", "one");
	errno = 1234;
	sdp_log(SDP_LOG_ERR, "error %d", 2);
	CHECK(errno == 1234, "log: sdp_log keeps errno");
	read_file(a, buf, sizeof(buf));
	CHECK(strstr(buf, "debug one\n") && strstr(buf, "error 2\n") &&
	      !strncmp(buf, "libsdp[", 7),
	      "log: messages written to the file");
	fd = fd_of(a);
	CHECK(fd > 2, "log: file descriptor %d is above 2", fd);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_APPEND) &&
	      (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	      "log: file opened with O_APPEND and O_CLOEXEC");

	cfg = parse("log min-level 9\n");
	sdp_config_free(cfg);
	sdp_log(SDP_LOG_WARN, "hidden warning");
	sdp_log(SDP_LOG_ERR, "shown error");
	read_file(a, buf, sizeof(buf));
	CHECK(!strstr(buf, "hidden warning") && strstr(buf, "shown error"),
	      "log: min-level 9 keeps errors only");

	snprintf(text, sizeof(text), "log min-level 5 destination file %s\n", b);
	cfg = parse(text);
	sdp_config_free(cfg);
	sdp_log(SDP_LOG_INFO, "info to b");
	sdp_log(SDP_LOG_WARN, "warning to b");
	read_file(b, buf, sizeof(buf));
	CHECK(!strstr(buf, "info to b") && strstr(buf, "warning to b"),
	      "log: min-level 5 then destination file: warnings, not info");
	read_file(a, buf, sizeof(buf));
	CHECK(!strstr(buf, "to b"), "log: the earlier file gets nothing more");
	CHECK(fd_of(a) < 0, "log: the earlier file is closed");

	/* Appends; and never takes fd 1, even when stdout is closed. */
	write_file(c, "existing\n");
	fflush(stdout);
	save1 = dup(STDOUT_FILENO);
	close(STDOUT_FILENO);
	CHECK(sdp_log_set_destination(SDP_LOG_TO_FILE, c) == 0 &&
	      fd_of(c) > 2, "log: file not put on fd 1 with stdout closed");
	dup2(save1, STDOUT_FILENO);
	close(save1);
	sdp_log(SDP_LOG_ERR, "appended");
	read_file(c, buf, sizeof(buf));
	CHECK(!strncmp(buf, "existing\n", 9) && strstr(buf, "appended"),
	      "log: file is appended to");

	/* A file that cannot be opened changes nothing. */
	cap_start();
	sdp_log_set_destination(SDP_LOG_TO_FILE, c);
	sdp_log_set_min_level(4);
	cfg = parse("log min-level 2 destination file /nonexistent-dir/x\n");
	sdp_config_free(cfg);
	CHECK(cap_errors() == 1 && sdp_log_get_destination() == SDP_LOG_TO_FILE &&
	      sdp_log_get_min_level() == 4,
	      "log: unopenable file reported, nothing changed");

	/* stderr: fd 2 gets the message, fd 1 nothing. */
	sdp_log_reset();
	fflush(stdout);
	save1 = dup(STDOUT_FILENO);
	save2 = dup(STDERR_FILENO);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	dup2(fd, STDERR_FILENO);
	close(fd);
	sdp_log(SDP_LOG_ERR, "to stderr");
	sdp_log(SDP_LOG_WARN, "warning to stderr");
	sdp_log(SDP_LOG_INFO, "info to stderr");
	dup2(save1, STDOUT_FILENO);
	dup2(save2, STDERR_FILENO);
	close(save1);
	close(save2);
	read_file(out, buf, sizeof(buf));
	CHECK(!buf[0], "log: nothing written to stdout");
	read_file(err, buf, sizeof(buf));
	CHECK(strstr(buf, "to stderr\n") && strstr(buf, "warning to stderr") &&
	      !strstr(buf, "info to stderr"),
	      "log: default is stderr with warnings and errors");

	/* A long message is cut, not overflowed. */
	cap_start();
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	sdp_log(SDP_LOG_ERR, "%s", text);
	CHECK(n_cap == 1 && strlen(cap[0].msg) < SDP_LOG_MAX,
	      "log: long message cut to SDP_LOG_MAX");
	sdp_log_reset();

	unlink(a);
	unlink(b);
	unlink(c);
	unlink(out);
	unlink(err);
}

int main(void)
{
	char path[PATH_MAX + 32];
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/test_config.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}

	test_forms();
	test_roles();
	test_first_match();
	test_async();
	test_program();
	test_ipv4();
	test_ipv6();
	test_ports();
	test_malformed();
	test_comments();
	test_files();
	test_log();

	snprintf(path, sizeof(path), "%s/libsdp.conf", tmpdir);
	unlink(path);
	rmdir(tmpdir);

	printf("1..%d\n", n_test);
	printf("# %d passed, %d failed\n", n_test - n_fail, n_fail);
	return n_fail ? 1 : 0;
}
