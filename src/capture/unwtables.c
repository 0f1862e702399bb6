/* unwtables.c - keeps unw_rows, unw_rules and unw_procs (bpf/bt_unwind.h) current: a process list
 * of executable mappings from the mapping, exec, fork and exit records; a registry of tables by
 * build-id (made by the worker from the store or from the mapped file itself, through
 * /proc/PID/map_files or, once the process is gone, its path, the build-id checked either way);
 * rows placed in the shared array by a first-fit allocator that frees the least recently used
 * tables no process maps when it runs out of room; rules interned once into the shared rules. The
 * stacks the walker stopped (BT_UWALK_CONT) are walked on here, frame by frame as the walker does
 * (elf/ehwalk.h), over the stack it copied. The vDSO is no file: its range in a process comes from
 * /proc/PID/maps, its table from buildtrace's own copy of the same image (one per kernel, with the
 * same build-id). */
#include "capture/unwtables.h"
#include "capture/procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/htab.h"
#include "base/safeopen.h"
#include "elf/buildid.h"
#include "elf/ehwalk.h"

#define TABLES_KEPT 4096   /* registry entries of build-ids without a table, beyond which the
			    * unmapped ones are forgotten */
#define INDEX_STEP 256      /* rows read at once when a stack is finished here */
#define BLOCKS 64           /* blocks of rows kept once read (the same functions come back) */
#define COPY_ROWS (1u << 17) /* rows copied through one mapping of the array (1 MiB) */
#define PENDING_MAX 4096   /* samples waiting for tables, and the bytes of their stack copies, */
#define PENDING_BYTES (32u << 20)   /* beyond which they are passed on unfinished */
#define DEAD_KEEP_NS (30ULL * 1000000000)  /* an exited process's mappings kept for its samples */

struct umap {
	uint64_t start, end, pgoff;
	uint8_t bid_status, bid_len;
	uint8_t bid[BT_BUILD_ID_MAX];
	bool vdso;
};

struct uproc {
	uint32_t pid;
	bool dirty;
	bool vdso_asked;       /* its [vdso] was looked for since its last exec */
	bool dead;             /* exited: kept while samples taken before may still be finished */
	uint64_t since_ns;     /* its mappings describe it from this time on (its last exec) */
	uint64_t dead_ns;
	struct umap *maps;     /* sorted by start, not overlapping */
	size_t n, cap;
	struct umap *old;      /* the mappings of the image before its last exec, for its samples */
	size_t nold;
	uint64_t old_since;
};

/* A sample whose stack waits for a table being made, kept with its stack copy. */
struct pending {
	uint64_t ticket;
	bool ready;            /* s is finished (as far as it can be) */
	struct bt_rec_sample *s;
	struct bt_rec_ucont *c;
};

/* T_FAILED: the file has no table to be had (no CFI): frame pointers. T_LOST: it could not be made
 * this time (the file gone, no room): asked again when a process maps the build-id anew. */
enum { T_NONE, T_QUEUED, T_LOADED, T_FAILED, T_LOST };

struct utable {
	int state;
	uint8_t bid_len;
	uint8_t bid[BT_BUILD_ID_MAX];
	uint32_t row_lo, nrows;
	uint64_t base;
	struct bt_elf_layout *layout;  /* when loaded */
	uint32_t *index;               /* when loaded: the pc of every INDEX_STEP-th row */
	uint64_t used;                 /* the clock when a stack or a process last needed it */
	bool mapped;                   /* some process maps it (while evicting) */
	char *path;                    /* the file's path as last reported */
};

struct extent {
	uint32_t lo, n;
};

struct bt_unwtables {
	int rows_fd, rules_fd, procs_fd;
	uint32_t rows_max;
	bool rows_unmappable;          /* unw_rows cannot be mapped (not BPF_F_MMAPABLE): batches */
	bool no_batch;                 /* the kernel cannot look up rows by batch: one by one */
	struct {                       /* rows read from unw_rows, by the index of their first */
		uint32_t first, n;     /* n 0: empty */
		uint64_t used;
		struct bt_unw_row rows[INDEX_STEP];
	} *blocks;
	uint64_t block_clock;
	const char *root;
	struct bt_htab procs;          /* pid -> struct uproc * */
	struct utable **tables;
	size_t ntables, captables;
	struct bt_htab table_index;    /* build-id -> struct utable * */
	struct extent *free;           /* free rows, sorted, coalesced */
	size_t nfree, capfree;
	struct bt_unw_ruleset rules;   /* the shared rules, as written to unw_rules */
	bool dirty;                    /* some process changed since the last flush */
	bool eager;
	uint64_t clock;
	struct bt_unwjobs *jobs;
	int vdso_state;                /* 0 untried, 1 vdso_image ready, -errno none */
	void *vdso_image;
	size_t vdso_len;
	struct umap vdso_id;           /* its build-id */
	struct bt_rec_ucont *cont;     /* the last stack copy, for the sample after it */
	bool have_cont;
	struct pending *pend;          /* samples waiting for tables, oldest first */
	size_t npend, cappend;
	uint64_t tickets;
	size_t pend_bytes;             /* their stack copies' */
	uint64_t now_ns;               /* the newest record's time */
	struct bt_rec_sample *fin;     /* the sample finished here */
	struct bt_unw_proc buf;        /* what is written for one process */
	struct bt_unwtables_stats st;
};

/* ---- processes ----------------------------------------------------------------------------- */

static bool pid_eq(void *ctx, uint64_t val, const void *key)
{
	return ((struct uproc *)(uintptr_t)val)->pid == *(const uint32_t *)key;
}

static struct uproc *find_proc(struct bt_unwtables *u, uint32_t pid)
{
	uint64_t *v = bt_htab_find(&u->procs, bt_hash_u64(pid), pid_eq, NULL, &pid);
	return v ? (struct uproc *)(uintptr_t)*v : NULL;
}

/* A process's entry as it is now: a dead one under the same pid (reused) starts again. */
static struct uproc *get_proc(struct bt_unwtables *u, uint32_t pid)
{
	struct uproc *p = find_proc(u, pid);
	if (p && p->dead) {
		p->dead = false;
		p->n = 0;
		p->vdso_asked = false;
		p->since_ns = p->dead_ns;
	}
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (bt_htab_insert(&u->procs, bt_hash_u64(pid), (uint64_t)(uintptr_t)p)) {
		free(p);
		return NULL;
	}
	u->st.procs++;
	return p;
}

