// SPDX-License-Identifier: GPL-2.0
/* HAVE_SOCK_CUSTOM_SOCKOPT: SOCK_CUSTOM_SOCKOPT (6.7), a socket whose
 * SOL_SOCKET setsockopt() goes to its proto_ops first; before, only
 * MPTCP's did
 */
#include <linux/net.h>

int probe_custom(void);
int probe_custom(void)
{
	return SOCK_CUSTOM_SOCKOPT;
}
