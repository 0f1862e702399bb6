/* pprof_write.c - the pprof writer: a profile.proto message from a live session or from a profile
 * read back from a file, packed and gzip-compressed. Every table is sized before it is filled, so the messages can
 * point into the tables. */
#include "output/pprof.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/esc.h"
#include "elf/buildid.h"
#include "kernel/cgroup.h"
#include "kernel/kident.h"
#include "output/pprof_pb.h"
#include "session/session.h"

/* ---- building a profile --------------------------------------------------------------------- */

struct pb_build {
	struct bt_strtab strs;          /* ids are string_table indices: "" is interned first */
	pb_mapping *maps;
	size_t nmaps;
	pb_location *locs;
	size_t nlocs;
	pb_line *lines;
	pb_line **line_ptrs;
	size_t nlines;
	pb_function *funcs;
	size_t nfuncs;
	struct bt_htab func_index;      /* name string id -> function index */
	pb_sample *samples;
	size_t nsamples;
	uint64_t *loc_ids;
	size_t nloc_ids;
	int64_t *values;
	size_t nvalues;
	pb_label *labels;
	pb_label **label_ptrs;
	size_t nlabels;
	pb_value_type vt[5];            /* the header's: its columns, then the period's type */
	pb_value_type *vtp[4];
	int64_t comment_id;
	/* Each column's index in a sample's values, -1 when absent; which stacks are taken. */
	int col_samples, col_cpu, col_off, col_wall;
	bool take_cpu, take_off;
	uint64_t period_ns;
};

/* Upper bounds of a profile's tables, for build_init. */
struct pb_sizes {
	size_t maps, locs, funcs, samples, loc_ids, values, labels;
};

static void build_free(struct pb_build *b)
{
	bt_strtab_free(&b->strs);
	free(b->maps);
	free(b->locs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->funcs);
	bt_htab_free(&b->func_index);
	free(b->samples);
	free(b->loc_ids);
	free(b->values);
	free(b->labels);
	free(b->label_ptrs);
}

/* Sizes every table; counts are upper bounds: funcs bounds the lines too (each line has its own
 * function at most), and locations have a line each at least. */
static int build_init(struct pb_build *b, const struct pb_sizes *n)
{
	memset(b, 0, sizeof(*b));
	bt_strtab_init(&b->strs);
	bt_htab_init(&b->func_index);
	/* calloc(0) may return NULL: ask for one element at least */
	b->maps = calloc(n->maps + 1, sizeof(*b->maps));
	b->locs = calloc(n->locs + 1, sizeof(*b->locs));
	size_t lines = n->funcs > n->locs ? n->funcs : n->locs;
	b->lines = calloc(lines + 1, sizeof(*b->lines));
	b->line_ptrs = calloc(lines + 1, sizeof(*b->line_ptrs));
	b->funcs = calloc(n->funcs + 1, sizeof(*b->funcs));
	b->samples = calloc(n->samples + 1, sizeof(*b->samples));
	b->loc_ids = calloc(n->loc_ids + 1, sizeof(*b->loc_ids));
	b->values = calloc(n->values + 1, sizeof(*b->values));
	b->labels = calloc(n->labels + 1, sizeof(*b->labels));
	b->label_ptrs = calloc(n->labels + 1, sizeof(*b->label_ptrs));
	if (!b->maps || !b->locs || !b->lines || !b->line_ptrs || !b->funcs || !b->samples ||
	    !b->loc_ids || !b->values || !b->labels || !b->label_ptrs || bt_strtab_add(&b->strs, "") != 0) {
		build_free(b);
		return -ENOMEM;
	}
	return 0;
}

static int64_t str(struct pb_build *b, const char *s)
{
	return bt_strtab_add(&b->strs, s ? s : "");
}

struct func_key {
	int64_t name, file;         /* string ids; file 0 ("") when unknown */
};

static bool func_eq(void *ctx, uint64_t val, const void *key)
{
	const struct pb_build *b = ctx;
	const struct func_key *k = key;
	return b->funcs[val].name == k->name && b->funcs[val].filename == k->file;
}

/* The function named by string id sid in source file fid (0: unknown), added when new: its index,
 * or -ENOMEM. */
static int64_t func_in(struct pb_build *b, int64_t sid, int64_t fid)
{
	struct func_key k = { sid, fid };
	uint32_t h = bt_hash_u64((uint64_t)sid * 0x9e3779b97f4a7c15ULL ^ (uint64_t)fid);
	uint64_t *v = bt_htab_find(&b->func_index, h, func_eq, b, &k);
	if (v)
		return (int64_t)*v;
	pb_function *f = &b->funcs[b->nfuncs];
	perftools__profiles__function__init(f);
	f->id = b->nfuncs + 1;
	f->name = sid;
	f->system_name = sid;
	f->filename = fid;
	if (bt_htab_insert(&b->func_index, h, b->nfuncs))
		return -ENOMEM;
	return (int64_t)b->nfuncs++;
}

static int64_t func_of(struct pb_build *b, int64_t sid)
{
	return func_in(b, sid, 0);
}