static void free_proc(struct bt_unwtables *u, struct uproc *p)
{
	bt_htab_remove(&u->procs, bt_hash_u64(p->pid), pid_eq, NULL, &p->pid);
	free(p->old);
	free(p->maps);
	free(p);
	u->st.procs--;
}

/* An exit: the walker forgets the process; its mappings stay for the samples taken before it that
 * wait for a table, for a while. */
static void drop_proc(struct bt_unwtables *u, uint32_t pid, uint64_t t)
{
	struct uproc *p = find_proc(u, pid);
	if (!p || p->dead)
		return;
	bpf_map_delete_elem(u->procs_fd, &pid);
	p->dead = true;
	p->dirty = false;
	p->dead_ns = t > p->since_ns ? t : p->since_ns;
	if (!u->npend)
		free_proc(u, p);
}

#define FOR_EACH_PROC(u, p)                                                                         \
	for (size_t i_ = 0; i_ < (u)->procs.cap; i_++)                                              \
		if (!(u)->procs.slots[i_].used || !((p) = (struct uproc *)(uintptr_t)(u)->procs.slots[i_].val)) { \
		} else

/* ---- the table registry -------------------------------------------------------------------- */

static bool table_eq(void *ctx, uint64_t val, const void *key)
{
	const struct utable *t = (const struct utable *)(uintptr_t)val;
	const struct umap *m = key;
	return t->bid_len == m->bid_len && !memcmp(t->bid, m->bid, m->bid_len);
}

static uint32_t bid_hash(const uint8_t *bid, size_t len)
{
	return bt_hash_bytes(bid, len, 0x6275696c64ULL);
}

/* The registry entry of m's build-id, or NULL (none, or m has no build-id). */
static struct utable *find_table(const struct bt_unwtables *u, const struct umap *m)
{
	if (m->bid_status != BT_BID_OK || !m->bid_len)
		return NULL;
	uint64_t *v = bt_htab_find(&u->table_index, bid_hash(m->bid, m->bid_len), table_eq, NULL, m);
	return v ? (struct utable *)(uintptr_t)*v : NULL;
}

/* The entry of m's build-id, made when new; its path updated. NULL on ENOMEM or no build-id. */
static struct utable *get_table(struct bt_unwtables *u, const struct umap *m, const char *path)
{
	struct utable *t = find_table(u, m);
	if (!t && m->bid_status == BT_BID_OK && m->bid_len) {
		if (u->ntables == u->captables) {
			size_t cap = u->captables ? 2 * u->captables : 64;
			struct utable **nt = realloc(u->tables, cap * sizeof(*nt));
			if (!nt)
				return NULL;
			u->tables = nt;
			u->captables = cap;
		}
		if (!(t = calloc(1, sizeof(*t))))
			return NULL;
		t->bid_len = m->bid_len;
		memcpy(t->bid, m->bid, m->bid_len);
		if (bt_htab_insert(&u->table_index, bid_hash(t->bid, t->bid_len), (uint64_t)(uintptr_t)t)) {
			free(t);
			return NULL;
		}
		u->tables[u->ntables++] = t;
	}
	if (t && path && path[0] == '/' && (!t->path || strcmp(t->path, path))) {
		char *np = strdup(path);
		if (np) {
			free(t->path);
			t->path = np;
		}
	}
	return t;
}

static void forget_table(struct bt_unwtables *u, size_t i)
{
	struct utable *t = u->tables[i];
	struct umap key = { .bid_status = BT_BID_OK, .bid_len = t->bid_len };
	memcpy(key.bid, t->bid, t->bid_len);
	bt_htab_remove(&u->table_index, bid_hash(t->bid, t->bid_len), table_eq, NULL, &key);
	free(t->layout);
	free(t->index);
	free(t->path);
	free(t);
	u->tables[i] = u->tables[--u->ntables];
}

/* Every process mapping the build-id of t is written again at the next flush. */
static void touch_users(struct bt_unwtables *u, const struct utable *t)
{
	struct uproc *p;
	FOR_EACH_PROC(u, p) {
		for (size_t j = 0; j < p->n && !p->dirty; j++)
			if (p->maps[j].bid_len == t->bid_len && !memcmp(p->maps[j].bid, t->bid, t->bid_len))
				p->dirty = true;
	}
	u->dirty = true;
}

static void mark_mapped(struct bt_unwtables *u)
{
	for (size_t i = 0; i < u->ntables; i++)
		u->tables[i]->mapped = false;
	struct uproc *p;
	FOR_EACH_PROC(u, p) {
		for (size_t j = 0; j < p->n && !p->dead; j++) {
			struct utable *t = find_table(u, &p->maps[j]);
			if (t)
				t->mapped = true;
		}
	}
}

/* ---- rows and rules ------------------------------------------------------------------------ */

static int rows_alloc(struct bt_unwtables *u, uint32_t n, uint32_t *lo)
{
	for (size_t i = 0; i < u->nfree; i++) {
		if (u->free[i].n < n)
			continue;
		*lo = u->free[i].lo;
		u->free[i].lo += n;
		u->free[i].n -= n;
		if (!u->free[i].n) {
			memmove(&u->free[i], &u->free[i + 1], (u->nfree - i - 1) * sizeof(*u->free));
			u->nfree--;
		}
		return 0;
	}
	return -ENOSPC;
}

static void rows_release(struct bt_unwtables *u, uint32_t lo, uint32_t n)
{
	size_t i = 0;
	while (i < u->nfree && u->free[i].lo < lo)
		i++;
	bool after_prev = i > 0 && u->free[i - 1].lo + u->free[i - 1].n == lo;
	bool before_next = i < u->nfree && lo + n == u->free[i].lo;
	if (after_prev && before_next) {
		u->free[i - 1].n += n + u->free[i].n;
		memmove(&u->free[i], &u->free[i + 1], (u->nfree - i - 1) * sizeof(*u->free));
		u->nfree--;
	} else if (after_prev) {
		u->free[i - 1].n += n;
	} else if (before_next) {
		u->free[i].lo = lo;
		u->free[i].n += n;
	} else {
		if (u->nfree == u->capfree) {
			struct extent *nf = realloc(u->free, 2 * u->capfree * sizeof(*nf));
			if (!nf)
				return;  /* the rows stay unused: a leak of room, not of correctness */
			u->free = nf;
			u->capfree *= 2;
		}
		memmove(&u->free[i + 1], &u->free[i], (u->nfree - i) * sizeof(*u->free));
		u->free[i] = (struct extent){ lo, n };
		u->nfree++;
	}
}

