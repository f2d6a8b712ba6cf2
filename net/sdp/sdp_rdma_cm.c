// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the RDMA transport's connection set-up, through rdma_cm.
 *
 * Every SDP socket owns rdma_cm ids in the RDMA_PS_TCP port space (the
 * socket core's bind() and listen(), sdp_cm.c and sdp_listen.c); their
 * events come here (->cm_event()).
 *
 * Active side (TCP_SYN_SENT):
 *   connect() -> ->connect(): rdma_resolve_addr -> ADDR_RESOLVED ->
 *   rdma_resolve_route -> ROUTE_RESOLVED: QP and buffers, rdma_connect
 *   with the Hello -> ESTABLISHED: the HelloAck from the REP is checked
 *   -> TCP_ESTABLISHED
 * Passive side:
 *   CONNECT_REQUEST on the listener: the Hello is checked, a child socket
 *   (TCP_SYN_RECV, "embryo") gets its QP and buffers, rdma_accept with the
 *   HelloAck -> ESTABLISHED on the child: it joins the accept queue
 *   (sdp_child_established()).  While the accept queue is full, a request
 *   waits unanswered on the listener's pending_reqs (rdma_cm sends the
 *   peer an MRA, so it keeps waiting, as a TCP client keeps retrying its
 *   SYN); accept() makes room and the core's accept_work calls
 *   ->answer() for the oldest one, which runs under rdma_lock_handler().
 * Either side: DISCONNECTED -> teardown.
 *
 * rdma_cm calls sdp_cm_handler() in process context with the id's handler
 * mutex held; the handler takes the socket lock (never the other way
 * round) and never destroys its own id: it returns non-zero instead,
 * after which rdma_cm destroys it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/arp.h>
#include <net/ndisc.h>
#include <net/tcp_states.h>
#include <rdma/ib_cm.h>

#include "sdp.h"

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

/* How long a connect waits for address resolution: as long as the
 * neighbour table probes before it gives up on @dst's family (app_solicit
 * plus mcast_solicit probes, retrans_time apart: 3 s by default), when
 * TCP's SYN would fail EHOSTUNREACH, and a margin so that the table, not
 * rdma_cm's timer, decides.  A shorter wait gave up on a host slow to
 * answer ARP (a busy one) that TCP reached.  The table's defaults are
 * read (the device is not known before the resolution), at most 60 s.
 */
static int sdp_resolve_ms(const struct sockaddr_storage *dst)
{
	struct neigh_parms *p = &arp_tbl.parms;
	u64 probes, ms;

#if IS_ENABLED(CONFIG_IPV6)
	if (dst->ss_family == AF_INET6)
		p = &nd_tbl.parms;
#endif
	/* sysctls, each up to INT_MAX: in 64 bits, the product cannot wrap */
	probes = (u32)NEIGH_VAR(p, APP_PROBES) + (u32)NEIGH_VAR(p, MCAST_PROBES);
	ms = probes * jiffies_to_msecs(NEIGH_VAR(p, RETRANS_TIME));
	return clamp_t(u64, ms + SDP_RESOLVE_MARGIN_MS,
		       SDP_RESOLVE_TIMEOUT_MS, SDP_RESOLVE_MAX_MS);
}

/* What we have: one-sided RDMA only where the socket asked for it (its
 * queue pair has the room, sdp_qp_caps()).
 */
static u32 sdp_caps(const struct sdp_conn *conn)
{
	return conn->regions ? SDP_CAPS : SDP_CAPS & ~SDP_CAP_REGIONS;
}

