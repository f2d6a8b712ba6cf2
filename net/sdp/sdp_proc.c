// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: /proc/net/sdp and /proc/net/sdpstats, per network namespace.
 *
 * /proc/net/sdp has one row per SDP socket of the reader's namespace (each
 * namespace keeps its sockets in an xarray of its own), in the columns of
 * the old SDP stack (and of /proc/net/tcp where they meet):
 *
 *   sl  local_address rem_address        uid inode   rx_queue tx_queue state
 *
 * /proc/net/sdpstats has one "name value" line per counter; the counters
 * are per-CPU and per namespace (sdp_net.c).  Documentation/sdp.rst
 * explains each.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "sdp.h"

const char * const sdp_mib_names[SDP_MIB_MAX] = {
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
	[SDP_MIB_QP_ERRORS]		= "QpErrors",
	[SDP_MIB_FIN_TIMEOUTS]		= "FinTimeouts",
	[SDP_MIB_TX_URGENT]		= "TxUrgent",
	[SDP_MIB_RX_URGENT]		= "RxUrgent",
	[SDP_MIB_KEEPALIVE_PROBES]	= "KeepaliveProbes",
	[SDP_MIB_KEEPALIVE_TIMEOUTS]	= "KeepaliveTimeouts",
	[SDP_MIB_TRANSPORT_TIMEOUTS]	= "TransportTimeouts",
	[SDP_MIB_STALL_TIMEOUTS]	= "StallTimeouts",
	[SDP_MIB_LISTEN_QUEUED]		= "ListenQueued",
	[SDP_MIB_LISTEN_OVERFLOWS]	= "ListenOverflows",
	[SDP_MIB_EMBRYO_TIMEOUTS]	= "EmbryoTimeouts",
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
	[SDP_MIB_ZC_ADAPT_COPIED]	= "ZcopyAdaptCopied",
	[SDP_MIB_ZC_ADAPT_PROBES]	= "ZcopyAdaptProbes",
	[SDP_MIB_RECV_POLLS]		= "RecvPolls",
	[SDP_MIB_RECV_POLL_HITS]	= "RecvPollHits",
	[SDP_MIB_TX_ZC_PAGE_BYTES]	= "TxZcopyPageBytes",
	[SDP_MIB_ZC_PAGE_REFS]		= "ZcopyPageRefs",
	[SDP_MIB_BUF_BYTES]		= "BufferBytes",
	[SDP_MIB_BUF_ALLOC_FAILS]	= "BufferAllocFails",
	[SDP_MIB_RCVBUF_GROWS]		= "RcvBufGrows",
	[SDP_MIB_RCVBUF_SHRINKS]	= "RcvBufShrinks",
	[SDP_MIB_LOCAL_ACTIVE_OPENS]	= "LocalActiveOpens",
	[SDP_MIB_LOCAL_PASSIVE_OPENS]	= "LocalPassiveOpens",
	[SDP_MIB_LOCAL_TX_BYTES]	= "LocalTxBytes",
	[SDP_MIB_LOCAL_RX_BYTES]	= "LocalRxBytes",
	[SDP_MIB_LOCAL_SINK_BYTES]	= "LocalSinkBytes",
	[SDP_MIB_LOCAL_PAGE_BYTES]	= "LocalPageBytes",
	[SDP_MIB_LOCAL_LEND_BYTES]	= "LocalLendBytes",
	[SDP_MIB_LOCAL_LEND_RECLAIMED]	= "LocalLendReclaimed",
	[SDP_MIB_CONN_PORT_RETRIES]	= "ConnPortRetries",
	[SDP_MIB_LISTEN_PORT_RETRIES]	= "ListenPortRetries",
	[SDP_MIB_RX_SPILL_BYTES]	= "RxSpillBytes",
	[SDP_MIB_AZ_SENDS]		= "AzSends",
	[SDP_MIB_AZ_BYTES]		= "AzBytes",
	[SDP_MIB_AZ_SYNC_COPIED]	= "AzSyncCopied",
	[SDP_MIB_AZ_SYNC_UNPROTECTED]	= "AzSyncUnprotected",
	[SDP_MIB_AZ_SYNC_PINNED]	= "AzSyncPinned",
	[SDP_MIB_AZ_SYNC_BUDGET]	= "AzSyncBudget",
	[SDP_MIB_AZ_SYNC_OTHER]		= "AzSyncOther",
	[SDP_MIB_AZ_RECV_WAITS]		= "AzRecvWaits",
	[SDP_MIB_AZ_FAULTS]		= "AzFaults",
	[SDP_MIB_AZ_SYNC_FAULTS]	= "AzSyncFaults",
	[SDP_MIB_RG_REGS]		= "RegionRegs",
	[SDP_MIB_RG_DEREGS]		= "RegionDeregs",
	[SDP_MIB_RG_PEER_REGIONS]	= "RegionPeerAdvs",
	[SDP_MIB_RG_WRITE_BYTES]	= "RegionWriteBytes",
	[SDP_MIB_RG_READ_BYTES]		= "RegionReadBytes",
	[SDP_MIB_RG_REVOKE_TIMEOUTS]	= "RegionRevokeTimeouts",
	[SDP_MIB_CONN_FALLBACKS]	= "ConnFallbacks",
	[SDP_MIB_ACCEPT_FALLBACKS]	= "AcceptFallbacks",
	[SDP_MIB_LISTEN_FALLBACK_FAILS]	= "ListenFallbackFails",
	[SDP_MIB_LSM_DENIED]		= "ConnLsmDenied",
};

