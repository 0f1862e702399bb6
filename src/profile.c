/* profile.c - stacks are hashed as sequences of location ids; names are attached to locations only
 * when a view or an output needs them. */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void bt_profile_init(struct bt_profile *p)
{
	memset(p, 0, sizeof(*p));
	bt_strtab_init(&p->names);
	bt_htab_init(&p->loc_index);
	bt_htab_init(&p->stack_index);
}

void bt_profile_free(struct bt_profile *p)
{
	bt_strtab_free(&p->names);
	free(p->locs);
	free(p->frames);
	free(p->stacks);
	bt_htab_free(&p->loc_index);
	bt_htab_free(&p->stack_index);
	memset(p, 0, sizeof(*p));
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 256;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
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
	if (grow((void **)&p->locs, &p->locs_cap, p->nlocs + 1, sizeof(*p->locs)))
		return -ENOMEM;
	p->locs[p->nlocs] = key;
	if (bt_htab_insert(&p->loc_index, h, p->nlocs))
		return -ENOMEM;
	return (int64_t)p->nlocs++;
}

struct stack_key {
	uint32_t comm_id, pid;
	const uint32_t *ids;
	size_t n;
};

static bool stack_eq(void *ctx, uint64_t val, const void *k)
{
	const struct bt_profile *p = ctx;
	const struct stack_key *key = k;
	const struct bt_stack *s = &p->stacks[val];
	return s->comm_id == key->comm_id && s->pid == key->pid && s->nframes == key->n &&
	       memcmp(&p->frames[s->first], key->ids, key->n * sizeof(uint32_t)) == 0;
}

int bt_profile_add(struct bt_profile *p, uint32_t comm_id, uint32_t pid, const uint32_t *loc_ids,
		   size_t n, uint64_t count)
{
	struct stack_key key = { comm_id, p->per_pid ? pid : 0, loc_ids, n };
	uint32_t h = bt_hash_bytes(loc_ids, n * sizeof(uint32_t), ((uint64_t)comm_id << 32) | key.pid);
	uint64_t *v = bt_htab_find(&p->stack_index, h, stack_eq, p, &key);
	p->total += count;
	if (v) {
		p->stacks[*v].count += count;
		return 0;
	}
	if (grow((void **)&p->stacks, &p->stacks_cap, p->nstacks + 1, sizeof(*p->stacks)) ||
	    grow((void **)&p->frames, &p->frames_cap, p->nframes + n, sizeof(*p->frames)))
		return -ENOMEM;
	memcpy(&p->frames[p->nframes], loc_ids, n * sizeof(uint32_t));
	p->stacks[p->nstacks] = (struct bt_stack){
		.comm_id = comm_id, .pid = key.pid, .nframes = (uint32_t)n, .first = (uint32_t)p->nframes,
		.count = count,
	};
	p->nframes += n;
	if (bt_htab_insert(&p->stack_index, h, p->nstacks))
		return -ENOMEM;
	p->nstacks++;
	return 0;
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

uint64_t bt_profile_unresolved_frames(const struct bt_profile *p)
{
	uint64_t n = 0;
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct bt_stack *s = &p->stacks[i];
		for (uint32_t j = 0; j < s->nframes; j++)
			if (p->locs[p->frames[s->first + j]].unresolved)
				n += s->count;
	}
	return n;
}

/* ---- folded output ---------------------------------------------------------------------- */

struct line {
	char *text;
	uint64_t count;
};

struct lines {
	struct line *v;
	size_t n, cap;
	struct bt_htab index;
};

static bool line_eq(void *ctx, uint64_t val, const void *key)
{
	const struct lines *ls = ctx;
	return strcmp(ls->v[val].text, key) == 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* Appends s to buf, replacing characters that would break the folded format. */
static int append(char **buf, size_t *len, size_t *cap, const char *s, char sep)
{
	size_t n = strlen(s);
	if (grow((void **)buf, cap, *len + n + 2, 1))
		return -ENOMEM;
	if (sep)
		(*buf)[(*len)++] = sep;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		(*buf)[(*len)++] = (c == ';' || c == '\n' || c == '\r') ? ':' : c;
	}
	(*buf)[*len] = '\0';
	return 0;
}

