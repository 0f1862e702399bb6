/* kbtf.c - named type ids from a BTF file in two sequential reads through one 256 KiB window: the
 * string section, for every offset where a name asked for starts (a type's name_off may point
 * anywhere in it), then the type headers in id order, each skipped by the size its kind and vlen
 * give, until every query is answered. */
#include "capture/kbtf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW (256u << 10)
#define NAME_LEN_MAX 255   /* longer names are not asked for */
#define OFFS_MAX 8         /* offsets kept per name (a deduplicated file has one) */

struct window {
	int fd;
	char *buf;
	uint64_t start;   /* file offset of buf[0] */
	size_t len;
};

/* Makes [off, off + need) readable in w->buf, reading ahead from off; -EPROTO past the end. */
static int window_at(struct window *w, uint64_t off, size_t need, const char **out)
{
	if (off < w->start || off + need > w->start + w->len) {
		size_t got = 0;
		while (got < WINDOW) {
			ssize_t r = pread(w->fd, w->buf + got, WINDOW - got, (off_t)(off + got));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -errno;
			if (r == 0)
				break;
			got += (size_t)r;
		}
		w->start = off;
		w->len = got;
		if (need > got)
			return -EPROTO;
	}
	*out = w->buf + (off - w->start);
	return 0;
}

struct name {
	size_t len;
	uint32_t offs[OFFS_MAX];
	size_t noffs;
};

/* Every offset in the string section [base, base + len) where name[i] and its NUL start. */
static int find_names(struct window *w, uint64_t base, uint32_t len, const struct bt_kbtf_query *q,
		      struct name *names, size_t n)
{
	/* each window overlaps the next by the longest name, so no match is cut in two */
	const size_t overlap = NAME_LEN_MAX + 1;
	for (uint64_t at = 0; at < len;) {
		size_t span = len - at < WINDOW ? (size_t)(len - at) : WINDOW;
		const char *p;
		int err = window_at(w, base + at, span, &p);
		if (err)
			return err;
		for (size_t i = 0; i < n; i++) {
			size_t k = names[i].len + 1;   /* the name and its NUL */
			for (const char *s = p; (size_t)(s - p) + k <= span;) {
				const char *hit = memmem(s, span - (size_t)(s - p), q[i].name, k);
				if (!hit)
					break;
				uint64_t off = at + (uint64_t)(hit - p);
				bool seen = false;
				for (size_t j = 0; j < names[i].noffs; j++)
					seen |= names[i].offs[j] == off;
				if (!seen && names[i].noffs < OFFS_MAX)
					names[i].offs[names[i].noffs++] = (uint32_t)off;
				s = hit + 1;
			}
		}
		if (at + span >= len)
			break;
		at += span > overlap ? span - overlap : span;
	}
	return 0;
}

/* Bytes following a type's 12-byte header, by its kind; -1 for a kind not known here. */
static long type_extra(unsigned kind, unsigned vlen)
{
	switch (kind) {
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return 12;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_DATASEC: case BTF_KIND_ENUM64:
		return 12L * vlen;
	case BTF_KIND_ENUM: case BTF_KIND_FUNC_PROTO:
		return 8L * vlen;
	default:
		return -1;
	}
}

/* Walks the type headers of [base, base + len) in id order, answering the queries. */
static int walk_types(struct window *w, uint64_t base, uint32_t len, struct bt_kbtf_query *q,
		      const struct name *names, size_t n)
{
	size_t open = n;
	int id = 1;
	for (uint64_t at = 0; at < len && open; id++) {
		const char *p;
		int err = window_at(w, base + at, sizeof(struct btf_type), &p);
		if (err)
			return err;
		struct btf_type t;
		memcpy(&t, p, sizeof(t));
		unsigned kind = BTF_INFO_KIND(t.info);
		long extra = type_extra(kind, BTF_INFO_VLEN(t.info));
		if (extra < 0)
			return -EPROTO;
		for (size_t i = 0; i < n; i++) {
			if (q[i].id != -ENOENT || (int)kind != q[i].kind)
				continue;
			for (size_t j = 0; j < names[i].noffs; j++) {
				if (names[i].offs[j] == t.name_off) {
					q[i].id = id;
					open--;
					break;
				}
			}
		}
		at += sizeof(t) + (uint64_t)extra;
	}
	return 0;
}

int bt_kbtf_find(const char *path, struct bt_kbtf_query *q, size_t n)
{
	if (!path || (!q && n))
		return -EINVAL;
	struct name *names = calloc(n ? n : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		q[i].id = -ENOENT;
		names[i].len = q[i].name ? strlen(q[i].name) : 0;
		if (!names[i].len || names[i].len > NAME_LEN_MAX) {
			free(names);
			return -EINVAL;
		}
	}
	struct window w = { .fd = open(path, O_RDONLY | O_CLOEXEC), .buf = malloc(WINDOW) };
	int err = w.fd < 0 ? -errno : !w.buf ? -ENOMEM : 0;
	const char *p;
	struct btf_header h;
	if (!err && !(err = window_at(&w, 0, sizeof(h), &p))) {
		memcpy(&h, p, sizeof(h));
		if (h.magic != BTF_MAGIC || h.hdr_len < sizeof(h))
			err = -EPROTO;
	}
	if (!err)
		err = find_names(&w, (uint64_t)h.hdr_len + h.str_off, h.str_len, q, names, n);
	if (!err)
		err = walk_types(&w, (uint64_t)h.hdr_len + h.type_off, h.type_len, q, names, n);
	if (w.fd >= 0)
		close(w.fd);
	free(w.buf);
	free(names);
	return err;
}
