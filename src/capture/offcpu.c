/* offcpu.c - see offcpu.h. The maps are read in batches by bucket, which neither misses nor repeats
 * an entry when the kernel adds or removes others meanwhile (a key-by-key walk starts over when the
 * key it stands on goes).
 *
 * A block still going on at a cut is counted up to the cut here, from the kernel's table of
 * threads, while the kernel may end it at that very moment and sum the whole block. The kernel never
 * learns what a cut counted (it keeps no state userspace writes): a cut keeps a credit of what it
 * counted per (thread, stack, state), and takes it back from the sums of that key when they come,
 * so each nanosecond is delivered once whichever side saw it first. */
#include "capture/offcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "base/grow.h"
#include "base/htab.h"
#include "../../bpf/bt_maps.h"

#define BATCH 512
#define CREDIT_CUTS 3     /* a credit whose sum has not come this many cuts after it last grew: lost */

/* What cuts counted of a block still going on, not yet taken back from a sum of its key. */
struct credit {
	struct bt_offcpu_key k;
	uint64_t ns;
	uint64_t cut;            /* the cut it last grew at (a count of cuts) */
};

/* A thread's block as the cuts counted it: from its start up to counted_to. */
struct open_block {
	uint32_t tid;
	uint64_t start, counted_to;
	uint64_t cut;            /* the cut that saw it last */
};

struct bt_offcpu {
	struct bt_offcpu_maps m;
	int active;              /* 0: offcpu_sums_a is being written, 1: _b */
	bool swapped;            /* a swap waits for its read */
	uint64_t cut;            /* the time of that swap */
	uint64_t ncut;           /* cuts made */
	struct credit *credits;
	size_t ncredits, credits_cap;
	struct bt_htab credit_index;
	struct open_block *blocks;
	size_t nblocks, blocks_cap;
	struct bt_htab block_index;
	struct bt_offcpu_stats st;
};

int bt_offcpu_new(const struct bt_offcpu_maps *m, struct bt_offcpu **out)
{
	struct bt_offcpu *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->m = *m;
	bt_htab_init(&o->credit_index);
	bt_htab_init(&o->block_index);
	uint32_t zero = 0;
	int fd = m->sums_a_fd;
	int err = bpf_map_update_elem(m->sums_fd, &zero, &fd, BPF_ANY);
	if (err) {
		free(o);
		return err < 0 ? err : -EINVAL;
	}
	*out = o;
	return 0;
}

void bt_offcpu_free(struct bt_offcpu *o)
{
	if (!o)
		return;
	free(o->credits);
	free(o->blocks);
	bt_htab_free(&o->credit_index);
	bt_htab_free(&o->block_index);
	free(o);
}

void bt_offcpu_begin(struct bt_offcpu *o, uint64_t now)
{
	*o->m.t0 = now;
}

bool bt_offcpu_started(const struct bt_offcpu *o)
{
	return o && *o->m.t0 != 0;
}

int bt_offcpu_swap(struct bt_offcpu *o, uint64_t now)
{
	if (!o || !*o->m.t0)
		return -EINVAL;
	o->cut = now;
	uint32_t zero = 0;
	int fd = o->active ? o->m.sums_a_fd : o->m.sums_b_fd;
	/* Replacing a map in a map-of-maps waits until no program still uses the old one. */
	int err = bpf_map_update_elem(o->m.sums_fd, &zero, &fd, BPF_ANY);
	if (err)
		return err < 0 ? err : -EINVAL;
	o->active ^= 1;
	o->swapped = true;
	o->st.cuts++;
	o->ncut++;
	return 0;
}

/* ---- credits --------------------------------------------------------------------------------- */

static uint32_t key_hash(const struct bt_offcpu_key *k)
{
	return bt_hash_u64(k->key * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)k->tid << 8 | k->state));
}

static bool credit_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_offcpu *o = ctx;
	const struct bt_offcpu_key *a = &o->credits[val].k, *b = key;
	return a->key == b->key && a->tid == b->tid && a->state == b->state;
}

static struct credit *credit_of(struct bt_offcpu *o, const struct bt_offcpu_key *k)
{
	uint64_t *v = bt_htab_find(&o->credit_index, key_hash(k), credit_eq, o, k);
	return v ? &o->credits[*v] : NULL;
}

/* ns more counted at this cut under k. 0 or -ENOMEM. */
static int credit_add(struct bt_offcpu *o, const struct bt_offcpu_key *k, uint64_t ns)
{
	struct credit *c = credit_of(o, k);
	if (!c) {
		if (bt_grow((void **)&o->credits, &o->credits_cap, o->ncredits + 1, sizeof(*o->credits), 64) ||
		    bt_htab_insert(&o->credit_index, key_hash(k), o->ncredits))
			return -ENOMEM;
		c = &o->credits[o->ncredits++];
		*c = (struct credit){ .k = *k };
		c->k.pad = 0;
	}
	c->ns += ns;
	c->cut = o->ncut;
	return 0;
}

