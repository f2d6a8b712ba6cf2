/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A userspace SDP peer over librdmacm and libibverbs, for tests that must
 * speak the wire protocol themselves: hostile peers (sdp_evil), the
 * protocol fuzzer (sdp_fuzz).  It does what ib_sdp's side of a connection
 * does just well enough to get past its checks -- a Hello or HelloAck,
 * mseq/mseq_ack, credits -- and lets the caller break any of it: lie in
 * the Hello, send any header, stop reposting receives, withhold the RTU,
 * read and write with any key.
 *
 * Everything is polled (no completion channel): a test is one thread.
 */
#ifndef SDP_PEER_H
#define SDP_PEER_H

#include <stdint.h>
#include <rdma/rdma_cma.h>

/* wire (Documentation/wire.rst) */
#define MID_HELLO		0x00
#define MID_HELLO_ACK		0x01
#define MID_DISCONN		0x02
#define MID_ABORT		0x03
#define MID_SENDSM		0x04
#define MID_RDMA_WR_COMPL	0x05
#define MID_RDMA_RD_COMPL	0x06
#define MID_MODE_CHANGE		0x07
#define MID_SRC_CANCEL		0x08
#define MID_SINK_CANCEL		0x09
#define MID_SINK_CANCEL_ACK	0x0a
#define MID_CH_RCV_BUF		0x0b
#define MID_CH_RCV_BUF_ACK	0x0c
#define MID_REGION_ADV		0x0d	/* ib_sdp's: one-sided RDMA */
#define MID_REGION_REVOKE	0x0e
#define MID_REGION_REVOKE_ACK	0x0f
#define CAP_REGIONS		0x10
#define MID_SINK_AVAIL		0xfd
#define MID_SRC_AVAIL		0xfe
#define MID_DATA		0xff

struct bsdh {
	uint8_t mid, flags;
	uint16_t bufs;
	uint32_t len, mseq, mseq_ack;
} __attribute__((packed));

struct hello {
	struct bsdh h;
	uint8_t version, max_adverts;
	uint16_t reserved;
	uint32_t rcv_size, caps, reserved2;
} __attribute__((packed));

struct avail {		/* SrcAvail, SinkAvail */
	uint32_t len, rkey;
	uint64_t addr;
} __attribute__((packed));

#define PEER_BUFSZ	4096	/* each receive and send buffer */
#define PEER_MAXRX	256	/* receive buffers at most */
#define PEER_NTX	32	/* send buffers */
#define PEER_MEMSZ	(64 << 20)	/* RDMA area: remote read and write */

struct rx_done {
	uint32_t idx, bytes;
	int status;
};

#define PEER_KEPT	(PEER_MAXRX * 2)

/* How the peer introduces itself: peer_opts_default(), then set what
 * differs; zero fields take the defaults.
 */
struct peer_opts {
	int bufs;		/* Hello/HelloAck bufs (default 16) */
	int post;		/* receives really posted (default bufs + 4, -1: none) */
	int version;		/* default 0x10 */
	uint32_t rcv_size;	/* default PEER_BUFSZ */
	uint32_t caps;		/* default 3: SrcAvail and SinkAvail */
	int max_adverts;	/* default 8 */
	int pdata_len;		/* default sizeof(struct hello); -1: none */
	int mid;		/* Hello/HelloAck id; -1 (peer_opts_default()'s): the right one */
	uint32_t mseq;		/* in the Hello's BSDH (must be 0) */
	int no_repost;		/* never post a receive again */
	int no_rtu;		/* connect: never send the RTU */
	int memsz;		/* RDMA area bytes (default PEER_MEMSZ) */
};

/* A message received. */
struct peer_msg {
	struct bsdh h;		/* in host byte order */
	const uint8_t *data;	/* the whole message, as received */
	uint32_t bytes;		/* bytes received */
	struct avail av;	/* SrcAvail/SinkAvail, host order */
	uint32_t size;		/* RdmaRdCompl/RdmaWrCompl/ChRcvBuf size */
};

struct peer {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;		/* the connection */
	struct rdma_cm_id *lid;		/* listening */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr, *memmr;
	uint8_t *buf;			/* receive buffers, then send buffers */
	uint8_t *mem;			/* the RDMA area */
	size_t memsz;
	struct peer_opts o;
	int nrx;			/* receive buffers allocated */
	int posted;			/* receives posted, not completed */
	uint8_t rx_posted[PEER_MAXRX];	/* each buffer's */
	int tx_next, tx_busy[PEER_NTX];
	int rw_busy;			/* an RDMA op of ours is posted */
	int rw_status;
	int broken;			/* a completion failed: QP in error */
	uint32_t mseq;			/* last sent */
	uint32_t mseq_in;		/* last received */
	uint32_t remote_ack, remote_bufs, remote_max;
	uint32_t peer_rcv_size, peer_caps;
	uint32_t adv_bufs;		/* bufs we put in headers */
	/* receive completions not yet handed out, oldest first */
	struct rx_done rx_kept[PEER_KEPT];
	int rx_head, rx_count;
};

struct sockaddr_in;

void peer_opts_default(struct peer_opts *o);
int peer_resolve(const char *addr, int port, struct sockaddr_in *sin);
/* 0 established, 1 rejected, -1 anything else (no_rtu: 0 once sent) */
int peer_connect(struct peer *p, const struct sockaddr_in *dst,
		 const struct peer_opts *o);
int peer_listen(struct peer *p, const struct sockaddr_in *src);
/* wait for a request; 0 and its Hello in *hello, -1 */
int peer_get_request(struct peer *p, struct hello *hello, int timeout_ms);
/* take the credits and sizes of the request's Hello */
void peer_take_hello(struct peer *p, const struct hello *h);
/* answer it with the HelloAck @o describes; 0 established, -1 */
int peer_accept(struct peer *p, const struct peer_opts *o, int wait);
void peer_close(struct peer *p);

/* send a message with the current credits and sequence numbers; @ov_*
 * < 0 keep them, else replace the field as sent
 */
struct peer_hdr {
	int64_t mseq, mseq_ack, bufs, len;	/* -1: as they should be */
	int bytes;				/* -1: len */
};

#define PEER_HDR_OK ((struct peer_hdr){ -1, -1, -1, -1, -1 })
int peer_send(struct peer *p, uint8_t mid, uint8_t flags, const void *payload,
	      uint32_t plen, struct peer_hdr ov);
int peer_send_size(struct peer *p, uint8_t mid, uint32_t size);
int peer_send_avail(struct peer *p, uint8_t mid, uint32_t len, uint32_t rkey,
		    uint64_t addr);
/* next message within @timeout_ms: 0; -1 timeout; -2 connection broken */
int peer_recv(struct peer *p, struct peer_msg *m, int timeout_ms);
/* give back a received buffer (repost unless no_repost) */
void peer_done(struct peer *p, const struct peer_msg *m);
int peer_repost_all(struct peer *p);
/* RDMA READ (write 0) or WRITE into/from our area at @off: the wc status
 * (0 = success), -1 on a local failure or timeout
 */
int peer_rdma(struct peer *p, int write, uint64_t raddr, uint32_t rkey,
	      uint32_t len, uint32_t off, int timeout_ms);
int peer_credits(const struct peer *p);
/* next rdma_cm event on the connection within @timeout_ms, or -1 */
int peer_event(struct peer *p, int timeout_ms);
/* reap send completions without waiting */
void peer_poll(struct peer *p);

#endif /* SDP_PEER_H */
