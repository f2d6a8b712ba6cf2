// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: SO_REUSEPORT groups, many listeners on one port.
 *
 * rdma_cm lets one id listen on a port, so sockets that share a port by
 * SO_REUSEPORT share a group (struct sdp_rport) that owns the port's ids
 * instead of any of them.  The first socket to bind an address and port
 * with SO_REUSEPORT set makes the group and binds its id; a later socket
 * of the same owner (sk_uid, as TCP's bind conflict checks it) with
 * SO_REUSEPORT set binding the same address and port joins it, with its
 * own id left unbound.  The group listens once its first member does;
 * each connection request that reaches it is handed to one member in
 * TCP_LISTEN, chosen by a hash of the peer's address and port, as TCP's
 * reuseport_select_sock() spreads them; the local transport asks the
 * same of its listener table (sdp_rport_pick()).  Members come and go;
 * the port stays with the group until its last member closes, so a
 * listener that closes never takes it from the others.  When the last
 * listener stops, the group's ids stop listening too, as a lone
 * listener's do: its listening ids are destroyed and a fresh id bound
 * to the address in their place (sdp_rport_stop()), so that no request
 * is taken and, on iWARP, no device's TCP listener holds the port.
 *
 * Objects: struct sdp_rport, on sdp_rports; each member holds a
 * reference (ssk->rport, from bind to sdp_rport_release()).  The ids'
 * context is the group, tagged in its low bit (SDP_RPORT_TAG) to tell it
 * from a socket: a request's id starts with its listener's context, and
 * sdp_rport_cm_event() gives it the chosen member's before the socket
 * core's handler sees it.
 *
 * States: bound (ids bound, not listening); listening (g->listening,
 * once a member's listen() made its ids listen: g->nholds members hold
 * it so, SDP_F_RPORT_HOLD); stopping (g->stopping, while the last
 * holder's sdp_rport_stop() destroys the listening ids and binds a
 * fresh one: a listen() or connect() of a member waits for it, its
 * socket unlocked, then starts again).
 *
 * Locks: sdp_rport_mutex guards sdp_rports and the group's binding,
 * listening and holders; a socket's lock may be held when it is taken.
 * g->lock (a leaf) guards the listeners and the ids' pointers: the
 * rdma_cm handler takes it, never the mutex.  The ids are destroyed with
 * neither held, nor any socket lock (see sdp.h): a request on them may
 * be waiting for a member's socket lock.  A group lives while its
 * listening ids do, so a handler running on one of them may use it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jhash.h>
#include <net/tcp_states.h>

#include "sdp.h"

#define SDP_RPORT_TAG	1UL

struct sdp_rport {
	struct list_head	node;		/* sdp_rports */
	refcount_t		ref;		/* one per member */
	struct net		*net;		/* held by the members */
	struct sockaddr_storage	addr;		/* bound address and port */
	kuid_t			uid;		/* of the first member */
	bool			v6only;
	bool			local_bind;	/* SDP_F_LOCAL_BIND */
	bool			listening;	/* its ids listen */
	bool			stopping;	/* sdp_rport_stop() renews them */
	bool			reuse;		/* the ids' reuseaddr */
	unsigned int		nholds;		/* members holding them so */
	wait_queue_head_t	stop_wq;	/* for !stopping */
	spinlock_t		lock;
	struct list_head	listeners;	/* ssk->rport_node, in TCP_LISTEN */
	unsigned int		nlisten;
	struct rdma_cm_id	*id;		/* bound to addr */
	struct rdma_cm_id	*id_v4;		/* a dual-stack group's IPv4 half */
};

static LIST_HEAD(sdp_rports);
static DEFINE_MUTEX(sdp_rport_mutex);

static bool sdp_rport_tagged(const void *ctx)
{
	return (unsigned long)ctx & SDP_RPORT_TAG;
}

static struct sdp_rport *sdp_rport_untag(void *ctx)
{
	return (struct sdp_rport *)((unsigned long)ctx & ~SDP_RPORT_TAG);
}

/* Same address and port, as bind() gave them. */
static bool sdp_addr_same(const struct sockaddr_storage *a,
			  const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family || a4->sin_port != b4->sin_port)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
	       a6->sin6_scope_id == b6->sin6_scope_id;
}

