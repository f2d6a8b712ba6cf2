// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: what each network namespace keeps (struct sdp_net).
 *
 * Its counters (per CPU: SDP_INC_STATS()) and every SDP socket of the
 * namespace in an xarray, under an id allocated cyclically (so a new
 * socket sorts after the old ones), from sdp_sk_alloc() to
 * sdp_sk_destruct().  Both live from the namespace's creation (or the
 * module's load) to its end; the files that show them are sdp_proc.c's,
 * registered after this and gone before it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/net_namespace.h>

#include "sdp.h"

unsigned int sdp_net_id;

int sdp_sock_list_add(struct sdp_sock *ssk)
{
	struct sdp_net *sn = sdp_net(sock_net(&ssk->sk));

	return xa_alloc_cyclic_bh(&sn->socks, &ssk->proc_id, ssk,
				  XA_LIMIT(0, U32_MAX - 1), &sn->next_id,
				  GFP_KERNEL) < 0 ? -ENOMEM : 0;
}

void sdp_sock_list_del(struct sdp_sock *ssk)
{
	xa_erase_bh(&sdp_net(sock_net(&ssk->sk))->socks, ssk->proc_id);
}

static int __net_init sdp_net_init(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);

	sn->stats = alloc_percpu(struct sdp_mib);
	if (!sn->stats)
		return -ENOMEM;
	xa_init_flags(&sn->socks, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	return 0;
}

static void __net_exit sdp_net_exit(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);

	WARN_ON_ONCE(!xa_empty(&sn->socks));
	xa_destroy(&sn->socks);
	free_percpu(sn->stats);
}

static struct pernet_operations sdp_net_ops = {
	.init	= sdp_net_init,
	.exit	= sdp_net_exit,
	.id	= &sdp_net_id,
	.size	= sizeof(struct sdp_net),
};

int sdp_net_register(void)
{
	return register_pernet_subsys(&sdp_net_ops);
}

void sdp_net_unregister(void)
{
	unregister_pernet_subsys(&sdp_net_ops);
}