/* What of a sum of ns under k the cuts counted already, taken back from its credit. */
static uint64_t credit_take(struct bt_offcpu *o, const struct bt_offcpu_key *k, uint64_t ns)
{
	struct credit *c = credit_of(o, k);
	uint64_t d = c ? (c->ns < ns ? c->ns : ns) : 0;
	if (c)
		c->ns -= d;
	return d;
}

static bool block_eq(void *ctx, uint64_t val, const void *key)
{
	return ((const struct bt_offcpu *)ctx)->blocks[val].tid == *(const uint32_t *)key;
}

static struct open_block *block_of(struct bt_offcpu *o, uint32_t tid)
{
	uint64_t *v = bt_htab_find(&o->block_index, bt_hash_u64(tid), block_eq, o, &tid);
	if (v)
		return &o->blocks[*v];
	if (bt_grow((void **)&o->blocks, &o->blocks_cap, o->nblocks + 1, sizeof(*o->blocks), 64) ||
	    bt_htab_insert(&o->block_index, bt_hash_u64(tid), o->nblocks))
		return NULL;
	struct open_block *b = &o->blocks[o->nblocks++];
	*b = (struct open_block){ .tid = tid };
	return b;
}

/* The tables kept small: blocks not going on at this cut, credits taken back whole or whose sums
 * never came (the kernel's add failed: counted as lost there), rebuilt without them. */
static void tidy(struct bt_offcpu *o)
{
	size_t k = 0;
	bt_htab_free(&o->block_index);
	bt_htab_init(&o->block_index);
	for (size_t i = 0; i < o->nblocks; i++)
		if (o->blocks[i].cut == o->ncut) {
			o->blocks[k] = o->blocks[i];
			bt_htab_insert(&o->block_index, bt_hash_u64(o->blocks[k].tid), k);
			k++;
		}
	o->nblocks = k;
	k = 0;
	bt_htab_free(&o->credit_index);
	bt_htab_init(&o->credit_index);
	for (size_t i = 0; i < o->ncredits; i++)
		if (o->credits[i].ns && o->ncut - o->credits[i].cut < CREDIT_CUTS) {
			o->credits[k] = o->credits[i];
			bt_htab_insert(&o->credit_index, key_hash(&o->credits[k].k), k);
			k++;
		}
	o->ncredits = k;
}

typedef int (*entry_fn)(struct bt_offcpu *o, const void *key, const void *val, bt_offcpu_fn fn, void *ctx);

/* Every entry of map fd, in batches (deleted as they are read when del), to each; the entries
 * delivered, or each's non-zero return, or -errno. */
static int each_entry(struct bt_offcpu *o, int fd, bool del, size_t ksz, size_t vsz, entry_fn each,
		      bt_offcpu_fn fn, void *ctx)
{
	uint32_t cap = BATCH;
	char *keys = malloc(cap * ksz), *vals = malloc(cap * vsz);
	uint32_t in = 0, out = 0;
	bool first = true;
	int total = 0, err = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	while (keys && vals) {
		uint32_t n = cap;
		int r = del ? bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals, &n, &bo)
			    : bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, &bo);
		if (r == -ENOSPC && !n && cap < (1u << 16)) {  /* a bucket holds more than a batch */
			cap *= 2;
			char *nk = realloc(keys, cap * ksz), *nv = nk ? realloc(vals, cap * vsz) : NULL;
			if (nk)
				keys = nk;
			if (nv)
				vals = nv;
			if (!nk || !nv)
				break;
			continue;
		}
		for (uint32_t i = 0; i < n && !err; i++) {
			int d = each(o, keys + i * ksz, vals + i * vsz, fn, ctx);
			if (d < 0 || d > 1)
				err = d;
			else
				total += d;
		}
		if (err || r == -ENOENT)
			break;
		if (r) {
			err = r;
			break;
		}
		in = out;
		first = false;
	}
	if (!keys || !vals)
		err = -ENOMEM;
	free(keys);
	free(vals);
	return err ? err : total;
}

static int deliver(struct bt_offcpu *o, uint64_t key, uint32_t tgid, uint32_t tid, uint32_t state, uint64_t ns,
		   uint64_t blocks, bt_offcpu_fn fn, void *ctx)
{
	struct bt_rec_offcpu r = {
		.hdr = { .type = BT_REC_OFFCPU, .version = BT_PROTO_VERSION, .size = sizeof(r), .time_ns = o->cut },
		.key = key, .pid = tgid, .tid = tid, .ns = ns,
		.blocks = blocks > UINT32_MAX ? UINT32_MAX : (uint32_t)blocks, .state = (uint8_t)state,
	};
	int e = fn(ctx, &r.hdr);
	return e ? (e > 0 ? -ECANCELED : e) : 1;
}

