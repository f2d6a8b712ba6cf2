// SPDX-License-Identifier: GPL-2.0
/*
 * A userspace SDP peer over librdmacm and libibverbs: see sdp_peer.h.
 *
 * Work request ids: a receive buffer's index; PEER_WR_TX + slot for a
 * send; PEER_WR_RW for the one RDMA READ or WRITE of ours at a time.
 * Receive completions that arrive while we wait for something else are
 * kept, in order, until peer_recv() hands them out.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdp_peer.h"

#define PEER_WR_TX	0x10000
#define PEER_WR_RW	0x20000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void peer_opts_default(struct peer_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mid = -1;
}

static void peer_opts_fill(struct peer_opts *o)
{
	if (!o->bufs)
		o->bufs = 16;
	if (!o->post)
		o->post = o->bufs + 4;
	if (o->post < 0)
		o->post = 0;	/* none at all */
	if (o->post > PEER_MAXRX)
		o->post = PEER_MAXRX;
	if (!o->version)
		o->version = 0x10;
	if (!o->rcv_size)
		o->rcv_size = PEER_BUFSZ;
	if (!o->caps)
		o->caps = 3;
	if (!o->max_adverts)
		o->max_adverts = 8;
	if (!o->pdata_len)
		o->pdata_len = sizeof(struct hello);
	if (!o->memsz)
		o->memsz = PEER_MEMSZ;
}

int peer_resolve(const char *addr, int port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return inet_pton(AF_INET, addr, &sin->sin_addr) == 1 ? 0 : -1;
}

/* Keep a receive completion: a ring, oldest first. */
static void rx_keep(struct peer *p, uint32_t idx, uint32_t bytes, int status)
{
	if (p->rx_count == PEER_KEPT)
		return;	/* cannot happen: at most the posted receives */
	p->rx_kept[(p->rx_head + p->rx_count++) % PEER_KEPT] =
		(struct rx_done){ idx, bytes, status };
}

/* Handle one completion; 1 if there was one. */
static int peer_poll_one(struct peer *p)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(p->cq, 1, &wc);

	if (n <= 0)
		return 0;
	if (wc.status != IBV_WC_SUCCESS)
		p->broken = 1;
	if (wc.wr_id >= PEER_WR_RW) {
		p->rw_busy = 0;
		p->rw_status = wc.status;
	} else if (wc.wr_id >= PEER_WR_TX) {
		p->tx_busy[wc.wr_id - PEER_WR_TX] = 0;
	} else {
		p->posted--;
		p->rx_posted[wc.wr_id] = 0;
		rx_keep(p, wc.wr_id, wc.byte_len, wc.status);
	}
	return 1;
}

void peer_poll(struct peer *p)
{
	while (p->cq && peer_poll_one(p))
		;
}

static int post_recv(struct peer *p, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->buf + (size_t)idx * PEER_BUFSZ),
		.length = PEER_BUFSZ,
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = idx, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(p->id->qp, &wr, &bad))
		return -1;
	p->posted++;
	p->rx_posted[idx] = 1;
	return 0;
}

/* PD, CQ, QP on p->id, buffers registered, receives posted. */
static int peer_setup(struct peer *p)
{
	struct ibv_qp_init_attr qa = {};
	int i;

	p->nrx = p->o.bufs + 4;
	if (p->nrx < p->o.post)
		p->nrx = p->o.post;
	if (p->nrx > PEER_MAXRX)
		p->nrx = PEER_MAXRX;
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cq = ibv_create_cq(p->id->verbs, p->nrx + PEER_NTX + 8, NULL, NULL, 0);
	p->buf = calloc(p->nrx + PEER_NTX, PEER_BUFSZ);
	p->memsz = p->o.memsz;
	p->mem = calloc(1, p->memsz);
	if (!p->pd || !p->cq || !p->buf || !p->mem)
		return -1;
	p->mr = ibv_reg_mr(p->pd, p->buf, (size_t)(p->nrx + PEER_NTX) * PEER_BUFSZ,
			   IBV_ACCESS_LOCAL_WRITE);
	p->memmr = ibv_reg_mr(p->pd, p->mem, p->memsz, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!p->mr || !p->memmr)
		return -1;
	qa.send_cq = p->cq;
	qa.recv_cq = p->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = PEER_NTX + 2;
	qa.cap.max_recv_wr = p->nrx;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(p->id, p->pd, &qa))
		return -1;
	for (i = 0; i < p->o.post; i++)
		if (post_recv(p, i))
			return -1;
	p->adv_bufs = p->o.bufs;
	return 0;
}

