// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: connection management through rdma_cm.
 *
 * Every SDP socket owns one rdma_cm_id in the RDMA_PS_TCP port space,
 * created with the socket in the socket's network namespace: bind() is
 * rdma_bind_addr(), listen() rdma_listen().  The port space is rdma_cm's,
 * separate from TCP's, so an SDP and a TCP socket may use the same port.
 *
 * Active side (TCP_SYN_SENT):
 *   connect() -> rdma_resolve_addr -> ADDR_RESOLVED -> rdma_resolve_route
 *   -> ROUTE_RESOLVED: QP and buffers, rdma_connect with the Hello
 *   -> ESTABLISHED: the HelloAck from the REP is checked -> TCP_ESTABLISHED
 * Passive side:
 *   CONNECT_REQUEST on the listener: the Hello is checked, a child socket
 *   (TCP_SYN_RECV, "embryo") gets its QP and buffers, rdma_accept with the
 *   HelloAck -> ESTABLISHED on the child: it joins the accept queue.
 *   While the accept queue is full, a request waits unanswered on the
 *   listener's pending_reqs (rdma_cm sends the peer an MRA, so it keeps
 *   waiting, as a TCP client keeps retrying its SYN); accept() makes room
 *   and accept_work answers the oldest one, under rdma_lock_handler().
 * Either side: DISCONNECTED -> teardown (sdp_verbs.c).
 *
 * rdma_cm calls sdp_cm_handler() in process context with the id's handler
 * mutex held; the handler takes the socket lock (never the other way
 * round) and never destroys its own id: it returns non-zero instead,
 * after which rdma_cm destroys it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/sched/signal.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/tcp_states.h>
#include <rdma/ib_cm.h>

#include "sdp.h"

/**
 * sdp_addr_snapshot - copy the id's addresses into the socket
 * @ssk: the socket, locked, with an id
 */
void sdp_addr_snapshot(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id = ssk->cm_id;

	if (!id || test_bit(SDP_F_LOCAL_CONN, &ssk->flags))
		return;
	/* bound to an address no RDMA device has: the id holds a wildcard */
	if (!test_bit(SDP_F_LOCAL_BIND, &ssk->flags))
		memcpy(&ssk->local, &id->route.addr.src_addr,
		       sizeof(ssk->local));
	memcpy(&ssk->peer, &id->route.addr.dst_addr, sizeof(ssk->peer));
}

/* Under the listener's lock: may another request be answered now?  Not
 * while the accept queue is full (its children and embryos together), nor
 * while sdp_max_embryos children hold their buffers without having
 * completed their handshake.
 */
bool sdp_listen_room(struct sock *sk)
{
	return !sk_acceptq_is_full(sk) &&
	       sdp_sk(sk)->embryos < max(READ_ONCE(sdp_max_embryos), 1);
}

/* Under the listener's lock: room for one more child?  If not, and
 * requests are waiting, accept_work will be kicked when there is.
 */
static void sdp_pending_kick(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	if (list_empty(&ssk->pending_reqs) || !sdp_listen_room(sk) ||
	    sk->sk_state != TCP_LISTEN)
		return;
	sock_hold(sk);		/* accept_work's; put when it has run */
	if (!queue_work(sdp_wq, &ssk->accept_work))
		sock_put(sk);
}

/* Under the listener's lock: a child of @sk stopped being an embryo
 * (established, failed or expired): its place may go to a waiting request.
 */
static void sdp_embryo_gone(struct sock *sk)
{
	sdp_sk(sk)->embryos--;
	sdp_pending_kick(sk);
}

/* Errno of a failed connection attempt, as TCP would report it, except
 * that an address with no RDMA device behind it is -ENODEV.
 */
static int sdp_cm_errno(struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		/* the REQ was never answered: as a SYN never answered */
		return -ETIMEDOUT;
	default:
		break;
	}
	switch (ev->status) {
	case -ENODEV:
	case -EADDRNOTAVAIL:
		return -ENODEV;
	case -ENETUNREACH:
		return -ENETUNREACH;
	default:
		/* neighbour resolution failed: as TCP after ARP fails */
		return -EHOSTUNREACH;
	}
}

static void sdp_hello_fill(struct sdp_sock *ssk, struct sdp_hello *h, u8 mid)
{
	memset(h, 0, sizeof(*h));
	h->bsdh.mid = mid;
	h->bsdh.bufs = cpu_to_be16(sdp_rx_adv(ssk));
	h->bsdh.len = cpu_to_be32(sizeof(*h));
	h->version = SDP_WIRE_VERSION;
	h->max_adverts = SDP_ZC_REGS;
	h->rcv_size = cpu_to_be32(ssk->conn->rcv_size);
	/* a HelloAck says what both sides have */
	h->caps = cpu_to_be32(mid == SDP_MID_HELLO ? SDP_CAPS : ssk->conn->peer_caps);
}

/* Check a Hello or HelloAck: the peer's word on what it posted and takes.
 * Counted and logged if bad; nothing is allocated for a request before
 * its Hello passed.
 */
static int sdp_hello_check(struct sock *sk, const void *data, u8 len, u8 mid)
{
	const struct sdp_hello *h = data;
	u32 bufs, rcv_size;

	if (!h || len < sizeof(*h) || h->bsdh.mid != mid ||
	    (h->version >> 4) != (SDP_WIRE_VERSION >> 4) ||
	    be32_to_cpu(h->bsdh.mseq) != 0)
		goto bad;
	bufs = be16_to_cpu(h->bsdh.bufs);
	rcv_size = be32_to_cpu(h->rcv_size);
	if (bufs < SDP_MIN_BUFS || bufs > SDP_MAX_BUFS ||
	    rcv_size < SDP_MIN_BUF_SIZE || rcv_size > SDP_MAX_BUF_SIZE)
		goto bad;
	return 0;
bad:
	SDP_INC_STATS(sock_net(sk), SDP_MIB_HELLO_ERRORS);
	trace_sdp_proto_error(sk, mid == SDP_MID_HELLO ? "bad Hello" :
			      "bad HelloAck", len);
	net_warn_ratelimited("bad %s, connection refused\n",
			     mid == SDP_MID_HELLO ? "Hello" : "HelloAck");
	return -EPROTO;
}

/* Take the peer's parameters from a Hello or HelloAck that passed. */
static void sdp_hello_take(struct sdp_sock *ssk, const struct sdp_hello *h)
{
	struct sdp_conn *conn = ssk->conn;
	u32 bufs = be16_to_cpu(h->bsdh.bufs);

	conn->remote_bufs = bufs;
	conn->remote_max_bufs = bufs;
	conn->remote_ack = 0;
	/* our send buffers are no larger than our receive buffers may be */
	conn->tx_msg_max = min_t(u32, be32_to_cpu(h->rcv_size),
				 max_t(u32, conn->rcv_size,
				       READ_ONCE(rcvbuf_max_size)));
	conn->tx_msg_min = conn->tx_msg_max;
	conn->peer_caps = be32_to_cpu(h->caps) & SDP_CAPS;
	conn->peer_adverts = h->max_adverts;
}

