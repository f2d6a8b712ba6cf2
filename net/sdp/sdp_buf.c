// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the memory a socket may hold, and its buffers' memory.
 *
 * Budgets.  What a socket may hold to send (sdp_snd_budget()) and what
 * its peer may make it hold unread (sdp_rcv_budget()) are TCP's: SO_SNDBUF
 * and SO_RCVBUF when the program set them, else what tcp_wmem and
 * tcp_rmem let TCP's buffers grow to.  Both transports keep within them
 * (sdp_window.c for RDMA, sdp_local_data.c for local).
 *
 * Buffer memory.  Every buffer's memory is charged to the memory cgroup
 * of the socket's owner (ssk->memcg), counted in the socket's buf_bytes,
 * /proc/net/sdpstats BufferBytes and the host's total for all SDP
 * buffers.  Beyond the minimum a connection needs, memory is taken only
 * with room both under tcp_mem's pressure threshold for that total and
 * in the owner's cgroup (sdp_buf_room()), and an allocation that finds
 * none fails rather than reclaiming hard or OOM-killing for it.
 *
 * Objects: struct sdp_buf (sdp.h).  Nothing here sleeps but the
 * allocations of process context; no lock is taken but the accounting's
 * atomics.  This file calls no other of the module: every layer may use
 * it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "sdp.h"

/**
 * sdp_snd_budget - bytes a socket may hold to send
 * @ssk: the socket (any context)
 *
 * SO_SNDBUF if the program set it (as TCP doubled it), else what TCP's
 * send buffer may grow to, tcp_wmem[2].
 *
 * Return: the budget in bytes.
 */
u32 sdp_snd_budget(const struct sdp_sock *ssk)
{
	const struct sock *sk = &ssk->sk;
	u32 snd = READ_ONCE(sk->sk_sndbuf);

	if (sk->sk_userlocks & SOCK_SNDBUF_LOCK)
		return snd;
	return max_t(u32, snd,
		     READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_wmem[2]));
}

/**
 * sdp_rcv_budget - bytes a socket may hold that its program has not read
 * @ssk: the socket (any context)
 *
 * SO_RCVBUF if the program set it (as TCP doubled it), else what TCP's
 * receive buffer may grow to, tcp_rmem[2].
 *
 * Return: the budget in bytes.
 */
u32 sdp_rcv_budget(const struct sdp_sock *ssk)
{
	const struct sock *sk = &ssk->sk;
	u32 rcv = READ_ONCE(sk->sk_rcvbuf);

	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK)
		return rcv;
	return max_t(u32, rcv,
		     READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_rmem[2]));
}

/* All SDP buffer memory of the host, in bytes.  Growth stops once it
 * passes net.ipv4.tcp_mem's pressure threshold (tcp_mem[1], pages), as
 * TCP's buffers stop growing under memory pressure: the minimum every
 * connection needs is always given, what traffic asks for beyond it is
 * not.
 */
static atomic_long_t sdp_buf_total = ATOMIC_LONG_INIT(0);

/* Buffer memory of @ssk's comes (@bytes > 0) or goes: counted in
 * BufferBytes and in the host's total.
 */
void sdp_buf_account(struct sdp_sock *ssk, long bytes)
{
	atomic_long_add(bytes, &sdp_buf_total);
	atomic_long_add(bytes, &ssk->buf_bytes);
	SDP_ADD_STATS(sock_net(&ssk->sk), SDP_MIB_BUF_BYTES, bytes);
}

static bool sdp_global_room(u32 bytes)
{
	long pages = (atomic_long_read(&sdp_buf_total) + bytes) >> PAGE_SHIFT;

	return pages <= READ_ONCE(tcp_prot.sysctl_mem[1]);
}

/* Growth leaves an eighth of each enclosing cgroup's limit (memory.max,
 * or memory.high if lower) free, so that a cgroup near its limit refuses
 * our buffers before its programs' own memory is refused or throttled, as
 * TCP stops growing its buffers under a cgroup's socket pressure.
 */
static bool sdp_memcg_room(struct mem_cgroup *memcg, u32 bytes)
{
#ifdef CONFIG_MEMCG
	unsigned long need = DIV_ROUND_UP(bytes, PAGE_SIZE);

	/* the root (no parent) has no limit */
	for (; memcg && parent_mem_cgroup(memcg);
	     memcg = parent_mem_cgroup(memcg)) {
		unsigned long max = min(READ_ONCE(memcg->memory.max),
					READ_ONCE(memcg->memory.high));

		if (max != PAGE_COUNTER_MAX &&
		    page_counter_read(&memcg->memory) + need + max / 8 > max)
			return false;
	}
#endif
	return true;
}

/**
 * sdp_buf_room - may @bytes more than a connection's minimum be allocated?
 * @ssk: the socket
 * @bytes: the size asked for
 *
 * Beyond the minimum every connection needs, buffer memory takes room
 * both under tcp_mem's pressure threshold for all SDP buffers of the host
 * and in the owner's memory cgroup.
 *
 * Return: true if @bytes may be allocated.
 */
bool sdp_buf_room(struct sdp_sock *ssk, u32 bytes)
{
	return sdp_global_room(bytes) && sdp_memcg_room(ssk->memcg, bytes);
}

/* sdp_buf_alloc() with @gfp: GFP_ATOMIC from a completion. */
int __sdp_buf_alloc(struct sdp_sock *ssk, struct sdp_buf *buf, u32 size,
		    enum dma_data_direction dir, bool grow, gfp_t gfp)
{
	struct ib_device *dev = ssk->conn->sdev->ibdev;
	struct mem_cgroup *old;
	void *data;
	u64 dma;