/* Appends a line (function fi, source line number, 0 when unknown) to location loc, whose lines are
 * contiguous. */
static void append_line(struct pb_build *b, pb_location *loc, size_t fi, int64_t line)
{
	pb_line *ln = &b->lines[b->nlines];
	perftools__profiles__line__init(ln);
	ln->function_id = b->funcs[fi].id;
	ln->line = line;
	b->line_ptrs[b->nlines] = ln;
	if (!loc->n_line)
		loc->line = &b->line_ptrs[b->nlines];
	loc->n_line++;
	b->nlines++;
}

static int64_t sat_i64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Whether stack st is one of the profile's samples (the header chose which kinds are). */
static bool taken(const struct pb_build *b, const struct bt_stack *st)
{
	return st->kind == BT_VALUE_OFFCPU ? b->take_off : b->take_cpu;
}

/* Starts the next sample: nlocs location ids to fill from its loc_ids, its values from st's count
 * in the header's columns. */
static pb_sample *add_sample(struct pb_build *b, size_t nlocs, const struct bt_stack *st)
{
	pb_sample *s = &b->samples[b->nsamples++];
	perftools__profiles__sample__init(s);
	s->location_id = &b->loc_ids[b->nloc_ids];
	s->n_location_id = nlocs;
	b->nloc_ids += nlocs;
	s->value = &b->values[b->nvalues];
	bool off = st->kind == BT_VALUE_OFFCPU;
	uint64_t n = st->count, p = b->period_ns;
	uint64_t cpu_ns = off || !p ? 0 : n > UINT64_MAX / p ? UINT64_MAX : n * p, off_ns = off ? n : 0;
	int cols[] = { b->col_samples, b->col_cpu, b->col_off, b->col_wall };
	uint64_t vals[] = { off ? 0 : n, cpu_ns, off_ns, cpu_ns + off_ns < cpu_ns ? UINT64_MAX : cpu_ns + off_ns };
	s->n_value = 0;
	for (int i = 0; i < 4; i++)
		if (cols[i] >= 0) {
			s->value[cols[i]] = sat_i64(vals[i]);
			s->n_value++;
		}
	b->nvalues += s->n_value;
	s->label = &b->label_ptrs[b->nlabels];
	return s;
}

static pb_label *add_label(struct pb_build *b, pb_sample *s, int64_t key)
{
	pb_label *l = &b->labels[b->nlabels];
	perftools__profiles__label__init(l);
	l->key = key;
	b->label_ptrs[b->nlabels++] = l;
	s->n_label++;
	return l;
}

/* Writes buf gzip-compressed. */
static int gz_write(const uint8_t *buf, size_t len, FILE *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	unsigned char chunk[65536];
	int err = 0, flush;
	do {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
		z.next_in = (Bytef *)buf;
		z.avail_in = n;
		buf += n;
		len -= n;
		flush = len ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			if (deflate(&z, flush) == Z_STREAM_ERROR) {
				err = -EINVAL;
				break;
			}
			size_t have = sizeof(chunk) - z.avail_out;
			errno = 0;
			if (have && fwrite(chunk, 1, have, out) != have)
				err = errno ? -errno : -EIO;
		} while (!err && z.avail_out == 0);
	} while (!err && flush != Z_FINISH);
	deflateEnd(&z);
	errno = 0;
	if (!err && (fflush(out) != 0 || ferror(out)))
		err = errno ? -errno : -EIO;
	return err;
}

/* Fills prof's tables from b, packs it and writes it compressed. */
static int emit(struct pb_build *b, pb_profile *prof, FILE *out)
{
	size_t nstr = bt_strtab_count(&b->strs);
	char **strs = calloc(nstr + 1, sizeof(*strs));
	pb_mapping **maps = calloc(b->nmaps + 1, sizeof(*maps));
	pb_location **locs = calloc(b->nlocs + 1, sizeof(*locs));
	pb_function **funcs = calloc(b->nfuncs + 1, sizeof(*funcs));
	pb_sample **samples = calloc(b->nsamples + 1, sizeof(*samples));
	uint8_t *buf = NULL;
	int err = -ENOMEM;
	if (!strs || !maps || !locs || !funcs || !samples)
		goto out;
	/* Names and paths are the profiled programs' choice, and `go tool pprof -top` prints them to a
	 * terminal: control characters go in escaped (base/esc.h). */
	for (size_t i = 0; i < nstr; i++) {
		const char *s = bt_strtab_get(&b->strs, (uint32_t)i);
		strs[i] = bt_esc_needed(s, strlen(s)) ? bt_esc_dup(s) : (char *)s;
		if (!strs[i])
			goto out;
	}
	for (size_t i = 0; i < b->nmaps; i++)
		maps[i] = &b->maps[i];
	for (size_t i = 0; i < b->nlocs; i++)
		locs[i] = &b->locs[i];
	for (size_t i = 0; i < b->nfuncs; i++)
		funcs[i] = &b->funcs[i];
	for (size_t i = 0; i < b->nsamples; i++)
		samples[i] = &b->samples[i];
	prof->string_table = strs;
	prof->n_string_table = nstr;
	prof->mapping = maps;
	prof->n_mapping = b->nmaps;
	prof->location = locs;
	prof->n_location = b->nlocs;
	prof->function = funcs;
	prof->n_function = b->nfuncs;
	prof->sample = samples;
	prof->n_sample = b->nsamples;
	size_t len = perftools__profiles__profile__get_packed_size(prof);
	if (!(buf = malloc(len ? len : 1)))
		goto out;
	if (perftools__profiles__profile__pack(prof, buf) != len) {
		err = -EINVAL;
		goto out;
	}
	err = gz_write(buf, len, out);
out:
	free(buf);
	for (size_t i = 0; strs && i < nstr && strs[i]; i++)
		if (strs[i] != bt_strtab_get(&b->strs, (uint32_t)i))
			free(strs[i]);
	free(strs);
	free(maps);
	free(locs);
	free(funcs);
	free(samples);
	return err;
}