/* Also notes in @conn the retry counts asked for (sock_diag shows them). */
static void sdp_conn_param(struct rdma_cm_id *id, struct sdp_conn *conn,
			   struct rdma_conn_param *p, struct sdp_hello *h)
{
	memset(p, 0, sizeof(*p));
	p->private_data = h;
	p->private_data_len = sizeof(*h);
	p->responder_resources = min_t(u32, 4,
				       id->device->attrs.max_qp_rd_atom);
	p->initiator_depth = min_t(u32, 4,
				   id->device->attrs.max_qp_init_rd_atom);
	p->flow_control = 1;
	p->retry_count = clamp(READ_ONCE(sdp_retry_count), 0, 7);
	p->rnr_retry_count = 7;	/* the peer's receives: wait for ever */
	conn->retry_count = p->retry_count;
	conn->rnr_retry = p->rnr_retry_count;
}

/* Under the socket lock: the attempt to connect failed. */
void sdp_connect_failed(struct sdp_sock *ssk, int err)
{
	struct sock *sk = &ssk->sk;

	if (sk->sk_state != TCP_SYN_SENT)
		return;
	SDP_INC_STATS(sock_net(sk), err == ECONNREFUSED ?
		      SDP_MIB_CONN_REFUSED : SDP_MIB_CONN_FAILED);
	if (err == ENODEV || err == EHOSTUNREACH || err == ENETUNREACH)
		ssk->last_bind_err = err;
	__set_bit(SDP_F_RESET, &ssk->flags);
	WRITE_ONCE(sk->sk_err, err);
	sdp_set_state(sk, TCP_CLOSE);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);	/* as tcp_done() */
	sdp_conn_queue_teardown(ssk);
	sk_error_report(sk);
	sk->sk_state_change(sk);
}

static void sdp_route_resolved(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct sdp_hello hello;
	int err;

	sdp_addr_snapshot(ssk);
	err = sdp_conn_create(ssk, id);
	if (err) {
		sdp_connect_failed(ssk, err == -ENODEV ? ENODEV : -err);
		return;
	}
	sdp_hello_fill(ssk, &hello, SDP_MID_HELLO);
	sdp_conn_param(id, ssk->conn, &param, &hello);
	err = rdma_connect_locked(id, &param);
	if (err)
		sdp_connect_failed(ssk, -err);
}

/* Is the source port rdma_cm gave a connecting socket free in the host's
 * TCP?  On iWARP it has to be: the connection is a TCP connection, which
 * Soft-iWARP makes on a kernel socket bound to that port (and hardware
 * reserves through the port mapper), but rdma_cm picks ports in its own
 * port space, blind to TCP's.  A port TCP holds, a TIME_WAIT among them,
 * would fail the connect with EADDRINUSE.  Probed by binding a socket as
 * siw binds its own (SO_REUSEADDR); on other devices always free.
 */
static bool sdp_iw_port_free(struct sock *sk, struct rdma_cm_id *id)
{
	struct sockaddr *src = (struct sockaddr *)&id->route.addr.src_addr;
	struct socket *s;
	int err;

	if (!id->device || !rdma_protocol_iwarp(id->device, id->port_num))
		return true;
	err = sock_create_kern(sock_net(sk), src->sa_family, SOCK_STREAM,
			       IPPROTO_TCP, &s);
	if (err)
		return true;	/* the device will tell */
	sock_set_reuseaddr(s->sk);
	err = kernel_bind(s, src, rdma_addr_size(src));
	sock_release(s);
	return err != -EADDRINUSE;
}

/* Under the socket lock, in @id's handler (ADDR_RESOLVED): the port
 * rdma_cm picked is TCP's.  As TCP's connect() looks on for a free
 * ephemeral port, connect again through a new id with a port of its own;
 * a socket bound by the application keeps its port and fails.
 * Returns 1 for rdma_cm to destroy @id, or 0.
 */
static int sdp_connect_repick(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sock *sk = &ssk->sk;
	struct sockaddr_storage dst;
	struct rdma_cm_id *new;
	int err;

	if (test_bit(SDP_F_BOUND, &ssk->flags)) {
		sdp_connect_failed(ssk, EADDRINUSE);
		return 0;
	}
	if (++ssk->port_tries >= SDP_PORT_TRIES) {
		sdp_connect_failed(ssk, EADDRNOTAVAIL);
		return 0;
	}
	new = sdp_cm_create_id(sk);
	if (IS_ERR(new)) {
		sdp_connect_failed(ssk, -PTR_ERR(new));
		return 0;
	}
	SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_PORT_RETRIES);
	sdp_id_options(ssk, new);
	memcpy(&dst, &id->route.addr.dst_addr, sizeof(dst));
	ssk->cm_id = new;	/* the socket's from now on */
	err = rdma_resolve_addr(new, NULL, (struct sockaddr *)&dst,
				SDP_RESOLVE_TIMEOUT_MS);
	if (err)
		sdp_connect_failed(ssk, EHOSTUNREACH);
	return 1;
}

static void sdp_active_established(struct sdp_sock *ssk,
				   struct rdma_cm_event *ev)
{
	struct sock *sk = &ssk->sk;

	if (sk->sk_state != TCP_SYN_SENT)
		return;
	if (sdp_hello_check(sk, ev->param.conn.private_data,
			    ev->param.conn.private_data_len,
			    SDP_MID_HELLO_ACK)) {
		sdp_connect_failed(ssk, EPROTO);
		return;
	}
	sdp_hello_take(ssk, ev->param.conn.private_data);
	__set_bit(SDP_F_WAS_CONNECTED, &ssk->flags);
	sdp_addr_snapshot(ssk);
	sdp_set_state(sk, TCP_ESTABLISHED);
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ACTIVE_OPENS);
	sdp_ka_reset(ssk, sock_flag(sk, SOCK_KEEPOPEN));
	sdp_rx_early(ssk);
	sk->sk_state_change(sk);
	sdp_tx_flush(ssk);
}

/* Drop a child that never made it to accept(); the child is unlocked.
 * Returns what the handler of the child's id must return if @in_handler.
 */
