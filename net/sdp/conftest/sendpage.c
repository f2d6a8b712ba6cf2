// SPDX-License-Identifier: GPL-2.0
/* HAVE_PROTO_OPS_SENDPAGE: proto_ops->sendpage, which sendfile() and
 * splice() call a page at a time (until 6.5: MSG_SPLICE_PAGES since)
 */
#include <net/sock.h>

const struct proto_ops probe_ops = { .sendpage = sock_no_sendpage };
