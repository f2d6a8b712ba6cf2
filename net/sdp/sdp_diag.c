// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: socket diagnostics for the SDP families (NETLINK_SOCK_DIAG), what
 * sdpstat(8) reads.  The request and the attributes are in
 * include/uapi/linux/sdp_diag.h.
 *
 * A dump walks the requester's namespace's sockets (sdp_net.socks, the
 * xarray /proc/net/sdp reads) by id: the xarray's lock is held only to
 * find the next socket and take a reference on it, never while a message
 * is filled, so that thousands of sockets never hold the lock long.  The
 * id to resume at is in cb->args[0] when the skb is full.  A socket's
 * header is read without its lock (racy snapshots, as /proc and
 * inet_diag read); the attributes that read the connection (SDP_DIAG_INFO,
 * _TCPINFO, _DEVICE) take the socket lock, in process context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <net/ipv6.h>
#include <net/netlink.h>
#include <uapi/linux/sdp_diag.h>
#include <uapi/linux/tcp.h>

#include "sdp.h"

#define SDP_DIAG_REQ_ALL	(SDP_DIAG_REQ_INFO | SDP_DIAG_REQ_TCPINFO | \
				 SDP_DIAG_REQ_DEVICE | SDP_DIAG_REQ_SHUTDOWN | \
				 SDP_DIAG_REQ_ORIGIN | SDP_DIAG_REQ_COUNTERS)

/* @a as inet_diag gives an address: 4 bytes for AF_INET, 16 for AF_INET6
 * (an IPv4 address v4-mapped).
 */
static void sdp_diag_addr(const struct sockaddr_storage *a, bool v6,
			  __be16 *port, __be32 addr[4])
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)a;

	memset(addr, 0, 4 * sizeof(__be32));
	*port = 0;
	if (a->ss_family == AF_INET) {
		*port = sin->sin_port;
		if (v6)
			ipv6_addr_set_v4mapped(sin->sin_addr.s_addr,
					       (struct in6_addr *)addr);
		else
			addr[0] = sin->sin_addr.s_addr;
	} else if (a->ss_family == AF_INET6) {
		*port = sin6->sin6_port;
		if (v6)
			memcpy(addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
		else if (ipv6_addr_v4mapped(&sin6->sin6_addr))
			addr[0] = sin6->sin6_addr.s6_addr32[3];
	}
}

static void sdp_diag_header(struct sock *sk, struct inet_diag_msg *m,
			    struct user_namespace *user_ns)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	bool v6 = sdp_addr_family(sk) == AF_INET6;

	memset(m, 0, sizeof(*m));
	m->idiag_family = v6 ? sdp_af_inet6 : sdp_af_inet;
	m->idiag_state = READ_ONCE(sk->sk_state);
	sdp_diag_addr(&ssk->local, v6, &m->id.idiag_sport, m->id.idiag_src);
	sdp_diag_addr(&ssk->peer, v6, &m->id.idiag_dport, m->id.idiag_dst);
	m->id.idiag_if = READ_ONCE(sk->sk_bound_dev_if);
	sock_diag_save_cookie(sk, m->id.idiag_cookie);
	if (m->idiag_state == TCP_LISTEN) {
		m->idiag_rqueue = READ_ONCE(ssk->accept_count);
		m->idiag_wqueue = READ_ONCE(sk->sk_max_ack_backlog);
	} else {
		m->idiag_rqueue = sdp_rx_queued(ssk);
		m->idiag_wqueue = READ_ONCE(ssk->tx_queued) +
				  READ_ONCE(ssk->tx_inflight_bytes) +
				  READ_ONCE(ssk->zc_src_bytes);
	}
	m->idiag_uid = from_kuid_munged(user_ns, sock_i_uid(sk));
	m->idiag_inode = sock_i_ino(sk);
}

static bool sdp_diag_addr_match(const __be32 *want, const __be32 *have)
{
	static const __be32 any[4];

	return !memcmp(want, any, sizeof(any)) ||
	       !memcmp(want, have, sizeof(any));
}

static bool sdp_diag_match(const struct sdp_diag_req *req,
			   const struct inet_diag_msg *m)
{
	const struct inet_diag_sockid *f = &req->id;
	u32 c0 = f->idiag_cookie[0], c1 = f->idiag_cookie[1];

	if (req->sdiag_states && !(req->sdiag_states & (1U << m->idiag_state)))
		return false;
	if ((f->idiag_sport && f->idiag_sport != m->id.idiag_sport) ||
	    (f->idiag_dport && f->idiag_dport != m->id.idiag_dport))
		return false;
	if (!sdp_diag_addr_match(f->idiag_src, m->id.idiag_src) ||
	    !sdp_diag_addr_match(f->idiag_dst, m->id.idiag_dst))
		return false;
	if ((c0 || c1) && (c0 != INET_DIAG_NOCOOKIE || c1 != INET_DIAG_NOCOOKIE))
		return c0 == m->id.idiag_cookie[0] &&
		       c1 == m->id.idiag_cookie[1];
	return true;
}