static void hello_fill(struct hello *h, const struct peer_opts *o, uint8_t mid)
{
	memset(h, 0, sizeof(*h));
	h->h.mid = o->mid >= 0 ? o->mid : mid;
	h->h.bufs = htons(o->bufs);
	h->h.len = htonl(sizeof(*h));
	h->h.mseq = htonl(o->mseq);
	h->version = o->version;
	h->max_adverts = o->max_adverts;
	h->rcv_size = htonl(o->rcv_size);
	h->caps = htonl(o->caps);
}

static void hello_take(struct peer *p, const void *pdata, int len)
{
	const struct hello *h = pdata;

	p->remote_ack = 0;
	p->remote_bufs = 64;
	p->peer_rcv_size = 32768;
	p->peer_caps = 3;
	if (h && len >= (int)sizeof(*h)) {
		p->remote_bufs = ntohs(h->h.bufs);
		p->peer_rcv_size = ntohl(h->rcv_size);
		p->peer_caps = ntohl(h->caps);
	}
	p->remote_max = p->remote_bufs;
}

static void conn_param(struct rdma_conn_param *cp, const struct hello *h,
		       int len)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = len > 0 ? h : NULL;
	cp->private_data_len = len > 0 ? len : 0;
	cp->responder_resources = 4;
	cp->initiator_depth = 4;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

/* Next event on p->ec within @timeout_ms; acked, its type returned. */
static int next_event(struct peer *p, int timeout_ms, struct rdma_cm_event *copy)
{
	struct pollfd pf = { .fd = p->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pf, 1, timeout_ms) <= 0 || rdma_get_cm_event(p->ec, &ev))
		return -1;
	type = ev->event;
	if (copy)
		*copy = *ev;
	rdma_ack_cm_event(ev);
	return type;
}

int peer_connect(struct peer *p, const struct sockaddr_in *dst,
		 const struct peer_opts *o)
{
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct pollfd pf;
	struct hello h;
	int type;

	memset(p, 0, sizeof(*p));
	p->o = *o;
	peer_opts_fill(&p->o);
	p->ec = rdma_create_event_channel();
	if (!p->ec || rdma_create_id(p->ec, &p->id, p, RDMA_PS_TCP) ||
	    rdma_resolve_addr(p->id, NULL, (struct sockaddr *)dst, 2000) ||
	    next_event(p, 5000, NULL) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(p->id, 2000) ||
	    next_event(p, 5000, NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED ||
	    peer_setup(p))
		return -1;
	hello_fill(&h, &p->o, MID_HELLO);
	conn_param(&cp, &h, p->o.pdata_len);
	if (rdma_connect(p->id, &cp))
		return -1;
	if (p->o.no_rtu)
		return 0;	/* the REP's event is never read: no RTU */
	pf = (struct pollfd){ .fd = p->ec->fd, .events = POLLIN };
	if (poll(&pf, 1, 15000) <= 0 || rdma_get_cm_event(p->ec, &ev))
		return -1;
	type = ev->event;
	if (type == RDMA_CM_EVENT_ESTABLISHED)
		hello_take(p, ev->param.conn.private_data,
			   ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_REJECTED)
		return 1;
	return type == RDMA_CM_EVENT_ESTABLISHED ? 0 : -1;
}

int peer_listen(struct peer *p, const struct sockaddr_in *src)
{
	memset(p, 0, sizeof(*p));
	p->ec = rdma_create_event_channel();
	if (!p->ec || rdma_create_id(p->ec, &p->lid, p, RDMA_PS_TCP) ||
	    rdma_bind_addr(p->lid, (struct sockaddr *)src) ||
	    rdma_listen(p->lid, 16))
		return -1;
	return 0;
}

int peer_get_request(struct peer *p, struct hello *hello, int timeout_ms)
{
	struct pollfd pf = { .fd = p->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ok = -1;

	while (poll(&pf, 1, timeout_ms) > 0 && !rdma_get_cm_event(p->ec, &ev)) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			p->id = ev->id;
			memset(hello, 0, sizeof(*hello));
			memcpy(hello, ev->param.conn.private_data,
			       ev->param.conn.private_data_len < sizeof(*hello) ?
			       ev->param.conn.private_data_len : sizeof(*hello));
			ok = 0;
		}
		rdma_ack_cm_event(ev);
		if (!ok)
			return 0;
	}
	return -1;
}

