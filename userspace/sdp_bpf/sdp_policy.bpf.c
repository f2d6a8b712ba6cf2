// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_policy: the BPF half of sdp_bpf(8).  An fmod_ret program on the
 * kernel's update_socket_protocol() hook (6.6 and later), which
 * __sys_socket() calls with socket()'s arguments before it creates the
 * socket: for a task under one of the policy's cgroups whose name
 * matches one of its rules (or any name when it has none), a stream
 * socket of AF_INET or AF_INET6 with protocol 0 or IPPROTO_TCP becomes
 * one of IPPROTO_SDP.  Every other call keeps its protocol: the program
 * returns 0, so the kernel's own function runs (a non-zero return would
 * also keep any other policy on the hook, MPTCP's say, from running).
 *
 * The loader fills in sdp_proto (the module's ipproto_sdp, or the one
 * --protocol names), ncgroups, the cgroup array and the rules before it
 * loads the program; counts tells how many sockets each decision took.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sdp_policy.h"

#define AF_INET		2
#define AF_INET6	10
#define SOCK_STREAM	1
#define SOCK_TYPE_MASK	0xf
#define IPPROTO_TCP	6

const volatile int sdp_proto = 261;
const volatile __u32 ncgroups;
const volatile __u32 nrules;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, SDP_POLICY_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDP_POLICY_RULES);
	__type(key, __u32);
	__type(value, struct sdp_policy_rule);
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDP_POLICY_NCOUNTS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static void count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&counts, &what);

	if (n)
		(*n)++;
}

static bool in_cgroups(void)
{
	__u32 i;

	for (i = 0; i < SDP_POLICY_CGROUPS && i < ncgroups; i++)
		if (bpf_current_task_under_cgroup(&cgroups, i) == 1)
			return true;
	return false;
}

/* Does the task's name match rule @i: the same name, or for a pattern
 * ending in '*' the same first len bytes?
 */
static bool rule_matches(__u32 i, const char *comm)
{
	struct sdp_policy_rule *r = bpf_map_lookup_elem(&rules, &i);
	__u32 j;

	if (!r)
		return false;
	for (j = 0; j < SDP_POLICY_COMM; j++) {
		if (r->prefix && j == r->len)
			return true;
		if (r->comm[j] != comm[j])
			return false;
		if (!comm[j])
			return true;
	}
	return true;
}

static bool name_matches(void)
{
	char comm[SDP_POLICY_COMM] = {};
	__u32 i;

	if (!nrules)
		return true;
	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < SDP_POLICY_RULES && i < nrules; i++)
		if (rule_matches(i, comm))
			return true;
	return false;
}

SEC("fmod_ret/update_socket_protocol")
int BPF_PROG(sdp_policy, int family, int type, int protocol)
{
	if ((family != AF_INET && family != AF_INET6) ||
	    (type & SOCK_TYPE_MASK) != SOCK_STREAM ||
	    (protocol && protocol != IPPROTO_TCP))
		return 0;
	if (!in_cgroups())
		return 0;
	if (!name_matches()) {
		count(SDP_POLICY_KEPT);
		return 0;
	}
	count(SDP_POLICY_MOVED);
	return sdp_proto;
}

char LICENSE[] SEC("license") = "GPL";