static u8 sdp_diag_transport(struct sdp_sock *ssk)
{
	if (!test_bit(SDP_F_WAS_CONNECTED, &ssk->flags) &&
	    ssk->sk.sk_state != TCP_SYN_SENT && ssk->sk.sk_state != TCP_SYN_RECV)
		return SDP_DIAG_TP_NONE;
	return READ_ONCE(ssk->tp)->diag_kind;
}

static u16 sdp_diag_flags(struct sdp_sock *ssk)
{
	const unsigned long f = ssk->flags;
	u16 flags = 0;

	if (ssk->conn->peer_caps & (SDP_CAP_SRC_AVAIL | SDP_CAP_SINK_AVAIL))
		flags |= SDP_DIAG_F_ZCOPY;
	if (sock_flag(&ssk->sk, SOCK_KEEPOPEN))
		flags |= SDP_DIAG_F_KEEPALIVE;
	if (ssk->nodelay)
		flags |= SDP_DIAG_F_NODELAY;
	if (ssk->cork)
		flags |= SDP_DIAG_F_CORK;
	if (test_bit(SDP_F_WIN_STALL, &f))
		flags |= SDP_DIAG_F_TX_STALLED;
	if (test_bit(SDP_F_DISCONN_SENT, &f))
		flags |= SDP_DIAG_F_DISCONN_SENT;
	if (test_bit(SDP_F_DISCONN_RCVD, &f))
		flags |= SDP_DIAG_F_DISCONN_RCVD;
	if (test_bit(SDP_F_RESET, &f))
		flags |= SDP_DIAG_F_RESET;
	return flags;
}

/* SDP_DIAG_INFO of a locked socket. */
static void sdp_diag_info(struct sdp_sock *ssk, struct sdp_diag_info *di)
{
	const struct sdp_conn *conn = ssk->conn;
	const struct sdp_conn_stats *st = &conn->st;

	memset(di, 0, sizeof(*di));
	di->transport = sdp_diag_transport(ssk);
	di->ka_probes = conn->ka_probes;
	di->flags = sdp_diag_flags(ssk);
	di->port_num = conn->port_num;
	di->sk_err = READ_ONCE(ssk->sk.sk_err);
	if (di->transport == SDP_DIAG_TP_RDMA && sdp_conn_usable(ssk))
		di->tx_credits = sdp_tx_credits(conn);
	di->rx_credits = sdp_rx_adv(conn);
	di->peer_bufs = conn->remote_max_bufs;
	di->rx_bufs = conn->rx_size;
	di->rx_buf_size = conn->rcv_size;
	di->tx_bufs = conn->tx_bufs;
	di->tx_msg_max = conn->tx_msg_max;
	di->credit_stalls = st->credit_stalls;
	di->rx_queued = sdp_rx_queued(ssk);
	di->tx_queued = ssk->tx_queued;
	di->tx_inflight = conn->tx_inflight;
	di->tx_inflight_bytes = ssk->tx_inflight_bytes;
	di->zc_thresh = ssk->zcopy_thresh;
	di->zc_src_count = ssk->zc_src_count;
	di->zc_src_bytes = ssk->zc_src_bytes;
	di->zc_rx_count = conn->zc_rx_count;
	di->zc_bounce = conn->zc_bounce;
	di->tx_wrs = conn->tx_wrs;
	if (conn->tx_wrs)
		di->tx_wr_age_ms = jiffies_to_msecs(jiffies - conn->tx_wr_stamp);
	di->retry_count = conn->retry_count;
	di->rnr_retry = conn->rnr_retry;
	di->srtt_us = st->srtt_us;
	di->buf_bytes = atomic_long_read(&ssk->buf_bytes);
	di->bytes_sent = st->bytes_sent;
	di->bytes_received = st->bytes_received;
	di->zc_src_sent = conn->zc_adv_total;
	di->zc_src_read = conn->zc_read_total;
	di->zc_write_sent = st->zc_write_sent;
	di->zc_read_recv = st->zc_read_recv;
	di->zc_sink_recv = st->zc_sink_recv;
	di->local_sink_recv = st->local_sink_recv;
	di->data_segs_out = st->data_segs_out;
	di->data_segs_in = st->data_segs_in;
	di->snd_budget = sdp_snd_budget(ssk);
	di->rcv_budget = sdp_rcv_budget(ssk);
	di->rx_spill = conn->rx_spill;
}