static void sdp_hello_fill(struct sdp_conn *conn, struct sdp_hello *h, u8 mid)
{
	memset(h, 0, sizeof(*h));
	h->bsdh.mid = mid;
	h->bsdh.bufs = cpu_to_be16(sdp_rx_adv(conn));
	h->bsdh.len = cpu_to_be32(sizeof(*h));
	h->version = SDP_WIRE_VERSION;
	h->max_adverts = SDP_ZC_REGS;
	h->rcv_size = cpu_to_be32(conn->rcv_size);
	/* a HelloAck says what both sides have */
	h->caps = cpu_to_be32(mid == SDP_MID_HELLO ? sdp_caps(conn) :
			      conn->peer_caps);
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
static void sdp_hello_take(struct sdp_conn *conn, const struct sdp_hello *h)
{
	u32 bufs = be16_to_cpu(h->bsdh.bufs);

	conn->remote_bufs = bufs;
	conn->remote_max_bufs = bufs;
	conn->remote_ack = 0;
	/* our send buffers are no larger than our receive buffers may be */
	conn->tx_msg_max = min_t(u32, be32_to_cpu(h->rcv_size),
				 max_t(u32, conn->rcv_size,
				       READ_ONCE(rcvbuf_max_size)));
	conn->tx_msg_min = conn->tx_msg_max;
	conn->peer_caps = be32_to_cpu(h->caps) & sdp_caps(conn);
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

/* iWARP: Soft-iWARP's rdma_connect() makes the TCP connection with a
 * blocking connect(), which lasts as long as the peer leaves the SYNs
 * unanswered (the SYN retries: minutes).  Made without the socket lock, so
 * that the socket's other calls (getsockopt(SO_ERROR), close()) do not
 * wait for it, as TCP's never wait for a handshake; under teardown_lock
 * instead, so that the connection's QP is not torn down under it (a
 * teardown queued meanwhile runs once it returns).  rdma_cm's handler
 * mutex, which the caller holds, keeps @id.
 */
static int sdp_iw_connect(struct sdp_sock *ssk, struct rdma_cm_id *id,
			  struct rdma_conn_param *param)
	__must_hold(&ssk->sk)
{
	struct sock *sk = &ssk->sk;
	int err = -ECONNABORTED;

	release_sock(sk);
	mutex_lock(&ssk->teardown_lock);
	if (test_bit(SDP_F_CONN, &ssk->flags) &&
	    !test_bit(SDP_F_TEARDOWN, &ssk->flags))
		err = rdma_connect_locked(id, param);
	mutex_unlock(&ssk->teardown_lock);
	lock_sock(sk);
	return err;
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
	sdp_hello_fill(ssk->conn, &hello, SDP_MID_HELLO);
	sdp_conn_param(id, ssk->conn, &param, &hello);
	if (ssk->conn->iwarp)
		err = sdp_iw_connect(ssk, id, &param);
	else
		err = rdma_connect_locked(id, &param);
	/* (not if the socket was closed, or connects anew, meanwhile) */
	if (err && ssk->cm_id == id)
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
				sdp_resolve_ms(&dst));
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
	sdp_hello_take(ssk->conn, ev->param.conn.private_data);
	__set_bit(SDP_F_WAS_CONNECTED, &ssk->flags);
	sdp_addr_snapshot(ssk);
	sdp_set_state(sk, TCP_ESTABLISHED);
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ACTIVE_OPENS);
	sdp_ka_reset(ssk, sock_flag(sk, SOCK_KEEPOPEN));
	sdp_rx_early(ssk);
	sk->sk_state_change(sk);
	/* iWARP: MPA's initiator sends first, the passive side waits for
	 * it (sdp_tx_init_wait()): a credit update, at once (should it
	 * find no control buffer, the peer stops waiting after 200 ms)
	 */
	if (ssk->conn->iwarp)
		sdp_send_ctrl(ssk, SDP_MID_DATA, 0);
	sdp_tx_flush(ssk);
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

/**
 * sdp_child_create - answer a connection request with a new child socket
 * @sk: the listener, not locked
 * @id: the request's id, its handler mutex held (in its handler, or
 *	rdma_lock_handler())
 * @hello: the request's Hello, checked
 * @idepth: the requester's initiator depth
 * @rres: the requester's responder resources
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
	child = sdp_sk_alloc(sock_net(sk), sk->sk_prot, sk->sk_family,
			     sk->sk_kern_sock, NULL);
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
	sdp_hello_take(cssk->conn, hello);	/* checked by sdp_cm_req() */
	sdp_tx_init_wait(cssk->conn);
	id->context = child;
	sdp_hello_fill(cssk->conn, &ack, SDP_MID_HELLO_ACK);
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
	req->tp = &sdp_rdma_transport;
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

/* ->answer(): room for a request that waited. */
void sdp_rdma_answer(struct sock *sk, struct sdp_pending_req *req)
{
	int err;

	rdma_lock_handler(req->id);
	err = sdp_child_create(sk, req->id, &req->hello, req->initiator_depth,
			       req->responder_resources);
	rdma_unlock_handler(req->id);
	if (err) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_CONN_REFUSED);
		rdma_reject(req->id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		rdma_destroy_id(req->id);
	}
}

