// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the local transport, connections to a peer on this host.
 *
 * rdma_cm cannot reach a loopback address, and a connection through an
 * RDMA device's own loopback costs a trip through the device.  A
 * connection whose peer address is local to the socket's network
 * namespace (127.0.0.0/8, ::1, any address of a local interface, or the
 * unspecified address, which means this host as on TCP) joins the two
 * sockets in the module instead: no QP, no RDMA device needed.
 *
 * Objects
 *  - the local listener table: every SDP listener (sdp_local=1), by port;
 *    a connect() looks up the listener of its destination there, an exact
 *    address before a wildcard, as TCP does.
 *  - struct sdp_local_link: one per local connection, joining two
 *    connections (struct sdp_conn, ->link and ->side).  Each end has an
 *    inbox: what the other end sent and this one has not taken yet
 *    (sdp_local_data.c), and its FIN and RST.  Refcounted by the two
 *    connections; an end's socket pointer is cleared by its teardown.
 *
 * Connection setup is synchronous: connect() finds the listener, creates
 * the child established, and queues it for accept().  While the accept
 * queue is full, the request waits on the listener's pending_reqs as an
 * RDMA one does (the client stays in SYN_SENT), and accept_work answers it.
 *
 * Ports: rdma_cm's port space stays the one space of SDP ports.  A socket
 * bound to an address no RDMA device has (127.0.0.1, a plain Ethernet
 * address) holds its port in rdma_cm as a wildcard bind and keeps the
 * address itself (SDP_F_LOCAL_BIND); listening there is local only.
 *
 * Locks: the table under sdp_local_lock (a leaf).  A link's lock is a
 * leaf too, taken under a socket lock or none.  The socket locks of the
 * two ends are never held together: a sender puts its bytes in the peer's
 * inbox and then takes the peer's socket spinlock (sdp_local_kick()), and
 * nothing done while applying an inbox sends to the other end: a reset
 * goes from the teardown work.  connect() takes the listener's lock with
 * the client's held, never the other way round, and the new child's
 * under both: lockdep sees the three as subclasses of one class
 * (SDP_NEST_*).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/tcp_states.h>
#include <uapi/linux/sdp_diag.h>

#include "sdp.h"
#include "sdp_local.h"

static DEFINE_SPINLOCK(sdp_local_lock);

/* lockdep subclasses of the socket lock while a client connects: the
 * client's (0), the listener's under it, the child's under both.
 */
enum {
	SDP_NEST_LISTENER = SINGLE_DEPTH_NESTING,
	SDP_NEST_CHILD,
};

static DEFINE_HASHTABLE(sdp_local_table, 8);

static __be16 sdp_addr_port(const struct sockaddr_storage *a)
{
	return ((const struct sockaddr_in *)a)->sin_port;
}

/**
 * sdp_local_dest - is @a an address of this host?
 * @net: the socket's namespace
 * @a: a connect() destination; the unspecified address becomes loopback
 *
 * Return: true if @a is an address of this host and the local transport is on.
 */
static bool sdp_local_dest(struct net *net, struct sockaddr_storage *a)
{
	if (!READ_ONCE(sdp_local))
		return false;
	if (a->ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)a;

		if (sin->sin_addr.s_addr == htonl(INADDR_ANY))
			sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return inet_addr_type(net, sin->sin_addr.s_addr) == RTN_LOCAL;
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)a;

		if (ipv6_addr_any(&sin6->sin6_addr))
			sin6->sin6_addr = in6addr_loopback;
		return ipv6_addr_loopback(&sin6->sin6_addr) ||
		       ipv6_chk_addr(net, &sin6->sin6_addr, NULL, 0);
	}
#else
	return false;
#endif
}

/* How well listener @ls matches destination @dst: 2 its address, 1 a
 * wildcard that covers it, 0 not at all.
 */
static int sdp_local_match(struct sdp_sock *ls, struct net *net,
			   const struct sockaddr_storage *dst)
{
	const struct sockaddr_storage *la = &ls->local;

	if (!net_eq(sock_net(&ls->sk), net) ||
	    sdp_addr_port(la) != sdp_addr_port(dst))
		return 0;
	if (la->ss_family == AF_INET) {
		__be32 l = ((const struct sockaddr_in *)la)->sin_addr.s_addr;

		if (dst->ss_family != AF_INET)
			return 0;
		if (l == htonl(INADDR_ANY))
			return 1;
		return l == ((const struct sockaddr_in *)dst)->sin_addr.s_addr ?
		       2 : 0;
	}
	{
		const struct in6_addr *l =
			&((const struct sockaddr_in6 *)la)->sin6_addr;

		if (ipv6_addr_any(l))
			return dst->ss_family == AF_INET6 || !ls->v6only;
		if (dst->ss_family != AF_INET6)
			return 0;
		return ipv6_addr_equal(l, &((const struct sockaddr_in6 *)dst)->sin6_addr) ?
		       2 : 0;
	}
}

