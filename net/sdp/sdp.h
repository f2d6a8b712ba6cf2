/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp: Sockets Direct Protocol, shared definitions.
 *
 * Objects and their lifetimes
 * ---------------------------
 *  struct sdp_sock     one per SDP socket; struct sock comes first so that
 *                      sdp_sk() is a container_of().  Freed by the last
 *                      sock_put().  References:
 *                        - the file's, from sk_alloc() to sdp_release();
 *                          for a child not yet accepted, the listener's
 *                          accept queue (or the embryo) owns it instead;
 *                        - the connection's, taken when the QP is created
 *                          (sdp_conn_create()) and put when it is torn down
 *                          (sdp_conn_teardown());
 *                        - one per queued work item (teardown, fin timer).
 *
 *  struct sdp_conn     one connection of a socket (QP, CQ share, PD,
 *                      rings, credits, buffer sizes, ZCopy state, the
 *                      local transport's link), kref'd: the socket holds
 *                      its current one (ssk->conn, never NULL), which a
 *                      new connection replaces as a whole (sdp_conn.c;
 *                      sdp_conn_create(), sdp_local_end_up()).  See its
 *                      comment.
 *
 * Sleeping: a path that sleeps (releases the socket lock, or waits on a
 * condition read without it) keeps what it uses alive by a reference it
 * took, never by re-reading ssk->conn, which another thread's
 * connect(AF_UNSPEC) and connect() may replace meanwhile; after the
 * sleep, sdp_conn_same() says whether its connection is still the
 * socket's, and if not it touches nothing of the new one.  Who holds what:
 *  - recvmsg() holds the socket's connection of each round (struct
 *    sdp_conn: its rings, ZCopy state and link), taken again after every
 *    sleep; the transports' sinks (sdp_local_sink(), sdp_zc_sink()) and
 *    the ZCopy fetcher sleep on that one;
 *  - sendmsg() holds the connection it sends on (struct sdp_send.conn),
 *    the one made while it waited to connect; sendfile()'s pages too;
 *  - sdp_zc_await_fetcher() takes its own, and waits on its zc;
 *  - the timers' works hold the socket (sdp_timer.c) and look at
 *    sdp_conn_usable() under the lock;
 *  - a local sender copying into a reader's pages holds nothing but the
 *    offer's busy flag, which the reader waits on (sdp_local_sink.c).
 *
 *  struct sdp_transport  what carries a connection (ssk->tp, the
 *                      transport of ssk->conn): RDMA (sdp_rdma.c and the
 *                      files it names, on sdp_verbs.c) or, for a peer on
 *                      this host, local (sdp_local.c, sdp_local_data.c,
 *                      sdp_local_sink.c).  The socket core (sdp_conn.c,
 *                      sdp_send.c, sdp_recv.c, sdp_cm.c, sdp_listen.c,
 *                      sdp_close.c, sdp_sockopt.c, sdp_timer.c; the
 *                      transports' table in sdp_transport.c) keeps the
 *                      stream, its states and its waits, and calls the
 *                      transport through its operations for what differs.
 *                      Documentation/architecture.rst draws the layers.
 *
 *  struct sdp_device   one per RDMA device (sdp_dev.c), refcounted; each
 *                      connection holds a reference while it uses the
 *                      device.  Every connection has a protection domain
 *                      of its own (conn->pd), so that a key advertised on
 *                      one connection works on no other.
 *
 *  rdma_cm_id          owned by the socket.  Whoever sets ssk->cm_id to
 *                      NULL (under the socket lock) destroys it, outside
 *                      the lock: sdp_release() if no connection needs it
 *                      any more, else the teardown work once the socket is
 *                      orphaned, or rdma_cm itself when the event handler
 *                      returns non-zero.  A listener on the IPv6 wildcard
 *                      that takes IPv4 too has a second id on the IPv4
 *                      wildcard (cm_id_v4, see sdp_listen_ids()), which
 *                      sdp_listen_stop() destroys.  A socket that shares
 *                      its port by SO_REUSEPORT is bound and listens
 *                      through its group's ids (sdp_reuseport.c), which
 *                      the group owns; its own id stays unbound.
 *
 * Locking
 * -------
 * The socket lock protects every field of struct sdp_sock not marked
 * otherwise, as in TCP: process context takes lock_sock(); completion
 * callbacks (softirq) take bh_lock_sock() and, if a process owns the
 * socket, queue the completed buffer on ->backlog for sdp_release_cb().
 * rdma_cm calls the handler with the id's handler mutex held, and the
 * handler takes the socket lock: so the socket lock is never held while
 * calling an rdma_cm function that takes the handler mutex
 * (rdma_destroy_id(), rdma_connect()).  A child's lock is never held while
 * its listener's is taken.  The local transport never holds the socket
 * locks of its two ends together: a sender hands its bytes over under the
 * link's lock (a leaf) and then takes the peer's spinlock, or leaves them
 * for the peer's sdp_release_cb() (see sdp_local.c).
 *
 * Fields read without the lock (poll, /proc) are written with WRITE_ONCE().
 */
#ifndef _SDP_H
#define _SDP_H

#include <linux/kref.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/ipv6.h>
#include <net/inet_sock.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/sdp.h>

#include "sdp_compat.h"
#include "sdp_wire.h"
#include "sdp_trace.h"

#define SDP_MODULE_VERSION	"0.4.0"

#define SDP_TX_SIZE		16	/* data messages in flight per connection,
					 * and the send buffers it may always
					 * have (more within its send budget:
					 * sdp_window.c)
					 */
#define SDP_CTRL_OWED		(2 * SDP_REGIONS_MAX)	/* sdp_tx_owe() */
#define SDP_CTRL_BUFS		4	/* control sends, and the receive buffers
					 * kept for them beyond the credits
					 */
#define SDP_CTRL_SIZE		32	/* a control message: BSDH and one header */
#define SDP_MIN_BUFS		4	/* fewest receive buffers a peer may post */
#define SDP_MAX_BUFS		1024
#define SDP_MIN_BUF_SIZE	1024	/* receive buffer size limits, bytes */
#define SDP_MAX_BUF_SIZE	(256 * 1024)
#define SDP_RESOLVE_TIMEOUT_MS	2000	/* route resolution; the least for an
					 * address (sdp_resolve_ms())
					 */
#define SDP_RESOLVE_MARGIN_MS	500
#define SDP_RESOLVE_MAX_MS	60000
/* How long a teardown lets the sends already posted (an Abort) go out
 * before the QP goes to error, in all and without one completing
 * (sdp_rdma_tx_settle())
 */
#define SDP_TEARDOWN_SETTLE_MS	500
#define SDP_TEARDOWN_IDLE_MS	50
/* ports a connect() (then EADDRNOTAVAIL) or an unbound listen() (then
 * EADDRINUSE) tries on iWARP
 */
#define SDP_PORT_TRIES		16
/* the backlog rdma_listen() gets at least: SDP keeps the socket's own
 * (sk_max_ack_backlog, pending_reqs).  Unused on InfiniBand and RoCE; on
 * iWARP it sizes the device's TCP listen queue and the connection events
 * iw_cm and the driver can hold for the listener, beyond which they drop
 * a connection's events (Soft-iWARP then never accepts it).
 */
#define SDP_CM_BACKLOG		128
#define SDP_FIN_TIMEOUT		(60 * HZ)	/* orphan waiting for the peer */
#define SDP_EMBRYO_TIMEOUT	(10 * HZ)	/* a child's REP to its RTU */

/* ZCopy (sdp_zcopy.c) */
#define SDP_ZC_REGS		8	/* SrcAvails outstanding per connection */
#define SDP_ZC_REG_PAGES	256	/* pages one SrcAvail covers (1 MiB) */
#define SDP_ZC_CHUNK		(256 * 1024)	/* bytes one RDMA READ op moves */
#define SDP_ZC_CHUNK_PAGES	(SDP_ZC_CHUNK / PAGE_SIZE + 1)
#define SDP_ZC_RW_OPS		2	/* RDMA READ ops in flight per connection */
#define SDP_ZC_RW_SGE		16	/* most SGEs one READ work request takes */
#define SDP_ZC_DIRECT_MIN	(16 * 1024)	/* reads into the user buffer */
#define SDP_ZC_ADV_MAX		(64 << 20)	/* largest SrcAvail accepted */
#define SDP_ZC_CANCEL_TIMEOUT	(5 * HZ)	/* peer to settle after a cancel */
#define SDP_INIT_WAIT		(HZ / 5)	/* iWARP: for the initiator's first */

/* Per-connection counters, for TCP_INFO; under the socket lock. */
struct sdp_conn_stats {
	u64	bytes_sent;	/* payload posted */
	u64	bytes_acked;	/* payload whose send completed */
	u64	bytes_received;	/* payload received */
	u32	segs_out, segs_in;		/* messages */
	u32	data_segs_out, data_segs_in;	/* Data messages with payload */
	u32	srtt_us, rttvar_us, min_rtt_us;	/* post to send completion */
	unsigned long last_data_sent, last_data_recv, last_recv; /* jiffies */
	/* by path, for sock_diag (sdp_diag.c) */
	u64	zc_write_sent;		/* RDMA-written into a SinkAvail */
	u64	zc_read_recv;		/* RDMA-read from SrcAvails */
	u64	zc_sink_recv;		/* written into our SinkAvail */
	u64	local_sink_recv;	/* local: copied into our buffer */
	u32	credit_stalls;
};

/* A registered buffer: a receive buffer, a send buffer or a control send. */
enum sdp_buf_kind {
	SDP_BUF_RX,
	SDP_BUF_TX,
	SDP_BUF_CTRL,
	SDP_BUF_PROBE,	/* the keepalive probe: no data */
	SDP_BUF_BOUNCE,	/* received data read by RDMA into kernel memory */
	SDP_BUF_ZC_REG,	/* a registration's LOCAL_INV completion */
	SDP_BUF_ZC_RW,	/* an RDMA READ op's completion */
	SDP_BUF_RG,	/* a region batch's last REG_MR or LOCAL_INV */
	SDP_BUF_LOCAL,	/* bytes from a peer on this host (sdp_local_data.c) */
	SDP_BUF_PAGES,	/* ... its pages, held by reference, not copied:
			 * the transport's, read by its ->copy_pages()
			 * (sdp_local_page.c)
			 */
	SDP_BUF_SPILL,	/* received data copied out of its receive buffer,
			 * which went back to the peer (sdp_window.c)
			 */
};

struct sdp_buf {
	struct ib_cqe		cqe;
	struct list_head	list;	/* free, queued, rx data or backlog */
	struct sdp_sock		*ssk;
	void			*data;
	u64			dma;
	u64			posted_ns; /* tx: when posted, for the RTT */
	u32			size;	/* bytes allocated */
	u32			len;	/* rx: bytes received; tx: bytes filled */
	u32			seq;	/* rx: stream offset of the first payload byte */
	u8			kind;	/* enum sdp_buf_kind */
	u8			status;	/* enum ib_wc_status of the completion */
	u8			mid;	/* the message id posted or received */
	u8			flags;	/* tx: BSDH flags (SDP_OOB_PRES) */
	bool			posted;	/* rx: on the receive queue */
	/* rx, a SrcAvail not yet read: the peer's bytes still to fetch */
	u64			zc_addr;
	u32			zc_rkey;
	u32			zc_len;
	u32			zc_total;	/* its whole length */
};

/* ssk->flags, under the socket lock */
enum {
	SDP_F_BOUND,		/* rdma_bind_addr() done */
	SDP_F_ID_USED,		/* cm_id went past bind: a new connect needs a new id */
	SDP_F_CONN,		/* QP, CQ and buffers exist */
	SDP_F_TEARDOWN,		/* teardown queued or running: post nothing */
	SDP_F_WAS_CONNECTED,	/* reached ESTABLISHED once */
	SDP_F_DISCONN_PEND,	/* DisConn to send after the queued data */
	SDP_F_DISCONN_SENT,	/* DisConn posted */
	SDP_F_DISCONN_DONE,	/* the peer has our DisConn (sdp_close.c) */
	SDP_F_DISCONN_RCVD,	/* peer's DisConn received */
	SDP_F_RESET,		/* connection aborted: by us or by the peer */
	SDP_F_EMBRYO,		/* child not yet in its listener's accept queue */
	SDP_F_FIN_TIMER,	/* fin_work scheduled (orphan, or embryo) */
	SDP_F_CORK_TIMER,	/* cork_work scheduled */
	SDP_F_KA_TIMER,		/* ka_work scheduled */
	SDP_F_KA_PROBE,		/* a keepalive probe is posted */
	SDP_F_ZC_TIMER,		/* zc_work (read-ahead) scheduled */
	SDP_F_ZC_HURRY,		/* the peer cancelled: fetch its SrcAvails now */
	SDP_F_TX_TIMER,		/* tx_work (the stall watchdog) scheduled */
	SDP_F_MEM_TIMER,	/* mem_work (sdp_mem.c) scheduled */
	SDP_F_WIN_STALL,	/* waiting for the peer's credits or reads */
	SDP_F_TX_MEM_WAIT,	/* a sender waits for a send buffer's memory */
	SDP_F_LOCAL_BIND,	/* bound to an address no RDMA device has: the
				 * id holds the port as a wildcard, ->local the
				 * address (sdp_local.c)
				 */
	SDP_F_LOCAL_LISTEN,	/* in the local listener table */
	SDP_F_RPORT_HOLD,	/* holds its SO_REUSEPORT group's ids
				 * listening (sdp_reuseport.c)
				 */
	SDP_F_LOCAL_CONN,	/* connecting or connected locally: the id
				 * has no addresses to copy
				 */
};

struct tcp_info;

/* sendmsg()'s state across the transport's work (sdp_tx.c). */
struct sdp_send {
	struct sdp_conn		*conn;		/* the connection it sends on,
						 * held: a send whose connection
						 * is replaced while it sleeps
						 * stops (EPIPE)
						 */
	struct ubuf_info	*uarg;		/* MSG_ZEROCOPY's notification */
	long			timeo;
	size_t			copied;		/* bytes taken from the caller */
	int			flags;		/* MSG_* */
	bool			zc_used;	/* some went by ZCopy */
	bool			no_zc;		/* copy the rest */
	bool			zc_adapt;	/* the way chosen by cost */
	bool			shallow;	/* ... measuring BCopy: queue no
						 * more than tx_size messages
						 */
	bool			az;		/* uarg is an AZ op's (sdp_az.c) */
	bool			ubuf;		/* ... the caller's (msg_ubuf:
						 * io_uring's SEND_ZC)
						 */
};

struct sdp_conn;
struct sdp_pending_req;

/**
 * struct sdp_transport - what carries a connection's bytes to its peer
 * @name: "rdma" or "local"
 * @sendmsg: take the bytes of @msg, the socket connected; @s->copied
 *	grows with what was taken; 0 or a negative errno
 * @sink: recvmsg() has nothing to read and would sleep: offer the
 *	reader's buffer for the peer to fill straight; bytes placed there,
 *	0 to look again, -EOPNOTSUPP if not now
 * @send_page: sendfile()'s or splice()'s page, by reference on the held
 *	connection; its size, 0 to copy it instead, or a negative errno
 *	(NULL: always copied)
 * @read_remote: a reader reached a receive-queue entry whose bytes are
 *	still the peer's (sdp_buf_remote()): bring up to @n of them into
 *	@msg; bytes delivered, 0 to look again, or a negative errno
 * @copy_pages: copy @len bytes of a page entry (SDP_BUF_PAGES, which
 *	only a transport with this makes), @off bytes into it, to @to, under
 *	the socket lock; bytes copied
 * @reader_done: a reader leaves recvmsg() (NULL: nothing to do)
 * @quiesce: wait until no sleeping reader uses the receive queue, before
 *	it is emptied or replaced; the lock is dropped meanwhile; 0 or
 *	-EINTR (NULL: never in use so)
 * @rx_done: a receive-queue entry has been read whole: release it
 * @rx_purge: drop every entry of the receive queue, unread, with the
 *	connection (connect(AF_UNSPEC))
 * @flush: send what may go now (@push: also what TCP_CORK or MSG_MORE
 *	held), a pending DisConn after the data
 * @reset: tell the peer the connection is reset (sdp_conn_abort())
 * @teardown: release what the connection holds; process context, called
 *	without the socket lock, returns with it held
 * @writable: poll()'s POLLOUT (lockless, under rcu_read_lock())
 * @wake_due: sk_write_space: is there room enough to wake writers now?
 *	(lockless; NULL: whenever the socket has room)
 * @info: TCP_INFO's fields beyond the state
 * @probe: a keepalive probe (SO_KEEPALIVE); 0 sent, 1 answered at once,
 *	or a negative errno
 * @diag_kind: what sock_diag reports it as (SDP_DIAG_TP_*)
 * @sock_init: a new socket: set up what the transport keeps in it
 * @release: proto.release_cb, the socket spinlock held, the socket still
 *	owned: handle what arrived for the transport while the owner held
 *	the socket.  Called for every transport, whichever carries the
 *	socket's connection now
 * @conn_free: the connection's last reference is gone: free what the
 *	transport keeps in it (torn down already: nothing is posted)
 *
 * Setting up (NULL where the transport has no part in it):
 * @claims: connect() to @dst is this transport's (it may rewrite an
 *	unspecified address to the one it reaches); asked newest transport
 *	first; the first registered carries what no other claims
 * @connect: start connecting to @dst, the socket closed with a fresh id;
 *	it waits in SYN_SENT, is established, or is closed with sk_err;
 *	0, or a negative errno with the socket unchanged
 * @bind_check: may the socket bind @addr as the transport sees its
 *	listeners?  0 or -EADDRINUSE
 * @listen: the listener takes this transport's connections too; 0 or a
 *	negative errno
 * @unlisten: it stops
 * @answer: accept_work, room in the accept queue: answer @req, which
 *	the listener (not locked) held while it was full
 * @refuse: the listener stopped: refuse @req
 * @cm_event: rdma_cm's event handler for the socket's ids
 *	(sdp_cm_create_id())
 *
 * One-sided RDMA (sdp_region.c; NULL: EOPNOTSUPP):
 * @region_reg: SDP_REGION_REG on @conn, held: fill in @r->token
 * @region_dereg: SDP_REGION_DEREG of @token on @conn, held: 0 once no
 *	byte of the region can move
 * @region_close: close(): every region of ours on @conn, held, ends as
 *	by @region_dereg before it returns
 * @rdma_op: the SDP_RDMA op of a send (@s->copied: bytes moved)
 *
 * All but @teardown, @writable, @wake_due, @sock_init and @conn_free are
 * called with the socket locked.
 * SIOCOUTQ and /proc count what a transport holds in the socket's
 * tx_queued (not sent yet), tx_inflight_bytes (sent, not yet taken by the
 * peer) and zc_src_bytes (advertised by SrcAvail).
 */
struct sdp_transport {
	const char	*name;
	int	(*sendmsg)(struct sdp_sock *ssk, struct msghdr *msg,
			   struct sdp_send *s);
	int	(*sink)(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
			int flags, long *timeo);
	ssize_t	(*send_page)(struct sdp_sock *ssk, struct sdp_conn *conn,
			     struct page *page, size_t offset, size_t size,
			     int flags, bool notlast);
	int	(*read_remote)(struct sdp_sock *ssk, struct sdp_buf *buf,
			       struct msghdr *msg, size_t n, int flags,
			       u32 *seq);
	size_t	(*copy_pages)(const struct sdp_buf *buf, u32 off, size_t len,
			      struct iov_iter *to);
	void	(*reader_done)(struct sdp_sock *ssk);
	int	(*quiesce)(struct sdp_sock *ssk);
	void	(*rx_done)(struct sdp_sock *ssk, struct sdp_buf *buf);
	void	(*rx_purge)(struct sdp_sock *ssk);
	void	(*flush)(struct sdp_sock *ssk, bool push);
	void	(*reset)(struct sdp_sock *ssk);
	void	(*teardown)(struct sdp_sock *ssk);
	bool	(*writable)(const struct sdp_sock *ssk);
	bool	(*wake_due)(const struct sdp_sock *ssk);
	void	(*info)(struct sdp_sock *ssk, struct tcp_info *info);
	int	(*probe)(struct sdp_sock *ssk);
	u8	diag_kind;
	void	(*sock_init)(struct sdp_sock *ssk);
	void	(*release)(struct sdp_sock *ssk);
	void	(*conn_free)(struct sdp_conn *conn);

	bool	(*claims)(struct net *net, struct sockaddr_storage *dst);
	int	(*connect)(struct sdp_sock *ssk, struct sockaddr_storage *dst);
	int	(*bind_check)(struct sdp_sock *ssk,
			      const struct sockaddr_storage *addr);
	int	(*listen)(struct sdp_sock *ssk);
	void	(*unlisten)(struct sdp_sock *ssk);
	void	(*answer)(struct sock *sk, struct sdp_pending_req *req);
	void	(*refuse)(struct sock *sk, struct sdp_pending_req *req);
	int	(*cm_event)(struct rdma_cm_id *id, struct rdma_cm_event *ev);

	int	(*region_reg)(struct sdp_sock *ssk, struct sdp_conn *conn,
			      struct sdp_region *r);
	int	(*region_dereg)(struct sdp_sock *ssk, struct sdp_conn *conn,
				u64 token);
	void	(*region_close)(struct sdp_sock *ssk, struct sdp_conn *conn);
	int	(*rdma_op)(struct sdp_sock *ssk, struct msghdr *msg,
			   const struct sdp_rdma *op, struct sdp_send *s);
};

extern const struct sdp_transport sdp_rdma_transport;
extern const struct sdp_transport sdp_local_transport;
/* sdp_transport.c */
void sdp_transport_register(const struct sdp_transport *tp);
const struct sdp_transport *sdp_transports_sock_init(struct sdp_sock *ssk);
const struct sdp_transport *sdp_transport_for(struct net *net,
					      struct sockaddr_storage *dst);
int sdp_transports_bind_check(struct sdp_sock *ssk,
			      const struct sockaddr_storage *addr);
int sdp_transports_listen(struct sdp_sock *ssk);
void sdp_transports_unlisten(struct sdp_sock *ssk);
int sdp_transports_cm_event(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/* most bytes one local message holds: with its header, 64 KiB (order 4) */
#define SDP_LOCAL_CHUNK		(64 * 1024 - 256)

struct sdp_local_link;

/*
 * struct sdp_conn - one connection of a socket
 *
 * Its QP, CQ share and protection domain, its rings and credits, its
 * buffer sizes and its ZCopy state.  A socket always has one (ssk->conn):
 * an empty one from its creation, and a new one for each connection it
 * makes or accepts (sdp_conn_alloc() by the transport that carries it,
 * sdp_conn_install()), which replaces the last as a whole, so nothing of
 * an earlier connection can leak into the next.  The last reference
 * frees what the transport keeps in it through tp->conn_free().
 * References (ref): the socket's, dropped when it is replaced or the
 * socket destroyed; and one for each thread that sleeps with the socket
 * lock released and goes on using it (sdp_conn_get()).  The fields are
 * under the socket lock, as those of struct sdp_sock.
 */
struct sdp_conn {
	struct kref		ref;
	struct sdp_sock		*ssk;		/* its socket */
	const struct sdp_transport *tp;		/* what carries it */

	/* verbs resources (SDP_F_CONN) */
	struct sdp_device	*sdev;
	struct ib_pd		*pd;		/* this connection's alone */
	struct ib_cq		*cq;		/* from the device's CQ pool */
	u32			cq_size;	/* entries taken from it */
	/* what a completion means (sdp_cq_done(), sdp_verbs.c) */
	void (*buf_done)(struct sdp_sock *ssk, struct sdp_buf *buf);
	struct ib_qp		*qp;
	u32			port_num;
	u32			max_inline;
	u8			retry_count;	/* asked of rdma_cm at setup */
	u8			rnr_retry;

	/* the stall watchdog and keepalive (sdp_timer.c) */
	u32			tx_wrs;		/* signaled send WRs not completed */
	unsigned long		tx_wr_stamp;	/* jiffies: last send completion */
	unsigned long		tx_win_stamp;	/* jiffies: the peer's last credit
						 * or read, or the stall's start
						 */
	struct sdp_buf		ka_buf;		/* the keepalive probe's cqe */
	u8			ka_probes;	/* probes unanswered */
	bool			iwarp;		/* a send completes once TCP has it */
	bool			fin_ack_owed;	/* iWARP: acknowledge a DisConn */
	bool			init_wait;	/* iWARP: the peer has not sent
						 * yet; hold ours until init_end
						 */
	unsigned long		init_end;	/* jiffies */
	u32			fin_mseq;	/* mseq of our DisConn */

	/* receive side */
	struct list_head	rx_early;	/* received before the HelloAck */
	struct sdp_buf		*rx_ring;
	u32			rx_size;	/* buffers the peer gets credits for */
	u32			rcv_size;	/* bytes per receive buffer posted */
	u32			rcv_size_min;	/* as in our Hello */
	u32			rcv_acked;	/* in our last ChRcvBufAck */
	bool			rx_ack_owed;	/* a ChRcvBufAck to send */
	struct list_head	rx_resize;	/* consumed, to post at rcv_size */
	u32			rx_posted;	/* buffers posted to the RQ */
	struct list_head	rx_queue;	/* buffers with unread data */
	u32			rx_held;	/* of them, receive buffers holding
						 * Data (not SrcAvails)
						 */
	u32			rx_spill;	/* bytes of SDP_BUF_SPILL buffers,
						 * their own size included
						 */
	bool			rx_spill_kick;	/* mem_work asked to spill */
	bool			rx_away;	/* spilled, the program not
						 * reading: spill again at once
						 */
	u32			rx_spill_seq;	/* copied_seq then: a reader
						 * that reads since is not away
						 */
	u32			rx_mseq;	/* mseq of the last message received */
	u32			adv_bufs;	/* bufs in the last header we sent */
	u32			adv_ack;	/* mseq_ack in the last header we sent */
	u32			rx_upd;		/* bare updates received after it */

	/* send side: buffers allocated on demand, each on tx_free,
	 * tx_queue or posted (or zc->pend_buf), freed when idle
	 */
	u32			tx_bufs;	/* send buffers allocated */
	u32			tx_size;	/* data messages in flight at most */
	u32			tx_msg_max;	/* largest message the peer takes */
	u32			tx_msg_min;	/* as in its Hello */
	u32			tx_req;		/* ChRcvBuf size not yet acked */
	bool			tx_req_send;	/* that ChRcvBuf not sent yet */
	/* control messages with a size header to send when a control
	 * buffer is free (sdp_tx_owe()), oldest first
	 */
	u32			ctrl_owed[SDP_CTRL_OWED];	/* mid << 24 | size */
	u8			nctrl_owed;
	u32			tx_returns;	/* messages to send, empty if need
						 * be, for the peer's large buffers
						 */
	unsigned long		tx_req_next;	/* jiffies: no request before */
	struct list_head	tx_free;
	struct list_head	tx_queue;	/* filled, not yet posted */
	u32			tx_inflight;	/* data messages posted, not completed */
	struct sdp_buf		*ctrl_ring;
	struct list_head	ctrl_free;
	u32			tx_mseq;	/* mseq of the last message sent */
	u32			remote_ack;	/* mseq_ack from the peer */
	u32			remote_bufs;	/* bufs from the peer */
	u32			remote_max_bufs; /* bufs in its Hello/HelloAck */

	/* for TCP_INFO */
	struct sdp_conn_stats	st;

	/* ZCopy (sdp_zcopy.c); zc is allocated on first use */
	struct sdp_zc		*zc;
	struct sdp_rg		*rg;	/* one-sided RDMA, on first use */
	bool			regions;	/* ... room kept for it (the
						 * socket's SDP_REGIONS when made)
						 */
	u32			peer_caps;	/* SDP_CAP_* both sides have */
	u8			peer_adverts;	/* SrcAvails the peer takes */
	u64			zc_adv_total;	/* bytes ever advertised by SrcAvail */
	u64			zc_adv_posted;	/* of them, in SrcAvails posted */
	u64			zc_read_total;	/* of them, reported read */
	u32			zc_rx_count;	/* peer's SrcAvails not yet read */
	u32			zc_bounce;	/* bytes read ahead, not yet read */
	u32			zc_rdcompl;	/* bytes read, RdmaRdCompl to send */
	bool			zc_cancel;	/* SrcAvailCancel to send */
	bool			zc_sinkavail;	/* our SinkAvail to send */
	bool			zc_sink_cancel;	/* SinkAvailCancel to send */
	bool			zc_cancel_ack;	/* SinkCancelAck to send */
	u32			zc_wrcompl;	/* RdmaWrCompl to send: bytes */
	bool			zc_writing;	/* RDMA WRITEs under way */
	u32			zc_data_mseq;	/* our last data-bearing message
						 * (stale SinkAvails, and the
						 * credit update rule)
						 */
	struct {			/* the peer's SinkAvail */
		u64		addr;
		u32		rkey;
		u32		len;
		u32		ack;	/* its mseq_ack */
		bool		valid;	/* not used nor withdrawn yet */
		bool		open;	/* not withdrawn: a cancel may come */
	}			zc_peer_sink;

	/* the local transport (sdp_local.c): the link to the peer socket */
	struct sdp_local_link	*link;
	u8			side;		/* our end of it */
	bool			local_applying;	/* in sdp_local_apply() */
	struct sdp_buf		*local_held;	/* corked, not delivered */
	u16			lend_skip;	/* sends copied, not lent, ... */
	u8			lend_backoff;	/* ... since the reader missed
						 * a loan (sdp_local_lend.c)
						 */
};

struct sdp_sock {
	union {
		struct sock	sk;		/* must be first */
		struct inet_sock inet;		/* IPPROTO_SDP: inet_create() */
	};					/* writes its fields */
	struct rdma_cm_id	*cm_id;		/* see "rdma_cm_id" above */
	struct rdma_cm_id	*cm_id_v4;	/* a dual-stack listener's IPv4 half */
	unsigned long		flags;		/* SDP_F_* */
	u32			proc_id;	/* in sdp_net.socks (sdp_proc.c) */
	struct sockaddr_storage	local;		/* copies of the id's addresses, */
	struct sockaddr_storage	peer;		/* for getname() and /proc */

	/* listener */
	struct list_head	accept_queue;	/* established children */
	int			accept_count;	/* READ_ONCE in poll */
	/* child */
	struct sock		*parent;	/* listener, held, until accepted */
	struct list_head	accept_node;
	struct hlist_node	local_node;	/* listener: the local table */
	struct sdp_rport	*rport;		/* SO_REUSEPORT group, held */
	struct list_head	rport_node;	/* listening in it */

	/* listener: connection requests waiting for room in the accept
	 * queue (struct sdp_pending_req), as TCP leaves SYNs unanswered
	 */
	struct list_head	pending_reqs;
	int			pending_count;
	int			embryos;	/* children in TCP_SYN_RECV */
	struct work_struct	accept_work;	/* answers pending_reqs */

	/* options */
	int			zcopy_thresh;	/* SDP_ZCOPY_THRESH, bytes */
	struct sdp_az_chan	*az_chan;	/* SDP_ASYNC, held */
	bool			zc_thresh_set;	/* ... set: no adapting */
	int			last_bind_err;	/* SDP_LAST_BIND_ERR, errno */
	u8			port_tries;	/* sdp_connect_repick() */
	u32			connect_gen;	/* local connect()s made: a
						 * listener's answer to an
						 * earlier one is stale
						 */
	bool			nodelay;	/* TCP_NODELAY */
	bool			regions;	/* SDP_REGIONS: one-sided RDMA */
	bool			cork;		/* TCP_CORK */
	bool			more;		/* MSG_MORE on the last send */
	bool			v6;		/* given a sockaddr_in6 */
	bool			v6only;		/* IPV6_V6ONLY */
	u8			tos;		/* IP_TOS */
	u8			tclass;		/* IPV6_TCLASS */
	int			user_mss;	/* TCP_MAXSEG */
	int			keepidle, keepintvl, keepcnt;	/* seconds */
	u32			user_timeout;	/* TCP_USER_TIMEOUT, ms */
	u32			notsent_lowat;	/* TCP_NOTSENT_LOWAT, bytes */
	/* recv_poll (sdp_rx.c), under the lock */
	u16			poll_skip;	/* waits not to poll */
	u8			poll_misses;	/* polls in vain in a row */
	u8			poll_backoff;	/* rests since the last success */

	/* IPPROTO_SDP (sdp_fallback.c): TCP's socket, ready to carry the
	 * connect if the SDP one fails; ->fb_take, under the socket lock,
	 * says whether it did (the socket's file is TCP's from then on)
	 */
	struct sdp_fallback	*fb;
	bool			(*fb_take)(struct sdp_sock *ssk, int err);
	bool			fb_pending;	/* TCP connecting for us */
	u16			fb_err;		/* SDP's errno, once TCP took
						 * the file (sock_diag)
						 */
	unsigned long		fb_ino;		/* TCP's socket inode then */
	struct sdp_twin		*twin;		/* a listener's TCP socket
						 * (sdp_fallback_listen.c)
						 */
	s8			fallback;	/* SDP_FALLBACK: 1, 0, or -1 for
						 * ipproto_fallback's say
						 */
	struct mem_cgroup	*memcg;		/* the owner's: what the peer makes
						 * us allocate is charged there
						 */
	atomic_long_t		buf_bytes;	/* buffer memory held (sdp_mem.c) */

	/* the connection: see struct sdp_conn */
	const struct sdp_transport *tp;	/* its transport; READ_ONCE in poll */
	struct sdp_conn		*conn;		/* never NULL */
	struct mutex		teardown_lock;	/* serialises sdp_conn_teardown() */
	struct work_struct	teardown_work;
	struct delayed_work	fin_work;
	struct delayed_work	cork_work;	/* TCP_CORK / MSG_MORE ceiling */
	struct delayed_work	ka_work;	/* keepalive */
	struct delayed_work	tx_work;	/* the stall watchdog */
	struct list_head	backlog;	/* completions deferred to release_cb */
	struct delayed_work	mem_work;	/* sdp_mem.c */

	/* the stream, read without the lock by poll and /proc */
	u32			rcv_nxt;	/* stream bytes received, READ_ONCE */
	u32			copied_seq;	/* stream bytes consumed, READ_ONCE */
	u32			urg_seq;	/* stream offset of the urgent byte */
	u16			urg_data;	/* TCP_URG_* | the urgent byte */
	u32			tx_nfree;	/* READ_ONCE in poll */
	u32			tx_queued;	/* payload bytes in tx_queue */
	u32			tx_inflight_bytes;
	/* local transport (sdp_local_data.c), under the link's lock */
	u32			tx_local_limit;	/* window: the peer's receive
						 * buffer and our send buffer
						 */
	u32			tx_local_rcv;	/* of it, the peer's receive buffer */
	u32			tx_local_unread; /* what the peer holds of ours */

	/* ZCopy, the socket's side (struct sdp_conn has the rest) */
	u32			zc_src_count;	/* SrcAvails advertised, not done */
	u32			zc_src_bytes;	/* their bytes, for SIOCOUTQ */
	u32			zc_readers;	/* threads waiting in recvmsg() */
	struct delayed_work	zc_work;	/* read-ahead */
	wait_queue_head_t	zc_wait;	/* RDMA ops, keys settling */
};

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return container_of(sk, struct sdp_sock, sk);
}

/* What a function's comment means by "@ssk: the socket, locked", checked
 * by lockdep: owned (lock_sock()), or its spinlock held by a completion
 * that found no owner.
 */
static inline void sdp_assert_locked(const struct sdp_sock *ssk)
{
	sock_owned_by_me(&ssk->sk);
}

/* Bytes of the stream a receive-queue entry holds: a Data message's
 * payload, a bounce buffer's bytes, or a SrcAvail's bytes not yet read.
 */
static inline u32 sdp_buf_payload(const struct sdp_buf *buf)
{
	if (buf->kind != SDP_BUF_RX)	/* bounce, spill, local */
		return buf->len;
	if (buf->mid == SDP_MID_SRC_AVAIL)
		return buf->zc_len;
	return buf->len - sizeof(struct sdp_bsdh);
}

static inline bool sdp_addr_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ipv4_is_loopback(((struct sockaddr_in *)a)->sin_addr.s_addr);
	return ipv6_addr_loopback(&((struct sockaddr_in6 *)a)->sin6_addr);
}

