/* topview.c - see topview.h. The table is rebuilt from the profile at each redraw: one pass over the
 * distinct stacks, a hash from (function, library, process) to its row. */
#include "cmd/live/topview.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/esc.h"

struct row_key {
	uint32_t name_id;
	bool kernel;
	uint8_t lib_kind;
	const char *lib_name;
	uint32_t proc;
	bool process;
};

/* A process's heading is found by its process alone. */
static uint32_t key_hash(const struct row_key *k)
{
	if (k->process)
		return bt_hash_u64(k->proc);
	uint64_t h = (uint64_t)k->name_id << 32 | k->proc;
	h ^= (uint64_t)(uintptr_t)k->lib_name * 0x9e3779b97f4a7c15ULL;
	h ^= (uint64_t)k->lib_kind << 8 | (uint64_t)k->kernel << 1 | k->process;
	return bt_hash_u64(h);
}

static bool key_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_top_row *r = &((const struct bt_top_table *)ctx)->rows[val];
	const struct row_key *k = key;
	if (k->process || r->process)
		return k->process && r->process && r->proc == k->proc;
	return r->name_id == k->name_id && r->kernel == k->kernel && r->lib_kind == k->lib_kind &&
	       r->lib_name == k->lib_name && r->proc == k->proc && r->process == k->process;
}

static struct bt_top_row *row_for(struct bt_top_table *t, const struct row_key *k)
{
	uint32_t h = key_hash(k);
	uint64_t *v = bt_htab_find(&t->index, h, key_eq, t, k);
	if (v)
		return &t->rows[*v];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct bt_top_row *n = realloc(t->rows, cap * sizeof(*n));
		if (!n)
			return NULL;
		t->rows = n;
		t->cap = cap;
	}
	if (bt_htab_insert(&t->index, h, t->n))
		return NULL;
	struct bt_top_row *r = &t->rows[t->n++];
	*r = (struct bt_top_row){ .process = k->process, .name_id = k->name_id, .proc = k->proc,
				  .lib_kind = k->lib_kind, .lib_name = k->lib_name, .kernel = k->kernel };
	return r;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* Where location l is, into k's library fields. */
