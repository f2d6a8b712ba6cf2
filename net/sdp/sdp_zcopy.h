/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp: ZCopy's state, shared by sdp_zcopy.c (registrations, RDMA ops,
 * teardown), sdp_zc_send.c (SrcAvail's source), sdp_zc_read.c (SrcAvail's
 * sink), sdp_zc_sinkavail.c (SinkAvail), sdp_zc_page.c (sendfile()'s
 * pages) and sdp_zc_adapt.c (ZCopy or BCopy by cost).  Under the socket
 * lock.
 */
#ifndef _SDP_ZCOPY_H
#define _SDP_ZCOPY_H

#include <linux/scatterlist.h>
#include <rdma/rw.h>

#include "sdp.h"

enum sdp_zc_reg_state {
	SDP_ZC_REG_FREE,
	SDP_ZC_REG_BUILDING,	/* sendfile()'s pages gathered, not mapped */
	SDP_ZC_REG_ADVERTISED,	/* SrcAvail / SinkAvail queued or sent */
	SDP_ZC_REG_INVALIDATING, /* over: LOCAL_INV posted */
	SDP_ZC_REG_INVALIDATED,	/* a SinkAvail's: its reader releases it */
};

/* Pages of one SrcAvail, registered for the peer to read. */
struct sdp_zc_reg {
	struct sdp_buf		b;	/* LOCAL_INV completion */
	struct list_head	node;	/* zc->src, oldest first */
	struct ib_mr		*mr;
	struct ubuf_info	*uarg;	/* MSG_ZEROCOPY, else NULL */
	struct mmpin		mmp;	/* RLIMIT_MEMLOCK charge (blocking) */
	int			npages;
	int			nents;	/* DMA-mapped scatterlist entries */
	u32			len;	/* bytes advertised */
	u32			done;	/* bytes the peer reported read */
	u8			state;	/* enum sdp_zc_reg_state */
	bool			sink;	/* a SinkAvail's buffer, for the peer to write */
	bool			kpages;	/* pages referenced (sendfile), not pinned */
	struct page		*pages[SDP_ZC_REG_PAGES];
	struct scatterlist	sg[SDP_ZC_REG_PAGES];
};

/* One RDMA READ (a sink's fetch) or WRITE (into the peer's SinkAvail) op:
 * up to SDP_ZC_CHUNK bytes.
 */
struct sdp_zc_rw {
	struct sdp_buf		b;	/* the op's last work request */
	struct ib_cqe		part_cqe; /* ... and those before it */
	u8			part_status; /* an error one of them had */
	struct rdma_rw_ctx	ctx;
	struct sdp_buf		*bounce; /* READ into it, or into pages */
	int			npages;
	int			nsg;
	u32			len;
	u8			dir;	/* DMA_FROM_DEVICE: READ; DMA_TO_DEVICE: WRITE */
	bool			busy;	/* posted, completion not seen */
	/* its owner's word once it is over (an op of sdp_rdma_region.c),
	 * or NULL
	 */
	void			(*done)(struct sdp_sock *ssk,
					struct sdp_zc_rw *rw);
	bool			stuck;	/* posted in part (a post failed): no
					 * completion will come; the teardown
					 * ends it once the QP is drained
					 */
	struct page		*pages[SDP_ZC_CHUNK_PAGES];
	struct scatterlist	sg[SDP_ZC_CHUNK_PAGES];
};

/* What each way has cost for blocking sends (sdp_zc_adapt.c). */
#define SDP_ZCA_WINDOW		(2 << 20) /* bytes a sample counts ... */
#define SDP_ZCA_WINDOW_MAX	32	/* ... in at most this many sends */
#define SDP_ZCA_PROBE		32	/* runs of the faster way per probe */
#define SDP_ZCA_PROBE_EARLY	4	/* ... while a way has one sample */

struct sdp_zc_adapt {
	u32	rate[SDP_ZCA_WAYS][SDP_ZCA_CLASSES]; /* bytes/ms; 0: unknown */
	u8	samples[SDP_ZCA_WAYS][SDP_ZCA_CLASSES]; /* behind each, <= 255 */
	u64	run_start;	/* ns: end of the send the sample counts from */
	u64	run_last;	/* ns: end of the run's last send */
	u64	run_bytes;	/* counted so far */
	u64	run_acked;	/* BCopy, AZ: bytes acked (sdp_zca_acked()) when
				 * it started counting
				 */
	u32	run_skip;	/* bytes still to send before counting */
	u8	run_sends;	/* counted so far */
	u8	run_window;	/* sends to count */
	u8	run_cls;
	u16	runs_best;	/* runs of the faster way since a probe */
	bool	seeded;	/* from the device's figures */
	bool	run_on;		/* a run is under way */
	u8	run_way;	/* its way, enum sdp_zca_way */
	bool	run_probe;	/* BCopy not known to be the faster */
};

