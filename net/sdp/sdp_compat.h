/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp across kernels: every difference between the kernels it builds
 * for, in one place, so that the rest of the module is written for the
 * newest one.
 *
 * Each difference is decided by a probe, not by a version number: a few
 * lines in conftest/NAME.c that compile only on a kernel with the newer
 * interface.  Kbuild compiles every probe against the target kernel with
 * its own flags (conftest.sh) into sdp_config.h, "#define HAVE_... 1" for
 * each that compiled.  Below, for each HAVE_... not defined, the older
 * kernel's spelling of the newer interface, under the newer one's name
 * where the newer kernel has that name, else under an sdp_ name both
 * spellings share.  sdp_compat.c holds what needs a function body.
 *
 * A new kernel: build against it; for each error, a probe that compiles
 * only with the new interface (Documentation/sdp.rst, "Kernels"), the
 * code changed to the new interface, and here the old one's translation.
 */
#ifndef _SDP_COMPAT_H
#define _SDP_COMPAT_H

#include <linux/net.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/uio.h>

#include "sdp_config.h"

/* 6.2: prandom_u32_max() became get_random_u32_below() */
#ifndef HAVE_GET_RANDOM_U32_BELOW
static inline u32 get_random_u32_below(u32 ceil)
{
	return prandom_u32_max(ceil);
}
#endif

/* 6.4: an iterator's iovec array is iter_iov(), __iov underneath */
#ifndef HAVE_ITER_IOV_ADDR
static inline void __user *iter_iov_addr(const struct iov_iter *i)
{
	if (iter_is_ubuf(i))
		return i->ubuf + i->iov_offset;
	return i->iov->iov_base + i->iov_offset;
}
#endif

/* 6.10: a ubuf_info (MSG_ZEROCOPY) completes through its ops table */
static inline void sdp_ubuf_complete(struct ubuf_info *uarg, bool success)
{
#ifdef HAVE_UBUF_INFO_OPS
	uarg->ops->complete(NULL, uarg, success);
#else
	uarg->callback(NULL, uarg, success);
#endif
}

/* 6.10: a ubuf_info of our own: its completion in an ops table, before
 * in the ubuf_info itself
 */
#ifdef HAVE_UBUF_INFO_OPS
#define SDP_DEFINE_UBUF_OPS(name, fn) \
	static const struct ubuf_info_ops name = { .complete = fn }
#define sdp_ubuf_set_ops(uarg, name, fn)	((uarg)->ops = &(name))
#else
#define SDP_DEFINE_UBUF_OPS(name, fn) \
	static const void *const name __maybe_unused
#define sdp_ubuf_set_ops(uarg, name, fn)	((uarg)->callback = (fn))
#endif

/* The userfaultfd context a mapping is registered to, or NULL (a kernel
 * without userfaultfd has none).
 */
#ifdef CONFIG_USERFAULTFD
#define sdp_vma_uffd_ctx(vma)	((void *)(vma)->vm_userfaultfd_ctx.ctx)
#else
#define sdp_vma_uffd_ctx(vma)	((void *)NULL)
#endif

/* 6.10: proto_ops->accept takes its flags in a struct proto_accept_arg */
#ifndef HAVE_PROTO_ACCEPT_ARG
struct proto_accept_arg {
	unsigned int flags;
	int err;
	int is_empty;
	bool kern;
};
#endif

/* 6.5: sendfile() and splice() send pages as sendmsg(MSG_SPLICE_PAGES)
 * with a bvec iterator; before, proto_ops->sendpage() took one page at a
 * time, MSG_SENDPAGE_NOTLAST while more of the same pipe followed.
 */
#ifndef MSG_SPLICE_PAGES
#define MSG_SPLICE_PAGES	0	/* never set: sendpage() brings pages */
#endif

/* 6.10: a trace event's __assign_str() takes the field only */
#ifdef HAVE_ASSIGN_STR_ONE_ARG
#define sdp_assign_str(dst, src)	__assign_str(dst)
#else
#define sdp_assign_str(dst, src)	__assign_str(dst, src)
#endif

#endif /* _SDP_COMPAT_H */