static void library_of(const struct bt_session *s, const struct bt_loc *l, const char *name,
		       struct row_key *k)
{
	k->lib_name = NULL;
	switch (l->kind) {
	case BT_LOC_USER: {
		const char *path = l->file_id < s->dsos.nfiles ?
			bt_strtab_get(&s->dsos.paths, s->dsos.files[l->file_id].path_id) : NULL;
		if (!path)
			k->lib_kind = BT_TOP_LIB_UNKNOWN;
		else if (!strncmp(path, "//anon", 6) || !strncmp(path, "[anon", 5))
			k->lib_kind = BT_TOP_LIB_JIT;
		else {
			k->lib_kind = BT_TOP_LIB_FILE;
			k->lib_name = base_name(path);
		}
		return;
	}
	case BT_LOC_KERNEL: {
		const struct bt_kmod_ver *mv = l->file_id ? bt_kmods_get(&s->kmods, l->file_id - 1) : NULL;
		if (mv) {
			k->lib_kind = BT_TOP_LIB_MODULE;
			k->lib_name = mv->mod.name;
		} else if (name && (!strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trampoline_", 15))) {
			k->lib_kind = BT_TOP_LIB_JIT;
		} else {
			k->lib_kind = BT_TOP_LIB_KERNEL;
		}
		return;
	}
	case BT_LOC_OFFCPU:
		k->lib_kind = BT_TOP_LIB_OFFCPU;
		return;
	case BT_LOC_PYTHON: {
		/* a Python frame: its source file in the library's place */
		const struct bt_pycode *c = l->file_id < s->py.ncodes ? &s->py.codes[l->file_id] : NULL;
		k->lib_kind = c && c->ok ? BT_TOP_LIB_FILE : BT_TOP_LIB_UNKNOWN;
		if (c && c->ok)
			k->lib_name = base_name(bt_pyprocs_str(&s->py, c->file_id));
		return;
	}
	default:
		k->lib_kind = BT_TOP_LIB_UNKNOWN;
	}
}

static bool side_wanted(const struct bt_top_opts *o, const struct bt_loc *l)
{
	bool kernel = l->kind == BT_LOC_KERNEL;
	return o->side == BT_TOP_BOTH || (o->side == BT_TOP_KERNEL) == kernel;
}

/* Counts stack i into the rows of its frames (and its process's heading). 0 or -ENOMEM. */
static int count_stack(const struct bt_session *s, const struct bt_top_opts *o, struct bt_top_table *t,
		       size_t i)
{
	const struct bt_profile *p = &s->prof;
	const struct bt_stack *st = &p->stacks[i];
	bool off = st->kind == BT_VALUE_OFFCPU;
	if (off && !o->offcpu)
		return 0;
	uint32_t proc = o->per_process ? (p->per_pid ? st->pid : st->comm_id) : 0;
	if (o->per_process) {
		struct row_key pk = { .proc = proc, .process = true };
		struct bt_top_row *r = row_for(t, &pk);
		if (!r)
			return -ENOMEM;
		r->name_id = st->comm_id;
		r->pid = p->per_pid ? st->pid : 0;
		*(off ? &r->off : &r->total) += st->count;
	}
	for (uint32_t j = 0; j < st->nframes; j++) {
		const struct bt_loc *l = &p->locs[p->frames[st->first + j]];
		if (l->name_id == BT_NAME_UNSET || !side_wanted(o, l))
			continue;
		const char *name = bt_strtab_get(&p->names, l->name_id);
		if (o->filter && *o->filter && (!name || !strcasestr(name, o->filter)))
			continue;
		struct row_key k = { .name_id = l->name_id, .kernel = l->kind == BT_LOC_KERNEL, .proc = proc };
		library_of(s, l, name, &k);
		struct bt_top_row *r = row_for(t, &k);
		if (!r)
			return -ENOMEM;
		if (r->last != i + 1) {
			*(off ? &r->off : &r->total) += st->count;
			r->last = i + 1;
		}
		if (j + 1 == st->nframes && !off)
			r->self += st->count;
	}
	return 0;
}

const char *bt_top_library(const struct bt_top_row *r, char *buf, size_t len)
{
	switch (r->lib_kind) {
	case BT_TOP_LIB_FILE: return r->lib_name;
	case BT_TOP_LIB_MODULE: snprintf(buf, len, "[%s]", r->lib_name); return buf;
	case BT_TOP_LIB_KERNEL: return "[kernel]";
	case BT_TOP_LIB_JIT: return "[jit]";
	case BT_TOP_LIB_OFFCPU: return "[off-CPU]";
	default: return "[unknown]";
	}
}

struct sort_ctx {
	const struct bt_session *s;
	enum bt_top_sort by;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_names(const struct bt_strtab *names, const struct bt_top_row *a, const struct bt_top_row *b)
{
	const char *na = bt_strtab_get(names, a->name_id), *nb = bt_strtab_get(names, b->name_id);
	return strcmp(na ? na : "", nb ? nb : "");
}

/* Two functions of one process (or of the whole profile) in the chosen order; ties by self, total,
 * name, then user before kernel. */
static int cmp_funcs(const struct sort_ctx *c, const struct bt_top_row *a, const struct bt_top_row *b)
{
	char ba[80], bb[80];
	int r = 0;
	switch (c->by) {
	case BT_TOP_BY_TOTAL: r = cmp_u64_desc(a->total, b->total); break;
	case BT_TOP_BY_OFFCPU: r = cmp_u64_desc(a->off, b->off); break;
	case BT_TOP_BY_NAME: r = cmp_names(&c->s->prof.names, a, b); break;
	case BT_TOP_BY_LIBRARY:
		r = strcmp(bt_top_library(a, ba, sizeof(ba)), bt_top_library(b, bb, sizeof(bb)));
		break;
	default: break;
	}
	if (!r)
		r = cmp_u64_desc(a->self, b->self);
	if (!r)
		r = cmp_u64_desc(a->total, b->total);
	if (!r)
		r = cmp_names(&c->s->prof.names, a, b);
	return r ? r : (int)a->kernel - (int)b->kernel;
}

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct bt_top_row *a = pa, *b = pb;
	/* processes by their samples, each one's heading before its functions */
	int r = cmp_u64_desc(a->group_total, b->group_total);
	if (!r && a->proc != b->proc)
		r = a->proc < b->proc ? -1 : 1;
	if (!r && a->process != b->process)
		r = a->process ? -1 : 1;
	return r ? r : cmp_funcs(ctx, a, b);
}

/* Each function learns its process's total (of the sort's kind), each heading how many functions it
 * has; headings with none (all filtered away) go. */
static void group(struct bt_top_table *t, bool by_off)
{
	for (size_t i = 0; i < t->n; i++) {
		struct bt_top_row *r = &t->rows[i];
		if (r->process)
			continue;
		struct row_key pk = { .proc = r->proc, .process = true };
		uint64_t *v = bt_htab_find(&t->index, key_hash(&pk), key_eq, t, &pk);
		if (v) {
			r->group_total = by_off ? t->rows[*v].off : t->rows[*v].total;
			t->rows[*v].last++;  /* headings count their functions here */
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct bt_top_row *r = &t->rows[i];
		if (r->process) {
			if (!r->last)
				continue;
			r->group_total = by_off ? r->off : r->total;
		}
		t->rows[k++] = *r;
	}
	t->n = k;
}

int bt_top_build(const struct bt_session *s, const struct bt_top_opts *o, struct bt_top_table *t)
{
	memset(t, 0, sizeof(*t));
	bt_htab_init(&t->index);
	const struct bt_profile *p = &s->prof;
	t->samples = p->total;
	t->offcpu_ns = p->offcpu_ns;
	t->offcpu = o->offcpu;
	int err = 0;
	for (size_t i = 0; !err && i < p->nstacks; i++)
		err = count_stack(s, o, t, i);
	if (err) {
		bt_top_free(t);
		return err;
	}
	if (o->per_process) {
		for (size_t i = 0; i < t->n; i++)
			if (t->rows[i].process)
				t->rows[i].last = 0;
		group(t, o->sort == BT_TOP_BY_OFFCPU && o->offcpu);
	}
	/* The index is not needed once the rows are counted: sorting moves them. */
	bt_htab_free(&t->index);
	bt_htab_init(&t->index);
	for (size_t i = 0; i < t->n; i++)
		t->nfuncs += !t->rows[i].process;
	struct sort_ctx c = { .s = s, .by = o->sort };
	qsort_r(t->rows, t->n, sizeof(*t->rows), cmp_rows, &c);
	return 0;
}

void bt_top_free(struct bt_top_table *t)
{
	free(t->rows);
	bt_htab_free(&t->index);
	memset(t, 0, sizeof(*t));
}

static const char *const sort_names[BT_TOP_NSORTS] = { "self", "total", "name", "library", "off-cpu" };

const char *bt_top_sort_name(enum bt_top_sort s)
{
	return s < BT_TOP_NSORTS ? sort_names[s] : "?";
}

enum bt_top_sort bt_top_sort_next(enum bt_top_sort s, bool offcpu)
{
	s = (enum bt_top_sort)((s + 1) % BT_TOP_NSORTS);
	return s == BT_TOP_BY_OFFCPU && !offcpu ? BT_TOP_BY_SELF : s;
}

/* src into dst as exactly w columns: cut with ".." when longer, padded with spaces when shorter. */
static void fit(char *dst, const char *src, size_t w)
{
	size_t n = strlen(src);
	if (n <= w) {
		memcpy(dst, src, n);
		memset(dst + n, ' ', w - n);
	} else if (w >= 2) {
		memcpy(dst, src, w - 2);
		memcpy(dst + w - 2, "..", 2);
	} else {
		memset(dst, '.', w);
	}
}

/* The library column's width: a quarter of the line, from 10 to 32 columns. */
static size_t lib_width(size_t width)
{
	size_t w = width / 4;
	return w < 10 ? 10 : w > 32 ? 32 : w;
}

#define SHARES_W 16  /* "  self%  total%  " less one: two shares of 7 columns and the gaps */
#define OFF_W 9      /* " off-cpu%": one more share */

/* shares (as wide as its string), then the function and library columns in what remains. */
static void layout(size_t width, char *buf, const char *shares, const char *func, const char *lib)
{
	char line[4096];
	size_t lw = lib_width(width), fw, sw = strlen(shares);
	if (width > sizeof(line) - 1)
		width = sizeof(line) - 1;
	if (width < sw + lw + 2 + 4) {
		/* too narrow for columns: as much as fits */
		snprintf(line, sizeof(line), "%s%s  %s", shares, func, lib);
		fit(buf, line, width);
		buf[width] = '\0';
		return;
	}
	fw = width - sw - lw - 2;
	memcpy(line, shares, sw);
	fit(line + sw, func, fw);
	memcpy(line + sw + fw, "  ", 2);
	fit(line + sw + fw + 2, lib, lw);
	memcpy(buf, line, width);
	buf[width] = '\0';
}

void bt_top_heading(size_t width, bool offcpu, char *buf)
{
	layout(width, buf, offcpu ? "  self%  total% off-cpu% " : "  self%  total% ", "function", "library");
}

/* A share of whole, as "%6.1f%%", or blanks when there is nothing to share. */
static void share(char *buf, size_t len, uint64_t part, uint64_t whole, int w)
{
	if (whole)
		snprintf(buf, len, "%*.1f%%", w - 1, 100.0 * (double)part / (double)whole);
	else
		snprintf(buf, len, "%*s", w, "");
}

void bt_top_format(const struct bt_session *s, const struct bt_top_table *t, size_t i, size_t width,
		   char *buf)
{
	const struct bt_top_row *r = &t->rows[i];
	/* names and libraries are the profiled programs' choice: no control of theirs reaches the
	 * terminal (base/esc.h) */
	char name[480], lib[4 * (BT_KMOD_NAME_LEN + 3)], ebuf[BT_KMOD_NAME_LEN + 3];
	const char *raw = bt_strtab_get(&s->prof.names, r->name_id);
	bt_esc_str(name, sizeof(name), raw ? raw : "?");
	double total = t->samples ? (double)t->samples : 1.0;
	char shares[SHARES_W + OFF_W + 1], func[512], off[16] = "";
	if (t->offcpu)   /* the share of the off-CPU time, blank until some is counted */
		share(off, sizeof(off), r->off, t->offcpu_ns, OFF_W - 1);
	if (r->process) {
		snprintf(shares, sizeof(shares), "        %6.1f%% %s%s", 100.0 * (double)r->total / total, off,
			 t->offcpu ? " " : "");
		if (r->pid)
			snprintf(func, sizeof(func), "%s [%u]", name, r->pid);
		else
			snprintf(func, sizeof(func), "%s", name);
		layout(width, buf, shares, func, "");
		return;
	}
	snprintf(shares, sizeof(shares), "%6.1f%% %6.1f%% %s%s", 100.0 * (double)r->self / total,
		 100.0 * (double)r->total / total, off, t->offcpu ? " " : "");
	/* indented under their process; the library column tells a kernel function */
	snprintf(func, sizeof(func), "%s%s", t->rows[0].process ? "  " : "", name);
	layout(width, buf, shares, func, bt_esc_str(lib, sizeof(lib), bt_top_library(r, ebuf, sizeof(ebuf))));
}
