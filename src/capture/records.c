/* records.c - what a well-formed ring buffer record is, checked once for the capture loop and the
 * session alike, so that no consumer trusts a count or a string the check has not seen. */
#include "capture/records.h"

#include <stdint.h>
#include <string.h>

static const uint32_t min_size[BT_REC_TYPE_MAX] = {
	[BT_REC_SAMPLE] = offsetof(struct bt_rec_sample, ips),  /* then kern_n + user_n ips */
	[BT_REC_EXEC] = sizeof(struct bt_rec_exec),
	[BT_REC_FORK] = sizeof(struct bt_rec_fork),
	[BT_REC_EXIT] = sizeof(struct bt_rec_exit),
	[BT_REC_MMAP] = sizeof(struct bt_rec_mapping),
	[BT_REC_MUNMAP] = sizeof(struct bt_rec_munmap),
	[BT_REC_VMA] = sizeof(struct bt_rec_mapping),
	[BT_REC_MODULE] = sizeof(struct bt_rec_module),
	[BT_REC_USTACK] = sizeof(struct bt_rec_ustack),
	[BT_REC_DLSTATE] = sizeof(struct bt_rec_exit),
	[BT_REC_KSYM] = sizeof(struct bt_rec_ksym),
	[BT_REC_PYSTACK] = offsetof(struct bt_rec_pystack, frames),  /* then n frames */
	[BT_REC_UCONT] = sizeof(struct bt_rec_ucont),                 /* then len stack bytes */
	/* then kern_n + user_n ips */
	[BT_REC_OFFCPU_STACK] = offsetof(struct bt_rec_offcpu_stack, s) + offsetof(struct bt_rec_sample, ips),
	[BT_REC_OFFCPU] = sizeof(struct bt_rec_offcpu),
};

size_t bt_rec_min_size(unsigned type)
{
	return type < BT_REC_TYPE_MAX ? min_size[type] : 0;
}

static bool has_nul(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

/* The counts inside a record stay within its arrays and its strings are terminated, so consumers
 * can use them as they are. h->size is at least the type's size. */
static bool fields_valid(const struct bt_rec_hdr *h)
{
	switch (h->type) {
	case BT_REC_SAMPLE: {
		const struct bt_rec_sample *s = (const void *)h;
		unsigned n = (unsigned)s->kern_n + s->user_n;
		return n <= 2 * BT_MAX_STACK && h->size >= offsetof(struct bt_rec_sample, ips) + n * 8 &&
		       has_nul(s->comm, BT_COMM_LEN);
	}
	case BT_REC_EXEC: {
		const struct bt_rec_exec *e = (const void *)h;
		return has_nul(e->comm, BT_COMM_LEN) && has_nul(e->filename, BT_PATH_MAX);
	}
	case BT_REC_FORK:
		return has_nul(((const struct bt_rec_fork *)h)->comm, BT_COMM_LEN);
	case BT_REC_MMAP:
	case BT_REC_VMA: {
		const struct bt_rec_mapping *m = (const void *)h;
		return m->build_id_len <= BT_BUILD_ID_MAX && m->path_len <= BT_PATH_MAX &&
		       has_nul(m->path, BT_PATH_MAX) &&
		       (!m->path_len || m->path[m->path_len - 1] == '\0');
	}
	case BT_REC_MODULE: {
		const struct bt_rec_module *m = (const void *)h;
		return m->build_id_len <= BT_BUILD_ID_MAX && has_nul(m->name, BT_MODNAME_LEN);
	}
	case BT_REC_KSYM:
		return has_nul(((const struct bt_rec_ksym *)h)->name, BT_KSYM_NAME_LEN);
	case BT_REC_PYSTACK: {
		const struct bt_rec_pystack *p = (const void *)h;
		return p->n <= BT_PY_MAX_FRAMES && p->walk < BT_PY_WALK_MAX &&
		       h->size >= offsetof(struct bt_rec_pystack, frames) + p->n * sizeof(struct bt_py_frame);
	}
	case BT_REC_UCONT:
		return ((const struct bt_rec_ucont *)h)->len <= h->size - sizeof(struct bt_rec_ucont) &&
		       ((const struct bt_rec_ucont *)h)->len <= BT_UCONT_BYTES;
	case BT_REC_OFFCPU_STACK: {
		const struct bt_rec_offcpu_stack *d = (const void *)h;
		size_t off = offsetof(struct bt_rec_offcpu_stack, s);
		unsigned n = (unsigned)d->s.kern_n + d->s.user_n;
		return n <= 2 * BT_MAX_STACK && h->size >= off + offsetof(struct bt_rec_sample, ips) + n * 8 &&
		       has_nul(d->s.comm, BT_COMM_LEN);
	}
	case BT_REC_OFFCPU:
		return ((const struct bt_rec_offcpu *)h)->state < BT_OFFCPU_NSTATES;
	case BT_REC_USTACK:
		return ((const struct bt_rec_ustack *)h)->len <= h->size - sizeof(struct bt_rec_ustack) &&
		       ((const struct bt_rec_ustack *)h)->len <= BT_USTACK_MAX;
	default:
		return true;
	}
}

bool bt_rec_valid(const struct bt_rec_hdr *h, size_t len)
{
	if (!h || len < sizeof(*h) || h->version != BT_PROTO_VERSION)
		return false;
	size_t min = bt_rec_min_size(h->type);
	return min && h->size <= len && h->size >= min && fields_valid(h);
}