/* SDP_DIAG_ORIGIN: the socket's protocol, and whether an IPPROTO_SDP
 * connect went on by TCP (sdp_fallback.c sets fb_err and fb_ino once the
 * file is TCP's; read without the lock, as they are written).
 */
static int sdp_diag_origin(struct sk_buff *skb, struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_diag_origin o = { .protocol = sk->sk_protocol };

	/* pairs with sdp_fb_to_file()'s release: then fb_ino is set */
	o.fb_err = smp_load_acquire(&ssk->fb_err);
	if (o.fb_err)
		o.fb_inode = READ_ONCE(ssk->fb_ino);
	return nla_put_64bit(skb, SDP_DIAG_ORIGIN, sizeof(o), &o,
			     SDP_DIAG_NONE);
}

/* The attributes that read the connection, under the socket lock. */
static int sdp_diag_conn_attrs(struct sk_buff *skb, struct sock *sk, u16 want)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_diag_info di;
	struct tcp_info ti;
	const char *dev = NULL;
	int err = 0;

	lock_sock(sk);
	if (want & SDP_DIAG_REQ_INFO)
		sdp_diag_info(ssk, &di);
	if (want & SDP_DIAG_REQ_TCPINFO)
		sdp_tcp_info(ssk, &ti);
	if ((want & SDP_DIAG_REQ_DEVICE) && test_bit(SDP_F_CONN, &ssk->flags) &&
	    ssk->conn->sdev)
		dev = dev_name(&ssk->conn->sdev->ibdev->dev);
	if (dev && nla_put_string(skb, SDP_DIAG_DEVICE, dev))
		err = -EMSGSIZE;
	release_sock(sk);
	if (err)
		return err;

	if ((want & SDP_DIAG_REQ_INFO) &&
	    nla_put_64bit(skb, SDP_DIAG_INFO, sizeof(di), &di, SDP_DIAG_NONE))
		return -EMSGSIZE;
	if ((want & SDP_DIAG_REQ_TCPINFO) &&
	    nla_put_64bit(skb, SDP_DIAG_TCPINFO, sizeof(ti), &ti, SDP_DIAG_NONE))
		return -EMSGSIZE;
	return 0;
}

/* One socket's message, if it matches; -EMSGSIZE when the skb is full. */
static int sdp_diag_one(struct sk_buff *skb, struct netlink_callback *cb,
			const struct sdp_diag_req *req, struct sock *sk)
{
	struct user_namespace *user_ns = sk_user_ns(NETLINK_CB(cb->skb).sk);
	u16 want = req->sdiag_flags;
	struct inet_diag_msg m;
	struct nlmsghdr *nlh;

	/* family 27 (28) lists AF_INET (AF_INET6) IPPROTO_SDP sockets too */
	if ((sdp_family_v6(sk) ? sdp_af_inet6 : sdp_af_inet) !=
	    req->sdiag_family)
		return 0;
	sdp_diag_header(sk, &m, user_ns);
	if (!sdp_diag_match(req, &m))
		return 0;

	nlh = nlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			cb->nlh->nlmsg_type, sizeof(m), NLM_F_MULTI);
	if (!nlh)
		return -EMSGSIZE;
	memcpy(nlmsg_data(nlh), &m, sizeof(m));
	if ((want & SDP_DIAG_REQ_SHUTDOWN) &&
	    nla_put_u8(skb, SDP_DIAG_SHUTDOWN, READ_ONCE(sk->sk_shutdown)))
		goto full;
	if ((want & SDP_DIAG_REQ_ORIGIN) && sdp_diag_origin(skb, sk))
		goto full;
	if ((want & (SDP_DIAG_REQ_INFO | SDP_DIAG_REQ_TCPINFO |
		     SDP_DIAG_REQ_DEVICE)) &&
	    sdp_diag_conn_attrs(skb, sk, want))
		goto full;
	nlmsg_end(skb, nlh);
	return 0;
full:
	nlmsg_cancel(skb, nlh);
	return -EMSGSIZE;
}

/* The next socket at or after @id with a reference taken, or NULL. */
static struct sdp_sock *sdp_diag_next(struct sdp_net *sn, unsigned long *id)
{
	struct sdp_sock *ssk;

