/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdpstat: what sdpstat.c's sock_diag client gives the other parts
 * (why.c: sdpstat --why).
 */
#ifndef SDPSTAT_H
#define SDPSTAT_H

#include <linux/netlink.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stddef.h>

#include <linux/sdp_diag.h>

#define ATTR_DATA(a) ((const void *)((const char *)(a) + NLA_HDRLEN))
#define ATTR_LEN(a) ((a)->nla_len - NLA_HDRLEN)

extern int af_sdp[2];			/* the module's family numbers */
extern const char *const state_name[TCP_CLOSING + 1];
extern const char *const tp_name[3];	/* SDP_DIAG_TP_* */

void die(const char *what);
/* One sock_diag dump of SDP sockets: @cb for each message.  0, or a
 * negative errno (-ENOENT: the module is not loaded).
 */
int dump(const struct sdp_diag_req *req,
	 void (*cb)(const struct nlmsghdr *, void *), void *arg);
/* The attributes after a struct inet_diag_msg, by type. */
void parse_attrs(const struct nlmsghdr *h, const struct nlattr **tb);
void fmt_addr(char *out, size_t len, int family, const __be32 *a,
	      __be16 port);

/* sdpstat --why [PID|PROGRAM]... (why.c) */
int why_main(int n, char **targets, bool json);

#endif /* SDPSTAT_H */
