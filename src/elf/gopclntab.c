/* gopclntab.c - reads Go's pclntab: the header, the function table (sorted entries, each pointing
 * at a _func record), the pc-value tables (file, line, inline tree index by pc), the per-CU file
 * table, and the inline trees. Layouts follow the Go runtime's runtime2.go and symtab.go of each
 * version; nothing is read without a bounds check against its region. */
#include "elf/gopclntab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_116 0xfffffffaU
#define MAGIC_118 0xfffffff0U
#define MAGIC_120 0xfffffff1U

#define PCDATA_INLTREE 2     /* _PCDATA_InlTreeIndex */
#define FUNCDATA_INLTREE 3   /* _FUNCDATA_InlTree */
#define INLINE_MAX (1 << 20) /* the runtime's own bound on an inline tree */
#define DEPTH_MAX 64         /* inlined calls followed at one pc */

struct region {
	size_t off, len;
};

struct bt_gopcln {
	const uint8_t *tab;
	size_t len;
	uint64_t addr;
	unsigned ver;            /* 116, 118, 120 */
	unsigned ptr, quantum;
	uint64_t nfunc;
	uint64_t text;
	struct region names, cu, files, pcs, funcs;
	size_t stride;           /* bytes per function table entry */
	size_t name_at;          /* offset of _func.nameoff; the fields after it follow at fixed steps */
	size_t fixed;            /* bytes of _func before its pcdata array */
	bt_gopcln_read_fn read;
	void *ctx;
	uint64_t gofunc;
};

/* One function's record, its fields checked to lie in the table. */
struct func {
	uint64_t entry, end;
	size_t rec;              /* offset of the _func record */
	uint32_t nameoff, pcfile, pcln, npcdata, cuoff;
	uint8_t nfuncdata;
};

