// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: /proc/net/sdp and /proc/net/sdpstats, per network namespace.
 *
 * /proc/net/sdp has one row per SDP socket of the reader's namespace, in
 * the columns of the old SDP stack (and of /proc/net/tcp where they meet):
 *
 *   sl  local_address rem_address        uid inode   rx_queue tx_queue state
 *
 * /proc/net/sdpstats has one "name value" line per counter; the counters
 * are per-CPU and per namespace.  Documentation/sdp.rst explains each.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "sdp.h"

unsigned int sdp_net_id;

/* Every SDP socket, for /proc/net/sdp. */
static LIST_HEAD(sdp_sock_list);
static DEFINE_SPINLOCK(sdp_sock_list_lock);

void sdp_sock_list_add(struct sdp_sock *ssk)
{
	spin_lock_bh(&sdp_sock_list_lock);
	list_add_tail(&ssk->node, &sdp_sock_list);
	spin_unlock_bh(&sdp_sock_list_lock);
}

void sdp_sock_list_del(struct sdp_sock *ssk)
{
	spin_lock_bh(&sdp_sock_list_lock);
	list_del(&ssk->node);
	spin_unlock_bh(&sdp_sock_list_lock);
}

static const char * const sdp_mib_names[SDP_MIB_MAX] = {
	[SDP_MIB_ACTIVE_OPENS]		= "ActiveOpens",
	[SDP_MIB_PASSIVE_OPENS]		= "PassiveOpens",
	[SDP_MIB_CONN_REFUSED]		= "ConnRefused",
	[SDP_MIB_CONN_FAILED]		= "ConnFailed",
	[SDP_MIB_CONN_ABORTED]		= "ConnAborted",
	[SDP_MIB_CONN_CLOSED]		= "ConnClosed",
	[SDP_MIB_TX_BYTES]		= "TxBytes",
	[SDP_MIB_RX_BYTES]		= "RxBytes",
	[SDP_MIB_TX_DATA]		= "TxData",
	[SDP_MIB_RX_DATA]		= "RxData",
	[SDP_MIB_TX_CREDIT_UPDATE]	= "TxCreditUpdate",
	[SDP_MIB_RX_CREDIT_UPDATE]	= "RxCreditUpdate",
	[SDP_MIB_TX_DISCONN]		= "TxDisConn",
	[SDP_MIB_RX_DISCONN]		= "RxDisConn",
	[SDP_MIB_TX_ABORT]		= "TxAbort",
	[SDP_MIB_RX_ABORT]		= "RxAbort",
	[SDP_MIB_TX_INLINE]		= "TxInline",
	[SDP_MIB_CREDIT_STALLS]		= "CreditStalls",
	[SDP_MIB_SNDBUF_STALLS]		= "SndbufStalls",
	[SDP_MIB_NAGLE_HOLDS]		= "NagleHolds",
	[SDP_MIB_PROTO_ERRORS]		= "ProtoErrors",
	[SDP_MIB_HELLO_ERRORS]		= "HelloErrors",
	[SDP_MIB_CQ_ERRORS]		= "CqErrors",
	[SDP_MIB_FIN_TIMEOUTS]		= "FinTimeouts",
	[SDP_MIB_TX_URGENT]		= "TxUrgent",
	[SDP_MIB_RX_URGENT]		= "RxUrgent",
	[SDP_MIB_KEEPALIVE_PROBES]	= "KeepaliveProbes",
	[SDP_MIB_KEEPALIVE_TIMEOUTS]	= "KeepaliveTimeouts",
	[SDP_MIB_TRANSPORT_TIMEOUTS]	= "TransportTimeouts",
	[SDP_MIB_LISTEN_QUEUED]		= "ListenQueued",
	[SDP_MIB_LISTEN_OVERFLOWS]	= "ListenOverflows",
	[SDP_MIB_TX_SRCAVAIL]		= "TxSrcAvail",
	[SDP_MIB_TX_ZC_BYTES]		= "TxZcopyBytes",
	[SDP_MIB_RX_SRCAVAIL]		= "RxSrcAvail",
	[SDP_MIB_RX_ZC_DIRECT_BYTES]	= "RxZcopyDirectBytes",
	[SDP_MIB_RX_ZC_BOUNCE_BYTES]	= "RxZcopyBounceBytes",
	[SDP_MIB_ZC_READS]		= "ZcopyReads",
	[SDP_MIB_TX_RDCOMPL]		= "TxRdmaRdCompl",
	[SDP_MIB_RX_RDCOMPL]		= "RxRdmaRdCompl",
	[SDP_MIB_ZC_CANCELS]		= "TxSrcAvailCancel",
	[SDP_MIB_RX_ZC_CANCELS]		= "RxSrcAvailCancel",
	[SDP_MIB_ZC_FALLBACKS]		= "ZcopyFallbacks",
	[SDP_MIB_ZC_WRITES]		= "ZcopyWrites",
	[SDP_MIB_TX_SINKAVAIL]		= "TxSinkAvail",
	[SDP_MIB_RX_SINKAVAIL]		= "RxSinkAvail",
	[SDP_MIB_TX_ZC_WRITE_BYTES]	= "TxZcopyWriteBytes",
	[SDP_MIB_RX_ZC_SINK_BYTES]	= "RxZcopySinkBytes",
	[SDP_MIB_SINK_CANCELS]		= "TxSinkAvailCancel",
};

