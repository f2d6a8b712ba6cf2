/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Sockets Direct Protocol (SDP): socket diagnostics over NETLINK_SOCK_DIAG.
 *
 * Send a SOCK_DIAG_BY_FAMILY request with NLM_F_DUMP whose payload is a
 * struct sdp_diag_req, sdiag_family AF_INET_SDP or AF_INET6_SDP (the
 * numbers in use: /sys/module/ib_sdp/parameters/af_inet_sdp and
 * af_inet6_sdp).  The answer has one message per socket of that family in
 * the requester's network namespace that matches the filter: a struct
 * inet_diag_msg (idiag_family the SDP family; addresses in idiag_src and
 * idiag_dst as inet_diag gives them: 4 bytes for AF_INET_SDP, 16 for
 * AF_INET6_SDP) followed by the attributes asked for.
 *
 * With SDP_DIAG_REQ_COUNTERS in sdiag_flags the answer is instead one
 * message: a zeroed struct inet_diag_msg with idiag_family set and
 * SDP_DIAG_COUNTERS, the namespace's counters (/proc/net/sdpstats).
 */
#ifndef _UAPI_LINUX_SDP_DIAG_H
#define _UAPI_LINUX_SDP_DIAG_H

#include <linux/types.h>
#include <linux/inet_diag.h>

struct sdp_diag_req {
	__u8	sdiag_family;	/* AF_INET_SDP or AF_INET6_SDP */
	__u8	sdiag_protocol;	/* 0 */
	__u16	sdiag_flags;	/* SDP_DIAG_REQ_* */
	__u32	sdiag_states;	/* 1 << TCP_*: the states shown; 0 = all */
	/* a filter: each field that is not 0 must match (ports and
	 * addresses in network order, idiag_cookie all ones = any); idiag_if
	 * is unused
	 */
	struct inet_diag_sockid id;
};

/* sdiag_flags: the attributes wanted with each socket */
#define SDP_DIAG_REQ_INFO	(1 << 0)	/* SDP_DIAG_INFO */
#define SDP_DIAG_REQ_TCPINFO	(1 << 1)	/* SDP_DIAG_TCPINFO */
#define SDP_DIAG_REQ_DEVICE	(1 << 2)	/* SDP_DIAG_DEVICE */
#define SDP_DIAG_REQ_SHUTDOWN	(1 << 3)	/* SDP_DIAG_SHUTDOWN */
#define SDP_DIAG_REQ_ORIGIN	(1 << 4)	/* SDP_DIAG_ORIGIN */
#define SDP_DIAG_REQ_COUNTERS	(1 << 8)	/* the counters, no sockets */

enum {
	SDP_DIAG_NONE,
	SDP_DIAG_INFO,		/* struct sdp_diag_info */
	SDP_DIAG_TCPINFO,	/* struct tcp_info, as getsockopt(TCP_INFO) */
	SDP_DIAG_DEVICE,	/* string: the RDMA device's name */
	SDP_DIAG_SHUTDOWN,	/* __u8: sk_shutdown (RCV_SHUTDOWN 1, SEND 2) */
	SDP_DIAG_COUNTERS,	/* nested: attribute i (1..n) is counter i's
				 * __u64 value, named by the i-th string of
				 * SDP_DIAG_COUNTER_NAMES
				 */
	SDP_DIAG_COUNTER_NAMES,	/* the counters' names, each NUL-terminated */
	SDP_DIAG_ORIGIN,	/* struct sdp_diag_origin */
	__SDP_DIAG_MAX,
};

#define SDP_DIAG_MAX (__SDP_DIAG_MAX - 1)

/*
 * How the socket came to be, and whether TCP carries it: an IPPROTO_SDP
 * socket whose connect found no SDP peer goes on by TCP (its descriptor
 * then reaches a TCP socket, whose inode is fb_inode), and fb_err says
 * why.  May grow at the end.
 */
struct sdp_diag_origin {
	__u32	protocol;	/* SO_PROTOCOL: IPPROTO_TCP for families
				 * 27/28, IPPROTO_SDP's number for AF_INET
				 * and AF_INET6
				 */
	__u32	fb_err;		/* errno of SDP's connect, 0: not on TCP */
	__u64	fb_inode;	/* TCP's socket, when fb_err is set */
};

/* sdp_diag_info.transport */
enum {
	SDP_DIAG_TP_NONE,	/* not connected (yet) */
	SDP_DIAG_TP_RDMA,	/* an RDMA RC queue pair */
	SDP_DIAG_TP_LOCAL,	/* a peer socket on this host, no RDMA */
};

