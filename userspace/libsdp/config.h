/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsdp: the configuration file (/etc/libsdp.conf) and its rules.
 *
 * The grammar is the old OFED libsdp's; one statement per line, '#' starts
 * a comment (anywhere on a line), blank lines are ignored, tokens are
 * separated by any whitespace and keywords are lowercase:
 *
 *   log [destination stderr|syslog|file PATH] [min-level N]
 *   use tcp|sdp|both [async] server|listen|client|connect PROGRAM ADDRESS[/PREFIX]:PORTS
 *
 * log	Configures log.h's facility at once, while the file is parsed
 *	(so later messages of the same file already go to the new
 *	destination). The clauses may come in either order, each at most
 *	once; a later log line overrides an earlier one. N is 1..9 (see
 *	log.h: 9 prints only errors, 1 everything). A file that cannot be
 *	opened is an error and the whole line is ignored.
 *
 * use	A rule. "async" (after sdp or both) asks for AZ-SDP on the
 *	socket's blocking sends (async.c), as LIBSDP_ASYNC=1 does for
 *	every SDP socket. "server" and "listen" are synonyms: such rules answer
 *	lookups of role SDP_ROLE_SERVER (bind/listen). "client" and
 *	"connect" are synonyms: such rules answer SDP_ROLE_CLIENT lookups
 *	(connect). The two sets are kept apart: a server rule never answers
 *	a client lookup and vice versa. Within a role the first matching
 *	rule, in file order, wins.
 *
 *	PROGRAM	an fnmatch(3) pattern (no flags) matched against the
 *		program name, the executable's basename as in
 *		program_invocation_short_name; "*" matches any program.
 *	ADDRESS	"*" (any address of either family), an IPv4 address or an
 *		IPv6 address, bare or in brackets ("::1" or "[::1]"), with
 *		an optional /PREFIX (0..32 for IPv4, 0..128 for IPv6; the
 *		full length without one); with brackets the prefix follows
 *		them: "[fe80::]/64". ADDRESS is split from PORTS at the last
 *		colon, so "::1:80" is address ::1, port 80.
 *	PORTS	"*", N or N-M with 0 <= N <= M <= 65535.
 *
 *	Families: an IPv4 rule matches an IPv4 address and also an
 *	IPv4-mapped IPv6 address (::ffff:a.b.c.d), compared by its IPv4
 *	part, since a program that uses mapped addresses on an IPv6 socket
 *	must still follow the IPv4 rules. An IPv6 rule matches only IPv6
 *	addresses (mapped ones compared as IPv6), never an AF_INET address.
 *	The wildcard addresses 0.0.0.0 and :: are matched like any other
 *	address: "*", 0.0.0.0/0 or "::" match them, 10.0.0.0/8 does not.
 *
 * A malformed line (unknown keyword, missing field, bad address, prefix
 * out of range, bad port or range, extra token, ...) is reported through
 * sdp_log() at SDP_LOG_ERR as "FILE:LINE: message" and ignored; the rest
 * of the file still loads.
 *
 * When no rule matches, and when there is no configuration file, the
 * answer is SDP_CONFIG_DEFAULT_USE: tcp, so that a program is left
 * untouched unless a rule says otherwise.
 *
 * A loaded configuration is never modified, so sdp_config_match() may be
 * called from any number of threads at once. Nothing here writes to stdout,
 * uses socket calls or runs constructors.
 */
#ifndef SDP_CONFIG_H
#define SDP_CONFIG_H

#include <stdbool.h>
#include <sys/socket.h>

enum sdp_use {
	SDP_USE_TCP,
	SDP_USE_SDP,
	SDP_USE_BOTH,
};

enum sdp_role {
	SDP_ROLE_SERVER,	/* "server" or "listen": bind() and listen() */
	SDP_ROLE_CLIENT,	/* "client" or "connect": connect() */
};

/* The answer when no rule matches or there is no configuration file. */
#define SDP_CONFIG_DEFAULT_USE	SDP_USE_TCP

/* The file read unless LIBSDP_CONFIG_FILE names another one. */
#define SDP_CONFIG_DEFAULT_PATH	"/etc/libsdp.conf"
#define SDP_CONFIG_PATH_ENV	"LIBSDP_CONFIG_FILE"

struct sdp_config;

/*
 * $LIBSDP_CONFIG_FILE if it is set and not empty (read with secure_getenv(),
 * so setuid and setgid programs ignore it), else SDP_CONFIG_DEFAULT_PATH.
 */
const char *sdp_config_path(void);

/*
 * Parse the file @path (NULL: sdp_config_path()). Never returns NULL: a missing file gives an empty
 * configuration (reported at SDP_LOG_DEBUG only), as does a file that
 * cannot be read or an out-of-memory failure (both reported at
 * SDP_LOG_ERR). Free the result with sdp_config_free().
 */
struct sdp_config *sdp_config_load(const char *path);

/* As sdp_config_load() on the text @text; @name is the file name used in
 * messages.
 */
struct sdp_config *sdp_config_parse(const char *text, const char *name);

void sdp_config_free(struct sdp_config *cfg);

/*
 * What to use for a socket of @role in program @prog (NULL means
 * program_invocation_short_name) at @addr, an AF_INET or AF_INET6 sockaddr
 * of @len bytes whose port, in network order as usual, is part of the
 * match. The first rule of @role that matches decides; with no match, or
 * an address that is NULL, too short or of another family, the answer is
 * SDP_CONFIG_DEFAULT_USE.
 */
enum sdp_use sdp_config_match(const struct sdp_config *cfg, enum sdp_role role,
			      const char *prog, const struct sockaddr *addr,
			      socklen_t len);

/* As sdp_config_match(), but -1 when no rule matches. */
int sdp_config_lookup(const struct sdp_config *cfg, enum sdp_role role,
		      const char *prog, const struct sockaddr *addr,
		      socklen_t len);

/* As sdp_config_lookup(); *@async (if not NULL) set to the matching
 * rule's "async" (left alone when none matches).
 */
int sdp_config_lookup_async(const struct sdp_config *cfg, enum sdp_role role,
			    const char *prog, const struct sockaddr *addr,
			    socklen_t len, bool *async);

/* As sdp_config_lookup_async(); *@line (if not NULL) set to the matching
 * rule's line in its file (left alone when none matches).
 */
int sdp_config_lookup_rule(const struct sdp_config *cfg, enum sdp_role role,
			   const char *prog, const struct sockaddr *addr,
			   socklen_t len, bool *async, unsigned int *line);

/* Does any rule say async? */
bool sdp_config_may_async(const struct sdp_config *cfg);

/* Does any rule say sdp or both? */
bool sdp_config_may_use_sdp(const struct sdp_config *cfg);

/* The number of rules of both roles that loaded (for tests). */
int sdp_config_rule_count(const struct sdp_config *cfg);

/* "tcp", "sdp" or "both" (for messages). */
const char *sdp_use_name(enum sdp_use use);

#endif /* SDP_CONFIG_H */
