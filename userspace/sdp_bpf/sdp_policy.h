/* SPDX-License-Identifier: GPL-2.0 */
/* What sdp_bpf(8) and its BPF program (sdp_policy.bpf.c) share. */
#ifndef SDP_POLICY_H
#define SDP_POLICY_H

#define SDP_POLICY_CGROUPS	8	/* cgroups one policy covers */
#define SDP_POLICY_RULES	16	/* program names */
#define SDP_POLICY_COMM		16	/* TASK_COMM_LEN */

struct sdp_policy_rule {
	char		comm[SDP_POLICY_COMM];
	__u32		len;		/* bytes before a final '*' */
	__u32		prefix;		/* the name ended in '*' */
};

enum {
	SDP_POLICY_MOVED,	/* sockets made IPPROTO_SDP */
	SDP_POLICY_KEPT,	/* in a cgroup, but no rule names the task */
	SDP_POLICY_NCOUNTS
};

#endif
