/* profile.c - stacks are hashed as sequences of location ids; names are attached to locations only
 * when a view or an output needs them. */
#include "session/profile.h"
#include "base/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void bt_profile_init(struct bt_profile *p)
{
	memset(p, 0, sizeof(*p));
	bt_strtab_init(&p->names);
	bt_htab_init(&p->loc_index);
	bt_htab_init(&p->stack_index);
	bt_htab_init(&p->series_index);
	bt_htab_init(&p->folded_index);
}

void bt_profile_free(struct bt_profile *p)
{
	bt_strtab_free(&p->names);
	free(p->locs);
	free(p->frames);
	free(p->stacks);
	free(p->srclines);
	bt_htab_free(&p->loc_index);
	bt_htab_free(&p->stack_index);
	free(p->series);
	bt_htab_free(&p->series_index);
	bt_htab_free(&p->folded_index);
	memset(p, 0, sizeof(*p));
}

static bool loc_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_profile *p = ctx;
	const struct bt_loc *a = &p->locs[val], *b = key;
	return a->addr == b->addr && a->file_id == b->file_id && a->kind == b->kind &&
	       a->is_caller == b->is_caller;
}

int64_t bt_profile_loc(struct bt_profile *p, enum bt_loc_kind kind, uint32_t file_id, uint64_t addr,
		       bool is_caller)
{
	struct bt_loc key = {
		.addr = addr, .file_id = file_id, .kind = (uint8_t)kind, .is_caller = is_caller,
		.name_id = BT_NAME_UNSET,
	};
	uint32_t h = bt_hash_u64(addr * 31 + ((uint64_t)file_id << 2 | (uint64_t)kind << 1 | is_caller));
	uint64_t *v = bt_htab_find(&p->loc_index, h, loc_eq, p, &key);
	if (v)
		return (int64_t)*v;
	if (bt_grow((void **)&p->locs, &p->locs_cap, p->nlocs + 1, sizeof(*p->locs), 256))
		return -ENOMEM;
	p->locs[p->nlocs] = key;
	if (bt_htab_insert(&p->loc_index, h, p->nlocs))
		return -ENOMEM;
	return (int64_t)p->nlocs++;
}

struct stack_key {
	struct bt_sample_key k;
	const uint32_t *ids;
	size_t n;
};

int64_t bt_profile_named_loc(struct bt_profile *p, enum bt_loc_kind kind, const char *name, size_t len)
{
	int64_t nid = bt_strtab_intern(&p->names, name, len);
	if (nid < 0)
		return nid;
	int64_t id = bt_profile_loc(p, kind, BT_LOC_NAMED, (uint64_t)nid, false);
	if (id >= 0) {
		struct bt_loc *l = &p->locs[id];
		l->name_id = (uint32_t)nid;
		l->resolved = 1;
		l->unresolved = len > 0 && name[0] == '[';
	}
	return id;
}

static bool stack_eq(void *ctx, uint64_t val, const void *k)
{
	const struct bt_profile *p = ctx;
	const struct stack_key *key = k;
	const struct bt_stack *s = &p->stacks[val];
	return s->comm_id == key->k.comm_id && s->pid == key->k.pid && s->tid == key->k.tid &&
	       s->exe_file == key->k.exe_file && s->cgroup_id == key->k.cgroup_id &&
	       s->series_id == key->k.series_id && s->kind == key->k.kind &&
	       s->nframes == key->n &&
	       (key->n == 0 || memcmp(&p->frames[s->first], key->ids, key->n * sizeof(uint32_t)) == 0);
}

int bt_profile_add(struct bt_profile *p, uint32_t comm_id, uint32_t pid, const uint32_t *loc_ids,
		   size_t n, uint64_t count)
{
	struct bt_sample_key k = { .comm_id = comm_id, .pid = pid, .exe_file = BT_NAME_UNSET,
				   .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET, .kind = BT_VALUE_SAMPLES };
	return bt_profile_add_key(p, &k, loc_ids, n, count);
}

