/* pprof.c - pprof output and input through the protobuf-c code generated from proto/profile.proto.
 * Writers size every table before filling it, so the messages can point into the tables. */
#include "output/pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "elf/buildid.h"
#include "kernel/kframe.h"
#include "kernel/kident.h"
#include "proto/profile.pb-c.h"
#include "session/session.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* The kernel image's mapping; a module's is "[NAME]". */
#define KERNEL_MAPPING BT_KFRAME_IMAGE

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
static int build_init(struct pb_build *b, size_t maps, size_t locs, size_t funcs, size_t samples,
		      size_t loc_ids, size_t values, size_t labels)
{
	memset(b, 0, sizeof(*b));
	bt_strtab_init(&b->strs);
	bt_htab_init(&b->func_index);
	/* calloc(0) may return NULL: ask for one element at least */
	b->maps = calloc(maps + 1, sizeof(*b->maps));
	b->locs = calloc(locs + 1, sizeof(*b->locs));
	size_t lines = funcs > locs ? funcs : locs;
	b->lines = calloc(lines + 1, sizeof(*b->lines));
	b->line_ptrs = calloc(lines + 1, sizeof(*b->line_ptrs));
	b->funcs = calloc(funcs + 1, sizeof(*b->funcs));
	b->samples = calloc(samples + 1, sizeof(*b->samples));
	b->loc_ids = calloc(loc_ids + 1, sizeof(*b->loc_ids));
	b->values = calloc(values + 1, sizeof(*b->values));
	b->labels = calloc(labels + 1, sizeof(*b->labels));
	b->label_ptrs = calloc(labels + 1, sizeof(*b->label_ptrs));
	if (!b->maps || !b->locs || !b->lines || !b->line_ptrs || !b->funcs || !b->samples ||
	    !b->loc_ids || !b->values || !b->labels || !b->label_ptrs || bt_strtab_add(&b->strs, "") != 0) {
		build_free(b);
		return -ENOMEM;
	}
	return 0;
}

