// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: which way a large blocking send goes, ZCopy (or, for an AZ-SDP
 * send, AZ) or BCopy, chosen by what each has cost on this connection.
 *
 * A blocking send by SrcAvail returns only once the peer has read it, so
 * back-to-back sends pay a round trip each, where BCopy keeps the send
 * ring full; which is faster depends on the device, the peer, the reader
 * and the size, so no fixed threshold is right everywhere.  Each
 * connection therefore measures each way per size class (powers of two,
 * from 16 KiB to 4 MiB and more): a run is a series of consecutive sends
 * of one class that went one way; a ZCopy run's first sends only drain
 * what BCopy left queued and are not counted (sdp_zca_skip_bytes()).
 * Then SDP_ZCA_WINDOW bytes moved, in at least one and at most
 * SDP_ZCA_WINDOW_MAX sends (BCopy, AZ: U8_MAX), give a sample: the bytes
 * moved per millisecond from the end of the first send to the end of the
 * last, the application's own time between sends included, as it is for
 * every way.  A ZCopy send's bytes have moved when it returns; a BCopy
 * send returns as soon as its bytes are queued, and the queue may hold
 * the whole send budget (sdp_window.c), so BCopy counts the bytes whose
 * sends have completed since, and AZ, whose sends return before the peer
 * has read them, the bytes the peer has reported read (sdp_zca_moved()).
 * Samples feed a moving average per class and way.
 *
 * An AZ send (sdp_az.c) chooses between AZ and BCopy, any other between
 * ZCopy and BCopy: "the fast way" below is AZ or ZCopy.  So AZ-SDP
 * applies to a size class only where it has been measured faster than
 * copying on this connection (libsdp's LIBSDP_ASYNC_MIN is the floor);
 * an AZ send that is copied returns its range at once (AzSyncCopied).
 *
 * A connection starts from what the device's earlier connections
 * measured last: each figure counts as the samples behind it, up to two
 * (enough to end the early probes below); a class without a figure
 * for the fast way tries it (the old rule); then the faster way
 * is taken, and after SDP_ZCA_PROBE runs of it (4 or 16 times as many
 * when the other way was more than 1/8 or 1/2 slower; SDP_ZCA_PROBE_EARLY
 * while a way has had a single sample, which may have been unlucky) one
 * run goes the other way, so that a change (a slower reader, a busy
 * fabric) is seen.  So a short connection on a device that has measured
 * pays for no early probes: in 2-3 s streams of 4 MiB they had sent a
 * fifth of the bytes by BCopy.
 *
 * Only blocking sends without MSG_ZEROCOPY are adapted (MSG_ZEROCOPY asks
 * for ZCopy; a non-blocking send never waits for the peer), and only on
 * sockets whose SDP_ZCOPY_THRESH was not set and while the module
 * parameter sdp_zcopy_adapt is on; the threshold stays the smallest size
 * ZCopy is considered for.  The choice is between SrcAvail and BCopy: a
 * SinkAvail the peer has posted takes a send that is not AZ's either way
 * (sdp_tx.c).  The state is in struct sdp_zc (allocated at the first
 * ZCopy send: before it, the fast way is tried) under the socket lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/uio.h>

#include "sdp.h"
#include "sdp_trace.h"
#include "sdp_zcopy.h"

/* a run's gap longer than this: its sample says nothing, restart it */
#define SDP_ZCA_STALE_NS	(1000ULL * NSEC_PER_MSEC)

static unsigned int sdp_zca_class(size_t size)
{
	unsigned int l = ilog2(max_t(size_t, size, 1));

	return clamp_t(unsigned int, l, SDP_ZCA_MIN_SHIFT,
		       SDP_ZCA_MIN_SHIFT + SDP_ZCA_CLASSES - 1) -
	       SDP_ZCA_MIN_SHIFT;
}

/* the tracepoint's words for a sample of each way */
static const char *const sdp_zca_rate_name[SDP_ZCA_WAYS] = {
	[SDP_ZCA_BCOPY] = "adapt-rate-bcopy",
	[SDP_ZCA_ZCOPY] = "adapt-rate-zcopy",
	[SDP_ZCA_AZ] = "adapt-rate-az",
};

/* Bytes that only drain the pipeline the other way left: a ZCopy run
 * starts behind what BCopy still holds to send.  BCopy and AZ runs need
 * none: they are measured by what the peer took (sdp_zca_moved()).
 */
static u32 sdp_zca_skip_bytes(const struct sdp_sock *ssk, u8 way)
{
	return way == SDP_ZCA_ZCOPY ?
	       ssk->tx_queued + ssk->tx_inflight_bytes : 0;
}

/* What the peer has taken so far, as BCopy and AZ runs count it: the
 * bytes of completed Data sends, or the bytes of SrcAvails it read.
 */
static u64 sdp_zca_acked(const struct sdp_conn *conn, u8 way)
{
	return way == SDP_ZCA_AZ ? conn->zc_read_total : conn->st.bytes_acked;
}

/* Bytes a run moved since it started counting: a ZCopy send's are read
 * by the peer when it returns; a BCopy send returns as soon as its bytes
 * are queued, and the send queue may hold the send budget's worth
 * (sdp_window.c), so BCopy counts the bytes whose sends completed; an AZ
 * send returns before the peer has read it, so AZ counts what it read.
 */
static u64 sdp_zca_moved(const struct sdp_conn *conn,
			 const struct sdp_zc_adapt *a)
{
	if (a->run_way == SDP_ZCA_ZCOPY)
		return a->run_bytes;
	return sdp_zca_acked(conn, a->run_way) - a->run_acked;
}

/**
 * sdp_zc_adapt_on - does this send's way follow the connection's figures?
 * @ssk: the socket, locked, on the RDMA transport
 *
 * Return: true if the adaptive choice applies to this send.
 */
bool sdp_zc_adapt_on(const struct sdp_sock *ssk)
{
	sdp_assert_locked(ssk);
	return READ_ONCE(sdp_zcopy_adapt) && !ssk->zc_thresh_set;
}

/* Is @fast the faster way for @cls (or BCopy)?  A way without a figure
 * first, @fast before BCopy.
 */
static bool sdp_zca_best(const struct sdp_zc_adapt *a, unsigned int cls,
			 u8 fast)
{
	if (!a->rate[fast][cls])
		return true;
	if (!a->rate[SDP_ZCA_BCOPY][cls])
		return false;
	return a->rate[fast][cls] >= a->rate[SDP_ZCA_BCOPY][cls];
}

/* Runs of the faster way between probes of the other: a probe costs
 * what the other way is slower, so the wider the gap, the rarer.
 */
static unsigned int sdp_zca_probe_every(const struct sdp_zc_adapt *a,
					unsigned int cls, u8 fast)
{
	u64 hi = max(a->rate[SDP_ZCA_BCOPY][cls], a->rate[fast][cls]);
	u64 lo = min(a->rate[SDP_ZCA_BCOPY][cls], a->rate[fast][cls]);

	/* one sample of a way may have been unlucky: a second one soon */
	if (a->samples[SDP_ZCA_BCOPY][cls] < 2 || a->samples[fast][cls] < 2)
		return SDP_ZCA_PROBE_EARLY;
	if (hi * 8 < lo * 9)
		return SDP_ZCA_PROBE;
	if (hi * 2 < lo * 3)
		return SDP_ZCA_PROBE * 4;
	return SDP_ZCA_PROBE * 16;
}

/* The device's figures, each as the samples behind it, up to two. */
static void sdp_zca_seed(struct sdp_conn *conn, struct sdp_zc_adapt *a)
{
	struct sdp_device *sdev = conn->sdev;
	int way, cls;
	u8 n;

	a->seeded = true;
	if (!sdev)
		return;
	for (way = 0; way < SDP_ZCA_WAYS; way++)
		for (cls = 0; cls < SDP_ZCA_CLASSES; cls++) {
			a->rate[way][cls] = READ_ONCE(sdev->zca_rate[way][cls]);
			n = READ_ONCE(sdev->zca_samples[way][cls]);
			if (!a->rate[way][cls])
				n = 0;
			a->samples[way][cls] = min_t(u8, n, 2);
		}
}

/**
 * sdp_zc_adapt_pick - the way for a blocking send of @size bytes
 * @ssk: the socket, locked, connected
 * @size: the send's bytes, at least the threshold
 * @fast: the way it may take other than BCopy: SDP_ZCA_ZCOPY, or
 *	SDP_ZCA_AZ for an AZ send
 *
 * Return: true for @fast, false for BCopy.
 */
bool sdp_zc_adapt_pick(struct sdp_sock *ssk, size_t size,
		       enum sdp_zca_way fast)
{
	struct sdp_zc *zc = ssk->conn->zc;
	struct sdp_zc_adapt *a;
	unsigned int cls = sdp_zca_class(size);
	bool cont;
	u8 way;

	sdp_assert_locked(ssk);

	if (!zc)
		return true;
	a = &zc->adapt;
	if (!a->seeded)
		sdp_zca_seed(ssk->conn, a);
	/* a run under way continues until its window is full */
	if (a->run_on && a->run_cls == cls && a->run_sends < a->run_window &&
	    (a->run_way == fast || a->run_way == SDP_ZCA_BCOPY))
		return a->run_way == fast;

	way = sdp_zca_best(a, cls, fast) ? fast : SDP_ZCA_BCOPY;
	if (a->rate[SDP_ZCA_BCOPY][cls] && a->rate[fast][cls] &&
	    ++a->runs_best >= sdp_zca_probe_every(a, cls, fast)) {
		a->runs_best = 0;
		way = way == fast ? SDP_ZCA_BCOPY : fast;
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ZC_ADAPT_PROBES);
	}
	cont = a->run_on && a->run_cls == cls && a->run_way == way;
	/* BCopy not known to be the faster: a try, or a probe */
	a->run_probe = way == SDP_ZCA_BCOPY &&
		       (!a->rate[SDP_ZCA_BCOPY][cls] ||
			sdp_zca_best(a, cls, fast));
	if (!a->run_on || a->run_way != way) {	/* a switch */
		static const char *const what[SDP_ZCA_WAYS] = {
			"adapt-bcopy", "adapt-zcopy", "adapt-az" };

		trace_sdp_zcopy(&ssk->sk, what[way], size);
	}
	a->run_on = true;
	a->run_cls = cls;
	a->run_way = way;
	a->run_sends = 0;
	a->run_bytes = 0;
	/* BCopy's and AZ's windows end by what was moved
	 * (sdp_zc_adapt_done()): completions come in bursts, a few sends
	 * would not smooth them
	 */
	a->run_window = way == SDP_ZCA_ZCOPY ?
			clamp_t(size_t, SDP_ZCA_WINDOW / size, 1,
				SDP_ZCA_WINDOW_MAX) : U8_MAX;
	/* the same way again: the pipeline is warm, count from now on */
	a->run_skip = cont ? 0 : sdp_zca_skip_bytes(ssk, way);
	if (!cont)
		a->run_start = 0;
	return way == fast;
}

