// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile SDP peer (sdp_peer.c: librdmacm and raw verbs): it breaks the
 * protocol in one chosen way, so that a test can check that ib_sdp refuses
 * or aborts that connection (and only that one), counts it, and that the
 * host neither crashes nor hangs nor holds memory it should not.
 *
 * Usage: sdp_evil ADDR PORT CASE [ARG]
 *
 * Against a listener the test runs on ADDR PORT (sdp_stream sink):
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
 *   region-revoke  a RegionRevoke for no region           -> disconnected
 *   region-ack     a RegionRevokeAck nobody asked for     -> disconnected
 *   region-keys    a RegionAdv with 2 keys for 1 MiB in 1 MiB MRs, 1 sent
 *                                                         -> disconnected
 *   region-token   a RegionAdv with token 0               -> disconnected
 *   region-dup     a good RegionAdv, then one of the same token in
 *                  another slot                           -> disconnected
 *   (the region cases with CAP_REGIONS in the Hello)
 *
 * Against "sdp_region hold" on ADDR PORT (a 1 MiB write-only region):
 *   region-forge   WRITE 4 KiB at the region's start (the control), then
 *                  past its end: prints "control: write ok" and "past
 *                  the end: refused"
 *   valid          a correct 5-byte Data message, then a clean disconnect
 *   embryos N SECS N requests that never send the RTU, held SECS seconds;
 *                  prints "holding" once all were sent
 *   hold SECS      a correct connection, held SECS seconds (prints
 *                  "established"), then a disconnect
 * Prints what happened: "rejected", "disconnected" or "established".
 *
 * ZCopy keys, against "sdp_zc holdsend" (or holdrecv) on ADDR PORT, over
 * two connections to the same host: a key must work on the connection it
 * was advertised on and nowhere else, and only while its transfer lasts.
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
 * refused" (or "guessed key: refused") when that key does not work.  The
 * address of every SrcAvail and SinkAvail is printed too.
 *
 * Cases that bring their own SDP application (forked, on ADDR PORT); each
 * prints "# ok"/"# FAIL" lines and exits non-zero on a failure:
 *   sink-unsent    our SinkAvail could not be sent yet (the peer stopped
 *                  reposting, its SinkAvailCancels used up our control
 *                  buffers) when a RdmaWrCompl claims to have written
 *                  into it: a protocol error, never bytes nobody wrote
 *   sink-late-data our SinkAvail waits for a credit when data comes, and
 *                  the credit with it: the offer must be dropped, never
 *                  sent behind that data (the source would write into
 *                  it the bytes that follow the data)
 *   rdcompl-unsent a RdmaRdCompl for a SrcAvail still queued for credits
 *   sink-abort     the SinkAvail's key is dead by the time our Abort
 *                  arrives
 *   src-badkey     a SrcAvail whose key does not work: the reader gets
 *                  ECONNRESET (a protocol error)
 *   src-revoked    the same behind a SrcAvailCancel: ECONNRESET, the
 *                  source's reset after its cancel (no protocol error)
 *   hurry          8 SrcAvails of 32 MiB and a SrcAvailCancel to a socket
 *                  that never reads: prints the bytes read ahead
 *   stall-send     the peer stops reposting: a sender with
 *                  TCP_USER_TIMEOUT 2 s fails with ETIMEDOUT in time
 *   stall-rnr      the peer announced more buffers than it posted: the
 *                  transport retries for ever (RNR); TCP_USER_TIMEOUT ends
 *                  it with ETIMEDOUT
 *   sink-silent    our SinkAvail taken, then silence: the reader's
 *                  SO_RCVTIMEO cancels it, and the unanswered cancel ends
 *                  the connection with ETIMEDOUT in about 5 s
 *   stall-read     a reader's RDMA READ stuck behind a send the peer will
 *                  not take: prints "stuck PID" and waits for the test
 *                  to kill PID (kill -9 must end it)
 *   stall-write    the same for a writer's RDMA WRITE into a SinkAvail
 *   server-early   as a server: answer 200 connects (60 with
 *                  SDP_QUICK=1) from an SDP client and send Data at
 *                  once, before the client can have taken the HelloAck:
 *                  every connect must succeed
 *   helloack       as a server: bad HelloAcks (version, short, no
 *                  buffers, wrong id) make the client's connect fail
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
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
static const char *addr_s;
static int port;

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---- the application side (an AF_INET_SDP program) ------------------ */

static int app_listener(int backlog)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM, 0), one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
	    listen(fd, backlog)) {
		perror("app: listen");
		exit(2);
	}
	return fd;
}

/* A forked application: @fn(arg, pipe to the parent, pipe from it). */
struct app {
	pid_t pid;
	int to, from;	/* the parent's ends */
};

