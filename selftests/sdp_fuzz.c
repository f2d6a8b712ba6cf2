// SPDX-License-Identifier: GPL-2.0
/*
 * A protocol-aware fuzzer for ib_sdp.  Its peer (sdp_peer.c) speaks SDP
 * well enough to get past the sequence and credit checks -- it tracks
 * mseq/mseq_ack and credits -- and then sends seeded random and mutated
 * messages: every message id, unknown ones too, flags, bufs 0 and huge,
 * lengths at every edge, stale and future mseq_ack, SrcAvail and
 * SinkAvail with wild lengths, keys and addresses, completions for
 * transfers that do not exist, RDMA READs and WRITEs with stale and
 * guessed keys; it stops reposting receives for a while (RNR), withholds
 * the RTU, and as a server answers an SDP client with malformed
 * HelloAcks.  Each connection has its own seed, printed: a failing seed
 * replays the same actions.
 *
 *   sdp_fuzz target ADDR PORT
 *	the SDP side: an echo server (AF_INET_SDP), a thread per
 *	connection, random read sizes (1 B .. 1 MiB: BCopy, read-ahead,
 *	direct READs, SinkAvail offers), random write sizes, timeouts on
 *	everything.  Prints "listening".
 *   sdp_fuzz peer ADDR PORT SEED MESSAGES
 *	the fuzzing peer, connection after connection to the target, until
 *	MESSAGES messages were sent.
 *   sdp_fuzz server ADDR PORT SEED CONNECTIONS
 *	the fuzzer as a listener: an SDP client (forked) connects
 *	CONNECTIONS times; each gets a HelloAck, bad or good, and then
 *	random messages.
 *   sdp_fuzz check ADDR PORT
 *	a correct client: 1 MiB through the target's echo, every byte
 *	checked.  Prints "ok" or what went wrong.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "check.h"
#include "sdp_peer.h"

static struct sockaddr_in dst;

/* ---- a seeded generator ------------------------------------------------ */

static uint64_t rng;

static void rng_seed(uint64_t seed)
{
	rng = seed * 0x9E3779B97F4A7C15ull + 0x1234567;
}

static uint32_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (rng * 0x2545F4914F6CDD1Dull) >> 32;
}

static uint32_t below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(int percent)
{
	return below(100) < (uint32_t)percent;
}

/* A length at one of the edges that matter, or anywhere. */
static uint32_t edge_len(void)
{
	static const uint32_t e[] = {
		0, 1, 2, 15, 16, 17, 4095, 4096, 4097, 65535, 65536, 65537,
		1 << 20, (1 << 20) + 1, (64 << 20) - 1, 64 << 20,
		(64 << 20) + 1, 0x7fffffff, 0x80000000, 0xffffffff,
	};

	return chance(70) ? e[below(sizeof(e) / sizeof(e[0]))] : rnd();
}

/* ---- the SDP side: an echo target --------------------------------------- */

static void *target_conn(void *arg)
{
	static const size_t sizes[] = { 1, 100, 4096, 65536, 262144, 1 << 20 };
	int fd = (long)arg, ut = 5000, i = 0;
	struct timeval tv = { 5, 0 };
	unsigned char *buf = malloc(1 << 20);
	ssize_t r, w, off;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
	for (;;) {
		r = recv(fd, buf, sizes[(fd + i++) % 6], 0);
		if (r <= 0)
			break;
		for (off = 0; off < r; off += w) {
			w = send(fd, buf + off, r - off, MSG_NOSIGNAL);
			if (w <= 0)
				goto out;
		}
	}
out:
	close(fd);
	free(buf);
	return NULL;
}

static int run_target(void)
{
	int l = socket(AF_INET_SDP, SOCK_STREAM, 0), one = 1;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* one-sided RDMA's room: the region messages are parsed */
	setsockopt(l, SOL_SDP, SDP_REGIONS, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&dst, sizeof(dst)) ||
	    listen(l, 64)) {
		perror("target: listen");
		return 2;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		long fd = accept(l, NULL, NULL);
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("target: accept");
			return 1;
		}
		if (pthread_create(&t, NULL, target_conn, (void *)fd))
			close(fd);
		else
			pthread_detach(t);
	}
}