/* Appends a column of the given type and unit (interned strings); its index. */
static int column(struct pb_build *b, pb_profile *prof, int64_t type, int64_t unit)
{
	size_t i = prof->n_sample_type;
	b->vt[i].type = type;
	b->vt[i].unit = unit;
	b->vtp[i] = &b->vt[i];
	prof->n_sample_type = i + 1;
	return (int)i;
}

/* The header every profile shares: sample types (the columns the view takes, see bt_pprof_opts),
 * period, times; its messages live in b. */
static int header(struct pb_build *b, pb_profile *prof, const struct bt_pprof_opts *o, const char *comment)
{
	int64_t samples = str(b, "samples"), count = str(b, "count");
	int64_t cpu = str(b, "cpu"), ns = str(b, "nanoseconds");
	int64_t off = str(b, "off_cpu"), wall = str(b, "wall");
	b->comment_id = comment ? str(b, comment) : 0;
	if (samples < 0 || count < 0 || cpu < 0 || ns < 0 || off < 0 || wall < 0 || b->comment_id < 0)
		return -ENOMEM;
	pb_value_type *vt = b->vt;
	for (int i = 0; i < 5; i++)
		perftools__profiles__value_type__init(&vt[i]);
	int view = o ? o->view : BT_VIEW_CPU;
	bool only_off = view == BT_VIEW_OFFCPU && o->view_only;
	b->period_ns = o ? o->period_ns : 0;
	b->take_cpu = !only_off;
	b->take_off = view != BT_VIEW_CPU;
	b->col_samples = b->col_cpu = b->col_off = b->col_wall = -1;
	prof->sample_type = b->vtp;
	prof->n_sample_type = 0;
	if (!only_off)
		b->col_samples = column(b, prof, samples, count);
	if (!only_off && b->period_ns) {
		b->col_cpu = column(b, prof, cpu, ns);
		vt[4].type = cpu;
		vt[4].unit = ns;
		prof->period_type = &vt[4];
		prof->period = sat_i64(o->period_ns);
	}
	if (b->take_off)
		b->col_off = column(b, prof, off, ns);
	if (view == BT_VIEW_WALL && b->period_ns)
		b->col_wall = column(b, prof, wall, ns);
	if (view != BT_VIEW_CPU)
		prof->default_sample_type = view == BT_VIEW_WALL && b->period_ns ? wall : off;
	if (o) {
		prof->time_nanos = o->time_ns;
		prof->duration_nanos = o->duration_ns;
	}
	if (comment) {
		prof->comment = &b->comment_id;
		prof->n_comment = 1;
	}
	return 0;
}

/* ---- from a session ------------------------------------------------------------------------- */

/* What a mapping needs beyond its message while locations are being assigned. */
struct map_info {
	uint32_t dso_id, path_id;   /* user mappings */
	bool kernel;
	bool jit;                   /* JIT code of one process: jit_id is its table */
	uint32_t jit_id;
	uint32_t kmod;              /* kernel: a module version's id + 1, 0 for the kernel image */
	uint64_t kbase, ksize;      /* a module's loaded range */
	bool all_named;
	size_t named, lined;        /* its named locations, those with source lines */
	bool sampled;               /* lo and hi are set */
	uint64_t lo, hi;            /* file offsets (user) or addresses (kernel) sampled */
	uint64_t size;              /* the file's size when known */
	const struct bt_elf_layout *layout;  /* user files: the PT_LOADs, when known */
	const struct bt_elf_load *text;      /* the executable segment the mapping stands for */
	bool none;                  /* the empty first mapping of a profile without a program */
};

struct map_index {
	struct map_info *info;
	struct bt_htab h;
	size_t kernel;              /* index + 1 of the kernel mapping; 0: none yet */
};

static bool map_eq(void *ctx, uint64_t val, const void *key)
{
	const struct map_info *a = &((const struct map_index *)ctx)->info[val], *k = key;
	return !a->kernel && a->dso_id == k->dso_id && a->path_id == k->path_id;
}

/* Appends a mapping named file with build-id hex (may be ""), described by info: its index or
 * -ENOMEM. */