static void app_start(struct app *a, void (*fn)(int tx, int rx))
{
	int up[2], down[2];

	if (pipe(up) || pipe(down))
		exit(2);
	a->pid = fork();
	if (!a->pid) {
		close(up[0]);
		close(down[1]);
		fn(up[1], down[0]);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	a->from = up[0];
	a->to = down[1];
}

static void say(int fd, long v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		_exit(3);
}

/* A value from the other side, or -1000000 after @ms. */
static long hear(int fd, int ms)
{
	long long end = ms_now() + ms;
	long v;

	while (ms_now() < end) {
		struct timeval tv = { 0, 50000 };
		fd_set s;

		FD_ZERO(&s);
		FD_SET(fd, &s);
		if (select(fd + 1, &s, NULL, NULL, &tv) > 0)
			return read(fd, &v, sizeof(v)) == sizeof(v) ? v : -1000000;
	}
	return -1000000;
}

static void app_stop(struct app *a)
{
	int st;

	kill(a->pid, SIGKILL);
	waitpid(a->pid, &st, 0);
}

static int accepted(int backlog)
{
	int l = app_listener(backlog), s = accept(l, NULL, NULL);

	close(l);
	return s;
}

/* ---- message-level cases against the test's listener ------------------ */

/* The region cases' message: a RegionRevoke of no region, a
 * RegionRevokeAck nobody asked for, a RegionAdv whose key count does not
 * match its length, one of a 0 token.
 */
static uint32_t region_msg(const char *c, uint8_t *mid, unsigned char *pl)
{
	memset(pl, 0, 64);
	if (!strcmp(c, "region-revoke") || !strcmp(c, "region-ack")) {
		*mid = !strcmp(c, "region-ack") ? MID_REGION_REVOKE_ACK :
						  MID_REGION_REVOKE;
		pl[3] = 3;			/* slot 3 */
		return 4;
	}
	*mid = MID_REGION_ADV;
	pl[7] = 3;				/* READ | WRITE */
	pl[15] = !strcmp(c, "region-token") ? 0 : 7;	/* token */
	pl[21] = 0x10;				/* len 1 MiB */
	pl[29] = 0x10;				/* seg_len 1 MiB */
	pl[33] = !strcmp(c, "region-keys") ? 2 : 1;	/* 1 belongs */
	return 40 + 16;				/* one key */
}

static int msg_case(const char *c)
{
	struct peer_opts o;
	struct peer p;
	struct peer_hdr h = PEER_HDR_OK;
	uint8_t mid = MID_DATA, flags = 0;
	unsigned char pl[64] = "hello";
	uint32_t plen = 5;
	int r;

	peer_opts_default(&o);
	o.bufs = 8;
	if (!strncmp(c, "region-", 7))
		o.caps = 3 | CAP_REGIONS;
	if (!strcmp(c, "hello-version"))
		o.version = 0x20;
	if (!strcmp(c, "hello-bufs"))
		o.bufs = 0x10000;	/* 0 on the wire */
	if (!strcmp(c, "hello-short"))
		o.pdata_len = 8;
	r = peer_connect(&p, &dst, &o);
	if (r == 1) {
		printf("rejected\n");
		return 0;
	}
	if (r) {
		printf("no answer\n");
		return 1;
	}

	if (!strcmp(c, "seq"))
		h.mseq = 5;
	if (!strcmp(c, "len"))
		h.bytes = sizeof(struct bsdh) + 3;	/* the header says 21 */
	if (!strcmp(c, "mid"))
		mid = MID_MODE_CHANGE;
	if (!strcmp(c, "ack"))
		h.mseq_ack = 100;
	if (!strcmp(c, "bufs"))
		h.bufs = o.bufs + 1;
	if (!strcmp(c, "flags"))
		flags = 0x80;
	if (!strcmp(c, "urg-empty") || !strcmp(c, "urg-ctrl")) {
		flags = 0x01;	/* OOB_PRES */
		plen = 0;
		if (!strcmp(c, "urg-ctrl"))
			mid = MID_DISCONN;
	}
	if (!strcmp(c, "short"))
		h.bytes = 7;
	if (!strncmp(c, "region-", 7))
		plen = region_msg(c, &mid, pl);
	if (peer_send(&p, mid, flags, pl, plen, h)) {
		perror("send");
		return 2;
	}
	/* region-dup: a good RegionAdv, then another of the same token */
	if (!strcmp(c, "region-dup")) {
		pl[3] = 4;	/* slot 4 */
		if (peer_send(&p, mid, flags, pl, plen, PEER_HDR_OK)) {
			perror("send");
			return 2;
		}
	}
	peer_poll(&p);
	if (!strcmp(c, "valid")) {
		usleep(100000);
		printf("established\n");
		peer_close(&p);
		return 0;
	}
	do
		r = peer_event(&p, 15000);
	while (r >= 0 && r != RDMA_CM_EVENT_DISCONNECTED);
	printf(r < 0 ? "still connected\n" : "disconnected\n");
	return r < 0;
}

/* N requests that never send the RTU, each with its own event channel,
 * whose events are never read (librdmacm sends the RTU when it handles
 * the REP's event).
 */
static int embryos_case(int n, int secs)
{
	struct peer *p = calloc(n, sizeof(*p));
	struct peer_opts o;
	int i, sent = 0;

	peer_opts_default(&o);
	o.no_rtu = 1;
	o.memsz = 4096;
	for (i = 0; i < n; i++)
		sent += !peer_connect(&p[i], &dst, &o);
	printf("holding %d\n", sent);
	fflush(stdout);
	/* not a look at the events: librdmacm would answer the REP with
	 * the RTU as it hands out CONNECT_RESPONSE
	 */
	sleep(secs);
	return sent == n ? 0 : 1;
}

static int hold_case(int secs)
{
	struct peer_opts o;
	struct peer p;
	int ev = -1;
	long long end = ms_now() + secs * 1000LL;

	peer_opts_default(&o);
	if (peer_connect(&p, &dst, &o)) {
		printf("no answer\n");
		return 1;
	}
	printf("established\n");
	while (ms_now() < end && ev != RDMA_CM_EVENT_DISCONNECTED &&
	       ev != RDMA_CM_EVENT_DEVICE_REMOVAL)
		ev = peer_event(&p, 200);
	printf(ev >= 0 ? "ended: %s\n" : "held\n", rdma_event_str(ev));
	return 0;
}

/* ---- ZCopy keys, against sdp_zc holdsend / holdrecv ------------------- */

static int zc_connect(struct peer *p)
{
	struct peer_opts o;

	peer_opts_default(&o);
	o.bufs = 8;
	return peer_connect(p, &dst, &o);
}

/* The next message with @mid, giving back the others. */
static int recv_mid(struct peer *p, struct peer_msg *m, uint8_t mid, int ms)
{
	long long end = ms_now() + ms;

	while (ms_now() < end) {
		if (peer_recv(p, m, end - ms_now()))
			return -1;
		if (m->h.mid == mid)
			return 0;
		peer_done(p, m);
	}
	return -1;
}

static int zc_sink_case(struct peer *e1, struct peer *e2)
{
	struct peer_msg m;
	struct avail av;
	int st;

	if (recv_mid(e1, &m, MID_SINK_AVAIL, 30000)) {
		printf("no SinkAvail\n");
		return 1;
	}
	av = m.av;
	peer_done(e1, &m);
	printf("SinkAvail: %u bytes at 0x%llx\n", av.len,
	       (unsigned long long)av.addr);
	st = peer_rdma(e2, 1, av.addr, av.rkey, 4096, 0, 10000);
	printf("other connection: %s\n", st ? "refused" : "write ok");
	st = peer_rdma(e1, 1, av.addr, av.rkey, 4096, 0, 10000);
	printf("control: %s\n", st ? "refused" : "write ok");
	if (st || peer_send_size(e1, MID_RDMA_WR_COMPL, 4096))
		return 1;
	if (recv_mid(e1, &m, MID_DATA, 30000)) {
		printf("no \"done\" from the reader\n");
		return 1;
	}
	st = peer_rdma(e1, 1, av.addr, av.rkey, 4096, 0, 10000);
	printf("old key: %s\n", st ? "refused" : "still works");
	return st ? 0 : 1;
}

/* region-forge, against "sdp_region hold": take the RegionAdv (the
 * region is write-only), WRITE 4 KiB at its start (the control), then
 * WRITE past its end: the device must refuse it.
 */
static int region_forge_case(void)
{
	struct peer_opts o;
	struct peer p;
	struct peer_msg m;
	uint64_t addr, len;
	uint32_t rkey, first;
	int st;

	peer_opts_default(&o);
	o.bufs = 8;
	o.caps = 3 | CAP_REGIONS;
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		return 2;
	}
	if (recv_mid(&p, &m, MID_REGION_ADV, 30000) || m.bytes < 16 + 56) {
		printf("no RegionAdv\n");
		return 1;
	}
	memcpy(&len, m.data + 16 + 16, 8);
	memcpy(&first, m.data + 16 + 24, 4);
	memcpy(&addr, m.data + 16 + 40, 8);
	memcpy(&rkey, m.data + 16 + 48, 4);
	len = be64toh(len);
	addr = be64toh(addr);
	rkey = ntohl(rkey);
	first = ntohl(first);
	peer_done(&p, &m);
	printf("RegionAdv: %llu bytes, first key at 0x%llx\n",
	       (unsigned long long)len, (unsigned long long)addr);
	st = peer_rdma(&p, 1, addr, rkey, 4096, 0, 10000);
	printf("control: %s\n", st ? "refused" : "write ok");
	if (st)
		return 1;
	/* the first MR maps first + its bytes: one page past the region */
	st = peer_rdma(&p, 1, addr + len, rkey, 4096, 0, 10000);
	printf("past the end: %s\n", st ? "refused" : "write ok");
	return st ? 0 : 1;
}