/* ---- a correct client ----------------------------------------------------- */

static int run_check(void)
{
	enum { N = 1 << 20 };
	int fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	unsigned char *out = malloc(N), *in = malloc(N);
	struct timeval tv = { 20, 0 };
	size_t sent = 0, got = 0, i;

	for (i = 0; i < N; i++)
		out[i] = (i * 131 + 7) >> 3;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		printf("connect: %s\n", errname(errno));
		return 1;
	}
	/* in pieces the echo can keep up with: both sides read and write */
	while (got < N) {
		ssize_t r;

		if (sent < N && sent - got < 256 << 10) {
			size_t n = N - sent < 65536 ? N - sent : 65536;

			r = send(fd, out + sent, n, MSG_NOSIGNAL);
			if (r <= 0) {
				printf("send: %s\n", errname(errno));
				return 1;
			}
			sent += r;
			continue;
		}
		r = recv(fd, in + got, N - got, 0);
		if (r <= 0) {
			printf("recv after %zu: %s\n", got, r ? errname(errno) : "eof");
			return 1;
		}
		got += r;
	}
	for (i = 0; i < N; i++)
		if (in[i] != out[i]) {
			printf("byte %zu differs\n", i);
			return 1;
		}
	printf("ok\n");
	close(fd);
	return 0;
}

/* ---- the fuzzing peer ------------------------------------------------------ */

struct fz {
	struct peer p;
	int msgs;		/* sent on this connection */
	int dead;		/* the connection is gone */
	struct avail src[4];	/* SrcAvails seen (their keys go stale) */
	int nsrc;
	struct avail sink;	/* the last SinkAvail seen */
	int have_sink;
	int paused;		/* not reposting for now */
	/* the echo, checked while the connection is still well behaved */
	int checking;
	uint32_t salt;		/* of this connection's byte pattern */
	uint64_t tx_off;	/* stream bytes sent */
	uint64_t rx_off;	/* echoed bytes checked */
	uint32_t src_out;	/* bytes of our SrcAvail not read yet */
	uint32_t sink_out;	/* our SinkAvail's bytes, while offered */
	int sink_cancelled;	/* its SinkAvailCancel sent, not answered */
	uint32_t data_mseq;	/* our last data-bearing message */
	unsigned int conn;
	uint64_t seed;
};

static int total_msgs;
static int echo_failures;

/* The byte at stream offset @off of a connection's pattern. */
static uint8_t pat(uint64_t off, uint32_t salt)
{
	return (off * 131 + salt) >> 3;
}

static void pat_fill(uint8_t *p, uint32_t n, uint64_t off, uint32_t salt)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = pat(off + i, salt);
}

/* Echoed bytes must be the stream we sent, in order. */
static void echo_check(struct fz *f, const uint8_t *p, uint32_t n)
{
	uint32_t i;

	if (!f->checking)
		return;
	for (i = 0; i < n; i++)
		if (p[i] != pat(f->rx_off + i, f->salt)) {
			printf("conn %u seed %llu: the echo differs at byte %llu\n",
			       f->conn, (unsigned long long)f->seed,
			       (unsigned long long)(f->rx_off + i));
			echo_failures++;
			f->checking = 0;
			return;
		}
	f->rx_off += n;
}

static struct peer_hdr mutate_hdr(struct fz *f)
{
	struct peer_hdr h = PEER_HDR_OK;

	if (!chance(25))
		return h;
	switch (below(6)) {
	case 0:
		h.mseq = f->p.mseq + 1 + (int)below(5) - 2;
		break;
	case 1:
		h.mseq_ack = chance(50) ? f->p.mseq_in - below(3) :
					  f->p.mseq_in + 1 + below(1000);
		break;
	case 2:
		h.bufs = chance(50) ? 0 : below(0x10000);
		break;
	case 3:
		h.len = edge_len();
		break;
	case 4:
		h.bytes = below(PEER_BUFSZ);
		break;
	default:
		h.mseq = rnd();
		h.mseq_ack = rnd();
		break;
	}
	return h;
}

