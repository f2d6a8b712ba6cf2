// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: why each socket is on SDP or on TCP, recorded for sdpstat --why
 * (the table's format and how it is read: why_table.h).
 *
 * The table is made once, at libsdp's initialisation (sdp_why_init(),
 * outside sdp_lock(), signals not blocked, and only if a rule may use
 * SDP): a memfd mapped shared, its descriptor closed at once, so the
 * program never sees a descriptor of libsdp's there; a child after
 * fork() makes its own, a copy (sdp_why_forked()).  LIBSDP_WHY=0 makes
 * none.  If it cannot be made, nothing is recorded and nothing fails.
 * Records are written by whoever decides, under sdp_lock() or not (an
 * accept): a record's slot is claimed with an atomic, its ino written
 * last, and a record read while being written is one sdpstat does not
 * find or finds whole on x86 (ino first in the record, stored last).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "real.h"
#include "why.h"

static struct sdp_why_table *sdp_why_tab;

/* A new table, a copy of @from's records if not NULL; NULL if none. */
static struct sdp_why_table *sdp_why_new(const struct sdp_why_table *from)
{
	struct sdp_why_table *t;
	int fd;

	fd = memfd_create(SDP_WHY_NAME, MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	t = ftruncate(fd, sizeof(*t)) ? MAP_FAILED :
	    mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	sdp_real.close(fd);
	if (t == MAP_FAILED)
		return NULL;
	if (from)
		memcpy(t, from, sizeof(*t));
	t->slots = SDP_WHY_SLOTS;
	t->magic = SDP_WHY_MAGIC;
	return t;
}

void sdp_why_init(void)
{
	const char *env = secure_getenv("LIBSDP_WHY");

	if (env && !strcmp(env, "0"))
		return;
	__atomic_store_n(&sdp_why_tab, sdp_why_new(NULL), __ATOMIC_RELEASE);
}

void sdp_why_forked(void)
{
	struct sdp_why_table *old = sdp_why_tab;

	/* the child's own table, its parent's records in it (the sockets
	 * they name are the child's too): the parent's stays the parent's
	 */
	if (!old)
		return;
	__atomic_store_n(&sdp_why_tab, sdp_why_new(old), __ATOMIC_RELEASE);
	munmap(old, sizeof(*old));
}

void sdp_why_note(int fd, enum sdp_why why, int err, unsigned int line,
		  int role)
{
	struct sdp_why_table *t = __atomic_load_n(&sdp_why_tab,
						  __ATOMIC_ACQUIRE);
	struct sdp_why_rec *r = NULL;
	int saved = errno;
	struct stat st;
	uint32_t i, n;

	if (!t || fstat(fd, &st) || !S_ISSOCK(st.st_mode))
		goto out;
	/* the socket's record, if it has one (a decision taken again):
	 * only the slots used so far
	 */
	n = __atomic_load_n(&t->next, __ATOMIC_RELAXED);
	for (i = 0; i < n && i < SDP_WHY_SLOTS; i++)
		if (__atomic_load_n(&t->rec[i].ino, __ATOMIC_ACQUIRE) ==
		    (uint64_t)st.st_ino) {
			r = &t->rec[i];
			break;
		}
	if (!r)
		r = &t->rec[__atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED) %
			    SDP_WHY_SLOTS];
	__atomic_store_n(&r->ino, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&r->why, why, __ATOMIC_RELAXED);
	__atomic_store_n(&r->err, err > 0 && err < 65536 ? err : 0,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->line, line < 65536 ? line : 65535,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->role, role, __ATOMIC_RELAXED);
	__atomic_store_n(&r->ino, (uint64_t)st.st_ino, __ATOMIC_RELEASE);
out:
	errno = saved;
}

enum sdp_why sdp_why_fallback(int err)
{
	switch (err) {
	case ECONNREFUSED:	/* RDMA there, no SDP listener */
	case ECONNRESET:
		return SDP_WHY_REFUSED;
	case ENODEV:		/* no RDMA device for the address */
	case ENXIO:
	case EADDRNOTAVAIL:
	case ENETDOWN:
	case ENETUNREACH:
	case EHOSTUNREACH:
		return SDP_WHY_NO_ROUTE;
	case ETIMEDOUT:
		return SDP_WHY_TIMEOUT;
	case EAFNOSUPPORT:	/* no ib_sdp */
	case EPROTONOSUPPORT:
	case ESOCKTNOSUPPORT:
		return SDP_WHY_NO_SOCKET;
	default:
		return SDP_WHY_FAILED;
	}
}