/* Wait until no sleeping reader uses the connection's receive queue
 * (the transport's ->quiesce()): 0, or -EINTR.
 */
static inline int sdp_conn_quiesce(struct sdp_sock *ssk)
{
	return ssk->tp->quiesce ? ssk->tp->quiesce(ssk) : 0;
}

/* An entry whose bytes are still the peer's: a SrcAvail it advertised,
 * read by the transport's ->read_remote() and off the queue once read.
 */
static inline bool sdp_buf_remote(const struct sdp_buf *buf)
{
	return buf->kind == SDP_BUF_RX && buf->mid == SDP_MID_SRC_AVAIL;
}

/* Where those bytes start. */
static inline void *sdp_buf_bytes(const struct sdp_buf *buf)
{
	return buf->kind != SDP_BUF_RX ? buf->data :
	       buf->data + sizeof(struct sdp_bsdh);
}

/* The receive ring: rx_size buffers the peer gets credits for, and
 * SDP_CTRL_BUFS more that only control messages fill.
 */
static inline u32 sdp_rx_ring_size(const struct sdp_conn *conn)
{
	return conn->rx_size + SDP_CTRL_BUFS;
}

/* The receive buffers we advertise: those posted, less the control ones. */
static inline u32 sdp_rx_adv(const struct sdp_conn *conn)
{
	return conn->rx_posted > SDP_CTRL_BUFS ?
	       conn->rx_posted - SDP_CTRL_BUFS : 0;
}