/**
 * sdp_rport_hash - what spreads a peer's connections over a group
 * @peer: the peer's address and port
 *
 * Return: a hash of them, the same for every request of one peer socket.
 */
u32 sdp_rport_hash(const struct sockaddr_storage *peer)
{
	const struct sockaddr_in *p4 = (const void *)peer;
	const struct sockaddr_in6 *p6 = (const void *)peer;

	if (peer->ss_family == AF_INET6)
		return jhash2((const u32 *)&p6->sin6_addr, 4,
			      (__force u32)p6->sin6_port);
	return jhash_1word((__force u32)p4->sin_addr.s_addr,
			   (__force u32)p4->sin_port);
}

/* The listener @hash chooses, held; or NULL.  A member is on the list
 * from listen() until it stops listening, before its last reference can
 * go.
 */
static struct sock *sdp_rport_select(struct sdp_rport *g, u32 hash)
{
	struct sdp_sock *m = NULL;
	u32 i;

	spin_lock(&g->lock);
	if (g->nlisten) {
		i = reciprocal_scale(hash, g->nlisten);
		list_for_each_entry(m, &g->listeners, rport_node)
			if (!i--)
				break;
		sock_hold(&m->sk);
	}
	spin_unlock(&g->lock);
	return m ? &m->sk : NULL;
}

/**
 * sdp_rport_pick - the listener a local connection goes to
 * @ls: a listener in the local transport's table, its table lock held
 *	(so it is listening, and its group alive)
 * @hash: sdp_rport_hash() of the client
 *
 * Return: @ls if it shares no port, else the member of its group the
 * client's hash chooses; held.
 */
struct sock *sdp_rport_pick(struct sdp_sock *ls, u32 hash)
{
	struct sock *m = NULL;

	if (ls->rport)
		m = sdp_rport_select(ls->rport, hash);
	if (!m) {
		m = &ls->sk;
		sock_hold(m);
	}
	return m;
}

/* May @ssk and @ls listen on one port? */
bool sdp_rport_shared(const struct sdp_sock *ssk, const struct sdp_sock *ls)
{
	return ssk->rport && ssk->rport == ls->rport;
}

/**
 * sdp_rport_cm_event - rdma_cm's handler of a group's ids
 * @id: a group's id, or a request's that came through one
 * @ev: the event
 *
 * A request is handed to a member, whose handler goes on with it as its
 * own listener's; a request no member listens for any more is refused.
 *
 * Return: non-zero for rdma_cm to destroy @id.
 */
static int sdp_rport_cm_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sdp_rport *g;
	struct sock *m;
	int ret = 0;

	if (!sdp_rport_tagged(id->context))
		return sdp_transports_cm_event(id, ev);
	g = sdp_rport_untag(id->context);

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		m = sdp_rport_select(g, sdp_rport_hash((struct sockaddr_storage *)
						       &id->route.addr.dst_addr));
		if (!m) {
			SDP_INC_STATS(g->net, SDP_MIB_CONN_REFUSED);
			return -ECONNREFUSED;
		}
		id->context = m;	/* the member's from now on */
		ret = sdp_transports_cm_event(id, ev);
		sock_put(m);
		return ret;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* the members go on listening for local connections */
		spin_lock(&g->lock);
		if (g->id == id) {
			g->id = NULL;
			ret = 1;
		} else if (g->id_v4 == id) {
			g->id_v4 = NULL;
			ret = 1;
		}
		spin_unlock(&g->lock);
		return ret;
	default:
		return 0;
	}
}

/**
 * sdp_rport_new - a group for a socket about to bind with SO_REUSEPORT
 * @sk: the socket, not locked
 *
 * Made before the socket is locked, so that one not needed can be freed
 * (sdp_rport_free()) after it is unlocked, as its id must be.
 *
 * Return: the group, with its id, or an ERR_PTR.
 */
