/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_sdp: AZ-SDP, asynchronous zero copy for blocking sends (sdp_az.c):
 * what the socket core calls.
 */
#ifndef _SDP_AZ_H
#define _SDP_AZ_H

struct msghdr;
struct sock;
struct sdp_sock;
struct sdp_send;
struct sdp_az_chan;
struct sdp_az_op;

extern const struct file_operations sdp_az_fops;

int sdp_az_begin(struct sdp_sock *ssk, struct msghdr *msg,
		 struct sdp_az_op **opp);
void sdp_az_prepare(struct sdp_az_op *op, struct sdp_send *s);
bool sdp_az_covers(struct sdp_send *s, struct msghdr *msg);
void sdp_az_end(struct sdp_sock *ssk, struct sdp_az_op *op, bool async);
int sdp_az_recv_wait(struct sock *sk, struct msghdr *msg);
void sdp_az_fault_in(unsigned long addr, size_t len);
int sdp_az_bind(struct sdp_sock *ssk, int fd);
int sdp_az_bound(struct sdp_sock *ssk);
struct sdp_az_chan *sdp_az_chan_get(struct sdp_az_chan *chan);
void sdp_az_chan_put(struct sdp_az_chan *chan);
int sdp_az_init(void);
void sdp_az_exit(void);

#endif /* _SDP_AZ_H */
