// SPDX-License-Identifier: GPL-2.0
/* HAVE_ITER_IOV_ADDR: iter_iov_addr(), the user address at an ITER_UBUF
 * or ITER_IOVEC iterator (6.4)
 */
#include <linux/uio.h>

void __user *probe_addr(const struct iov_iter *i);
void __user *probe_addr(const struct iov_iter *i)
{
	return iter_iov_addr(i);
}