/* Writes the rows into rows_fd's array through a mapping of the pages that hold them: a copy,
 * where a batch update costs the kernel a copy and an update call per row (15 ms of a short
 * profile's start). A megabyte at a time: the kernel maps every page of the range at once, and
 * while mapped they count in buildtrace's RSS. -errno where the array cannot be mapped. */
static int rows_copy(int rows_fd, uint32_t lo, const struct bt_unw_row *rows, uint32_t n)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < COPY_ROWS ? n - done : COPY_ROWS;
		uint64_t from = (uint64_t)(lo + done) * sizeof(*rows), start = from & ~(pg - 1);
		size_t len = (size_t)(from - start + (uint64_t)k * sizeof(*rows));
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd, (off_t)start);
		if (m == MAP_FAILED)
			return -errno;
		memcpy((char *)m + (from - start), rows + done, (size_t)k * sizeof(*rows));
		munmap(m, len);
		done += k;
	}
	return 0;
}

/* Writes the rows into unw_rows from index lo on: copied into the mapped array where it is
 * mappable; else in batches, one update each where the kernel has no batch operations for
 * arrays. */
static int rows_write(struct bt_unwtables *u, uint32_t lo, const struct bt_unw_row *rows, uint32_t n)
{
	enum { BATCH = 4096 };
	uint32_t keys[BATCH];
	if (!n)
		return 0;
	if (!u->rows_unmappable) {
		if (rows_copy(u->rows_fd, lo, rows, n) == 0) {
			u->st.rows_copied += n;
			return 0;
		}
		u->rows_unmappable = true;
	}
	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < BATCH ? n - done : BATCH;
		for (uint32_t i = 0; i < k; i++)
			keys[i] = lo + done + i;
		uint32_t count = k;
		if (bpf_map_update_batch(u->rows_fd, keys, &rows[done], &count, NULL) != 0) {
			for (uint32_t i = 0; i < k; i++)
				if (bpf_map_update_elem(u->rows_fd, &keys[i], &rows[done + i], BPF_ANY))
					return -errno;
		}
		done += k;
	}
	return 0;
}

/* Rows [k, k + n) of unw_rows, read in one call (one by one where the kernel cannot). */
static bool rows_read(struct bt_unwtables *u, uint32_t k, uint32_t n, struct bt_unw_row *out)
{
	uint32_t keys[INDEX_STEP], count = n, in = k - 1, next;
	if (!u->no_batch) {
		/* a batch goes on after the key given: the one before k, none for the first */
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		int r = bpf_map_lookup_batch(u->rows_fd, k ? &in : NULL, &next, keys, out, &count, &o);
		if ((r == 0 || errno == ENOENT) && count == n && keys[0] == k)
			return true;
		u->no_batch = true;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t key = k + i;
		if (bpf_map_lookup_elem(u->rows_fd, &key, &out[i]))
			return false;
	}
	return true;
}

/* The n rows from index k on, from the blocks kept, else read and kept (the least recently used
 * block making room). */
static const struct bt_unw_row *rows_block(struct bt_unwtables *u, uint32_t k, uint32_t n)
{
	size_t victim = 0;
	for (size_t i = 0; i < BLOCKS; i++) {
		if (u->blocks[i].n == n && u->blocks[i].first == k) {
			u->blocks[i].used = ++u->block_clock;
			return u->blocks[i].rows;
		}
		if (u->blocks[i].used < u->blocks[victim].used)
			victim = i;
	}
	u->blocks[victim].n = 0;
	if (!rows_read(u, k, n, u->blocks[victim].rows))
		return NULL;
	u->blocks[victim].first = k;
	u->blocks[victim].n = n;
	u->blocks[victim].used = ++u->block_clock;
	return u->blocks[victim].rows;
}

/* Rows about to be written anew: no block read before may be kept. */
static void blocks_forget(struct bt_unwtables *u)
{
	for (size_t i = 0; i < BLOCKS; i++)
		u->blocks[i].n = 0;
}

/* The index of rule in unw_rules, written there when new; -errno (-E2BIG: the array is full). */
static int64_t intern_rule(struct bt_unwtables *u, const struct bt_unw_rule *rule)
{
	bool added;
	int64_t k = bt_unw_ruleset_intern(&u->rules, rule, &added);
	if (k < 0 || !added)
		return k;
	uint32_t key = (uint32_t)k;
	if (bpf_map_update_elem(u->rules_fd, &key, &u->rules.rules[k], BPF_ANY)) {
		int err = -errno;
		bt_unw_ruleset_pop(&u->rules);
		return err;
	}
	u->st.rules = u->rules.n;
	return k;
}

/* ---- loading tables ------------------------------------------------------------------------ */

static int flush_procs(struct bt_unwtables *u);
static void retry_pending(struct bt_unwtables *u);

/* Frees the least recently used loaded table no process maps; false when there is none. Every
 * process's entry is written first, so that none still leads to rows about to be reused. */
static bool evict_one(struct bt_unwtables *u)
{
	struct utable *victim = NULL;
	for (size_t i = 0; i < u->ntables; i++) {
		struct utable *t = u->tables[i];
		if (t->state == T_LOADED && !t->mapped && (!victim || t->used < victim->used))
			victim = t;
	}
	if (!victim)
		return false;
	rows_release(u, victim->row_lo, victim->nrows);
	blocks_forget(u);
	u->st.tables--;
	u->st.rows -= victim->nrows;
	u->st.evicted++;
	free(victim->layout);
	free(victim->index);
	victim->layout = NULL;
	victim->index = NULL;
	victim->state = T_NONE;
	return true;
}

/* Room for n rows, tables no process maps freed for it, least recently used first. */
static int rows_room(struct bt_unwtables *u, uint32_t n, uint32_t *lo)
{
	if (rows_alloc(u, n, lo) == 0)
		return 0;
	flush_procs(u);
	mark_mapped(u);
	while (evict_one(u))
		if (rows_alloc(u, n, lo) == 0)
			return 0;
	return -ENOSPC;
}