/* Send credits: the peer's posted buffers our messages may still fill. */
static inline int sdp_tx_credits(const struct sdp_conn *conn)
{
	return (s32)(conn->remote_ack - conn->tx_mseq) + (s32)conn->remote_bufs;
}

/* After a sleep: is @conn, held by the sleeper, still the socket's?  A
 * connect(AF_UNSPEC) and a new connect() of another thread may have
 * replaced it meanwhile; then nothing of the new one is the sleeper's.
 */
static inline bool sdp_conn_same(const struct sdp_sock *ssk,
				 const struct sdp_conn *conn)
{
	return READ_ONCE(ssk->conn) == conn;
}

/* Bytes received and not yet read (lockless readers: poll, /proc). */
static inline u32 sdp_rx_queued(const struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->rcv_nxt) - READ_ONCE(ssk->copied_seq);
}

static inline bool sdp_conn_usable(const struct sdp_sock *ssk)
{
	return test_bit(SDP_F_CONN, &ssk->flags) &&
	       !test_bit(SDP_F_TEARDOWN, &ssk->flags);
}

/* ZCopy or BCopy by cost (sdp_zc_adapt.c): size classes, and the ways */
#define SDP_ZCA_MIN_SHIFT	14	/* the first class: 16 KiB */
#define SDP_ZCA_CLASSES		9	/* 16 KiB .. 4 MiB and more */

