// SPDX-License-Identifier: GPL-2.0
/*
 * sdpstat --why: for each TCP or SDP socket of some processes, whether it
 * is on SDP or on TCP, and why.
 *
 * What it reads, and from whom:
 *  - the process's descriptors (/proc/PID/fd: "socket:[INODE]");
 *  - SDP's sockets from the module's sock_diag (SDP_DIAG_ORIGIN: the
 *    socket's protocol, and for an IPPROTO_SDP socket whose connect went
 *    on by TCP, SDP's errno and TCP's socket);
 *  - TCP's sockets from /proc/PID/net/tcp and tcp6 (the process's own
 *    network namespace);
 *  - libsdp's record of each decision it took (userspace/libsdp/
 *    why_table.h), a memfd mapped in the process, read as a file through
 *    /proc/PID/map_files/ (root only), never through the process's
 *    memory: a hostile process cannot make sdpstat wait on a fault.
 * SDP's sockets are those of sdpstat's network namespace; a process that
 * sets its own name cannot write control characters to the terminal
 * (they print as '?').
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "sdpstat.h"
#include "../libsdp/why_table.h"

#define ON_SDP	1
#define ON_TCP	2

struct ent {
	uint64_t ino;
	int on;				/* ON_SDP or ON_TCP */
	int state;			/* TCP_* */
	int tp;				/* SDP: SDP_DIAG_TP_* */
	unsigned int lport;		/* host order */
	uint32_t proto;			/* SDP: SO_PROTOCOL */
	uint32_t fb_err;		/* SDP: went on by TCP, why */
	uint64_t fb_ino;		/* then: TCP's socket */
	int fd;				/* the process's descriptor */
	char local[64], peer[64];
};

struct ents {
	struct ent *v;
	size_t n, cap;
};

static struct ent *ents_add(struct ents *e)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 64;
		e->v = realloc(e->v, e->cap * sizeof(*e->v));
		if (!e->v)
			die("realloc");
	}
	memset(&e->v[e->n], 0, sizeof(e->v[0]));
	return &e->v[e->n++];
}

static const struct ent *ents_find(const struct ents *e, uint64_t ino)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		if (e->v[i].ino == ino)
			return &e->v[i];
	return NULL;
}

static void sdp_cb(const struct nlmsghdr *h, void *arg)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	const struct nlattr *tb[SDP_DIAG_MAX + 1];
	struct ent *x;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return;
	parse_attrs(h, tb);
	x = ents_add(arg);
	x->ino = m->idiag_inode;
	x->on = ON_SDP;
	x->state = m->idiag_state;
	x->lport = ntohs(m->id.idiag_sport);
	fmt_addr(x->local, sizeof(x->local), m->idiag_family,
		 m->id.idiag_src, m->id.idiag_sport);
	fmt_addr(x->peer, sizeof(x->peer), m->idiag_family, m->id.idiag_dst,
		 m->id.idiag_dport);
	if (tb[SDP_DIAG_INFO] && ATTR_LEN(tb[SDP_DIAG_INFO]) >= 1)
		x->tp = *(const __u8 *)ATTR_DATA(tb[SDP_DIAG_INFO]);
	if (tb[SDP_DIAG_ORIGIN]) {
		struct sdp_diag_origin o = { 0 };
		size_t n = ATTR_LEN(tb[SDP_DIAG_ORIGIN]);

		memcpy(&o, ATTR_DATA(tb[SDP_DIAG_ORIGIN]),
		       n < sizeof(o) ? n : sizeof(o));
		x->proto = o.protocol;
		x->fb_err = o.fb_err;
		x->fb_ino = o.fb_inode;
	}
}

/* SDP's sockets; false if the module is not loaded. */
static bool read_sdp(struct ents *e)
{
	int i, loaded = 0;

	for (i = 0; i < 2; i++) {
		struct sdp_diag_req req = {
			.sdiag_family = af_sdp[i],
			.sdiag_flags = SDP_DIAG_REQ_INFO | SDP_DIAG_REQ_ORIGIN,
		};
		int err = dump(&req, sdp_cb, e);

		if (err == -EINVAL) {	/* a module without SDP_DIAG_ORIGIN */
			req.sdiag_flags &= ~SDP_DIAG_REQ_ORIGIN;
			err = dump(&req, sdp_cb, e);
		}
		if (err == -ENOENT)
			continue;
		if (err) {
			errno = -err;
			die("sock_diag");
		}
		loaded++;
	}
	return loaded;
}

