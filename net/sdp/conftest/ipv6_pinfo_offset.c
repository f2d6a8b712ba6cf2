// SPDX-License-Identifier: GPL-2.0
/* HAVE_PROTO_IPV6_PINFO_OFFSET: struct proto's ipv6_pinfo_offset (6.5),
 * where inet6_create() finds a socket's ipv6_pinfo; before, at the end
 * of the object
 */
#include <net/sock.h>

int probe_offset(struct proto *p);
int probe_offset(struct proto *p)
{
	return p->ipv6_pinfo_offset;
}
