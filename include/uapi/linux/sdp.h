/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Sockets Direct Protocol (SDP): what applications include.
 *
 * An SDP socket is a SOCK_STREAM socket with TCP's semantics whose bytes
 * travel over an RDMA reliable connection instead of the kernel TCP/IP
 * stack.  Create one with socket(AF_INET_SDP, SOCK_STREAM, 0) (or
 * IPPROTO_TCP as the protocol), or socket(AF_INET, SOCK_STREAM,
 * IPPROTO_SDP), and use plain struct sockaddr_in / struct sockaddr_in6
 * addresses, exactly as for TCP.
 *
 * The family numbers below are the ones the older SDP stack, qperf and
 * Java use.  The ib_sdp module can register other numbers (module
 * parameters af_inet_sdp and af_inet6_sdp); the ones in use are shown in
 * /sys/module/ib_sdp/parameters/.
 */
#ifndef _UAPI_LINUX_SDP_H
#define _UAPI_LINUX_SDP_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define AF_INET_SDP		27
#define AF_INET6_SDP		28
#define PF_INET_SDP		AF_INET_SDP
#define PF_INET6_SDP		AF_INET6_SDP

/*
 * The same socket as a protocol of AF_INET and AF_INET6:
 * socket(AF_INET, SOCK_STREAM, IPPROTO_SDP).  Above 255, as IPPROTO_SMC
 * (256) and IPPROTO_MPTCP (262), so no IP protocol can have it; below
 * the kernel's IPPROTO_MAX (263).  The module parameter ipproto_sdp can
 * move it should the kernel ever give 261 to another protocol.
 */
#ifndef IPPROTO_SDP
#define IPPROTO_SDP		261
#endif

/* Level for setsockopt()/getsockopt() of the options below. */
#define SOL_SDP			27

/*
 * int: sends of at least this many bytes use zero copy (RDMA straight
 * from the user buffer); 0 disables zero copy on this socket.  Defaults
 * to the module parameter sdp_zcopy_thresh.
 */
#define SDP_ZCOPY_THRESH	80

/*
 * int, read only: the positive errno of the last failed bind(), or of the
 * address resolution done by the last connect(), on this socket; 0 if none.
 */
#define SDP_LAST_BIND_ERR	81

/*
 * int, 0 or 1: SO_ZEROCOPY for SDP sockets, which the socket core does not
 * let a protocol module offer under SOL_SOCKET.  Set, send(MSG_ZEROCOPY)
 * works as on TCP: the pages stay the kernel's until a completion is read
 * from the error queue (SO_EE_ORIGIN_ZEROCOPY, ranges of send calls).
 */
#define SDP_ZEROCOPY		82

/*
 * int, 0 or 1, IPPROTO_SDP sockets: whether a connect that finds no SDP
 * peer goes on by TCP (sdp(7)).  Defaults to the module parameter
 * ipproto_fallback (1); 0 makes the socket SDP's or nothing.  Families
 * 27/28 never fall back: 0 there, and setting 1 is EOPNOTSUPP.
 */
#define SDP_FALLBACK		89

/*
 * AZ-SDP: asynchronous zero copy for blocking sends (libsdp drives it;
 * Documentation/sdp.rst, "AZ-SDP").  A process opens /dev/sdp_az, an AZ
 * channel bound to its memory, and attaches to it the userfaultfd with
 * which it write-protects the buffers it sends (SDP_AZ_IOC_ATTACH).
 *
 * int: SDP_ASYNC binds the socket to the channel whose descriptor is
 * given (-1 unbinds); read, it says 0 if the socket is not bound, 1 if
 * it is bound to a channel of the caller's process, 2 to another's.  The
 * sockets a bound listener accepts are bound as it is.
 */
#define SDP_ASYNC		83

/*
 * A control message (level SOL_SDP) of a blocking sendmsg() on a bound
 * socket: the caller has write-protected [addr, addr + len) through its
 * attached userfaultfd and the iovec of the send that lies inside it may
 * go asynchronously.  The send then returns once that part is offered to
 * the peer, and exactly one struct sdp_az_done with the same cookie is
 * read from the channel: at once if nothing went asynchronously, else
 * once the peer has read it all and the pages are released.  Until then
 * the caller keeps the range write-protected.
 */
#define SDP_AZ_SEND		84

struct sdp_az_send {
	__u64	addr;		/* page aligned */
	__u64	len;		/* a multiple of the page size */
	__u64	cookie;		/* the caller's, returned in sdp_az_done */
};

/* read() from the channel: an array of these (poll() says POLLIN). */
struct sdp_az_done {
	__u64	cookie;
	__u32	flags;		/* SDP_AZ_DONE_* */
	__u32	reason;		/* if not ASYNC, why: SDP_AZ_SYNC_* */
};

#define SDP_AZ_DONE_ASYNC	0x1	/* some went asynchronously */
#define SDP_AZ_DONE_FAILED	0x2	/* the connection failed first */

#define SDP_AZ_SYNC_NONE	0	/* went asynchronously */
#define SDP_AZ_SYNC_COPIED	1	/* copied or read at once: the way the
					 * socket chose, a SinkAvail, the
					 * local transport
					 */
#define SDP_AZ_SYNC_UNPROTECTED	2	/* a page writable, or its mapping
					 * not private anonymous memory
					 * registered to the attached
					 * userfaultfd
					 */
