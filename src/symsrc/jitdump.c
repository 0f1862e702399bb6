/* jitdump.c - jitdump parsing: the file header (either byte order), then records one after another;
 * a code load names [code_addr, code_addr + code_size), a move names the new range with the name of
 * its code_index. Debug info, unwinding info and unknown records are skipped by their size. */
#include "symsrc/jitdump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HDR_LEN 40   /* magic, version, total_size, elf_mach, pad1, pid, timestamp, flags */
#define REC_HDR 16   /* id, total_size, timestamp */
#define LOAD_FIXED (REC_HDR + 40)  /* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_LEN (REC_HDR + 48)    /* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */

void bt_jitdump_init(struct bt_jitdump *d)
{
	memset(d, 0, sizeof(*d));
	bt_htab_init(&d->index);
}

void bt_jitdump_free(struct bt_jitdump *d)
{
	free(d->codes);
	bt_htab_free(&d->index);
	memset(d, 0, sizeof(*d));
}

static uint32_t rd32(const struct bt_jitdump *d, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return d->swapped ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct bt_jitdump *d, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return d->swapped ? __builtin_bswap64(v) : v;
}

static bool code_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_jitdump *d = ctx;
	return d->codes[val].index == *(const uint64_t *)key;
}

/* The header: 1 taken, 0 not all here yet, -EINVAL not a jitdump. */
static int take_header(struct bt_jitdump *d, const uint8_t *buf, size_t len, size_t *pos)
{
	if (len < HDR_LEN)
		return 0;
	uint32_t magic;
	memcpy(&magic, buf, 4);
	if (magic == __builtin_bswap32(BT_JITDUMP_MAGIC))
		d->swapped = true;
	else if (magic != BT_JITDUMP_MAGIC)
		return -EINVAL;
	uint32_t size = rd32(d, buf + 8);
	if (size < HDR_LEN || size > BT_JITDUMP_HEADER_MAX)
		return -EINVAL;
	if (len < size)
		return 0;
	d->have_header = true;
	*pos = size;
	return 1;
}

/* A load: its name (NUL-terminated inside the record and inside buf) for its range. */
static int take_load(struct bt_jitdump *d, const uint8_t *r, size_t rlen, size_t inbuf, struct bt_perfmap *out)
{
	size_t lim = rlen < inbuf ? rlen : inbuf;
	const uint8_t *nul = lim > LOAD_FIXED ? memchr(r + LOAD_FIXED, '\0', lim - LOAD_FIXED) : NULL;
	if (!nul)
		return 0;
	uint64_t addr = rd64(d, r + REC_HDR + 16), size = rd64(d, r + REC_HDR + 24);
	uint64_t index = rd64(d, r + REC_HDR + 32);
	const char *name = (const char *)r + LOAD_FIXED;
	size_t nlen = (size_t)(nul - (r + LOAD_FIXED));
	int ok = bt_perfmap_add(out, addr, size, name, nlen);
	if (ok <= 0)
		return ok;
	size_t need = d->ncodes + 1;
	if (need > d->codes_cap) {
		size_t cap = d->codes_cap ? 2 * d->codes_cap : 64;
		void *v = realloc(d->codes, cap * sizeof(*d->codes));
		if (!v)
			return -ENOMEM;
		d->codes = v;
		d->codes_cap = cap;
	}
	uint32_t h = bt_hash_u64(index);
	uint64_t *slot = bt_htab_find(&d->index, h, code_eq, d, &index);
	d->codes[d->ncodes] = (struct bt_jitdump_code){ .index = index,
							.name_off = out->raw[out->nraw - 1].name_off };
	if (slot) {
		*slot = d->ncodes;  /* the index loaded again: its newest name */
	} else if (bt_htab_insert(&d->index, h, d->ncodes)) {
		return -ENOMEM;
	}
	d->ncodes++;
	return 1;
}

