/* kallsyms.c - /proc/kallsyms parsed in one pass, as it is read, into one sorted array whose names
 * and interned module names share a single string arena. The file lists the kernel image in address
 * order, so sorting is mostly merging in the modules. */
#include "kernel/kallsyms.h"
#include "base/grow.h"
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
	union {
		struct bt_ksym sym;  /* first, so lookups hand out &ent->sym */
		struct {             /* while parsing, before the arena stops moving */
			uint64_t addr;
			size_t name_off; /* in the arena */
			size_t mod_off;  /* in the arena, plus 1; 0: the kernel image */
		} raw;
	};
	uint8_t bind;        /* 2 global, 1 weak, 0 local: the alias preference */
	uint8_t unders;      /* leading underscores, capped */
};
_Static_assert(sizeof(((struct ent *)0)->raw) == sizeof(struct bt_ksym), "raw overlays sym");

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

/* The arrays being built: they grow as lines come, so names are arena offsets until the end. */
struct builder {
	struct ent *ents;
	size_t n, cap;
	char *arena;
	size_t used, acap;
	struct bt_htab mods;  /* interned module names: value is the arena offset */
	size_t last_off;      /* the previous line's module (arena offset + 1; 0 none), as most */
	size_t last_len;      /* lines repeat it */
	bool nonzero;
};

static int arena_put(struct builder *b, const char *s, size_t n, size_t *off)
{
	int err = bt_grow((void **)&b->arena, &b->acap, b->used + n + 1, 1, 1u << 20);
	if (err)
		return err;
	memcpy(b->arena + b->used, s, n);
	b->arena[b->used + n] = '\0';
	*off = b->used;
	b->used += n + 1;
	return 0;
}

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

/* The module name's arena offset plus 1, stored once per module. */
static int intern_mod(struct builder *b, const char *mod, size_t n, size_t *out)
{
	if (b->last_off && b->last_len == n && memcmp(b->arena + b->last_off - 1, mod, n) == 0) {
		*out = b->last_off;
		return 0;
	}
	struct modkey key = { mod, n };
	uint32_t h = bt_hash_bytes(mod, n, 0);
	uint64_t *v = bt_htab_find(&b->mods, h, mod_eq, b->arena, &key);
	size_t off;
	if (v) {
		off = (size_t)*v;
	} else {
		int err = arena_put(b, mod, n, &off);
		if (err || (err = bt_htab_insert(&b->mods, h, off)))
			return err;
	}
	b->last_off = off + 1;
	b->last_len = n;
	*out = off + 1;
	return 0;
}

static int add_line(struct builder *b, const struct kline *l)
{
	int err = bt_grow((void **)&b->ents, &b->cap, b->n + 1, sizeof(*b->ents), 1u << 14);
	if (err)
		return err;
	struct ent *e = &b->ents[b->n];
	e->raw.addr = l->addr;
	e->raw.mod_off = 0;
	if ((err = arena_put(b, l->name, l->namelen, &e->raw.name_off)) ||
	    (l->modlen && (err = intern_mod(b, l->mod, l->modlen, &e->raw.mod_off))))
		return err;
	e->bind = l->type == 'T' ? 2 : (l->type == 'W' || l->type == 'w') ? 1 : 0;
	size_t u = 0;
	while (u < l->namelen && l->name[u] == '_')
		u++;
	e->unders = u > 255 ? 255 : (uint8_t)u;
	if (l->addr)
		b->nonzero = true;
	b->n++;
	return 0;
}

/* Takes the whole lines of buf; *used says how far. A line cut at the end is left for the next
 * call, unless last (a missing final newline is fine). Empty lines are skipped. */
static int feed(struct builder *b, const char *buf, size_t len, bool last, size_t *used)
{
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		if (!nl && !last)
			break;
		size_t llen = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		if (llen) {
			struct kline l;
			int err = parse_line(buf + pos, llen, &l);
			if (err)
				return err;
			if (is_text(l.type) && (err = add_line(b, &l)))
				return err;
		}
		pos += llen + 1;
	}
	*used = pos < len ? pos : len;
	/* what is left must still be able to become a line */
	return len - *used > BT_KALLSYMS_LINE_MAX ? -EINVAL : 0;
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

