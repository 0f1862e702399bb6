/* kallsyms.c - /proc/kallsyms parsed in two passes (validate and size, then fill) into one sorted
 * array whose names and interned module names share a single string arena. */
#include "kernel/kallsyms.h"
#include "base/htab.h"
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* /proc/kallsyms is a few MiB even with many modules; anything far larger is not kallsyms. */
#define KALLSYMS_FILE_MAX (256u << 20)

struct ent {
	struct bt_ksym sym;  /* first, so lookups hand out &ent->sym */
	uint8_t bind;        /* 2 global, 1 weak, 0 local: the alias preference */
	uint8_t unders;      /* leading underscores, capped */
};

struct bt_kallsyms {
	struct ent *ents;
	size_t n;
	char *arena;
	size_t arena_bytes;
};

struct kline {
	uint64_t addr;
	char type;
	const char *name, *mod;
	size_t namelen, modlen;  /* modlen 0: the kernel image */
};

static bool is_hex(char c, unsigned *v)
{
	if (c >= '0' && c <= '9')
		*v = (unsigned)(c - '0');
	else if (c >= 'a' && c <= 'f')
		*v = (unsigned)(c - 'a' + 10);
	else if (c >= 'A' && c <= 'F')
		*v = (unsigned)(c - 'A' + 10);
	else
		return false;
	return true;
}

static bool is_word(char c)
{
	return (unsigned char)c > ' ' && (unsigned char)c != 0x7f;
}