/* Does the address @la (a listener's-to-be, @v6only) cover listener
 * @ls's address, in @net?
 */
static bool sdp_local_covers(const struct sockaddr_storage *la, bool v6only,
			     struct net *net, struct sdp_sock *ls)
{
	const struct sockaddr_storage *dst = &ls->local;

	if (!net_eq(sock_net(&ls->sk), net) ||
	    sdp_addr_port(la) != sdp_addr_port(dst))
		return false;
	if (la->ss_family == AF_INET)
		return dst->ss_family == AF_INET &&
		       ((const struct sockaddr_in *)la)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)la)->sin6_addr) &&
	       (dst->ss_family == AF_INET6 || !v6only);
}

/* The listener @dst reaches, held; or NULL.  Of listeners sharing the
 * port by SO_REUSEPORT, the one the client's @hash chooses.
 */
static struct sock *sdp_local_lookup(struct net *net,
				     const struct sockaddr_storage *dst,
				     u32 hash)
{
	struct sdp_sock *ls, *best = NULL;
	struct sock *found = NULL;
	int m, best_m = 0;

	spin_lock(&sdp_local_lock);
	hash_for_each_possible(sdp_local_table, ls, local_node,
			       (__force u16)sdp_addr_port(dst)) {
		m = sdp_local_match(ls, net, dst);
		if (m > best_m) {
			best = ls;
			best_m = m;
		}
	}
	if (best)
		found = sdp_rport_pick(best, hash);
	spin_unlock(&sdp_local_lock);
	return found;
}

/* Under sdp_local_lock: a listener other than @self whose address and
 * port overlap @addr's in @net (one covers the other), as TCP's bind
 * conflict sees them.
 */
static bool sdp_local_taken(struct net *net, struct sdp_sock *self,
			    const struct sockaddr_storage *addr, bool v6only)
{
	struct sdp_sock *ls;

	lockdep_assert_held(&sdp_local_lock);
	hash_for_each_possible(sdp_local_table, ls, local_node,
			       (__force u16)sdp_addr_port(addr)) {
		if (ls == self || sdp_rport_shared(self, ls))
			continue;
		if (sdp_local_match(ls, net, addr) ||
		    sdp_local_covers(addr, v6only, net, ls))
			return true;
	}
	return false;
}

/**
 * sdp_local_bind_check - may a socket bind where only local connections
 *	come?
 * @ssk: the socket, locked
 * @addr: the address and port
 *
 * rdma_cm holds such a socket's port as a wildcard bind that never
 * listens, so with SO_REUSEADDR on both it would let a second socket of
 * any user bind the port of a local listener, and listen there too.  As
 * TCP: a port a listener holds on an overlapping address is in use,
 * whatever SO_REUSEADDR says, but to the members of its SO_REUSEPORT
 * group (sdp_reuseport.c).
 *
 * Return: 0 or -EADDRINUSE.
 */
static int sdp_local_bind_check(struct sdp_sock *ssk,
				const struct sockaddr_storage *addr)
{
	bool taken;

	sdp_assert_locked(ssk);

	spin_lock(&sdp_local_lock);
	taken = sdp_local_taken(sock_net(&ssk->sk), ssk, addr, ssk->v6only);
	spin_unlock(&sdp_local_lock);
	return taken ? -EADDRINUSE : 0;
}

/**
 * sdp_local_listen - a listener takes local connections too
 * @ssk: the socket, locked, about to listen
 *
 * Return: 0, or -EADDRINUSE if a listener of its address and port is
 * there already (sdp_local_bind_check()): a socket bound where only
 * local connections come has no rdma_listen() to refuse it.
 */
