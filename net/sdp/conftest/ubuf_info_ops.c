// SPDX-License-Identifier: GPL-2.0
/* HAVE_UBUF_INFO_OPS: a ubuf_info completes through its ops table
 * (6.10), not its own callback
 */
#include <linux/skbuff.h>

void probe_complete(struct ubuf_info *uarg, bool ok);
void probe_complete(struct ubuf_info *uarg, bool ok)
{
	uarg->ops->complete(NULL, uarg, ok);
}