/* One line without its newline: "ADDR TYPE NAME" with an optional "\t[MODULE]". */
static int parse_line(const char *p, size_t len, struct kline *out)
{
	const char *end = p + len;
	unsigned v;
	size_t digits = 0;

	if (len > BT_KALLSYMS_LINE_MAX)
		return -EINVAL;
	out->addr = 0;
	while (p < end && is_hex(*p, &v)) {
		if (++digits > 16)
			return -EINVAL;
		out->addr = out->addr << 4 | v;
		p++;
	}
	if (!digits || p == end || *p != ' ')
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	if (p == end || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return -EINVAL;
	out->type = *p++;
	if (p == end || *p != ' ')
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	out->name = p;
	while (p < end && is_word(*p))
		p++;
	out->namelen = (size_t)(p - out->name);
	if (!out->namelen)
		return -EINVAL;
	out->mod = NULL;
	out->modlen = 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '[') {
		out->mod = ++p;
		while (p < end && is_word(*p) && *p != ']')
			p++;
		out->modlen = (size_t)(p - out->mod);
		if (!out->modlen || p == end || *p != ']')
			return -EINVAL;
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	/* tolerate a file that went through a CRLF conversion */
	if (p < end && *p == '\r')
		p++;
	return p == end ? 0 : -EINVAL;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

typedef int (*line_fn)(void *ctx, const struct kline *l);

/* Calls fn for every text symbol line; empty lines are skipped, a missing final newline is fine. */
static int for_each_text_line(const char *buf, size_t len, line_fn fn, void *ctx)
{
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		if (llen) {
			struct kline l;
			int err = parse_line(buf + pos, llen, &l);
			if (err)
				return err;
			if (is_text(l.type) && (err = fn(ctx, &l)))
				return err;
		}
		pos += llen + 1;
	}
	return 0;
}

struct sizing {
	size_t n, bytes;
	bool nonzero;
};

static int size_line(void *ctx, const struct kline *l)
{
	struct sizing *s = ctx;
	s->n++;
	/* a module name counts in full on every line: an upper bound, since it is stored once */
	s->bytes += l->namelen + 1 + (l->modlen ? l->modlen + 1 : 0);
	if (l->addr)
		s->nonzero = true;
	return 0;
}

struct filler {
	struct bt_kallsyms *ks;
	size_t used;
	struct bt_htab mods;  /* interned module names: value is the arena offset */
	const char *last_mod; /* the previous line's module, as most lines repeat it */
	size_t last_len;
	const char *last_interned;
};

struct modkey {
	const char *s;
	size_t n;
};

static bool mod_eq(void *ctx, uint64_t val, const void *key)
{
	const char *arena = ctx;
	const struct modkey *k = key;
	const char *s = arena + val;
	return strncmp(s, k->s, k->n) == 0 && s[k->n] == '\0';
}

static const char *arena_put(struct filler *f, const char *s, size_t n)
{
	char *dst = f->ks->arena + f->used;
	memcpy(dst, s, n);
	dst[n] = '\0';
	f->used += n + 1;
	return dst;
}

static int intern_mod(struct filler *f, const char *mod, size_t n, const char **out)
{
	if (f->last_mod && f->last_len == n && memcmp(f->last_mod, mod, n) == 0) {
		*out = f->last_interned;
		return 0;
	}
	struct modkey key = { mod, n };
	uint32_t h = bt_hash_bytes(mod, n, 0);
	uint64_t *v = bt_htab_find(&f->mods, h, mod_eq, f->ks->arena, &key);
	if (v) {
		*out = f->ks->arena + *v;
	} else {
		uint64_t off = f->used;
		int err = bt_htab_insert(&f->mods, h, off);
		if (err)
			return err;
		*out = arena_put(f, mod, n);
	}
	f->last_mod = mod;
	f->last_len = n;
	f->last_interned = *out;
	return 0;
}

static int fill_line(void *ctx, const struct kline *l)
{
	struct filler *f = ctx;
	struct ent *e = &f->ks->ents[f->ks->n];
	e->sym.addr = l->addr;
	e->sym.name = arena_put(f, l->name, l->namelen);
	e->sym.module = NULL;
	if (l->modlen) {
		int err = intern_mod(f, l->mod, l->modlen, &e->sym.module);
		if (err)
			return err;
	}
	e->bind = l->type == 'T' ? 2 : (l->type == 'W' || l->type == 'w') ? 1 : 0;
	size_t u = 0;
	while (u < l->namelen && l->name[u] == '_')
		u++;
	e->unders = u > 255 ? 255 : (uint8_t)u;
	f->ks->n++;
	return 0;
}

/* Ascending address; within one address the preferred alias sorts last, so that the binary search
 * for the last symbol at or below an address lands on it directly. */
static int ent_cmp(const void *pa, const void *pb)
{
	const struct ent *a = pa, *b = pb;
	if (a->sym.addr != b->sym.addr)
		return a->sym.addr < b->sym.addr ? -1 : 1;
	if (a->bind != b->bind)
		return a->bind < b->bind ? -1 : 1;
	if (a->unders != b->unders)
		return a->unders > b->unders ? -1 : 1;
	return -strcmp(a->sym.name, b->sym.name);
}

int bt_kallsyms_parse(const char *buf, size_t len, struct bt_kallsyms **out)
{
	if (!out || (!buf && len))
		return -EINVAL;
	*out = NULL;
	struct sizing sz = { 0 };
	int err = for_each_text_line(buf, len, size_line, &sz);
	if (err)
		return err;
	if (!sz.n)
		return -ENODATA;
	if (!sz.nonzero)
		return -EACCES;

	struct bt_kallsyms *ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	ks->ents = malloc(sz.n * sizeof(*ks->ents));
	ks->arena = malloc(sz.bytes);
	ks->arena_bytes = sz.bytes;
	if (!ks->ents || !ks->arena) {
		bt_kallsyms_free(ks);
		return -ENOMEM;
	}
	struct filler f = { .ks = ks };
	bt_htab_init(&f.mods);
	err = for_each_text_line(buf, len, fill_line, &f);
	bt_htab_free(&f.mods);
	if (err) {
		bt_kallsyms_free(ks);
		return err;
	}
	qsort(ks->ents, ks->n, sizeof(*ks->ents), ent_cmp);
	*out = ks;
	return 0;
}

static int read_all(int fd, char **out, size_t *outlen)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap >= KALLSYMS_FILE_MAX) {
				free(buf);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

int bt_kallsyms_load(const char *root, struct bt_kallsyms **out)
{
	char path[4096];
	if (!out)
		return -EINVAL;
	*out = NULL;
	int n = snprintf(path, sizeof(path), "%s/proc/kallsyms", root ? root : "");
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	/* A FIFO planted under a test root must not hang the load: refused before it is opened. */
	int fd = bt_open_regular(AT_FDCWD, path, 0, NULL);
	if (fd < 0)
		return fd;
	char *buf = NULL;
	size_t len = 0;
	int err = read_all(fd, &buf, &len);
	close(fd);
	if (err)
		return err;
	err = bt_kallsyms_parse(buf, len, out);
	free(buf);
	return err;
}

void bt_kallsyms_free(struct bt_kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->ents);
	free(ks->arena);
	free(ks);
}

size_t bt_kallsyms_count(const struct bt_kallsyms *ks)
{
	return ks ? ks->n : 0;
}

const struct bt_ksym *bt_kallsyms_lookup(const struct bt_kallsyms *ks, uint64_t addr, uint64_t *off)
{
	if (!ks || !ks->n || addr < ks->ents[0].sym.addr)
		return NULL;
	/* the last entry whose address is <= addr */
	size_t lo = 0, hi = ks->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ks->ents[mid].sym.addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct bt_ksym *s = &ks->ents[lo].sym;
	if (addr - s->addr > BT_KALLSYMS_MAX_GAP)
		return NULL;
	if (off)
		*off = addr - s->addr;
	return s;
}

uint64_t bt_kallsyms_addr(const struct bt_kallsyms *ks, const char *name)
{
	if (!ks || !name)
		return 0;
	for (size_t i = 0; i < ks->n; i++)
		if (strcmp(ks->ents[i].sym.name, name) == 0)
			return ks->ents[i].sym.addr;
	return 0;
}

size_t bt_kallsyms_bytes(const struct bt_kallsyms *k)
{
	return k ? sizeof(*k) + k->n * sizeof(*k->ents) + k->arena_bytes : 0;
}
