// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: sendfile() and splice() to a socket, by reference.
 *
 * sendfile() and splice() hand a socket a pipe's pages in
 * sendmsg(MSG_SPLICE_PAGES) with a bvec iterator (sdp_sendmsg_pages()),
 * MSG_MORE while more of the same sendfile() follows once the pipe is
 * filled again (before 6.5, proto_ops->sendpage() one page at a time,
 * MSG_SENDPAGE_NOTLAST while more pages of the same pipe followed:
 * sdp_compat.c makes that a bvec of one page).  A run of pages is
 * gathered into one registration (state SDP_ZC_REG_BUILDING, zc->pend):
 * each page is referenced (get_page()), not copied, as TCP references
 * them in its skbs.  The run ends with the last page of a call without
 * MSG_MORE, with a page that ends short of its end (the MR's page list
 * allows no gap), or when the registration is full (1 MiB).  A run held
 * for MSG_MORE is also
 * pushed by splice_eof (the input ended early), by TCP_CORK's or
 * TCP_NODELAY's push, and at the latest by the cork timer, as TCP's
 * corked data.  It is then
 * mapped, registered and advertised in a SrcAvail, and from there on it
 * is any SrcAvail (sdp_zc_send.c): its pages are released once the peer
 * has read them, or when the connection is torn down.  sendfile() does
 * not wait for that: the peer reads the file's pages as they are then,
 * the by-reference semantics of TCP's sendfile().
 *
 * The room for the SrcAvail (a registration, a send buffer, the peer's
 * limit) is taken when a run starts, so gathered bytes, which the caller
 * already counts as sent, can always be advertised.  Whatever else queues
 * data - sendmsg(), and a DisConn after shutdown() or close() - first
 * advertises a run being gathered, keeping the stream in order.  A lone
 * page, a run that cannot start on a non-blocking socket for want of
 * room, a page that cannot be referenced (!sendpage_ok()), and every
 * socket that is not a connected RDMA one go the ordinary way: sendmsg()
 * copies them.
 *
 * The pages a socket holds are bounded by its SDP_ZC_REGS registrations
 * and by its send buffer (SO_SNDBUF if set, else net.ipv4.tcp_wmem[2], as
 * far as TCP's grows): a run starts only while the bytes advertised and
 * not yet read are below it.  A blocking sender waits for
 * room there, as a TCP sender waits for send buffer space, until
 * SO_SNDTIMEO.  ZcopyPageRefs in /proc/net/sdpstats counts the pages held
 * now.
 *
 * Everything runs under the socket lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "sdp.h"
#include "sdp_zcopy.h"

/**
 * sdp_zc_page_flush - advertise the run of pages being gathered, if any
 * @ssk: the socket, locked
 */
void sdp_zc_page_flush(struct sdp_sock *ssk)
{
	struct sdp_conn *conn = ssk->conn;
	struct sdp_zc *zc = conn ? conn->zc : NULL;
	struct sdp_zc_reg *reg;
	struct sdp_buf *buf;

	sdp_assert_locked(ssk);

	if (!zc || !zc->pend)
		return;
	reg = zc->pend;
	buf = zc->pend_buf;
	zc->pend = NULL;
	zc->pend_buf = NULL;
	sg_mark_end(&reg->sg[reg->npages - 1]);
	if (!sdp_conn_usable(ssk) ||
	    sdp_zc_reg_map(ssk, zc, reg, reg->len, IB_ACCESS_REMOTE_READ)) {
		/* bytes counted as sent already: no copying them now */
		list_add(&buf->list, &conn->tx_free);
		WRITE_ONCE(ssk->tx_nfree, ssk->tx_nfree + 1);
		sdp_zc_reg_finish(ssk, reg, false);
		if (sdp_conn_usable(ssk)) {
			net_warn_ratelimited("cannot register sendfile()'s pages, connection reset\n");
			sdp_conn_abort(ssk, ECONNRESET, false);
		}
		return;
	}
	list_add_tail(&buf->list, &conn->tx_queue);
	sdp_zc_src_queue(ssk, reg, buf);
	SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_TX_ZC_PAGE_BYTES, reg->len);
	sdp_win_wait(ssk);	/* on the peer to read it */
}

/* A connected RDMA socket whose peer takes SrcAvails, ZCopy not turned
 * off (SDP_ZCOPY_THRESH 0), and MRs to register with.
 */
static bool sdp_zc_page_want(struct sdp_sock *ssk, int flags)
{
	struct sock *sk = &ssk->sk;
	struct sdp_zc *zc;

	if (!((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)) ||
	    !sdp_conn_usable(ssk) ||
	    sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) ||
	    (flags & MSG_OOB) || !READ_ONCE(ssk->zcopy_thresh) ||
	    !(ssk->conn->peer_caps & SDP_CAP_SRC_AVAIL) ||
	    !ssk->conn->peer_adverts)
		return false;
	zc = sdp_zc_get(ssk);
	return zc && !sdp_zc_mrs(ssk->conn, zc);
}