static int sdp_local_listen(struct sdp_sock *ssk)
{
	int err = 0;

	sdp_assert_locked(ssk);

	/* bound where only local connections come, it listens for them
	 * whatever sdp_local says now
	 */
	if ((!READ_ONCE(sdp_local) &&
	     !test_bit(SDP_F_LOCAL_BIND, &ssk->flags)) ||
	    test_bit(SDP_F_LOCAL_LISTEN, &ssk->flags))
		return 0;
	spin_lock(&sdp_local_lock);
	if (test_bit(SDP_F_LOCAL_BIND, &ssk->flags) &&
	    sdp_local_taken(sock_net(&ssk->sk), ssk, &ssk->local,
			    ssk->v6only)) {
		err = -EADDRINUSE;
	} else {
		hash_add(sdp_local_table, &ssk->local_node,
			 (__force u16)sdp_addr_port(&ssk->local));
		__set_bit(SDP_F_LOCAL_LISTEN, &ssk->flags);
	}
	spin_unlock(&sdp_local_lock);
	return err;
}

/* The socket, locked, stops listening. */
static void sdp_local_unlisten(struct sdp_sock *ssk)
{
	if (!__test_and_clear_bit(SDP_F_LOCAL_LISTEN, &ssk->flags))
		return;
	spin_lock(&sdp_local_lock);
	hash_del(&ssk->local_node);
	spin_unlock(&sdp_local_lock);
}

/* The source address of a local connection to @dst, as the route through
 * lo would choose it: 127.0.0.1 for 127.0.0.0/8, else @dst itself.
 */
static void sdp_local_src(struct sdp_sock *ssk,
			  const struct sockaddr_storage *dst)
{
	struct sockaddr_storage *src = &ssk->local;
	__be16 port = sdp_addr_port(src);

	if (src->ss_family == dst->ss_family) {
		if (src->ss_family == AF_INET &&
		    ((struct sockaddr_in *)src)->sin_addr.s_addr)
			return;
		if (src->ss_family == AF_INET6 &&
		    !ipv6_addr_any(&((struct sockaddr_in6 *)src)->sin6_addr))
			return;
	}
	memcpy(src, dst, sizeof(*src));
	if (dst->ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)src;

		if (ipv4_is_loopback(sin->sin_addr.s_addr))
			sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else {
		((struct sockaddr_in6 *)src)->sin6_flowinfo = 0;
	}
	((struct sockaddr_in *)src)->sin_port = port;
}

/* An unbound socket takes an ephemeral port from rdma_cm, as TCP's
 * connect() binds one.
 */
static int sdp_local_autobind(struct sdp_sock *ssk,
			      const struct sockaddr_storage *dst)
{
	struct sockaddr_storage any = { .ss_family = dst->ss_family };
	int err;

	if (test_bit(SDP_F_BOUND, &ssk->flags))
		return 0;
	err = rdma_bind_addr(ssk->cm_id, (struct sockaddr *)&any);
	if (err)
		return err == -EADDRNOTAVAIL ? -EAGAIN : err;
	memcpy(&ssk->local, &ssk->cm_id->route.addr.src_addr,
	       sizeof(ssk->local));
	return 0;
}

/* ->refuse(): the local client of @req refused: its connect() fails with
 * ECONNREFUSED, if it is still the one that asked (see
 * sdp_local_answer_pending()).  The client is not locked.
 */
static void sdp_local_refuse(struct sock *sk, struct sdp_pending_req *req)
{
	struct sdp_sock *client = req->client;
	struct sock *csk = &client->sk;

	lock_sock(csk);
	if (csk->sk_state == TCP_SYN_SENT &&
	    test_bit(SDP_F_LOCAL_CONN, &client->flags) &&
	    client->connect_gen == req->client_gen)
		sdp_connect_failed(client, ECONNREFUSED);
	release_sock(csk);
	sock_put(csk);		/* the request's */
}

/* Under the listener's lock, with room: a child joined to the local
 * @client (locked), established, in the accept queue.
 */
static int sdp_local_child(struct sock *sk, struct sdp_sock *client)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sock *child;
	int err;

	child = sdp_sk_alloc(sock_net(sk), sk->sk_prot, sk->sk_family,
			     sk->sk_kern_sock, NULL);
	if (!child)
		return -ENOMEM;
	sdp_child_inherit(child, sk);
	err = sdp_local_pair(client, child);
	if (err) {
		sdp_set_state(child, TCP_CLOSE);
		sock_orphan(child);
		sock_put(child);	/* sdp_sk_alloc()'s: frees it */
		return err;
	}
	sock_hold(sk);		/* the child's; put when accepted or dropped */
	sdp_sk(child)->parent = sk;
	sk_acceptq_added(sk);
	list_add_tail(&sdp_sk(child)->accept_node, &ssk->accept_queue);
	WRITE_ONCE(ssk->accept_count, ssk->accept_count + 1);
	sk->sk_data_ready(sk);
	return 0;
}