enum sdp_zca_way {
	SDP_ZCA_BCOPY,
	SDP_ZCA_ZCOPY,		/* by SrcAvail: returns once the peer read */
	SDP_ZCA_AZ,		/* by SrcAvail, AZ-SDP: returns at once */
	SDP_ZCA_WAYS
};

struct sdp_device {
	struct ib_device	*ibdev;
	struct kref		ref;
	/* what its connections last measured, bytes/ms per way, and
	 * how many samples stand behind each figure (up to 255); a new
	 * connection starts from them (READ_ONCE/WRITE_ONCE, no lock)
	 */
	u32			zca_rate[SDP_ZCA_WAYS][SDP_ZCA_CLASSES];
	u8			zca_samples[SDP_ZCA_WAYS][SDP_ZCA_CLASSES];
};

/* Counters of /proc/net/sdpstats; names in sdp_proc.c */
enum sdp_mib_field {
	SDP_MIB_ACTIVE_OPENS,
	SDP_MIB_PASSIVE_OPENS,
	SDP_MIB_CONN_REFUSED,
	SDP_MIB_CONN_FAILED,
	SDP_MIB_CONN_ABORTED,
	SDP_MIB_CONN_CLOSED,
	SDP_MIB_TX_BYTES,
	SDP_MIB_RX_BYTES,
	SDP_MIB_TX_DATA,
	SDP_MIB_RX_DATA,
	SDP_MIB_TX_CREDIT_UPDATE,
	SDP_MIB_RX_CREDIT_UPDATE,
	SDP_MIB_TX_DISCONN,
	SDP_MIB_RX_DISCONN,
	SDP_MIB_TX_ABORT,
	SDP_MIB_RX_ABORT,
	SDP_MIB_TX_INLINE,
	SDP_MIB_CREDIT_STALLS,
	SDP_MIB_SNDBUF_STALLS,
	SDP_MIB_NAGLE_HOLDS,
	SDP_MIB_PROTO_ERRORS,
	SDP_MIB_HELLO_ERRORS,
	SDP_MIB_CQ_ERRORS,
	SDP_MIB_QP_ERRORS,
	SDP_MIB_FIN_TIMEOUTS,
	SDP_MIB_TX_URGENT,
	SDP_MIB_RX_URGENT,
	SDP_MIB_KEEPALIVE_PROBES,
	SDP_MIB_KEEPALIVE_TIMEOUTS,
	SDP_MIB_TRANSPORT_TIMEOUTS,
	SDP_MIB_STALL_TIMEOUTS,
	SDP_MIB_LISTEN_QUEUED,
	SDP_MIB_LISTEN_OVERFLOWS,
	SDP_MIB_EMBRYO_TIMEOUTS,
	SDP_MIB_TX_SRCAVAIL,
	SDP_MIB_TX_ZC_BYTES,
	SDP_MIB_RX_SRCAVAIL,
	SDP_MIB_RX_ZC_DIRECT_BYTES,
	SDP_MIB_RX_ZC_BOUNCE_BYTES,
	SDP_MIB_ZC_READS,
	SDP_MIB_TX_RDCOMPL,
	SDP_MIB_RX_RDCOMPL,
	SDP_MIB_ZC_CANCELS,
	SDP_MIB_RX_ZC_CANCELS,
	SDP_MIB_ZC_FALLBACKS,
	SDP_MIB_ZC_WRITES,
	SDP_MIB_TX_SINKAVAIL,
	SDP_MIB_RX_SINKAVAIL,
	SDP_MIB_TX_ZC_WRITE_BYTES,
	SDP_MIB_RX_ZC_SINK_BYTES,
	SDP_MIB_SINK_CANCELS,
	SDP_MIB_ZC_ADAPT_COPIED,
	SDP_MIB_ZC_ADAPT_PROBES,
	SDP_MIB_RECV_POLLS,
	SDP_MIB_RECV_POLL_HITS,
	SDP_MIB_TX_ZC_PAGE_BYTES,
	SDP_MIB_ZC_PAGE_REFS,	/* a gauge: pages held by reference now */
	SDP_MIB_BUF_BYTES,	/* a gauge: buffer memory held now */
	SDP_MIB_BUF_ALLOC_FAILS,
	SDP_MIB_RCVBUF_GROWS,
	SDP_MIB_RCVBUF_SHRINKS,
	SDP_MIB_LOCAL_ACTIVE_OPENS,
	SDP_MIB_LOCAL_PASSIVE_OPENS,
	SDP_MIB_LOCAL_TX_BYTES,
	SDP_MIB_LOCAL_RX_BYTES,
	SDP_MIB_LOCAL_SINK_BYTES,
	SDP_MIB_LOCAL_PAGE_BYTES,	/* sent as pages by reference */
	SDP_MIB_LOCAL_LEND_BYTES,	/* ... of them lent by blocking sends */
	SDP_MIB_LOCAL_LEND_RECLAIMED,	/* ... copied back: no reader came */
	SDP_MIB_CONN_PORT_RETRIES,
	SDP_MIB_LISTEN_PORT_RETRIES,
	SDP_MIB_RX_SPILL_BYTES,
	SDP_MIB_AZ_SENDS,
	SDP_MIB_AZ_BYTES,
	SDP_MIB_AZ_SYNC_COPIED,		/* in SDP_AZ_SYNC_* order */
	SDP_MIB_AZ_SYNC_UNPROTECTED,
	SDP_MIB_AZ_SYNC_PINNED,
	SDP_MIB_AZ_SYNC_BUDGET,
	SDP_MIB_AZ_SYNC_OTHER,
	SDP_MIB_AZ_RECV_WAITS,
	SDP_MIB_AZ_FAULTS,		/* reported by libsdp */
	SDP_MIB_AZ_SYNC_FAULTS,		/* reported by libsdp */
	SDP_MIB_RG_REGS,
	SDP_MIB_RG_DEREGS,
	SDP_MIB_RG_PEER_REGIONS,
	SDP_MIB_RG_WRITE_BYTES,
	SDP_MIB_RG_READ_BYTES,
	SDP_MIB_RG_REVOKE_TIMEOUTS,
	SDP_MIB_CONN_FALLBACKS,		/* IPPROTO_SDP connects carried by TCP */
	SDP_MIB_ACCEPT_FALLBACKS,	/* ... and accepts */
	SDP_MIB_LISTEN_FALLBACK_FAILS,	/* listeners TCP could not join */
	SDP_MIB_LSM_DENIED,		/* connects a TCP rule refused */
	SDP_MIB_MAX
};