/* sdp_diag_info.flags */
#define SDP_DIAG_F_ZCOPY	(1 << 0)	/* both ends take ZCopy */
#define SDP_DIAG_F_KEEPALIVE	(1 << 1)	/* SO_KEEPALIVE */
#define SDP_DIAG_F_NODELAY	(1 << 2)	/* TCP_NODELAY */
#define SDP_DIAG_F_CORK		(1 << 3)	/* TCP_CORK */
#define SDP_DIAG_F_TX_STALLED	(1 << 4)	/* waiting for credits or reads */
#define SDP_DIAG_F_DISCONN_SENT	(1 << 5)	/* our DisConn (FIN) is out */
#define SDP_DIAG_F_DISCONN_RCVD	(1 << 6)	/* the peer's DisConn is in */
#define SDP_DIAG_F_RESET	(1 << 7)	/* aborted, by us or the peer */

/*
 * One connection's state.  Credits are counted in messages (receive
 * buffers), the rest in bytes unless named otherwise.  Every field may
 * grow at the end: read only what the attribute's length covers.
 */
struct sdp_diag_info {
	__u8	transport;		/* SDP_DIAG_TP_* */
	__u8	ka_probes;		/* keepalive probes unanswered */
	__u16	flags;			/* SDP_DIAG_F_* */
	__u32	port_num;		/* the RDMA device's port */
	__u32	sk_err;			/* pending error (errno), 0 if none */

	/* credit flow control (BCopy) */
	__s32	tx_credits;		/* the peer's buffers we may fill */
	__u32	rx_credits;		/* our buffers posted for the peer */
	__u32	peer_bufs;		/* buffers the peer said it posts */
	__u32	rx_bufs;		/* receive buffers we keep */
	__u32	rx_buf_size;		/* bytes per receive buffer */
	__u32	tx_bufs;		/* send buffers */
	__u32	tx_msg_max;		/* largest message the peer takes */
	__u32	credit_stalls;		/* times data waited for a credit */

	/* queues */
	__u32	rx_queued;		/* received, not read */
	__u32	tx_queued;		/* taken from the program, not sent */
	__u32	tx_inflight;		/* messages posted, not completed */
	__u32	tx_inflight_bytes;	/* sent, not yet taken by the peer */

	/* ZCopy */
	__u32	zc_thresh;		/* sends of this size or more */
	__u32	zc_src_count;		/* our SrcAvails not yet read */
	__u32	zc_src_bytes;		/* their bytes */
	__u32	zc_rx_count;		/* the peer's SrcAvails not yet read */
	__u32	zc_bounce;		/* read ahead into kernel memory */

	/* liveness */
	__u32	tx_wrs;			/* sends posted, not completed */
	__u32	tx_wr_age_ms;		/* since the last send completion */
	__u32	retry_count;		/* transport retries asked at setup */
	__u32	rnr_retry;		/* RNR retries asked (7 = forever) */
	__u32	srtt_us;		/* post to send completion */
	__u32	reserved;		/* 0; the __u64s below are aligned */

	/* memory and bytes by path */
	__u64	buf_bytes;		/* registered buffer memory held */
	__u64	bytes_sent;		/* TCP_INFO's tcpi_bytes_sent */
	__u64	bytes_received;		/* TCP_INFO's tcpi_bytes_received */
	__u64	zc_src_sent;		/* advertised by SrcAvail */
	__u64	zc_src_read;		/* of them, read by the peer */
	__u64	zc_write_sent;		/* RDMA-written into the peer's SinkAvail */
	__u64	zc_read_recv;		/* RDMA-read from the peer's SrcAvails */
	__u64	zc_sink_recv;		/* written by the peer into our buffer */
	__u64	local_sink_recv;	/* local: copied straight into our buffer */
	__u32	data_segs_out;		/* data messages */
	__u32	data_segs_in;

	/* what a writer may hand over before the peer program reads */
	__u32	snd_budget;		/* bytes it may hold to send */
	__u32	rcv_budget;		/* unread bytes it may hold beyond its
					 * receive buffers (spill, read-ahead)
					 */
	__u32	rx_spill;		/* unread, copied out of receive buffers
					 * (with the copies' own size)
					 */
	__u32	reserved2;		/* 0 */
};

#endif /* _UAPI_LINUX_SDP_DIAG_H */