static int zc_case(const char *c)
{
	struct peer e1, e2;
	struct peer_msg m;
	struct avail av;
	int st;

	if (zc_connect(&e1) || zc_connect(&e2)) {
		perror("connect");
		return 2;
	}
	if (!strcmp(c, "zc-sink-stale"))
		return zc_sink_case(&e1, &e2);
	if (recv_mid(&e1, &m, MID_SRC_AVAIL, 30000)) {
		printf("no SrcAvail\n");
		return 1;
	}
	av = m.av;
	peer_done(&e1, &m);
	printf("SrcAvail: %u bytes at 0x%llx\n", av.len,
	       (unsigned long long)av.addr);

	st = peer_rdma(&e1, 0, av.addr, av.rkey, 4096, 0, 10000);
	printf("control: %s\n", st ? "refused" : "read ok");
	if (st)
		return 1;

	if (!strcmp(c, "zc-guess")) {
		st = peer_rdma(&e1, 0, av.addr,
			       (av.rkey & ~0xffu) | ((av.rkey + 1) & 0xff),
			       4096, 0, 10000);
		printf("guessed key: %s\n", st ? "refused" : "read ok");
		return st ? 0 : 1;
	}
	if (!strcmp(c, "zc-stale")) {
		st = peer_rdma(&e1, 0, av.addr, av.rkey, av.len, 0, 10000);
		if (st || peer_send_size(&e1, MID_RDMA_RD_COMPL, av.len)) {
			printf("could not read the SrcAvail\n");
			return 1;
		}
		if (recv_mid(&e1, &m, MID_DATA, 30000)) {
			printf("no \"done\" from the sender\n");
			return 1;
		}
		st = peer_rdma(&e1, 0, av.addr, av.rkey, 4096, 0, 10000);
		printf("old key: %s\n", st ? "refused" : "still works");
		return st ? 0 : 1;
	}

	/* zc-hold: the live key on the other connection */
	st = peer_rdma(&e2, 0, av.addr, av.rkey, 4096, 0, 10000);
	printf("other connection: %s\n", st ? "refused" : "read ok");
	printf("holding\n");
	fflush(stdout);
	do
		st = peer_event(&e1, 30000);
	while (st >= 0 && st != RDMA_CM_EVENT_DISCONNECTED);
	printf(st < 0 ? "not reset\n" : "reset\n");
	return st < 0;
}