/**
 * sdp_local_answer - a local client connects to listener @sk
 * @sk: the listener, held, not locked
 * @client: the client, locked
 *
 * The client is established with a child in the accept queue, or, while
 * the queue is full, waits in SYN_SENT for accept_work.
 *
 * Return: 0, -ECONNREFUSED, or another negative errno.
 */
static int sdp_local_answer(struct sock *sk, struct sdp_sock *client)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_pending_req *req;
	int err = -ECONNREFUSED;

	lock_sock_nested(sk, SDP_NEST_LISTENER);
	if (sk->sk_state != TCP_LISTEN)
		goto out;
	if (sdp_listen_room(sk) && list_empty(&ssk->pending_reqs)) {
		err = sdp_local_child(sk, client);
		goto out;
	}
	if (ssk->pending_count >=
	    READ_ONCE(sock_net(sk)->ipv4.sysctl_max_syn_backlog))
		goto out;
	err = -ENOMEM;
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		goto out;
	req->tp = &sdp_local_transport;
	req->client = client;
	req->client_gen = client->connect_gen;
	sock_hold(&client->sk);	/* put by ->answer() or ->refuse() */
	sock_hold(sk);		/* the request's */
	list_add_tail(&req->node, &ssk->pending_reqs);
	ssk->pending_count++;
	sdp_set_state(&client->sk, TCP_SYN_SENT);
	err = 0;
out:
	release_sock(sk);
	return err;
}

/* ->answer(), accept_work (sdp_listen.c): room for a local client that
 * waited; neither socket locked.  The client's connect_gen when it asked
 * (req->client_gen): a client
 * that disconnected (connect(AF_UNSPEC)) and connected again, maybe to
 * another listener, is not this listener's to answer any more.
 */
static void sdp_local_answer_pending(struct sock *sk,
				     struct sdp_pending_req *req)
{
	struct sdp_sock *client = req->client;
	struct sock *csk = &client->sk;
	int err = -ECONNREFUSED;

	lock_sock(csk);
	if (csk->sk_state != TCP_SYN_SENT || sock_flag(csk, SOCK_DEAD) ||
	    !test_bit(SDP_F_LOCAL_CONN, &client->flags) ||
	    client->connect_gen != req->client_gen)
		goto out;
	lock_sock_nested(sk, SDP_NEST_LISTENER);
	if (sk->sk_state == TCP_LISTEN)
		err = sdp_local_child(sk, client);
	release_sock(sk);
	if (err)
		sdp_connect_failed(client, -err);
out:
	release_sock(csk);
	sock_put(csk);		/* the request's */
}

/**
 * sdp_local_connect - connect to a listener on this host
 * @ssk: the socket, locked, in TCP_CLOSE with a fresh id
 * @dst: the destination, local (sdp_local_dest())
 *
 * Leaves the socket established, waiting in SYN_SENT for room in the
 * listener's accept queue, or closed with sk_err ECONNREFUSED.
 *
 * Return: 0, or a negative errno with the socket unchanged.
 */
static int sdp_local_connect(struct sdp_sock *ssk,
			     struct sockaddr_storage *dst)
{
	struct sock *sk = &ssk->sk;
	struct sock *ls;
	int err;

	sdp_assert_locked(ssk);

	__set_bit(SDP_F_LOCAL_CONN, &ssk->flags);
	err = sdp_local_autobind(ssk, dst);
	if (err)
		return err;
	ssk->connect_gen++;	/* an answer to an earlier connect() is stale */
	sdp_local_src(ssk, dst);
	memcpy(&ssk->peer, dst, sizeof(ssk->peer));

	ls = sdp_local_lookup(sock_net(sk), dst, sdp_rport_hash(&ssk->local));
	err = ls ? sdp_local_answer(ls, ssk) : -ECONNREFUSED;
	if (ls)
		sock_put(ls);
	if (err == -ECONNREFUSED) {
		sdp_set_state(sk, TCP_SYN_SENT);	/* and refused at once */
		sdp_connect_failed(ssk, ECONNREFUSED);
		return 0;
	}
	return err;
}

/* One end of a new link, established; the socket locked. */
static void sdp_local_end_up(struct sdp_sock *ssk, struct sdp_conn *conn,
			     struct sdp_local_link *link, u8 side)
{
	struct sock *sk = &ssk->sk;

