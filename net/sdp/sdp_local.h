/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp: the local transport's link between two sockets (sdp_local.c,
 * sdp_local_data.c).
 */
#ifndef _SDP_LOCAL_H
#define _SDP_LOCAL_H

#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

/* A reader's buffer, offered for the peer to fill straight
 * (sdp_local_sink.c).  Under the link lock but @pages, fixed.
 */
struct sdp_local_sink {
	struct page	**pages;	/* pinned, FOLL_WRITE | FOLL_LONGTERM */
	struct mmpin	mmp;		/* their RLIMIT_MEMLOCK charge */
	unsigned int	npages;
	unsigned int	offset;		/* into the first page */
	size_t		len;		/* bytes offered */
	size_t		filled;		/* bytes the sender placed */
	bool		busy;		/* a sender is copying into it */
	bool		done;		/* filled: no sender takes it again */
	bool		accounted;	/* its bytes added to the stream */
};

void sdp_local_sink_account(struct sdp_sock *ssk, size_t n);
size_t sdp_local_sink_fill(struct sdp_sock *ssk, struct msghdr *msg);

/* One end of a link: what the other end sent it, not yet applied. */
struct sdp_local_end {
	struct sdp_sock		*ssk;	/* NULL once its teardown ran */
	struct list_head	inbox;	/* struct sdp_buf, LOCAL or PAGES */
	bool			fin;	/* the other end's FIN, after inbox */
	bool			rst;	/* the other end reset */
	bool			fin_wait; /* its FIN sent, bytes of its beyond
					   * our receive buffer: not acked
					   */
	bool			fin_acked; /* that FIN acked, to apply */
	struct sdp_local_sink	*sink;	/* this end's reader's buffer */
	/* its owner's regions for one-sided RDMA (sdp_local_region.c), if
	 * its socket had SDP_REGIONS
	 */
	struct sdp_local_region	*regions[SDP_REGIONS_MAX];
	bool			regions_ok;
};

/**
 * struct sdp_local_link - two sockets of this host joined
 * @ref: one per connection (struct sdp_conn's ->link)
 * @lock: the ends' fields; a leaf lock
 * @end: by ->side: 0 the connecting socket, 1 the accepted one
 * @ack_work: tells a FIN's sender the FIN is acked (see sdp_local_data.c)
 */
struct sdp_local_link {
	refcount_t		ref;
	spinlock_t		lock;	/* the ends; a leaf */
	struct sdp_local_end	end[2];
	struct work_struct	ack_work;	/* kicks a FIN's sender */
};

void sdp_local_ack_work(struct work_struct *work);

/* sdp_local_data.c: for the page messages */
struct sdp_buf *sdp_local_buf_alloc(struct sdp_sock *ssk,
				    struct sdp_sock *peer, u32 size, u8 kind);
int sdp_local_push_held(struct sdp_sock *ssk);
long sdp_local_room(const struct sdp_sock *ssk);
int sdp_local_wait_room(struct sdp_sock *ssk, long *timeo);
void sdp_local_limits(struct sdp_sock *ssk, struct sdp_sock *peer);

/* sdp_local_page.c: pages by reference */
#define SDP_LOCAL_PAGES		32	/* a page message's pages, at most */

/**
 * struct sdp_local_pages - a page message (SDP_BUF_PAGES)
 * @buf: the message; ->data is @bv, ->size the pages in it
 * @uarg: MSG_ZEROCOPY's or io_uring's notification, held until the pages
 *	are released (the peer has copied them), or NULL
 * @loan: a lending send's loan, held, or NULL (sdp_local_lend.c)
 * @slot: its index in @loan's ->msg
 * @pinned: the sender's own pages, pinned (else referenced: a file's,
 *	a pipe's, io_uring's fixed buffer's, a reclaimed loan's); under
 *	@loan's lock if it has one
 * @bv: the pages; under @loan's lock if it has one
 */
struct sdp_local_pages {
	struct sdp_buf		buf;
	struct ubuf_info	*uarg;
	struct sdp_local_loan	*loan;
	unsigned int		slot;
	bool			pinned;
	struct bio_vec		bv[SDP_LOCAL_PAGES];
};

#define SDP_LOCAL_LOAN_MSGS	64	/* a loan's messages, at most: 8 MiB */

/**
 * struct sdp_local_loan - the pages a blocking send lent (sdp_local_lend.c)
 * @ref: the sender's until it returns, and one per message
 * @lock: @msg, @pending, @copying, and the lent messages' pages; a leaf
 * @pending: messages in @msg
 * @copying: readers copying from messages in @msg now (with page faults
 *	off: never for long); their pages are not swapped meanwhile
 * @reclaiming: the sender reclaims its pages: no new copy from them starts
 * @nmsg: messages lent (the sender's, fixed once it waits)
 * @wq: the sender waits there for @pending to be 0
 * @msg: the messages still lent, by slot; NULL once released or reclaimed
 */
struct sdp_local_loan {
	refcount_t		ref;
	spinlock_t		lock;	/* @msg, @pending; a leaf */
	unsigned int		pending;
	unsigned int		copying;
	bool			reclaiming;
	unsigned int		nmsg;
	wait_queue_head_t	wq;
	struct sdp_local_pages	*msg[SDP_LOCAL_LOAN_MSGS];
};

ssize_t sdp_local_send_page(struct sdp_sock *ssk, struct sdp_conn *conn,
			    struct page *page, size_t offset, size_t size,
			    int flags, bool notlast);
ssize_t sdp_local_send_pinned(struct sdp_sock *ssk, struct msghdr *msg,
			      struct sdp_send *s, long room,
			      struct sdp_local_loan *loan);
void sdp_local_pages_put(struct sdp_sock *ssk, struct sdp_buf *buf);
size_t sdp_local_pages_copy(const struct sdp_buf *buf, u32 off, size_t len,
			    struct iov_iter *to);
size_t sdp_local_bv_copy(const struct sdp_local_pages *lp, u32 off,
			 size_t len, struct iov_iter *to);
struct sdp_buf *sdp_local_pages_for(struct sdp_sock *ssk, bool fresh);

/* sdp_local_lend.c: large blocking sends by reference */
ssize_t sdp_local_lend_pages(struct sdp_sock *ssk, struct msghdr *msg,
			     struct sdp_send *s, long room);
void sdp_local_loan_add(struct sdp_local_loan *loan,
			struct sdp_local_pages *lp);
bool sdp_local_loan_release(struct sdp_local_pages *lp);
size_t sdp_local_loan_copy(const struct sdp_local_pages *lp, u32 off,
			   size_t len, struct iov_iter *to);

/* sdp_local_region.c: one-sided RDMA, by copy */
struct sdp_local_region;
int sdp_local_region_reg(struct sdp_sock *ssk, struct sdp_conn *conn,
			 struct sdp_region *r);
void sdp_local_region_close(struct sdp_sock *ssk, struct sdp_conn *conn);
int sdp_local_region_dereg(struct sdp_sock *ssk, struct sdp_conn *conn,
			   u64 token);
int sdp_local_rdma_op(struct sdp_sock *ssk, struct msghdr *msg,
		      const struct sdp_rdma *op, struct sdp_send *s);
void sdp_local_regions_drop(struct sdp_local_end *end,
			    struct sdp_local_region **list);
void sdp_local_regions_put(struct sdp_local_region **list);

#endif /* _SDP_LOCAL_H */