static int64_t add_map(struct pb_build *b, struct map_index *mi, const char *file, const char *hex,
		       const struct map_info *info)
{
	size_t i = b->nmaps;
	pb_mapping *m = &b->maps[i];
	perftools__profiles__mapping__init(m);
	m->id = i + 1;
	int64_t fn = str(b, file), bid = str(b, hex);
	if (fn < 0 || bid < 0)
		return -ENOMEM;
	m->filename = fn;
	m->build_id = bid;
	mi->info[i] = *info;
	b->nmaps++;
	return (int64_t)i;
}

/* The mapping of user file file_id, added when new: its index, -ENOENT for an unknown file, or
 * -ENOMEM. */
static int64_t user_map(struct pb_build *b, struct map_index *mi, const struct bt_session *s,
			uint32_t file_id)
{
	if (file_id >= s->dsos.nfiles)
		return -ENOENT;
	const struct bt_file *f = &s->dsos.files[file_id];
	struct map_info key = { .dso_id = f->dso_id, .path_id = f->path_id };
	uint32_t h = bt_hash_u64(((uint64_t)f->dso_id << 32) | f->path_id);
	uint64_t *v = bt_htab_find(&mi->h, h, map_eq, mi, &key);
	if (v)
		return (int64_t)*v;
	const struct bt_dso *d = f->dso_id < s->dsos.ndsos ? &s->dsos.dsos[f->dso_id] : NULL;
	char hex[2 * BT_BUILD_ID_MAXLEN + 1] = "";
	if (d && d->build_id.len)
		bt_buildid_hex(&d->build_id, hex, sizeof(hex));
	key.all_named = true;
	key.layout = bt_session_file_layout(s, file_id);
	struct stat st;
	if (d && d->fd >= 0 && fstat(d->fd, &st) == 0 && st.st_size > 0)
		key.size = (uint64_t)st.st_size;
	int64_t i = add_map(b, mi, bt_strtab_get(&s->dsos.paths, f->path_id), hex, &key);
	if (i >= 0 && bt_htab_insert(&mi->h, h, (uint64_t)i))
		return -ENOMEM;
	return i;
}

/* A module's mapping: its name in brackets as perf writes module names, its build-id, the range it
 * was loaded at. One per module version (few: a linear search will do). */
static int64_t module_map(struct pb_build *b, struct map_index *mi, const struct bt_session *s, uint32_t kmod)
{
	for (size_t i = 0; i < b->nmaps; i++)
		if (mi->info[i].kernel && mi->info[i].kmod == kmod)
			return (int64_t)i;
	const struct bt_kmod_ver *v = bt_kmods_get(&s->kmods, kmod - 1);
	if (!v)
		return -ENOENT;
	char hex[2 * BT_BUILD_ID_MAXLEN + 1] = "", name[BT_KMOD_NAME_LEN + 3];
	if (v->mod.build_id.len)
		bt_buildid_hex(&v->mod.build_id, hex, sizeof(hex));
	snprintf(name, sizeof(name), "[%s]", v->mod.name);
	struct map_info info = { .kernel = true, .all_named = true, .kmod = kmod,
				 .kbase = v->mod.base, .ksize = v->mod.size };
	return add_map(b, mi, name, hex, &info);
}

/* The JIT code of one process (named from its perf map): a mapping of its own, "[jit] PID", with
 * no build-id; its file offsets are the code's addresses. One per process (few: a linear search). */
static int64_t jit_map(struct pb_build *b, struct map_index *mi, const struct bt_session *s, uint32_t jit_id)
{
	for (size_t i = 0; i < b->nmaps; i++)
		if (mi->info[i].jit && mi->info[i].jit_id == jit_id)
			return (int64_t)i;
	char name[32];
	snprintf(name, sizeof(name), "[jit] %d", bt_jitmaps_pid(&s->jit, jit_id));
	struct map_info info = { .jit = true, .jit_id = jit_id, .all_named = true };
	return add_map(b, mi, name, "", &info);
}

static int64_t kernel_map(struct pb_build *b, struct map_index *mi, const struct bt_session *s,
			  const struct bt_pprof_opts *o, uint32_t kmod)
{
	if (kmod)
		return module_map(b, mi, s, kmod);
	if (mi->kernel)
		return (int64_t)mi->kernel - 1;
	struct bt_build_id id = { 0 };
	char hex[2 * BT_BUILD_ID_MAXLEN + 1] = "";
	/* An unreadable build-id leaves it empty: the frames keep their names and addresses. */
	if (bt_kident_kernel_build_id(o && o->kernel_root ? o->kernel_root : "", &id) == 0)
		bt_buildid_hex(&id, hex, sizeof(hex));
	struct map_info info = { .kernel = true, .all_named = true };
	int64_t i = add_map(b, mi, BT_PPROF_KERNEL_MAPPING, hex, &info);
	if (i >= 0)
		mi->kernel = (size_t)i + 1;
	return i;
}