/* "0100007F:1F90" (v4) or 32 hex digits and a port (v6), as procfs
 * prints a TCP socket's address.
 */
static void proc_addr(char *out, size_t len, const char *hex, bool v6,
		      unsigned int *port)
{
	uint32_t w[4] = { 0 };
	char ip[INET6_ADDRSTRLEN];
	int i, nw = v6 ? 4 : 1;

	for (i = 0; i < nw; i++)
		if (sscanf(hex + 8 * i, "%8x", &w[i]) != 1)
			w[i] = 0;
	*port = (unsigned int)strtoul(hex + 8 * nw + 1, NULL, 16);
	inet_ntop(v6 ? AF_INET6 : AF_INET, w, ip, sizeof(ip));
	if (*port)
		snprintf(out, len, v6 ? "[%s]:%u" : "%s:%u", ip, *port);
	else
		snprintf(out, len, v6 ? "[%s]:*" : "%s:*", ip);
}

/* TCP's sockets in @pid's network namespace. */
static void read_tcp(struct ents *e, int pid)
{
	static const char *const name[2] = { "tcp", "tcp6" };
	char path[64], line[512], la[64], ra[64];
	unsigned int st, rport;
	unsigned long long ino;
	int i;

	for (i = 0; i < 2; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, name[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			struct ent *x;

			if (sscanf(line, " %*d: %63s %63s %x %*s %*s %*s %*u %*u %llu",
				   la, ra, &st, &ino) != 4 || !ino)
				continue;
			x = ents_add(e);
			x->ino = ino;
			x->on = ON_TCP;
			x->state = st;
			proc_addr(x->local, sizeof(x->local), la, i, &x->lport);
			proc_addr(x->peer, sizeof(x->peer), ra, i, &rport);
		}
		fclose(f);
	}
}

/* libsdp in @pid: whether it is loaded, and its record (NULL: none, or
 * not readable: *@denied).  The record is a memfd's mapping, named so,
 * shared, writable and of the table's size; read as the file it is.
 */
static struct sdp_why_table *read_libsdp(int pid, bool *loaded,
					 bool *denied)
{
	unsigned long long start = 0, end = 0, lo, hi;
	size_t size = (sizeof(struct sdp_why_table) + 4095) & ~4095ul;
	struct sdp_why_table *t;
	char path[96], line[512], perm[8], name[256];
	struct statfs sf;
	FILE *f;
	int fd;

	*loaded = *denied = false;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "/libsdp.so"))
			*loaded = true;
		name[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255[^\n]",
			   &lo, &hi, perm, name) < 3)
			continue;
		if (!start && !strcmp(name, "/memfd:" SDP_WHY_NAME " (deleted)") &&
		    !strcmp(perm, "rw-s") && hi - lo == size) {
			start = lo;
			end = hi;
		}
	}
	fclose(f);
	if (!start)
		return NULL;
	t = malloc(sizeof(*t));
	if (!t)
		die("malloc");
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
		 start, end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstatfs(fd, &sf) || sf.f_type != TMPFS_MAGIC ||
	    pread(fd, t, sizeof(*t), 0) != (ssize_t)sizeof(*t) ||
	    t->magic != SDP_WHY_MAGIC || t->slots != SDP_WHY_SLOTS) {
		*denied = fd < 0 && (errno == EACCES || errno == EPERM);
		if (fd >= 0)
			close(fd);
		free(t);
		return NULL;
	}
	close(fd);
	return t;
}

static const struct sdp_why_rec *why_find(const struct sdp_why_table *t,
					  uint64_t ino)
{
	int i;

	for (i = 0; t && i < SDP_WHY_SLOTS; i++)
		if (t->rec[i].ino == ino)
			return &t->rec[i];
	return NULL;
}