static int sum_entry(struct bt_offcpu *o, const void *key, const void *val, bt_offcpu_fn fn, void *ctx)
{
	const struct bt_offcpu_key *k = key;
	const struct bt_offcpu_sum *v = val;
	uint64_t ns = v->ns - credit_take(o, k, v->ns);
	if (!ns && !v->blocks)
		return 0;
	return deliver(o, k->key, k->tgid, k->tid, k->state, ns, v->blocks, fn, ctx);
}

/* The part of [from, to) from t0 on. */
static uint64_t span(uint64_t from, uint64_t to, uint64_t t0)
{
	if (from < t0)
		from = t0;
	return to > from ? to - from : 0;
}

/* One part of a block going on at the cut, in state, counted now and kept as a credit. */
static int open_part(struct bt_offcpu *o, const struct bt_offcpu_thread *t, uint32_t tid, uint32_t state,
		     uint64_t ns, bt_offcpu_fn fn, void *ctx)
{
	if (!ns || !(o->m.states & (1u << state)))
		return 0;
	struct bt_offcpu_key k = { .key = t->key, .tgid = t->tgid, .tid = tid, .state = state };
	if (credit_add(o, &k, ns))
		return -ENOMEM;
	o->st.open_ns += ns;
	return deliver(o, t->key, t->tgid, tid, state, ns, 0, fn, ctx);
}

/* A block going on at the cut: its time since what earlier cuts counted of it, up to this one,
 * split as the kernel splits it at its end (the part before the wakeup in the state it left in). */
static int open_entry(struct bt_offcpu *o, const void *key, const void *val, bt_offcpu_fn fn, void *ctx)
{
	uint32_t tid = *(const uint32_t *)key;
	const struct bt_offcpu_thread *t = val;
	uint64_t start = t->start, woke = t->woke, cut = o->cut;
	if (!start || start >= cut || cut - start < o->m.min_ns || t->state >= BT_OFFCPU_NSTATES)
		return 0;
	struct open_block *b = block_of(o, tid);
	if (!b)
		return -ENOMEM;
	if (b->start != start) {   /* a new block */
		b->start = start;
		b->counted_to = 0;
	}
	uint64_t from = b->counted_to > start ? b->counted_to : start;
	b->counted_to = cut;
	b->cut = o->ncut;
	if (!woke || woke > cut || t->state == BT_OFFCPU_RUNQ)
		woke = t->state == BT_OFFCPU_RUNQ ? start : cut;
	int r1 = t->state == BT_OFFCPU_RUNQ ? 0 :
		 open_part(o, t, tid, t->state, span(from, woke, *o->m.t0), fn, ctx);
	if (r1 < 0)
		return r1;
	int r2 = open_part(o, t, tid, BT_OFFCPU_RUNQ, span(from > woke ? from : woke, cut, *o->m.t0), fn, ctx);
	if (r2 < 0)
		return r2;
	return r1 || r2 ? 1 : 0;
}

static int forget_entry(struct bt_offcpu *o, const void *key, const void *val, bt_offcpu_fn fn, void *ctx)
{
	return 0;
}

int bt_offcpu_read(struct bt_offcpu *o, bool forget, bt_offcpu_fn fn, void *ctx)
{
	if (!o || !o->swapped)
		return 0;
	o->swapped = false;
	int old = o->active ? o->m.sums_a_fd : o->m.sums_b_fd;
	int n = each_entry(o, old, true, sizeof(struct bt_offcpu_key), sizeof(struct bt_offcpu_sum), sum_entry,
			   fn, ctx);
	if (n < 0)
		return n;
	int m = each_entry(o, o->m.threads_fd, false, sizeof(uint32_t), sizeof(struct bt_offcpu_thread),
			   open_entry, fn, ctx);
	if (m < 0)
		return m;
	n += m;
	tidy(o);
	if (forget) {
		int e = each_entry(o, o->m.known_fd, true, sizeof(uint64_t), sizeof(uint8_t), forget_entry, fn, ctx);
		if (e < 0)
			return e;
		struct bt_rec_offcpu r = {
			.hdr = { .type = BT_REC_OFFCPU, .version = BT_PROTO_VERSION, .size = sizeof(r), .time_ns = o->cut },
		};
		int f = fn(ctx, &r.hdr);
		if (f)
			return f > 0 ? -ECANCELED : f;
		o->st.forgets++;
	}
	return n;
}

void bt_offcpu_stats(const struct bt_offcpu *o, struct bt_offcpu_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (o)
		*out = o->st;
}