static bool get32(const struct bt_gopcln *g, size_t off, uint32_t *v)
{
	if (off > g->len || g->len - off < 4)
		return false;
	const uint8_t *p = g->tab + off;
	*v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return true;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static bool getptr(const struct bt_gopcln *g, size_t off, uint64_t *v)
{
	if (off > g->len || g->len - off < g->ptr)
		return false;
	*v = le(g->tab + off, g->ptr);
	return true;
}

/* The header's regions, which the linker writes in this order after the header. */
static int parse_regions(struct bt_gopcln *g, const uint64_t *w, size_t hdr)
{
	const uint64_t *r = g->ver == 116 ? w + 2 : w + 3;  /* funcname, cu, filetab, pctab, pcln */
	uint64_t prev = hdr;
	for (int i = 0; i < 5; i++) {
		if (r[i] < prev || r[i] > g->len)
			return -EINVAL;
		prev = r[i];
	}
	g->names = (struct region){ r[0], r[1] - r[0] };
	g->cu = (struct region){ r[1], r[2] - r[1] };
	g->files = (struct region){ r[2], r[3] - r[2] };
	g->pcs = (struct region){ r[3], r[4] - r[3] };
	g->funcs = (struct region){ r[4], g->len - r[4] };
	/* nfunc entries and the end of the last function */
	uint64_t need = g->stride * g->nfunc + (g->ver == 116 ? g->ptr : 4);
	if (g->nfunc > g->funcs.len / g->stride || need > g->funcs.len)
		return -EINVAL;
	return 0;
}

static int parse_header(struct bt_gopcln *g)
{
	uint32_t magic;
	if (g->len < 8 || !get32(g, 0, &magic))
		return -ENODATA;
	g->ver = magic == MAGIC_116 ? 116 : magic == MAGIC_118 ? 118 : magic == MAGIC_120 ? 120 : 0;
	g->quantum = g->tab[6];
	g->ptr = g->tab[7];
	if (!g->ver || g->tab[4] || g->tab[5] || (g->quantum != 1 && g->quantum != 2 && g->quantum != 4) ||
	    (g->ptr != 4 && g->ptr != 8))
		return -ENODATA;
	unsigned nwords = g->ver == 116 ? 7 : 8;
	size_t hdr = 8 + (size_t)nwords * g->ptr;
	uint64_t w[8];
	for (unsigned i = 0; i < nwords; i++)
		if (!getptr(g, 8 + (size_t)i * g->ptr, &w[i]))
			return -EINVAL;
	g->nfunc = w[0];
	if (g->ver != 116 && w[2])
		g->text = w[2];
	g->stride = g->ver == 116 ? 2 * (size_t)g->ptr : 8;
	g->name_at = g->ver == 116 ? g->ptr : 4;
	g->fixed = g->ver == 116 ? g->ptr + 36 : g->ver == 118 ? 40 : 44;
	return parse_regions(g, w, hdr);
}

int bt_gopcln_open(const struct bt_gopcln_src *src, struct bt_gopcln **out)
{
	if (!src || !out || (!src->tab && src->len))
		return -EINVAL;
	*out = NULL;
	struct bt_gopcln *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	*g = (struct bt_gopcln){ .tab = src->tab, .len = src->len, .addr = src->addr, .text = src->text,
				 .read = src->read, .ctx = src->ctx, .gofunc = src->gofunc };
	int err = parse_header(g);
	if (!err && g->ver != 116 && !g->text)
		err = -EINVAL;  /* entries are offsets from a start no one knows */
	if (err) {
		free(g);
		return err;
	}
	*out = g;
	return 0;
}

void bt_gopcln_free(struct bt_gopcln *g)
{
	free(g);
}

unsigned bt_gopcln_version(const struct bt_gopcln *g)
{
	return g ? g->ver : 0;
}

size_t bt_gopcln_count(const struct bt_gopcln *g)
{
	return g ? (size_t)g->nfunc : 0;
}

/* Entry i of the function table (i == nfunc: the end of the last function), and the offset of its
 * record in the table (none for i == nfunc). */
static bool ftab(const struct bt_gopcln *g, uint64_t i, uint64_t *entry, uint64_t *funcoff)
{
	size_t o = g->funcs.off + (size_t)i * g->stride;
	if (g->ver == 116) {
		return getptr(g, o, entry) && (i == g->nfunc || getptr(g, o + g->ptr, funcoff));
	}
	uint32_t e, f = 0;
	if (!get32(g, o, &e) || (i < g->nfunc && !get32(g, o + 4, &f)))
		return false;
	*entry = g->text + e;
	*funcoff = f;
	return true;
}

/* Function i's record. */
static int func_at(const struct bt_gopcln *g, uint64_t i, struct func *f)
{
	uint64_t funcoff = 0, dummy;
	if (i >= g->nfunc || !ftab(g, i, &f->entry, &funcoff) || !ftab(g, i + 1, &f->end, &dummy) ||
	    f->end <= f->entry || funcoff >= g->funcs.len)
		return -EINVAL;
	f->rec = g->funcs.off + (size_t)funcoff;
	if (g->len - f->rec < g->fixed)
		return -EINVAL;
	size_t n = f->rec + g->name_at;
	size_t id = g->ver == 120 ? f->rec + 40 : n + 32;  /* funcID, flag, pad, nfuncdata */
	if (!get32(g, n, &f->nameoff) || !get32(g, n + 16, &f->pcfile) || !get32(g, n + 20, &f->pcln) ||
	    !get32(g, n + 24, &f->npcdata) || !get32(g, n + 28, &f->cuoff))
		return -EINVAL;
	f->nfuncdata = g->tab[id + 3];
	/* the pcdata and funcdata arrays that follow lie in the table too */
	uint64_t arrays = (uint64_t)f->npcdata * 4 + (uint64_t)f->nfuncdata * (g->ver == 116 ? g->ptr + 4 : 4);
	if (arrays > g->len - f->rec - g->fixed)
		f->npcdata = 0, f->nfuncdata = 0;
	return 0;
}

/* The NUL-terminated string at off of region r, or NULL. */
static const char *str_at(const struct bt_gopcln *g, const struct region *r, uint64_t off)
{
	if (off >= r->len)
		return NULL;
	const char *s = (const char *)g->tab + r->off + off;
	return memchr(s, '\0', r->len - (size_t)off) ? s : NULL;
}

int bt_gopcln_func(const struct bt_gopcln *g, size_t i, uint64_t *entry, uint64_t *end, const char **name)
{
	struct func f;
	if (!g || func_at(g, i, &f) != 0)
		return -EINVAL;
	const char *s = str_at(g, &g->names, f.nameoff);
	if (!s || !*s)
		return -EINVAL;
	*entry = f.entry;
	*end = f.end;
	*name = s;
	return 0;
}

/* An unsigned varint of at most 32 bits at *p (below end); advances *p. */
static bool uvarint(const struct bt_gopcln *g, size_t *p, size_t end, uint32_t *v)
{
	uint32_t x = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*p >= end)
			return false;
		uint8_t b = g->tab[(*p)++];
		x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* The value the pc-value table at off of the pctab gives target in function f: 0, or -ENOENT when
 * it has none there (no table, or target past its end), -EINVAL when it is corrupt. */
static int pcvalue(const struct bt_gopcln *g, const struct func *f, uint32_t off, uint64_t target, int32_t *val)
{
	if (off == 0)
		return -ENOENT;
	if (off >= g->pcs.len)
		return -EINVAL;
	size_t p = g->pcs.off + off, end = g->pcs.off + g->pcs.len;
	uint64_t pc = f->entry;
	uint32_t v = (uint32_t)-1;
	for (bool first = true;; first = false) {
		uint32_t uv, delta;
		if (!uvarint(g, &p, end, &uv))
			return -EINVAL;
		if (uv == 0 && !first)
			return -ENOENT;
		v += -(uv & 1) ^ (uv >> 1);  /* zig-zag */
		if (!uvarint(g, &p, end, &delta))
			return -EINVAL;
		uint64_t next = pc + (uint64_t)delta * g->quantum;
		if (next < pc)
			return -EINVAL;
		pc = next;
		if (target < pc) {
			*val = (int32_t)v;
			return 0;
		}
	}
}

/* The index of the function holding pc: the last entry at or below it. */
static int find(const struct bt_gopcln *g, uint64_t pc, struct func *f)
{
	uint64_t lo = 0, hi = g->nfunc, entry, dummy;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (!ftab(g, mid, &entry, &dummy))
			return -EINVAL;
		if (entry <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || func_at(g, lo - 1, f) != 0 || pc >= f->end)
		return -ENOENT;
	return 0;
}

/* The file a function's instruction at pc is from (its CU's file table, by the pcfile value). */
static const char *file_at(const struct bt_gopcln *g, const struct func *f, uint64_t pc)
{
	int32_t fileno;
	uint32_t foff;
	if (pcvalue(g, f, f->pcfile, pc, &fileno) != 0 || fileno < 0)
		return NULL;
	uint64_t idx = (uint64_t)f->cuoff + (uint32_t)fileno;
	if (idx >= g->cu.len / 4 || !get32(g, g->cu.off + (size_t)idx * 4, &foff) || foff == UINT32_MAX)
		return NULL;
	return str_at(g, &g->files, foff);
}

/* The address of f's inline tree, or 0 when it has none that can be read. */
static uint64_t inline_tree(const struct bt_gopcln *g, const struct func *f)
{
	if (!g->read || f->npcdata <= PCDATA_INLTREE || f->nfuncdata <= FUNCDATA_INLTREE)
		return 0;
	size_t arr = f->rec + g->fixed + (size_t)f->npcdata * 4;
	if (g->ver != 116) {
		uint32_t off;
		if (!g->gofunc || !get32(g, arr + FUNCDATA_INLTREE * 4, &off) || off == UINT32_MAX)
			return 0;
		return g->gofunc + off;
	}
	/* Go 1.16 and 1.17: pointers, aligned to their size in memory */
	if (g->ptr == 8 && ((g->addr + arr) & 4))
		arr += 4;
	uint64_t p;
	return getptr(g, arr + FUNCDATA_INLTREE * (size_t)g->ptr, &p) ? p : 0;
}

/* Entry ix of an inline tree: the inlined function's name offset and the offset from the outer
 * function's entry of an instruction at its call. */
static bool inlined_call(const struct bt_gopcln *g, uint64_t tree, int32_t ix, uint32_t *nameoff,
			 int32_t *parent_pc)
{
	uint8_t b[20];
	size_t size = g->ver == 120 ? 16 : 20;
	if (ix < 0 || ix >= INLINE_MAX || g->read(g->ctx, tree + (uint64_t)ix * size, b, size) != 0)
		return false;
	size_t n = g->ver == 120 ? 4 : 12, p = g->ver == 120 ? 8 : 16;
	*nameoff = (uint32_t)le(b + n, 4);
	*parent_pc = (int32_t)(uint32_t)le(b + p, 4);
	return true;
}

int bt_gopcln_lookup(const struct bt_gopcln *g, uint64_t pc, struct bt_dwarf_frame *out, size_t max)
{
	struct func f;
	if (!g || !out || !max || find(g, pc, &f) != 0)
		return 0;
	uint64_t tree = inline_tree(g, &f);
	uint32_t pcinl = 0;
	if (tree && !get32(g, f.rec + g->fixed + PCDATA_INLTREE * 4, &pcinl))
		tree = 0;
	size_t n = 0;
	for (int depth = 0;; depth++) {
		int32_t ix = -1, line = 0, parent_pc = -1;
		uint32_t nameoff = f.nameoff;
		if (tree && depth < DEPTH_MAX && pcvalue(g, &f, pcinl, pc, &ix) == 0 && ix >= 0 &&
		    !inlined_call(g, tree, ix, &nameoff, &parent_pc))
			ix = -1, nameoff = f.nameoff;
		struct bt_dwarf_frame fr = { .function = str_at(g, &g->names, nameoff), .file = file_at(g, &f, pc) };
		if (pcvalue(g, &f, f.pcln, pc, &line) == 0 && line > 0)
			fr.line = (unsigned)line;
		out[n++] = fr;
		if (ix < 0 || n == max)
			break;  /* the innermost ones are kept */
		/* the outer function's instruction at the call: within it, else its line is unknown */
		uint64_t next = f.entry + (uint64_t)(int64_t)parent_pc;
		if (parent_pc < 0 || next >= f.end) {
			out[n++] = (struct bt_dwarf_frame){ .function = str_at(g, &g->names, f.nameoff) };
			break;
		}
		pc = next;
	}
	return (int)n;
}

/* Moduledata's layout, in pointer-sized words: the fields checked, and gofunc. */
#define MD_FUNCNAMETAB 1
#define MD_TEXT 22

uint64_t bt_gopcln_find_gofunc(const struct bt_gopcln *g, const void *data, size_t len, uint64_t addr,
			       bt_gopcln_word_fn words, void *ctx)
{
	if (!g || g->ver == 116 || !data)
		return 0;
	/* covctrs and ecovctrs came before end in 1.20; types, etypes, rodata and gofunc follow it */
	size_t types = g->ver == 118 ? 35 : 37, gofunc = types + 3, need = (gofunc + 1) * g->ptr;
	const uint8_t *d = data;
	for (size_t o = 0; o + need <= len; o += g->ptr) {
		uint64_t w[64];
		for (size_t i = 0; i <= gofunc; i++) {
			w[i] = le(d + o + i * g->ptr, g->ptr);
			if (!w[i] && words)
				w[i] = words(ctx, addr + o + i * g->ptr);
			if (i == 0 && w[0] != g->addr)
				break;
		}
		if (w[0] != g->addr || w[MD_FUNCNAMETAB] != g->addr + g->names.off || w[MD_TEXT] != g->text ||
		    w[types] > w[types + 1] || w[types + 2] > w[gofunc] || !w[gofunc])
			continue;
		return w[gofunc];
	}
	return 0;
}