static void fz_send(struct fz *f, uint8_t mid, uint8_t flags, const void *pl,
		    uint32_t n, struct peer_hdr h)
{
	if (f->dead)
		return;
	if (peer_send(&f->p, mid, flags, pl, n, h))
		f->dead = 1;
	f->msgs++;
	total_msgs++;
}

static void put32(unsigned char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

/* A RegionAdv, mostly well formed: a slot, access, token, length and
 * keys of our own MR (ib_sdp never uses them unless a program asks).
 */
static uint32_t fz_region_adv(struct fz *f, unsigned char *pl)
{
	uint32_t seg = 4096 << below(10), first = below(seg), nkeys, i;
	uint64_t len = chance(80) ? below(f->p.memsz) + 1 : ((uint64_t)rnd() << 32 | rnd());
	unsigned char *k = pl + 40;

	nkeys = (first + len + seg - 1) / seg;
	if (chance(10) || nkeys > 64)
		nkeys = below(70);
	if (chance(10))
		seg = edge_len();
	put32(pl, chance(80) ? below(16) : rnd());		/* id */
	put32(pl + 4, chance(80) ? 1 + below(3) : rnd());	/* access */
	put64(pl + 8, chance(90) ? ((uint64_t)rnd() << 32 | rnd()) : 0);
	put64(pl + 16, len);
	put32(pl + 24, first);
	put32(pl + 28, seg);
	pl[32] = nkeys >> 8;
	pl[33] = nkeys;
	memset(pl + 34, 0, 6);
	for (i = 0; i < nkeys && 40 + (i + 1) * 16 <= PEER_BUFSZ - 16; i++) {
		put64(k + i * 16, (uintptr_t)f->p.mem + below(f->p.memsz));
		put32(k + i * 16 + 8, chance(80) ? f->p.memmr->rkey : rnd());
		put32(k + i * 16 + 12, 0);
	}
	return 40 + i * 16;
}

/* One message of the peer's own, mostly well formed. */
static void fz_message(struct fz *f)
{
	static const uint8_t mids[] = {
		MID_HELLO, MID_HELLO_ACK, MID_DISCONN, MID_ABORT, MID_SENDSM,
		MID_RDMA_WR_COMPL, MID_RDMA_RD_COMPL, MID_MODE_CHANGE,
		MID_SRC_CANCEL, MID_SINK_CANCEL, MID_SINK_CANCEL_ACK,
		MID_CH_RCV_BUF, MID_CH_RCV_BUF_ACK, MID_SINK_AVAIL,
		MID_SRC_AVAIL, MID_DATA, MID_REGION_ADV, MID_REGION_REVOKE,
		MID_REGION_REVOKE_ACK, 0x10, 0x40, 0x80, 0xfc,
	};
	unsigned char pl[PEER_BUFSZ];
	struct peer_hdr h = mutate_hdr(f);
	uint8_t mid, flags = 0;
	uint32_t n = 0, i;
	struct avail a;

	if (chance(50)) {	/* data, as a program would send */
		n = below(chance(80) ? 512 : PEER_BUFSZ - 16);
		for (i = 0; i < n; i++)
			pl[i] = rnd();
		if (chance(3))
			flags = chance(50) ? 0x01 : below(256);
		fz_send(f, MID_DATA, flags, pl, n, h);
		return;
	}
	mid = mids[below(sizeof(mids) / sizeof(mids[0]))];
	if (chance(5))
		mid = rnd();
	if (chance(5))
		flags = rnd();
	switch (mid) {
	case MID_SRC_AVAIL:
	case MID_SINK_AVAIL:
		a.len = chance(60) ? below(1 << 20) + 1 : edge_len();
		a.rkey = chance(60) ? f->p.memmr->rkey : rnd();
		a.addr = chance(60) ? (uintptr_t)f->p.mem +
				      below(f->p.memsz / 2) : ((uint64_t)rnd() << 32 | rnd());
		a.len = htonl(a.len);
		a.rkey = htonl(a.rkey);
		a.addr = htobe64(a.addr);
		memcpy(pl, &a, sizeof(a));
		n = sizeof(a);
		break;
	case MID_RDMA_WR_COMPL:
	case MID_RDMA_RD_COMPL:
	case MID_CH_RCV_BUF:
	case MID_CH_RCV_BUF_ACK:
		i = htonl(chance(50) ? below(1 << 20) : edge_len());
		memcpy(pl, &i, 4);
		n = 4;
		break;
	case MID_REGION_REVOKE:
	case MID_REGION_REVOKE_ACK:
		i = htonl(chance(70) ? below(20) : rnd());	/* a slot */
		memcpy(pl, &i, 4);
		n = 4;
		break;
	case MID_REGION_ADV:
		n = fz_region_adv(f, pl);
		break;
	default:
		break;
	}
	if (chance(10))		/* a payload where none belongs, or less */
		n = below(64);
	fz_send(f, mid, flags, pl, n, h);
}

/* Use a key we were given: right, stale, guessed, out of bounds. */
static void fz_rdma(struct fz *f, const struct avail *a, int write)
{
	uint32_t len = a->len, rkey = a->rkey, off = 0;
	uint64_t addr = a->addr;
	int st;

	if (f->dead)
		return;
	if (chance(20))
		rkey = (rkey & ~0xffu) | ((rkey + 1 + below(3)) & 0xff);
	if (chance(10))
		addr += len;			/* just past it */
	if (chance(10))
		len += 1 + below(4096);		/* beyond it */
	if (len > (4 << 20))
		len = 4 << 20;
	if (!len)
		len = 1;
	st = peer_rdma(&f->p, write, addr, rkey, len, off, 5000);
	if (st)
		f->dead = 1;	/* refused: our QP is in error now */
}

/* The peer's memory: READs of the target's SrcAvails land in its first
 * quarter, the target writes into our SinkAvails in the second, our own
 * SrcAvails and WRITEs come from the second half.
 */
static uint8_t *fz_out(struct fz *f)
{
	return f->p.mem + f->p.memsz / 2;
}

static uint8_t *fz_sink(struct fz *f)
{
	return f->p.mem + f->p.memsz / 4;
}

/* Data came another way: our SinkAvail, if any, is withdrawn. */
static void fz_sink_withdraw(struct fz *f)
{
	if (!f->sink_out || f->sink_cancelled)
		return;
	fz_send(f, MID_SINK_CANCEL, 0, NULL, 0, PEER_HDR_OK);
	f->sink_cancelled = 1;
}

/* A well-behaved answer: read a SrcAvail whole and check it, write the
 * next bytes into a SinkAvail that is not stale, answer a cancel.
 */
static void fz_handle_valid(struct fz *f, const struct peer_msg *m)
{
	uint32_t be, n;

	switch (m->h.mid) {
	case MID_DATA:
		if (m->bytes > sizeof(struct bsdh)) {
			fz_sink_withdraw(f);
			echo_check(f, m->data + sizeof(struct bsdh),
				   m->bytes - sizeof(struct bsdh));
		}
		break;
	case MID_RDMA_WR_COMPL:	/* the target wrote into our SinkAvail */
		if (!f->sink_out || m->size > f->sink_out) {
			printf("conn %u seed %llu: a RdmaWrCompl of %u for %u offered\n",
			       f->conn, (unsigned long long)f->seed, m->size,
			       f->sink_out);
			echo_failures++;
			f->checking = 0;
			break;
		}
		echo_check(f, fz_sink(f), m->size);
		if (!f->sink_cancelled)
			f->sink_out = 0;
		break;
	case MID_SINK_CANCEL_ACK:
		f->sink_out = 0;
		f->sink_cancelled = 0;
		break;
	case MID_SRC_AVAIL:
		fz_sink_withdraw(f);
		if (m->av.len > f->p.memsz / 4 ||
		    peer_rdma(&f->p, 0, m->av.addr, m->av.rkey, m->av.len, 0,
			      10000)) {
			f->dead = 1;
			break;
		}
		echo_check(f, f->p.mem, m->av.len);
		be = htonl(m->av.len);
		fz_send(f, MID_RDMA_RD_COMPL, 0, &be, 4, PEER_HDR_OK);
		break;
	case MID_RDMA_RD_COMPL:
		f->src_out -= m->size < f->src_out ? m->size : f->src_out;
		break;
	case MID_SINK_AVAIL:
		/* stale if it does not cover what we sent since */
		if ((int32_t)(m->h.mseq_ack - f->data_mseq) < 0 || f->src_out)
			break;
		n = 1 + below(m->av.len < (1 << 20) ? m->av.len : 1 << 20);
		pat_fill(fz_out(f), n, f->tx_off, f->salt);
		if (peer_rdma(&f->p, 1, m->av.addr, m->av.rkey, n,
			      f->p.memsz / 2, 10000)) {
			f->dead = 1;
			break;
		}
		be = htonl(n);
		fz_send(f, MID_RDMA_WR_COMPL, 0, &be, 4, PEER_HDR_OK);
		f->tx_off += n;
		f->data_mseq = f->p.mseq;
		break;
	case MID_SINK_CANCEL:
		fz_send(f, MID_SINK_CANCEL_ACK, 0, NULL, 0, PEER_HDR_OK);
		break;
	case MID_ABORT:
		f->dead = 1;
		break;
	default:
		break;
	}
}

/* Answer what the target sent: mostly as a peer should. */
static void fz_handle(struct fz *f, const struct peer_msg *m)
{
	if (f->checking) {
		fz_handle_valid(f, m);
		return;
	}
	uint32_t sz;

	switch (m->h.mid) {
	case MID_SRC_AVAIL:
		if (f->nsrc < 4)
			f->src[f->nsrc++] = m->av;
		if (chance(70)) {
			fz_rdma(f, &m->av, 0);
			sz = chance(85) ? m->av.len : edge_len();
			if (!f->dead) {
				uint32_t be = htonl(sz);

				fz_send(f, MID_RDMA_RD_COMPL, 0, &be, 4,
					mutate_hdr(f));
			}
		} else if (chance(20)) {
			fz_send(f, MID_SENDSM, 0, NULL, 0, PEER_HDR_OK);
		}
		break;
	case MID_SINK_AVAIL:
		f->sink = m->av;
		f->have_sink = 1;
		if (chance(60)) {
			uint32_t n = chance(80) ? below(m->av.len) + 1 : edge_len();
			struct avail a = m->av;
			uint32_t be;

			if (n < a.len)
				a.len = n;
			fz_rdma(f, &a, 1);
			be = htonl(n);
			fz_send(f, MID_RDMA_WR_COMPL, 0, &be, 4, mutate_hdr(f));
		}
		break;
	case MID_SINK_CANCEL:
		if (chance(80))
			fz_send(f, MID_SINK_CANCEL_ACK, 0, NULL, 0, mutate_hdr(f));
		break;
	case MID_ABORT:
		f->dead = 1;
		break;
	default:
		break;
	}
}

/* Receive what is there (a little while), answering some of it. */
static void fz_drain(struct fz *f, int ms)
{
	struct peer_msg m;
	int r;

	while (!f->dead && (r = peer_recv(&f->p, &m, ms)) == 0) {
		fz_handle(f, &m);
		peer_done(&f->p, &m);
		ms = 0;
	}
	if (f->p.broken)
		f->dead = 1;
}

/* A stream of valid Data, within the credits: the echo sends it back in
 * pieces of every size (SrcAvails, SinkAvail offers come with them).
 */
static void fz_stream(struct fz *f)
{
	unsigned char pl[PEER_BUFSZ - 16];
	int k, n = 1 + below(32);
	uint32_t len = chance(50) ? sizeof(pl) : 1 + below(sizeof(pl));

	for (k = 0; k < n && !f->dead; k++) {
		if (peer_credits(&f->p) < 2)
			fz_drain(f, 5);
		if (peer_credits(&f->p) < 2)
			break;
		pat_fill(pl, len, f->tx_off, f->salt);
		fz_send(f, MID_DATA, 0, pl, len, PEER_HDR_OK);
		f->tx_off += len;
		f->data_mseq = f->p.mseq;
	}
}

/* What a correct, if slow or odd, peer may do. */
static void fz_valid_action(struct fz *f)
{
	int a = below(100);

	if (a < 40) {
		fz_stream(f);
	} else if (a < 70) {
		fz_drain(f, below(30));
	} else if (a < 76) {
		/* the next bytes from our memory, as a source: one at a time */
		uint32_t n = 1 + below(1 << 20);

		if (peer_credits(&f->p) > 1 && !f->src_out) {
			pat_fill(fz_out(f), n, f->tx_off, f->salt);
			if (peer_send_avail(&f->p, MID_SRC_AVAIL, n,
					    f->p.memmr->rkey,
					    (uintptr_t)fz_out(f)))
				f->dead = 1;
			f->tx_off += n;
			f->src_out = n;
			f->data_mseq = f->p.mseq;
			f->msgs++;
			total_msgs++;
		}
	} else if (a < 79) {
		/* offer a buffer for the echo to be written into */
		uint32_t n = 1 + below(f->p.memsz / 4);

		if (!f->sink_out) {
			fz_send(f, MID_SINK_AVAIL, 0,
				&(struct avail){ htonl(n), htonl(f->p.memmr->rkey),
						 htobe64((uintptr_t)fz_sink(f)) },
				sizeof(struct avail), PEER_HDR_OK);
			f->sink_out = n;
		}
	} else if (a < 84) {
		f->paused = !f->paused;		/* stop reposting, or resume */
		f->p.o.no_repost = f->paused;
		if (!f->paused)
			peer_repost_all(&f->p);
	} else if (a < 88) {
		fz_send(f, MID_DATA, 0, NULL, 0, PEER_HDR_OK);	/* credits */
	} else {
		usleep(below(3000));
	}
}

/* What breaks the protocol, one way or another. */
static void fz_bad_action(struct fz *f)
{
	int a = below(100);

	if (a < 70)
		fz_message(f);
	else if (a < 80 && f->nsrc)
		fz_rdma(f, &f->src[below(f->nsrc)], chance(30));	/* stale */
	else if (a < 85 && f->have_sink)
		fz_rdma(f, &f->sink, 1);
	else if (a < 93)
		fz_send(f, chance(50) ? MID_DISCONN : MID_ABORT, 0, NULL, 0,
			PEER_HDR_OK);
	else
		f->dead = 1;			/* gone without a word */
}

/* A connection: a stretch of valid traffic, its echo checked, then a few
 * bad actions.
 */
static void fz_conn(struct fz *f, int valid, int bad)
{
	f->checking = 1;
	f->salt = rnd();
	while (!f->dead && valid-- > 0)
		fz_valid_action(f);
	f->checking = 0;
	while (!f->dead && bad-- > 0) {
		fz_bad_action(f);
		fz_drain(f, 20);
	}
	if (f->paused)
		peer_repost_all(&f->p);
	fz_drain(f, 10);
}

static struct peer_opts fz_opts(void)
{
	struct peer_opts o;

	peer_opts_default(&o);
	o.bufs = 4 + below(60);
	o.memsz = 8 << 20;
	if (chance(10))
		o.post = 1 + below(4);	/* fewer than announced: RNR */
	if (chance(5))
		o.no_rtu = 1;		/* stall before the RTU */
	if (chance(5))
		o.version = chance(50) ? 0x11 : rnd() & 0xff;
	if (chance(3))
		o.pdata_len = below(sizeof(struct hello));
	if (chance(3))
		o.rcv_size = edge_len();
	if (chance(3))
		o.caps = rnd();
	else if (chance(50))	/* the region messages count then */
		o.caps = (o.caps ? o.caps : 3) | CAP_REGIONS;
	return o;
}

static int run_peer(uint64_t seed, int budget)
{
	int conn = 0, dead_on_arrival = 0;

	while (total_msgs < budget) {
		uint64_t cseed = seed * 100003 + conn;
		struct peer_opts o;
		struct fz f = { 0 };
		int r;

		rng_seed(cseed);
		o = fz_opts();
		r = peer_connect(&f.p, &dst, &o);
		printf("conn %d seed %llu: ", conn, (unsigned long long)cseed);
		if (r || o.no_rtu) {
			printf("%s\n", r == 1 ? "rejected" : o.no_rtu ?
			       "no RTU" : "no connection");
			dead_on_arrival += !o.no_rtu && r != 1;
			if (o.no_rtu)
				usleep(200000);
			peer_close(&f.p);
			total_msgs++;	/* the Hello */
			if (dead_on_arrival > 20) {
				printf("the target is not answering\n");
				return 1;
			}
			conn++;
			continue;
		}
		f.conn = conn;
		f.seed = cseed;
		fz_conn(&f, below(120), 1 + below(3));
		printf("%d messages, %llu bytes echoed%s\n", f.msgs,
		       (unsigned long long)f.rx_off,
		       f.dead ? ", then the end" : "");
		peer_close(&f.p);
		conn++;
	}
	printf("sent %d messages in %d connections, %d echoes differed\n",
	       total_msgs, conn, echo_failures);
	return echo_failures ? 1 : 0;
}

/* ---- the fuzzer as a server --------------------------------------------- */

static void client_child(int conns)
{
	static unsigned char buf[1 << 20];
	int i, ok = 0;

	for (i = 0; i < conns; i++) {
		int fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
		struct timeval tv = { 3, 0 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
			ok++;
			send(fd, buf, (i % 3) ? 100 : sizeof(buf), MSG_NOSIGNAL);
			recv(fd, buf, (i % 2) ? 100 : sizeof(buf), 0);
		}
		close(fd);
	}
	printf("client: %d of %d connected\n", ok, conns);
	fflush(stdout);
	_exit(0);
}

static int run_server(uint64_t seed, int conns)
{
	struct peer l;
	pid_t pid;
	int i;

	if (peer_listen(&l, &dst)) {
		perror("listen");
		return 2;
	}
	pid = fork();
	if (!pid)
		client_child(conns);
	for (i = 0; i < conns; i++) {
		struct fz f = { 0 };
		struct peer_opts o;
		struct hello hello;

		f.p = l;	/* the listener's channel */
		f.p.id = NULL;
		f.p.lid = NULL;
		if (peer_get_request(&f.p, &hello, 15000))
			break;
		rng_seed(seed * 100003 + i);
		o = fz_opts();
		o.no_rtu = 0;
		if (chance(20))
			o.mid = chance(50) ? MID_HELLO : rnd() & 0xff;
		if (chance(20))
			o.bufs = chance(50) ? 0x10000 : 0x10000 + 2000;
		peer_take_hello(&f.p, &hello);
		printf("conn %d seed %llu: ", i,
		       (unsigned long long)(seed * 100003 + i));
		if (peer_accept(&f.p, &o, 0)) {
			printf("not accepted\n");
		} else {
			fz_conn(&f, below(40), below(3));
			printf("%d messages\n", f.msgs);
		}
		f.p.ec = NULL;
		peer_close(&f.p);
	}
	waitpid(pid, NULL, 0);
	peer_close(&l);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4 || peer_resolve(argv[2], atoi(argv[3]), &dst)) {
		fprintf(stderr, "usage: see the comment at the top of %s\n",
			__FILE__);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[1], "target"))
		return run_target();
	if (!strcmp(argv[1], "check"))
		return run_check();
	if (!strcmp(argv[1], "peer") && argc == 6)
		return run_peer(strtoull(argv[4], NULL, 0), atoi(argv[5]));
	if (!strcmp(argv[1], "server") && argc == 6)
		return run_server(strtoull(argv[4], NULL, 0), atoi(argv[5]));
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