static int sdp_child_drop(struct sock *child, bool in_handler)
{
	struct sdp_sock *cssk = sdp_sk(child);
	struct sock *parent;

	lock_sock(child);
	sdp_conn_abort(cssk, 0, true);
	parent = cssk->parent;
	cssk->parent = NULL;
	release_sock(child);

	if (parent)
		sock_put(parent);	/* the child's, from sdp_cm_req() */
	return sdp_sk_orphan_put(child, in_handler);
}

static int sdp_child_established(struct sock *child)
{
	struct sdp_sock *cssk = sdp_sk(child);
	struct sock *parent;
	bool queued = false;

	struct rdma_cm_id *reset_id = NULL;
	int timer_ref;

	lock_sock(child);
	if (!test_bit(SDP_F_EMBRYO, &cssk->flags)) {
		release_sock(child);
		return 0;
	}
	__clear_bit(SDP_F_EMBRYO, &cssk->flags);
	timer_ref = sdp_embryo_timer_stop(cssk);
	__set_bit(SDP_F_WAS_CONNECTED, &cssk->flags);
	SDP_INC_STATS(sock_net(child), SDP_MIB_PASSIVE_OPENS);
	if (child->sk_state == TCP_SYN_RECV) {
		sdp_set_state(child, TCP_ESTABLISHED);
		sdp_ka_reset(cssk, sock_flag(child, SOCK_KEEPOPEN));
	} else {
		/* reset by what the peer sent before the CM had the RTU:
		 * the teardown's disconnect could not go out then, so it
		 * goes now; accept() still hands it over, as TCP hands over
		 * a child reset in its accept queue
		 */
		reset_id = cssk->cm_id;
	}
	parent = cssk->parent;
	release_sock(child);
	if (timer_ref)
		sock_put(child);	/* the embryo timer's; not the last */
	if (reset_id)
		rdma_disconnect(reset_id);

	lock_sock(parent);
	sdp_embryo_gone(parent);
	if (parent->sk_state == TCP_LISTEN) {
		list_add_tail(&cssk->accept_node, &sdp_sk(parent)->accept_queue);
		WRITE_ONCE(sdp_sk(parent)->accept_count,
			   sdp_sk(parent)->accept_count + 1);
		parent->sk_data_ready(parent);
		queued = true;
	} else {
		sk_acceptq_removed(parent);
	}
	release_sock(parent);

	return queued ? 0 : sdp_child_drop(child, true);
}

/**
 * sdp_child_failed - a child did not reach the accept queue
 * @child: the child, not locked
 * @in_handler: called from the rdma_cm handler of the child's id
 *
 * The handshake failed (a reject, an error, the device going away) or did
 * not complete in time (sdp_embryo_expire()): the child is reset and
 * dropped, and its place in the listener's queues freed.
 *
 * Return: -1 if @child is not an embryo (any more); else, in the handler,
 * what it must return.
 */
static int sdp_child_failed(struct sock *child, bool in_handler)
{
	struct sdp_sock *cssk = sdp_sk(child);
	struct sock *parent;

	lock_sock(child);
	if (!test_bit(SDP_F_EMBRYO, &cssk->flags)) {
		release_sock(child);
		return -1;	/* not an embryo: the caller goes on */
	}
	__clear_bit(SDP_F_EMBRYO, &cssk->flags);
	parent = cssk->parent;
	release_sock(child);

	lock_sock(parent);
	sk_acceptq_removed(parent);
	sdp_embryo_gone(parent);
	release_sock(parent);
	return sdp_child_drop(child, in_handler);
}

/**
 * sdp_embryo_expire - a child's handshake took too long
 * @child: the child, not locked; the caller holds a reference
 *
 * A peer that sends a REQ and never the RTU would otherwise keep the
 * child's buffers for as long as rdma_cm retries the REP, which the peer
 * chooses.  Called by the child's fin_work, SDP_EMBRYO_TIMEOUT after the
 * REP; its id is destroyed by the teardown, as for any orphan.
 */
void sdp_embryo_expire(struct sock *child)
{
	if (sdp_child_failed(child, false) >= 0)
		SDP_INC_STATS(sock_net(child), SDP_MIB_EMBRYO_TIMEOUTS);
}

void sdp_child_inherit(struct sock *child, struct sock *parent)
{
	struct sdp_sock *c = sdp_sk(child), *p = sdp_sk(parent);

	child->sk_rcvbuf = parent->sk_rcvbuf;
	child->sk_sndbuf = parent->sk_sndbuf;
	child->sk_userlocks = parent->sk_userlocks;
	child->sk_rcvtimeo = parent->sk_rcvtimeo;
	child->sk_sndtimeo = parent->sk_sndtimeo;
	child->sk_rcvlowat = parent->sk_rcvlowat;
	child->sk_lingertime = parent->sk_lingertime;
	child->sk_priority = parent->sk_priority;
	child->sk_mark = parent->sk_mark;
	child->sk_uid = parent->sk_uid;
	if (sock_flag(parent, SOCK_LINGER))
		sock_set_flag(child, SOCK_LINGER);
	if (sock_flag(parent, SOCK_KEEPOPEN))
		sock_set_flag(child, SOCK_KEEPOPEN);
	if (sock_flag(parent, SOCK_URGINLINE))
		sock_set_flag(child, SOCK_URGINLINE);
	c->zcopy_thresh = p->zcopy_thresh;
	c->zc_thresh_set = p->zc_thresh_set;
	c->nodelay = p->nodelay;
	c->cork = p->cork;
	c->user_mss = p->user_mss;
	c->keepidle = p->keepidle;
	c->keepintvl = p->keepintvl;
	c->keepcnt = p->keepcnt;
	c->user_timeout = p->user_timeout;
	c->notsent_lowat = p->notsent_lowat;
	c->v6 = p->v6;
	c->v6only = p->v6only;
	c->tos = p->tos;
	c->tclass = p->tclass;
	c->memcg = p->memcg;
	if (c->memcg)
		css_get(&c->memcg->css);	/* put in sdp_sk_destruct() */
}

/**
 * sdp_child_create - answer a connection request with a new child socket
 * @sk: the listener, not locked
 * @id: the request's id, its handler mutex held (in its handler, or
 *	rdma_lock_handler())
 * @hello: the request's Hello, checked
 * @idepth, @rres: the requester's initiator depth and responder resources
 *
 * Return: 0, or a negative errno with nothing left but @id, which the
 * caller rejects and destroys.
 */
