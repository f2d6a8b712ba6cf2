// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp across kernels: the older kernels' interfaces that need a
 * function body, each translated into the newest kernel's, which the
 * module implements (declared in sdp_family.h, which the proto_ops
 * tables include; sdp_compat.h has the rest).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>

#include "sdp.h"
#include "sdp_family.h"

#ifndef HAVE_PROTO_ACCEPT_ARG
/* before 6.10: proto_ops->accept(sock, newsock, flags, kern) */
int sdp_accept_compat(struct socket *sock, struct socket *newsock,
		      int flags, bool kern)
{
	struct proto_accept_arg arg = { .flags = flags, .kern = kern };

	return sdp_accept(sock, newsock, &arg);
}

int sdp_inet_accept_compat(struct socket *sock, struct socket *newsock,
			   int flags, bool kern)
{
	struct proto_accept_arg arg = { .flags = flags, .kern = kern };

	return sdp_inet_accept(sock, newsock, &arg);
}
#endif

#ifdef HAVE_PROTO_OPS_SENDPAGE
/* before 6.5: sendfile() and splice() call proto_ops->sendpage() a page
 * at a time: a sendmsg(MSG_SPLICE_PAGES) of one page
 */
ssize_t sdp_sendpage_compat(struct socket *sock, struct page *page,
			    int offset, size_t size, int flags)
{
	struct bio_vec bv = {
		.bv_page = page, .bv_offset = offset, .bv_len = size,
	};
	struct msghdr msg = {
		.msg_flags = (flags & ~MSG_SENDPAGE_NOTLAST) | MSG_SPLICE_PAGES,
	};

	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bv, 1, size);
	return sdp_sendmsg_pages(sock, &msg, flags & MSG_SENDPAGE_NOTLAST);
}
#endif