static int64_t str_n(struct pb_build *b, const char *s, size_t n)
{
	return bt_strtab_intern(&b->strs, s, n);
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

/* Starts the next sample: nlocs location ids to fill from its loc_ids, values for count. */
static pb_sample *add_sample(struct pb_build *b, size_t nlocs, uint64_t count, uint64_t period_ns)
{
	pb_sample *s = &b->samples[b->nsamples++];
	perftools__profiles__sample__init(s);
	s->location_id = &b->loc_ids[b->nloc_ids];
	s->n_location_id = nlocs;
	b->nloc_ids += nlocs;
	s->value = &b->values[b->nvalues];
	s->value[0] = sat_i64(count);
	s->n_value = 1;
	if (period_ns) {
		uint64_t ns = period_ns && count > UINT64_MAX / period_ns ? UINT64_MAX : count * period_ns;
		s->value[1] = sat_i64(ns);
		s->n_value = 2;
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
	for (size_t i = 0; i < nstr; i++)
		strs[i] = (char *)bt_strtab_get(&b->strs, (uint32_t)i);
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
	free(strs);
	free(maps);
	free(locs);
	free(funcs);
	free(samples);
	return err;
}

/* The header every profile shares: sample types, period, times. */
static int header(struct pb_build *b, pb_profile *prof, pb_value_type vt[3],
		  pb_value_type *vtp[2], const struct bt_pprof_opts *o, const char *comment,
		  int64_t *comment_id)
{
	int64_t samples = str(b, "samples"), count = str(b, "count");
	int64_t cpu = str(b, "cpu"), ns = str(b, "nanoseconds");
	*comment_id = comment ? str(b, comment) : 0;
	if (samples < 0 || count < 0 || cpu < 0 || ns < 0 || *comment_id < 0)
		return -ENOMEM;
	for (int i = 0; i < 3; i++)
		perftools__profiles__value_type__init(&vt[i]);
	vt[0].type = samples;
	vt[0].unit = count;
	vtp[0] = &vt[0];
	prof->sample_type = vtp;
	prof->n_sample_type = 1;
	if (o && o->period_ns) {
		vt[1].type = cpu;
		vt[1].unit = ns;
		vtp[1] = &vt[1];
		prof->n_sample_type = 2;
		vt[2].type = cpu;
		vt[2].unit = ns;
		prof->period_type = &vt[2];
		prof->period = sat_i64(o->period_ns);
	}
	if (o) {
		prof->time_nanos = o->time_ns;
		prof->duration_nanos = o->duration_ns;
	}
	if (comment) {
		prof->comment = comment_id;
		prof->n_comment = 1;
	}
	return 0;
}

/* ---- from a session ------------------------------------------------------------------------- */

/* What a mapping needs beyond its message while locations are being assigned. */
struct map_info {
	uint32_t dso_id, path_id;   /* user mappings */
	bool kernel;
	uint32_t kmod;              /* kernel: a module version's id + 1, 0 for the kernel image */
	uint64_t kbase, ksize;      /* a module's loaded range */
	bool all_named;
	size_t named, lined;        /* its named locations, those with source lines */
	bool sampled;               /* lo and hi are set */
	uint64_t lo, hi;            /* file offsets (user) or addresses (kernel) sampled */
	uint64_t size;              /* the file's size when known */
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
	int64_t i = add_map(b, mi, KERNEL_MAPPING, hex, &info);
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
static int place_maps(struct pb_build *b, const struct map_index *mi)
{
	uint64_t next = SYNTH_BASE;
	for (size_t i = 0; i < b->nmaps; i++) {
		const struct map_info *in = &mi->info[i];
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
		if (in->sampled && in->hi >= SYNTH_END)
			return -E2BIG;
		uint64_t size = in->sampled && in->hi >= in->size ? in->hi + 1 : in->size;
		size = (size + PAGE - 1) & ~(PAGE - 1);
		if (!size)
			size = PAGE;
		if (size > SYNTH_END - next)
			return -E2BIG;
		m->memory_start = next;
		m->memory_limit = next + size;
		m->file_offset = 0;
		if (SYNTH_END - m->memory_limit < SYNTH_GAP)
			return -E2BIG;
		next = m->memory_limit + SYNTH_GAP;
	}
	return 0;
}

static const char synth_comment[] =
	"buildtrace: user frames are at a synthetic per-mapping address: address - memory_start + "
	"file_offset is the offset in the file";

static int build_session(struct pb_build *b, const struct bt_session *s, const struct bt_pprof_opts *o,
			 struct map_index *mi)
{
	const struct bt_profile *p = &s->prof;
	int64_t r;
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
		 * function DWARF does not name. */
		for (uint32_t k = 0; k < l->nlines; k++) {
			const struct bt_srcline *sl = &p->srclines[l->lines_first + k];
			const char *fn = bt_strtab_get(&p->names, sl->func_id);
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
		loc->address = l->addr;
		if (loc->mapping_id && !mi->info[loc->mapping_id - 1].kernel)
			loc->address = b->maps[loc->mapping_id - 1].memory_start + l->addr;
	}
	int64_t thread = str(b, "thread"), pid = p->per_pid ? str(b, "pid") : 0;
	if (thread < 0 || pid < 0)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct bt_stack *st = &p->stacks[i];
		pb_sample *sm = add_sample(b, st->nframes, st->count, o ? o->period_ns : 0);
		for (uint32_t j = 0; j < st->nframes; j++)
			sm->location_id[j] = (uint64_t)p->frames[st->first + st->nframes - 1 - j] + 1;
		int64_t comm = str(b, bt_strtab_get(&p->names, st->comm_id));
		if (comm < 0)
			return -ENOMEM;
		/* string index 0 would read as a numeric label: no comm, no label */
		if (comm)
			add_label(b, sm, thread)->str = comm;
		if (p->per_pid)
			add_label(b, sm, pid)->num = st->pid;
	}
	return 0;
}

int bt_pprof_write_session(const struct bt_session *s, const struct bt_pprof_opts *o, FILE *out)
{
	const struct bt_profile *p = &s->prof;
	struct pb_build b;
	/* a line per location, or one per source line (inlined functions each have theirs) */
	size_t nlines = 0;
	for (size_t i = 0; i < p->nlocs; i++)
		nlines += p->locs[i].nlines ? p->locs[i].nlines : 1;
	int err = build_init(&b, p->nlocs + 1, p->nlocs, nlines, p->nstacks, p->nframes,
			     2 * p->nstacks, 2 * p->nstacks);
	if (err)
		return err;
	struct map_index mi = { .info = calloc(p->nlocs + 2, sizeof(*mi.info)) };
	bt_htab_init(&mi.h);
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type vt[3];
	pb_value_type *vtp[2];
	int64_t comment;
	if (!mi.info)
		err = -ENOMEM;
	if (!err)
		err = header(&b, &prof, vt, vtp, o, synth_comment, &comment);
	if (!err)
		err = build_session(&b, s, o, &mi);
	if (!err)
		err = emit(&b, &prof, out);
	free(mi.info);
	bt_htab_free(&mi.h);
	build_free(&b);
	return err;
}

/* ---- from folded stacks --------------------------------------------------------------------- */

int bt_pprof_write_folded(const struct bt_folded *f, const struct bt_pprof_opts *o, FILE *out)
{
	size_t frames = 0;
	for (size_t i = 0; i < f->n; i++)
		for (const char *c = f->v[i].text; *c; c++)
			frames += *c == ';';
	struct pb_build b;
	int err = build_init(&b, 0, frames, frames, f->n, frames, 2 * f->n, f->n);
	if (err)
		return err;
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type vt[3];
	pb_value_type *vtp[2];
	int64_t comment, thread = -ENOMEM;
	err = header(&b, &prof, vt, vtp, o, NULL, &comment);
	if (!err && (thread = str(&b, "thread")) < 0)
		err = -ENOMEM;
	for (size_t i = 0; i < f->n && !err; i++) {
		const char *text = f->v[i].text;
		size_t n = 0;
		for (const char *c = text; *c; c++)
			n += *c == ';';
		pb_sample *sm = add_sample(&b, n, f->v[i].count, o ? o->period_ns : 0);
		const char *e = strchr(text, ';');
		int64_t comm = str_n(&b, text, e ? (size_t)(e - text) : strlen(text));
		if (comm < 0) {
			err = -ENOMEM;
			break;
		}
		if (comm)
			add_label(&b, sm, thread)->str = comm;
		/* one location per distinct name, sharing the function's index */
		for (size_t j = 0; e; j++) {
			const char *name = e + 1;
			e = strchr(name, ';');
			int64_t sid = str_n(&b, name, e ? (size_t)(e - name) : strlen(name));
			int64_t fi = sid < 0 ? sid : func_of(&b, sid);
			if (fi < 0) {
				err = -ENOMEM;
				break;
			}
			if ((size_t)fi == b.nlocs) {
				pb_location *loc = &b.locs[b.nlocs++];
				perftools__profiles__location__init(loc);
				loc->id = b.nlocs;
				append_line(&b, loc, (size_t)fi, 0);
			}
			sm->location_id[n - 1 - j] = (uint64_t)fi + 1;
		}
	}
	if (!err)
		err = emit(&b, &prof, out);
	build_free(&b);
	return err;
}

/* ---- reading ---------------------------------------------------------------------------------- */

bool bt_pprof_is_gzip(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

static int gunzip(const void *buf, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -ENOMEM;
	size_t cap = len * 4 > 65536 ? len * 4 : 65536, n = 0;
	if (cap > BT_PPROF_MAX_BYTES)
		cap = BT_PPROF_MAX_BYTES;
	uint8_t *o = malloc(cap);
	int err = o ? 0 : -ENOMEM, zr = Z_OK;
	const uint8_t *in = buf;
	while (!err && zr != Z_STREAM_END) {
		if (z.avail_in == 0) {
			if (!len) {
				err = -EINVAL;  /* truncated */
				break;
			}
			uInt k = len > (1u << 30) ? (1u << 30) : (uInt)len;
			z.next_in = (Bytef *)in;
			z.avail_in = k;
			in += k;
			len -= k;
		}
		if (n == cap) {
			if (cap >= BT_PPROF_MAX_BYTES) {
				err = -EFBIG;
				break;
			}
			size_t ncap = cap * 2 > BT_PPROF_MAX_BYTES ? BT_PPROF_MAX_BYTES : cap * 2;
			uint8_t *no = realloc(o, ncap);
			if (!no) {
				err = -ENOMEM;
				break;
			}
			o = no;
			cap = ncap;
		}
		size_t room = cap - n > (1u << 30) ? (1u << 30) : cap - n;
		z.next_out = o + n;
		z.avail_out = (uInt)room;
		zr = inflate(&z, Z_NO_FLUSH);
		n += room - z.avail_out;
		if (zr == Z_MEM_ERROR)
			err = -ENOMEM;
		else if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			err = -EINVAL;
	}
	inflateEnd(&z);
	if (err) {
		free(o);
		return err;
	}
	*out = o;
	*out_len = n;
	return 0;
}

/* id -> index tables of a decoded profile, over the messages themselves */
typedef uint64_t (*id_of_fn)(const void *msgs, size_t i);

struct id_ctx {
	const void *msgs;
	id_of_fn id_of;
};

static bool id_eq(void *ctx, uint64_t val, const void *key)
{
	const struct id_ctx *c = ctx;
	return c->id_of(c->msgs, val) == *(const uint64_t *)key;
}

static uint64_t map_id(const void *m, size_t i) { return ((pb_mapping *const *)m)[i]->id; }
static uint64_t loc_id(const void *m, size_t i) { return ((pb_location *const *)m)[i]->id; }
static uint64_t fn_id(const void *m, size_t i) { return ((pb_function *const *)m)[i]->id; }

/* Indexes n messages by id: 0 or -EINVAL for a zero or repeated id. */
static int index_ids(struct bt_htab *h, struct id_ctx *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t id = c->id_of(c->msgs, i);
		uint32_t hh = bt_hash_u64(id);
		if (!id || bt_htab_find(h, hh, id_eq, c, &id))
			return -EINVAL;
		if (bt_htab_insert(h, hh, i))
			return -ENOMEM;
	}
	return 0;
}

static int64_t find_id(const struct bt_htab *h, struct id_ctx *c, uint64_t id)
{
	uint64_t *v = bt_htab_find(h, bt_hash_u64(id), id_eq, c, &id);
	return v ? (int64_t)*v : -1;
}

struct decoded {
	const pb_profile *p;
	int64_t *loc_map;      /* location index -> mapping index, -1: none */
	int64_t *line_fn;      /* per location, first line's slot in fn_of_line */
	int64_t *fn_of_line;   /* function index of each line, locations in order */
	uint64_t *loc_bytes;   /* what a location adds to a folded line, at most */
	char *buf;             /* the name decoded_name made last */
	size_t buf_cap;
};

/* A placeholder name, "[FILE+0xOFF]", as the live session names an unnamed user frame. NULL on
 * ENOMEM (the frame is then [unknown]). */
static const char *placeholder(struct decoded *d, const char *file, uint64_t off)
{
	size_t need = strlen(file) + 32;
	if (need > d->buf_cap) {
		char *nb = realloc(d->buf, need);
		if (!nb)
			return NULL;
		d->buf = nb;
		d->buf_cap = need;
	}
	snprintf(d->buf, d->buf_cap, "[%s+0x%llx]", file, (unsigned long long)off);
	return d->buf;
}

static const char *pstr(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table && p->string_table[i] ? p->string_table[i] : "";
}

static bool str_ok(const pb_profile *p, int64_t i)
{
	return i == 0 || (i > 0 && (size_t)i < p->n_string_table);
}

/* The kernel image's mapping, or a module's: "[name]" in the kernel half of the address space. */
static bool is_kernel_mapping(const pb_profile *p, int64_t mi)
{
	if (mi < 0)
		return false;
	const char *f = pstr(p, p->mapping[mi]->filename);
	return !strncmp(f, KERNEL_MAPPING, strlen(KERNEL_MAPPING)) ||
	       (f[0] == '[' && p->mapping[mi]->memory_start >= 0xffff800000000000ULL);
}

/* Frames of decoded profiles: loc->file_id is the location index, addr the line index (0 for a
 * location without lines); kind KERNEL for a kernel mapping's frames (the folded writer marks them),
 * USER for other lines, UNMAPPED for other locations without lines. */
static const char *decoded_name(void *ctx, const struct bt_loc *l, bool *final, bool *unresolved)
{
	struct decoded *d = ctx;
	const pb_profile *p = d->p;
	int64_t mi = d->loc_map[l->file_id];
	const pb_location *loc = p->location[l->file_id];
	if (loc->n_line) {
		const pb_function *fn = p->function[d->fn_of_line[d->line_fn[l->file_id] + (int64_t)l->addr]];
		const char *name = pstr(p, fn->name);
		if (!*name)
			name = pstr(p, fn->system_name);
		return *name ? name : "[unknown]";
	}
	*unresolved = true;
	if (mi < 0)
		return "[unknown]";
	const pb_mapping *m = p->mapping[mi];
	const char *file = pstr(p, m->filename);
	if (l->kind == BT_LOC_KERNEL)
		return file;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	return placeholder(d, *base ? base : "unknown", loc->address - m->memory_start + m->file_offset);
}

/* The index of the sample value folded stacks count. */
static int value_index(const pb_profile *p, size_t *vi)
{
	if (!p->n_sample_type)
		return -EINVAL;
	for (size_t i = 0; i < p->n_sample_type; i++) {
		if (!p->sample_type[i] || !str_ok(p, p->sample_type[i]->type))
			return -EINVAL;
		if (!strcmp(pstr(p, p->sample_type[i]->type), "samples")) {
			*vi = i;
			return 0;
		}
	}
	*vi = p->n_sample_type - 1;
	if (p->default_sample_type)
		for (size_t i = 0; i < p->n_sample_type; i++)
			if (p->sample_type[i]->type == p->default_sample_type)
				*vi = i;
	return 0;
}

/* Checks references and builds the location tables of d. */
static int check_profile(struct decoded *d, struct bt_htab *fidx, struct id_ctx *fctx)
{
	const pb_profile *p = d->p;
	struct bt_htab midx;
	struct id_ctx mctx = { p->mapping, map_id };
	bt_htab_init(&midx);
	int err = index_ids(&midx, &mctx, p->n_mapping);
	if (!err)
		err = index_ids(fidx, fctx, p->n_function);
	for (size_t i = 0; i < p->n_mapping && !err; i++)
		if (!str_ok(p, p->mapping[i]->filename) || !str_ok(p, p->mapping[i]->build_id))
			err = -EINVAL;
	for (size_t i = 0; i < p->n_function && !err; i++)
		if (!str_ok(p, p->function[i]->name) || !str_ok(p, p->function[i]->system_name))
			err = -EINVAL;
	size_t nlines = 0;
	for (size_t i = 0; i < p->n_location && !err; i++) {
		if (p->location[i]->n_line > SIZE_MAX / 2 - nlines)
			err = -EINVAL;
		else
			nlines += p->location[i]->n_line;
	}
	if (!err) {
		d->loc_map = calloc(p->n_location + 1, sizeof(*d->loc_map));
		d->line_fn = calloc(p->n_location + 1, sizeof(*d->line_fn));
		d->fn_of_line = calloc(nlines + 1, sizeof(*d->fn_of_line));
		d->loc_bytes = calloc(p->n_location + 1, sizeof(*d->loc_bytes));
		if (!d->loc_map || !d->line_fn || !d->fn_of_line || !d->loc_bytes)
			err = -ENOMEM;
	}
	/* name lengths, once each: many lines and locations may repeat a long one */
	uint64_t *fn_len = err ? NULL : calloc(p->n_function + 1, sizeof(*fn_len));
	uint64_t *map_len = err ? NULL : calloc(p->n_mapping + 1, sizeof(*map_len));
	if (!err && (!fn_len || !map_len))
		err = -ENOMEM;
	for (size_t i = 0; i < p->n_function && !err; i++)
		fn_len[i] = strlen(pstr(p, p->function[i]->name)) + strlen(pstr(p, p->function[i]->system_name)) + 8;
	for (size_t i = 0; i < p->n_mapping && !err; i++)
		map_len[i] = strlen(pstr(p, p->mapping[i]->filename));
	size_t k = 0;
	for (size_t i = 0; i < p->n_location && !err; i++) {
		const pb_location *loc = p->location[i];
		d->loc_map[i] = -1;
		if (loc->mapping_id && (d->loc_map[i] = find_id(&midx, &mctx, loc->mapping_id)) < 0)
			err = -EINVAL;
		d->line_fn[i] = (int64_t)k;
		d->loc_bytes[i] = loc->n_line ? 0 : 64 + (d->loc_map[i] < 0 ? 0 : map_len[d->loc_map[i]]);
		for (size_t j = 0; j < loc->n_line && !err; j++) {
			int64_t fi = find_id(fidx, fctx, loc->line[j]->function_id);
			if (fi < 0) {
				err = -EINVAL;
				break;
			}
			d->fn_of_line[k++] = fi;
			d->loc_bytes[i] += fn_len[fi];
		}
	}
	free(fn_len);
	free(map_len);
	bt_htab_free(&midx);
	return err;
}

/* Frames one sample may have, and all samples together. */
#define MAX_STACK (1u << 20)
#define MAX_FRAMES (1u << 27)
/* Bytes of folded text all distinct stacks may come to. */
#define MAX_TEXT (256ULL << 20)

static int fold_decoded(struct decoded *d, struct bt_profile *prof)
{
	size_t work = 0;
	uint64_t text = 0;
	const pb_profile *p = d->p;
	size_t vi = 0;
	int err = value_index(p, &vi);
	if (err && p->n_sample)
		return err;
	struct bt_htab lidx;
	struct id_ctx lctx = { p->location, loc_id };
	bt_htab_init(&lidx);
	err = index_ids(&lidx, &lctx, p->n_location);
	uint32_t *ids = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < p->n_sample && !err; i++) {
		const pb_sample *s = p->sample[i];
		if (s->n_value <= vi || s->value[vi] < 0) {
			err = -EINVAL;
			break;
		}
		if (s->value[vi] == 0)
			continue;
		const char *comm = "";
		for (size_t j = 0; j < s->n_label; j++) {
			const pb_label *l = s->label[j];
			if (!str_ok(p, l->key) || !str_ok(p, l->str)) {
				err = -EINVAL;
				break;
			}
			if (l->str && !strcmp(pstr(p, l->key), "thread"))
				comm = pstr(p, l->str);
		}
		int64_t comm_id = err ? 0 : bt_strtab_add(&prof->names, comm);
		if (comm_id < 0)
			err = (int)comm_id;
		size_t n = 0;
		uint64_t bytes = strlen(comm) + 16;
		for (size_t j = s->n_location_id; j-- > 0 && !err;) {
			int64_t li = find_id(&lidx, &lctx, s->location_id[j]);
			if (li < 0) {
				err = -EINVAL;
				break;
			}
			const pb_location *loc = p->location[li];
			size_t lines = loc->n_line ? loc->n_line : 1;
			/* a small input can repeat a many-line location in many samples: bound the work */
			if (lines > MAX_STACK - n || lines > MAX_FRAMES - work) {
				err = -EFBIG;
				break;
			}
			work += lines;
			bytes += d->loc_bytes[li];
			if (n + lines > cap) {
				size_t ncap = cap ? cap : 64;
				while (ncap < n + lines)
					ncap *= 2;
				uint32_t *ni = realloc(ids, ncap * sizeof(*ids));
				if (!ni) {
					err = -ENOMEM;
					break;
				}
				ids = ni;
				cap = ncap;
			}
			enum bt_loc_kind kind = is_kernel_mapping(p, d->loc_map[li]) ? BT_LOC_KERNEL
						: loc->n_line ? BT_LOC_USER : BT_LOC_UNMAPPED;
			/* the caller is the last line: it comes first, outermost first */
			for (size_t k = lines; k-- > 0;) {
				int64_t id = bt_profile_loc(prof, kind, (uint32_t)li, loc->n_line ? k : 0, false);
				if (id < 0) {
					err = (int)id;
					break;
				}
				ids[n++] = (uint32_t)id;
			}
		}
		size_t before = prof->nstacks;
		uint32_t none = 0;
		if (!err)
			err = bt_profile_add(prof, (uint32_t)comm_id, 0, ids ? ids : &none, n,
					     (uint64_t)s->value[vi]);
		/* each distinct stack becomes a folded line of about this many bytes */
		if (!err && prof->nstacks > before && (text += bytes) > MAX_TEXT)
			err = -EFBIG;
	}
	free(ids);
	bt_htab_free(&lidx);
	return err;
}

int bt_pprof_decode(const void *buf, size_t len, struct bt_folded *out)
{
	uint8_t *raw = NULL;
	size_t rlen = len;
	int err = 0;
	memset(out, 0, sizeof(*out));
	if (bt_pprof_is_gzip(buf, len) && (err = gunzip(buf, len, &raw, &rlen)))
		return err;
	if (!raw && len > BT_PPROF_MAX_BYTES)
		return -EFBIG;
	pb_profile *p = perftools__profiles__profile__unpack(NULL, rlen, raw ? raw : buf);
	free(raw);
	if (!p)
		return -EINVAL;
	if (p->n_location > UINT32_MAX - 1) {
		perftools__profiles__profile__free_unpacked(p, NULL);
		return -EINVAL;
	}
	struct decoded *d = calloc(1, sizeof(*d));
	struct bt_profile prof;
	bt_profile_init(&prof);
	struct bt_htab fidx;
	bt_htab_init(&fidx);
	struct id_ctx fctx = { p->function, fn_id };
	if (!d) {
		err = -ENOMEM;
	} else {
		d->p = p;
		err = check_profile(d, &fidx, &fctx);
	}
	if (!err)
		err = fold_decoded(d, &prof);
	if (!err)
		err = bt_profile_resolve(&prof, decoded_name, d);
	if (!err)
		err = bt_profile_fold(&prof, out);
	if (d) {
		free(d->loc_map);
		free(d->line_fn);
		free(d->loc_bytes);
		free(d->buf);
		free(d->fn_of_line);
		free(d);
	}
	bt_htab_free(&fidx);
	bt_profile_free(&prof);
	perftools__profiles__profile__free_unpacked(p, NULL);
	return err;
}

int bt_pprof_read(FILE *in, struct bt_folded *out)
{
	size_t cap = 65536, n = 0;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= BT_PPROF_MAX_BYTES) {
				free(buf);
				return -EFBIG;
			}
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		size_t k = fread(buf + n, 1, cap - n, in);
		n += k;
		if (k == 0)
			break;
	}
	int err = ferror(in) ? -EIO : bt_pprof_decode(buf, n, out);
	free(buf);
	return err;
}