/* ---- cases with their own application ------------------------------------ */

/* The application's end of sink-unsent and sink-late-data: one recv() of
 * 256 KiB once told; it reports what it got, then the first byte.
 */
static void app_recv_told(int tx, int rx)
{
	int s = accepted(4);
	char *buf = malloc(256 << 10);
	struct timeval tv = { 20, 0 };
	ssize_t r;

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	hear(rx, 30000);
	r = recv(s, buf, 256 << 10, 0);
	say(tx, r < 0 ? -errno : r);
	say(tx, r > 0 ? buf[0] : -1);
	hear(rx, 30000);
}

static int sink_unsent_case(void)
{
	struct peer_opts o;
	struct peer p;
	struct app a;
	long r;
	int i, ev;

	app_start(&a, app_recv_told);
	usleep(300000);
	peer_opts_default(&o);
	o.bufs = 16;
	o.post = -1;		/* not one receive posted: every send of */
	o.no_repost = 1;	/* theirs waits (RNR) until we post */
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		return 2;
	}
	/* four SinkCancelAcks take their four control buffers */
	for (i = 0; i < 4; i++) {
		peer_send_avail(&p, MID_SINK_AVAIL, 4096, p.memmr->rkey,
				(uintptr_t)p.mem);
		peer_send(&p, MID_SINK_CANCEL, 0, NULL, 0, PEER_HDR_OK);
	}
	usleep(500000);
	say(a.to, 1);		/* recv(): its SinkAvail cannot go out */
	usleep(1000000);
	peer_send_size(&p, MID_RDMA_WR_COMPL, 1);	/* we wrote nothing */
	usleep(300000);
	peer_repost_all(&p);	/* the queued control messages go out */
	r = hear(a.from, 15000);
	CHECK(r == -ECONNRESET,
	      "recv() under a RdmaWrCompl for a SinkAvail never sent: %s",
	      r < 0 ? errname(-r) : "bytes the peer never wrote");
	do
		ev = peer_event(&p, 5000);
	while (ev >= 0 && ev != RDMA_CM_EVENT_DISCONNECTED);
	CHECK(ev == RDMA_CM_EVENT_DISCONNECTED, "the connection was aborted");
	app_stop(&a);
	peer_close(&p);
	return check_exit();
}

/* A SinkAvail or SinkCancel from us, acknowledging only up to @ack: the
 * application's credits do not come back.
 */
static int send_ack(struct peer *p, uint8_t mid, int64_t ack)
{
	struct avail a = { htonl(4096), htonl(p->memmr->rkey),
			   htobe64((uintptr_t)p->mem) };
	struct peer_hdr h = PEER_HDR_OK;

	h.mseq_ack = ack;
	return mid == MID_SINK_AVAIL ?
		peer_send(p, mid, 0, &a, sizeof(a), h) :
		peer_send(p, mid, 0, NULL, 0, h);
}

