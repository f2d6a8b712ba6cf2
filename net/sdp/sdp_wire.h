/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp: the SDP wire format.  Every field is big-endian; sizes are fixed
 * and checked at build time.  Documentation/wire.rst describes each
 * message, and the compact Hello/HelloAck ib_sdp carries in the rdma_cm
 * private data in place of the 92-byte IBTA ones (with RDMA_PS_TCP,
 * rdma_cm's own header leaves 56 bytes of REQ private data).
 */
#ifndef _SDP_WIRE_H
#define _SDP_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

/* Message ids (sdp_bsdh.mid) */
enum sdp_mid {
	SDP_MID_HELLO			= 0x00,
	SDP_MID_HELLO_ACK		= 0x01,
	SDP_MID_DISCONN			= 0x02,
	SDP_MID_ABORT			= 0x03,
	SDP_MID_SENDSM			= 0x04,
	SDP_MID_RDMA_WR_COMPL		= 0x05,
	SDP_MID_RDMA_RD_COMPL		= 0x06,
	SDP_MID_MODE_CHANGE		= 0x07,
	SDP_MID_SRC_AVAIL_CANCEL	= 0x08,
	SDP_MID_SINK_AVAIL_CANCEL	= 0x09,
	SDP_MID_SINK_CANCEL_ACK		= 0x0a,
	SDP_MID_CH_RCV_BUF		= 0x0b,
	SDP_MID_CH_RCV_BUF_ACK		= 0x0c,
	SDP_MID_REGION_ADV		= 0x0d,	/* ib_sdp: one-sided RDMA */
	SDP_MID_REGION_REVOKE		= 0x0e,
	SDP_MID_REGION_REVOKE_ACK	= 0x0f,
	SDP_MID_SINK_AVAIL		= 0xfd,
	SDP_MID_SRC_AVAIL		= 0xfe,
	SDP_MID_DATA			= 0xff,
};

/* sdp_bsdh.flags */
#define SDP_OOB_PRES		0x01	/* this message holds the urgent byte */
#define SDP_OOB_PEND		0x02	/* urgent data follows in the stream */

/* Base sockets direct header: starts every message. */
struct sdp_bsdh {
	u8	mid;
	u8	flags;
	__be16	bufs;		/* receive buffers the sender has posted */
	__be32	len;		/* whole message: header(s) + payload */
	__be32	mseq;		/* sequence number of this message */
	__be32	mseq_ack;	/* last message received in order */
} __packed;

/* Version of the compact Hello/HelloAck below (major << 4 | minor). */
#define SDP_WIRE_VERSION	0x10

/* Capabilities in sdp_hello.caps / sdp_hello_ack.caps */
#define SDP_CAP_SRC_AVAIL	0x1	/* read-based ZCopy (SrcAvail) */
#define SDP_CAP_SINK_AVAIL	0x2	/* write-based ZCopy (SinkAvail) */
#define SDP_CAP_RESIZE		0x4	/* ChRcvBuf / ChRcvBufAck */
#define SDP_CAP_INIT_FIRST	0x8	/* iWARP: the active side sends first */
#define SDP_CAP_REGIONS		0x10	/* RegionAdv, RegionRevoke(Ack) */
#define SDP_CAPS		(SDP_CAP_SRC_AVAIL | SDP_CAP_SINK_AVAIL | \
				 SDP_CAP_RESIZE | SDP_CAP_INIT_FIRST | \
				 SDP_CAP_REGIONS)

/* Active side, in the REQ private data. */
struct sdp_hello {
	struct sdp_bsdh	bsdh;		/* mid = HELLO, bufs = posted */
	u8		version;	/* SDP_WIRE_VERSION */
	u8		max_adverts;	/* outstanding Src/SinkAvails it takes */
	__be16		reserved;
	__be32		rcv_size;	/* bytes in each of its receive buffers */
	__be32		caps;		/* SDP_CAP_* */
	__be32		reserved2;
} __packed;

/* Passive side, in the REP private data. */
struct sdp_hello_ack {
	struct sdp_bsdh	bsdh;		/* mid = HELLO_ACK, bufs = posted */
	u8		version;	/* SDP_WIRE_VERSION */
	u8		max_adverts;
	__be16		reserved;
	__be32		rcv_size;	/* bytes in each of its receive buffers */
	__be32		caps;		/* SDP_CAP_* both sides have */
	__be32		reserved2;
} __packed;

