/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Sockets Direct Protocol (SDP): what applications include.
 *
 * An SDP socket is a SOCK_STREAM socket with TCP's semantics whose bytes
 * travel over an RDMA reliable connection instead of the kernel TCP/IP
 * stack.  Create one with socket(AF_INET_SDP, SOCK_STREAM, 0) (or
 * IPPROTO_TCP as the protocol) and use plain struct sockaddr_in /
 * struct sockaddr_in6 addresses, exactly as for TCP.
 *
 * The family numbers below are the ones the older SDP stack, qperf and
 * Java use.  The ib_sdp module can register other numbers (module
 * parameters af_inet_sdp and af_inet6_sdp); the ones in use are shown in
 * /sys/module/ib_sdp/parameters/.
 */
#ifndef _UAPI_LINUX_SDP_H
#define _UAPI_LINUX_SDP_H

#include <linux/types.h>

#define AF_INET_SDP		27
#define AF_INET6_SDP		28
#define PF_INET_SDP		AF_INET_SDP
#define PF_INET6_SDP		AF_INET6_SDP

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

#endif /* _UAPI_LINUX_SDP_H */
