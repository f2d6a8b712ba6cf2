// SPDX-License-Identifier: GPL-2.0
/* HAVE_GET_RANDOM_U32_BELOW: get_random_u32_below() (6.2, and some
 * 6.1 stable kernels), which replaced prandom_u32_max()
 */
#include <linux/random.h>

u32 probe_below(u32 n);
u32 probe_below(u32 n)
{
	return get_random_u32_below(n);
}