static void sdp_zca_sample(struct sdp_sock *ssk, struct sdp_zc_adapt *a,
			   u64 bytes, u64 ns)
{
	struct sdp_device *sdev = ssk->conn->sdev;
	u32 *r = &a->rate[a->run_way][a->run_cls];
	u64 s = div64_u64(bytes * NSEC_PER_MSEC, max_t(u64, ns, 1));

	s = clamp_t(u64, s, 1, U32_MAX);
	/* half the weight to the new sample: probes are rare */
	*r = *r ? (u32)((*r + s) / 2) : (u32)s;
	if (sdev) {
		u32 *d = &sdev->zca_rate[a->run_way][a->run_cls];
		u8 *n = &sdev->zca_samples[a->run_way][a->run_cls];
		u32 old = READ_ONCE(*d);

		WRITE_ONCE(*d, old ? (u32)((3ULL * old + s) / 4) : (u32)s);
		if (READ_ONCE(*n) < U8_MAX)
			WRITE_ONCE(*n, READ_ONCE(*n) + 1);
	}
	if (a->samples[a->run_way][a->run_cls] < U8_MAX)
		a->samples[a->run_way][a->run_cls]++;
	trace_sdp_zcopy(&ssk->sk, sdp_zca_rate_name[a->run_way], s);
}