struct sdp_rport *sdp_rport_new(struct sock *sk)
{
	struct sdp_rport *g;

	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return ERR_PTR(-ENOMEM);
	g->id = rdma_create_id(sock_net(sk), sdp_rport_cm_event,
			       (void *)((unsigned long)g | SDP_RPORT_TAG),
			       RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(g->id)) {
		int err = PTR_ERR(g->id);

		kfree(g);
		return ERR_PTR(err);
	}
	refcount_set(&g->ref, 1);
	g->net = sock_net(sk);
	g->uid = sk->sk_uid;
	spin_lock_init(&g->lock);
	INIT_LIST_HEAD(&g->listeners);
	init_waitqueue_head(&g->stop_wq);
	return g;
}

/* Take the group's ids from it and destroy them: no lock held (see the
 * top of the file); a handler running on one has finished on return.
 */
static void sdp_rport_drop_ids(struct sdp_rport *g)
{
	struct rdma_cm_id *id, *id_v4;

	spin_lock(&g->lock);
	id = g->id;
	id_v4 = g->id_v4;
	g->id = NULL;
	g->id_v4 = NULL;
	spin_unlock(&g->lock);
	if (id_v4)
		rdma_destroy_id(id_v4);
	if (id)
		rdma_destroy_id(id);
}

/* The last member is gone (or none joined): no socket lock held. */
void sdp_rport_free(struct sdp_rport *g)
{
	if (IS_ERR_OR_NULL(g))
		return;
	WARN_ON_ONCE(g->nlisten || g->nholds);
	sdp_rport_drop_ids(g);
	kfree(g);
}

/* Under sdp_rport_mutex: the group bound to @addr in @net. */
static struct sdp_rport *sdp_rport_find(struct net *net,
					const struct sockaddr_storage *addr)
{
	struct sdp_rport *g;

	lockdep_assert_held(&sdp_rport_mutex);
	list_for_each_entry(g, &sdp_rports, node)
		if (net_eq(g->net, net) && sdp_addr_same(&g->addr, addr))
			return g;
	return NULL;
}

static void sdp_rport_join(struct sdp_sock *ssk, struct sdp_rport *g)
{
	ssk->rport = g;
	memcpy(&ssk->local, &g->addr, sizeof(ssk->local));
	if (g->local_bind)
		__set_bit(SDP_F_LOCAL_BIND, &ssk->flags);
	else
		__clear_bit(SDP_F_LOCAL_BIND, &ssk->flags);
}

/**
 * sdp_rport_bind - bind a socket with SO_REUSEPORT set
 * @ssk: the socket, locked, not bound
 * @addr: a local address with a port
 * @newg: sdp_rport_new()'s group, taken (set to NULL) if it is bound
 *
 * Joins the group of @addr if there is one and the socket may share its
 * port (same owner); else binds @newg's id to @addr and makes it that
 * address's group.  The caller frees @newg if it is left.
 *
 * Return: 0 or a negative errno, as TCP's bind() would say it.
 */
int sdp_rport_bind(struct sdp_sock *ssk, struct sockaddr_storage *addr,
		   struct sdp_rport **newg)
{
	struct net *net = sock_net(&ssk->sk);
	struct sdp_rport *g;
	int err = 0;

	sdp_assert_locked(ssk);

	mutex_lock(&sdp_rport_mutex);
	g = sdp_rport_find(net, addr);
	if (g) {
		if (!uid_eq(g->uid, ssk->sk.sk_uid) ||
		    (addr->ss_family == AF_INET6 && g->v6only != ssk->v6only)) {
			err = -EADDRINUSE;
		} else {
			refcount_inc(&g->ref);
			sdp_rport_join(ssk, g);
		}
		goto out;
	}
	g = *newg;
	sdp_id_options(ssk, g->id);
	err = sdp_bind_id(ssk, g->id, addr);
	if (err)
		goto out;
	*newg = NULL;
	if (!test_bit(SDP_F_LOCAL_BIND, &ssk->flags))
		memcpy(&ssk->local, &g->id->route.addr.src_addr,
		       sizeof(ssk->local));
	memcpy(&g->addr, addr, sizeof(g->addr));
	g->v6only = ssk->v6only;
	g->reuse = ssk->sk.sk_reuse;
	g->local_bind = test_bit(SDP_F_LOCAL_BIND, &ssk->flags);
	list_add(&g->node, &sdp_rports);
	ssk->rport = g;
out:
	mutex_unlock(&sdp_rport_mutex);
	return err;
}