static int sdp_stats_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct sdp_net *sn = sdp_net(net);
	int i, cpu;

	for (i = 0; i < SDP_MIB_MAX; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(sn->stats, cpu)->mib[i];
		seq_printf(seq, "%s %llu\n", sdp_mib_names[i], sum);
	}
	return 0;
}

static void *sdp_seq_start(struct seq_file *seq, loff_t *pos)
	__acquires(&sdp_sock_list_lock)
{
	spin_lock_bh(&sdp_sock_list_lock);
	return *pos ? seq_list_start(&sdp_sock_list, *pos - 1) :
		      SEQ_START_TOKEN;
}

static void *sdp_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	if (v == SEQ_START_TOKEN) {
		++*pos;
		return seq_list_start(&sdp_sock_list, 0);
	}
	return seq_list_next(v, &sdp_sock_list, pos);
}

static void sdp_seq_stop(struct seq_file *seq, void *v)
	__releases(&sdp_sock_list_lock)
{
	spin_unlock_bh(&sdp_sock_list_lock);
}

static void sdp_addr_port(const struct sockaddr_storage *a, __be32 *addr,
			  u16 *port)
{
	*addr = 0;
	*port = 0;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)a;

		*addr = sin->sin_addr.s_addr;
		*port = ntohs(sin->sin_port);
	} else if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)a;

		if (ipv6_addr_v4mapped(&sin6->sin6_addr))
			*addr = sin6->sin6_addr.s6_addr32[3];
		*port = ntohs(sin6->sin6_port);
	}
}

static int sdp_seq_show(struct seq_file *seq, void *v)
{
	struct sdp_sock *ssk;
	__be32 src, dst;
	u16 sport, dport;
	struct sock *sk;

	if (v == SEQ_START_TOKEN) {
		seq_puts(seq, "  sl  local_address rem_address        uid inode   rx_queue tx_queue state\n");
		return 0;
	}
	ssk = list_entry(v, struct sdp_sock, node);
	sk = &ssk->sk;
	if (!net_eq(sock_net(sk), seq_file_net(seq)))
		return 0;

	/* racy snapshots, as /proc/net/tcp reads its sockets */
	sdp_addr_port(&ssk->local, &src, &sport);
	sdp_addr_port(&ssk->peer, &dst, &dport);
	seq_printf(seq, "%4d: %08X:%04X %08X:%04X %5u %lu\t%08X:%08X %X\n",
		   (int)seq->index - 1, src, sport, dst, dport,
		   from_kuid_munged(seq_user_ns(seq), sock_i_uid(sk)),
		   sock_i_ino(sk), sdp_rx_queued(ssk),
		   READ_ONCE(ssk->tx_queued) + READ_ONCE(ssk->tx_inflight_bytes) +
		   READ_ONCE(ssk->zc_src_bytes),
		   READ_ONCE(sk->sk_state));
	return 0;
}

static const struct seq_operations sdp_seq_ops = {
	.start	= sdp_seq_start,
	.next	= sdp_seq_next,
	.stop	= sdp_seq_stop,
	.show	= sdp_seq_show,
};

static int __net_init sdp_net_init(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);

	sn->stats = alloc_percpu(struct sdp_mib);
	if (!sn->stats)
		return -ENOMEM;
	if (!proc_create_net("sdp", 0444, net->proc_net, &sdp_seq_ops,
			     sizeof(struct seq_net_private)))
		goto err_stats;
	if (!proc_create_net_single("sdpstats", 0444, net->proc_net,
				    sdp_stats_show, NULL))
		goto err_sdp;
	return 0;

err_sdp:
	remove_proc_entry("sdp", net->proc_net);
err_stats:
	free_percpu(sn->stats);
	return -ENOMEM;
}

static void __net_exit sdp_net_exit(struct net *net)
{
	remove_proc_entry("sdpstats", net->proc_net);
	remove_proc_entry("sdp", net->proc_net);
	free_percpu(sdp_net(net)->stats);
}

static struct pernet_operations sdp_net_ops = {
	.init	= sdp_net_init,
	.exit	= sdp_net_exit,
	.id	= &sdp_net_id,
	.size	= sizeof(struct sdp_net),
};

int sdp_proc_init(void)
{
	return register_pernet_subsys(&sdp_net_ops);
}

void sdp_proc_exit(void)
{
	unregister_pernet_subsys(&sdp_net_ops);
}