/* Counter @i of @net, summed over the CPUs. */
u64 sdp_mib_read(struct net *net, int i)
{
	struct sdp_net *sn = sdp_net(net);
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sn->stats, cpu)->mib[i];
	return sum;
}

static int sdp_stats_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	int i;

	for (i = 0; i < SDP_MIB_MAX; i++)
		seq_printf(seq, "%s %llu\n", sdp_mib_names[i],
			   sdp_mib_read(net, i));
	return 0;
}

/* A reader of /proc/net/sdp: where its next chunk starts.  seq_file
 * stops and starts again for every page it fills; resuming at the id
 * after the last row shown keeps a read of N sockets O(N log N), where
 * walking from the start every time made it O(N^2).
 */
struct sdp_seq_state {
	struct seq_net_private	p;	/* first: seq_file_net() */
	loff_t			next_pos;
	unsigned long		next_id;
};

/* The socket at or after @id; under the xarray's lock. */
static struct sdp_sock *sdp_seq_find(struct seq_file *seq, unsigned long id)
{
	struct sdp_net *sn = sdp_net(seq_file_net(seq));

	return xa_find(&sn->socks, &id, ULONG_MAX, XA_PRESENT);
}

static void *sdp_seq_start(struct seq_file *seq, loff_t *pos)
	__acquires(&sn->socks.xa_lock)
{
	struct sdp_seq_state *st = seq->private;
	struct sdp_net *sn = sdp_net(seq_file_net(seq));
	struct sdp_sock *ssk;
	loff_t n;

	xa_lock_bh(&sn->socks);
	if (!*pos)
		return SEQ_START_TOKEN;
	if (*pos == st->next_pos)	/* where the last chunk stopped */
		return sdp_seq_find(seq, st->next_id);
	/* a seek: count from the first */
	ssk = sdp_seq_find(seq, 0);
	for (n = 1; ssk && n < *pos; n++)
		ssk = sdp_seq_find(seq, (unsigned long)ssk->proc_id + 1);
	return ssk;
}

static void *sdp_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	struct sdp_seq_state *st = seq->private;
	unsigned long id = v == SEQ_START_TOKEN ? 0 :
			   (unsigned long)((struct sdp_sock *)v)->proc_id + 1;
	struct sdp_sock *ssk;

	++*pos;
	ssk = sdp_seq_find(seq, id);
	st->next_pos = *pos;
	st->next_id = ssk ? ssk->proc_id : ULONG_MAX;
	return ssk;
}

static void sdp_seq_stop(struct seq_file *seq, void *v)
	__releases(&sn->socks.xa_lock)
{
	xa_unlock_bh(&sdp_net(seq_file_net(seq))->socks);
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
	ssk = v;
	sk = &ssk->sk;

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

/* The files of a namespace; its struct sdp_net is sdp_net.c's, set up
 * before this runs and ended after.
 */
static int __net_init sdp_proc_net_init(struct net *net)
{
	if (!proc_create_net("sdp", 0444, net->proc_net, &sdp_seq_ops,
			     sizeof(struct sdp_seq_state)))
		return -ENOMEM;
	if (!proc_create_net_single("sdpstats", 0444, net->proc_net,
				    sdp_stats_show, NULL)) {
		remove_proc_entry("sdp", net->proc_net);
		return -ENOMEM;
	}
	return 0;
}

static void __net_exit sdp_proc_net_exit(struct net *net)
{
	remove_proc_entry("sdpstats", net->proc_net);
	remove_proc_entry("sdp", net->proc_net);
}

static struct pernet_operations sdp_proc_net_ops = {
	.init	= sdp_proc_net_init,
	.exit	= sdp_proc_net_exit,
};

int sdp_proc_init(void)
{
	return register_pernet_subsys(&sdp_proc_net_ops);
}

void sdp_proc_exit(void)
{
	unregister_pernet_subsys(&sdp_proc_net_ops);
}