int bt_profile_write_folded(const struct bt_profile *p, FILE *out)
{
	struct lines ls = { 0 };
	char *buf = NULL;
	size_t cap = 0;
	int err = 0;
	bt_htab_init(&ls.index);
	for (size_t i = 0; i < p->nstacks && !err; i++) {
		const struct bt_stack *s = &p->stacks[i];
		size_t len = 0;
		const char *comm = bt_strtab_get(&p->names, s->comm_id);
		err = append(&buf, &len, &cap, comm && *comm ? comm : "[unknown]", 0);
		for (uint32_t j = 0; j < s->nframes && !err; j++) {
			const struct bt_loc *l = &p->locs[p->frames[s->first + j]];
			const char *name = bt_strtab_get(&p->names, l->name_id);
			err = append(&buf, &len, &cap, name ? name : "[unknown]", ';');
		}
		if (err)
			break;
		uint32_t h = bt_hash_bytes(buf, len, 0);
		uint64_t *v = bt_htab_find(&ls.index, h, line_eq, &ls, buf);
		if (v) {
			ls.v[*v].count += s->count;
			continue;
		}
		if (grow((void **)&ls.v, &ls.cap, ls.n + 1, sizeof(*ls.v))) {
			err = -ENOMEM;
			break;
		}
		ls.v[ls.n].text = strdup(buf);
		ls.v[ls.n].count = s->count;
		if (!ls.v[ls.n].text || bt_htab_insert(&ls.index, h, ls.n)) {
			free(ls.v[ls.n].text);
			err = -ENOMEM;
			break;
		}
		ls.n++;
	}
	if (!err) {
		qsort(ls.v, ls.n, sizeof(*ls.v), cmp_line);
		for (size_t i = 0; i < ls.n; i++)
			if (fprintf(out, "%s %llu\n", ls.v[i].text, (unsigned long long)ls.v[i].count) < 0) {
				err = -EIO;
				break;
			}
		if (!err && fflush(out) != 0)
			err = -errno;
	}
	for (size_t i = 0; i < ls.n; i++)
		free(ls.v[i].text);
	free(ls.v);
	free(buf);
	bt_htab_free(&ls.index);
	return err;
}

/* ---- top functions ---------------------------------------------------------------------- */

static int cmp_top(const void *a, const void *b)
{
	const struct bt_top_entry *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->name_id < y->name_id ? -1 : x->name_id > y->name_id;
}

size_t bt_profile_top(const struct bt_profile *p, struct bt_top_entry *out, size_t n)
{
	size_t nn = bt_strtab_count(&p->names);
	if (!nn || !n)
		return 0;
	struct bt_top_entry *acc = calloc(nn, sizeof(*acc));
	uint64_t *last = calloc(nn, sizeof(*last));  /* stack index + 1 that last counted a name's total */
	if (!acc || !last) {
		free(acc);
		free(last);
		return 0;
	}
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct bt_stack *s = &p->stacks[i];
		for (uint32_t j = 0; j < s->nframes; j++) {
			uint32_t id = p->locs[p->frames[s->first + j]].name_id;
			if (id >= nn)
				continue;
			if (last[id] != i + 1) {
				acc[id].total += s->count;
				last[id] = i + 1;
			}
			if (j + 1 == s->nframes)
				acc[id].self += s->count;
		}
	}
	for (size_t i = 0; i < nn; i++)
		acc[i].name_id = (uint32_t)i;
	qsort(acc, nn, sizeof(*acc), cmp_top);
	size_t k = 0;
	while (k < n && k < nn && acc[k].total)
		out[k] = acc[k], k++;
	free(acc);
	free(last);
	return k;
}