/* The job's table into the shared arrays: its rules interned, its rows naming them written. */
static int load_rows(struct bt_unwtables *u, struct utable *t, struct bt_unwjob *job)
{
	struct bt_ehtable *et = &job->t;
	uint32_t *map = malloc(et->nrules * sizeof(*map));
	if (!map)
		return -ENOMEM;
	int err = 0;
	for (size_t i = 0; i < et->nrules && !err; i++) {
		int64_t k = intern_rule(u, &et->rules[i]);
		if (k < 0)
			err = (int)k;
		else
			map[i] = (uint32_t)k;
	}
	for (size_t i = 0; i < et->n && !err; i++)
		et->rows[i].rule = et->rows[i].rule < et->nrules ? map[et->rows[i].rule] : 0;
	free(map);
	uint32_t lo = 0;
	size_t nidx = (et->n + INDEX_STEP - 1) / INDEX_STEP;
	if (!err && (!(t->layout = malloc(sizeof(*t->layout))) || !(t->index = malloc(nidx * sizeof(*t->index)))))
		err = -ENOMEM;
	if (!err && (err = rows_room(u, (uint32_t)et->n, &lo)) == 0 &&
	    (err = rows_write(u, lo, et->rows, (uint32_t)et->n)) != 0)
		rows_release(u, lo, (uint32_t)et->n);
	if (err) {
		free(t->layout);
		free(t->index);
		t->layout = NULL;
		t->index = NULL;
		return err;
	}
	for (size_t i = 0; i < nidx; i++)
		t->index[i] = et->rows[i * INDEX_STEP].pc;
	*t->layout = job->lay;
	t->row_lo = lo;
	t->nrows = (uint32_t)et->n;
	t->base = et->base;
	t->state = T_LOADED;
	t->used = ++u->clock;
	u->st.loads++;
	u->st.tables++;
	u->st.rows += t->nrows;
	u->st.rows_loaded += t->nrows;
	return 0;
}

/* What a failure to make a table means: none to be had from this file (no or malformed CFI, too
 * big), or not this time. */
static bool lasting(int err)
{
	return err == -ENODATA || err == -ENOEXEC || err == -E2BIG;
}

int bt_unwtables_collect(struct bt_unwtables *u)
{
	int n = 0;
	struct bt_unwjob *job;
	while (u && (job = bt_unwjobs_take(u->jobs)) != NULL) {
		struct umap key = { .bid_status = BT_BID_OK, .bid_len = job->bid_len };
		memcpy(key.bid, job->bid, job->bid_len);
		struct utable *t = find_table(u, &key);
		u->st.compile_ns += job->compile_ns;
		u->st.cache_refused += job->refused;
		u->st.cache_stored += job->stored;
		if (t && t->state == T_QUEUED) {
			int err = job->err ? job->err : load_rows(u, t, job);
			if (!err) {
				u->st.from_cache += job->from_cache;
				u->st.compiled += !job->from_cache;
			} else if (lasting(err)) {
				t->state = T_FAILED;
				u->st.load_failed++;
			} else {
				t->state = T_LOST;
				u->st.unavailable++;
			}
			touch_users(u, t);
			n++;
		}
		bt_unwjobs_free_job(job);
	}
	if (n)
		retry_pending(u);
	return n;
}

/* The file of m: as pid maps it (the build-id is checked by the worker), else at its path. */
static int open_file(struct bt_unwtables *u, uint32_t pid, const struct umap *m, const struct utable *t)
{
	int fd = bt_procmaps_open_mapped(u->root, (int)pid, m->start, m->end);
	if (fd < 0 && t->path)
		fd = bt_open_regular(AT_FDCWD, t->path, 0, NULL);
	return fd;
}

/* Asks the worker for the table of the file at m of process p, unless it has one or one is being
 * made. The table's state afterwards. */
static int request_table(struct bt_unwtables *u, struct uproc *p, const struct umap *m)
{
	struct utable *t = get_table(u, m, NULL);
	if (!t)
		return T_LOST;
	if (t->state != T_NONE)
		return t->state;
	struct bt_unwjob *job = calloc(1, sizeof(*job));
	if (!job)
		return T_LOST;
	job->fd = -1;
	if (m->vdso) {
		job->image = u->vdso_image;
		job->image_len = u->vdso_len;
	} else if ((job->fd = open_file(u, p->pid, m, t)) < 0) {
		free(job);
		t->state = T_LOST;
		u->st.unavailable++;
		return T_LOST;
	}
	job->bid_len = t->bid_len;
	memcpy(job->bid, t->bid, t->bid_len);
	if (t->path)
		snprintf(job->path, sizeof(job->path), "%s", t->path);
	else if (m->vdso)
		snprintf(job->path, sizeof(job->path), "[vdso]");
	bt_unwjobs_submit(u->jobs, job);
	return t->state = T_QUEUED;
}

int bt_unwtables_fd(const struct bt_unwtables *u)
{
	return u ? bt_unwjobs_fd(u->jobs) : -1;
}

size_t bt_unwtables_pending(const struct bt_unwtables *u)
{
	return u ? bt_unwjobs_pending(u->jobs) : 0;
}

bool bt_unwtables_wait(struct bt_unwtables *u, int timeout_ms)
{
	return u && bt_unwjobs_wait(u->jobs, timeout_ms);
}

/* ---- mappings ------------------------------------------------------------------------------ */

/* Removes [start, end) from p's mappings, trimming those it overlaps in part. */
static void unmap_range(struct uproc *p, uint64_t start, uint64_t end)
{
	size_t w = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct umap m = p->maps[i];
		if (m.end <= start || m.start >= end) {
			p->maps[w++] = m;
			continue;
		}
		p->dirty = true;
		/* the part before the hole is kept, else the part after it (its file offset moves);
		 * a hole punched in the middle loses the tail, which frame pointers then walk */
		if (m.start < start) {
			m.end = start;
			p->maps[w++] = m;
		} else if (m.end > end) {
			m.pgoff += end - m.start;
			m.start = end;
			p->maps[w++] = m;
		}
	}
	p->n = w;
}