static int sdp_child_create(struct sock *sk, struct rdma_cm_id *id,
			    const struct sdp_hello *hello, u8 idepth, u8 rres)
{
	struct rdma_conn_param param;
	struct sdp_hello ack;
	struct sdp_sock *cssk;
	struct sock *child;
	int err;

	lock_sock(sk);
	if (sk->sk_state != TCP_LISTEN || !sdp_sk(sk)->cm_id) {
		release_sock(sk);
		return -ECONNREFUSED;
	}
	child = sdp_sk_alloc(sock_net(sk), sk->sk_family, sk->sk_kern_sock,
			     NULL);
	if (!child) {
		release_sock(sk);
		return -ENOMEM;
	}
	sdp_child_inherit(child, sk);
	sk_acceptq_added(sk);
	sdp_sk(sk)->embryos++;
	sock_hold(sk);		/* the child's; put when accepted or dropped */
	release_sock(sk);

	cssk = sdp_sk(child);
	lock_sock(child);
	cssk->parent = sk;
	cssk->cm_id = id;
	__set_bit(SDP_F_ID_USED, &cssk->flags);
	__set_bit(SDP_F_EMBRYO, &cssk->flags);
	sdp_set_state(child, TCP_SYN_RECV);

	sdp_addr_snapshot(cssk);
	err = sdp_conn_create(cssk, id);
	if (err)
		goto err_child;
	sdp_hello_take(cssk, hello);	/* checked by sdp_cm_req() */
	id->context = child;
	sdp_hello_fill(cssk, &ack, SDP_MID_HELLO_ACK);
	sdp_conn_param(id, cssk->conn, &param, &ack);
	param.responder_resources = min(param.responder_resources, idepth);
	param.initiator_depth = min(param.initiator_depth, rres);
	err = rdma_accept(id, &param);
	if (err)
		goto err_conn;
	sdp_timer_arm(cssk, SDP_F_FIN_TIMER, &cssk->fin_work,
		      SDP_EMBRYO_TIMEOUT);
	release_sock(child);
	return 0;

err_conn:
	id->context = sk;
	release_sock(child);
	/* the QP must go before the id is destroyed */
	sdp_conn_teardown(cssk);
	lock_sock(child);
err_child:
	cssk->cm_id = NULL;
	cssk->parent = NULL;
	__clear_bit(SDP_F_EMBRYO, &cssk->flags);
	sdp_set_state(child, TCP_CLOSE);
	release_sock(child);
	sock_orphan(child);
	sock_put(child);	/* sdp_sk_alloc()'s: frees it */

	lock_sock(sk);
	sk_acceptq_removed(sk);
	sdp_embryo_gone(sk);
	release_sock(sk);
	sock_put(sk);
	return err;
}

static void sdp_pending_free(struct sock *sk, struct sdp_pending_req *req)
{
	if (req->client)
		sock_put(&req->client->sk);
	kfree(req);
	sock_put(sk);		/* the request's, from sdp_pending_add() */
}

/* Under the listener's lock: hold a request until there is room. */
static int sdp_pending_add(struct sock *sk, struct rdma_cm_id *id,
			   struct rdma_cm_event *ev)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_pending_req *req;

	if (ssk->pending_count >=
	    READ_ONCE(sock_net(sk)->ipv4.sysctl_max_syn_backlog))
		return -ECONNREFUSED;
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	req->id = id;
	memcpy(&req->hello, ev->param.conn.private_data, sizeof(req->hello));
	req->initiator_depth = ev->param.conn.initiator_depth;
	req->responder_resources = ev->param.conn.responder_resources;
	sock_hold(sk);		/* the request's; put by sdp_pending_free() */
	list_add_tail(&req->node, &ssk->pending_reqs);
	ssk->pending_count++;
	return 0;
}

/* An event on a request still waiting (the peer gave up, the device went
 * away): drop it.  Returns 1 if it was one, for rdma_cm to destroy @id.
 */
static int sdp_pending_cancel(struct sock *sk, struct rdma_cm_id *id)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_pending_req *req, *found = NULL;

	lock_sock(sk);
	list_for_each_entry(req, &ssk->pending_reqs, node) {
		if (req->id == id) {
			found = req;
			list_del(&req->node);
			ssk->pending_count--;
			break;
		}
	}
	release_sock(sk);
	if (!found)
		return 0;
	sdp_pending_free(sk, found);
	return 1;
}

/* accept_work: answer waiting requests while the accept queue has room. */
static void sdp_accept_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(work, struct sdp_sock,
					    accept_work);
	struct sock *sk = &ssk->sk;
	struct sdp_pending_req *req;
	int err;

	for (;;) {
		lock_sock(sk);
		if (list_empty(&ssk->pending_reqs) || !sdp_listen_room(sk) ||
		    sk->sk_state != TCP_LISTEN) {
			release_sock(sk);
			break;
		}
		req = list_first_entry(&ssk->pending_reqs,
				       struct sdp_pending_req, node);
		list_del(&req->node);
		ssk->pending_count--;
		release_sock(sk);

		if (req->client) {
			sdp_local_answer_pending(sk, req->client);
			sdp_pending_free(sk, req);
			continue;
		}
		rdma_lock_handler(req->id);
		err = sdp_child_create(sk, req->id, &req->hello,
				       req->initiator_depth,
				       req->responder_resources);
		rdma_unlock_handler(req->id);
		if (err) {
			SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_REFUSED);
			rdma_reject(req->id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			rdma_destroy_id(req->id);
		}
		sdp_pending_free(sk, req);
	}
	sock_put(sk);		/* sdp_pending_kick()'s */
}

void sdp_cm_init(struct sdp_sock *ssk)
{
	INIT_LIST_HEAD(&ssk->pending_reqs);
	INIT_WORK(&ssk->accept_work, sdp_accept_work);
}

/* CONNECT_REQUEST on a listener: returns non-zero to refuse (rdma_cm then
 * rejects the request and destroys @id).  The Hello is checked before
 * anything is allocated for the request.
 */
static int sdp_cm_req(struct sock *sk, struct rdma_cm_id *id,
		      struct rdma_cm_event *ev)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	int err;

	err = sdp_hello_check(sk, ev->param.conn.private_data,
			      ev->param.conn.private_data_len, SDP_MID_HELLO);
	if (err)
		goto refuse;
	lock_sock(sk);
	if (sk->sk_state != TCP_LISTEN || !ssk->cm_id) {
		err = -ECONNREFUSED;
	} else if (!sdp_listen_room(sk)) {
		err = sdp_pending_add(sk, id, ev);
		SDP_INC_STATS(sock_net(sk), err ? SDP_MIB_LISTEN_OVERFLOWS :
			      SDP_MIB_LISTEN_QUEUED);
		release_sock(sk);
		if (!err)
			return 0;	/* waits: rdma_cm sends an MRA */
		goto refuse;
	}
	release_sock(sk);
	if (!err)
		err = sdp_child_create(sk, id, ev->param.conn.private_data,
				       ev->param.conn.initiator_depth,
				       ev->param.conn.responder_resources);
	if (!err)
		return 0;
refuse:
	SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_REFUSED);
	return err;
}

