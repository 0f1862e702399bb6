/* pprof_read.c - the pprof reader: a profile, gzip-compressed or not, checked and read into stacks
 * named as buildtrace names frames live, with bounds on what a small input may expand to. */
#include "output/pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/decompress.h"
#include "base/esc.h"
#include "output/pprof_pb.h"

bool bt_pprof_is_gzip(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

/* protobuf-c's allocator for one decode, refusing to hand out more than a budget in all: a small
 * message (an empty sample is two bytes) unpacks into a struct fifty times its size. */
struct budget {
	size_t left;
	bool exceeded;
};

static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;
	if (size > b->left) {
		b->exceeded = true;
		return NULL;
	}
	b->left -= size;
	return malloc(size);
}

static void budget_free(void *data, void *ptr)
{
	(void)data;
	free(ptr);
}

/* What decoding n bytes of messages may allocate (see BT_PPROF_DECODE_FACTOR). */
static size_t decode_budget(size_t n)
{
	if (n > (BT_PPROF_MAX_DECODED - BT_PPROF_DECODE_BASE) / BT_PPROF_DECODE_FACTOR)
		return BT_PPROF_MAX_DECODED;
	return BT_PPROF_DECODE_BASE + n * BT_PPROF_DECODE_FACTOR;
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
	return !strncmp(f, BT_PPROF_KERNEL_MAPPING, strlen(BT_PPROF_KERNEL_MAPPING)) ||
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
			/* a frame placed by its line alone: " (file:line)" after its name, 256 bytes at most */
			d->loc_bytes[i] += fn_len[fi] + (d->loc_map[i] < 0 && *pstr(p, p->function[fi]->filename) ? 256 : 0);
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

/* Whether every sample carries a numeric label named key: "pid" (a profile kept per process: its
 * stacks then stay apart per pid, as folded comm-PID lines), "tid" (and per thread, comm-PID/TID). */
static bool has_num_labels(const pb_profile *p, const char *key)
{
	for (size_t i = 0; i < p->n_sample; i++) {
		bool has = false;
		for (size_t j = 0; j < p->sample[i]->n_label && !has; j++) {
			const pb_label *l = p->sample[i]->label[j];
			has = str_ok(p, l->key) && !l->str && !strcmp(pstr(p, l->key), key);
		}
		if (!has)
			return false;
	}
	return p->n_sample > 0;
}

/* A sample's thread (its comm), pid and tid labels, where it has them. 0 or -EINVAL (a label naming
 * no string). */
static int thread_labels(const pb_profile *p, const pb_sample *s, const char **comm, uint32_t *pid,
			 uint32_t *tid)
{
	for (size_t j = 0; j < s->n_label; j++) {
		const pb_label *l = s->label[j];
		if (!str_ok(p, l->key) || !str_ok(p, l->str))
			return -EINVAL;
		const char *key = pstr(p, l->key);
		if (l->str && !strcmp(key, "thread"))
			*comm = pstr(p, l->str);
		else if (!l->str && !strcmp(key, "pid") && l->num >= 0 && l->num <= UINT32_MAX)
			*pid = (uint32_t)l->num;
		else if (!l->str && !strcmp(key, "tid") && l->num >= 0 && l->num <= UINT32_MAX)
			*tid = (uint32_t)l->num;
	}
	return 0;
}

/* Whether some sample carries a string label named key. */
static bool has_str_label(const pb_profile *p, const char *key)
{
	for (size_t i = 0; i < p->n_sample; i++)
		for (size_t j = 0; j < p->sample[i]->n_label; j++) {
			const pb_label *l = p->sample[i]->label[j];
			if (str_ok(p, l->key) && l->str && !strcmp(pstr(p, l->key), key))
				return true;
		}
	return false;
}

/* Whether location li, which has lines and no mapping, is a frame placed by its source line alone
 * (buildtrace's Python frames; other interpreters' profilers write theirs so): its first line's
 * function has a file. Stacks written from folded text have neither mapping nor file. */
static bool placed_by_line(const struct decoded *d, int64_t li)
{
	const pb_profile *p = d->p;
	const pb_function *fn = p->function[d->fn_of_line[d->line_fn[li]]];
	return *pstr(p, fn->filename) != '\0';
}

/* Location id, placed by line k of location li alone, keeps it: the folded writer spells it after
 * its name. Returns id, or -ENOMEM. */
static int64_t source_line(struct decoded *d, struct bt_profile *prof, uint32_t id, int64_t li, size_t k)
{
	const pb_profile *p = d->p;
	const pb_function *fn = p->function[d->fn_of_line[d->line_fn[li] + (int64_t)k]];
	int64_t line = p->location[li]->line[k]->line;
	struct bt_srcline_text t = { .function = pstr(p, fn->name), .file = pstr(p, fn->filename),
				     .line = line > 0 && line <= UINT32_MAX ? (unsigned)line : 0u };
	return bt_profile_set_lines(prof, id, &t, 1) ? -ENOMEM : (int64_t)id;
}

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
	prof->per_pid = has_num_labels(p, "pid");
	/* per thread as --per-thread writes it; the agent's sample labels (tid among comm, exe...)
	 * stay per process */
	prof->per_tid = prof->per_pid && has_num_labels(p, "tid") && !has_str_label(p, "comm");
	for (size_t i = 0; i < p->n_sample && !err; i++) {
		const pb_sample *s = p->sample[i];
		if (s->n_value <= vi || s->value[vi] < 0) {
			err = -EINVAL;
			break;
		}
		if (s->value[vi] == 0)
			continue;
		const char *comm = "";
		uint32_t pid = 0, tid = 0;
		err = thread_labels(p, s, &comm, &pid, &tid);
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
						: loc->n_line && d->loc_map[li] < 0 && placed_by_line(d, li) ? BT_LOC_PYTHON
						: loc->n_line ? BT_LOC_USER : BT_LOC_UNMAPPED;
			/* the caller is the last line: it comes first, outermost first */
			for (size_t k = lines; k-- > 0;) {
				size_t before = prof->nlocs;
				int64_t id = bt_profile_loc(prof, kind, (uint32_t)li, loc->n_line ? k : 0, false);
				if (id >= 0 && (size_t)id == before && kind == BT_LOC_PYTHON)
					id = source_line(d, prof, (uint32_t)id, li, k);
				if (id < 0) {
					err = (int)id;
					break;
				}
				ids[n++] = (uint32_t)id;
			}
		}
		size_t before = prof->nstacks;
		uint32_t none = 0;
		struct bt_sample_key k = { .comm_id = (uint32_t)comm_id, .pid = pid, .tid = tid, .exe_file = BT_NAME_UNSET,
					   .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET,
					   .kind = BT_VALUE_SAMPLES };
		if (!err)
			err = bt_profile_add_key(prof, &k, ids ? ids : &none, n, (uint64_t)s->value[vi]);
		/* each distinct stack becomes a folded line of about this many bytes */
		if (!err && prof->nstacks > before && (text += bytes) > MAX_TEXT)
			err = -EFBIG;
	}
	free(ids);
	bt_htab_free(&lidx);
	return err;
}