	conn->link = link;
	conn->side = side;
	conn->st.last_recv = jiffies;
	conn->regions = ssk->regions;	/* as over RDMA: both must ask */
	link->end[side].ssk = ssk;
	link->end[side].regions_ok = ssk->regions;
	sdp_conn_install(ssk, conn);
	/* till the first send: sdp_local_limits() */
	ssk->tx_local_rcv = sdp_rcv_budget(ssk);
	WRITE_ONCE(ssk->tx_local_limit,
		   sdp_rcv_budget(ssk) + sdp_snd_budget(ssk));
	ssk->tx_local_unread = 0;
	__set_bit(SDP_F_CONN, &ssk->flags);
	__clear_bit(SDP_F_TEARDOWN, &ssk->flags);
	__set_bit(SDP_F_WAS_CONNECTED, &ssk->flags);
	sock_hold(sk);	/* the connection's; put in sdp_conn_teardown() */
	sdp_set_state(sk, TCP_ESTABLISHED);
	sdp_ka_reset(ssk, sock_flag(sk, SOCK_KEEPOPEN));
}

/**
 * sdp_local_pair - join a client and a new child of its listener
 * @client: the connecting socket, locked
 * @child: the child, not locked, not yet queued for accept()
 *
 * Return: 0, or -ENOMEM with neither socket changed.
 */
int sdp_local_pair(struct sdp_sock *client, struct sock *child)
{
	struct sdp_sock *cssk = sdp_sk(child);
	struct sdp_conn *cc, *sc;
	struct sdp_local_link *link;

	link = kzalloc(sizeof(*link), GFP_KERNEL_ACCOUNT);
	cc = sdp_conn_alloc(client, &sdp_local_transport);
	sc = sdp_conn_alloc(cssk, &sdp_local_transport);
	if (!link || !cc || !sc) {
		kfree(link);
		if (cc)
			sdp_conn_put(cc);
		if (sc)
			sdp_conn_put(sc);
		return -ENOMEM;
	}
	refcount_set(&link->ref, 2);	/* one per connection */
	spin_lock_init(&link->lock);
	INIT_LIST_HEAD(&link->end[0].inbox);
	INIT_LIST_HEAD(&link->end[1].inbox);
	INIT_WORK(&link->ack_work, sdp_local_ack_work);

	lock_sock_nested(child, SDP_NEST_CHILD);
	memcpy(&cssk->local, &client->peer, sizeof(cssk->local));
	memcpy(&cssk->peer, &client->local, sizeof(cssk->peer));
	sdp_local_end_up(cssk, sc, link, 1);
	SDP_INC_STATS(sock_net(child), SDP_MIB_PASSIVE_OPENS);
	SDP_INC_STATS(sock_net(child), SDP_MIB_LOCAL_PASSIVE_OPENS);
	release_sock(child);

	sdp_local_end_up(client, cc, link, 0);
	SDP_INC_STATS(sock_net(&client->sk), SDP_MIB_ACTIVE_OPENS);
	SDP_INC_STATS(sock_net(&client->sk), SDP_MIB_LOCAL_ACTIVE_OPENS);
	client->sk.sk_state_change(&client->sk);
	return 0;
}

/* No message: the reset goes out from the teardown, never from under a
 * socket lock (see the locking above).
 */
static void sdp_local_reset(struct sdp_sock *ssk)
{
}

/**
 * sdp_local_teardown - the local transport's teardown
 * @ssk: the socket, not locked, SDP_F_TEARDOWN set; returns it locked
 *
 * The end leaves the link; what its inbox holds is dropped.  If the
 * connection did not end by a FIN from us, the peer is reset.
 */
