// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdp: why each socket is on SDP or on TCP, recorded for sdpstat --why
 * (the table's format and how it is read: why_table.h).
 *
 * The table is made at the first record: a memfd mapped shared, its
 * descriptor closed at once, so the program never sees a descriptor of
 * libsdp's there.  Records are claimed and written with atomics, without
 * sdp_lock(): a child after fork() writes into the same table.  If the
 * table cannot be made, nothing is recorded and nothing fails.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "real.h"
#include "why.h"

static struct sdp_why_table *sdp_why_tab;

static struct sdp_why_table *sdp_why_table(void)
{
	struct sdp_why_table *t, *old = NULL;
	int fd;

	t = __atomic_load_n(&sdp_why_tab, __ATOMIC_ACQUIRE);
	if (t)
		return t == MAP_FAILED ? NULL : t;
	fd = memfd_create(SDP_WHY_NAME, MFD_CLOEXEC);
	if (fd < 0) {
		t = MAP_FAILED;
	} else {
		if (ftruncate(fd, sizeof(*t)))
			t = MAP_FAILED;
		else
			t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
		sdp_real.close(fd);
	}
	if (t != MAP_FAILED) {
		t->slots = SDP_WHY_SLOTS;
		__atomic_store_n(&t->magic, SDP_WHY_MAGIC, __ATOMIC_RELEASE);
	}
	/* another thread may have made one meanwhile: keep the first */
	if (!__atomic_compare_exchange_n(&sdp_why_tab, &old, t, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (t != MAP_FAILED)
			munmap(t, sizeof(*t));
		t = old;
	}
	return t == MAP_FAILED ? NULL : t;
}

void sdp_why_note(int fd, enum sdp_why why, int err, unsigned int line,
		  int role)
{
	struct sdp_why_table *t;
	struct sdp_why_rec *r = NULL;
	int saved = errno;
	struct stat st;
	uint32_t i;

	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode))
		goto out;
	t = sdp_why_table();
	if (!t)
		goto out;
	/* the socket's record, if it has one (a decision taken again) */
	for (i = 0; i < SDP_WHY_SLOTS; i++)
		if (__atomic_load_n(&t->rec[i].ino, __ATOMIC_ACQUIRE) ==
		    (uint64_t)st.st_ino) {
			r = &t->rec[i];
			break;
		}
	if (!r)
		r = &t->rec[__atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED) %
			    SDP_WHY_SLOTS];
	__atomic_store_n(&r->ino, 0, __ATOMIC_RELEASE);
	r->why = why;
	r->err = err > 0 && err < 65536 ? err : 0;
	r->line = line < 65536 ? line : 0;
	r->role = role;
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