int bt_profile_add_key(struct bt_profile *p, const struct bt_sample_key *k, const uint32_t *loc_ids,
		       size_t n, uint64_t count)
{
	struct stack_key key = { *k, loc_ids, n };
	if (!p->labels) {
		if (!p->per_tid)
			key.k.tid = 0;
		key.k.exe_file = key.k.cgroup_id = BT_NAME_UNSET;
		if (!p->per_pid && !p->per_tid)
			key.k.pid = 0;
	}
	uint64_t seed = ((uint64_t)key.k.comm_id << 32) | key.k.pid;
	seed ^= ((uint64_t)key.k.tid * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)key.k.exe_file << 17) ^
		((uint64_t)key.k.cgroup_id << 41) ^ ((uint64_t)key.k.series_id * 0xc2b2ae3d27d4eb4fULL) ^
		((uint64_t)key.k.kind << 63);
	uint32_t h = bt_hash_bytes(loc_ids, n * sizeof(uint32_t), seed);
	uint64_t *v = bt_htab_find(&p->stack_index, h, stack_eq, p, &key);
	if (key.k.kind == BT_VALUE_OFFCPU)
		p->offcpu_ns += count;
	else
		p->total += count;
	if (v) {
		p->stacks[*v].count += count;
		p->last_stack = (uint32_t)*v;
		return 0;
	}
	if (bt_grow((void **)&p->stacks, &p->stacks_cap, p->nstacks + 1, sizeof(*p->stacks), 256) ||
	    bt_grow((void **)&p->frames, &p->frames_cap, p->nframes + n, sizeof(*p->frames), 256))
		return -ENOMEM;
	if (n)  /* an empty stack may come with no arrays at all */
		memcpy(&p->frames[p->nframes], loc_ids, n * sizeof(uint32_t));
	p->stacks[p->nstacks] = (struct bt_stack){
		.comm_id = key.k.comm_id, .pid = key.k.pid, .nframes = (uint32_t)n, .first = (uint32_t)p->nframes,
		.count = count, .tid = key.k.tid, .exe_file = key.k.exe_file, .cgroup_id = key.k.cgroup_id,
		.series_id = key.k.series_id, .kind = key.k.kind,
	};
	p->nframes += n;
	if (bt_htab_insert(&p->stack_index, h, p->nstacks))
		return -ENOMEM;
	p->last_stack = (uint32_t)p->nstacks++;
	return 0;
}

static bool id_eq(void *ctx, uint64_t val, const void *key)
{
	return val == *(const uint64_t *)key;
}

/* Whether id is in h; added when add is set. 1 found, 0 not (added), -ENOMEM. */
static int id_set(struct bt_htab *h, uint64_t id, bool add)
{
	uint32_t hash = bt_hash_u64(id);
	if (bt_htab_find(h, hash, id_eq, NULL, &id))
		return 1;
	return add && bt_htab_insert(h, hash, id) ? -ENOMEM : 0;
}

/* id (in names) becomes a series of p. 0 or -ENOMEM. */
static int series_add(struct bt_profile *p, uint32_t id)
{
	if (bt_grow((void **)&p->series, &p->series_cap, p->nseries + 1, sizeof(*p->series), 16) ||
	    id_set(&p->series_index, id, true) < 0)
		return -ENOMEM;
	p->series[p->nseries++] = id;
	return 0;
}

int64_t bt_profile_series(struct bt_profile *p, const char *text, const char *other)
{
	int64_t id = bt_strtab_add(&p->names, text);
	if (id < 0)
		return id;
	int known = id_set(&p->series_index, (uint64_t)id, false);
	if (known)
		return known < 0 ? known : id;
	if (p->series_max && p->nseries >= p->series_max && other && strcmp(text, other)) {
		p->series_folded_samples++;
		int seen = id_set(&p->folded_index, (uint64_t)id, true);
		if (seen < 0)
			return seen;
		p->series_folded += seen == 0;
		if ((id = bt_strtab_add(&p->names, other)) < 0)
			return id;
		if ((known = id_set(&p->series_index, (uint64_t)id, false)))
			return known < 0 ? known : id;
	}
	return series_add(p, (uint32_t)id) ? -ENOMEM : id;
}

/* A string of p's names (BT_NAME_UNSET stays so) interned in dst's. */
static int64_t copy_name(struct bt_profile *dst, const struct bt_profile *p, uint32_t id)
{
	return id == BT_NAME_UNSET ? BT_NAME_UNSET : bt_strtab_add(&dst->names, bt_strtab_get(&p->names, id));
}