static void sdp_local_teardown(struct sdp_sock *ssk)
	__acquires(&ssk->sk)
{
	struct sock *sk = &ssk->sk;
	struct sdp_conn *conn;
	struct sdp_local_link *link;
	struct sdp_local_end *me, *other;
	struct sdp_local_region *regions[SDP_REGIONS_MAX];
	struct sdp_sock *peer = NULL;
	struct sdp_buf *buf, *tmp;
	LIST_HEAD(drop);
	bool rst;

	lock_sock(sk);
	conn = ssk->conn;
	link = conn->link;
	if (conn->local_held) {
		sdp_local_buf_free(ssk, conn->local_held);
		conn->local_held = NULL;
		WRITE_ONCE(ssk->tx_queued, 0);
	}
	rst = test_bit(SDP_F_RESET, &ssk->flags) ||
	      !test_bit(SDP_F_DISCONN_SENT, &ssk->flags);

	spin_lock_bh(&link->lock);
	me = &link->end[conn->side];
	other = &link->end[!conn->side];
	me->ssk = NULL;
	list_splice_init(&me->inbox, &drop);
	sdp_local_regions_drop(me, regions);
	if (rst && other->ssk) {
		peer = other->ssk;
		other->rst = true;
		sock_hold(&peer->sk);
	}
	spin_unlock_bh(&link->lock);

	list_for_each_entry_safe(buf, tmp, &drop, list)
		sdp_local_buf_free(ssk, buf);
	sdp_local_regions_put(regions);
	release_sock(sk);
	if (peer) {
		sdp_local_kick(peer);
		sock_put(&peer->sk);
	}
	lock_sock(sk);
	__acquire(&ssk->sk);	/* sparse: lock_sock() is not annotated */
}

/* TCP_INFO: what a local connection adds to the stream's counters. */
static void sdp_local_info(struct sdp_sock *ssk, struct tcp_info *info)
{
	info->tcpi_snd_mss = SDP_LOCAL_CHUNK;
	info->tcpi_rcv_mss = SDP_LOCAL_CHUNK;
	info->tcpi_advmss = SDP_LOCAL_CHUNK;
	info->tcpi_pmtu = SDP_LOCAL_CHUNK;
	info->tcpi_snd_cwnd = 1;
	info->tcpi_rtt = 1;	/* delivered as sent: less than a microsecond */
	info->tcpi_min_rtt = 1;
	info->tcpi_rcv_space = ssk->sk.sk_rcvbuf;
}

/* A keepalive probe: the peer is in this kernel, answered at once. */
static int sdp_local_probe(struct sdp_sock *ssk)
{
	ssk->conn->st.last_recv = jiffies;
	return 1;
}

/* ->rx_purge(): drop the peer's messages not read, with the connection. */
static void sdp_local_rx_purge(struct sdp_sock *ssk)
{
	struct sdp_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, &ssk->conn->rx_queue, list) {
		list_del_init(&buf->list);
		sdp_local_rx_done(ssk, buf);
	}
}

/* What a local peer left while a process owned the socket. */
static void sdp_local_release(struct sdp_sock *ssk)
{
	if (ssk->conn->link)
		sdp_local_apply(ssk);
}

/* The local transport's part of freeing a connection: its messages not
 * read, the one held back, and its end of the link.
 */
static void sdp_local_conn_free(struct sdp_conn *conn)
{
	struct sdp_sock *ssk = conn->ssk;
	struct sdp_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, &conn->rx_queue, list)
		if (buf->kind == SDP_BUF_LOCAL || buf->kind == SDP_BUF_PAGES)
			sdp_local_buf_free(ssk, buf);
	if (conn->local_held)
		sdp_local_buf_free(ssk, conn->local_held);
	if (conn->link)
		sdp_local_link_put(conn->link);
}

const struct sdp_transport sdp_local_transport = {
	.name		= "local",
	.sendmsg	= sdp_local_sendmsg,
	.sink		= sdp_local_sink,
	.send_page	= sdp_local_send_page,
	.copy_pages	= sdp_local_pages_copy,
	.rx_done	= sdp_local_rx_done,
	.rx_purge	= sdp_local_rx_purge,
	.flush		= sdp_local_flush,
	.reset		= sdp_local_reset,
	.teardown	= sdp_local_teardown,
	.writable	= sdp_local_writable,
	.info		= sdp_local_info,
	.probe		= sdp_local_probe,
	.diag_kind	= SDP_DIAG_TP_LOCAL,
	.release	= sdp_local_release,
	.conn_free	= sdp_local_conn_free,
	.claims		= sdp_local_dest,
	.connect	= sdp_local_connect,
	.bind_check	= sdp_local_bind_check,
	.listen		= sdp_local_listen,
	.unlisten	= sdp_local_unlisten,
	.answer		= sdp_local_answer_pending,
	.refuse		= sdp_local_refuse,
	.region_reg	= sdp_local_region_reg,
	.region_dereg	= sdp_local_region_dereg,
	.region_close	= sdp_local_region_close,
	.rdma_op	= sdp_local_rdma_op,
};

static_assert(SDP_LOCAL_CHUNK + sizeof(struct sdp_buf) <= 64 * 1024);
