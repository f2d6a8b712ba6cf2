// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: one-sided RDMA through the socket, the socket core's half: the
 * calls (include/uapi/linux/sdp.h; Documentation/sdp.rst, "One-sided
 * RDMA"), their checks and errnos; the transport does the rest
 * (->region_reg, ->region_dereg, ->rdma_op; the RDMA transport's are in
 * sdp_rdma_region.c).
 *
 *   getsockopt(SOL_SDP, SDP_REGION_REG, struct sdp_region): a region of
 *	the caller's memory for the peer, its token filled in;
 *   setsockopt(SOL_SDP, SDP_REGION_DEREG, __u64 token): it ends;
 *   close(): every region of ours ends (sdp_region_close());
 *   sendmsg() with an SDP_RDMA control message: a WRITE of the iovec into
 *	a region of the peer's, or a READ from it into the iovec
 *	(sdp_sendmsg() calls sdp_region_send()).
 *
 * Locks: each call takes the socket lock, and holds the connection it
 * acts on (sdp_conn_get()) while the transport sleeps.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/socket.h>
#include <net/sock.h>

#include "sdp.h"

/* Connected (or the peer has closed its half), with a transport that can. */
static int sdp_region_conn(struct sdp_sock *ssk, const void *op)
{
	if (!((1 << ssk->sk.sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)))
		return -ENOTCONN;
	return op ? 0 : -EOPNOTSUPP;
}

/**
 * sdp_region_getsockopt - SDP_REGION_REG
 * @ssk: the socket, not locked
 * @optval: a struct sdp_region, in and out
 * @optlen: its size, in and out
 *
 * Return: 0 or a negative errno: EINVAL (a bad length, access or flag),
 * ENOTCONN, EOPNOTSUPP (the peer or the transport has no regions),
 * ENOBUFS (SDP_REGIONS_MAX regions, or past RLIMIT_MEMLOCK), EFAULT, or
 * what the transport says.
 */
int sdp_region_getsockopt(struct sdp_sock *ssk, char __user *optval,
			  int __user *optlen)
{
	struct sock *sk = &ssk->sk;
	struct sdp_region r;
	struct sdp_conn *conn;
	int len, err;

	if (get_user(len, optlen))
		return -EFAULT;
	if (len < (int)sizeof(r))
		return -EINVAL;
	if (copy_from_user(&r, optval, sizeof(r)))
		return -EFAULT;
	if (!r.len || r.len > SDP_REGION_MAX_LEN || r.flags || !r.access ||
	    (r.access & ~(SDP_REGION_READ | SDP_REGION_WRITE)) ||
	    r.addr + r.len < r.addr)
		return -EINVAL;

	lock_sock(sk);
	conn = sdp_conn_get(ssk);	/* kept while the transport sleeps */
	err = sdp_region_conn(ssk, conn->tp->region_reg);
	if (!err)
		err = conn->tp->region_reg(ssk, conn, &r);
	sdp_conn_put(conn);
	release_sock(sk);
	if (err)
		return err;
	if (put_user((int)sizeof(r), optlen) ||
	    copy_to_user(optval, &r, sizeof(r)))
		return -EFAULT;
	return 0;
}

/**
 * sdp_region_setsockopt - SDP_REGION_DEREG
 * @ssk: the socket, not locked
 * @optval: the token
 * @optlen: its size
 *
 * Return: 0 once the region is gone, or a negative errno: EINVAL,
 * ENOENT (no such region), EINTR (a fatal signal: it goes anyway).
 */
int sdp_region_setsockopt(struct sdp_sock *ssk, sockptr_t optval,
			  unsigned int optlen)
{
	struct sock *sk = &ssk->sk;
	struct sdp_conn *conn;
	u64 token;
	int err;

	if (optlen != sizeof(token))
		return -EINVAL;
	if (copy_from_sockptr(&token, optval, sizeof(token)))
		return -EFAULT;

	lock_sock(sk);
	conn = sdp_conn_get(ssk);
	err = conn->tp->region_dereg ?
	      conn->tp->region_dereg(ssk, conn, token) : -ENOENT;
	sdp_conn_put(conn);
	release_sock(sk);
	return err;
}

/**
 * sdp_region_close - close(): the regions of ours end before it returns
 * @ssk: the socket, locked
 *
 * As SDP_REGION_DEREG of each (the peer told, their keys dead, or the
 * teardown's drain waited for), so that the program may reuse the
 * memory once close() has returned.  Not for a process that exits: its
 * memory is going, and the teardown releases the pages later.
 */
void sdp_region_close(struct sdp_sock *ssk)
{
	struct sdp_conn *conn;

	sdp_assert_locked(ssk);

	if (current->flags & PF_EXITING)
		return;
	conn = sdp_conn_get(ssk);	/* kept while the transport sleeps */
	if (conn->tp->region_close)
		conn->tp->region_close(ssk, conn);
	sdp_conn_put(conn);
}

/**
 * sdp_region_cmsg - the SDP_RDMA control message of a send, if any
 * @msg: the send
 * @op: filled in
 *
 * Return: 1 if there is one, 0 if not, -EINVAL if it is malformed.
 */
int sdp_region_cmsg(struct msghdr *msg, struct sdp_rdma *op)
{
	struct cmsghdr *cmsg;
	int found = 0;

	/* a kernel copy of the control messages, as sendmsg() makes */
	if (!msg->msg_controllen || msg->msg_control_is_user)
		return 0;
	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_SDP || cmsg->cmsg_type != SDP_RDMA)
			continue;
		if (found || cmsg->cmsg_len != CMSG_LEN(sizeof(*op)))
			return -EINVAL;
		memcpy(op, CMSG_DATA(cmsg), sizeof(*op));
		found = 1;
	}
	if (found && (op->flags || (op->op != SDP_RDMA_WRITE &&
				    op->op != SDP_RDMA_READ)))
		return -EINVAL;
	return found;
}

/**
 * sdp_region_send - the RDMA op a send asks for
 * @ssk: the socket, locked, connected
 * @msg: its iovec: the bytes to write, or where to read into
 * @op: what sdp_region_cmsg() found
 * @s: the send's state (@s->copied: the bytes moved)
 *
 * Return: 0 or a negative errno: EOPNOTSUPP (the transport or the peer
 * has no regions), ENOENT (no such region of the peer's), EACCES (not
 * that access), ERANGE (beyond its end), EINVAL (MSG_OOB), or what the
 * transport says.
 */
int sdp_region_send(struct sdp_sock *ssk, struct msghdr *msg,
		    const struct sdp_rdma *op, struct sdp_send *s)
{
	int err;

	sdp_assert_locked(ssk);

	err = sdp_region_conn(ssk, s->conn->tp->rdma_op);
	if (err)
		return err;
	if (s->flags & MSG_OOB)
		return -EINVAL;
	if (!msg_data_left(msg))
		return 0;
	if (s->no_zc) {
		/* MSG_ZEROCOPY past RLIMIT_MEMLOCK (sdp_zc_uarg()): its
		 * pages could not be charged, so the op waits for its end,
		 * pinned only while the call lasts, as TCP copies then; its
		 * notification says so (SO_EE_CODE_ZEROCOPY_COPIED)
		 */
		struct ubuf_info *uarg = s->uarg;

		s->uarg = NULL;
		err = s->conn->tp->rdma_op(ssk, msg, op, s);
		s->uarg = uarg;
		return err;
	}
	return s->conn->tp->rdma_op(ssk, msg, op, s);
}
