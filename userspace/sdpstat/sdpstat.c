// SPDX-License-Identifier: GPL-2.0
/*
 * sdpstat - list SDP sockets and counters, as ss(8) and nstat(8) do for TCP.
 *
 * Everything comes from the ib_sdp module's NETLINK_SOCK_DIAG handler
 * (include/uapi/linux/sdp_diag.h), never from /proc: one dump per SDP
 * family for the sockets, one SDP_DIAG_REQ_COUNTERS request for the
 * counters.  Output: a table (as ss -t), details per connection (-i), the
 * counters (-s, -z), or JSON (-j); -w repeats every N seconds, printing
 * the counters' deltas after the first round.  --why (why.c) reads /proc
 * as well, for the processes' TCP sockets.  See sdpstat(8).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>
#include <linux/sdp_diag.h>

#include "sdpstat.h"

#define MAX_COUNTERS 256

struct opts {
	bool listen, all, info, summary, zeros, json, ext, why;
	int only_family;		/* 0, 4 or 6 */
	unsigned int watch, count;	/* seconds, rounds (0 = forever) */
	struct inet_diag_sockid id;	/* the filter */
	bool id_v6;			/* the filter's addresses are IPv6 */
};

struct counters {
	int n;
	char *name[MAX_COUNTERS];
	uint64_t val[MAX_COUNTERS];
};

int af_sdp[2] = { AF_INET_SDP, AF_INET6_SDP };

const char *const state_name[TCP_CLOSING + 1] = {
	[TCP_ESTABLISHED] = "ESTAB",	 [TCP_SYN_SENT] = "SYN-SENT",
	[TCP_SYN_RECV] = "SYN-RECV",	 [TCP_FIN_WAIT1] = "FIN-WAIT-1",
	[TCP_FIN_WAIT2] = "FIN-WAIT-2",	 [TCP_TIME_WAIT] = "TIME-WAIT",
	[TCP_CLOSE] = "UNCONN",		 [TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	[TCP_LAST_ACK] = "LAST-ACK",	 [TCP_LISTEN] = "LISTEN",
	[TCP_CLOSING] = "CLOSING",
};

const char *const tp_name[3] = {
	[SDP_DIAG_TP_NONE] = "-", [SDP_DIAG_TP_RDMA] = "rdma",
	[SDP_DIAG_TP_LOCAL] = "local",
};

void die(const char *what)
{
	fprintf(stderr, "sdpstat: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The family numbers the loaded module uses (module parameters). */
static void read_families(void)
{
	static const char *const p[2] = {
		"/sys/module/ib_sdp/parameters/af_inet_sdp",
		"/sys/module/ib_sdp/parameters/af_inet6_sdp",
	};
	int i, v;

	for (i = 0; i < 2; i++) {
		FILE *f = fopen(p[i], "r");

		if (f && fscanf(f, "%d", &v) == 1)
			af_sdp[i] = v;
		if (f)
			fclose(f);
	}
}

/*
 * One dump: @cb is called for each message.  Returns 0, or a negative
 * errno (-ENOENT: no handler for the family, the module not loaded).
 */
int dump(const struct sdp_diag_req *req,
	 void (*cb)(const struct nlmsghdr *, void *), void *arg)
{
	struct {
		struct nlmsghdr nlh;
		struct sdp_diag_req req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = 1,
		},
		.req = *req,
	};
	static char buf[65536] __attribute__((aligned(8)));
	int fd, ret = 0;
	bool done = false;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		die("socket(NETLINK_SOCK_DIAG)");
	if (send(fd, &msg, sizeof(msg), 0) < 0)
		die("send");
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("recv");
		}
		if (n == 0)
			break;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				ret = e->error;
				done = true;
				break;
			}
			cb(h, arg);
		}
	}
	close(fd);
	return ret;
}