/* The device under the connection is going away: free what uses it now. */
static int sdp_cm_device_removal(struct sock *sk, struct rdma_cm_id *id)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	int ret = 0;

	sdp_conn_teardown(ssk);
	lock_sock(sk);
	if (ssk->cm_id_v4 == id) {
		/* not sent for a wildcard id today; the other half goes on */
		ssk->cm_id_v4 = NULL;
		ret = 1;
	} else if (ssk->cm_id == id) {
		ssk->cm_id = NULL;
		ret = 1;	/* rdma_cm destroys the id */
		if (sk->sk_state != TCP_CLOSE) {
			WRITE_ONCE(sk->sk_err, ENETDOWN);
			sdp_set_state(sk, TCP_CLOSE);
			sk_error_report(sk);
		}
		sk->sk_state_change(sk);
	}
	release_sock(sk);
	return ret;
}

static int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sock *sk = id->context;
	struct sdp_sock *ssk = sdp_sk(sk);
	int ret = 0;

	pr_debug("sk %p: cm event %s (%d), status %d\n",
		 sk, rdma_event_msg(ev->event), ev->event, ev->status);

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return sdp_cm_req(sk, id, ev);
	default:
		break;
	}
	/* a request still waiting on its listener: only an end can come */
	if (id != READ_ONCE(ssk->cm_id) && !test_bit(SDP_F_EMBRYO, &ssk->flags) &&
	    sdp_pending_cancel(sk, id))
		return 1;

	switch (ev->event) {
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (test_bit(SDP_F_EMBRYO, &ssk->flags)) {
			/* free what uses the device now, then as a failure */
			sdp_conn_teardown(ssk);
			ret = sdp_child_failed(sk, true);
			if (ret >= 0)
				return ret;
		}
		return sdp_cm_device_removal(sk, id);
	case RDMA_CM_EVENT_ESTABLISHED:
		if (test_bit(SDP_F_EMBRYO, &ssk->flags))
			return sdp_child_established(sk);
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DISCONNECTED:
		if (test_bit(SDP_F_EMBRYO, &ssk->flags)) {
			ret = sdp_child_failed(sk, true);
			if (ret >= 0)
				return ret;
			ret = 0;
		}
		break;
	default:
		break;
	}

	lock_sock(sk);
	if (ssk->cm_id != id)
		goto out;	/* released, or replaced by a new connect() */

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (sk->sk_state != TCP_SYN_SENT)
			break;
		if (!sdp_iw_port_free(sk, id)) {
			ret = sdp_connect_repick(ssk, id);
			break;
		}
		ret = rdma_resolve_route(id, SDP_RESOLVE_TIMEOUT_MS);
		if (ret) {
			sdp_connect_failed(ssk, EHOSTUNREACH);
			ret = 0;
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (sk->sk_state == TCP_SYN_SENT)
			sdp_route_resolved(ssk, id);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		sdp_active_established(ssk, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		sdp_connect_failed(ssk, -sdp_cm_errno(ev));
		sdp_conn_queue_teardown(ssk);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		sdp_conn_queue_teardown(ssk);
		break;
	default:
		break;
	}
out:
	release_sock(sk);
	return ret;
}

/**
 * sdp_cm_create_id - create the rdma_cm_id a socket connects through
 * @sk: the socket; its namespace is the id's namespace
 *
 * Return: the new id or an ERR_PTR.
 */
struct rdma_cm_id *sdp_cm_create_id(struct sock *sk)
{
	return rdma_create_id(sock_net(sk), sdp_cm_handler, sk, RDMA_PS_TCP,
			      IB_QPT_RC);
}

/* rdma_cm reports a port taken by a wildcard bind (or a bind to a
 * specific address when the port has a wildcard one) as EADDRNOTAVAIL,
 * and running out of ports too; TCP says EADDRINUSE for all of them.
 * Called once the address itself is known to be local, so EADDRNOTAVAIL
 * can only mean the port.
 */
static int sdp_bind_errno(int err)
{
	return err == -EADDRNOTAVAIL ? -EADDRINUSE : err;
}

/* Does a socket on the IPv6 wildcard take IPv4 connections too?  An
 * AF_INET6_SDP socket unless IPV6_V6ONLY; an AF_INET_SDP socket given a
 * sockaddr_in6 as the system's default says (net.ipv6.bindv6only).
 */
static bool sdp_v6_dual(struct sdp_sock *ssk)
{
	if (ssk->sk.sk_family == sdp_af_inet6)
		return !ssk->v6only;
#if IS_ENABLED(CONFIG_IPV6)
	return !READ_ONCE(sock_net(&ssk->sk)->ipv6.sysctl.bindv6only);
#else
	return false;
#endif
}

/**
 * sdp_bind_id - bind the socket's id to @addr
 * @ssk: the socket, locked
 * @id: its id, not bound
 * @addr: a local address (sdp_addr_local())
 *
 * An address of this host that no RDMA device has (127.0.0.1, an address
 * of a plain Ethernet interface) serves local connections only: the id
 * holds the port as a wildcard, the socket keeps the address
 * (SDP_F_LOCAL_BIND).
 *
 * Return: 0 or a negative errno, as TCP's bind() would say it.
 */
int sdp_bind_id(struct sdp_sock *ssk, struct rdma_cm_id *id,
		struct sockaddr_storage *addr)
{
	struct sockaddr_storage any = { .ss_family = addr->ss_family };
	int err;

	if (ssk->sk.sk_reuse)
		rdma_set_reuseaddr(id, 1);
	/* which ports it shares with the other family, as inet6_bind() */
	rdma_set_afonly(id, addr->ss_family != AF_INET6 || !sdp_v6_dual(ssk));
	__clear_bit(SDP_F_LOCAL_BIND, &ssk->flags);
	err = rdma_bind_addr(id, (struct sockaddr *)addr);
	if (err != -ENODEV || !READ_ONCE(sdp_local))
		return sdp_bind_errno(err);

	((struct sockaddr_in *)&any)->sin_port =
		((struct sockaddr_in *)addr)->sin_port;
	err = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (err)
		return sdp_bind_errno(err);
	__set_bit(SDP_F_LOCAL_BIND, &ssk->flags);
	memcpy(&ssk->local, addr, sizeof(ssk->local));
	((struct sockaddr_in *)&ssk->local)->sin_port =
		((struct sockaddr_in *)&id->route.addr.src_addr)->sin_port;
	return 0;
}

/* Called locked: give the socket a fresh id if its id was used by a
 * connection attempt or a listen, or taken by the removal of its device,
 * keeping the bound address.  Drops the lock for a while.
 */