#define PAGE 4096ULL
/* Synthetic ranges start here and are this far apart, so no two mappings ever look adjacent. */
#define SYNTH_BASE 0x10000000ULL
#define SYNTH_GAP 0x200000ULL
/* and stay below the kernel half of the address space */
#define SYNTH_END 0x7fff00000000ULL

/* Gives every mapping its memory range: user files a synthetic one, the kernel the range of its
 * sampled addresses. */
/* The executable PT_LOAD holding file offset off (UINT64_MAX: the first one), or NULL. */
static const struct bt_elf_load *text_segment(const struct bt_elf_layout *l, uint64_t off)
{
	for (size_t i = 0; l && i < l->nload && i < BT_ELF_MAX_LOADS; i++) {
		const struct bt_elf_load *ld = &l->load[i];
		if ((ld->flags & PF_X) && (off == UINT64_MAX || (off >= ld->offset && off - ld->offset < ld->filesz)))
			return ld;
	}
	return NULL;
}

static int place_maps(struct pb_build *b, struct map_index *mi)
{
	uint64_t next = SYNTH_BASE;
	for (size_t i = 0; i < b->nmaps; i++) {
		struct map_info *in = &mi->info[i];
		if (in->none)
			continue;
		if (!in->kernel && !in->jit)
			in->text = text_segment(in->layout, in->sampled ? in->lo : UINT64_MAX);
		if (!in->kernel && !in->jit && !in->text)
			in->text = text_segment(in->layout, UINT64_MAX);
		pb_mapping *m = &b->maps[i];
		m->has_functions = in->all_named;
		m->has_filenames = m->has_line_numbers = m->has_inline_frames = in->lined && in->lined == in->named;
		if (in->kernel) {
			if (in->kmod && in->ksize && in->kbase <= UINT64_MAX - in->ksize) {
				m->memory_start = in->kbase;
				m->memory_limit = in->kbase + in->ksize;
			} else if (in->sampled) {
				m->memory_start = in->lo & ~(PAGE - 1);
				m->memory_limit = in->hi == UINT64_MAX ? UINT64_MAX : in->hi + 1;
			}
			continue;
		}
		if (in->text) {
			/* where the file's own instructions are: its executable segment at its ELF virtual
			 * address, as the process mapped it less its load bias (and down to the lowest
			 * sampled address, up to the highest): frames carry their ELF addresses */
			uint64_t delta = in->text->vaddr - in->text->offset, vlo = in->text->vaddr;
			uint64_t vhi = in->text->vaddr + in->text->memsz, v;
			if (in->sampled && bt_elf_offset_to_vaddr(in->layout, in->lo, &v) == 0 && v < vlo && v >= delta)
				vlo = v;
			if (in->sampled && bt_elf_offset_to_vaddr(in->layout, in->hi, &v) == 0 && v >= vhi)
				vhi = v + 1;
			m->memory_start = vlo & ~(PAGE - 1);
			if (m->memory_start < delta)
				m->memory_start = delta;
			m->memory_limit = (vhi + PAGE - 1) & ~(PAGE - 1);
			m->file_offset = m->memory_start - delta;
			continue;
		}
		if (in->jit) {
			/* JIT code has no file: its mapping is where it ran, and its locations keep the
			 * process's own addresses (whatever they are: a walk that went astray in JIT
			 * code may give any address, and one such frame must not cost the profile) */
			uint64_t base = in->sampled ? in->lo & ~(PAGE - 1) : 0;
			uint64_t limit = in->sampled && in->hi < UINT64_MAX - PAGE ? (in->hi + PAGE) & ~(PAGE - 1)
										  : UINT64_MAX;
			m->memory_start = base;
			m->memory_limit = limit > base ? limit : base + PAGE;
			m->file_offset = base;
			continue;
		}
		/* a file whose layout is unknown: at a synthetic address, from offset 0 */
		uint64_t size = in->sampled && in->hi >= in->size ? in->hi + 1 : in->size;
		size = (size + PAGE - 1) & ~(PAGE - 1);
		if (!size)
			size = PAGE;
		if (size > SYNTH_END - next)
			return -E2BIG;
		m->memory_start = next;
		m->memory_limit = next + size;
		if (SYNTH_END - m->memory_limit < SYNTH_GAP)
			return -E2BIG;
		next = m->memory_limit + SYNTH_GAP;
	}
	return 0;
}

static const char synth_comment[] =
	"buildtrace: user frames are at their file's ELF virtual addresses (a synthetic per-mapping "
	"address where the file's layout is unknown): address - memory_start + file_offset is the offset "
	"in the file";

/* A string label key=value on sample sm, unless value is NULL or empty (string index 0 would read as
 * a numeric label). 0 or -ENOMEM. */
static int str_label(struct pb_build *b, pb_sample *sm, int64_t key, const char *value)
{
	if (!value || !*value)
		return 0;
	int64_t v = str(b, value);
	if (v < 0)
		return -ENOMEM;
	add_label(b, sm, key)->str = v;
	return 0;
}

/* A labelled profile's own labels of one sample: tid, comm, the executable's path and build-id, the
 * cgroup and the container it names. 0 or -ENOMEM. */