struct sdp_mib {
	u64	mib[SDP_MIB_MAX];
};

struct sdp_net {
	struct sdp_mib __percpu	*stats;
	struct xarray		socks;		/* every SDP socket, by proc_id */
	u32			next_id;	/* under socks' lock */
};

extern unsigned int sdp_net_id;

static inline struct sdp_net *sdp_net(const struct net *net)
{
	return net_generic(net, sdp_net_id);
}

#define SDP_ADD_STATS(net, field, val) \
	this_cpu_add(sdp_net(net)->stats->mib[field], (val))
#define SDP_INC_STATS(net, field)	SDP_ADD_STATS(net, field, 1)

/* sdp_params.c */
extern int sdp_af_inet;
extern int sdp_af_inet6;
extern int sdp_zcopy_thresh;
extern bool sdp_az_verify;
extern int sdp_zcopy_adapt;
extern int sdp_recv_poll;
#define SDP_RECV_POLL_MAX	USEC_PER_SEC	/* us */
#define SDP_RECV_POLL_MISSES	2	/* polls in vain, then a rest */
extern int sdp_rx_size;
extern int rcvbuf_initial_size;
extern int rcvbuf_max_size;
extern int sdp_inline_thresh;
extern int sdp_keepalive_time;
extern int sdp_retry_count;
extern int sdp_max_embryos;
extern int sdp_local;
extern int sdp_local_lend_min;
extern int sdp_local_lend_us;
extern struct workqueue_struct *sdp_wq;