static int sink_late_data_case(void)
{
	struct peer_opts o;
	struct peer_msg m;
	struct peer p;
	struct app a;
	int64_t ack;
	int i, late;
	long r, c;

	app_start(&a, app_recv_told);
	usleep(300000);
	peer_opts_default(&o);
	o.bufs = 4;		/* the fewest credits, never given back, */
	o.post = 64;		/* though every message finds a buffer */
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		app_stop(&a);
		return 2;
	}
	ack = p.mseq_in;
	/* SinkCancelAcks use up its control messages beyond the credit */
	for (i = 0; i < 20; i++) {
		send_ack(&p, MID_SINK_AVAIL, ack);
		send_ack(&p, MID_SINK_CANCEL, ack);
		if (recv_mid(&p, &m, MID_SINK_CANCEL_ACK, 1000))
			break;
		peer_done(&p, &m);
	}
	CHECK(i > 0 && i < 20,
	      "the application is out of credits after %d SinkCancelAcks", i);
	say(a.to, 1);		/* recv(): its SinkAvail must wait */
	CHECK(recv_mid(&p, &m, MID_SINK_AVAIL, 1000),
	      "the reader's SinkAvail waits for a credit");
	/* data, and with it the credits: the offer is stale now */
	peer_send(&p, MID_DATA, 0, "hello", 5, PEER_HDR_OK);
	late = !recv_mid(&p, &m, MID_SINK_AVAIL, 2000);
	CHECK(!late, "no SinkAvail goes after the data came (%s)",
	      late ? "one did: a write into it would land ahead of the data" :
		     "none");
	r = hear(a.from, 15000);
	c = hear(a.from, 1000);
	CHECK(r == 5 && c == 'h', "recv() returns the 5 bytes sent (%ld, '%c')",
	      r, c > 0 ? (char)c : '?');
	app_stop(&a);
	peer_close(&p);
	return check_exit();
}

static void app_rdcompl_unsent(int tx, int rx)
{
	int s = accepted(4), one = 1, i;
	char *buf = calloc(1, 256 << 10);
	struct timeval tv = { 15, 0 };
	ssize_t r;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (i = 0; i < 4; i++)		/* the peer's four credits */
		send(s, "data", 4, 0);
	r = send(s, buf, 256 << 10, MSG_NOSIGNAL);	/* a SrcAvail, queued */
	say(tx, r < 0 ? -errno : r);
	hear(rx, 30000);
}

static int rdcompl_unsent_case(void)
{
	struct peer_opts o;
	struct peer_msg m;
	struct peer p;
	struct peer_hdr h = PEER_HDR_OK;
	struct app a;
	int i, ev, n = 0;

	app_start(&a, app_rdcompl_unsent);
	usleep(300000);
	peer_opts_default(&o);
	o.bufs = 4;		/* four credits, then the SrcAvail must wait */
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		return 2;
	}
	for (i = 0; i < 4 && !peer_recv(&p, &m, 10000); i++, n++)
		peer_done(&p, &m);
	CHECK(n == 4, "four Data messages took the four credits (%d)", n);
	usleep(500000);
	/* "read" a SrcAvail we were never sent, granting no credit */
	h.bufs = 0;
	peer_send(&p, MID_RDMA_RD_COMPL, 0, &(uint32_t){ htonl(256 << 10) },
		  4, h);
	do
		ev = peer_event(&p, 5000);
	while (ev >= 0 && ev != RDMA_CM_EVENT_DISCONNECTED);
	CHECK(ev == RDMA_CM_EVENT_DISCONNECTED,
	      "a RdmaRdCompl for a SrcAvail not sent aborts the connection");
	app_stop(&a);
	peer_close(&p);
	return check_exit();
}

static void app_recv_once(int tx, int rx)
{
	int s = accepted(4);
	char *buf = malloc(256 << 10);
	ssize_t r = recv(s, buf, 256 << 10, 0);

	say(tx, r < 0 ? -errno : r);
	hear(rx, 30000);
}

static int sink_abort_case(void)
{
	struct peer_opts o;
	struct avail av;
	struct peer_msg m;
	struct peer p;
	struct peer_hdr h = PEER_HDR_OK;
	struct app a;
	int st;

	app_start(&a, app_recv_once);
	usleep(300000);
	peer_opts_default(&o);
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		return 2;
	}
	if (recv_mid(&p, &m, MID_SINK_AVAIL, 10000)) {
		CHECK(0, "a SinkAvail offered");
		return check_exit();
	}
	av = m.av;
	peer_done(&p, &m);
	h.mseq = 77;		/* out of sequence: they abort */
	peer_send(&p, MID_DATA, 0, "x", 1, h);
	st = recv_mid(&p, &m, MID_ABORT, 10000);
	CHECK(!st, "an Abort for the bad message");
	st = peer_rdma(&p, 1, av.addr, av.rkey, 4096, 0, 10000);
	CHECK(st != 0, "once the Abort is here the SinkAvail's key is dead (%s)",
	      st ? "refused" : "write ok");
	app_stop(&a);
	peer_close(&p);
	return check_exit();
}

/* A SrcAvail whose key does not work (its last byte changed, as a key
 * already invalidated), alone or behind a SrcAvailCancel: the READ of the
 * module reading ahead is refused and the reader gets ECONNRESET.  Alone it
 * is a key we should not have been given, a protocol error; behind the
 * cancel it is what a source does that gave up waiting for its cancel to be
 * settled (killed, or SDP_ZC_CANCEL_TIMEOUT passed): it revokes the key,
 * then sends an Abort that may never arrive, a reset (the test counts).
 */