/* A member waits, its socket unlocked, while the group's ids are renewed
 * (the mutex held on entry, dropped).  Its own reference keeps the group;
 * the one taken here keeps a connect() of another thread of the owner
 * from giving the group up meanwhile (sdp_rport_unshare()).
 *
 * Return: -EAGAIN to start again, the socket locked again; or -EINTR.
 */
static int sdp_rport_wait(struct sdp_sock *ssk, struct sdp_rport *g)
{
	int err;

	refcount_inc(&g->ref);
	mutex_unlock(&sdp_rport_mutex);
	release_sock(&ssk->sk);
	err = wait_event_killable(g->stop_wq, !READ_ONCE(g->stopping));
	lock_sock(&ssk->sk);
	refcount_dec(&g->ref);	/* never the last: the member's stays */
	return err ? -EINTR : -EAGAIN;
}

/**
 * sdp_rport_listen - a member listens: the group's ids listen too
 * @ssk: the socket, locked, a member
 * @backlog: rdma_cm's
 *
 * The member holds the ids listening (SDP_F_RPORT_HOLD) until it stops,
 * whether or not its listen() goes on to succeed: sdp_rport_unlisten()
 * and sdp_rport_stop() undo it.
 *
 * Return: 0; -EAGAIN if the socket's lock was dropped to wait, to start
 * again; or a negative errno.
 */
int sdp_rport_listen(struct sdp_sock *ssk, int backlog)
{
	struct sdp_rport *g = ssk->rport;
	struct rdma_cm_id *id_v4 = NULL;
	int err = 0;

	sdp_assert_locked(ssk);

	mutex_lock(&sdp_rport_mutex);
	if (g->stopping)
		return sdp_rport_wait(ssk, g);
	/* no id: the device went away, or the port was taken from the
	 * group while it renewed its id; local connections only
	 */
	if (!g->listening && !g->local_bind && g->id) {
		err = sdp_listen_ids(ssk, g->id, &id_v4, backlog);
		spin_lock(&g->lock);
		g->id_v4 = id_v4;	/* destroyed with the group on error */
		spin_unlock(&g->lock);
	}
	if (!err) {
		g->listening = true;
		g->nholds++;
		__set_bit(SDP_F_RPORT_HOLD, &ssk->flags);
	}
	mutex_unlock(&sdp_rport_mutex);
	return err;
}

/* The member, locked, is listening now: requests may go to it. */
void sdp_rport_listening(struct sdp_sock *ssk)
{
	struct sdp_rport *g = ssk->rport;

	sdp_assert_locked(ssk);
	if (!g)
		return;
	spin_lock(&g->lock);
	list_add_tail(&ssk->rport_node, &g->listeners);
	g->nlisten++;
	spin_unlock(&g->lock);
}

/**
 * sdp_rport_unlisten - a member stops listening
 * @ssk: the socket, locked
 *
 * Return: true if it held the group's ids listening: the caller then
 * calls sdp_rport_stop() once the socket is unlocked.
 */
bool sdp_rport_unlisten(struct sdp_sock *ssk)
{
	struct sdp_rport *g = ssk->rport;

	sdp_assert_locked(ssk);
	if (!g)
		return false;
	if (!list_empty(&ssk->rport_node)) {
		spin_lock(&g->lock);
		list_del_init(&ssk->rport_node);
		g->nlisten--;
		spin_unlock(&g->lock);
	}
	return __test_and_clear_bit(SDP_F_RPORT_HOLD, &ssk->flags);
}

/* Drop a member's reference; not under any socket lock. */
static void sdp_rport_put(struct sdp_rport *g)
{
	if (!refcount_dec_and_mutex_lock(&g->ref, &sdp_rport_mutex))
		return;
	list_del(&g->node);
	mutex_unlock(&sdp_rport_mutex);
	sdp_rport_free(g);
}