/* sdp_sock.c */
extern struct proto sdp_proto;
struct sock *sdp_sk_alloc(struct net *net, struct proto *prot, int family,
			  int kern, struct socket *sock);
void sdp_sock_flags(struct socket *sock);
int sdp_sk_setup(struct sock *sk, struct socket *sock);
int sdp_sk_attach_id(struct sock *sk);

/* sdp_inet.c: IPPROTO_SDP, SDP as a protocol of AF_INET and AF_INET6 */
extern int sdp_ipproto;
extern bool sdp_ipproto_fallback;

bool sdp_fallback_on(const struct sdp_sock *ssk);

int sdp_inet_init(void);
void sdp_inet_exit(void);

/* An IPv6 socket: AF_INET6_SDP, or AF_INET6 with IPPROTO_SDP. */
static inline bool sdp_family_v6(const struct sock *sk)
{
	return sk->sk_family == sdp_af_inet6 || sk->sk_family == AF_INET6;
}

/* The address family getname() answers with. */
static inline int sdp_addr_family(const struct sock *sk)
{
	return sdp_family_v6(sk) || sdp_sk(sk)->v6 ? AF_INET6 : AF_INET;
}

/* sdp_dev.c */
int sdp_dev_init(void);
void sdp_dev_exit(void);
struct sdp_device *sdp_dev_get(struct ib_device *ibdev);
void sdp_dev_put(struct sdp_device *sdev);

/* A connection request waiting for room in the accept queue: over RDMA
 * (@id) or from a local client (@client, held).
 */
struct sdp_pending_req {
	struct list_head	node;		/* the listener's pending_reqs */
	const struct sdp_transport *tp;		/* whose request */
	struct rdma_cm_id	*id;
	struct sdp_sock		*client;
	u32			client_gen;	/* its connect_gen then */
	struct sdp_hello	hello;		/* checked */
	u8			initiator_depth;
	u8			responder_resources;
};

/* sdp_port.c: the port space */
struct rdma_cm_id *sdp_cm_create_id(struct sock *sk);
void sdp_addr_snapshot(struct sdp_sock *ssk);
int sdp_bind_id(struct sdp_sock *ssk, struct rdma_cm_id *id,
		struct sockaddr_storage *addr);
int sdp_bind_errno(int err);
bool sdp_v6_dual(struct sdp_sock *ssk);
int sdp_renew_id(struct sdp_sock *ssk);
void sdp_id_options(struct sdp_sock *ssk, struct rdma_cm_id *id);

/* sdp_cm.c: bind, connect, names */
int sdp_bind(struct socket *sock, struct sockaddr *uaddr, int addr_len);
int sdp_listen(struct socket *sock, int backlog);
int sdp_accept(struct socket *sock, struct socket *newsock,
	       struct proto_accept_arg *arg);
int sdp_connect(struct socket *sock, struct sockaddr *uaddr, int addr_len,
		int flags);
int sdp_connect_checked(struct socket *sock, struct sockaddr *uaddr,
			int addr_len, int flags);
int sdp_getname(struct socket *sock, struct sockaddr *uaddr, int peer);
void sdp_connect_failed(struct sdp_sock *ssk, int err);

/* sdp_lsm.c: the security hooks a TCP connect() meets */
int sdp_lsm_connect(struct sock *sk, struct sockaddr *uaddr, int len);

/* sdp_listen.c: the passive side */
void sdp_cm_init(struct sdp_sock *ssk);
int sdp_listen_ids(struct sdp_sock *ssk, struct rdma_cm_id *id,
		   struct rdma_cm_id **v4, int backlog);
void sdp_listen_stop(struct sock *sk);
void sdp_embryo_expire(struct sock *child);
bool sdp_listen_room(struct sock *sk);
void sdp_child_inherit(struct sock *child, struct sock *parent);

/* sdp_reuseport.c: SO_REUSEPORT groups */
struct sdp_rport;
struct sdp_rport *sdp_rport_new(struct sock *sk);
void sdp_rport_free(struct sdp_rport *g);
int sdp_rport_bind(struct sdp_sock *ssk, struct sockaddr_storage *addr,
		   struct sdp_rport **newg);
int sdp_rport_listen(struct sdp_sock *ssk, int backlog);
void sdp_rport_listening(struct sdp_sock *ssk);
bool sdp_rport_unlisten(struct sdp_sock *ssk);
void sdp_rport_stop(struct sdp_sock *ssk);
void sdp_rport_release(struct sdp_sock *ssk);
int sdp_rport_unshare(struct sdp_sock *ssk);
u32 sdp_rport_hash(const struct sockaddr_storage *peer);
struct sock *sdp_rport_pick(struct sdp_sock *ls, u32 hash);
bool sdp_rport_shared(const struct sdp_sock *ssk, const struct sdp_sock *ls);