static int src_revoked_case(int cancel)
{
	struct peer_opts o;
	struct peer p;
	struct app a;
	uint32_t rkey;
	long r;

	app_start(&a, app_recv_told);
	usleep(300000);
	peer_opts_default(&o);
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		return 2;
	}
	rkey = p.memmr->rkey;
	rkey = (rkey & ~0xffu) | ((rkey + 1) & 0xff);
	peer_send_avail(&p, MID_SRC_AVAIL, 256 << 10, rkey, (uintptr_t)p.mem);
	if (cancel)
		peer_send(&p, MID_SRC_CANCEL, 0, NULL, 0, PEER_HDR_OK);
	usleep(500000);
	say(a.to, 1);
	r = hear(a.from, 30000);
	CHECK(r == -ECONNRESET, "%s: the reader gets ECONNRESET (%s)",
	      cancel ? "revoked after a cancel" : "a bad key",
	      r < 0 ? errname(-r) : "data");
	app_stop(&a);
	peer_close(&p);
	return check_exit();
}

static void app_never_read(int tx, int rx)
{
	int s = accepted(4);

	(void)tx;
	hear(rx, 60000);
	close(s);
}

static int hurry_case(void)
{
	struct peer_opts o;
	struct peer p;
	struct app a;
	int i;

	app_start(&a, app_never_read);
	usleep(300000);
	peer_opts_default(&o);
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		return 2;
	}
	for (i = 0; i < 8; i++)
		peer_send_avail(&p, MID_SRC_AVAIL, 32 << 20, p.memmr->rkey,
				(uintptr_t)p.mem + (i % 2) * (32 << 20));
	peer_send(&p, MID_SRC_CANCEL, 0, NULL, 0, PEER_HDR_OK);
	printf("sent 8 SrcAvails of 32 MiB and a SrcAvailCancel\n");
	fflush(stdout);
	/* the test looks at the host meanwhile (SDP_TIME_SCALE: a slower
	 * kernel reads ahead more slowly)
	 */
	sleep(8 * (getenv("SDP_TIME_SCALE") ? atoi(getenv("SDP_TIME_SCALE")) : 1));
	peer_close(&p);
	say(a.to, 1);
	app_stop(&a);
	return 0;
}

/* A sender that stops only on an error; reports it and the time taken
 * once it first had to wait.
 */
static void app_stall_send(int tx, int rx)
{
	int s = accepted(4), one = 1, ut = 2000;
	char buf[16384] = { 0 };
	long long start = ms_now();

	(void)rx;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
	while (send(s, buf, sizeof(buf), MSG_NOSIGNAL) > 0)
		;
	say(tx, errno);
	say(tx, ms_now() - start);
	hear(rx, 30000);
}

static int stall_send_case(int rnr)
{
	struct peer_opts o;
	struct peer p;
	struct app a;
	long err, ms;

	app_start(&a, app_stall_send);
	usleep(300000);
	peer_opts_default(&o);
	o.bufs = rnr ? 64 : 16;	/* rnr: 64 announced, ... */
	o.post = rnr ? 4 : 16;	/* ... 4 posted */
	o.no_repost = 1;
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		return 2;
	}
	err = hear(a.from, 40000);
	ms = hear(a.from, 1000);
	CHECK(err == ETIMEDOUT, "%s: the sender fails with %s",
	      rnr ? "transport retrying for ever" : "no credits",
	      err < 0 ? "nothing (still blocked)" : errname(err));
	CHECK(ms > 1500 && ms < 10000,
	      "after about TCP_USER_TIMEOUT (2 s): %ld ms", ms);
	app_stop(&a);
	peer_close(&p);
	return check_exit();
}

/* The application's end of sink-silent: one recv() of 256 KiB with
 * SO_RCVTIMEO 1 s, and, if it timed out, one more: the errors (as
 * -errno) and the milliseconds from the start to the last.
 */
static void app_sink_silent(int tx, int rx)
{
	int s = accepted(4);
	char *buf = malloc(256 << 10);
	struct timeval tv = { 1, 0 };
	long long start;
	ssize_t r;

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	start = ms_now();
	r = recv(s, buf, 256 << 10, 0);
	say(tx, r < 0 ? -errno : r);
	if (r < 0 && errno == EAGAIN)
		r = recv(s, buf, 256 << 10, 0);
	say(tx, r < 0 ? -errno : r);
	say(tx, ms_now() - start);
	hear(rx, 30000);
}

/* A peer that takes the reader's SinkAvail and then falls silent: the
 * reader's SO_RCVTIMEO cancels the offer, and a cancel nobody answers
 * must end the connection within SDP_ZC_CANCEL_TIMEOUT (5 s) with
 * ETIMEDOUT, as TCP ends one with a silent peer; before, ECONNRESET.
 */