/* ->refuse(): the listener stopped; as TCP resets a SYN. */
void sdp_rdma_refuse(struct sock *sk, struct sdp_pending_req *req)
{
	rdma_reject(req->id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	rdma_destroy_id(req->id);
}

/* ->claims(): rdma_cm reaches any address but loopback's. */
bool sdp_rdma_claims(struct net *net, struct sockaddr_storage *dst)
{
	return !sdp_addr_loopback(dst);
}

/* ->connect(): resolve the address; the handler goes on from there. */
int sdp_rdma_connect(struct sdp_sock *ssk, struct sockaddr_storage *dst)
{
	int err;

	err = rdma_resolve_addr(ssk->cm_id, NULL, (struct sockaddr *)dst,
				sdp_resolve_ms(dst));
	if (err) {
		if (err == -ENODEV || err == -EADDRNOTAVAIL)
			err = -ENODEV;
		ssk->last_bind_err = -err;
		return err;
	}
	sdp_set_state(&ssk->sk, TCP_SYN_SENT);
	return 0;
}

/* An event on an embryo, a child whose handshake is not done.  Return:
 * what the handler returns, or -1 to go on as for any socket.
 */
static int sdp_cm_embryo(struct sock *sk, struct rdma_cm_id *id,
			 struct rdma_cm_event *ev)
{
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* free what uses the device now, then as a failure */
		sdp_conn_teardown(sdp_sk(sk));
		ret = sdp_child_failed(sk, true);
		return ret >= 0 ? ret : sdp_cm_device_removal(sk, id);
	case RDMA_CM_EVENT_ESTABLISHED:
		return sdp_child_established(sk);
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DISCONNECTED:
		ret = sdp_child_failed(sk, true);
		return ret >= 0 ? ret : -1;
	default:
		return -1;
	}
}

/* An event on the socket's own id, the socket locked: a connect()
 * under way, or the connection's end.  Returns what the handler returns.
 */
static int sdp_cm_conn_event(struct sdp_sock *ssk, struct rdma_cm_id *id,
			     struct rdma_cm_event *ev)
{
	struct sock *sk = &ssk->sk;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (sk->sk_state != TCP_SYN_SENT)
			break;
		if (!sdp_iw_port_free(sk, id))
			return sdp_connect_repick(ssk, id);
		if (rdma_resolve_route(id, SDP_RESOLVE_TIMEOUT_MS))
			sdp_connect_failed(ssk, EHOSTUNREACH);
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
	return 0;
}

/* ->cm_event(): rdma_cm's handler of every id of an SDP socket. */
int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sock *sk = id->context;
	struct sdp_sock *ssk = sdp_sk(sk);
	int ret;

	pr_debug("sk %p: cm event %s (%d), status %d\n",
		 sk, rdma_event_msg(ev->event), ev->event, ev->status);

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sdp_cm_req(sk, id, ev);
	/* a request still waiting on its listener: only an end can come */
	if (id != READ_ONCE(ssk->cm_id) && !test_bit(SDP_F_EMBRYO, &ssk->flags) &&
	    sdp_pending_cancel(sk, id))
		return 1;
	if (test_bit(SDP_F_EMBRYO, &ssk->flags)) {
		ret = sdp_cm_embryo(sk, id, ev);
		if (ret >= 0)
			return ret;
	} else if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		return sdp_cm_device_removal(sk, id);
	}

	lock_sock(sk);
	/* not released, nor replaced by a new connect() */
	ret = ssk->cm_id == id ? sdp_cm_conn_event(ssk, id, ev) : 0;
	release_sock(sk);
	return ret;
}
