/* ehtfile.c - the compiled table's file: a fixed header (magic, version, build-id, counts, base,
 * the load layout, a checksum), then the rules, then the rows, in this machine's byte order. */
#include "elf/ehtfile.h"
#include "base/wfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "BTUNWTB\n"
#define VERSION 1

struct file_load {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags;
	uint32_t pad;
};

struct file_head {
	char magic[8];
	uint32_t version;
	uint32_t head_size;
	uint8_t bid_len;
	uint8_t debug_frame;
	uint16_t elf_type;
	uint8_t bid[BT_BUILD_ID_MAX];
	uint32_t nrules, nrows;
	uint32_t fdes, bad;
	uint64_t base;
	uint32_t nload;
	uint32_t pad;
	struct file_load load[BT_ELF_MAX_LOADS];
	uint64_t checksum;   /* FNV-1a of the whole file, this field taken as 0 */
};
_Static_assert(sizeof(struct file_head) == 72 + 40 * BT_ELF_MAX_LOADS + 8, "file_head size");

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_SEED 0xcbf29ce484222325ULL

static uint64_t checksum(const struct file_head *h, const struct bt_unw_rule *rules, const struct bt_unw_row *rows)
{
	struct file_head z = *h;
	z.checksum = 0;
	uint64_t c = fnv(FNV_SEED, &z, sizeof(z));
	c = fnv(c, rules, (size_t)h->nrules * sizeof(*rules));
	return fnv(c, rows, (size_t)h->nrows * sizeof(*rows));
}

int bt_ehtfile_write(int fd, const uint8_t *bid, size_t len, const struct bt_ehtable *t,
		     const struct bt_elf_layout *lay)
{
	if (!bid || !len || len > BT_BUILD_ID_MAX || !t || !lay || !t->n || !t->nrules ||
	    t->n > BT_UNW_ROWS_MAX || t->nrules > BT_UNW_RULES_MAX || lay->nload > BT_ELF_MAX_LOADS)
		return -EINVAL;
	struct file_head h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	h.version = VERSION;
	h.head_size = sizeof(h);
	h.bid_len = (uint8_t)len;
	memcpy(h.bid, bid, len);
	h.debug_frame = t->debug_frame;
	h.elf_type = lay->type;
	h.nrules = (uint32_t)t->nrules;
	h.nrows = (uint32_t)t->n;
	h.fdes = t->fdes > UINT32_MAX ? UINT32_MAX : (uint32_t)t->fdes;
	h.bad = t->bad > UINT32_MAX ? UINT32_MAX : (uint32_t)t->bad;
	h.base = t->base;
	h.nload = lay->nload;
	for (unsigned i = 0; i < lay->nload; i++)
		h.load[i] = (struct file_load){ lay->load[i].vaddr, lay->load[i].offset, lay->load[i].filesz,
						lay->load[i].memsz, lay->load[i].flags, 0 };
	h.checksum = checksum(&h, t->rules, t->rows);
	if (lseek(fd, 0, SEEK_SET) != 0)
		return -errno;
	int err = bt_write_all(fd, &h, sizeof(h));
	if (!err)
		err = bt_write_all(fd, t->rules, t->nrules * sizeof(*t->rules));
	if (!err)
		err = bt_write_all(fd, t->rows, t->n * sizeof(*t->rows));
	return err;
}

/* Where a table is read from: a file, or bytes in memory. */
struct src {
	int fd;
	const uint8_t *buf;
	size_t size;
};