/* Location i of p in dst, with its name and lines: its id there, or -ENOMEM. */
static int64_t copy_loc(struct bt_profile *dst, const struct bt_profile *p, uint32_t i)
{
	const struct bt_loc *l = &p->locs[i];
	if (l->file_id == BT_LOC_NAMED) {   /* known by its name, whose id is dst's own */
		const char *name = bt_strtab_get(&p->names, l->name_id);
		return bt_profile_named_loc(dst, (enum bt_loc_kind)l->kind, name, strlen(name));
	}
	int64_t id = bt_profile_loc(dst, (enum bt_loc_kind)l->kind, l->file_id, l->addr, l->is_caller);
	if (id < 0)
		return id;
	int64_t name = copy_name(dst, p, l->name_id);
	if (name < 0)
		return name;
	struct bt_loc *d = &dst->locs[id];
	d->name_id = (uint32_t)name;
	d->resolved = l->resolved;
	d->unresolved = l->unresolved;
	if (l->lines_tried) {
		struct bt_srcline_text t[UINT8_MAX];
		size_t n = l->nlines;
		for (size_t k = 0; k < n; k++) {
			const struct bt_srcline *sl = &p->srclines[l->lines_first + k];
			t[k] = (struct bt_srcline_text){
				.function = sl->func_id == BT_NAME_UNSET ? NULL : bt_strtab_get(&p->names, sl->func_id),
				.file = sl->file_id == BT_NAME_UNSET ? NULL : bt_strtab_get(&p->names, sl->file_id),
				.line = sl->line,
			};
		}
		if (bt_profile_set_lines(dst, (uint32_t)id, t, n))
			return -ENOMEM;
	}
	return id;
}

/* Stack st of p into dst, locations mapped through map (UINT32_MAX: not copied yet). */
static int copy_stack(struct bt_profile *dst, const struct bt_profile *p, const struct bt_stack *st, uint32_t *map,
		      uint32_t *ids)
{
	for (uint32_t k = 0; k < st->nframes; k++) {
		uint32_t src = p->frames[st->first + k];
		if (map[src] == UINT32_MAX) {
			int64_t id = copy_loc(dst, p, src);
			if (id < 0)
				return (int)id;
			map[src] = (uint32_t)id;
		}
		ids[k] = map[src];
	}
	int64_t comm = copy_name(dst, p, st->comm_id), cg = copy_name(dst, p, st->cgroup_id),
		series = copy_name(dst, p, st->series_id);
	if (comm < 0 || cg < 0 || series < 0)
		return -ENOMEM;
	struct bt_sample_key key = { .comm_id = (uint32_t)comm, .pid = st->pid, .tid = st->tid,
				     .exe_file = st->exe_file, .cgroup_id = (uint32_t)cg, .series_id = (uint32_t)series,
				     .kind = st->kind };
	if (series != BT_NAME_UNSET && id_set(&dst->series_index, (uint64_t)series, false) == 0 &&
	    series_add(dst, (uint32_t)series))
		return -ENOMEM;
	return bt_profile_add_key(dst, &key, ids, st->nframes, st->count);
}

int bt_profile_extract(const struct bt_profile *p, bt_series_keep_fn keep, void *ctx, struct bt_profile *dst)
{
	dst->per_pid = p->per_pid;
	dst->labels = p->labels;
	uint32_t *map = malloc((p->nlocs ? p->nlocs : 1) * sizeof(*map)), *ids = NULL;
	size_t maxn = 1;
	for (size_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].nframes > maxn)
			maxn = p->stacks[i].nframes;
	ids = malloc(maxn * sizeof(*ids));
	int err = map && ids ? 0 : -ENOMEM;
	if (map)
		memset(map, 0xff, (p->nlocs ? p->nlocs : 1) * sizeof(*map));
	for (size_t i = 0; !err && i < p->nstacks; i++) {
		const struct bt_stack *st = &p->stacks[i];
		const char *series = st->series_id == BT_NAME_UNSET ? NULL : bt_strtab_get(&p->names, st->series_id);
		if (keep(ctx, series))
			err = copy_stack(dst, p, st, map, ids);
	}
	free(map);
	free(ids);
	return err;
}

