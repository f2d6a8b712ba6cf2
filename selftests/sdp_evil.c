// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile SDP peer, written with librdmacm and raw verbs: it connects to
 * an ib_sdp listener and breaks the protocol in one chosen way, so that a
 * test can check that ib_sdp refuses or aborts that connection (and only
 * that one) and counts it.
 *
 * Usage: sdp_evil ADDR PORT CASE
 *   hello-version  a Hello of another major version      -> rejected
 *   hello-short    a Hello cut to 8 bytes                 -> rejected
 *   hello-bufs     a Hello announcing 0 buffers           -> rejected
 *   seq            a Data message out of sequence         -> disconnected
 *   len            a BSDH len that differs from the bytes -> disconnected
 *   mid            a ModeChange (never negotiated)        -> disconnected
 *   ack            an mseq_ack of a message never sent    -> disconnected
 *   bufs           more buffers than the Hello announced  -> disconnected
 *   short          a 7-byte message                       -> disconnected
 *   flags          a flag bit SDP does not define         -> disconnected
 *   urg-empty      OOB_PRES on a Data message with no byte -> disconnected
 *   urg-ctrl       OOB_PRES on a DisConn                  -> disconnected
 *   valid          a correct 5-byte Data message, then a clean disconnect
 * Prints what happened: "rejected", "disconnected" or "established".
 *
 * ZCopy keys, against "sdp_zc holdsend" on ADDR PORT, over two connections
 * to the same host: a key must work on the connection it was advertised on
 * and nowhere else, and only while its transfer lasts.
 *   zc-stale       read a page of the SrcAvail (the control), read it all,
 *                  answer RdmaRdCompl, wait for the sender's "done", then
 *                  read with the old key on the same connection
 *   zc-hold        take the SrcAvail, read a page of it (the control),
 *                  try its live key on the second connection, print
 *                  "holding" and never answer, until the first connection
 *                  is reset (the sender killed, or closed with SO_LINGER
 *                  {1,0})
 *   zc-guess       take the SrcAvail, read a page of it (the control),
 *                  then read at its address with the key's last byte
 *                  changed (as a peer guessing the next key would)
 *   zc-sink-stale  against "sdp_zc holdrecv": take the SinkAvail its
 *                  recv() offers, try its live key on the second
 *                  connection, write 4 KiB into it (the control), answer
 *                  RdmaWrCompl, wait for the reader's "done", then write
 *                  with the old key again
 * Prints "control: read ok" (or "write ok"), "other connection: refused"
 * where a live key was tried on the other connection, and "old key:
 * refused" (or "guessed key: refused") when that key does not work.
 * The address of every SrcAvail and SinkAvail is printed too: it must not
 * be a kernel address.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#define NBUF	8
#define BUFSZ	4096

struct bsdh {
	uint8_t mid, flags;
	uint16_t bufs;
	uint32_t len, mseq, mseq_ack;
} __attribute__((packed));

struct hello {
	struct bsdh h;
	uint8_t version, max_adverts;
	uint16_t reserved;
	uint32_t rcv_size, caps, reserved2;
} __attribute__((packed));

static struct rdma_event_channel *ec;

/* Next event, or -1 after 15 s. */
static int next_event(struct rdma_cm_event **ev)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };

	if (poll(&p, 1, 15000) <= 0)
		return -1;
	return rdma_get_cm_event(ec, ev);
}

static int expect(enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	int got;

	if (next_event(&ev))
		return -1;
	got = ev->event;
	rdma_ack_cm_event(ev);
	return got == (int)want ? 0 : got;
}


/* ---- ZCopy keys -------------------------------------------------------- */

struct econn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;		/* NBUF receive buffers, then a send buffer */
	char *rd;		/* RDMA READ destination */
	struct ibv_mr *rdmr;
	uint32_t mseq_out;	/* last sent */
	uint32_t mseq_in;	/* last received */
};

#define RDSZ	(256 << 10)