/* Why SDP's connect that failed with @err did not keep the socket. */
static const char *err_why(int err)
{
	switch (err) {
	case ECONNREFUSED:
	case ECONNRESET:
		return "the peer refused SDP (no SDP listener there)";
	case ENODEV:
	case ENXIO:
	case EADDRNOTAVAIL:
	case ENETDOWN:
	case ENETUNREACH:
	case EHOSTUNREACH:
		return "no RDMA route to the peer";
	case ETIMEDOUT:
		return "SDP's connect timed out";
	case EAFNOSUPPORT:
	case EPROTONOSUPPORT:
	case ESOCKTNOSUPPORT:
		return "no SDP socket could be made (is ib_sdp loaded?)";
	default:
		return "SDP's connect failed";
	}
}

static int sdp_local_param(void)
{
	FILE *f = fopen("/sys/module/ib_sdp/parameters/sdp_local", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Is @peer ("ADDR:PORT" or "[ADDR]:PORT") an address of this host? */
static bool peer_is_local(const char *peer)
{
	struct sockaddr_storage ss = { 0 };
	char ip[INET6_ADDRSTRLEN + 2], *end;
	socklen_t len;
	bool local;
	int fd;

	snprintf(ip, sizeof(ip), "%s", peer[0] == '[' ? peer + 1 : peer);
	end = strrchr(ip, peer[0] == '[' ? ']' : ':');
	if (!end)
		return false;
	*end = '\0';
	if (inet_pton(AF_INET, ip, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, ip,
			     &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		len = sizeof(struct sockaddr_in6);
	} else {
		return false;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	local = !bind(fd, (struct sockaddr *)&ss, len);
	close(fd);
	return local;
}

/* The text of libsdp's record @r for the socket @x. */
static void rec_why(char *out, size_t len, const struct sdp_why_rec *r,
		    const struct ent *x)
{
	char rule[64] = "";
	const char *what;

	if (r->line)
		snprintf(rule, sizeof(rule), " (libsdp.conf line %u)", r->line);
	switch (r->why) {
	case SDP_WHY_RULE_SDP:
		what = r->line ? "libsdp: a \"use sdp\" rule" :
		       "libsdp: SIMPLE_LIBSDP or LIBSDP_DEFAULT says sdp";
		break;
	case SDP_WHY_BOTH_SDP:
		what = "libsdp: a \"use both\" rule, and the peer took SDP";
		break;
	case SDP_WHY_BOTH_LISTEN:
		what = "libsdp: a \"use both\" listener, on TCP and SDP";
		break;
	case SDP_WHY_ACCEPT_SDP:
		what = "libsdp: accepted by SDP on a \"use both\" listener";
		break;
	case SDP_WHY_NO_RULE:
		what = "libsdp: no rule matched (the default is tcp)";
		break;
	case SDP_WHY_RULE_TCP:
		what = "libsdp: a \"use tcp\" rule";
		break;
	case SDP_WHY_ACCEPT_TCP:
		what = "libsdp: accepted by TCP on a \"use both\" listener: the client spoke TCP";
		break;
	case SDP_WHY_TWIN_FAILED:
		snprintf(out, len, "libsdp: a \"use both\" listener, but its SDP side failed: %s (%s)%s",
			 err_why(r->err), strerror(r->err), rule);
		return;
	case SDP_WHY_NO_SOCKET:
	case SDP_WHY_REFUSED:
	case SDP_WHY_NO_ROUTE:
	case SDP_WHY_TIMEOUT:
	case SDP_WHY_FAILED:
		snprintf(out, len, "libsdp: a \"use both\" rule, but %s (%s)%s%s",
			 err_why(r->err), strerror(r->err), rule,
			 r->err == ENODEV && !sdp_local_param() &&
			 peer_is_local(x->peer) ?
			 "; the local transport is off (sdp_local=0)" : "");
		return;
	default:
		what = "libsdp: an unknown record";
		break;
	}
	snprintf(out, len, "%s%s", what, rule);
}

/* A connection libsdp has no record of, accepted on a listener of the
 * same process and port that has one (or on an IPPROTO_SDP listener's TCP
 * side): the listener's reason.  False if there is none.
 */
static bool listener_why(char *out, size_t len, const struct ent *x,
			 const struct ents *own, const struct sdp_why_table *t)
{
	const struct sdp_why_rec *r;
	size_t i;
	int n;

	for (i = 0; x->state != TCP_LISTEN && i < own->n; i++) {
		const struct ent *l = &own->v[i];

		if (l->state != TCP_LISTEN || l->lport != x->lport)
			continue;
		if (x->on == ON_TCP && l->on == ON_SDP &&
		    l->proto != IPPROTO_TCP && !why_find(t, l->ino)) {
			snprintf(out, len, "accepted by the TCP side of an IPPROTO_SDP listener: the client spoke TCP");
			return true;
		}
		r = why_find(t, l->ino);
		if (!r || l->on != x->on)
			continue;
		n = snprintf(out, len, "accepted on %s listener; ",
			     x->on == ON_SDP ? "an SDP" : "a TCP");
		rec_why(out + n, len - n, r, l);
		return true;
	}
	return false;
}

/* A TCP socket libsdp has no record of: accepted on a listener, or not
 * libsdp's at all.
 */
static void tcp_why(char *out, size_t len, const struct ent *x,
		    const struct ents *own, const struct sdp_why_table *t,
		    bool libsdp, bool denied)
{
	if (listener_why(out, len, x, own, t))
		return;
	if (denied)
		snprintf(out, len, "libsdp is loaded, but its record cannot be read (run as root)");
	else if (libsdp)
		snprintf(out, len, "libsdp took no decision for it (made before libsdp applied its rules, or not its socket)");
	else
		snprintf(out, len, "not moved: libsdp is not loaded in the process, and no BPF policy made the socket IPPROTO_SDP");
}

static void sdp_why(char *out, size_t len, const struct ent *x,
		    const struct ents *own, const struct sdp_why_table *t)
{
	const struct sdp_why_rec *r = why_find(t, x->ino);

	if (x->fb_err) {
		snprintf(out, len, "IPPROTO_SDP's connect went on by TCP: %s (%s)%s",
			 err_why(x->fb_err), strerror(x->fb_err),
			 x->fb_err == ENODEV && !sdp_local_param() &&
			 peer_is_local(x->peer) ?
			 "; the local transport is off (sdp_local=0)" : "");
		return;
	}
	if (r) {
		rec_why(out, len, r, x);
		return;
	}
	if (listener_why(out, len, x, own, t))
		return;
	if (x->proto == IPPROTO_TCP)
		snprintf(out, len, "AF_INET_SDP: the program asked for SDP");
	else if (x->state == TCP_LISTEN)
		snprintf(out, len, "IPPROTO_SDP (a BPF policy or the program); with ipproto_fallback its TCP side takes TCP's clients");
	else
		snprintf(out, len, "IPPROTO_SDP: a BPF policy or the program asked for it");
}

static bool pid_wanted(int pid, const char *comm, char **targets, int n)
{
	int i;

	if (!n)
		return true;
	for (i = 0; i < n; i++) {
		char *end;
		long v = strtol(targets[i], &end, 10);

		if (*targets[i] && !*end ? v == pid : !strcmp(targets[i], comm))
			return true;
	}
	return false;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else if (c == '"' || c == '\\')
			printf("\\%c", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* A name the process chose, printable: control characters as '?'. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static int shown;

static void show(int pid, const char *comm, const struct ent *x,
		 const struct ent *tcp, const char *why, bool json)
{
	int fd = x->fd;
	const char *on, *st;
	int state = tcp ? tcp->state : x->state;

	if (x->on == ON_SDP && !x->fb_err)
		on = x->state == TCP_LISTEN ? "SDP" :
		     x->tp == SDP_DIAG_TP_LOCAL ? "SDP/local" :
		     x->tp == SDP_DIAG_TP_RDMA ? "SDP/rdma" : "SDP";
	else
		on = "TCP";
	st = state >= 0 && state <= TCP_CLOSING && state_name[state] ?
	     state_name[state] : "?";
	if (json) {
		printf("%s{\"pid\":%d,\"program\":", shown ? "," : "", pid);
		json_str(comm);
		printf(",\"fd\":%d,\"on\":\"%s\",\"state\":\"%s\",\"local\":\"%s\",\"peer\":\"%s\",\"why\":",
		       fd, on, st, (tcp ? tcp : x)->local, (tcp ? tcp : x)->peer);
		json_str(why);
		printf("}");
	} else {
		printf("%-7d %-15s %4d %-9s %-10s %-24s %-24s %s\n", pid, comm,
		       fd, on, st, (tcp ? tcp : x)->local,
		       (tcp ? tcp : x)->peer, why);
	}
	shown++;
}

/* Every TCP and SDP socket of @pid, with why; false if its descriptors
 * cannot be read (another user's, and not root).
 */
static bool why_pid(int pid, const char *comm, const struct ents *sdp,
		    bool json)
{
	struct ents tcp = { 0 }, own = { 0 };
	char path[64], link[64], fdp[64 + 256], why[512];
	struct sdp_why_table *t;
	bool libsdp, denied;
	struct dirent *d;
	DIR *dir;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return errno != EACCES && errno != EPERM;
	read_tcp(&tcp, pid);
	t = read_libsdp(pid, &libsdp, &denied);
	while ((d = readdir(dir))) {
		unsigned long long ino;
		const struct ent *x;
		ssize_t n;

		snprintf(fdp, sizeof(fdp), "%s/%s", path, d->d_name);
		n = readlink(fdp, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (sscanf(link, "socket:[%llu]", &ino) != 1)
			continue;
		x = ents_find(sdp, ino);
		if (!x)
			x = ents_find(&tcp, ino);
		if (!x)
			continue;
		*ents_add(&own) = *x;
		own.v[own.n - 1].fd = atoi(d->d_name);
	}
	closedir(dir);
	for (i = 0; i < own.n; i++) {
		const struct ent *x = &own.v[i], *tx = NULL;
		const struct sdp_why_rec *r = why_find(t, x->ino);

		if (x->on == ON_SDP) {
			if (x->fb_err)
				tx = ents_find(&tcp, x->fb_ino);
			sdp_why(why, sizeof(why), x, &own, t);
		} else if (r) {
			rec_why(why, sizeof(why), r, x);
		} else {
			tcp_why(why, sizeof(why), x, &own, t, libsdp, denied);
		}
		show(pid, comm, x, tx, why, json);
	}
	free(t);
	free(tcp.v);
	free(own.v);
	return true;
}

int why_main(int n, char **targets, bool json)
{
	struct ents sdp = { 0 };
	struct dirent *d;
	int denied = 0;
	DIR *proc;

	if (!read_sdp(&sdp))
		fprintf(stderr, "sdpstat: ib_sdp is not loaded: no socket is on SDP\n");
	proc = opendir("/proc");
	if (!proc)
		die("/proc");
	if (json)
		printf("{\"sockets\":[");
	else
		printf("%-7s %-15s %4s %-9s %-10s %-24s %-24s %s\n", "PID",
		       "Program", "FD", "On", "State", "Local", "Peer", "Why");
	while ((d = readdir(proc))) {
		char path[64], comm[32] = "";
		size_t len;
		int pid;
		FILE *f;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = atoi(d->d_name);
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* the name may hold a newline of its own: strip only procfs's */
		len = fread(comm, 1, sizeof(comm) - 1, f);
		comm[len] = '\0';
		if (len && comm[len - 1] == '\n')
			comm[len - 1] = '\0';
		fclose(f);
		if (!pid_wanted(pid, comm, targets, n))
			continue;
		if (!json)
			printable(comm);
		if (!why_pid(pid, comm, &sdp, json))
			denied++;
	}
	closedir(proc);
	if (json)
		printf("]}\n");
	if (denied)
		fprintf(stderr, "sdpstat: %d processes not shown: their descriptors are another user's (run as root)\n",
			denied);
	free(sdp.v);
	return 0;
}
