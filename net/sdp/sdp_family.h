/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp: the proto_ops every SDP socket has, whatever its family
 * (af_sdp.c: families 27/28; sdp_inet.c: IPPROTO_SDP in AF_INET/AF_INET6).
 */
#ifndef SDP_FAMILY_H
#define SDP_FAMILY_H

#include "sdp.h"

/* af_sdp.c: the socket calls of every SDP socket, whatever its family */
int sdp_release(struct socket *sock);
int sdp_shutdown(struct socket *sock, int how);
__poll_t sdp_poll(struct file *file, struct socket *sock, poll_table *wait);

/* sdp_fallback.c: IPPROTO_SDP's connect, by TCP where SDP finds no peer */
int sdp_inet_connect(struct socket *sock, struct sockaddr *uaddr, int len,
		     int flags);
int sdp_inet_sendmsg(struct socket *sock, struct msghdr *msg, size_t size);
int sdp_inet_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		     int flags);
void sdp_fallback_release(struct sdp_sock *ssk);

#define SDP_PROTO_OPS(_family, _connect, _sendmsg, _recvmsg)		\
{								\
	.family		= (_family),				\
	.owner		= THIS_MODULE,				\
	.release	= sdp_release,				\
	.bind		= sdp_bind,				\
	.connect	= (_connect),				\
	.socketpair	= sock_no_socketpair,			\
	.accept		= SDP_PROTO_OPS_ACCEPT,			\
	.getname	= sdp_getname,				\
	.poll		= sdp_poll,				\
	.ioctl		= sdp_ioctl,				\
	.listen		= sdp_listen,				\
	.shutdown	= sdp_shutdown,				\
	.setsockopt	= sdp_setsockopt,			\
	.getsockopt	= sdp_getsockopt,			\
	.sendmsg	= (_sendmsg),				\
	.recvmsg	= (_recvmsg),				\
	.mmap		= sock_no_mmap,				\
	SDP_PROTO_OPS_SENDPAGE					\
	.splice_eof	= sdp_splice_eof,			\
}

#endif /* SDP_FAMILY_H */