static int get(const struct src *s, uint64_t off, void *dst, size_t n)
{
	if (off > s->size || n > s->size - off)
		return -EBADMSG;
	if (s->buf) {
		memcpy(dst, s->buf + off, n);
		return 0;
	}
	char *d = dst;
	while (n) {
		ssize_t r = pread(s->fd, d, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EBADMSG;
		d += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static bool head_ok(const struct file_head *h, uint64_t size, const uint8_t *bid, size_t len)
{
	return !memcmp(h->magic, MAGIC, sizeof(h->magic)) && h->version == VERSION &&
	       h->head_size == sizeof(*h) && h->bid_len == len && !memcmp(h->bid, bid, len) &&
	       h->nrules >= 1 && h->nrules <= BT_UNW_RULES_MAX && h->nrows >= 1 &&
	       h->nrows <= BT_UNW_ROWS_MAX && h->nload <= BT_ELF_MAX_LOADS && h->debug_frame <= 1 &&
	       size == sizeof(*h) + (uint64_t)h->nrules * sizeof(struct bt_unw_rule) +
			       (uint64_t)h->nrows * sizeof(struct bt_unw_row);
}

/* What the compiler can give and the walker reads: rule 0 is no CFI, kinds are known ones, rows
 * ascend and each names another rule than the one before, the last one none. */
static bool body_ok(const struct bt_ehtable *t)
{
	if (t->rules[0].cfa != BT_UNW_NONE || t->rows[t->n - 1].rule != 0)
		return false;
	for (size_t i = 0; i < t->nrules; i++) {
		const struct bt_unw_rule *r = &t->rules[i];
		if (r->cfa > BT_UNW_SIGNAL || r->rbp > BT_UNW_RBP_LOST || r->rbx > BT_UNW_RBP_LOST)
			return false;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct bt_unw_row *r = &t->rows[i];
		if (r->rule >= t->nrules || (i && (r->pc <= t->rows[i - 1].pc || r->rule == t->rows[i - 1].rule)))
			return false;
	}
	return true;
}

static int load(const struct src *s, const uint8_t *bid, size_t len, struct bt_ehtable *t,
		struct bt_elf_layout *lay)
{
	memset(t, 0, sizeof(*t));
	struct file_head h;
	int err = get(s, 0, &h, sizeof(h));
	if (err)
		return err;
	if (!bid || !len || len > BT_BUILD_ID_MAX || !head_ok(&h, s->size, bid, len))
		return -EBADMSG;
	t->rules = malloc((size_t)h.nrules * sizeof(*t->rules));
	t->rows = malloc((size_t)h.nrows * sizeof(*t->rows));
	if (!t->rules || !t->rows) {
		bt_ehtable_free(t);
		return -ENOMEM;
	}
	t->nrules = h.nrules;
	t->n = h.nrows;
	size_t rb = t->nrules * sizeof(*t->rules);
	err = get(s, sizeof(h), t->rules, rb);
	if (!err)
		err = get(s, sizeof(h) + rb, t->rows, t->n * sizeof(*t->rows));
	if (!err && (checksum(&h, t->rules, t->rows) != h.checksum || !body_ok(t)))
		err = -EBADMSG;
	if (err) {
		bt_ehtable_free(t);
		return err;
	}
	t->base = h.base;
	t->fdes = h.fdes;
	t->bad = h.bad;
	t->debug_frame = h.debug_frame;
	memset(lay, 0, sizeof(*lay));
	lay->type = h.elf_type;
	lay->nload = (uint16_t)h.nload;
	for (unsigned i = 0; i < h.nload; i++)
		lay->load[i] = (struct bt_elf_load){ h.load[i].vaddr, h.load[i].offset, h.load[i].filesz,
						     h.load[i].memsz, h.load[i].flags };
	return 0;
}

int bt_ehtfile_read(int fd, const uint8_t *bid, size_t len, struct bt_ehtable *t, struct bt_elf_layout *lay)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADMSG;
	struct src s = { .fd = fd, .size = (size_t)st.st_size };
	return load(&s, bid, len, t, lay);
}

int bt_ehtfile_parse(const void *buf, size_t n, const uint8_t *bid, size_t len, struct bt_ehtable *t,
		     struct bt_elf_layout *lay)
{
	struct src s = { .fd = -1, .buf = buf, .size = n };
	return load(&s, bid, len, t, lay);
}
