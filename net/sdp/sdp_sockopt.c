// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: socket options and ioctls, with TCP's checks and answers.
 *
 * Levels: SOL_SDP (SDP_ZCOPY_THRESH, SDP_LAST_BIND_ERR, SDP_ZEROCOPY,
 * SDP_ASYNC, SDP_FALLBACK; SDP_REGION_REG and _DEREG go to
 * sdp_region.c), SOL_TCP (the TCP
 * options that mean something for an SDP connection, TCP_INFO among them),
 * SOL_IP (IP_TOS) and SOL_IPV6 (IPV6_V6ONLY, IPV6_TCLASS).  SOL_SOCKET
 * options come here first (SOCK_CUSTOM_SOCKOPT): SO_ZEROCOPY, which the
 * socket core takes only for TCP's and UDP's protocol numbers, is ours;
 * the socket core handles the rest, and calls sdp_keepalive() for
 * SO_KEEPALIVE.  IP_TOS and IPV6_TCLASS become the
 * connection's RDMA service type (rdma_set_service_type()), IPV6_V6ONLY
 * rdma_cm's "afonly".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/ioctls.h>
#include <linux/sockios.h>
#include <net/inet_ecn.h>
#include <net/route.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_az.h"

static bool sdp_is_v6_family(const struct sock *sk)
{
	return sdp_family_v6(sk);
}

/* Under the socket lock: no bound address yet, as inet's inet_num == 0. */
static bool sdp_unbound(const struct sdp_sock *ssk)
{
	return ssk->sk.sk_state == TCP_CLOSE &&
	       !test_bit(SDP_F_BOUND, &ssk->flags) &&
	       !test_bit(SDP_F_ID_USED, &ssk->flags);
}