/* sdp_rdma_cm.c: the RDMA transport's set-up */
int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
bool sdp_rdma_claims(struct net *net, struct sockaddr_storage *dst);
int sdp_rdma_connect(struct sdp_sock *ssk, struct sockaddr_storage *dst);
void sdp_rdma_answer(struct sock *sk, struct sdp_pending_req *req);
void sdp_rdma_refuse(struct sock *sk, struct sdp_pending_req *req);
void sdp_pending_free(struct sock *sk, struct sdp_pending_req *req);
void sdp_embryo_gone(struct sock *sk);
int sdp_child_established(struct sock *child);
int sdp_child_failed(struct sock *child, bool in_handler);

/* sdp_local.c */
int sdp_local_pair(struct sdp_sock *client, struct sock *child);
void sdp_local_link_put(struct sdp_local_link *link);
struct sdp_sock *sdp_local_peer_get(struct sdp_sock *ssk);
int sdp_local_init(void);
void sdp_local_exit(void);
void sdp_local_kick(struct sdp_sock *ssk);

/* sdp_local_data.c */
void sdp_local_apply(struct sdp_sock *ssk);
void sdp_local_buf_free(struct sdp_sock *ssk, struct sdp_buf *buf);
void sdp_local_flush(struct sdp_sock *ssk, bool push);
int sdp_local_sendmsg(struct sdp_sock *ssk, struct msghdr *msg,
		      struct sdp_send *s);
int sdp_local_sink(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		   int flags, long *timeo);
void sdp_local_rx_done(struct sdp_sock *ssk, struct sdp_buf *buf);
bool sdp_local_writable(const struct sdp_sock *ssk);

/* sdp_close.c */
int sdp_sk_orphan_put(struct sock *sk, bool in_handler);
void sdp_shutdown_send(struct sdp_sock *ssk);
void sdp_close_if_done(struct sdp_sock *ssk);
void sdp_disconn_done(struct sdp_sock *ssk);
void sdp_disconn_acked(struct sdp_sock *ssk);
int sdp_reset_errno(const struct sock *sk);
void sdp_conn_teardown(struct sdp_sock *ssk);
void sdp_conn_queue_teardown(struct sdp_sock *ssk);
void sdp_conn_abort(struct sdp_sock *ssk, int err, bool send_abort);
void sdp_flushed(struct sdp_sock *ssk);
void sdp_close_init(struct sdp_sock *ssk);

/* sdp_conn.c: the connection object, the transports */
void sdp_release_cb(struct sock *sk);
int sdp_conn_init(struct sdp_sock *ssk);
struct sdp_conn *sdp_conn_alloc(struct sdp_sock *ssk,
				const struct sdp_transport *tp);
void sdp_conn_install(struct sdp_sock *ssk, struct sdp_conn *conn);
struct sdp_conn *sdp_conn_get(struct sdp_sock *ssk);
void sdp_conn_put(struct sdp_conn *conn);

/* sdp_verbs.c: the RDMA transport's ground floor */
int sdp_ring_alloc(struct sdp_sock *ssk, struct sdp_buf **ringp, u32 n,
		   u32 size);
void sdp_ring_free(struct sdp_sock *ssk, struct sdp_buf **ringp, u32 n);
int sdp_ring_map(struct ib_device *dev, struct sdp_buf *ring, u32 n,
		 enum dma_data_direction dir);
void sdp_ring_unmap(struct ib_device *dev, struct sdp_buf *ring, u32 n,
		    enum dma_data_direction dir);
int sdp_qp_create(struct sdp_sock *ssk, struct rdma_cm_id *id);
void sdp_pd_release(struct sdp_conn *conn);
int sdp_post_recv(struct sdp_conn *conn, struct sdp_buf *buf);
int sdp_qp_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);

/* sdp_rdma.c: the RDMA transport's connection */
int sdp_conn_create(struct sdp_sock *ssk, struct rdma_cm_id *id);
void sdp_conn_free_verbs(struct sdp_sock *ssk, struct rdma_cm_id *id);
void sdp_buf_init(struct sdp_sock *ssk, struct sdp_buf *buf, u8 kind);
int sdp_post_send(struct sdp_sock *ssk, struct sdp_buf *buf);
int sdp_post_zero_read(struct sdp_sock *ssk, struct sdp_buf *buf);
void sdp_sq_posted(struct sdp_sock *ssk);
void sdp_ka_complete(struct sdp_sock *ssk, struct sdp_buf *buf);

/* Bytes a socket holds to send: queued, and sent but not completed. */
static inline u32 sdp_tx_held(const struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->tx_queued) + READ_ONCE(ssk->tx_inflight_bytes);
}

/* sdp_buf.c: the memory a socket may hold, its buffers' memory */
u32 sdp_snd_budget(const struct sdp_sock *ssk);
u32 sdp_rcv_budget(const struct sdp_sock *ssk);
int __sdp_buf_alloc(struct sdp_sock *ssk, struct sdp_buf *buf, u32 size,
		    enum dma_data_direction dir, bool grow, gfp_t gfp);
int sdp_buf_alloc(struct sdp_sock *ssk, struct sdp_buf *buf, u32 size,
		  enum dma_data_direction dir, bool grow);
void sdp_buf_release(struct sdp_sock *ssk, struct sdp_buf *buf,
		     enum dma_data_direction dir);
void sdp_buf_account(struct sdp_sock *ssk, long bytes);
bool sdp_buf_room(struct sdp_sock *ssk, u32 bytes);
struct sdp_buf *sdp_bounce_alloc(struct sdp_sock *ssk, u32 want);
int sdp_pin_user(u64 addr, u64 len, bool write, struct page ***pages,
		 int *npages, struct mmpin *mmp);

/* The memory a bounce (or spill) buffer takes. */
static inline u32 sdp_bounce_truesize(const struct sdp_buf *b)
{
	return b->size + sizeof(*b);
}

void sdp_bounce_free(struct sdp_buf *b);

/* sdp_window.c: what a writer may hand over before the peer reads */
bool sdp_tx_buf_avail(const struct sdp_sock *ssk);
bool sdp_tx_wake_due(const struct sdp_sock *ssk);
void sdp_rx_held_add(struct sdp_sock *ssk);
void sdp_rx_spill(struct sdp_sock *ssk);
void sdp_rx_spill_free(struct sdp_conn *conn, struct sdp_buf *buf);
void sdp_rx_spill_done(struct sdp_sock *ssk, struct sdp_buf *buf);
u32 sdp_rx_room(const struct sdp_sock *ssk);
bool sdp_rx_ahead_room(struct sdp_sock *ssk);

/* sdp_mem.c: buffer memory that follows the traffic */
void sdp_mem_kick(struct sdp_sock *ssk, unsigned long delay);
struct sdp_buf *sdp_tx_buf_take(struct sdp_sock *ssk);
void sdp_tx_bufs_unmap(struct sdp_sock *ssk);
void sdp_tx_bufs_free(struct sdp_sock *ssk, struct sdp_conn *conn);
bool sdp_tx_buf_ready(struct sdp_sock *ssk);
void sdp_tx_want_grow(struct sdp_sock *ssk);
int sdp_tx_chrcvbuf_ack(struct sdp_sock *ssk, u32 size);
int sdp_tx_ping(struct sdp_sock *ssk);
void sdp_rx_chrcvbuf(struct sdp_sock *ssk, u32 size);
bool sdp_rx_ack_due(const struct sdp_sock *ssk);
void sdp_rx_ack_sent(struct sdp_conn *conn);
int sdp_rx_post_or_defer(struct sdp_sock *ssk, struct sdp_buf *buf);
void sdp_mem_init(struct sdp_sock *ssk);

/* Bytes a send buffer takes: the peer's limit, or its own size. */
static inline u32 sdp_tx_room(const struct sdp_conn *conn,
			      const struct sdp_buf *buf)
{
	return min(buf->size, conn->tx_msg_max);
}

/* sdp_timer.c */
void sdp_timer_arm(struct sdp_sock *ssk, int bit, struct delayed_work *w,
		   unsigned long delay);
void sdp_timer_reset(struct sdp_sock *ssk, int bit, struct delayed_work *w,
		     unsigned long delay);
bool sdp_timer_claim(struct sdp_sock *ssk, int bit);
unsigned long sdp_ka_idle(const struct sdp_sock *ssk);
bool sdp_ka_active(const struct sdp_sock *ssk);
unsigned long sdp_retries2_timeout(const struct net *net);
void sdp_timers_init(struct sdp_sock *ssk);
int sdp_timers_cancel(struct sdp_sock *ssk);
void sdp_fin_timer_arm(struct sdp_sock *ssk);
int sdp_embryo_timer_stop(struct sdp_sock *ssk);
void sdp_cork_timer_arm(struct sdp_sock *ssk);
void sdp_ka_reset(struct sdp_sock *ssk, bool on);
void sdp_keepalive(struct sock *sk, int val);
void sdp_stall_arm(struct sdp_sock *ssk);
void sdp_stall_recheck(struct sdp_sock *ssk);
void sdp_win_wait(struct sdp_sock *ssk);