/* Sorts by ent_cmp. The part already in address order (the kernel image) only has its aliases
 * ordered; the rest (modules, BPF programs) is sorted and merged into it. */
static void sort_ents(struct ent *e, size_t n)
{
	size_t k = 1;
	while (k < n && e[k].sym.addr >= e[k - 1].sym.addr)
		k++;
	for (size_t i = 0; i < k;) {
		size_t j = i + 1;
		while (j < k && e[j].sym.addr == e[i].sym.addr)
			j++;
		if (j - i > 1)
			qsort(&e[i], j - i, sizeof(*e), ent_cmp);
		i = j;
	}
	if (k >= n)
		return;
	size_t m = n - k;
	qsort(&e[k], m, sizeof(*e), ent_cmp);
	struct ent *t = malloc(m * sizeof(*t));
	if (!t) {
		qsort(e, n, sizeof(*e), ent_cmp);
		return;
	}
	memcpy(t, &e[k], m * sizeof(*t));
	/* merged from the back: the prefix's entries move up into the room the tail left */
	size_t i = k, j = m, o = n;
	while (j > 0) {
		if (i > 0 && ent_cmp(&e[i - 1], &t[j - 1]) > 0)
			e[--o] = e[--i];
		else
			e[--o] = t[--j];
	}
	free(t);
}

static void builder_free(struct builder *b)
{
	free(b->ents);
	free(b->arena);
	bt_htab_free(&b->mods);
}

/* The table from what was fed: names become pointers once the arena no longer moves. */
static int finish(struct builder *b, struct bt_kallsyms **out)
{
	int err = !b->n ? -ENODATA : !b->nonzero ? -EACCES : 0;
	struct bt_kallsyms *ks = err ? NULL : calloc(1, sizeof(*ks));
	if (!err && !ks)
		err = -ENOMEM;
	if (err) {
		builder_free(b);
		return err;
	}
	/* the room doubling left over, given back before the names are pointed at */
	char *arena = realloc(b->arena, b->used);
	if (arena) {
		b->arena = arena;
		b->acap = b->used;
	}
	struct ent *ents = realloc(b->ents, b->n * sizeof(*ents));
	if (ents) {
		b->ents = ents;
		b->cap = b->n;
	}
	for (size_t i = 0; i < b->n; i++) {
		struct ent *e = &b->ents[i];
		size_t name = e->raw.name_off, mod = e->raw.mod_off;
		e->sym.name = b->arena + name;
		e->sym.module = mod ? b->arena + mod - 1 : NULL;
	}
	sort_ents(b->ents, b->n);
	bt_htab_free(&b->mods);
	ks->ents = b->ents;
	ks->n = b->n;
	ks->arena = b->arena;
	ks->arena_bytes = b->acap;
	*out = ks;
	return 0;
}

int bt_kallsyms_parse(const char *buf, size_t len, struct bt_kallsyms **out)
{
	if (!out || (!buf && len))
		return -EINVAL;
	*out = NULL;
	struct builder b = { 0 };
	bt_htab_init(&b.mods);
	size_t used;
	int err = feed(&b, buf, len, true, &used);
	if (err) {
		builder_free(&b);
		return err;
	}
	return finish(&b, out);
}

/* Read in chunks and parsed as they come: the file (4 MiB for 120,000 symbols) is never held
 * whole. */
static int load_fd(int fd, struct bt_kallsyms **out)
{
	enum { CHUNK = 256 << 10 };
	char *buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	struct builder b = { 0 };
	bt_htab_init(&b.mods);
	size_t have = 0, total = 0;
	int err = 0;
	for (;;) {
		ssize_t r = read(fd, buf + have, CHUNK - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		total += (size_t)r;
		if (total > KALLSYMS_FILE_MAX) {
			err = -EFBIG;
			break;
		}
		have += (size_t)r;
		size_t used;
		if ((err = feed(&b, buf, have, r == 0, &used)))
			break;
		memmove(buf, buf + used, have - used);
		have -= used;
		if (r == 0)
			break;
	}
	free(buf);
	if (err) {
		builder_free(&b);
		return err;
	}
	return finish(&b, out);
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
	int err = load_fd(fd, out);
	close(fd);
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