static struct umap *map_insert(struct bt_unwtables *u, const struct bt_rec_mapping *r)
{
	if (r->end <= r->start)
		return NULL;
	struct uproc *p = get_proc(u, r->pid);
	if (!p)
		return NULL;
	unmap_range(p, r->start, r->end);
	if (p->n == p->cap) {
		size_t ncap = p->cap ? 2 * p->cap : 16;
		struct umap *nm = realloc(p->maps, ncap * sizeof(*nm));
		if (!nm)
			return NULL;
		p->maps = nm;
		p->cap = ncap;
	}
	size_t i = p->n;
	while (i > 0 && p->maps[i - 1].start > r->start) {
		p->maps[i] = p->maps[i - 1];
		i--;
	}
	struct umap *m = &p->maps[i];
	m->start = r->start;
	m->end = r->end;
	m->pgoff = r->pgoff;
	m->bid_status = r->build_id_status;
	m->bid_len = r->build_id_len <= BT_BUILD_ID_MAX ? r->build_id_len : 0;
	memcpy(m->bid, r->build_id, BT_BUILD_ID_MAX);
	m->vdso = false;
	p->n++;
	p->dirty = true;
	u->dirty = true;
	return m;
}

static void map_add(struct bt_unwtables *u, const struct bt_rec_mapping *r)
{
	struct uproc *dead = find_proc(u, r->pid);
	if (dead && dead->dead && r->hdr.time_ns <= dead->dead_ns)
		return;   /* a kernel mmap record read after its process's exit */
	struct umap *m = map_insert(u, r);
	if (!m)
		return;
	char path[BT_PATH_MAX];
	size_t plen = r->path_len && r->path_len <= BT_PATH_MAX ? r->path_len : 0;
	memcpy(path, r->path, plen);
	path[plen ? plen - 1 : 0] = '\0';
	struct utable *t = get_table(u, m, path);
	if (!t)
		return;
	if (t->state == T_LOST)
		t->state = T_NONE;   /* a process maps it now: its file can be read again */
	if (u->eager && t->state == T_NONE) {
		struct umap copy = *m;  /* request_table may not keep pointers into p->maps */
		request_table(u, find_proc(u, r->pid), &copy);
	}
}

static void fork_proc(struct bt_unwtables *u, uint32_t parent, uint32_t child)
{
	struct uproc *pp = find_proc(u, parent);
	struct uproc *old = find_proc(u, child);
	if (!pp || (old && !old->dead))
		return;
	if (old)
		free_proc(u, old);   /* a pid reused */
	struct uproc *c = get_proc(u, child);
	if (!c || !pp->n || !(c->maps = malloc(pp->n * sizeof(*c->maps))))
		return;
	memcpy(c->maps, pp->maps, pp->n * sizeof(*c->maps));
	c->n = c->cap = pp->n;
	c->dirty = true;
	u->dirty = true;
}

static void exec_proc(struct bt_unwtables *u, uint32_t pid, uint64_t t)
{
	struct uproc *p = find_proc(u, pid);
	if (p && p->dead)
		p = get_proc(u, pid);   /* a pid reused */
	if (!p)
		return;
	/* the old image's mappings, for its samples still to be finished (a process execs once,
	 * as a rule, soon after its fork) */
	free(p->old);
	p->old = NULL;
	p->nold = 0;
	if (u->npend && p->n && (p->old = malloc(p->n * sizeof(*p->old)))) {
		memcpy(p->old, p->maps, p->n * sizeof(*p->old));
		p->nold = p->n;
		p->old_since = p->since_ns;
	}
	p->n = 0;
	p->vdso_asked = false;
	p->since_ns = t;
	p->dirty = u->dirty = true;
}

struct vdso_range {
	uint64_t start, end;
};

static int find_vdso(void *ctx, const struct bt_procmap *m)
{
	struct vdso_range *r = ctx;
	if (strcmp(m->path, "[vdso]"))
		return 0;
	r->start = m->start;
	r->end = m->end;
	return 1;
}

/* buildtrace's own vDSO, copied, and its build-id: 1 when there is one. */
static int own_vdso(struct bt_unwtables *u)
{
	if (u->vdso_state)
		return u->vdso_state;
	u->vdso_state = -ENOENT;
	struct vdso_range r = { 0 };
	struct bt_build_id id;
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!base || bt_procmaps_foreach("", getpid(), find_vdso, &r) != 1 || r.start != base ||
	    !(u->vdso_image = malloc(r.end - r.start)))
		return u->vdso_state;
	u->vdso_len = r.end - r.start;
	memcpy(u->vdso_image, (const void *)base, u->vdso_len);
	if (bt_buildid_from_mem(u->vdso_image, u->vdso_len, &id) != 0 || id.len > BT_BUILD_ID_MAX)
		return u->vdso_state;
	u->vdso_id.bid_status = BT_BID_OK;
	u->vdso_id.bid_len = id.len;
	memcpy(u->vdso_id.bid, id.data, id.len);
	u->vdso_id.vdso = true;
	return u->vdso_state = 1;
}

/* A pc in no mapping known: the process's vDSO, once per exec, added as a mapping of its own. */
static void add_vdso(struct bt_unwtables *u, struct uproc *p)
{
	if (p->vdso_asked || own_vdso(u) != 1)
		return;
	p->vdso_asked = true;
	struct vdso_range r = { 0 };
	if (bt_procmaps_foreach(u->root, (int)p->pid, find_vdso, &r) != 1 ||
	    r.end - r.start != u->vdso_len)
		return;
	struct bt_rec_mapping rec = { .pid = p->pid, .start = r.start, .end = r.end,
				      .build_id_status = BT_BID_OK, .build_id_len = u->vdso_id.bid_len };
	memcpy(rec.build_id, u->vdso_id.bid, BT_BUILD_ID_MAX);
	struct umap *m = map_insert(u, &rec);
	if (m) {
		m->vdso = true;
		get_table(u, m, NULL);
	}
}

static struct umap *map_at(const struct uproc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < p->maps[lo - 1].end ? &p->maps[lo - 1] : NULL;
}

/* ---- stacks finished here ------------------------------------------------------------------ */

