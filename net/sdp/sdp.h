/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp: Sockets Direct Protocol, shared definitions.
 *
 * Objects and their lifetimes:
 *
 *  struct sdp_sock     one per SDP socket; struct sock comes first so that
 *                      sdp_sk() is a container_of().  Freed by the last
 *                      sock_put().  Owns its rdma_cm_id from creation
 *                      (sdp_create()) to release (sdp_release()).
 *
 *  struct sdp_device   one per RDMA device, created by the ib_client add
 *                      callback and dropped by remove; refcounted (kref)
 *                      so that a connection can keep it while it uses its
 *                      protection domain.
 *
 * Locking: the socket lock (lock_sock()) protects every field of
 * struct sdp_sock that is not marked otherwise.
 */
#ifndef _SDP_H
#define _SDP_H

#include <linux/kref.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/sdp.h>

#include "sdp_wire.h"

#define SDP_MODULE_VERSION	"0.1.0"

struct sdp_sock {
	struct sock		sk;		/* must be first */
	struct rdma_cm_id	*cm_id;		/* owned; NULL once released */
	int			zcopy_thresh;	/* SDP_ZCOPY_THRESH, bytes */
	int			last_bind_err;	/* SDP_LAST_BIND_ERR, errno */
};

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return container_of(sk, struct sdp_sock, sk);
}

struct sdp_device {
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	struct kref		ref;
};

/* af_sdp.c: module parameters */
extern int sdp_zcopy_thresh;

/* sdp_dev.c: the RDMA devices ib_sdp runs on */
int sdp_dev_init(void);
void sdp_dev_exit(void);
struct sdp_device *sdp_dev_get(struct ib_device *ibdev);
void sdp_dev_put(struct sdp_device *sdev);

/* sdp_cm.c: connection management through rdma_cm */
struct rdma_cm_id *sdp_cm_create_id(struct sock *sk);

#endif /* _SDP_H */