int peer_accept(struct peer *p, const struct peer_opts *o, int wait)
{
	struct rdma_conn_param cp;
	struct hello h;
	int type;

	p->o = *o;
	peer_opts_fill(&p->o);
	if (peer_setup(p))
		return -1;
	hello_fill(&h, &p->o, MID_HELLO_ACK);
	conn_param(&cp, &h, p->o.pdata_len);
	if (rdma_accept(p->id, &cp))
		return -1;
	if (!wait)
		return 0;
	do
		type = next_event(p, 15000, NULL);
	while (type >= 0 && type != RDMA_CM_EVENT_ESTABLISHED &&
	       type != RDMA_CM_EVENT_DISCONNECTED);
	return type == RDMA_CM_EVENT_ESTABLISHED ? 0 : -1;
}

/* The Hello of the request being answered, for the credits it gives. */
void peer_take_hello(struct peer *p, const struct hello *h)
{
	hello_take(p, h, sizeof(*h));
}

void peer_close(struct peer *p)
{
	if (p->id) {
		rdma_disconnect(p->id);
		if (p->id->qp)
			rdma_destroy_qp(p->id);
	}
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->memmr)
		ibv_dereg_mr(p->memmr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->lid)
		rdma_destroy_id(p->lid);
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	free(p->buf);
	free(p->mem);
	memset(p, 0, sizeof(*p));
}

int peer_credits(const struct peer *p)
{
	return (int32_t)(p->remote_ack - p->mseq) + (int32_t)p->remote_bufs;
}

/* A free send slot, waiting up to 5 s for one. */
static int tx_slot(struct peer *p)
{
	long long end = now_ms() + 5000;
	int i;

	do {
		peer_poll(p);
		for (i = 0; i < PEER_NTX; i++) {
			int s = (p->tx_next + i) % PEER_NTX;

			if (!p->tx_busy[s]) {
				p->tx_next = s + 1;
				return s;
			}
		}
		usleep(200);
	} while (now_ms() < end && !p->broken);
	return -1;
}

int peer_send(struct peer *p, uint8_t mid, uint8_t flags, const void *payload,
	      uint32_t plen, struct peer_hdr ov)
{
	int s = tx_slot(p);
	uint8_t *b;
	struct bsdh *h;
	uint32_t len = sizeof(*h) + plen;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {}, *bad;

	if (s < 0 || len > PEER_BUFSZ)
		return -1;
	b = p->buf + (size_t)(p->nrx + s) * PEER_BUFSZ;
	h = (struct bsdh *)b;
	memcpy(b + sizeof(*h), payload, plen);
	h->mid = mid;
	h->flags = flags;
	h->bufs = htons(ov.bufs >= 0 ? ov.bufs : p->adv_bufs);
	h->len = htonl(ov.len >= 0 ? ov.len : len);
	h->mseq = htonl(ov.mseq >= 0 ? ov.mseq : p->mseq + 1);
	h->mseq_ack = htonl(ov.mseq_ack >= 0 ? ov.mseq_ack : p->mseq_in);
	sge.addr = (uintptr_t)b;
	sge.length = ov.bytes >= 0 ? (uint32_t)ov.bytes : len;
	sge.lkey = p->mr->lkey;
	wr.wr_id = PEER_WR_TX + s;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return -1;
	p->tx_busy[s] = 1;
	if (ov.mseq < 0)
		p->mseq++;
	return 0;
}

int peer_send_size(struct peer *p, uint8_t mid, uint32_t size)
{
	uint32_t be = htonl(size);

	return peer_send(p, mid, 0, &be, sizeof(be), PEER_HDR_OK);
}

int peer_send_avail(struct peer *p, uint8_t mid, uint32_t len, uint32_t rkey,
		    uint64_t addr)
{
	struct avail a = { htonl(len), htonl(rkey), htobe64(addr) };

	return peer_send(p, mid, 0, &a, sizeof(a), PEER_HDR_OK);
}