/* RdmaWrCompl, RdmaRdCompl, ChRcvBuf, ChRcvBufAck: a size after the BSDH. */
struct sdp_size_hdr {
	__be32	size;
} __packed;

/* SrcAvail: the source's registered buffer; SinkAvail: the sink's. */
struct sdp_avail_hdr {
	__be32	len;		/* bytes the key covers */
	__be32	rkey;
	__be64	addr;		/* remote virtual address */
} __packed;

/* RegionAdv: a region the sender registered for us (SDP_REGION_REG), in
 * nkeys MRs; region byte o is at byte a = first + o of the MRs' run,
 * in MR a / seg_len, seg_len - first bytes in the first.
 */
struct sdp_region_hdr {
	__be32	id;		/* the sender's slot: < SDP_REGIONS_MAX */
	__be32	access;		/* SDP_REGION_READ | SDP_REGION_WRITE */
	__be64	token;
	__be64	len;		/* 1 .. SDP_REGION_MAX_LEN */
	__be32	first;		/* < seg_len */
	__be32	seg_len;	/* bytes each MR maps, a multiple of 4096 */
	__be16	nkeys;		/* (first + len) / seg_len rounded up */
	__be16	reserved;
	__be32	reserved2;
} __packed;

struct sdp_region_key {
	__be64	addr;		/* the MR's first byte */
	__be32	rkey;
	__be32	reserved;
} __packed;

#define SDP_REGION_KEYS_MAX	128	/* keys in a RegionAdv */

/* RegionRevoke, RegionRevokeAck: the slot in a size header (struct
 * sdp_size_hdr).
 */

static inline bool sdp_mid_region(u8 mid)
{
	return mid == SDP_MID_REGION_ADV || mid == SDP_MID_REGION_REVOKE ||
	       mid == SDP_MID_REGION_REVOKE_ACK;
}

/* Largest rdma_cm private data ib_sdp may use for its Hello (IB REQ). */
#define SDP_HELLO_PRIVATE_DATA_MAX	56

static_assert(sizeof(struct sdp_bsdh) == 16);
static_assert(sizeof(struct sdp_hello) == 32);
static_assert(sizeof(struct sdp_hello_ack) == 32);
static_assert(sizeof(struct sdp_hello) <= SDP_HELLO_PRIVATE_DATA_MAX);
static_assert(sizeof(struct sdp_size_hdr) == 4);
static_assert(sizeof(struct sdp_avail_hdr) == 16);
static_assert(sizeof(struct sdp_region_hdr) == 40);
static_assert(sizeof(struct sdp_region_key) == 16);

/**
 * sdp_mid_min_len - smallest valid length of a message
 * @mid: the message id from its BSDH
 *
 * Return: the bytes of headers a message with this id must hold, or 0 if
 * the id is not one ib_sdp accepts on an established connection (Hello
 * and HelloAck travel only in the rdma_cm private data).
 */
static inline u32 sdp_mid_min_len(u8 mid)
{
	switch (mid) {
	case SDP_MID_DISCONN:
	case SDP_MID_ABORT:
	case SDP_MID_SENDSM:
	case SDP_MID_SRC_AVAIL_CANCEL:
	case SDP_MID_SINK_AVAIL_CANCEL:
	case SDP_MID_SINK_CANCEL_ACK:
	case SDP_MID_DATA:
		return sizeof(struct sdp_bsdh);
	case SDP_MID_RDMA_WR_COMPL:
	case SDP_MID_RDMA_RD_COMPL:
	case SDP_MID_CH_RCV_BUF:
	case SDP_MID_CH_RCV_BUF_ACK:
	case SDP_MID_REGION_REVOKE:
	case SDP_MID_REGION_REVOKE_ACK:
		return sizeof(struct sdp_bsdh) + sizeof(struct sdp_size_hdr);
	case SDP_MID_REGION_ADV:	/* and its keys */
		return sizeof(struct sdp_bsdh) + sizeof(struct sdp_region_hdr) +
		       sizeof(struct sdp_region_key);
	case SDP_MID_SINK_AVAIL:
	case SDP_MID_SRC_AVAIL:
		return sizeof(struct sdp_bsdh) + sizeof(struct sdp_avail_hdr);
	default:
		return 0;
	}
}

#endif /* _SDP_WIRE_H */