/* Room for a run: a SrcAvail's, and the send budget not yet spent
 * (sdp_snd_budget(): SO_SNDBUF, else what TCP's send buffer may grow to).
 */
static bool sdp_zc_page_room(struct sdp_sock *ssk)
{
	return ssk->zc_src_bytes < sdp_snd_budget(ssk) && sdp_zc_src_room(ssk);
}

/* Start a run: take its registration and its SrcAvail's send buffer.
 * Another thread's run, gathered while we waited for room, goes first.
 * Return: the registration, or NULL without room.
 */
static struct sdp_zc_reg *sdp_zc_page_start(struct sdp_sock *ssk)
{
	struct sdp_zc *zc = ssk->conn->zc;
	struct sdp_zc_reg *reg;
	struct sdp_buf *buf;

	sdp_zc_page_flush(ssk);
	if (!sdp_zc_page_room(ssk))
		return NULL;
	buf = sdp_tx_buf_take(ssk);
	if (IS_ERR_OR_NULL(buf))
		return NULL;
	list_del_init(&buf->list);	/* not to be posted as it is */
	reg = sdp_zc_free_reg(zc);
	reg->sink = false;
	reg->kpages = true;
	reg->uarg = NULL;
	reg->mmp.user = NULL;
	reg->npages = 0;
	reg->len = 0;
	reg->done = 0;
	reg->state = SDP_ZC_REG_BUILDING;
	sg_init_table(reg->sg, zc->reg_pages);
	zc->pend = reg;
	zc->pend_buf = buf;
	ssk->zc_src_count++;
	return reg;
}

/* Does a page at @offset continue the run in the MR's page list? */
static bool sdp_zc_page_continues(struct sdp_zc *zc, struct sdp_zc_reg *reg,
				  int offset)
{
	struct scatterlist *last = &reg->sg[reg->npages - 1];

	return !offset && last->offset + last->length == PAGE_SIZE &&
	       reg->npages < zc->reg_pages;
}

/**
 * sdp_zc_page_add - the RDMA transport's ->send_page(): take a page into
 *	a run
 * @ssk: the socket, locked (a wait for room drops the lock)
 * @conn: its connection, which the caller holds
 * @page: the page, referenced by the caller while we are called
 * @offset: where the bytes start in it
 * @size: how many
 * @flags: sendmsg()'s flags
 * @notlast: more pages of this call follow at once
 *
 * Return: @size, 0 to copy it, or an errno.
 */
ssize_t sdp_zc_page_add(struct sdp_sock *ssk, struct sdp_conn *conn,
			struct page *page, size_t offset, size_t size,
			int flags, bool notlast)
{
	bool more = notlast || (flags & MSG_MORE);
	struct sock *sk = &ssk->sk;
	struct sdp_zc_reg *reg;
	struct sdp_zc *zc;
	long timeo;
	bool nb;
	int err;

	if (!size || offset + size > PAGE_SIZE || !sendpage_ok(page) ||
	    !sdp_zc_page_want(ssk, flags)) {
		sdp_zc_page_flush(ssk);
		return 0;
	}
	zc = ssk->conn->zc;
	reg = zc->pend;
	if (reg && !sdp_zc_page_continues(zc, reg, offset)) {
		sdp_zc_page_flush(ssk);
		reg = NULL;
	}
	if (!reg) {
		/* a lone page, or one no other can follow: copied */
		if (!more || offset + size != PAGE_SIZE)
			return 0;
		timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
		nb = !timeo;
		while (!(reg = sdp_zc_page_start(ssk))) {
			/* non-blocking: copied; blocking: SO_SNDTIMEO over */
			if (!timeo)
				return nb ? 0 : -EAGAIN;
			err = sdp_zc_wait_room(ssk, &timeo, sdp_zc_page_room);
			if (err)
				return err;
			/* another thread may have shut it down meanwhile, or
			 * replaced it, or it failed: the copy says so
			 */
			if (!sdp_conn_same(ssk, conn) ||
			    !sdp_zc_page_want(ssk, flags))
				return 0;
		}
	}
	get_page(page);
	SDP_INC_STATS(sock_net(sk), SDP_MIB_ZC_PAGE_REFS);
	reg->pages[reg->npages] = page;
	sg_set_page(&reg->sg[reg->npages], page, size, offset);
	reg->npages++;
	reg->len += size;
	ssk->zc_src_bytes += size;
	if (!more || offset + size != PAGE_SIZE ||
	    reg->npages == zc->reg_pages) {
		sdp_zc_page_flush(ssk);
		sdp_tx_flush(ssk);
	} else if (!notlast) {
		/* more of the file once the pipe is filled again, as a rule */
		sdp_cork_timer_arm(ssk);
	}
	return size;
}