int bt_profile_resolve(struct bt_profile *p, bt_resolve_fn fn, void *ctx)
{
	for (size_t i = 0; i < p->nlocs; i++) {
		struct bt_loc *l = &p->locs[i];
		if (l->resolved)
			continue;
		bool final = true, unresolved = false;
		const char *name = fn(ctx, l, &final, &unresolved);
		int64_t id = bt_strtab_add(&p->names, name ? name : "[unknown]");
		if (id < 0)
			return (int)id;
		l->name_id = (uint32_t)id;
		l->resolved = final;
		l->unresolved = unresolved || !name;
	}
	return 0;
}

static uint32_t intern_or_unset(struct bt_profile *p, const char *s, int *err)
{
	if (!s)
		return BT_NAME_UNSET;
	int64_t id = bt_strtab_add(&p->names, s);
	if (id < 0) {
		*err = (int)id;
		return BT_NAME_UNSET;
	}
	return (uint32_t)id;
}

int bt_profile_set_lines(struct bt_profile *p, uint32_t loc_id, const struct bt_srcline_text *t, size_t n)
{
	if (loc_id >= p->nlocs || n > UINT8_MAX)
		return -EINVAL;
	struct bt_loc *l = &p->locs[loc_id];
	if (l->lines_tried)
		return 0;
	if (n && bt_grow((void **)&p->srclines, &p->srclines_cap, p->nsrclines + n, sizeof(*p->srclines), 256))
		return -ENOMEM;
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		struct bt_srcline *sl = &p->srclines[p->nsrclines + i];
		sl->func_id = intern_or_unset(p, t[i].function, &err);
		sl->file_id = intern_or_unset(p, t[i].file, &err);
		sl->line = t[i].line;
	}
	if (err)
		return err;
	l->lines_first = (uint32_t)p->nsrclines;
	l->nlines = (uint8_t)n;
	l->lines_tried = 1;
	p->nsrclines += n;
	return 0;
}

uint64_t bt_profile_unresolved_frames(const struct bt_profile *p)
{
	uint64_t n = 0;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct bt_stack *s = &p->stacks[i];
		for (uint32_t j = 0; j < s->nframes && s->kind == BT_VALUE_SAMPLES; j++)
			if (p->locs[p->frames[s->first + j]].unresolved)
				n += s->count;
	}
	return n;
}

uint64_t bt_profile_unresolved_ns(const struct bt_profile *p)
{
	uint64_t ns = 0;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct bt_stack *s = &p->stacks[i];
		for (uint32_t j = 0; j < s->nframes && s->kind == BT_VALUE_OFFCPU; j++)
			if (p->locs[p->frames[s->first + j]].unresolved) {
				ns += s->count;
				break;
			}
	}
	return ns;
}

/* ---- top functions ---------------------------------------------------------------------- */

static int cmp_top(const void *a, const void *b)
{
	const struct bt_top_entry *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->name_id != y->name_id)
		return x->name_id < y->name_id ? -1 : 1;
	return (int)x->kernel - (int)y->kernel;
}

size_t bt_profile_top(const struct bt_profile *p, struct bt_top_entry *out, size_t n)
{
	size_t nn = bt_strtab_count(&p->names);
	if (!nn || !n)
		return 0;
	/* a kernel and a user function of one name are two functions: entry 2 * name_id + kernel */
	struct bt_top_entry *acc = calloc(2 * nn, sizeof(*acc));
	uint64_t *last = calloc(2 * nn, sizeof(*last));  /* stack index + 1 that last counted an entry's total */
	if (!acc || !last) {
		free(acc);
		free(last);
		return 0;
	}
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct bt_stack *s = &p->stacks[i];
		for (uint32_t j = 0; j < s->nframes && s->kind == BT_VALUE_SAMPLES; j++) {
			const struct bt_loc *l = &p->locs[p->frames[s->first + j]];
			if (l->name_id >= nn)
				continue;
			size_t e = 2 * (size_t)l->name_id + (l->kind == BT_LOC_KERNEL);
			if (last[e] != i + 1) {
				acc[e].total += s->count;
				last[e] = i + 1;
			}
			if (j + 1 == s->nframes)
				acc[e].self += s->count;
		}
	}
	for (size_t i = 0; i < 2 * nn; i++) {
		acc[i].name_id = (uint32_t)(i / 2);
		acc[i].kernel = i % 2;
	}
	qsort(acc, 2 * nn, sizeof(*acc), cmp_top);
	size_t k = 0;
	while (k < n && k < 2 * nn && acc[k].total)
		out[k] = acc[k], k++;
	free(acc);
	free(last);
	return k;
}
