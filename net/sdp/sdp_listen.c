// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the passive side of connection management.
 *
 * listen() starts the socket's rdma_cm id listening (two ids for a
 * dual-stack [::] listener: sdp_listen_ids()), or its SO_REUSEPORT
 * group's (sdp_reuseport.c), and every transport's ->listen().  A
 * transport makes a child socket for a request (TCP_SYN_RECV, an
 * "embryo", holding a reference on its listener); once established it
 * joins the listener's accept queue (sdp_child_established()).  While
 * the queue is full a request waits on pending_reqs (struct
 * sdp_pending_req, of the transport that made it) until accept() makes
 * room and accept_work hands it to its transport's ->answer(), or the
 * listener stops and ->refuse() refuses it.
 *
 * Locks: the listener's socket lock guards its accept queue, pending
 * requests and embryo count; a child's lock is never held while its
 * listener's is taken.  rdma_destroy_id() is never called under a
 * socket lock (see sdp.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/sched/signal.h>
#include <net/tcp_states.h>
#include <rdma/ib_cm.h>

#include "sdp.h"
#include "sdp_az.h"

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
void sdp_embryo_gone(struct sock *sk)
{
	sdp_sk(sk)->embryos--;
	sdp_pending_kick(sk);
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
		sock_put(parent);	/* the child's, from its transport */
	return sdp_sk_orphan_put(child, in_handler);
}

int sdp_child_established(struct sock *child)
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
int sdp_child_failed(struct sock *child, bool in_handler)
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
	c->regions = p->regions;
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
	/* SDP_ASYNC: a child is bound as its listener is */
	c->az_chan = sdp_az_chan_get(p->az_chan);
}

/* A request answered, refused or cancelled by its transport, which put
 * what it held in it.
 */
void sdp_pending_free(struct sock *sk, struct sdp_pending_req *req)
{
	kfree(req);
	sock_put(sk);		/* the request's, from its transport */
}

/* accept_work: answer waiting requests while the accept queue has room. */
static void sdp_accept_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(work, struct sdp_sock,
					    accept_work);
	struct sock *sk = &ssk->sk;
	struct sdp_pending_req *req;

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

		req->tp->answer(sk, req);
		sdp_pending_free(sk, req);
	}
	sock_put(sk);		/* sdp_pending_kick()'s */
}

void sdp_cm_init(struct sdp_sock *ssk)
{
	INIT_LIST_HEAD(&ssk->pending_reqs);
	INIT_LIST_HEAD(&ssk->rport_node);
	INIT_WORK(&ssk->accept_work, sdp_accept_work);
}

/* Is @id bound to the IPv6 wildcard, taking IPv4 connections as well? */
static bool sdp_listen_dual(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	const struct sockaddr_in6 *a =
		(struct sockaddr_in6 *)&id->route.addr.src_addr;

	return a->sin6_family == AF_INET6 && ipv6_addr_any(&a->sin6_addr) &&
	       sdp_v6_dual(ssk);
}

/* Called locked: listen on @port of the IPv4 wildcard through a second
 * id, *@v4, whose requests come to the same handler and context as @id's.
 */
static int sdp_listen_v4(struct sdp_sock *ssk, struct rdma_cm_id *id,
			 struct rdma_cm_id **v4, __be16 port, int backlog)
{
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = port };
	int err;

	*v4 = rdma_create_id(sock_net(&ssk->sk), id->event_handler,
			     id->context, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(*v4)) {
		err = PTR_ERR(*v4);
		*v4 = NULL;
		return err;
	}
	sdp_id_options(ssk, *v4);
	rdma_set_afonly(*v4, 1);
	if (ssk->sk.sk_reuse)
		rdma_set_reuseaddr(*v4, 1);
	err = rdma_bind_addr(*v4, (struct sockaddr *)&any);
	if (!err)
		err = rdma_listen(*v4, backlog);
	return sdp_bind_errno(err);
}

/**
 * sdp_listen_ids - start a listener's id(s) listening
 * @ssk: the socket, locked
 * @id: its id (or its SO_REUSEPORT group's), bound, or to be bound by
 *	rdma_listen()
 * @v4: set to the IPv4 half of a dual-stack listener, or NULL
 * @backlog: rdma_cm's (sdp_listen(): SDP_CM_BACKLOG at least)
 *
 * A listener on the IPv6 wildcard that takes IPv4 too listens on two ids:
 * @id, made IPv6-only, and *@v4 on the IPv4 wildcard of the same port.
 * One dual-stack id would do on InfiniBand and RoCE, where rdma_cm
 * matches requests to listeners itself, but not on iWARP: there the
 * device's own dual-stack TCP listener takes an IPv4 connection, rdma_cm
 * finds a v4-mapped local address that no device has and rejects the
 * request before SDP hears of it.  The bind was checked dual-stack, so no
 * other socket holds the IPv4 half of the port.
 *
 * Return: 0 or a negative errno; on error *@v4 is left for the caller to
 * destroy, outside the lock.
 */
int sdp_listen_ids(struct sdp_sock *ssk, struct rdma_cm_id *id,
		   struct rdma_cm_id **v4, int backlog)
{
	struct sockaddr_in6 *src;
	int err;

	*v4 = NULL;
	if (!test_bit(SDP_F_BOUND, &ssk->flags) && sdp_family_v6(&ssk->sk)) {
		/* as inet6: an unbound listener listens on [::] */
		struct sockaddr_storage any = { .ss_family = AF_INET6 };

		err = sdp_bind_id(ssk, id, &any);
		if (err)
			return err;
	}
	if (!sdp_listen_dual(ssk, id))
		return sdp_bind_errno(rdma_listen(id, backlog));