/* A move: the code of code_index, named as it was loaded, now at new_code_addr. */
static int take_move(struct bt_jitdump *d, const uint8_t *r, size_t rlen, size_t inbuf,
		     struct bt_perfmap *out)
{
	if (rlen < MOVE_LEN || inbuf < MOVE_LEN)
		return 0;
	uint64_t to = rd64(d, r + REC_HDR + 24), size = rd64(d, r + REC_HDR + 32);
	uint64_t index = rd64(d, r + REC_HDR + 40);
	uint64_t *slot = bt_htab_find(&d->index, bt_hash_u64(index), code_eq, d, &index);
	if (!slot)
		return 0;
	/* copied first: adding may move the table's names */
	char name[BT_PERFMAP_LINE_MAX + 1];
	size_t nlen = strnlen(out->names + d->codes[*slot].name_off, BT_PERFMAP_LINE_MAX);
	memcpy(name, out->names + d->codes[*slot].name_off, nlen);
	return bt_perfmap_add(out, to, size, name, nlen);
}

int bt_jitdump_parse(struct bt_jitdump *d, const uint8_t *buf, size_t len, uint64_t avail,
		     struct bt_perfmap *out, size_t *used)
{
	size_t pos = 0;
	int err = 0;
	if (avail < len)
		avail = len;
	if (!d->have_header && !d->error) {
		int r = take_header(d, buf, len, &pos);
		if (r < 0)
			d->error = r;
	}
	while (d->have_header && !d->error && !out->truncated && pos + REC_HDR <= len) {
		const uint8_t *r = buf + pos;
		uint32_t id = rd32(d, r), size = rd32(d, r + 4);
		if (size < REC_HDR || size > BT_JITDUMP_RECORD_MAX) {
			d->error = -EBADMSG;
			break;
		}
		if (pos + size > avail)
			break;   /* still being written */
		size_t inbuf = len - pos;
		/* Its fields or name beyond buf: read again from here, unless it is at the start of buf
		 * already (then it can never fit, and is taken as it is: a record that names nothing). */
		bool cut = size > inbuf && ((id == BT_JITDUMP_CODE_MOVE && inbuf < MOVE_LEN) ||
					    (id == BT_JITDUMP_CODE_LOAD && (inbuf < LOAD_FIXED ||
					     !memchr(r + LOAD_FIXED, '\0', inbuf - LOAD_FIXED))));
		if (cut && pos > 0)
			break;
		int took = 0;
		if (id == BT_JITDUMP_CODE_LOAD) {
			d->loads++;
			took = take_load(d, r, size, inbuf, out);
		} else if (id == BT_JITDUMP_CODE_MOVE) {
			d->moves++;
			took = take_move(d, r, size, inbuf, out);
		} else {
			d->others++;
			took = 1;
		}
		if (took < 0) {
			err = took;
			break;
		}
		d->bad_records += took == 0;
		pos += size;
	}
	if (d->error == -EINVAL && !err)
		err = -EINVAL;
	else if (d->error == -EBADMSG && !err)
		err = -EBADMSG;
	d->bytes += pos;
	if (used)
		*used = pos;
	return err;
}

int bt_jitdump_read_fd(struct bt_jitdump *d, int fd, struct bt_perfmap *out)
{
	size_t cap = 1u << 20;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	int err = 0;
	while (!d->error && !out->truncated) {
		struct stat st;
		if (fstat(fd, &st) != 0) {
			err = -errno;
			break;
		}
		if ((uint64_t)st.st_size <= d->bytes)
			break;
		uint64_t avail = (uint64_t)st.st_size - d->bytes;
		ssize_t n = pread(fd, buf, avail < cap ? (size_t)avail : cap, (off_t)d->bytes);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		size_t used = 0;
		err = bt_jitdump_parse(d, buf, (size_t)n, avail, out, &used);
		if (err || used == 0)
			break;
	}
	free(buf);
	return err;
}