/**
 * sdp_zc_adapt_probing - does the send just chosen measure BCopy only?
 * @ssk: the socket, locked, after sdp_zc_adapt_pick() chose BCopy
 *
 * A BCopy run not yet known to be the faster way queues no more than the
 * send ring held before the send budget (tx_size messages, sdp_tx.c): a
 * deeper queue would only be more bytes sent the slower way before the
 * switch back, and such a send then waits as a ZCopy one would.
 *
 * Return: true if the send is one of a BCopy probe.
 */
bool sdp_zc_adapt_probing(const struct sdp_sock *ssk)
{
	const struct sdp_zc *zc = ssk->conn->zc;

	sdp_assert_locked(ssk);

	return zc && zc->adapt.run_on &&
	       zc->adapt.run_way == SDP_ZCA_BCOPY && zc->adapt.run_probe;
}

/**
 * sdp_zc_adapt_done - a send sdp_zc_adapt_pick() chose for has ended
 * @ssk: the socket, locked
 * @size: its bytes
 * @way: the way it went
 * @ok: all of it was taken, without an error
 */
void sdp_zc_adapt_done(struct sdp_sock *ssk, size_t size,
		       enum sdp_zca_way way, bool ok)
{
	struct sdp_zc *zc_state = ssk->conn->zc;
	struct sdp_zc_adapt *a;
	bool stale;
	u64 now, moved;

	sdp_assert_locked(ssk);

	if (!zc_state)
		return;
	a = &zc_state->adapt;
	if (!a->run_on)
		return;
	/* another way than chosen (a posted SinkAvail, no MR,
	 * RLIMIT_MEMLOCK) or a failure
	 */
	if (!ok || way != a->run_way || sdp_zca_class(size) != a->run_cls) {
		a->run_on = false;
		return;
	}
	now = ktime_get_ns();
	if (way == SDP_ZCA_BCOPY)
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ZC_ADAPT_COPIED);
	stale = now - a->run_last > SDP_ZCA_STALE_NS;
	a->run_last = now;
	if (a->run_skip || !a->run_start || stale) {
		/* filling the pipeline, or idle for long: count from here */
		a->run_skip -= min_t(u32, a->run_skip, size);
		a->run_sends = 0;
		a->run_bytes = 0;
		a->run_start = now;
		a->run_acked = sdp_zca_acked(ssk->conn, way);
		return;
	}
	a->run_bytes += size;
	moved = sdp_zca_moved(ssk->conn, a);
	if (++a->run_sends == a->run_window ||
	    (way != SDP_ZCA_ZCOPY && moved >= SDP_ZCA_WINDOW)) {
		sdp_zca_sample(ssk, a, moved, now - a->run_start);
		a->run_sends = a->run_window;	/* the run is over */
		a->run_start = now;
		a->run_acked = sdp_zca_acked(ssk->conn, way);
	}
}