/* A fresh id for a group whose listening ids went: bound to its address,
 * as sdp_bind_id() bound the first.  Return: the id, or NULL if it could
 * not be had (then the group is for local connections only).
 */
static struct rdma_cm_id *sdp_rport_renew_id(struct sdp_rport *g)
{
	struct rdma_cm_id *id;

	id = rdma_create_id(g->net, sdp_rport_cm_event,
			    (void *)((unsigned long)g | SDP_RPORT_TAG),
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return NULL;
	if (g->reuse)
		rdma_set_reuseaddr(id, 1);
	rdma_set_afonly(id, g->addr.ss_family != AF_INET6 || g->v6only);
	if (!rdma_bind_addr(id, (struct sockaddr *)&g->addr))
		return id;
	rdma_destroy_id(id);	/* never listened: no handler runs */
	return NULL;
}

/**
 * sdp_rport_stop - a member that held the group's ids listening stopped
 * @ssk: the member, not locked (its owner's call: ->rport stays)
 *
 * When the last such member stops, the ids stop listening: they are
 * destroyed, as a lone listener's are, and a fresh id bound in their
 * place keeps the port for the members still bound.  Requests that come
 * meanwhile are refused (no member listens).
 */
void sdp_rport_stop(struct sdp_sock *ssk)
{
	struct sdp_rport *g = ssk->rport;
	struct rdma_cm_id *fresh;

	mutex_lock(&sdp_rport_mutex);
	if (--g->nholds || !g->listening || g->local_bind) {
		if (!g->nholds)
			g->listening = false;
		mutex_unlock(&sdp_rport_mutex);
		return;
	}
	g->listening = false;
	g->stopping = true;
	refcount_inc(&g->ref);	/* the member may go while we sleep */
	mutex_unlock(&sdp_rport_mutex);

	/* no member listens, none can start to: handlers refuse */
	sdp_rport_drop_ids(g);
	fresh = sdp_rport_renew_id(g);

	mutex_lock(&sdp_rport_mutex);
	spin_lock(&g->lock);
	g->id = fresh;
	spin_unlock(&g->lock);
	g->stopping = false;
	mutex_unlock(&sdp_rport_mutex);
	wake_up_all(&g->stop_wq);
	sdp_rport_put(g);
}

/**
 * sdp_rport_release - a socket closes: it leaves its group
 * @ssk: the socket, not locked, no longer listening
 */
void sdp_rport_release(struct sdp_sock *ssk)
{
	struct sdp_rport *g = ssk->rport;

	/* ->rport changes only in its owner's bind(), connect() and here */
	if (!g)
		return;
	lock_sock(&ssk->sk);
	WARN_ON_ONCE(sdp_rport_unlisten(ssk));	/* sdp_listen_stop() did */
	ssk->rport = NULL;
	release_sock(&ssk->sk);
	sdp_rport_put(g);
}

/**
 * sdp_rport_unshare - a member connect()s: it keeps the port for itself
 * @ssk: the socket, locked, not listening; the lock is dropped a while
 *
 * A connection goes out from the socket's own id, so the port must be
 * its alone: a group no one else is in is given up and the socket's own
 * id bound to the address (sdp_renew_id()).
 *
 * Return: 0; -EADDRNOTAVAIL if other sockets share the port; -EINTR.
 */
int sdp_rport_unshare(struct sdp_sock *ssk)
{
	struct sdp_rport *g;
	int err;

again:
	g = ssk->rport;
	if (!g)
		return 0;
	mutex_lock(&sdp_rport_mutex);
	if (g->stopping) {
		err = sdp_rport_wait(ssk, g);
		if (err != -EAGAIN)
			return err;
		goto again;
	}
	if (refcount_read(&g->ref) != 1) {
		mutex_unlock(&sdp_rport_mutex);
		return -EADDRNOTAVAIL;
	}
	list_del(&g->node);
	mutex_unlock(&sdp_rport_mutex);
	ssk->rport = NULL;
	__set_bit(SDP_F_ID_USED, &ssk->flags);	/* renewed, and bound */
	release_sock(&ssk->sk);
	sdp_rport_free(g);
	lock_sock(&ssk->sk);
	return 0;
}