/* The stack copy's bytes at [addr, addr + len), for the frame step. */
static bool read_copy(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct bt_rec_ucont *c = ctx;
	uint64_t off = addr - c->sp;
	if (addr < c->sp || off > c->len || len > c->len - off)
		return false;
	memcpy(buf, c->data + off, len);
	return true;
}

/* A mapping whose build-id the kernel could not read at once, read now through map_files. */
static void resolve_bid(struct bt_unwtables *u, struct uproc *p, struct umap *m)
{
	struct bt_build_id id;
	if (bt_procmaps_buildid(u->root, (int)p->pid, m->start, m->end, &id) != 0 || id.len > BT_BUILD_ID_MAX)
		return;
	m->bid_status = BT_BID_OK;
	m->bid_len = id.len;
	memcpy(m->bid, id.data, id.len);
	p->dirty = u->dirty = true;
}

/* The row of table t holding key, as the walker finds it: its index gives the block of rows that
 * holds it, read in one call, then searched. */
static bool find_row(struct bt_unwtables *u, const struct utable *t, uint32_t key, struct bt_unw_row *out)
{
	uint32_t nidx = (t->nrows + INDEX_STEP - 1) / INDEX_STEP, lo = 0, hi = nidx;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->index[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;   /* below the first row */
	uint32_t first = (lo - 1) * INDEX_STEP, n = t->nrows - first < INDEX_STEP ? t->nrows - first : INDEX_STEP;
	const struct bt_unw_row *block = rows_block(u, t->row_lo + first, n);
	if (!block)
		return false;
	uint32_t a = 0, b = n;
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (block[mid].pc <= key)
			a = mid + 1;
		else
			b = mid;
	}
	*out = block[a - 1];   /* a >= 1: block[0].pc is the index's, <= key */
	return true;
}

/* The rule for pc look in mapping m of p, as the walker would find it with the tables loaded:
 * *rule NULL means by frame pointer (code without CFI). 0; -EAGAIN while its table is being
 * made; -ENOENT when there is none to be had now, where the walk stops rather than guess. */
static int rule_for(struct bt_unwtables *u, struct uproc *p, struct umap *m, uint64_t look,
		    const struct bt_unw_rule **rule)
{
	*rule = NULL;
	if (m->bid_status == BT_BID_PENDING)
		resolve_bid(u, p, m);
	if (m->bid_status == BT_BID_PENDING)
		return -ENOENT;
	if (m->bid_status != BT_BID_OK || !m->bid_len)
		return 0;
	struct utable *t = find_table(u, m);
	int state = t ? t->state : T_NONE;
	if (state == T_NONE)
		state = request_table(u, p, m);
	if (state == T_QUEUED)
		return -EAGAIN;
	if (state != T_LOADED)
		return state == T_FAILED ? 0 : -ENOENT;
	t = find_table(u, m);
	t->used = ++u->clock;
	uint64_t vaddr;
	if (bt_elf_offset_to_vaddr(t->layout, m->pgoff, &vaddr) != 0)
		return 0;
	uint64_t key = look - (m->start - vaddr + t->base);
	struct bt_unw_row row;
	if (key > 0xffffffffULL || !find_row(u, t, (uint32_t)key, &row) || row.rule >= u->rules.n)
		return 0;
	*rule = &u->rules.rules[row.rule];
	return 0;
}

/* The sample s walked on from its stack copy c: into u->fin. -EAGAIN when a table is being made.
 * A sample finished late (while later records moved the tables on) is walked only while its
 * process's mappings are still those it was taken with. */
static int finish(struct bt_unwtables *u, const struct bt_rec_sample *s, const struct bt_rec_ucont *c)
{
	struct bt_rec_sample *f = u->fin;
	size_t n = (size_t)s->kern_n + s->user_n, head = offsetof(struct bt_rec_sample, ips);
	memcpy(f, s, head + n * sizeof(f->ips[0]));
	uint32_t flags = ((uint32_t)s->user_err & ~(uint32_t)BT_UWALK_CONT) | BT_UWALK_USER;
	struct uproc *p = find_proc(u, s->pid), img;
	if (p && p->since_ns > s->hdr.time_ns) {
		/* taken before its process's last exec: walked with the old image's mappings */
		if (!p->nold || p->old_since > s->hdr.time_ns)
			p = NULL;
		else
			img = (struct uproc){ .pid = p->pid, .vdso_asked = true, .dead = true, .maps = p->old,
					      .n = p->nold };
		p = p ? &img : NULL;
	}
	struct bt_ehwalk_regs r = { c->pc, c->sp, c->bp, c->bx, c->exact != 0, false };
	while (p && n > s->kern_n && n < 2 * BT_MAX_STACK) {
		uint64_t look = r.exact ? r.pc : r.pc - 1;
		struct umap *m = map_at(p, look);
		if (!m && !p->vdso_asked && !p->dead) {
			add_vdso(u, p);
			m = map_at(p, look);
		}
		const struct bt_unw_rule *rule = NULL;
		if (!m) {
			flags |= BT_UWALK_NO_MAP;   /* JIT code: frame pointers */
		} else {
			int err = rule_for(u, p, m, look, &rule);
			if (err == -EAGAIN)
				return err;
			if (err) {
				flags |= BT_UWALK_NO_TABLE;
				break;
			}
		}
		if (!bt_ehwalk_step(&r, rule, read_copy, (void *)c, &flags))
			break;
		f->ips[n++] = r.pc;
	}
	if (n == 2 * BT_MAX_STACK)
		flags |= BT_UWALK_MAX;
	f->user_n = (uint16_t)(n - s->kern_n);
	f->user_err = (int32_t)flags;
	f->hdr.size = (uint32_t)(head + n * sizeof(f->ips[0]));
	return 0;
}

static void count_walk(struct bt_unwtables *u, const struct bt_rec_sample *s)
{
	uint32_t f = s->user_err >= 0 ? (uint32_t)s->user_err : 0;
	u->st.walks++;
	u->st.walk_frames += s->user_n;
	u->st.walks_done += !!(f & BT_UWALK_DONE);
	u->st.walks_fp += !!(f & BT_UWALK_FP);
	u->st.walks_no_table += !!(f & BT_UWALK_NO_TABLE);
	u->st.walks_no_proc += !!(f & BT_UWALK_NO_PROC);
	u->st.walks_user += !!(f & BT_UWALK_USER);
	u->st.walks_user_done += (f & (BT_UWALK_USER | BT_UWALK_DONE)) == (BT_UWALK_USER | BT_UWALK_DONE);
}