static int sample_labels(struct pb_build *b, const struct bt_session *s, const struct bt_stack *st,
			 pb_sample *sm, const int64_t *keys)
{
	const struct bt_profile *p = &s->prof;
	struct bt_dso_registry *dsos = (struct bt_dso_registry *)&s->dsos;
	add_label(b, sm, keys[0])->num = st->tid;
	int err = str_label(b, sm, keys[1], bt_strtab_get(&p->names, st->comm_id));
	const struct bt_file *f = st->exe_file != BT_NAME_UNSET ? bt_dso_file_get(dsos, st->exe_file) : NULL;
	if (!err && f)
		err = str_label(b, sm, keys[2], bt_strtab_get(&dsos->paths, f->path_id));
	const struct bt_dso *d = f && f->dso_id != BT_NO_ID ? bt_dso_get(dsos, f->dso_id) : NULL;
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	if (!err && d && d->build_id.len)
		err = str_label(b, sm, keys[3], bt_buildid_hex(&d->build_id, hex, sizeof(hex)));
	const char *cg = st->cgroup_id != BT_NAME_UNSET ? bt_strtab_get(&p->names, st->cgroup_id) : NULL;
	if (!err)
		err = str_label(b, sm, keys[4], cg);
	char cid[BT_CONTAINER_ID_LEN + 1];
	if (!err && cg && bt_cgroup_container_id(cg, cid, NULL) == 0)
		err = str_label(b, sm, keys[5], cid);
	return err;
}

/* The labels of the series a sample belongs to ("name=value,...", values without ',' or '='). 0 or
 * -ENOMEM. */
static int series_labels(struct pb_build *b, pb_sample *sm, const char *text)
{
	char name[256];
	while (*text) {
		const char *eq = strchr(text, '='), *end = strchrnul(text, ',');
		if (!eq || eq > end || (size_t)(eq - text) >= sizeof(name))
			return 0;
		memcpy(name, text, (size_t)(eq - text));
		name[eq - text] = '\0';
		char *value = strndup(eq + 1, (size_t)(end - eq - 1));
		int64_t key = str(b, name);
		int err = !value || key < 0 ? -ENOMEM : str_label(b, sm, key, value);
		free(value);
		if (err)
			return err;
		text = *end ? end + 1 : end;
	}
	return 0;
}

/* One sample per stack, labelled "thread" (its comm) and "pid" when processes are kept apart, with
 * the labels of sample_labels in a labelled profile, and with its series' labels. 0 or -ENOMEM. */
static int add_samples(struct pb_build *b, const struct bt_session *s, const struct bt_pprof_opts *o)
{
	const struct bt_profile *p = &s->prof;
	static const char *const names[] = { "tid", "comm", "exe", "build_id", "cgroup", "container_id" };
	int64_t keys[6] = { 0 };
	int64_t thread = str(b, "thread"), pid = p->per_pid ? str(b, "pid") : 0;
	int64_t tid = p->per_tid && !p->labels ? str(b, "tid") : 0;
	if (thread < 0 || pid < 0 || tid < 0)
		return -ENOMEM;
	for (size_t i = 0; p->labels && i < 6; i++)
		if ((keys[i] = str(b, names[i])) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct bt_stack *st = &p->stacks[i];
		if (!taken(b, st))
			continue;
		pb_sample *sm = add_sample(b, st->nframes, st);
		for (uint32_t j = 0; j < st->nframes; j++)
			sm->location_id[j] = (uint64_t)p->frames[st->first + st->nframes - 1 - j] + 1;
		if (str_label(b, sm, thread, bt_strtab_get(&p->names, st->comm_id)))
			return -ENOMEM;
		if (p->per_pid)
			add_label(b, sm, pid)->num = st->pid;
		if (tid)
			add_label(b, sm, tid)->num = st->tid;
		if (p->labels && sample_labels(b, s, st, sm, keys))
			return -ENOMEM;
		if (st->series_id != BT_NAME_UNSET && series_labels(b, sm, bt_strtab_get(&p->names, st->series_id)))
			return -ENOMEM;
	}
	return 0;
}