static int sdp_setsockopt_ip(struct sdp_sock *ssk, int level, int optname,
			     int val)
{
	struct sock *sk = &ssk->sk;

	if (level == SOL_IPV6 && !sdp_is_v6_family(sk))
		return -ENOPROTOOPT;

	switch (optname) {
	case IP_TOS:
		if (level != SOL_IP)
			return -ENOPROTOOPT;
		/* a stream socket keeps the ECN bits to itself */
		ssk->tos = (val & ~INET_ECN_MASK) | (ssk->tos & INET_ECN_MASK);
		sk->sk_priority = rt_tos2priority(ssk->tos);
		break;
	case IPV6_TCLASS:
		if (level != SOL_IPV6)
			return -ENOPROTOOPT;
		if (val < -1 || val > 0xff)
			return -EINVAL;
		if (val == -1)
			val = 0;
		ssk->tclass = (val & ~INET_ECN_MASK) |
			      (ssk->tclass & INET_ECN_MASK);
		break;
	case IPV6_V6ONLY:
		if (level != SOL_IPV6)
			return -ENOPROTOOPT;
		if (!sdp_unbound(ssk))
			return -EINVAL;
		ssk->v6only = !!val;
		if (ssk->cm_id && rdma_set_afonly(ssk->cm_id, ssk->v6only))
			return -EINVAL;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
	if (ssk->cm_id && sk->sk_state == TCP_CLOSE)
		rdma_set_service_type(ssk->cm_id, level == SOL_IP ? ssk->tos :
				      ssk->tclass);
	return 0;
}

static int sdp_setsockopt_tcp(struct sdp_sock *ssk, int optname, int val)
{
	switch (optname) {
	case TCP_NODELAY:
		ssk->nodelay = !!val;
		if (val)
			ssk->tp->flush(ssk, true);
		return 0;
	case TCP_CORK:
		ssk->cork = !!val;
		if (!val)
			ssk->tp->flush(ssk, true);
		return 0;
	case TCP_MAXSEG:
		if (val && (val < TCP_MIN_MSS || val > MAX_TCP_WINDOW))
			return -EINVAL;
		ssk->user_mss = val;
		return 0;
	case TCP_KEEPIDLE:
		if (val < 1 || val > MAX_TCP_KEEPIDLE)
			return -EINVAL;
		ssk->keepidle = val;
		if (sock_flag(&ssk->sk, SOCK_KEEPOPEN))
			sdp_ka_reset(ssk, true);
		return 0;
	case TCP_KEEPINTVL:
		if (val < 1 || val > MAX_TCP_KEEPINTVL)
			return -EINVAL;
		ssk->keepintvl = val;
		return 0;
	case TCP_KEEPCNT:
		if (val < 1 || val > MAX_TCP_KEEPCNT)
			return -EINVAL;
		ssk->keepcnt = val;
		return 0;
	case TCP_USER_TIMEOUT:
		if (val < 0)
			return -EINVAL;
		ssk->user_timeout = val;
		sdp_stall_recheck(ssk);
		return 0;
	case TCP_QUICKACK:
		return 0;	/* acknowledgements are the transport's */
	case TCP_NOTSENT_LOWAT:
		ssk->notsent_lowat = val;
		ssk->sk.sk_write_space(&ssk->sk);
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

/* SOL_SOCKET (SOCK_CUSTOM_SOCKOPT: every SDP socket): SO_ZEROCOPY as
 * the socket core takes it for TCP, which it refuses any other protocol;
 * the rest is the socket core's.
 */
static int sdp_setsockopt_socket(struct socket *sock, int optname,
				 sockptr_t optval, unsigned int optlen)
{
	int val, err = 0;

	if (optname != SO_ZEROCOPY)
		return sock_setsockopt(sock, SOL_SOCKET, optname, optval,
				       optlen);
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	lock_sock(sock->sk);
	if (val < 0 || val > 1)
		err = -EINVAL;
	else
		sock_valbool_flag(sock->sk, SOCK_ZEROCOPY, val);
	release_sock(sock->sk);
	return err;
}

int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int val, err;

	if (level == SOL_SOCKET)
		return sdp_setsockopt_socket(sock, optname, optval, optlen);
	if (level != SOL_SDP && level != SOL_TCP && level != SOL_IP &&
	    level != SOL_IPV6)
		return -ENOPROTOOPT;
	if (level == SOL_SDP && optname == SDP_REGION_DEREG)
		return sdp_region_setsockopt(ssk, optval, optlen);
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;

	lock_sock(sk);
	switch (level) {
	case SOL_TCP:
		err = sdp_setsockopt_tcp(ssk, optname, val);
		break;
	case SOL_IP:
	case SOL_IPV6:
		err = sdp_setsockopt_ip(ssk, level, optname, val);
		break;
	default:
		err = -ENOPROTOOPT;
		if (optname == SDP_ZCOPY_THRESH) {
			err = val < 0 ? -EINVAL : 0;
			if (!err) {
				WRITE_ONCE(ssk->zcopy_thresh, val);
				ssk->zc_thresh_set = true;
			}
		} else if (optname == SDP_REGIONS) {
			/* the queue pair is sized before it is connected */
			err = val < 0 || val > 1 ? -EINVAL :
			      ssk->sk.sk_state != TCP_CLOSE ? -EISCONN : 0;
			if (!err)
				ssk->regions = val;
		} else if (optname == SDP_ZEROCOPY) {
			/* SO_ZEROCOPY, which the socket core refuses us */
			err = val < 0 || val > 1 ? -EINVAL : 0;
			if (!err)
				sock_valbool_flag(sk, SOCK_ZEROCOPY, val);
		} else if (optname == SDP_ASYNC) {
			err = sdp_az_bind(ssk, val);
		} else if (optname == SDP_FALLBACK) {
			err = val < 0 || val > 1 ? -EINVAL :
			      val && sk->sk_prot == &sdp_proto ? -EOPNOTSUPP :
			      0;
			if (!err)
				ssk->fallback = val;
		}
		break;
	}
	release_sock(sk);
	return err;
}

/* TCP_INFO: the fields that have a meaning for an SDP connection.  The
 * congestion window is the peer's credits (messages we may send), the
 * send window those credits in bytes, the RTT from posting a message to
 * its completion (the peer's device acknowledged it).
 */
void sdp_rdma_info(struct sdp_sock *ssk, struct tcp_info *info)
{
	struct sdp_conn *conn = ssk->conn;
	const struct sdp_conn_stats *st = &conn->st;
	const u32 hdr = sizeof(struct sdp_bsdh);

	info->tcpi_probes = conn->ka_probes;
	info->tcpi_snd_mss = conn->tx_msg_max - hdr;
	info->tcpi_rcv_mss = conn->rcv_size - hdr;
	info->tcpi_advmss = conn->rcv_size - hdr;
	info->tcpi_unacked = conn->tx_inflight;
	info->tcpi_rtt = st->srtt_us;
	info->tcpi_rttvar = st->rttvar_us;
	info->tcpi_min_rtt = st->min_rtt_us;
	info->tcpi_snd_ssthresh = TCP_INFINITE_SSTHRESH;
	info->tcpi_rcv_ssthresh = conn->rx_size * (conn->rcv_size - hdr);
	info->tcpi_rcv_space = info->tcpi_rcv_ssthresh;
	if (sdp_conn_usable(ssk)) {
		int credits = max(sdp_tx_credits(conn), 0);

		info->tcpi_snd_cwnd = credits;
		info->tcpi_snd_wnd = credits * (conn->tx_msg_max - hdr);
	}
	info->tcpi_delivered = st->data_segs_out - conn->tx_inflight;
	/* the stream's counters hold what went by Data messages; ZCopy's
	 * bytes: SrcAvails posted and read by the peer, RDMA WRITEs into
	 * its SinkAvails (complete: acknowledged), SrcAvails we read
	 */
	info->tcpi_bytes_sent += conn->zc_adv_posted + st->zc_write_sent;
	info->tcpi_bytes_acked += conn->zc_read_total + st->zc_write_sent;
	info->tcpi_bytes_received += st->zc_read_recv;
}

/* TCP_INFO's fields that every transport counts alike (struct
 * sdp_conn_stats); the transport's ->info adds its own.
 */
static void sdp_info_stream(struct sdp_sock *ssk, struct tcp_info *info)
{
	const struct sdp_conn_stats *st = &ssk->conn->st;
	unsigned long now = jiffies;

	info->tcpi_last_data_sent = jiffies_to_msecs(now - st->last_data_sent);
	info->tcpi_last_data_recv = jiffies_to_msecs(now - st->last_data_recv);
	info->tcpi_last_ack_recv = jiffies_to_msecs(now - st->last_recv);
	info->tcpi_bytes_acked = st->bytes_acked;
	info->tcpi_bytes_received = st->bytes_received;
	info->tcpi_bytes_sent = st->bytes_sent;
	info->tcpi_segs_out = st->segs_out;
	info->tcpi_segs_in = st->segs_in;
	info->tcpi_data_segs_out = st->data_segs_out;
	info->tcpi_data_segs_in = st->data_segs_in;
	info->tcpi_notsent_bytes = ssk->tx_queued;
}

/* TCP_INFO of a locked socket (getsockopt, sock_diag). */
void sdp_tcp_info(struct sdp_sock *ssk, struct tcp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->tcpi_state = ssk->sk.sk_state;
	if (test_bit(SDP_F_WAS_CONNECTED, &ssk->flags)) {
		sdp_info_stream(ssk, info);
		ssk->tp->info(ssk, info);
	}
}

static int sdp_getsockopt_tcp(struct sdp_sock *ssk, int optname, int *val)
{
	switch (optname) {
	case TCP_NODELAY:
		*val = ssk->nodelay;
		return 0;
	case TCP_CORK:
		*val = ssk->cork;
		return 0;
	case TCP_MAXSEG:
		if (test_bit(SDP_F_WAS_CONNECTED, &ssk->flags))
			*val = ssk->conn->tx_msg_max - sizeof(struct sdp_bsdh);
		else
			*val = ssk->user_mss ? : TCP_MSS_DEFAULT;
		return 0;
	case TCP_KEEPIDLE:
		*val = ssk->keepidle ? : READ_ONCE(sdp_keepalive_time);
		return 0;
	case TCP_KEEPINTVL:
		*val = ssk->keepintvl ? : TCP_KEEPALIVE_INTVL / HZ;
		return 0;
	case TCP_KEEPCNT:
		*val = ssk->keepcnt ? : TCP_KEEPALIVE_PROBES;
		return 0;
	case TCP_USER_TIMEOUT:
		*val = ssk->user_timeout;
		return 0;
	case TCP_QUICKACK:
		*val = 1;
		return 0;
	case TCP_NOTSENT_LOWAT:
		*val = ssk->notsent_lowat;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

static int sdp_getsockopt_ip(struct sdp_sock *ssk, int level, int optname,
			     int *val)
{
	if (level == SOL_IPV6 && !sdp_is_v6_family(&ssk->sk))
		return -ENOPROTOOPT;
	if (level == SOL_IP && optname == IP_TOS) {
		*val = ssk->tos;
		return 0;
	}
	if (level == SOL_IPV6 && optname == IPV6_TCLASS) {
		*val = ssk->tclass;
		return 0;
	}
	if (level == SOL_IPV6 && optname == IPV6_V6ONLY) {
		*val = ssk->v6only;
		return 0;
	}
	return -ENOPROTOOPT;
}

int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct tcp_info info;
	int val, len, err;

	if (level != SOL_SDP && level != SOL_TCP && level != SOL_IP &&
	    level != SOL_IPV6)
		return -ENOPROTOOPT;
	if (level == SOL_SDP && optname == SDP_REGION_REG)
		return sdp_region_getsockopt(ssk, optval, optlen);
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;

	lock_sock(sk);
	if (level == SOL_TCP && optname == TCP_INFO) {
		sdp_tcp_info(ssk, &info);
		release_sock(sk);
		len = min_t(unsigned int, len, sizeof(info));
		if (put_user(len, optlen) || copy_to_user(optval, &info, len))
			return -EFAULT;
		return 0;
	}
	switch (level) {
	case SOL_TCP:
		err = sdp_getsockopt_tcp(ssk, optname, &val);
		break;
	case SOL_IP:
	case SOL_IPV6:
		err = sdp_getsockopt_ip(ssk, level, optname, &val);
		break;
	default:
		err = 0;
		if (optname == SDP_ZCOPY_THRESH)
			val = ssk->zcopy_thresh;
		else if (optname == SDP_LAST_BIND_ERR)
			val = ssk->last_bind_err;
		else if (optname == SDP_ZEROCOPY)
			val = sock_flag(sk, SOCK_ZEROCOPY);
		else if (optname == SDP_ASYNC)
			val = sdp_az_bound(ssk);
		else if (optname == SDP_REGIONS)
			val = ssk->regions;
		else if (optname == SDP_FALLBACK)
			val = sdp_fallback_on(ssk);
		else
			err = -ENOPROTOOPT;
		break;
	}
	release_sock(sk);
	if (err)
		return err;

	len = min_t(unsigned int, len, sizeof(int));
	if (put_user(len, optlen) || copy_to_user(optval, &val, len))
		return -EFAULT;
	return 0;
}

/* SIOCINQ as tcp_inq(): up to the urgent mark when it lies ahead. */
static int sdp_inq(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV))
		return 0;
	if (sock_flag(sk, SOCK_URGINLINE) || !ssk->urg_data ||
	    (s32)(ssk->urg_seq - ssk->copied_seq) < 0 ||
	    (s32)(ssk->urg_seq - ssk->rcv_nxt) >= 0)
		return ssk->rcv_nxt - ssk->copied_seq;
	return ssk->urg_seq - ssk->copied_seq;
}

int sdp_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int val;

	switch (cmd) {
	case SIOCINQ:
	case SIOCOUTQ:
	case SIOCOUTQNSD:
		if (sk->sk_state == TCP_LISTEN)
			return -EINVAL;
		lock_sock(sk);
		if (cmd == SIOCINQ)
			val = sdp_inq(ssk);
		else if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV))
			val = 0;
		else if (cmd == SIOCOUTQ)
			val = ssk->tx_queued + ssk->tx_inflight_bytes +
			      ssk->zc_src_bytes;
		else
			val = ssk->tx_queued;
		release_sock(sk);
		break;
	case SIOCATMARK:
		val = READ_ONCE(ssk->urg_data) &&
		      READ_ONCE(ssk->urg_seq) == READ_ONCE(ssk->copied_seq);
		break;
	default:
		return -ENOIOCTLCMD;
	}
	return put_user(val, (int __user *)arg);
}