static void *dup_rec(const void *h)
{
	size_t size = ((const struct bt_rec_hdr *)h)->size;
	void *d = malloc(size);
	if (d)
		memcpy(d, h, size);
	return d;
}

/* Keeps s and its stack copy to finish once the table it waits for is made: its ticket, or 0
 * when it cannot wait (too many do, or no memory). */
static uint64_t defer(struct bt_unwtables *u, const struct bt_rec_sample *s, const struct bt_rec_ucont *c)
{
	if (u->npend == PENDING_MAX || u->pend_bytes + c->hdr.size > PENDING_BYTES)
		return 0;
	if (u->npend == u->cappend) {
		size_t cap = u->cappend ? 2 * u->cappend : 64;
		struct pending *np = realloc(u->pend, cap * sizeof(*np));
		if (!np)
			return 0;
		u->pend = np;
		u->cappend = cap;
	}
	struct pending *e = &u->pend[u->npend];
	e->s = dup_rec(s);
	e->c = dup_rec(c);
	if (!e->s || !e->c) {
		free(e->s);
		free(e->c);
		return 0;
	}
	e->ready = false;
	e->ticket = ++u->tickets;
	u->npend++;
	u->pend_bytes += c->hdr.size;
	u->st.walks_held++;
	return e->ticket;
}

/* The samples waiting, walked again once tables came: those that can be are finished. */
static void retry_pending(struct bt_unwtables *u)
{
	for (size_t i = 0; i < u->npend; i++) {
		struct pending *e = &u->pend[i];
		if (e->ready || finish(u, e->s, e->c) != 0)
			continue;
		struct bt_rec_sample *d = dup_rec(u->fin);
		if (!d)
			continue;
		free(e->s);
		e->s = d;
		e->ready = true;
		count_walk(u, e->s);
		u->pend_bytes -= e->c->hdr.size;   /* the stack copy has served */
		free(e->c);
		e->c = NULL;
	}
}

/* A walked sample: finished here when the walker left it (its copy just before it), or kept to
 * finish later (BT_UNWTABLES_LATER); counted; the process's entry written again when the walker
 * had none. */
static int on_sample(struct bt_unwtables *u, const struct bt_rec_sample *s, const struct bt_rec_hdr **out,
		     uint64_t *ticket)
{
	uint32_t f = s->user_err >= 0 ? (uint32_t)s->user_err : 0;
	if (!s->user_n)
		return 0;   /* a kernel thread, or nothing readable: no user stack was walked */
	struct uproc *p = find_proc(u, s->pid);
	if (p && (f & BT_UWALK_NO_PROC))
		p->dirty = u->dirty = true;
	if (f & BT_UWALK_CONT) {
		const struct bt_rec_ucont *c = u->cont;
		if (!u->have_cont || c->tid != s->tid || c->hdr.time_ns != s->hdr.time_ns) {
			u->st.cont_lost++;
		} else if (finish(u, s, c) == 0) {
			s = u->fin;
			*out = &s->hdr;
		} else if ((*ticket = defer(u, s, c)) != 0) {
			u->have_cont = false;
			return BT_UNWTABLES_LATER;
		}
		u->have_cont = false;
	}
	count_walk(u, s);
	return 0;
}

int bt_unwtables_record(struct bt_unwtables *u, const struct bt_rec_hdr *h, const struct bt_rec_hdr **out,
			uint64_t *ticket)
{
	*out = h;
	if (h->time_ns > u->now_ns)
		u->now_ns = h->time_ns;
	switch (h->type) {
	case BT_REC_UCONT: {
		const struct bt_rec_ucont *c = (const void *)h;
		*out = NULL;
		if (h->size > sizeof(*c) + BT_UCONT_BYTES || c->len > h->size - sizeof(*c))
			return 0;
		memcpy(u->cont, c, h->size);
		u->have_cont = true;
		u->st.cont_bytes += c->len;
		return 0;
	}
	case BT_REC_SAMPLE:
		return h->size >= offsetof(struct bt_rec_sample, ips) ? on_sample(u, (const void *)h, out, ticket) : 0;
	case BT_REC_MMAP:
	case BT_REC_VMA:
		map_add(u, (const struct bt_rec_mapping *)h);
		break;
	case BT_REC_MUNMAP: {
		const struct bt_rec_munmap *m = (const void *)h;
		struct uproc *p = find_proc(u, m->pid);
		if (p) {
			unmap_range(p, m->start, m->end);
			u->dirty |= p->dirty;
		}
		break;
	}
	case BT_REC_EXEC:
		/* the walker forgot its entry at the exec: the new image's mappings follow */
		exec_proc(u, ((const struct bt_rec_exec *)h)->pid, h->time_ns);
		break;
	case BT_REC_FORK: {
		const struct bt_rec_fork *f = (const void *)h;
		fork_proc(u, f->parent_pid, f->child_pid);
		break;
	}
	case BT_REC_EXIT:
		drop_proc(u, ((const struct bt_rec_exit *)h)->pid, h->time_ns);
		break;
	}
	return 0;
}

static struct pending *find_pending(struct bt_unwtables *u, uint64_t ticket)
{
	for (size_t i = 0; i < u->npend; i++)
		if (u->pend[i].ticket == ticket)
			return &u->pend[i];
	return NULL;
}

const struct bt_rec_hdr *bt_unwtables_finished(struct bt_unwtables *u, uint64_t ticket)
{
	struct pending *e = find_pending(u, ticket);
	return e && e->ready ? &e->s->hdr : NULL;
}

const struct bt_rec_hdr *bt_unwtables_give_up(struct bt_unwtables *u, uint64_t ticket)
{
	struct pending *e = find_pending(u, ticket);
	if (!e)
		return NULL;
	if (!e->ready) {
		e->ready = true;
		u->st.cont_lost++;
		count_walk(u, e->s);
	}
	return &e->s->hdr;
}

void bt_unwtables_release(struct bt_unwtables *u, uint64_t ticket)
{
	struct pending *e = find_pending(u, ticket);
	if (!e)
		return;
	if (e->c)
		u->pend_bytes -= e->c->hdr.size;
	free(e->s);
	free(e->c);
	size_t i = (size_t)(e - u->pend);
	memmove(e, e + 1, (u->npend - i - 1) * sizeof(*e));
	u->npend--;
}