	if (grow && !sdp_buf_room(ssk, size))
		goto fail;
	old = set_active_memcg(ssk->memcg);
	data = kmalloc(size, gfp | __GFP_ACCOUNT | __GFP_NOWARN);
	set_active_memcg(old);
	if (!data)
		goto fail;
	dma = ib_dma_map_single(dev, data, size, dir);
	if (ib_dma_mapping_error(dev, dma)) {
		kfree(data);
		goto fail;
	}
	sdp_buf_release(ssk, buf, dir);
	buf->data = data;
	buf->dma = dma;
	buf->size = size;
	sdp_buf_account(ssk, size);
	return 0;
fail:
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_BUF_ALLOC_FAILS);
	return -ENOMEM;
}

/**
 * sdp_buf_alloc - give a buffer memory of @size bytes, mapped for @dir
 * @ssk: the socket, locked; process context
 * @buf: the buffer; what it held before is released once the new memory
 *	 is in place, and kept if the allocation fails
 * @size: bytes
 * @dir: DMA_FROM_DEVICE (receive) or DMA_TO_DEVICE (send)
 * @grow: beyond the connection's minimum: only with room in the cgroup
 *
 * Return: 0 or -ENOMEM.
 */
int sdp_buf_alloc(struct sdp_sock *ssk, struct sdp_buf *buf, u32 size,
		  enum dma_data_direction dir, bool grow)
{
	sdp_assert_locked(ssk);
	/* a cgroup at its limit refuses it rather than OOM-kill for it */
	return __sdp_buf_alloc(ssk, buf, size, dir, grow,
			       GFP_KERNEL | __GFP_NORETRY);
}

/* Unmap (if mapped) and free a buffer's memory; any context. */
void sdp_buf_release(struct sdp_sock *ssk, struct sdp_buf *buf,
		     enum dma_data_direction dir)
{
	if (!buf->data)
		return;
	if (buf->dma && !WARN_ON_ONCE(dir == DMA_NONE))
		ib_dma_unmap_single(ssk->conn->sdev->ibdev, buf->dma, buf->size, dir);
	kfree(buf->data);
	sdp_buf_account(ssk, -(long)buf->size);
	buf->data = NULL;
	buf->dma = 0;
	buf->size = 0;
}

/* A bounce buffer for up to @want bytes, as large as memory allows,
 * charged to the memory cgroup of the socket's owner: what a peer makes
 * us read ahead (or spill) is the owner's memory, as TCP charges its
 * receive queue.  A cgroup at its limit refuses it (NULL: the caller
 * reads ahead or spills later) rather than OOM-kill for it.  Counted in
 * BufferBytes with its own size.
 */
struct sdp_buf *sdp_bounce_alloc(struct sdp_sock *ssk, u32 want)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN;
	struct mem_cgroup *old = set_active_memcg(ssk->memcg);
	u32 size = min_t(u32, roundup_pow_of_two(want), SDP_ZC_CHUNK);
	struct sdp_buf *b = kzalloc(sizeof(*b), gfp);

	/* large sizes only if they come easily, down to a page */
	while (b) {
		b->data = kmalloc(size, gfp);
		if (b->data || size <= PAGE_SIZE)
			break;
		size /= 2;
	}
	set_active_memcg(old);
	if (b && !b->data) {
		kfree(b);
		b = NULL;
	}
	if (!b)
		return NULL;
	b->ssk = ssk;
	b->kind = SDP_BUF_BOUNCE;
	b->size = size;
	b->len = min(want, size);
	INIT_LIST_HEAD(&b->list);
	sdp_buf_account(ssk, sdp_bounce_truesize(b));
	return b;
}

void sdp_bounce_free(struct sdp_buf *b)
{
	sdp_buf_account(b->ssk, -(long)sdp_bounce_truesize(b));
	kfree(b->data);
	kfree(b);
}

/**
 * sdp_pin_user - pin a range of the caller's memory for long, charged to
 *	its RLIMIT_MEMLOCK (a one-sided RDMA region, either transport)
 * @addr: the range's first byte
 * @len: its bytes
 * @write: the device or a copy will write into it
 * @pages: set to the array of its pages (kvfree() it)
 * @npages: the pages pinned, also on failure (unpin them)
 * @mmp: the charge (mm_unaccount_pinned_pages() it once ->user is set)
 *
 * Return: 0, -ENOMEM, -ENOBUFS (past RLIMIT_MEMLOCK), -EFAULT, -EINTR.
 */
int sdp_pin_user(u64 addr, u64 len, bool write, struct page ***pages,
		 int *npages, struct mmpin *mmp)
{
	unsigned long start = addr & PAGE_MASK;
	unsigned int gup = FOLL_LONGTERM | (write ? FOLL_WRITE : 0);
	int want = DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE), got;

	*pages = kvmalloc_array(want, sizeof(**pages), GFP_KERNEL_ACCOUNT);
	if (!*pages)
		return -ENOMEM;
	if (mm_account_pinned_pages(mmp, len))
		return -ENOBUFS;
	while (*npages < want) {
		got = pin_user_pages_fast(start + *npages * PAGE_SIZE,
					  want - *npages, gup,
					  *pages + *npages);
		if (got <= 0)
			return got ? got : -EFAULT;
		*npages += got;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}