/* The attributes after a struct inet_diag_msg, by type. */
void parse_attrs(const struct nlmsghdr *h, const struct nlattr **tb)
{
	const struct nlattr *a;
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(struct inet_diag_msg));

	memset(tb, 0, sizeof(*tb) * (SDP_DIAG_MAX + 1));
	a = (const void *)((const char *)NLMSG_DATA(h) +
			   NLMSG_ALIGN(sizeof(struct inet_diag_msg)));
	while (len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) &&
	       a->nla_len <= len) {
		int type = a->nla_type & NLA_TYPE_MASK;

		if (type <= SDP_DIAG_MAX)
			tb[type] = a;
		len -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

/* ---- counters ---- */

static void counters_cb(const struct nlmsghdr *h, void *arg)
{
	const struct nlattr *tb[SDP_DIAG_MAX + 1], *a;
	struct counters *c = arg;
	const char *names, *end;
	int len, i;

	parse_attrs(h, tb);
	if (!tb[SDP_DIAG_COUNTERS] || !tb[SDP_DIAG_COUNTER_NAMES])
		return;
	names = ATTR_DATA(tb[SDP_DIAG_COUNTER_NAMES]);
	end = names + ATTR_LEN(tb[SDP_DIAG_COUNTER_NAMES]);
	for (c->n = 0; names < end && c->n < MAX_COUNTERS; c->n++) {
		free(c->name[c->n]);
		c->name[c->n] = strndup(names, end - names);
		names += strlen(c->name[c->n]) + 1;
		c->val[c->n] = 0;
	}
	a = ATTR_DATA(tb[SDP_DIAG_COUNTERS]);
	len = ATTR_LEN(tb[SDP_DIAG_COUNTERS]);
	while (len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) &&
	       a->nla_len <= len) {
		i = a->nla_type - 1;
		if (i >= 0 && i < c->n && ATTR_LEN(a) == sizeof(uint64_t))
			memcpy(&c->val[i], ATTR_DATA(a), sizeof(uint64_t));
		len -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

static int read_counters(struct counters *c)
{
	struct sdp_diag_req req = {
		.sdiag_family = af_sdp[0],
		.sdiag_flags = SDP_DIAG_REQ_COUNTERS,
	};

	return dump(&req, counters_cb, c);
}

static void print_counters(const struct opts *o, const struct counters *now,
			   const struct counters *before)
{
	int i, shown = 0;

	if (o->json)
		printf("{\"counters\":{");
	for (i = 0; i < now->n; i++) {
		uint64_t v = now->val[i];

		/* the gauges: never a delta */
		if (before && i < before->n && strcmp(now->name[i], "BufferBytes") &&
		    strcmp(now->name[i], "ZcopyPageRefs"))
			v -= before->val[i];
		if (!v && !o->zeros)
			continue;
		if (o->json)
			printf("%s\"%s\":%llu", shown ? "," : "", now->name[i],
			       (unsigned long long)v);
		else
			printf("%-24s %llu\n", now->name[i],
			       (unsigned long long)v);
		shown++;
	}
	if (o->json)
		printf("}}\n");
}

/* ---- sockets ---- */

struct sock_ctx {
	const struct opts *o;
	int shown;
};

void fmt_addr(char *out, size_t len, int family, const __be32 *a,
	      __be16 port)
{
	char ip[INET6_ADDRSTRLEN];
	bool v6 = family == af_sdp[1];

	inet_ntop(v6 ? AF_INET6 : AF_INET, a, ip, sizeof(ip));
	if (!port)
		snprintf(out, len, v6 ? "[%s]:*" : "%s:*", ip);
	else
		snprintf(out, len, v6 ? "[%s]:%u" : "%s:%u", ip, ntohs(port));
}

static void print_info_text(const struct sdp_diag_info *di, const char *dev)
{
	static const char *const fl[] = {
		"zcopy", "keepalive", "nodelay", "cork", "stalled",
		"fin-sent", "fin-rcvd", "reset",
	};
	unsigned int i;

	printf("\t %s", tp_name[di->transport < 3 ? di->transport : 0]);
	if (dev)
		printf(" dev %s port %u", dev, di->port_num);
	printf(" credits tx %d rx %u peer_bufs %u bufs rx %ux%u tx %u msg_max %u stalls %u\n",
	       di->tx_credits, di->rx_credits, di->peer_bufs, di->rx_bufs,
	       di->rx_buf_size, di->tx_bufs, di->tx_msg_max, di->credit_stalls);
	printf("\t queued rx %u tx %u inflight %u msgs %u bytes mem %llu",
	       di->rx_queued, di->tx_queued, di->tx_inflight,
	       di->tx_inflight_bytes, (unsigned long long)di->buf_bytes);
	printf(" rtt %uus wrs %u age %ums retry %u rnr %u ka_probes %u\n",
	       di->srtt_us, di->tx_wrs, di->tx_wr_age_ms, di->retry_count,
	       di->rnr_retry, di->ka_probes);
	printf("\t bytes sent %llu recv %llu zc_src %llu/%llu",
	       (unsigned long long)di->bytes_sent,
	       (unsigned long long)di->bytes_received,
	       (unsigned long long)di->zc_src_read,
	       (unsigned long long)di->zc_src_sent);
	printf(" zc_write %llu zc_read %llu zc_sink %llu local_sink %llu segs %u/%u",
	       (unsigned long long)di->zc_write_sent,
	       (unsigned long long)di->zc_read_recv,
	       (unsigned long long)di->zc_sink_recv,
	       (unsigned long long)di->local_sink_recv,
	       di->data_segs_out, di->data_segs_in);
	printf(" zc thresh %u src %u/%u rx %u bounce %u", di->zc_thresh,
	       di->zc_src_count, di->zc_src_bytes, di->zc_rx_count,
	       di->zc_bounce);
	printf(" budget snd %u rcv %u spill %u", di->snd_budget,
	       di->rcv_budget, di->rx_spill);
	if (di->sk_err)
		printf(" err %s", strerror(di->sk_err));
	for (i = 0; i < sizeof(fl) / sizeof(fl[0]); i++)
		if (di->flags & (1u << i))
			printf(" %s", fl[i]);
	printf("\n");
}

#define J64(name) printf(",\"" #name "\":%llu", (unsigned long long)di->name)
#define J32(name) printf(",\"" #name "\":%lld", (long long)di->name)

static void print_info_json(const struct sdp_diag_info *di)
{
	printf(",\"info\":{\"flags\":%u", di->flags);
	J32(ka_probes); J32(port_num); J32(sk_err); J32(tx_credits);
	J32(rx_credits); J32(peer_bufs); J32(rx_bufs); J32(rx_buf_size);
	J32(tx_bufs); J32(tx_msg_max); J32(credit_stalls); J32(rx_queued);
	J32(tx_queued); J32(tx_inflight); J32(tx_inflight_bytes);
	J32(zc_thresh); J32(zc_src_count); J32(zc_src_bytes); J32(zc_rx_count);
	J32(zc_bounce); J32(tx_wrs); J32(tx_wr_age_ms); J32(retry_count);
	J32(rnr_retry); J32(srtt_us); J64(buf_bytes); J64(bytes_sent);
	J64(bytes_received); J64(zc_src_sent); J64(zc_src_read);
	J64(zc_write_sent); J64(zc_read_recv); J64(zc_sink_recv);
	J64(local_sink_recv); J32(data_segs_out); J32(data_segs_in);
	J32(snd_budget); J32(rcv_budget); J32(rx_spill);
	printf("}");
}

static void sock_cb(const struct nlmsghdr *h, void *arg)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	const struct nlattr *tb[SDP_DIAG_MAX + 1];
	struct sock_ctx *ctx = arg;
	const struct opts *o = ctx->o;
	struct sdp_diag_info di;
	const char *dev = NULL, *state;
	char local[64], peer[64];
	bool have_info = false;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return;
	parse_attrs(h, tb);
	if (tb[SDP_DIAG_INFO]) {
		size_t n = ATTR_LEN(tb[SDP_DIAG_INFO]);

		memset(&di, 0, sizeof(di));
		memcpy(&di, ATTR_DATA(tb[SDP_DIAG_INFO]),
		       n < sizeof(di) ? n : sizeof(di));
		have_info = true;
	}
	if (tb[SDP_DIAG_DEVICE])
		dev = ATTR_DATA(tb[SDP_DIAG_DEVICE]);
	state = m->idiag_state < sizeof(state_name) / sizeof(state_name[0]) &&
		state_name[m->idiag_state] ? state_name[m->idiag_state] : "?";
	fmt_addr(local, sizeof(local), m->idiag_family, m->id.idiag_src,
		 m->id.idiag_sport);
	fmt_addr(peer, sizeof(peer), m->idiag_family, m->id.idiag_dst,
		 m->id.idiag_dport);

	if (o->json) {
		printf("%s{\"family\":\"%s\",\"state\":\"%s\",\"recv_q\":%u,\"send_q\":%u",
		       ctx->shown ? "," : "",
		       m->idiag_family == af_sdp[1] ? "inet6_sdp" : "inet_sdp",
		       state, m->idiag_rqueue, m->idiag_wqueue);
		printf(",\"local\":\"%s\",\"peer\":\"%s\",\"uid\":%u,\"inode\":%u,\"cookie\":%llu",
		       local, peer, m->idiag_uid, m->idiag_inode,
		       (unsigned long long)m->id.idiag_cookie[0] |
		       (unsigned long long)m->id.idiag_cookie[1] << 32);
		if (have_info)
			printf(",\"transport\":\"%s\"",
			       tp_name[di.transport < 3 ? di.transport : 0]);
		if (dev)
			printf(",\"device\":\"%s\"", dev);
		if (have_info)
			print_info_json(&di);
		printf("}");
	} else {
		printf("%-10s %6u %6u %-40s %-40s %s", state, m->idiag_rqueue,
		       m->idiag_wqueue, local, peer,
		       have_info ? tp_name[di.transport < 3 ? di.transport : 0] : "");
		if (o->ext)
			printf(" uid:%u ino:%u sk:%llx", m->idiag_uid,
			       m->idiag_inode,
			       (unsigned long long)m->id.idiag_cookie[0] |
			       (unsigned long long)m->id.idiag_cookie[1] << 32);
		printf("\n");
		if (o->info && have_info && m->idiag_state != TCP_LISTEN)
			print_info_text(&di, dev);
	}
	ctx->shown++;
}

static uint32_t state_mask(const struct opts *o)
{
	if (o->all)
		return ~0u;
	if (o->listen)
		return 1u << TCP_LISTEN;
	return ~((1u << TCP_LISTEN) | (1u << TCP_CLOSE));
}

static int list_sockets(const struct opts *o)
{
	struct sock_ctx ctx = { .o = o };
	int i, err, loaded = 0;

	if (o->json)
		printf("{\"sockets\":[");
	else
		printf("%-10s %6s %6s %-40s %-40s %s\n", "State", "Recv-Q",
		       "Send-Q", "Local Address:Port", "Peer Address:Port",
		       "Path");
	for (i = 0; i < 2; i++) {
		struct sdp_diag_req req = {
			.sdiag_family = af_sdp[i],
			.sdiag_flags = SDP_DIAG_REQ_INFO | SDP_DIAG_REQ_DEVICE,
			.sdiag_states = state_mask(o),
			.id = o->id,
		};

		if (o->only_family && o->only_family != (i ? 6 : 4))
			continue;
		/* an IPv4 filter address means nothing to IPv6 sockets */
		if (i == 1 && !o->id_v6 && (o->id.idiag_src[0] || o->id.idiag_dst[0]))
			continue;
		if (i == 0 && o->id_v6)
			continue;
		err = dump(&req, sock_cb, &ctx);
		if (err == -ENOENT)
			continue;
		if (err) {
			errno = -err;
			die("sock_diag");
		}
		loaded++;
	}
	if (o->json)
		printf("]}\n");
	if (!loaded && !o->only_family) {
		fprintf(stderr, "sdpstat: no SDP sockets here: is ib_sdp loaded?\n");
		return 1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdpstat [-a|-l] [-i] [-e] [-4|-6] [-j] [-w SECONDS [-c COUNT]]\n"
		"               [--sport PORT] [--dport PORT] [--src ADDR] [--dst ADDR]\n"
		"       sdpstat -s [-z] [-j] [-w SECONDS [-c COUNT]]\n"
		"       sdpstat --why [-j] [PID|PROGRAM]...\n"
		"  -a all sockets, -l listeners only (default: connections)\n"
		"  -i connection details, -e uid, inode and cookie\n"
		"  -s counters (non-zero; -z all), deltas after the first round of -w\n"
		"  -j JSON, -w repeat every SECONDS, -c that many times\n"
		"  --why each TCP and SDP socket of the processes, on SDP or TCP and why\n");
}

static void parse_addr(struct opts *o, const char *s, __be32 *a)
{
	if (inet_pton(AF_INET, s, a) == 1)
		return;
	if (inet_pton(AF_INET6, s, a) == 1) {
		o->id_v6 = true;
		return;
	}
	fprintf(stderr, "sdpstat: bad address '%s'\n", s);
	exit(2);
}

static __be16 parse_port(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v <= 0 || v > 65535) {
		fprintf(stderr, "sdpstat: bad port '%s'\n", s);
		exit(2);
	}
	return htons((uint16_t)v);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "sport", required_argument, NULL, 'S' },
		{ "dport", required_argument, NULL, 'D' },
		{ "src", required_argument, NULL, 'A' },
		{ "dst", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ "why", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "alieszj46w:c:h", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->all = true;
			break;
		case 'l':
			o->listen = true;
			break;
		case 'i':
			o->info = true;
			break;
		case 'e':
			o->ext = true;
			break;
		case 's':
			o->summary = true;
			break;
		case 'z':
			o->zeros = true;
			break;
		case 'j':
			o->json = true;
			break;
		case '4':
			o->only_family = 4;
			break;
		case '6':
			o->only_family = 6;
			break;
		case 'w':
			o->watch = atoi(optarg);
			break;
		case 'c':
			o->count = atoi(optarg);
			break;
		case 'S':
			o->id.idiag_sport = parse_port(optarg);
			break;
		case 'D':
			o->id.idiag_dport = parse_port(optarg);
			break;
		case 'A':
			parse_addr(o, optarg, o->id.idiag_src);
			break;
		case 'B':
			parse_addr(o, optarg, o->id.idiag_dst);
			break;
		case 'W':
			o->why = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc && !o->why) {
		usage(stderr);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct counters c[2] = { 0 };
	struct opts o = { 0 };
	unsigned int round;
	int cur = 0, ret = 0;

	parse_opts(argc, argv, &o);
	read_families();
	if (o.why)
		return why_main(argc - optind, argv + optind, o.json);
	for (round = 0; !o.count || round < o.count; round++) {
		if (round)
			sleep(o.watch);
		if (o.watch && !o.json) {
			time_t t = time(NULL);
			char ts[64];

			strftime(ts, sizeof(ts), "%F %T", localtime(&t));
			printf("%s# %s\n", round ? "\n" : "", ts);
		}
		if (o.summary) {
			int err = read_counters(&c[cur]);

			if (err) {
				errno = -err;
				if (err == -ENOENT)
					fprintf(stderr, "sdpstat: is ib_sdp loaded?\n");
				die("sock_diag counters");
			}
			print_counters(&o, &c[cur], round ? &c[!cur] : NULL);
			cur = !cur;
		} else {
			ret = list_sockets(&o);
		}
		fflush(stdout);
		if (!o.watch)
			break;
	}
	return ret;
}
