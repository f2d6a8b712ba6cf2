/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp: the proto_ops every SDP socket has, whatever its family
 * (af_sdp.c: families 27/28; sdp_inet.c: IPPROTO_SDP in AF_INET/AF_INET6).
 */
#ifndef SDP_FAMILY_H
#define SDP_FAMILY_H

#include "sdp.h"

/* af_sdp.c: the socket calls of every SDP socket, whatever its family
 * (named sdp_* in SDP_PROTO_OPS(family, sdp))
 */
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
void sdp_fallback_copy_opts(struct sdp_sock *ssk, struct sock *tsk);

/* sdp_fallback_listen.c: IPPROTO_SDP's listener, taking TCP's too
 * (named sdp_inet_* in SDP_PROTO_OPS(family, sdp_inet))
 */
int sdp_inet_listen(struct socket *sock, int backlog);
int sdp_inet_accept(struct socket *sock, struct socket *newsock,
		    struct proto_accept_arg *arg);
#ifndef HAVE_PROTO_ACCEPT_ARG
int sdp_inet_accept_compat(struct socket *sock, struct socket *newsock,
			   int flags, bool kern);
#endif
__poll_t sdp_inet_poll(struct file *file, struct socket *sock,
		       poll_table *wait);
int sdp_inet_shutdown(struct socket *sock, int how);
int sdp_inet_getname(struct socket *sock, struct sockaddr *uaddr, int peer);
void sdp_twin_stop(struct sdp_sock *ssk);
void sdp_twin_release(struct sdp_sock *ssk);

/* sdp_compat.c: the proto_ops calls whose signature older kernels
 * spell otherwise (6.10: accept's flags in a struct proto_accept_arg;
 * before 6.5: sendpage())
 */
#ifndef HAVE_PROTO_ACCEPT_ARG
int sdp_accept_compat(struct socket *sock, struct socket *newsock,
		      int flags, bool kern);
#define SDP_PROTO_OPS_ACCEPT(_p)	_p##_accept_compat
#else
#define SDP_PROTO_OPS_ACCEPT(_p)	_p##_accept
#endif
#ifdef HAVE_PROTO_OPS_SENDPAGE
ssize_t sdp_sendpage_compat(struct socket *sock, struct page *page,
			    int offset, size_t size, int flags);
#define SDP_PROTO_OPS_SENDPAGE	.sendpage = sdp_sendpage_compat,
#else
#define SDP_PROTO_OPS_SENDPAGE
#endif

/* the proto_ops of a family's SDP sockets, whose calls that differ are
 * named _p##_connect etc.
 */
#define SDP_PROTO_OPS(_family, _p)				\
{								\
	.family		= (_family),				\
	.owner		= THIS_MODULE,				\
	.release	= sdp_release,				\
	.bind		= sdp_bind,				\
	.connect	= _p##_connect,				\
	.socketpair	= sock_no_socketpair,			\
	.accept		= SDP_PROTO_OPS_ACCEPT(_p),		\
	.getname	= _p##_getname,				\
	.poll		= _p##_poll,				\
	.ioctl		= sdp_ioctl,				\
	.listen		= _p##_listen,				\
	.shutdown	= _p##_shutdown,			\
	.setsockopt	= sdp_setsockopt,			\
	.getsockopt	= sdp_getsockopt,			\
	.sendmsg	= _p##_sendmsg,				\
	.recvmsg	= _p##_recvmsg,				\
	.mmap		= sock_no_mmap,				\
	SDP_PROTO_OPS_SENDPAGE					\
	.splice_eof	= sdp_splice_eof,			\
}

#endif /* SDP_FAMILY_H */