struct sdp_zc {
	struct sdp_zc_reg	reg[SDP_ZC_REGS];
	struct sdp_zc_rw	rd[SDP_ZC_RW_OPS];	/* our fetches */
	struct sdp_zc_rw	wr[SDP_ZC_RW_OPS];	/* our writes */
	struct list_head	src;	/* regs advertised, oldest first */
	struct ib_cqe		reg_mr_cqe; /* REG_MR, unsignaled */
	int			nregs;	/* MRs allocated: reg[0..nregs) */
	int			reg_pages; /* pages one MR maps */
	bool			fetching; /* a READ of the peer's is under way */
	/* sendfile()'s run of pages being gathered (sdp_zc_page.c) */
	struct sdp_zc_reg	*pend;
	struct sdp_buf		*pend_buf;	/* its SrcAvail, off every list */
	/* our SinkAvail: one at a time */
	struct sdp_zc_reg	*sink;
	u8			sink_state;	/* enum sdp_zc_sink_state */
	bool			sink_sent;	/* the SinkAvail is posted ... */
	bool			cancel_sent;	/* ... its SinkAvailCancel too */
	u32			sink_mseq;	/* their mseqs: an answer must */
	u32			cancel_mseq;	/* acknowledge what it answers */
	bool			sink_done;	/* its RdmaWrCompl came */
	bool			sink_acked;	/* its SinkCancelAck came */
	u32			sink_wrote;	/* bytes the peer wrote */
	u8			sink_misses;	/* offers in a row data overtook */
	u8			sink_skip;	/* offers not to make */
	struct sdp_zc_adapt	adapt;	/* ZCopy or BCopy, by cost */
};

#define SDP_ZC_SINK_MISSES	2
#define SDP_ZC_SINK_SKIP	32

enum sdp_zc_sink_state {
	SDP_ZC_SINK_NONE,
	SDP_ZC_SINK_OUT,	/* SinkAvail queued or sent */
	SDP_ZC_SINK_CANCEL,	/* SinkAvailCancel queued or sent */
};

void sdp_zc_wake(struct sock *sk);
void sdp_zc_new_key(struct ib_mr *mr);
void sdp_zc_hide_iova(struct ib_mr *mr);
ssize_t sdp_zc_pin(struct iov_iter *iter, struct page **pages, size_t bytes,
		   int max, bool write, size_t *off);
void sdp_zc_unpin(struct page **pages, int n, bool dirty);
void sdp_zc_wait(struct sdp_sock *ssk, bool (*done)(void *arg), void *arg);
int sdp_zc_inv_post(struct sdp_sock *ssk, struct sdp_zc_reg *reg);
struct sdp_zc *sdp_zc_get(struct sdp_sock *ssk);
int sdp_zc_mrs(struct sdp_conn *conn, struct sdp_zc *zc);
void sdp_zc_reg_finish(struct sdp_sock *ssk, struct sdp_zc_reg *reg,
		       bool success);
struct sdp_zc_reg *sdp_zc_free_reg(struct sdp_zc *zc);
int sdp_zc_reg_map(struct sdp_sock *ssk, struct sdp_zc *zc,
		   struct sdp_zc_reg *reg, u32 len, int access);
void sdp_zc_src_queue(struct sdp_sock *ssk, struct sdp_zc_reg *reg,
		      struct sdp_buf *buf);
bool sdp_zc_src_room(struct sdp_sock *ssk);
int sdp_zc_wait_room(struct sdp_sock *ssk, long *timeo,
		     bool (*room)(struct sdp_sock *ssk));
ssize_t sdp_zc_register(struct sdp_sock *ssk, struct sdp_zc *zc,
			struct sdp_zc_reg *reg, struct iov_iter *iter,
			struct ubuf_info *uarg, int access);
int sdp_zc_invalidate(struct sdp_sock *ssk, struct sdp_zc_reg *reg);
int sdp_zc_rw_prep(struct sdp_sock *ssk, struct sdp_zc_rw *rw,
		   struct iov_iter *iter, u32 len, u64 raddr, u32 rkey);
bool sdp_zc_rw_idle(void *ops);
void sdp_zc_rw_release(struct sdp_zc_rw *rw, struct iov_iter *iter, bool ok);

/* What the send queue (sdp_tx.c) reads of a reader's SinkAvail. */

/* Everything received has been read: a buffer offered now is for the
 * next bytes of the stream.
 */
static inline bool sdp_zc_all_read(const struct sdp_sock *ssk)
{
	return ssk->rcv_nxt == ssk->copied_seq && !ssk->urg_data;
}

/* An offer of ours waits for a control buffer (sdp_tx.c), and may still
 * go: its mseq_ack will cover every message received by then, so the
 * source would write behind their bytes.  Once data has come in, the
 * buffer is no longer for the next bytes of the stream: the reader wakes
 * and drops the offer unsent.
 */
static inline bool sdp_zc_sink_pending(const struct sdp_sock *ssk)
{
	const struct sdp_conn *conn = ssk->conn;

	return conn->zc && conn->zc->sink &&
	       conn->zc->sink_state == SDP_ZC_SINK_OUT && !conn->zc->sink_sent &&
	       sdp_zc_all_read(ssk);
}

/* The SinkAvail's header, for sdp_send_ctrl(). */
static inline void sdp_zc_fill_sinkavail(struct sdp_conn *conn,
					 struct sdp_avail_hdr *a)
{
	struct sdp_zc_reg *reg = conn->zc->sink;

	a->len = cpu_to_be32(reg->len);
	a->rkey = cpu_to_be32(reg->mr->rkey);
	a->addr = cpu_to_be64(reg->mr->iova);
}

/* Our SinkAvail (@mid) or its SinkAvailCancel has just been posted, as
 * message conn->tx_mseq: the peer's answer must acknowledge it.
 */
static inline void sdp_zc_sink_posted(struct sdp_conn *conn, u8 mid)
{
	struct sdp_zc *zc = conn->zc;

	if (mid == SDP_MID_SINK_AVAIL) {
		zc->sink_sent = true;
		zc->sink_mseq = conn->tx_mseq;
	} else {
		zc->cancel_sent = true;
		zc->cancel_mseq = conn->tx_mseq;
	}
}

#endif /* _SDP_ZCOPY_H */