int peer_recv(struct peer *p, struct peer_msg *m, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	struct rx_done d;
	const struct bsdh *h;

	while (!p->rx_count) {
		if (!peer_poll_one(p)) {
			if (p->broken || now_ms() >= end)
				return p->broken ? -2 : -1;
			usleep(200);
		}
	}
	d = p->rx_kept[p->rx_head];
	p->rx_head = (p->rx_head + 1) % PEER_KEPT;
	p->rx_count--;
	if (d.status != IBV_WC_SUCCESS)
		return -2;
	memset(m, 0, sizeof(*m));
	m->data = p->buf + (size_t)d.idx * PEER_BUFSZ;
	m->bytes = d.bytes;
	h = (const struct bsdh *)m->data;
	m->h.mid = h->mid;
	m->h.flags = h->flags;
	m->h.bufs = ntohs(h->bufs);
	m->h.len = ntohl(h->len);
	m->h.mseq = ntohl(h->mseq);
	m->h.mseq_ack = ntohl(h->mseq_ack);
	if (d.bytes >= sizeof(*h) + sizeof(struct avail) &&
	    (h->mid == MID_SRC_AVAIL || h->mid == MID_SINK_AVAIL)) {
		const struct avail *a = (const void *)(h + 1);

		m->av.len = ntohl(a->len);
		m->av.rkey = ntohl(a->rkey);
		m->av.addr = be64toh(a->addr);
	} else if (d.bytes >= sizeof(*h) + 4) {
		uint32_t be;

		memcpy(&be, h + 1, 4);
		m->size = ntohl(be);
	}
	p->mseq_in = m->h.mseq;
	p->remote_ack = m->h.mseq_ack;
	p->remote_bufs = m->h.bufs;
	return 0;
}

void peer_done(struct peer *p, const struct peer_msg *m)
{
	uint32_t idx = (m->data - p->buf) / PEER_BUFSZ;

	if (!p->o.no_repost && !p->broken)
		post_recv(p, idx);
}

int peer_repost_all(struct peer *p)
{
	int i, held[PEER_MAXRX] = { 0 };

	/* every buffer neither posted nor waiting to be handed out: the
	 * caller has given back all it was handed
	 */
	for (i = 0; i < p->rx_count; i++)
		held[p->rx_kept[(p->rx_head + i) % PEER_KEPT].idx] = 1;
	p->o.no_repost = 0;
	for (i = 0; i < p->nrx; i++)
		if (!held[i] && !p->rx_posted[i] && post_recv(p, i))
			return -1;
	return 0;
}

/* One RDMA op, waited for until @end: its completion status, or -1. */
static int peer_rw_op(struct peer *p, enum ibv_wr_opcode op, uint64_t raddr,
		      uint32_t rkey, uint32_t len, uint32_t off, long long end)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->mem + off,
		.length = len,
		.lkey = p->memmr->lkey,
	};
	struct ibv_send_wr wr = {}, *bad;

	wr.wr_id = PEER_WR_RW;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return -1;
	p->rw_busy = 1;
	while (p->rw_busy && now_ms() < end)
		if (!peer_poll_one(p))
			usleep(200);
	return p->rw_busy ? -1 : p->rw_status;
}

/*
 * On InfiniBand and RoCE the target acknowledges an RDMA WRITE, and a
 * refused one (a bad key) completes in error here.  On iWARP a WRITE
 * completes once the transport has taken it: the target's refusal comes
 * back as a TERMINATE that breaks the connection.  A zero-length RDMA
 * READ behind the WRITE (no key is checked for it) is answered only after
 * the target has placed the WRITE, so it completes in error exactly when
 * the WRITE was refused: the same answer as on RoCE.
 */
int peer_rdma(struct peer *p, int write, uint64_t raddr, uint32_t rkey,
	      uint32_t len, uint32_t off, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	int st;

	if ((uint64_t)off + len > p->memsz || p->rw_busy)
		return -1;
	st = peer_rw_op(p, write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
			raddr, rkey, len, off, end);
	if (st || !write ||
	    p->id->verbs->device->transport_type != IBV_TRANSPORT_IWARP)
		return st;
	return peer_rw_op(p, IBV_WR_RDMA_READ, raddr, rkey, 0, off, end);
}

int peer_event(struct peer *p, int timeout_ms)
{
	return next_event(p, timeout_ms, NULL);
}