static int econn_connect(struct econn *e, struct sockaddr_in *dst)
{
	struct ibv_qp_init_attr qa = {};
	struct rdma_conn_param cp = {};
	struct hello hello = {};
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_sge sge;
	int i;

	memset(e, 0, sizeof(*e));
	if (rdma_create_id(ec, &e->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(e->id, NULL, (struct sockaddr *)dst, 2000) ||
	    expect(RDMA_CM_EVENT_ADDR_RESOLVED) ||
	    rdma_resolve_route(e->id, 2000) ||
	    expect(RDMA_CM_EVENT_ROUTE_RESOLVED))
		return -1;
	e->pd = ibv_alloc_pd(e->id->verbs);
	e->cq = ibv_create_cq(e->id->verbs, 2 * NBUF + 8, NULL, NULL, 0);
	e->buf = calloc(NBUF + 1, BUFSZ);
	e->rd = calloc(1, RDSZ);
	if (!e->pd || !e->cq || !e->buf || !e->rd)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->buf, (NBUF + 1) * BUFSZ,
			   IBV_ACCESS_LOCAL_WRITE);
	e->rdmr = ibv_reg_mr(e->pd, e->rd, RDSZ, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = NBUF;
	qa.cap.max_recv_wr = NBUF;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (!e->mr || !e->rdmr || rdma_create_qp(e->id, e->pd, &qa))
		return -1;
	for (i = 0; i < NBUF; i++) {
		sge.addr = (uintptr_t)e->buf + i * BUFSZ;
		sge.length = BUFSZ;
		sge.lkey = e->mr->lkey;
		rwr.wr_id = i;
		rwr.next = NULL;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ibv_post_recv(e->id->qp, &rwr, &bad_r);
	}
	hello.h.bufs = htons(NBUF);
	hello.h.len = htonl(sizeof(hello));
	hello.version = 0x10;
	hello.max_adverts = 4;
	hello.rcv_size = htonl(BUFSZ);
	hello.caps = htonl(0x3);	/* we read SrcAvails, write SinkAvails */
	cp.private_data = &hello;
	cp.private_data_len = sizeof(hello);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(e->id, &cp) || expect(RDMA_CM_EVENT_ESTABLISHED))
		return -1;
	return 0;
}

/* Next completion of @e, or -1 after 30 s. */
static int econn_poll(struct econn *e, struct ibv_wc *wc)
{
	time_t end = time(NULL) + 30;

	while (time(NULL) < end) {
		int n = ibv_poll_cq(e->cq, 1, wc);

		if (n)
			return n < 0 ? -1 : 0;
		usleep(1000);
	}
	return -1;
}

/* Wait for a message with @mid; returns its buffer, or NULL. */
static struct bsdh *econn_recv(struct econn *e, uint8_t mid)
{
	struct ibv_wc wc;

	while (!econn_poll(e, &wc)) {
		struct bsdh *h;

		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
			continue;
		h = (struct bsdh *)(e->buf + wc.wr_id * BUFSZ);
		e->mseq_in = ntohl(h->mseq);
		if (h->mid == mid)
			return h;
	}
	return NULL;
}

/* An RDMA READ (or WRITE) of @len bytes at the peer's @addr. */
static int econn_rw(struct econn *e, uint64_t addr, uint32_t rkey,
		    uint32_t len, int write)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->rd, .length = len,
			       .lkey = e->rdmr->lkey };
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;

	wr.wr_id = 1000;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(e->id->qp, &wr, &bad))
		return -1;
	while (!econn_poll(e, &wc))
		if (wc.wr_id == 1000)
			return wc.status;
	return -1;
}

static int econn_read(struct econn *e, uint64_t addr, uint32_t rkey,
		      uint32_t len)
{
	return econn_rw(e, addr, rkey, len, 0);
}

