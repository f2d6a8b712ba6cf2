// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: connection management through rdma_cm.
 *
 * Every SDP socket owns one rdma_cm_id in the RDMA_PS_TCP port space,
 * created with the socket in the socket's network namespace.  rdma_cm
 * calls sdp_cm_handler() for every event on it, in process context, with
 * the id's handler mutex held; the handler never destroys its own id.
 */
#include "sdp.h"

static int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sock *sk = id->context;

	pr_debug("ib_sdp: sk %p: cm event %s (%d), status %d\n",
		 sk, rdma_event_msg(ev->event), ev->event, ev->status);
	return 0;
}

/**
 * sdp_cm_create_id - create the rdma_cm_id a socket connects through
 * @sk: the socket; its namespace is the id's namespace
 *
 * Return: the new id or an ERR_PTR.
 */
struct rdma_cm_id *sdp_cm_create_id(struct sock *sk)
{
	return rdma_create_id(sock_net(sk), sdp_cm_handler, sk, RDMA_PS_TCP,
			      IB_QPT_RC);
}