	src = (struct sockaddr_in6 *)&id->route.addr.src_addr;
	rdma_set_afonly(id, 1);
	err = sdp_listen_v4(ssk, id, v4, src->sin6_port, backlog);
	if (!err)
		err = sdp_bind_errno(rdma_listen(id, backlog));
	if (err)
		rdma_set_afonly(id, 0);
	return err;
}

/* Ids that held the ports an unbound listen() gave up, to destroy once
 * the socket lock is dropped: held until then, so that rdma_cm picks
 * none of those ports again.
 */
struct sdp_ports_tried {
	struct rdma_cm_id	*id[2 * SDP_PORT_TRIES];
	int			n;
};

/* Called locked: listen, and if the port was rdma_cm's pick (the socket
 * was not bound) and is taken, listen again on another, up to
 * SDP_PORT_TRIES ports.  rdma_cm picks in its own port space, blind to
 * TCP's, but on iWARP the device listens on that port of the host's TCP
 * too (Soft-iWARP's kernel socket, hardware's port mapper), which fails
 * with EADDRINUSE where a TCP socket holds it; TCP's listen() would have
 * taken any free ephemeral port.  On error cm_id_v4 is left for the
 * caller to destroy, outside the lock.
 */
static int sdp_listen_any_port(struct sdp_sock *ssk, int backlog,
			       struct sdp_ports_tried *tried)
{
	bool pick = !test_bit(SDP_F_BOUND, &ssk->flags);
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id;
	int err, ports = 1;

	for (;;) {
		err = sdp_listen_ids(ssk, ssk->cm_id, &ssk->cm_id_v4, backlog);
		if (err != -EADDRINUSE || !pick || ports++ >= SDP_PORT_TRIES)
			return err;
		id = sdp_cm_create_id(sk);
		if (IS_ERR(id))
			return err;
		SDP_INC_STATS(sock_net(sk), SDP_MIB_LISTEN_PORT_RETRIES);
		tried->id[tried->n++] = ssk->cm_id;
		if (ssk->cm_id_v4)
			tried->id[tried->n++] = ssk->cm_id_v4;
		ssk->cm_id_v4 = NULL;
		ssk->cm_id = id;
		sdp_id_options(ssk, id);
		if (sk->sk_reuse)
			rdma_set_reuseaddr(id, 1);
	}
}

int sdp_listen(struct socket *sock, int backlog)
{
	struct sdp_ports_tried tried = { .n = 0 };
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct rdma_cm_id *id_v4;
	bool held = false;
	int err;

	lock_sock(sk);
again:
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
	/* a port shared by SO_REUSEPORT: its group's ids listen;
	 * bound where no RDMA device is: local connections only
	 */
	if (ssk->rport) {
		err = sdp_rport_listen(ssk, max(backlog, SDP_CM_BACKLOG));
		if (err == -EAGAIN)	/* waited, unlocked */
			goto again;
	} else if (!test_bit(SDP_F_LOCAL_BIND, &ssk->flags))
		err = sdp_listen_any_port(ssk, max(backlog, SDP_CM_BACKLOG),
					  &tried);
	if (err) {
		ssk->last_bind_err = -err;
		id_v4 = ssk->cm_id_v4;
		ssk->cm_id_v4 = NULL;
		release_sock(sk);
		if (id_v4)
			rdma_destroy_id(id_v4);
		goto destroy_tried;
	}
	__set_bit(SDP_F_ID_USED, &ssk->flags);
	__set_bit(SDP_F_BOUND, &ssk->flags);
	sdp_addr_snapshot(ssk);
	/* only one listener per port and address, as rdma_listen() has
	 * it: refused there only where local connections alone come
	 */
	err = sdp_transports_listen(ssk);
	if (err) {
		ssk->last_bind_err = -err;
		held = sdp_rport_unlisten(ssk);
		goto out;
	}
	WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
	sdp_set_state(sk, TCP_LISTEN);
	sdp_rport_listening(ssk);
out:
	release_sock(sk);
	if (held)
		sdp_rport_stop(ssk);
destroy_tried:
	while (tried.n)
		rdma_destroy_id(tried.id[--tried.n]);
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
	bool held;

	lock_sock(sk);
	held = sdp_rport_unlisten(ssk);
	sdp_transports_unlisten(ssk);
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
	if (held)
		sdp_rport_stop(ssk);	/* the group's ids, if the last */

	/* requests still waiting are refused, as TCP resets their SYNs */
	list_for_each_entry_safe(req, rtmp, &pending, node) {
		req->tp->refuse(sk, req);
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

int sdp_accept(struct socket *sock, struct socket *newsock,
	       struct proto_accept_arg *arg)
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
	timeo = sock_rcvtimeo(sk, arg->flags & O_NONBLOCK);
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
	arg->is_empty = list_empty(&ssk->accept_queue);	/* for io_uring */
	sk_acceptq_removed(sk);
	sdp_pending_kick(sk);
	release_sock(sk);

	child = &cssk->sk;
	lock_sock(child);
	sock_graft(child, newsock);
	newsock->state = SS_CONNECTED;
	sdp_sock_flags(newsock);	/* as sdp_sk_setup() */
	parent = cssk->parent;
	cssk->parent = NULL;
	release_sock(child);
	if (parent)
		sock_put(parent);	/* the child's, from its transport */
	return 0;
out:
	release_sock(sk);
	return err;
}