static int sdp_renew_id(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *old, *id;
	struct sockaddr_storage addr;
	bool bound;
	int err;

	if (ssk->cm_id && !test_bit(SDP_F_ID_USED, &ssk->flags))
		return 0;

	if (test_bit(SDP_F_CONN, &ssk->flags)) {
		/* the last connection is still being torn down */
		release_sock(sk);
		flush_work(&ssk->teardown_work);
		lock_sock(sk);
		if (test_bit(SDP_F_CONN, &ssk->flags))
			return -EALREADY;
	}
	old = ssk->cm_id;
	bound = test_bit(SDP_F_BOUND, &ssk->flags);
	memcpy(&addr, &ssk->local, sizeof(addr));	/* sdp_addr_snapshot() */
	ssk->cm_id = NULL;
	release_sock(sk);
	if (old)
		rdma_destroy_id(old);
	id = sdp_cm_create_id(sk);
	lock_sock(sk);

	if (IS_ERR(id))
		return PTR_ERR(id);
	if (ssk->cm_id) {
		/* another thread renewed it meanwhile */
		release_sock(sk);
		rdma_destroy_id(id);
		lock_sock(sk);
		return 0;
	}
	ssk->cm_id = id;
	sdp_id_options(ssk, id);
	__clear_bit(SDP_F_ID_USED, &ssk->flags);
	__clear_bit(SDP_F_BOUND, &ssk->flags);
	if (bound) {
		err = sdp_bind_id(ssk, id, &addr);
		if (err)
			return err;
		__set_bit(SDP_F_BOUND, &ssk->flags);
	}
	return 0;
}

/* Convert an application's address to the one rdma_cm takes.  Like the
 * old SDP stack, either SDP family takes a sockaddr_in (sa_family AF_INET
 * or AF_INET_SDP) and a sockaddr_in6 (AF_INET6 or AF_INET6_SDP); once a
 * socket was given a sockaddr_in6, getname() answers with one.  bind()
 * also takes AF_UNSPEC with INADDR_ANY, as inet_bind() does.
 */
static int sdp_addr_in(struct sock *sk, struct sockaddr *uaddr, int len,
		       struct sockaddr_storage *out, bool bind)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)out;
	sa_family_t fam = uaddr->sa_family;

	memset(out, 0, sizeof(*out));
	if (fam == AF_INET6 || fam == sdp_af_inet6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

		if (len < SIN6_LEN_RFC2133)
			return -EINVAL;
		memcpy(sin6, uaddr, min_t(int, len, sizeof(*sin6)));
		sin6->sin6_family = AF_INET6;
		sdp_sk(sk)->v6 = true;
		if (ipv6_addr_v4mapped(&sin6->sin6_addr)) {
			/* as inet6_bind() and tcp_v6_connect() */
			if (sdp_sk(sk)->v6only)
				return bind ? -EINVAL : -ENETUNREACH;
			struct sockaddr_in v4 = {
				.sin_family = AF_INET,
				.sin_port = sin6->sin6_port,
				.sin_addr.s_addr = sin6->sin6_addr.s6_addr32[3],
			};

			memset(out, 0, sizeof(*out));
			memcpy(sin, &v4, sizeof(v4));
		}
		return 0;
	}

	if (len < (int)sizeof(*sin))
		return -EINVAL;
	memcpy(sin, uaddr, sizeof(*sin));
	if (fam != AF_INET && fam != sdp_af_inet &&
	    !(bind && fam == AF_UNSPEC &&
	      sin->sin_addr.s_addr == htonl(INADDR_ANY)))
		return -EAFNOSUPPORT;
	sin->sin_family = AF_INET;
	memset(sin->sin_zero, 0, sizeof(sin->sin_zero));
	return 0;
}

static bool sdp_addr_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ipv4_is_loopback(((struct sockaddr_in *)a)->sin_addr.s_addr);
	return ipv6_addr_loopback(&((struct sockaddr_in6 *)a)->sin6_addr);
}

/* May a socket bind to @a, as inet_bind() and inet6_bind() decide? */
static bool sdp_addr_local(struct net *net, const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET) {
		__be32 v4 = ((const struct sockaddr_in *)a)->sin_addr.s_addr;

		return v4 == htonl(INADDR_ANY) || ipv4_is_multicast(v4) ||
		       inet_addr_type(net, v4) == RTN_LOCAL ||
		       READ_ONCE(net->ipv4.sysctl_ip_nonlocal_bind);
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		const struct in6_addr *v6 =
			&((const struct sockaddr_in6 *)a)->sin6_addr;

		return ipv6_addr_any(v6) || ipv6_addr_is_multicast(v6) ||
		       READ_ONCE(net->ipv6.sysctl.ip_nonlocal_bind) ||
		       ipv6_chk_addr(net, v6, NULL, 0);
	}
#else
	return true;
#endif
}

int sdp_bind(struct socket *sock, struct sockaddr *uaddr, int addr_len)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct net *net = sock_net(sk);
	struct sockaddr_storage addr;
	unsigned short port;
	int err;

	err = sdp_addr_in(sk, uaddr, addr_len, &addr, true);
	if (err)
		return err;
	port = ntohs(((struct sockaddr_in *)&addr)->sin_port);
	if (port && inet_port_requires_bind_service(net, port) &&
	    !ns_capable(net->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;
	if (!sdp_addr_local(net, &addr))
		return -EADDRNOTAVAIL;

	lock_sock(sk);
	err = -EINVAL;
	if (sk->sk_state != TCP_CLOSE || test_bit(SDP_F_BOUND, &ssk->flags))
		goto out;
	err = sdp_renew_id(ssk);
	if (err)
		goto out;
	err = sdp_bind_id(ssk, ssk->cm_id, &addr);
	ssk->last_bind_err = -err;
	if (!err) {
		__set_bit(SDP_F_BOUND, &ssk->flags);
		sdp_addr_snapshot(ssk);
	}
out:
	release_sock(sk);
	return err;
}

/* Called locked: is the socket's id bound to the IPv6 wildcard, taking
 * IPv4 connections as well?
 */
static bool sdp_listen_dual(struct sdp_sock *ssk)
{
	const struct sockaddr_in6 *a =
		(struct sockaddr_in6 *)&ssk->cm_id->route.addr.src_addr;

	return a->sin6_family == AF_INET6 && ipv6_addr_any(&a->sin6_addr) &&
	       sdp_v6_dual(ssk);
}

/* Called locked: listen on @port of the IPv4 wildcard through a second
 * id, whose requests come to the same handler and listener.
 */
static int sdp_listen_v4(struct sdp_sock *ssk, __be16 port, int backlog)
{
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = port };
	struct rdma_cm_id *id;
	int err;

	id = sdp_cm_create_id(&ssk->sk);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ssk->cm_id_v4 = id;
	sdp_id_options(ssk, id);
	rdma_set_afonly(id, 1);
	if (ssk->sk.sk_reuse)
		rdma_set_reuseaddr(id, 1);
	err = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (!err)
		err = rdma_listen(id, backlog);
	return sdp_bind_errno(err);
}