/* ---- flush --------------------------------------------------------------------------------- */

/* The entry of one mapping: its table's rows and the adjustment from a pc to a row's pc; no rows
 * (row_lo == row_hi) while its table is to come, BT_UNW_NO_CFI when there is none to be had. */
static void fill_map(struct bt_unwtables *u, const struct umap *m, struct bt_unw_map *out)
{
	out->start = m->start;
	out->end = m->end;
	out->adj = 0;
	out->row_lo = out->row_hi = 0;
	if (m->bid_status != BT_BID_OK && m->bid_status != BT_BID_PENDING) {
		out->row_lo = out->row_hi = BT_UNW_NO_CFI;
		return;
	}
	struct utable *t = find_table(u, m);
	if (!t)
		return;
	uint64_t vaddr;
	t->used = u->clock;
	if (t->state == T_FAILED || (t->state == T_LOADED &&
				     bt_elf_offset_to_vaddr(t->layout, m->pgoff, &vaddr) != 0)) {
		out->row_lo = out->row_hi = BT_UNW_NO_CFI;
		return;
	}
	if (t->state != T_LOADED)
		return;
	/* pc - adj = (pc - start + vaddr(pgoff)) - base */
	out->adj = m->start - vaddr + t->base;
	out->row_lo = t->row_lo;
	out->row_hi = t->row_lo + t->nrows;
}

static int write_proc(struct bt_unwtables *u, struct uproc *p)
{
	struct bt_unw_proc *b = &u->buf;
	size_t n = p->n < BT_UNW_MAPS_MAX ? p->n : BT_UNW_MAPS_MAX;
	if (p->n > n)
		u->st.maps_dropped += p->n - n;
	memset(b, 0, sizeof(*b));
	b->n = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		fill_map(u, &p->maps[i], &b->maps[i]);
	p->dirty = false;
	return bpf_map_update_elem(u->procs_fd, &p->pid, b, BPF_ANY) ? -errno : 0;
}

static int flush_procs(struct bt_unwtables *u)
{
	int first = 0;
	u->clock++;
	struct uproc *p;
	FOR_EACH_PROC(u, p) {
		if (!p->dirty || p->dead)
			continue;
		int err = write_proc(u, p);
		if (err && !first)
			first = err;
	}
	return first;
}

/* Build-ids without a table, beyond TABLES_KEPT, are forgotten when no process maps them. */
static void prune_registry(struct bt_unwtables *u)
{
	if (u->ntables <= TABLES_KEPT)
		return;
	mark_mapped(u);
	for (size_t i = u->ntables; i-- > 0;) {
		int st = u->tables[i]->state;
		if (!u->tables[i]->mapped && st != T_LOADED && st != T_QUEUED)
			forget_table(u, i);
	}
}

/* Exited processes no waiting sample may need any more. */
static void reap_dead(struct bt_unwtables *u)
{
	uint32_t pids[256];
	size_t n = 0;
	struct uproc *p;
	FOR_EACH_PROC(u, p) {
		if (p->dead && n < 256 && (!u->npend || u->now_ns - p->dead_ns > DEAD_KEEP_NS))
			pids[n++] = p->pid;
	}
	for (size_t i = 0; i < n; i++)
		free_proc(u, find_proc(u, pids[i]));
}

int bt_unwtables_flush(struct bt_unwtables *u)
{
	if (!u)
		return 0;
	reap_dead(u);
	if (!u->dirty)
		return 0;
	int err = flush_procs(u);
	prune_registry(u);
	u->dirty = false;
	return err;
}

void bt_unwtables_stats(const struct bt_unwtables *u, struct bt_unwtables_stats *out)
{
	if (u)
		*out = u->st;
	else
		memset(out, 0, sizeof(*out));
}

/* ---- lifetime ------------------------------------------------------------------------------ */

int bt_unwtables_new(const struct bt_unwtables_opts *o, struct bt_unwtables **out)
{
	struct bt_unwtables *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->rows_fd = o->rows_fd;
	u->rules_fd = o->rules_fd;
	u->procs_fd = o->procs_fd;
	u->rows_max = o->rows_max;
	u->eager = o->eager;
	u->root = o->proc_root ? o->proc_root : "";
	bt_htab_init(&u->procs);
	bt_htab_init(&u->table_index);
	bt_unw_ruleset_init(&u->rules);
	u->free = malloc(sizeof(*u->free));
	u->blocks = calloc(BLOCKS, sizeof(*u->blocks));
	u->cont = malloc(sizeof(*u->cont) + BT_UCONT_BYTES);
	u->fin = malloc(sizeof(*u->fin));
	struct bt_unw_rule none = { 0 };
	int err = !u->free || !u->blocks || !u->cont || !u->fin ? -ENOMEM : bt_unwjobs_new(o->store, &u->jobs);
	if (!err && intern_rule(u, &none) != 0)
		err = -EIO;   /* rule 0, no CFI, as the rows the walker reads before any is loaded */
	if (err) {
		bt_unwtables_free(u);
		return err;
	}
	u->free[0] = (struct extent){ 0, o->rows_max };
	u->nfree = u->capfree = 1;
	u->st.rows_max = o->rows_max;
	*out = u;
	return 0;
}

int bt_unwtables_start(struct bt_unwtables *u)
{
	return u ? bt_unwjobs_start(u->jobs) : 0;
}

void bt_unwtables_free(struct bt_unwtables *u)
{
	if (!u)
		return;
	bt_unwjobs_free(u->jobs);
	struct uproc *p;
	FOR_EACH_PROC(u, p) {
		free(p->old);
		free(p->maps);
		free(p);
	}
	bt_htab_free(&u->procs);
	while (u->ntables)
		forget_table(u, u->ntables - 1);
	free(u->tables);
	bt_htab_free(&u->table_index);
	bt_unw_ruleset_free(&u->rules);
	while (u->npend)
		bt_unwtables_release(u, u->pend[0].ticket);
	free(u->pend);
	free(u->vdso_image);
	free(u->free);
	free(u->blocks);
	free(u->cont);
	free(u->fin);
	free(u);
}
