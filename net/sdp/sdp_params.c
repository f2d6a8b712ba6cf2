// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the module's parameters (/sys/module/ib_sdp/parameters/), and
 * its workqueue.
 *
 * Read by every layer, with READ_ONCE() where a parameter is writable
 * (0644) at run time; Documentation/sdp.rst explains each.  sdp_wq is
 * allocated by module init before any socket exists, destroyed after
 * the last.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/workqueue.h>
#include <net/tcp.h>

#include "sdp.h"

int sdp_af_inet = AF_INET_SDP;
module_param_named(af_inet_sdp, sdp_af_inet, int, 0444);
MODULE_PARM_DESC(af_inet_sdp, "socket family number of IPv4 SDP (default 27)");

int sdp_af_inet6 = AF_INET6_SDP;
module_param_named(af_inet6_sdp, sdp_af_inet6, int, 0444);
MODULE_PARM_DESC(af_inet6_sdp, "socket family number of IPv6 SDP (default 28)");

int sdp_ipproto = IPPROTO_SDP;
module_param_named(ipproto_sdp, sdp_ipproto, int, 0444);
MODULE_PARM_DESC(ipproto_sdp, "protocol number of SDP in AF_INET and AF_INET6 (default 261; 0: none)");

bool sdp_ipproto_fallback = true;
module_param_named(ipproto_fallback, sdp_ipproto_fallback, bool, 0644);
MODULE_PARM_DESC(ipproto_fallback, "an IPPROTO_SDP connect that finds no SDP peer goes on by TCP (default 1; SDP_FALLBACK per socket)");

/* For the tests only: AZ-SDP's checks off, so that a test can show it
 * catches a send whose buffer was not protected.
 */
bool sdp_az_verify = true;
module_param(sdp_az_verify, bool, 0644);
MODULE_PARM_DESC(sdp_az_verify,
		 "AZ-SDP checks that a range is write-protected before it goes asynchronously (default Y; N for tests only)");

int sdp_zcopy_thresh = 65536;
module_param_named(sdp_zcopy_thresh, sdp_zcopy_thresh, int, 0644);
MODULE_PARM_DESC(sdp_zcopy_thresh,
		 "default SDP_ZCOPY_THRESH of new sockets, bytes; 0 = no zero copy (default 65536)");

int sdp_zcopy_adapt = 1;
module_param(sdp_zcopy_adapt, int, 0644);
MODULE_PARM_DESC(sdp_zcopy_adapt,
		 "blocking sends of at least the threshold go by ZCopy or BCopy, whichever each connection measures faster (default 1; 0 = always ZCopy)");

int sdp_recv_poll = 200;
module_param_named(recv_poll, sdp_recv_poll, int, 0644);
MODULE_PARM_DESC(recv_poll,
		 "microseconds a blocking recv() watches for data before it sleeps, unless SO_BUSY_POLL says otherwise (default 200; 0 = sleep at once)");

int sdp_rx_size = 8;
module_param(sdp_rx_size, int, 0644);
MODULE_PARM_DESC(sdp_rx_size,
		 "receive buffers per connection = most credits granted (4..1024, default 8)");

int rcvbuf_initial_size = 4096;
module_param(rcvbuf_initial_size, int, 0644);
MODULE_PARM_DESC(rcvbuf_initial_size,
		 "bytes per receive buffer of a new connection (1024..262144, default 4096)");

int rcvbuf_max_size = 32 * 1024;
module_param(rcvbuf_max_size, int, 0644);
MODULE_PARM_DESC(rcvbuf_max_size,
		 "bytes per receive buffer a connection may grow to under load (1024..262144, default 32768)");

int sdp_inline_thresh = 256;
module_param(sdp_inline_thresh, int, 0644);
MODULE_PARM_DESC(sdp_inline_thresh,
		 "messages up to this many bytes are sent inline if the device can (default 256)");

int sdp_keepalive_time = TCP_KEEPALIVE_TIME / HZ;
module_param(sdp_keepalive_time, int, 0644);
MODULE_PARM_DESC(sdp_keepalive_time,
		 "default TCP_KEEPIDLE of new sockets, seconds (default 7200)");

int sdp_retry_count = 5;
module_param(sdp_retry_count, int, 0644);
MODULE_PARM_DESC(sdp_retry_count,
		 "RC transport retries before a connection fails with ETIMEDOUT (0..7, default 5)");

int sdp_max_embryos = 16;
module_param(sdp_max_embryos, int, 0644);
MODULE_PARM_DESC(sdp_max_embryos,
		 "connection requests a listener answers at once, each holding its buffers until its handshake completes; more wait unanswered (default 16)");

int sdp_local = 1;
module_param(sdp_local, int, 0644);
MODULE_PARM_DESC(sdp_local,
		 "carry connections to an address of this host in the kernel, without RDMA (1, default), or through rdma_cm as any other (0)");

/* Chosen by measurement: Documentation/sdp.rst, "Same-host connections". */
int sdp_local_lend_min = 256 * 1024;
module_param_named(sdp_local_lend, sdp_local_lend_min, int, 0644);
MODULE_PARM_DESC(sdp_local_lend,
		 "a blocking send of this many bytes or more on a local connection lends its pages to the reader, which copies them once (default 262144; 0: never)");

int sdp_local_lend_us = 1000;
module_param(sdp_local_lend_us, int, 0644);
MODULE_PARM_DESC(sdp_local_lend_us,
		 "how long a lending send waits for the reader before it copies what is still lent (microseconds, default 1000)");

struct workqueue_struct *sdp_wq;