static int build_session(struct pb_build *b, const struct bt_session *s, const struct bt_pprof_opts *o,
			 struct map_index *mi)
{
	const struct bt_profile *p = &s->prof;
	int64_t r;
	/* The program first, as pprof takes the first mapping for it; no program, no file. */
	const struct bt_process *main = o && o->main_pid > 0 ? bt_proctable_find(&s->procs, o->main_pid) : NULL;
	if (main && main->nmaps)
		r = user_map(b, mi, s, main->maps[0].file_id);
	else
		r = add_map(b, mi, "", "", &(struct map_info){ .none = true });
	if (r < 0)
		return (int)r;
	/* Mappings and functions first: every location's mapping must be placed before its address is. */
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct bt_loc *l = &p->locs[i];
		pb_location *loc = &b->locs[i];
		perftools__profiles__location__init(loc);
		loc->id = i + 1;
		r = -ENOENT;
		if (l->kind == BT_LOC_USER)
			r = user_map(b, mi, s, l->file_id);
		else if (l->kind == BT_LOC_KERNEL)
			r = kernel_map(b, mi, s, o, l->file_id);
		else if (l->kind == BT_LOC_JIT)
			r = jit_map(b, mi, s, l->file_id);
		if (r == -ENOMEM)
			return -ENOMEM;
		struct map_info *in = r >= 0 ? &mi->info[r] : NULL;
		if (in) {
			loc->mapping_id = (uint64_t)r + 1;
			if (!in->sampled || l->addr < in->lo)
				in->lo = l->addr;
			if (!in->sampled || l->addr > in->hi)
				in->hi = l->addr;
			in->sampled = true;
		}
		const char *name = l->unresolved ? NULL : bt_strtab_get(&p->names, l->name_id);
		if (!name) {
			if (in)
				in->all_named = false;
			continue;
		}
		int64_t sid = str(b, name);
		if (sid < 0)
			return -ENOMEM;
		if (in) {
			in->named++;
			in->lined += l->nlines > 0;
		}
		if (!l->nlines) {
			if ((r = func_of(b, sid)) < 0)
				return -ENOMEM;
			append_line(b, loc, (size_t)r, 0);
			continue;
		}
		/* Source lines, innermost first as pprof wants them; the symbol's name stands in for a
		 * function DWARF does not name, and names the outermost, the function the instruction
		 * belongs to, as it is named without lines (DWARF may say __libc_start_main where the
		 * symbols, and perf, say __libc_start_main_impl), unless only DWARF names it. */
		for (uint32_t k = 0; k < l->nlines; k++) {
			const struct bt_srcline *sl = &p->srclines[l->lines_first + k];
			const char *fn = k + 1 < l->nlines || name[0] == '[' ? bt_strtab_get(&p->names, sl->func_id)
									       : NULL;
			const char *file = bt_strtab_get(&p->names, sl->file_id);
			int64_t fsid = fn ? str(b, fn) : sid, fid = str(b, file ? file : "");
			if (fsid < 0 || fid < 0 || (r = func_in(b, fsid, fid)) < 0)
				return -ENOMEM;
			append_line(b, loc, (size_t)r, sl->line);
		}
	}
	b->nlocs = p->nlocs;
	int err = place_maps(b, mi);
	if (err)
		return err;
	for (size_t i = 0; i < p->nlocs; i++) {
		pb_location *loc = &b->locs[i];
		const struct bt_loc *l = &p->locs[i];
		/* a Python frame is its Line: no address in any mapping */
		loc->address = l->kind == BT_LOC_PYTHON ? 0 : l->addr;
		const struct map_info *in = loc->mapping_id ? &mi->info[loc->mapping_id - 1] : NULL;
		uint64_t vaddr;
		if (in && in->text && bt_elf_offset_to_vaddr(in->layout, l->addr, &vaddr) == 0)
			loc->address = vaddr;
		else if (in && !in->kernel)
			loc->address = b->maps[loc->mapping_id - 1].memory_start + l->addr -
				       b->maps[loc->mapping_id - 1].file_offset;
		/* the one address no mapping can hold (its limit is past its last byte) */
		if (in && in->jit && loc->address >= b->maps[loc->mapping_id - 1].memory_limit)
			loc->mapping_id = 0;
	}
	return add_samples(b, s, o);
}

int bt_pprof_write_session(const struct bt_session *s, const struct bt_pprof_opts *o, FILE *out)
{
	const struct bt_profile *p = &s->prof;
	struct pb_build b;
	/* a line per location, or one per source line (inlined functions each have theirs) */
	size_t nlines = 0;
	for (size_t i = 0; i < p->nlocs; i++)
		nlines += p->locs[i].nlines ? p->locs[i].nlines : 1;
	/* and the labels of each sample's series, one per name=value */
	size_t series_labels = 0;
	for (size_t i = 0; i < p->nstacks; i++) {
		const char *t = p->stacks[i].series_id != BT_NAME_UNSET ? bt_strtab_get(&p->names, p->stacks[i].series_id) : "";
		for (series_labels += *t != '\0'; *t; t++)
			series_labels += *t == ',';
	}
	struct pb_sizes sz = { .maps = p->nlocs + 2, .locs = p->nlocs, .funcs = nlines, .samples = p->nstacks,
			      .loc_ids = p->nframes, .values = 4 * p->nstacks,
			      .labels = (p->labels ? 8 : 3) * p->nstacks + series_labels };
	int err = build_init(&b, &sz);
	if (err)
		return err;
	struct map_index mi = { .info = calloc(p->nlocs + 3, sizeof(*mi.info)) };
	bt_htab_init(&mi.h);
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	if (!mi.info)
		err = -ENOMEM;
	if (!err)
		err = header(&b, &prof, o, synth_comment);
	if (!err)
		err = build_session(&b, s, o, &mi);
	if (!err)
		err = emit(&b, &prof, out);
	free(mi.info);
	bt_htab_free(&mi.h);
	build_free(&b);
	return err;
}

/* ---- from a profile without its session ------------------------------------------------------ */