/**
 * sdp_listen_ids - start the socket's id(s) listening
 * @ssk: the socket, locked, its id bound (or to be bound by rdma_listen())
 * @backlog: as listen() was given it
 *
 * A listener on the IPv6 wildcard that takes IPv4 too listens on two ids:
 * its own, made IPv6-only, and cm_id_v4 on the IPv4 wildcard of the same
 * port.  One dual-stack id would do on InfiniBand and RoCE, where rdma_cm
 * matches requests to listeners itself, but not on iWARP: there the
 * device's own dual-stack TCP listener takes an IPv4 connection, rdma_cm
 * finds a v4-mapped local address that no device has and rejects the
 * request before SDP hears of it.  The bind was checked dual-stack, so no
 * other socket holds the IPv4 half of the port.
 *
 * Return: 0 or a negative errno; on error cm_id_v4 is left for the caller
 * to destroy, outside the lock.
 */
static int sdp_listen_ids(struct sdp_sock *ssk, int backlog)
{
	struct rdma_cm_id *id = ssk->cm_id;
	struct sockaddr_in6 *src;
	int err;

	if (!test_bit(SDP_F_BOUND, &ssk->flags) && ssk->sk.sk_family ==
	    sdp_af_inet6) {
		/* as inet6: an unbound listener listens on [::] */
		struct sockaddr_storage any = { .ss_family = AF_INET6 };

		err = sdp_bind_id(ssk, id, &any);
		if (err)
			return err;
	}
	if (!sdp_listen_dual(ssk))
		return sdp_bind_errno(rdma_listen(id, backlog));

	src = (struct sockaddr_in6 *)&id->route.addr.src_addr;
	rdma_set_afonly(id, 1);
	err = sdp_listen_v4(ssk, src->sin6_port, backlog);
	if (!err)
		err = sdp_bind_errno(rdma_listen(id, backlog));
	if (err)
		rdma_set_afonly(id, 0);
	return err;
}

int sdp_listen(struct socket *sock, int backlog)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct rdma_cm_id *id_v4;
	int err;

	lock_sock(sk);
	err = -EINVAL;
	if (sock->state != SS_UNCONNECTED)
		goto out;
	if (sk->sk_state == TCP_LISTEN) {
		WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
		err = 0;
		goto out;
	}
	if (sk->sk_state != TCP_CLOSE)
		goto out;
	err = sdp_renew_id(ssk);
	if (err)
		goto out;
	if (sk->sk_reuse && !test_bit(SDP_F_BOUND, &ssk->flags))
		rdma_set_reuseaddr(ssk->cm_id, 1);
	/* bound where no RDMA device is: local connections only */
	if (!test_bit(SDP_F_LOCAL_BIND, &ssk->flags))
		err = sdp_listen_ids(ssk, backlog);
	if (err) {
		ssk->last_bind_err = -err;
		id_v4 = ssk->cm_id_v4;
		ssk->cm_id_v4 = NULL;
		release_sock(sk);
		if (id_v4)
			rdma_destroy_id(id_v4);
		return err;
	}
	__set_bit(SDP_F_ID_USED, &ssk->flags);
	__set_bit(SDP_F_BOUND, &ssk->flags);
	WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
	sdp_addr_snapshot(ssk);
	sdp_set_state(sk, TCP_LISTEN);
	sdp_local_listen(ssk);
out:
	release_sock(sk);
	return err;
}

/**
 * sdp_listen_stop - stop listening and reset the children not accepted
 * @sk: the listener, not locked
 */
void sdp_listen_stop(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_pending_req *req, *rtmp;
	struct sdp_sock *cssk, *tmp;
	struct rdma_cm_id *id_v4;
	LIST_HEAD(pending);
	LIST_HEAD(queue);

	lock_sock(sk);
	sdp_local_unlisten(ssk);
	if (sk->sk_state == TCP_LISTEN)
		sdp_set_state(sk, TCP_CLOSE);
	id_v4 = ssk->cm_id_v4;
	ssk->cm_id_v4 = NULL;
	list_splice_init(&ssk->accept_queue, &queue);
	WRITE_ONCE(ssk->accept_count, 0);
	list_splice_init(&ssk->pending_reqs, &pending);
	ssk->pending_count = 0;
	sk->sk_state_change(sk);
	release_sock(sk);
	if (id_v4)
		rdma_destroy_id(id_v4);

	/* requests still waiting are refused, as TCP resets their SYNs */
	list_for_each_entry_safe(req, rtmp, &pending, node) {
		if (req->client) {
			sdp_local_refuse(req->client);
		} else {
			rdma_reject(req->id, NULL, 0,
				    IB_CM_REJ_CONSUMER_DEFINED);
			rdma_destroy_id(req->id);
		}
		sdp_pending_free(sk, req);
	}

	list_for_each_entry_safe(cssk, tmp, &queue, accept_node) {
		list_del_init(&cssk->accept_node);
		lock_sock(sk);
		sk_acceptq_removed(sk);
		release_sock(sk);
		sdp_child_drop(&cssk->sk, false);
	}
}

int sdp_accept(struct socket *sock, struct socket *newsock, int flags,
	       bool kern)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_sock *cssk;
	struct sock *child, *parent;
	long timeo;
	int err;

	lock_sock(sk);
	err = -EINVAL;
	if (sk->sk_state != TCP_LISTEN)
		goto out;
	timeo = sock_rcvtimeo(sk, flags & O_NONBLOCK);
	while (list_empty(&ssk->accept_queue)) {
		err = -EAGAIN;
		if (!timeo)
			goto out;
		err = sock_intr_errno(timeo);
		if (signal_pending(current))
			goto out;
		add_wait_queue_exclusive(sk_sleep(sk), &wait);
		sk_wait_event(sk, &timeo,
			      !list_empty(&ssk->accept_queue) ||
			      sk->sk_state != TCP_LISTEN, &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
		err = -EINVAL;
		if (sk->sk_state != TCP_LISTEN)
			goto out;
	}
	cssk = list_first_entry(&ssk->accept_queue, struct sdp_sock,
				accept_node);
	list_del_init(&cssk->accept_node);
	WRITE_ONCE(ssk->accept_count, ssk->accept_count - 1);
	sk_acceptq_removed(sk);
	sdp_pending_kick(sk);
	release_sock(sk);

	child = &cssk->sk;
	lock_sock(child);
	sock_graft(child, newsock);
	newsock->state = SS_CONNECTED;
	parent = cssk->parent;
	cssk->parent = NULL;
	release_sock(child);
	if (parent)
		sock_put(parent);	/* the child's, from sdp_cm_req() */
	return 0;
out:
	release_sock(sk);
	return err;
}