/* The peer gave a credit or read a SrcAvail: its window moves. */
static inline void sdp_win_progress(struct sdp_conn *conn)
{
	conn->tx_win_stamp = jiffies;
}

/* sdp_zcopy.c, sdp_zc_send.c, sdp_zc_read.c, sdp_zc_sinkavail.c,
 * sdp_zc_page.c
 */
bool sdp_zc_peer_busy(struct sdp_sock *ssk);
struct sdp_zc;
ssize_t sdp_zc_page_add(struct sdp_sock *ssk, struct sdp_conn *conn,
			struct page *page, size_t offset, size_t size,
			int flags, bool notlast);
void sdp_zc_page_flush(struct sdp_sock *ssk);
bool sdp_zc_want(struct sdp_sock *ssk, struct msghdr *msg, int flags);
/* sdp_region.c: one-sided RDMA, the socket calls */
int sdp_region_getsockopt(struct sdp_sock *ssk, char __user *optval,
			  int __user *optlen);
int sdp_region_setsockopt(struct sdp_sock *ssk, sockptr_t optval,
			  unsigned int optlen);
void sdp_region_close(struct sdp_sock *ssk);
int sdp_region_cmsg(struct msghdr *msg, struct sdp_rdma *op);
int sdp_region_send(struct sdp_sock *ssk, struct msghdr *msg,
		    const struct sdp_rdma *op, struct sdp_send *s);

/* sdp_rdma_region.c: ... over RDMA */
#define SDP_RG_OPS		16	/* one-sided ops in flight per connection */
#define SDP_RG_BATCH		16	/* REG_MRs or LOCAL_INVs posted at once */
struct sdp_zc_rw;
int sdp_rg_reg(struct sdp_sock *ssk, struct sdp_conn *conn,
	       struct sdp_region *r);
int sdp_rg_dereg(struct sdp_sock *ssk, struct sdp_conn *conn, u64 token);
void sdp_rg_close(struct sdp_sock *ssk, struct sdp_conn *conn);
int sdp_rg_op(struct sdp_sock *ssk, struct msghdr *msg,
	      const struct sdp_rdma *op, struct sdp_send *s);
const char *sdp_rg_rx(struct sdp_sock *ssk, struct sdp_buf *buf);
void sdp_rg_batch_done(struct sdp_sock *ssk, struct sdp_buf *buf);
void sdp_rg_teardown(struct sdp_sock *ssk);
void sdp_rg_free(struct sdp_conn *conn);

bool sdp_zc_adapt_on(const struct sdp_sock *ssk);
bool sdp_zc_adapt_pick(struct sdp_sock *ssk, size_t size,
		       enum sdp_zca_way fast);
bool sdp_zc_adapt_probing(const struct sdp_sock *ssk);
void sdp_zc_adapt_done(struct sdp_sock *ssk, size_t size,
		       enum sdp_zca_way way, bool ok);
int sdp_zc_send(struct sdp_sock *ssk, struct msghdr *msg,
		struct ubuf_info *uarg, long *timeo, size_t *sent);
int sdp_zc_send_wait(struct sdp_sock *ssk, long *timeo);
int sdp_zc_wait_reg(struct sdp_sock *ssk, long *timeo);
void sdp_zc_complete(struct sdp_sock *ssk, struct sdp_buf *buf);
int sdp_zc_rx_srcavail(struct sdp_sock *ssk, struct sdp_buf *buf);
int sdp_zc_rx_rdcompl(struct sdp_sock *ssk, u32 size);
void sdp_zc_rx_cancel(struct sdp_sock *ssk);
int sdp_zc_recv(struct sdp_sock *ssk, struct sdp_buf *adv, struct msghdr *msg,
		size_t n, int flags, u32 *seq);
void sdp_zc_rx_done(struct sdp_sock *ssk);
int sdp_zc_quiesce(struct sdp_sock *ssk);
bool sdp_zc_sink_want(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		      int flags, long timeo);
int sdp_zc_sink(struct sdp_sock *ssk, struct msghdr *msg, long *timeo);
int sdp_zc_rx_wrcompl(struct sdp_sock *ssk, u32 size);
int sdp_zc_rx_cancel_ack(struct sdp_sock *ssk);
int sdp_zc_rx_sinkavail(struct sdp_sock *ssk, struct sdp_buf *buf);
int sdp_zc_rx_sink_cancel(struct sdp_conn *conn);
ssize_t sdp_zc_write(struct sdp_sock *ssk, struct msghdr *msg);
bool sdp_zc_peer_sink_usable(const struct sdp_conn *conn);
void sdp_zc_teardown(struct sdp_sock *ssk);
void sdp_zc_revoke(struct sdp_sock *ssk);
void sdp_zc_init(struct sdp_sock *ssk);

/* the RDMA transport's operations */
int sdp_rdma_sendmsg(struct sdp_sock *ssk, struct msghdr *msg,
		     struct sdp_send *s);
int sdp_rdma_sink(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		  int flags, long *timeo);
void sdp_rdma_rx_done(struct sdp_sock *ssk, struct sdp_buf *buf);
void sdp_rx_queue_free(struct sdp_conn *conn);
void sdp_rdma_rx_purge(struct sdp_sock *ssk);
void sdp_rdma_flush(struct sdp_sock *ssk, bool push);
void sdp_rdma_info(struct sdp_sock *ssk, struct tcp_info *info);

/* sdp_sockopt.c */
int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);
int sdp_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg);
void sdp_tcp_info(struct sdp_sock *ssk, struct tcp_info *info);

/* sdp_send.c: the socket's send call */
ssize_t sdp_sendmsg_pages(struct socket *sock, struct msghdr *msg,
			  bool notlast);
void sdp_splice_eof(struct socket *sock);
int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t size);
void sdp_write_space(struct sock *sk);
void sdp_wake_space(struct sock *sk);
int sdp_send_stall(struct sock *sk, long timeo);

/* sdp_tx.c: the RDMA transport's BCopy send path */
void sdp_tx_flush(struct sdp_sock *ssk);
int sdp_tx_owe(struct sdp_sock *ssk, u8 mid, u32 size);
bool sdp_tx_owed(struct sdp_sock *ssk, u8 mid, u32 size);
void sdp_tx_init_wait(struct sdp_conn *conn);
void sdp_tx_post(struct sdp_sock *ssk, bool push);
void sdp_tx_status(struct sdp_sock *ssk, struct sdp_buf *buf);
void sdp_tx_complete(struct sdp_sock *ssk, struct sdp_buf *buf);
int sdp_send_ctrl(struct sdp_sock *ssk, u8 mid, u32 size);
bool sdp_writable(const struct sdp_sock *ssk);

/* sdp_recv.c: the receive queue as a stream, recvmsg() */
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		int flags);
bool sdp_rx_data(struct sdp_sock *ssk, struct sdp_buf *buf, u8 flags);
void sdp_rx_disconn(struct sdp_sock *ssk);
void sdp_proto_error(struct sdp_sock *ssk, const char *what, u32 val);

/* sdp_rx.c: the RDMA transport's receive ring and inbound messages */
void sdp_rx_complete(struct sdp_sock *ssk, struct sdp_buf *buf);
void sdp_rx_early(struct sdp_sock *ssk);
void sdp_rx_repost(struct sdp_sock *ssk, struct sdp_buf *buf);
bool sdp_need_credit_update(const struct sdp_sock *ssk);

/* sdp_proc.c */
int sdp_proc_init(void);
void sdp_proc_exit(void);
extern const char * const sdp_mib_names[SDP_MIB_MAX];
/* sdp_net.c */
int sdp_net_register(void);
void sdp_net_unregister(void);
int sdp_sock_list_add(struct sdp_sock *ssk);
void sdp_sock_list_del(struct sdp_sock *ssk);
u64 sdp_mib_read(struct net *net, int i);

/* sdp_trace.c: every state change goes through sdp_set_state() */
void sdp_trace_state(struct sock *sk, int old, int new);

static inline void sdp_set_state(struct sock *sk, int state)
{
	if (trace_sdp_state_enabled() || trace_sdp_connect_enabled() ||
	    trace_sdp_close_enabled())
		sdp_trace_state(sk, sk->sk_state, state);
	sk->sk_state = state;
}

/* sdp_diag.c */
int sdp_diag_init(void);
void sdp_diag_exit(void);

#endif /* _SDP_H */