	xa_lock_bh(&sn->socks);
	for (;;) {
		ssk = xa_find(&sn->socks, id, ULONG_MAX, XA_PRESENT);
		/* one at its last sock_put() is leaving the xarray */
		if (!ssk || refcount_inc_not_zero(&ssk->sk.sk_refcnt))
			break;
		++*id;
	}
	xa_unlock_bh(&sn->socks);
	return ssk;
}

/* SDP_DIAG_COUNTERS and their names, once. */
static int sdp_diag_counters(struct sk_buff *skb, struct netlink_callback *cb,
			     const struct sdp_diag_req *req)
{
	struct net *net = sock_net(skb->sk);
	struct inet_diag_msg *m;
	struct nlmsghdr *nlh;
	struct nlattr *nest, *names;
	size_t len = 0;
	char *p;
	int i;

	if (cb->args[1])
		return 0;
	nlh = nlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			cb->nlh->nlmsg_type, sizeof(*m), NLM_F_MULTI);
	if (!nlh)
		return -EMSGSIZE;
	m = nlmsg_data(nlh);
	memset(m, 0, sizeof(*m));
	m->idiag_family = req->sdiag_family;
	nest = nla_nest_start_noflag(skb, SDP_DIAG_COUNTERS);
	if (!nest)
		goto full;
	for (i = 0; i < SDP_MIB_MAX; i++) {
		if (nla_put_u64_64bit(skb, i + 1, sdp_mib_read(net, i),
				      SDP_DIAG_NONE))
			goto full;
		len += strlen(sdp_mib_names[i]) + 1;
	}
	nla_nest_end(skb, nest);
	names = nla_reserve(skb, SDP_DIAG_COUNTER_NAMES, len);
	if (!names)
		goto full;
	p = nla_data(names);
	for (i = 0; i < SDP_MIB_MAX; i++) {
		size_t n = strlen(sdp_mib_names[i]) + 1;

		memcpy(p, sdp_mib_names[i], n);
		p += n;
	}
	nlmsg_end(skb, nlh);
	cb->args[1] = 1;
	return skb->len;
full:
	nlmsg_cancel(skb, nlh);
	return -EMSGSIZE;
}

static int sdp_diag_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct sdp_diag_req *req = nlmsg_data(cb->nlh);
	struct sdp_net *sn = sdp_net(sock_net(skb->sk));
	unsigned long id = cb->args[0];
	struct sdp_sock *ssk;
	int err = 0;

	if (req->sdiag_flags & SDP_DIAG_REQ_COUNTERS)
		return sdp_diag_counters(skb, cb, req);
	while ((ssk = sdp_diag_next(sn, &id))) {
		err = sdp_diag_one(skb, cb, req, &ssk->sk);
		sock_put(&ssk->sk);
		if (err)
			break;	/* full: this one goes first in the next skb */
		id++;
	}
	cb->args[0] = id;
	return err && !skb->len ? err : skb->len;
}

static int sdp_diag_handler_dump(struct sk_buff *skb, struct nlmsghdr *h)
{
	struct net *net = sock_net(skb->sk);
	struct netlink_dump_control c = { .dump = sdp_diag_dump };
	const struct sdp_diag_req *req = nlmsg_data(h);

	if (nlmsg_len(h) < sizeof(*req))
		return -EINVAL;
	if (req->sdiag_protocol && req->sdiag_protocol != IPPROTO_TCP)
		return -EINVAL;
	if (req->sdiag_flags & ~SDP_DIAG_REQ_ALL)
		return -EINVAL;
	if (!(h->nlmsg_flags & NLM_F_DUMP))
		return -EOPNOTSUPP;
	return netlink_dump_start(net->diag_nlsk, skb, h, &c);
}

/* Not const: .family is the module parameter's. */
static struct sock_diag_handler sdp_diag_inet = {
	.owner	= THIS_MODULE,
	.dump	= sdp_diag_handler_dump,
};

static struct sock_diag_handler sdp_diag_inet6 = {
	.owner	= THIS_MODULE,
	.dump	= sdp_diag_handler_dump,
};

int sdp_diag_init(void)
{
	int err;

	sdp_diag_inet.family = sdp_af_inet;
	sdp_diag_inet6.family = sdp_af_inet6;
	err = sock_diag_register(&sdp_diag_inet);
	if (err)
		return err;
	err = sock_diag_register(&sdp_diag_inet6);
	if (err)
		sock_diag_unregister(&sdp_diag_inet);
	return err;
}

void sdp_diag_exit(void)
{
	sock_diag_unregister(&sdp_diag_inet6);
	sock_diag_unregister(&sdp_diag_inet);
}