/* connect(AF_UNSPEC), as tcp_disconnect(): a listener stops listening, a
 * connection is reset (ECONNRESET for the next SO_ERROR) and its unread
 * data dropped, and the socket is left closed with no shutdown, ready to
 * connect again.  Called locked; drops the lock for a listener.
 */
static int sdp_disconnect(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	switch (sk->sk_state) {
	case TCP_CLOSE:
		return 0;
	case TCP_LISTEN:
		release_sock(sk);
		sdp_listen_stop(sk);
		lock_sock(sk);
		break;
	default:
		sdp_conn_abort(ssk, 0, true);
		WRITE_ONCE(sk->sk_err, ECONNRESET);
		break;
	}
	/* unread data and urgent state go with the connection */
	if (sdp_zc_quiesce(ssk))
		return -EINTR;
	sdp_rx_purge(ssk);
	WRITE_ONCE(ssk->copied_seq, ssk->rcv_nxt);
	WRITE_ONCE(ssk->urg_data, 0);
	WRITE_ONCE(sk->sk_shutdown, 0);
	sock_reset_flag(sk, SOCK_DONE);
	return 0;
}

static int sdp_wait_for_connect(struct sock *sk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	add_wait_queue(sk_sleep(sk), &wait);
	while ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		if (signal_pending(current) || !*timeo)
			break;
		sk_wait_event(sk, timeo,
			      !((1 << sk->sk_state) &
				(TCPF_SYN_SENT | TCPF_SYN_RECV)), &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return *timeo != 0;
}

/* As inet_stream_connect(), state by state. */
int sdp_connect(struct socket *sock, struct sockaddr *uaddr, int addr_len,
		int flags)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sockaddr_storage addr;
	bool local;
	long timeo;
	int err;

	if (addr_len < (int)sizeof(uaddr->sa_family))
		return -EINVAL;

	lock_sock(sk);
	if (uaddr->sa_family == AF_UNSPEC) {
		err = sdp_disconnect(ssk);
		if (!err)
			sock->state = SS_UNCONNECTED;
		goto out;
	}

	switch (sock->state) {
	default:
		err = -EINVAL;
		goto out;
	case SS_CONNECTED:
		err = -EISCONN;
		goto out;
	case SS_CONNECTING:
		err = -EALREADY;
		break;
	case SS_UNCONNECTED:
		err = -EISCONN;
		if (sk->sk_state != TCP_CLOSE)
			goto out;
		err = sdp_addr_in(sk, uaddr, addr_len, &addr, false);
		if (err)
			goto out;
		local = sdp_local_dest(sock_net(sk), &addr);
		if (!local && sdp_addr_loopback(&addr)) {
			/* rdma_cm cannot reach loopback addresses */
			err = -ENODEV;
			ssk->last_bind_err = ENODEV;
			goto out;
		}
		/* a reader may still be fetching from the last connection */
		err = sdp_zc_quiesce(ssk);
		if (err)
			goto out;
		err = sdp_renew_id(ssk);
		if (err)
			goto out;
		if (sk->sk_state != TCP_CLOSE) {
			err = -EISCONN;
			goto out;
		}
		ssk->flags &= BIT(SDP_F_BOUND) | BIT(SDP_F_LOCAL_BIND);
		__set_bit(SDP_F_ID_USED, &ssk->flags);
		ssk->port_tries = 0;
		WRITE_ONCE(sk->sk_err, 0);
		sk->sk_shutdown = 0;
		sock_reset_flag(sk, SOCK_DONE);	/* as tcp_disconnect() */
		if (local) {
			__set_bit(SDP_F_LOCAL_CONN, &ssk->flags);
			err = sdp_local_connect(ssk, &addr);
			if (err)
				goto out;
			/* as TCP on loopback, even when done at once */
			sock->state = SS_CONNECTING;
			err = -EINPROGRESS;
			if (flags & O_NONBLOCK)
				goto out;
			break;
		}
		err = rdma_resolve_addr(ssk->cm_id, NULL,
					(struct sockaddr *)&addr,
					SDP_RESOLVE_TIMEOUT_MS);
		if (err) {
			if (err == -ENODEV || err == -EADDRNOTAVAIL)
				err = -ENODEV;
			ssk->last_bind_err = -err;
			goto out;
		}
		sdp_set_state(sk, TCP_SYN_SENT);
		sock->state = SS_CONNECTING;
		err = -EINPROGRESS;
		break;
	}

	timeo = sock_sndtimeo(sk, flags & O_NONBLOCK);
	if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		if (!timeo || !sdp_wait_for_connect(sk, &timeo))
			goto out;
		err = sock_intr_errno(timeo);
		if (signal_pending(current))
			goto out;
	}
	if (sk->sk_state == TCP_CLOSE)
		goto sock_error;
	sock->state = SS_CONNECTED;
	err = 0;
out:
	release_sock(sk);
	return err;

sock_error:
	err = sock_error(sk) ? : -ECONNABORTED;
	sock->state = SS_UNCONNECTED;
	goto out;
}

/* As inet_getname(): plain AF_INET / AF_INET6 addresses. */
int sdp_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sockaddr_storage a;
	int len;

	lock_sock(sk);
	if (peer && (!test_bit(SDP_F_WAS_CONNECTED, &ssk->flags) ||
		     ((1 << sk->sk_state) & (TCPF_CLOSE | TCPF_SYN_SENT)))) {
		release_sock(sk);
		return -ENOTCONN;
	}
	if (sk->sk_state == TCP_SYN_SENT)
		sdp_addr_snapshot(ssk);	/* the source port is known by now */
	memcpy(&a, peer ? &ssk->peer : &ssk->local, sizeof(a));
	release_sock(sk);

	if (sdp_addr_family(sk) == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;

		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		if (a.ss_family == AF_INET) {
			sin->sin_port = ((struct sockaddr_in *)&a)->sin_port;
			sin->sin_addr = ((struct sockaddr_in *)&a)->sin_addr;
		}
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;

		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		if (a.ss_family == AF_INET6) {
			memcpy(sin6, &a, sizeof(*sin6));
			sin6->sin6_flowinfo = 0;
		} else if (a.ss_family == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&a;

			sin6->sin6_port = sin->sin_port;
			ipv6_addr_set_v4mapped(sin->sin_addr.s_addr,
					       &sin6->sin6_addr);
		}
		len = sizeof(*sin6);
	}
	return len;
}