static int sink_silent_case(void)
{
	struct peer_opts o;
	struct peer_msg m;
	struct peer p;
	struct app a;
	long first, last, ms;
	long long t0;
	int ev;

	app_start(&a, app_sink_silent);
	usleep(300000);
	peer_opts_default(&o);
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		app_stop(&a);
		return 2;
	}
	CHECK(!recv_mid(&p, &m, MID_SINK_AVAIL, 10000), "a SinkAvail offered");
	peer_done(&p, &m);
	CHECK(!recv_mid(&p, &m, MID_SINK_CANCEL, 10000),
	      "SO_RCVTIMEO cancels it");
	peer_done(&p, &m);
	t0 = ms_now();
	/* no SinkCancelAck, no RdmaWrCompl, nothing */
	do
		ev = peer_event(&p, 15000);
	while (ev >= 0 && ev != RDMA_CM_EVENT_DISCONNECTED);
	CHECK(ev == RDMA_CM_EVENT_DISCONNECTED,
	      "the connection ends %lld ms after the unanswered cancel",
	      ms_now() - t0);
	first = hear(a.from, 15000);
	last = hear(a.from, 1000);
	ms = hear(a.from, 1000);
	CHECK((first == -EAGAIN || first == -ETIMEDOUT) && last == -ETIMEDOUT,
	      "the reader gets ETIMEDOUT (%s, then %s)",
	      first < 0 ? errname(-first) : "data",
	      last < 0 ? errname(-last) : "data");
	CHECK(ms >= 1000 + 4500 && ms < 1000 + 10000,
	      "after SO_RCVTIMEO and the cancel's 5 s: %ld ms", ms);
	app_stop(&a);
	peer_close(&p);
	return check_exit();
}

/* A reader whose second SrcAvail's READ waits behind a send the peer
 * never takes.  It reads only once told the SrcAvail is there: a reader
 * waiting on an empty queue would offer a SinkAvail instead.
 */
static void app_reader(int tx, int rx)
{
	int s = accepted(4);
	char *buf = malloc(1 << 20);

	for (;;) {
		ssize_t r;

		hear(rx, 30000);
		r = recv(s, buf, 1 << 20, MSG_WAITALL);
		say(tx, r < 0 ? -errno : r);
		if (r <= 0)
			break;
	}
	pause();
}

/* A writer whose RDMA WRITEs into the peer's SinkAvail wait behind a
 * Data message the peer never takes.
 */
static void app_writer(int tx, int rx)
{
	int s = accepted(4), one = 1;
	char *buf = calloc(1, 1 << 20);
	ssize_t r;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	send(s, "first", 5, 0);
	say(tx, 0);
	hear(rx, 30000);	/* once the SinkAvail is there */
	r = send(s, buf, 1 << 20, MSG_NOSIGNAL);
	say(tx, r);
	pause();
}

static int stall_rw_case(int write)
{
	struct peer_opts o;
	struct peer_hdr h = PEER_HDR_OK;
	struct peer p;
	struct app a;
	long r;

	app_start(&a, write ? app_writer : app_reader);
	usleep(300000);
	peer_opts_default(&o);
	o.bufs = 16;
	o.post = -1;		/* nothing of theirs gets through */
	o.no_repost = 1;
	if (peer_connect(&p, &dst, &o)) {
		perror("connect");
		return 2;
	}
	if (write) {
		/* their first Data waits (RNR); our SinkAvail says we have
		 * it, so that they write, behind it
		 */
		hear(a.from, 10000);
		h.mseq_ack = 1;
		peer_send(&p, MID_SINK_AVAIL, 0,
			  &(struct avail){ htonl(1 << 20), htonl(p.memmr->rkey),
					   htobe64((uintptr_t)p.mem) },
			  sizeof(struct avail), h);
		usleep(300000);
		say(a.to, 1);
	} else {
		/* the first SrcAvail is read; its RdmaRdCompl then waits for
		 * a receive we never post, and the second's READ behind it
		 */
		peer_send_avail(&p, MID_SRC_AVAIL, 1 << 20, p.memmr->rkey,
				(uintptr_t)p.mem);
		usleep(300000);
		say(a.to, 1);
		r = hear(a.from, 15000);
		CHECK(r == 1 << 20, "the first SrcAvail was read (%s)",
		      r == 1 << 20 ? "1 MiB" : r < 0 ? errname(-r) : "short");
		peer_send_avail(&p, MID_SRC_AVAIL, 1 << 20, p.memmr->rkey,
				(uintptr_t)p.mem);
		usleep(300000);
		say(a.to, 1);
	}
	usleep(1000000);
	r = hear(a.from, 500);
	CHECK(r == -1000000, "the %s is stuck in the RDMA op", write ? "writer" : "reader");
	printf("stuck %d\n", a.pid);
	fflush(stdout);
	/* the test kills the application; we wait for it to go */
	waitpid(a.pid, NULL, 0);
	peer_close(&p);
	return check_exit();
}

/* ---- as a server, to an SDP client -------------------------------------- */

/* Connections early-data tries: 200, 60 with SDP_QUICK=1 (make check):
 * each pause of the twenty still lands three times.
 */
static int early_conns(void)
{
	const char *q = getenv("SDP_QUICK");

	return q && !strcmp(q, "1") ? 60 : 200;
}

static void client_loop(int tx, int rx)
{
	int i, n = early_conns(), fails = 0, last = 0;

	(void)rx;
	for (i = 0; i < n; i++) {
		int fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
		char b[8];

		if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
		    recv(fd, b, 5, MSG_WAITALL) != 5 ||
		    send(fd, "k", 1, MSG_NOSIGNAL) != 1) {
			fails++;
			last = errno;
		}
		close(fd);
	}
	say(tx, fails);
	say(tx, last);
}