/* RdmaRdCompl (0x06) or RdmaWrCompl (0x05) for @size bytes. */
static int econn_compl(struct econn *e, uint8_t mid, uint32_t size)
{
	struct bsdh *m = (struct bsdh *)(e->buf + NBUF * BUFSZ);
	struct ibv_sge sge = { .addr = (uintptr_t)m, .length = sizeof(*m) + 4,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {}, *bad;
	uint32_t be = htonl(size);

	memset(m, 0, sizeof(*m));
	m->mid = mid;
	m->bufs = htons(NBUF - 1);
	m->len = htonl(sizeof(*m) + 4);
	m->mseq = htonl(++e->mseq_out);
	m->mseq_ack = htonl(e->mseq_in);
	memcpy(m + 1, &be, 4);
	wr.wr_id = 2000;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(e->id->qp, &wr, &bad);
}

/* The sink's key: offered by recv(), usable on its own connection only,
 * then dead once recv() returned.
 */
static int zc_sink_case(struct econn *e1, struct econn *e2)
{
	struct bsdh *h = econn_recv(e1, 0xfd);
	uint32_t len, rkey;
	uint64_t addr;
	int st;

	if (!h) {
		printf("no SinkAvail\n");
		return 1;
	}
	memcpy(&len, (char *)(h + 1), 4);
	memcpy(&rkey, (char *)(h + 1) + 4, 4);
	memcpy(&addr, (char *)(h + 1) + 8, 8);
	len = ntohl(len);
	rkey = ntohl(rkey);
	addr = be64toh(addr);
	printf("SinkAvail: %u bytes at 0x%llx\n", len, (unsigned long long)addr);
	st = econn_rw(e2, addr, rkey, 4096, 1);
	printf("other connection: %s\n", st ? "refused" : "write ok");
	st = econn_rw(e1, addr, rkey, 4096, 1);
	printf("control: %s\n", st ? ibv_wc_status_str(st) : "write ok");
	if (st || econn_compl(e1, 0x05, 4096))
		return 1;
	if (!econn_recv(e1, 0xff)) {
		printf("no \"done\" from the reader\n");
		return 1;
	}
	st = econn_rw(e1, addr, rkey, 4096, 1);
	printf("old key: %s\n", st ? "refused" : "still works");
	return st ? 0 : 1;
}

static int zc_case(struct sockaddr_in *dst, const char *c)
{
	struct econn e1, e2;
	struct bsdh *h;
	uint32_t len, rkey;
	uint64_t addr;
	int st;

	if (econn_connect(&e1, dst) || econn_connect(&e2, dst)) {
		perror("connect");
		return 2;
	}
	if (!strcmp(c, "zc-sink-stale"))
		return zc_sink_case(&e1, &e2);
	h = econn_recv(&e1, 0xfe);
	if (!h) {
		printf("no SrcAvail\n");
		return 1;
	}
	memcpy(&len, (char *)(h + 1), 4);
	memcpy(&rkey, (char *)(h + 1) + 4, 4);
	memcpy(&addr, (char *)(h + 1) + 8, 8);
	len = ntohl(len);
	rkey = ntohl(rkey);
	addr = be64toh(addr);
	printf("SrcAvail: %u bytes at 0x%llx\n", len, (unsigned long long)addr);

	st = econn_read(&e1, addr, rkey, 4096);
	printf("control: %s\n", st ? ibv_wc_status_str(st) : "read ok");
	if (st)
		return 1;

	if (!strcmp(c, "zc-guess")) {
		st = econn_read(&e1, addr, (rkey & ~0xffu) | ((rkey + 1) & 0xff),
				4096);
		printf("guessed key: %s\n", st ? "refused" : "read ok");
		return st ? 0 : 1;
	}
	if (!strcmp(c, "zc-stale")) {
		st = econn_read(&e1, addr, rkey, len < RDSZ ? len : RDSZ);
		if (st || econn_compl(&e1, 0x06, len)) {
			printf("could not read the SrcAvail\n");
			return 1;
		}
		if (!econn_recv(&e1, 0xff)) {
			printf("no \"done\" from the sender\n");
			return 1;
		}
		st = econn_read(&e1, addr, rkey, 4096);
		printf("old key: %s\n", st ? "refused" : "still works");
		return st ? 0 : 1;
	}

	/* zc-hold: the live key on the other connection */
	st = econn_read(&e2, addr, rkey, 4096);
	printf("other connection: %s\n", st ? "refused" : "read ok");
	printf("holding\n");
	fflush(stdout);
	/* until the first connection is reset */
	do {
		struct rdma_cm_event *ev;

		if (next_event(&ev)) {
			printf("not reset\n");
			return 1;
		}
		st = ev->id == e1.id ? (int)ev->event : -1;
		rdma_ack_cm_event(ev);
	} while (st != RDMA_CM_EVENT_DISCONNECTED);
	printf("reset\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct ibv_qp_init_attr qa = {};
	struct rdma_conn_param cp = {};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	const char *c;
	struct hello hello = {};
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_send_wr swr = {}, *bad_s;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct bsdh *m;
	char *buf;
	int i, ev_type;
	uint32_t len = sizeof(*m) + 5;

	if (argc != 4) {
		fprintf(stderr, "usage: sdp_evil ADDR PORT CASE\n");
		return 2;
	}
	c = argv[3];
	dst.sin_port = htons(atoi(argv[2]));
	inet_pton(AF_INET, argv[1], &dst.sin_addr);

	ec = rdma_create_event_channel();
	if (!strncmp(c, "zc-", 3))
		return zc_case(&dst, c);
	if (!ec || rdma_create_id(ec, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) ||
	    expect(RDMA_CM_EVENT_ADDR_RESOLVED) ||
	    rdma_resolve_route(id, 2000) ||
	    expect(RDMA_CM_EVENT_ROUTE_RESOLVED)) {
		perror("resolve");
		return 2;
	}
	pd = ibv_alloc_pd(id->verbs);
	cq = ibv_create_cq(id->verbs, 2 * NBUF + 2, NULL, NULL, 0);
	buf = calloc(NBUF + 1, BUFSZ);
	mr = ibv_reg_mr(pd, buf, (NBUF + 1) * BUFSZ, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = NBUF;
	qa.cap.max_recv_wr = NBUF;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (!pd || !cq || !mr || rdma_create_qp(id, pd, &qa)) {
		perror("qp");
		return 2;
	}
	for (i = 0; i < NBUF; i++) {
		sge.addr = (uintptr_t)buf + i * BUFSZ;
		sge.length = BUFSZ;
		sge.lkey = mr->lkey;
		rwr.wr_id = i;
		rwr.next = NULL;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ibv_post_recv(id->qp, &rwr, &bad_r);
	}

	hello.h.mid = 0;
	hello.h.bufs = htons(NBUF);
	hello.h.len = htonl(sizeof(hello));
	hello.version = 0x10;
	hello.rcv_size = htonl(BUFSZ);
	if (!strcmp(c, "hello-version"))
		hello.version = 0x20;
	if (!strcmp(c, "hello-bufs"))
		hello.h.bufs = 0;
	cp.private_data = &hello;
	cp.private_data_len = !strcmp(c, "hello-short") ? 8 : sizeof(hello);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(id, &cp)) {
		perror("rdma_connect");
		return 2;
	}
	if (next_event(&ev)) {
		printf("no answer\n");
		return 1;
	}
	ev_type = ev->event;
	rdma_ack_cm_event(ev);
	if (ev_type == RDMA_CM_EVENT_REJECTED) {
		printf("rejected\n");
		return 0;
	}
	if (ev_type != RDMA_CM_EVENT_ESTABLISHED) {
		printf("event %d\n", ev_type);
		return 1;
	}

	m = (struct bsdh *)(buf + NBUF * BUFSZ);
	m->mid = 0xff;
	m->bufs = htons(NBUF);
	m->mseq = htonl(1);
	m->mseq_ack = 0;
	memcpy(m + 1, "hello", 5);
	if (!strcmp(c, "seq"))
		m->mseq = htonl(5);
	if (!strcmp(c, "len"))
		len -= 2;	/* the header still says 21 */
	if (!strcmp(c, "mid"))
		m->mid = 0x07;
	if (!strcmp(c, "ack"))
		m->mseq_ack = htonl(100);
	if (!strcmp(c, "bufs"))
		m->bufs = htons(NBUF + 1);
	if (!strcmp(c, "flags"))
		m->flags = 0x80;
	m->len = htonl(sizeof(*m) + 5);
	if (!strcmp(c, "urg-empty") || !strcmp(c, "urg-ctrl")) {
		m->flags = 0x01;	/* OOB_PRES */
		len = sizeof(*m);
		m->len = htonl(len);
		if (!strcmp(c, "urg-ctrl"))
			m->mid = 0x02;	/* DisConn */
	}
	if (!strcmp(c, "short"))
		len = 7;

	sge.addr = (uintptr_t)m;
	sge.length = len;
	sge.lkey = mr->lkey;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(id->qp, &swr, &bad_s)) {
		perror("post");
		return 2;
	}
	while (ibv_poll_cq(cq, 1, &wc) == 0)
		;

	if (!strcmp(c, "valid")) {
		printf("established\n");
		rdma_disconnect(id);
		return 0;
	}
	if (expect(RDMA_CM_EVENT_DISCONNECTED)) {
		printf("still connected\n");
		return 1;
	}
	printf("disconnected\n");
	return 0;
}