/* Where the kernel mapping of a profile without addresses starts: its frames get addresses of their
 * own there (the location index), in the kernel half as real kernel frames are. */
#define NAMED_KERNEL_BASE 0xffffffff80000000ULL

/* The pprof location of profile location li, made when first met (loc_of[li] is its index + 1):
 * its name (and source lines when it has them) as functions, kernel frames in the one kernel
 * mapping. The location's index, or -ENOMEM. */
static int64_t named_location(struct pb_build *b, const struct bt_profile *p, uint32_t li, uint32_t *loc_of,
			      int64_t *kmap)
{
	if (loc_of[li])
		return loc_of[li] - 1;
	const struct bt_loc *l = &p->locs[li];
	const char *name = bt_strtab_get(&p->names, l->name_id);
	int64_t sid = str(b, name ? name : "[unknown]");
	if (sid < 0)
		return -ENOMEM;
	pb_location *loc = &b->locs[b->nlocs];
	perftools__profiles__location__init(loc);
	loc->id = b->nlocs + 1;
	if (l->kind == BT_LOC_KERNEL) {
		if (*kmap < 0) {
			int64_t file = str(b, BT_PPROF_KERNEL_MAPPING);
			if (file < 0)
				return -ENOMEM;
			pb_mapping *m = &b->maps[b->nmaps];
			perftools__profiles__mapping__init(m);
			m->id = b->nmaps + 1;
			m->filename = file;
			m->has_functions = true;
			m->memory_start = NAMED_KERNEL_BASE;
			m->memory_limit = NAMED_KERNEL_BASE + p->nlocs + 1;
			*kmap = (int64_t)b->nmaps++;
		}
		loc->mapping_id = b->maps[*kmap].id;
		loc->address = NAMED_KERNEL_BASE + li;
	}
	/* innermost first, the outermost named as the frame is */
	for (uint32_t k = 0; k < l->nlines; k++) {
		const struct bt_srcline *sl = &p->srclines[l->lines_first + k];
		const char *fn = k + 1 < l->nlines ? bt_strtab_get(&p->names, sl->func_id) : NULL;
		int64_t fsid = fn ? str(b, fn) : sid;
		int64_t file = str(b, bt_strtab_get(&p->names, sl->file_id));
		int64_t fi = fsid < 0 || file < 0 ? -ENOMEM : func_in(b, fsid, file);
		if (fi < 0)
			return -ENOMEM;
		append_line(b, loc, (size_t)fi, sl->line);
	}
	if (!l->nlines) {
		int64_t fi = func_of(b, sid);
		if (fi < 0)
			return -ENOMEM;
		append_line(b, loc, (size_t)fi, 0);
	}
	loc_of[li] = (uint32_t)++b->nlocs;
	return loc_of[li] - 1;
}

int bt_pprof_write_profile(const struct bt_profile *p, const struct bt_pprof_opts *o, FILE *out)
{
	size_t frames = 0;
	for (size_t i = 0; i < p->nstacks; i++)
		frames += p->stacks[i].nframes;
	struct pb_build b;
	struct pb_sizes sz = { .maps = 1, .locs = p->nlocs, .funcs = p->nlocs + p->nsrclines, .samples = p->nstacks,
			      .loc_ids = frames, .values = 4 * p->nstacks,
			      .labels = 3 * p->nstacks };
	uint32_t *loc_of = calloc(p->nlocs + 1, sizeof(*loc_of));
	int err = loc_of ? build_init(&b, &sz) : -ENOMEM;
	if (err) {
		free(loc_of);
		return err;
	}
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	int64_t thread = -ENOMEM, pid_key = 0, tid_key = 0, kmap = -1;
	err = header(&b, &prof, o, NULL);
	if (!err && ((thread = str(&b, "thread")) < 0 || (p->per_pid && (pid_key = str(&b, "pid")) < 0) ||
		     (p->per_tid && (tid_key = str(&b, "tid")) < 0)))
		err = -ENOMEM;
	for (size_t i = 0; i < p->nstacks && !err; i++) {
		const struct bt_stack *st = &p->stacks[i];
		if (!taken(&b, st))
			continue;
		pb_sample *sm = add_sample(&b, st->nframes, st);
		const char *comm = bt_strtab_get(&p->names, st->comm_id);
		int64_t cid = str(&b, comm);
		if (cid < 0) {
			err = -ENOMEM;
			break;
		}
		if (cid)
			add_label(&b, sm, thread)->str = cid;
		if (p->per_pid)
			add_label(&b, sm, pid_key)->num = st->pid;
		if (p->per_tid)
			add_label(&b, sm, tid_key)->num = st->tid;
		/* pprof lists a sample's locations leaf first */
		for (uint32_t j = 0; j < st->nframes && !err; j++) {
			int64_t li = named_location(&b, p, p->frames[st->first + j], loc_of, &kmap);
			if (li < 0)
				err = (int)li;
			else
				sm->location_id[st->nframes - 1 - j] = b.locs[li].id;
		}
	}
	if (!err)
		err = emit(&b, &prof, out);
	build_free(&b);
	free(loc_of);
	return err;
}
