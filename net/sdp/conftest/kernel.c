// SPDX-License-Identifier: GPL-2.0
/* REQUIRED: the probes compile against this kernel at all; if this one
 * does not, conftest.sh stops the build rather than guess
 */
#include <linux/module.h>
#include <net/sock.h>
#include <rdma/rdma_cm.h>

int probe_kernel(struct sock *sk);
int probe_kernel(struct sock *sk)
{
	return sk->sk_state;
}