static int server_early_case(void)
{
	struct peer_opts o;
	struct peer_msg m;
	struct hello hello;
	struct peer p;
	struct app a;
	int i, n = early_conns(), served = 0;
	long fails, last;

	if (peer_listen(&p, &dst)) {
		perror("listen");
		return 2;
	}
	app_start(&a, client_loop);
	peer_opts_default(&o);
	o.memsz = 4096;		/* no RDMA here: a small area registers fast */
	for (i = 0; i < n; i++) {
		struct peer c = p;	/* the listener's channel and id */

		c.id = NULL;
		c.lid = NULL;
		if (peer_get_request(&c, &hello, 10000))
			break;
		peer_take_hello(&c, &hello);
		if (peer_accept(&c, &o, 0))
			break;
		/* at once, and after a growing pause: one of them lands
		 * between the client's QP going ready and its handler
		 * taking the HelloAck
		 */
		if (i % 20)
			usleep((i % 20) * 50);
		peer_send(&c, MID_DATA, 0, "hello", 5, PEER_HDR_OK);
		/* until the client says it has them (or gives up) */
		while (!peer_recv(&c, &m, 10000)) {
			peer_done(&c, &m);
			if (m.h.mid != MID_DATA || m.h.len > sizeof(m.h))
				break;
		}
		served++;
		c.ec = NULL;	/* shared with the listener */
		peer_close(&c);
	}
	fails = hear(a.from, 60000);
	last = hear(a.from, 1000);
	CHECK(served == n, "%d connections answered (%d)", n, served);
	CHECK(fails == 0,
	      "every connect() succeeded and read the first bytes (%ld failed, last: %s)",
	      fails, errname(last));
	app_stop(&a);
	peer_close(&p);
	return check_exit();
}

static void client_once(int tx, int rx)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	int r = connect(fd, (struct sockaddr *)&dst, sizeof(dst));

	(void)rx;
	say(tx, r ? errno : 0);
}

static int helloack_case(void)
{
	static const char * const what[] = {
		"another major version", "cut to 8 bytes", "no buffers",
		"a Hello's id",
	};
	struct hello hello;
	struct peer p;
	int i;

	if (peer_listen(&p, &dst)) {
		perror("listen");
		return 2;
	}
	for (i = 0; i < 4; i++) {
		struct peer_opts o;
		struct peer c = p;
		struct app a;
		long err;

		c.id = NULL;
		c.lid = NULL;
		app_start(&a, client_once);
		peer_opts_default(&o);
		if (i == 0)
			o.version = 0x20;
		if (i == 1)
			o.pdata_len = 8;
		if (i == 2)
			o.bufs = 0x10000;
		if (i == 3)
			o.mid = MID_HELLO;
		if (peer_get_request(&c, &hello, 10000) || peer_accept(&c, &o, 0)) {
			CHECK(0, "request %d answered", i);
			continue;
		}
		err = hear(a.from, 15000);
		CHECK(err && err != -1000000, "a HelloAck of %s: connect() fails (%s)",
		      what[i], err == -1000000 ? "no answer" : errname(err));
		app_stop(&a);
		c.ec = NULL;
		peer_close(&c);
	}
	peer_close(&p);
	return check_exit();
}

int main(int argc, char **argv)
{
	const char *c;

	if (argc < 4) {
		fprintf(stderr, "usage: sdp_evil ADDR PORT CASE [ARG...]\n");
		return 2;
	}
	addr_s = argv[1];
	port = atoi(argv[2]);
	c = argv[3];
	if (peer_resolve(addr_s, port, &dst))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);

	if (!strncmp(c, "zc-", 3))
		return zc_case(c);
	if (!strcmp(c, "region-forge"))
		return region_forge_case();
	if (!strcmp(c, "embryos") && argc == 6)
		return embryos_case(atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(c, "hold") && argc == 5)
		return hold_case(atoi(argv[4]));
	if (!strcmp(c, "sink-unsent"))
		return sink_unsent_case();
	if (!strcmp(c, "rdcompl-unsent"))
		return rdcompl_unsent_case();
	if (!strcmp(c, "sink-late-data"))
		return sink_late_data_case();
	if (!strcmp(c, "sink-abort"))
		return sink_abort_case();
	if (!strcmp(c, "src-badkey"))
		return src_revoked_case(0);
	if (!strcmp(c, "src-revoked"))
		return src_revoked_case(1);
	if (!strcmp(c, "hurry"))
		return hurry_case();
	if (!strcmp(c, "stall-send"))
		return stall_send_case(0);
	if (!strcmp(c, "stall-rnr"))
		return stall_send_case(1);
	if (!strcmp(c, "sink-silent"))
		return sink_silent_case();
	if (!strcmp(c, "stall-read"))
		return stall_rw_case(0);
	if (!strcmp(c, "stall-write"))
		return stall_rw_case(1);
	if (!strcmp(c, "server-early"))
		return server_early_case();
	if (!strcmp(c, "helloack"))
		return helloack_case();
	return msg_case(c);
}