int bt_pprof_decode(const void *buf, size_t len, struct bt_profile *out)
{
	uint8_t *raw = NULL;
	size_t rlen = len;
	int err = 0;
	if (bt_pprof_is_gzip(buf, len)) {
		void *plain = NULL;
		if ((err = bt_decompress(buf, len, BT_PPROF_MAX_BYTES, &plain, &rlen)))
			return err;
		raw = plain;
	}
	if (!raw && len > BT_PPROF_MAX_BYTES)
		return -EFBIG;
	struct budget b = { .left = decode_budget(rlen) };
	ProtobufCAllocator alloc = { budget_alloc, budget_free, &b };
	pb_profile *p = perftools__profiles__profile__unpack(&alloc, rlen, raw ? raw : buf);
	free(raw);
	if (!p)
		return b.exceeded ? -EFBIG : -EINVAL;
	if (p->n_location > UINT32_MAX - 1) {
		perftools__profiles__profile__free_unpacked(p, &alloc);
		return -EINVAL;
	}
	/* buildtrace escapes control characters in the strings it writes (base/esc.h): read back as
	 * the bytes they were, to be escaped again wherever they are written */
	for (size_t i = 0; i < p->n_string_table; i++)
		if (p->string_table[i])
			bt_unesc(p->string_table[i]);
	struct decoded *d = calloc(1, sizeof(*d));
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
		err = fold_decoded(d, out);
	if (!err)
		err = bt_profile_resolve(out, decoded_name, d);
	if (d) {
		free(d->loc_map);
		free(d->line_fn);
		free(d->loc_bytes);
		free(d->buf);
		free(d->fn_of_line);
		free(d);
	}
	bt_htab_free(&fidx);
	perftools__profiles__profile__free_unpacked(p, &alloc);
	return err;
}

int bt_pprof_read(FILE *in, struct bt_profile *out)
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
