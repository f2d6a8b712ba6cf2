// SPDX-License-Identifier: GPL-2.0
/* HAVE_PROTO_ACCEPT_ARG: proto_ops->accept takes a struct
 * proto_accept_arg (6.10)
 */
#include <net/sock.h>

static int probe_accept(struct socket *sock, struct socket *newsock,
			struct proto_accept_arg *arg)
{
	return arg->err;
}

const struct proto_ops probe_ops = { .accept = probe_accept };