#define SDP_AZ_SYNC_PINNED	3	/* a page pinned by someone else */
#define SDP_AZ_SYNC_BUDGET	4	/* past RLIMIT_MEMLOCK */
#define SDP_AZ_SYNC_OTHER	5	/* MSG_ZEROCOPY, non-blocking, ... */

/* ioctl()s of /dev/sdp_az */
struct sdp_az_attach {
	__s32	uffd;		/* a userfaultfd of this process ... */
	__u32	flags;		/* 0 */
	__u64	probe;		/* ... registered (MODE_WP) over this page */
};

struct sdp_az_vma {
	__u64	addr;		/* in: an address */
	__u64	start;		/* out: its mapping's bounds */
	__u64	end;
	__u32	flags;		/* out: SDP_AZ_VMA_* */
	__u32	pad;
};

#define SDP_AZ_VMA_ANON		0x1	/* private anonymous memory */
#define SDP_AZ_VMA_OURS		0x2	/* registered (WP) to the attached uffd */
#define SDP_AZ_VMA_OTHER	0x4	/* registered to another userfaultfd */

/* What libsdp alone sees, for the counters of /proc/net/sdpstats. */
struct sdp_az_count {
	__u32	faults;		/* writes that waited for a send in flight */
	__u32	fault_syncs;	/* sends made synchronously because the
				 * program kept writing into its buffers
				 */
};

#define SDP_AZ_IOC_ATTACH	_IOW('S', 1, struct sdp_az_attach)
#define SDP_AZ_IOC_VMA		_IOWR('S', 2, struct sdp_az_vma)
#define SDP_AZ_IOC_COUNT	_IOW('S', 3, struct sdp_az_count)

/*
 * One-sided RDMA through the socket (Documentation/sdp.rst, "One-sided
 * RDMA"; sdp(7) has a worked example).  On a connected SDP socket:
 *
 * getsockopt(SOL_SDP, SDP_REGION_REG, struct sdp_region *, &len) pins
 * [addr, addr + len) of the caller's memory (charged to RLIMIT_MEMLOCK),
 * registers it for the peer with the access given, and fills in token: a
 * random number that names the region on this connection only.  The
 * program hands the token to its peer by its own protocol on this
 * connection (the kernel tells the peer's kernel about the region ahead
 * of any byte sent after the call).
 *
 * The peer's sendmsg() with a control message (level SOL_SDP, type
 * SDP_RDMA, a struct sdp_rdma) then writes the call's iovec into the
 * region at offset (SDP_RDMA_WRITE), or reads that many bytes from there
 * into the iovec (SDP_RDMA_READ), by RDMA, without this side's program
 * taking part.  It returns the bytes moved, and:
 *   - plain (blocking): once the op is complete;
 *   - with MSG_ZEROCOPY on a socket with SDP_ZEROCOPY: once it is posted;
 *     its completion comes on the error queue as a MSG_ZEROCOPY send's;
 *   - by io_uring's IORING_OP_SENDMSG_ZC: the notification CQE once it
 *     is complete.
 * A WRITE followed by a send() on the same socket arrives first: the
 * peer that reads those bytes finds the WRITE's in its region.
 *
 * setsockopt(SOL_SDP, SDP_REGION_DEREG, &token, sizeof(token)) ends a
 * region: the peer's kernel refuses new ops on it and finishes those in
 * flight, then the key is invalidated and the pages released; the call
 * returns then (a peer that does not answer in SDP_REGION_GRACE_MS loses
 * the key anyway: an op of its after that resets the connection).
 * Closing the socket ends every region.
 *
 * int SDP_REGIONS, set to 1 before connect() or listen() (a listener's
 * children inherit it), on both ends: the connection then keeps room on
 * its queue pair for regions and their ops (a few dozen work requests,
 * about 100 KiB per connection on Soft-RoCE), and only then do the calls
 * above work on it (else EOPNOTSUPP).
 */
#define SDP_REGIONS		88
#define SDP_REGION_REG		85
#define SDP_REGION_DEREG	86
#define SDP_RDMA		87	/* the control message */

#define SDP_REGION_READ		0x1	/* the peer may read it */
#define SDP_REGION_WRITE	0x2	/* the peer may write into it */

#define SDP_REGION_MAX_LEN	(64ULL << 20)	/* bytes in one region */
#define SDP_REGIONS_MAX		16	/* regions per connection, each way */
#define SDP_REGION_GRACE_MS	10000

struct sdp_region {
	__u64	addr;		/* in: the first byte */
	__u64	len;		/* in: 1 .. SDP_REGION_MAX_LEN */
	__u32	access;		/* in: SDP_REGION_READ and/or _WRITE */
	__u32	flags;		/* in: 0 */
	__u64	token;		/* out */
};

#define SDP_RDMA_WRITE		1	/* the iovec into the peer's region */
#define SDP_RDMA_READ		2	/* the peer's region into the iovec */

struct sdp_rdma {
	__u64	token;		/* a region the peer registered here */
	__u64	offset;		/* in it: the op covers [offset, + iovec) */
	__u32	op;		/* SDP_RDMA_WRITE or SDP_RDMA_READ */
	__u32	flags;		/* 0 */
};

#endif /* _UAPI_LINUX_SDP_H */
