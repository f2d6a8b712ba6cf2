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
 */
#include <arpa/inet.h>
#include <endian.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
