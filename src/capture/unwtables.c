/* unwtables.c - keeps unw_rows and unw_procs (bpf/bt_unwind.h) current: a process list of
 * executable mappings from the mapping, exec, fork and exit records; tables compiled from the
 * mapped file itself (through /proc/PID/map_files, its build-id checked) when a sample's walk met
 * a mapping without one; rows placed in the shared array by a first-fit allocator. The vDSO is
 * no file: its range in a process comes from /proc/PID/maps, its table from buildtrace's own copy
 * of the same image (one per kernel, with the same build-id). */
#include "capture/unwtables.h"
#include "capture/procmaps.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/htab.h"
#include "elf/buildid.h"
#include "elf/ehtable.h"
#include "elf/elffile.h"

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
	struct umap *maps;     /* sorted by start, not overlapping */
	size_t n, cap;
};

enum { T_FREE, T_LOADED, T_FAILED };

struct utable {
	int state;
	uint8_t bid_len;
	uint8_t bid[BT_BUILD_ID_MAX];
	uint32_t row_lo, nrows;
	uint64_t base;
	struct bt_elf_layout layout;
	bool used;             /* seen in a process at the last flush */
};

struct extent {
	uint32_t lo, n;
};

struct bt_unwtables {
	int rows_fd, procs_fd;
	uint32_t rows_max;
	bool rows_unmappable;          /* unw_rows cannot be mapped (not BPF_F_MMAPABLE): batches */
	const char *root;
	struct bt_htab procs;          /* pid -> struct uproc * */
	struct utable *tables;
	size_t ntables;
	struct extent *free;           /* free rows, sorted, coalesced */
	size_t nfree, capfree;
	bool dirty;                    /* some process changed since the last flush */
	bool eager;                    /* tables loaded when mappings are reported */
	int vdso_state;                /* 0 untried, 1 vdso_image ready, -errno none */
	void *vdso_image;
	size_t vdso_len;
	struct umap vdso_id;           /* its build-id */
	struct bt_unw_proc buf;        /* what is written for one process */
	struct bt_unwtables_stats st;
};

static bool pid_eq(void *ctx, uint64_t val, const void *key)
{
	return ((struct uproc *)(uintptr_t)val)->pid == *(const uint32_t *)key;
}

static struct uproc *find_proc(struct bt_unwtables *u, uint32_t pid)
{
	uint64_t *v = bt_htab_find(&u->procs, bt_hash_u64(pid), pid_eq, NULL, &pid);
	return v ? (struct uproc *)(uintptr_t)*v : NULL;
}

static struct uproc *get_proc(struct bt_unwtables *u, uint32_t pid)
{
	struct uproc *p = find_proc(u, pid);
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

static void drop_proc(struct bt_unwtables *u, uint32_t pid)
{
	struct uproc *p = find_proc(u, pid);
	if (!p)
		return;
	bt_htab_remove(&u->procs, bt_hash_u64(pid), pid_eq, NULL, &pid);
	bpf_map_delete_elem(u->procs_fd, &pid);
	free(p->maps);
	free(p);
	u->st.procs--;
	u->dirty = true;
}

int bt_unwtables_new(int rows_fd, uint32_t rows_max, int procs_fd, const char *proc_root, bool eager,
		     struct bt_unwtables **out)
{
	struct bt_unwtables *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->rows_fd = rows_fd;
	u->procs_fd = procs_fd;
	u->rows_max = rows_max;
	u->eager = eager;
	u->root = proc_root ? proc_root : "";
	bt_htab_init(&u->procs);
	u->free = malloc(sizeof(*u->free));
	if (!u->free) {
		free(u);
		return -ENOMEM;
	}
	u->free[0] = (struct extent){ 0, rows_max };
	u->nfree = u->capfree = 1;
	u->st.rows_max = rows_max;
	*out = u;
	return 0;
}

void bt_unwtables_free(struct bt_unwtables *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->procs.cap; i++) {
		if (!u->procs.slots[i].used)
			continue;
		struct uproc *p = (struct uproc *)(uintptr_t)u->procs.slots[i].val;
		free(p->maps);
		free(p);
	}
	bt_htab_free(&u->procs);
	free(u->vdso_image);
	free(u->tables);
	free(u->free);
	free(u);
}

/* ---- rows ---------------------------------------------------------------------------------- */

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
 * profile's start). -errno where the array cannot be mapped. */
static int rows_copy(int rows_fd, uint32_t lo, const struct bt_unw_row *rows, uint32_t n)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t from = (uint64_t)lo * sizeof(*rows), start = from & ~(pg - 1);
	size_t len = (size_t)(from - start + (uint64_t)n * sizeof(*rows));
	/* Mapped for this copy only: the pages would otherwise count in buildtrace's RSS. */
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd, (off_t)start);
	if (m == MAP_FAILED)
		return -errno;
	memcpy((char *)m + (from - start), rows, (size_t)n * sizeof(*rows));
	munmap(m, len);
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

/* ---- tables -------------------------------------------------------------------------------- */

static struct utable *find_table(struct bt_unwtables *u, const struct umap *m)
{
	if (m->bid_status != BT_BID_OK || !m->bid_len)
		return NULL;
	for (size_t i = 0; i < u->ntables; i++) {
		struct utable *t = &u->tables[i];
		if (t->state != T_FREE && t->bid_len == m->bid_len && !memcmp(t->bid, m->bid, m->bid_len))
			return t;
	}
	return NULL;
}

static struct utable *new_table(struct bt_unwtables *u, const struct umap *m)
{
	struct utable *t = NULL;
	for (size_t i = 0; i < u->ntables && !t; i++)
		if (u->tables[i].state == T_FREE)
			t = &u->tables[i];
	if (!t) {
		struct utable *nt = realloc(u->tables, (u->ntables + 1) * sizeof(*nt));
		if (!nt)
			return NULL;
		u->tables = nt;
		t = &u->tables[u->ntables++];
	}
	memset(t, 0, sizeof(*t));
	t->state = T_FAILED;
	t->bid_len = m->bid_len;
	memcpy(t->bid, m->bid, m->bid_len);
	return t;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The file mapped at m in pid, when it still carries m's build-id; -errno otherwise. */
static int open_checked(struct bt_unwtables *u, uint32_t pid, const struct umap *m)
{
	int fd = bt_procmaps_open_mapped(u->root, (int)pid, m->start, m->end);
	if (fd < 0)
		return fd;
	struct bt_build_id id;
	if (bt_buildid_from_fd(fd, &id) != 0 || id.len != m->bid_len || memcmp(id.data, m->bid, id.len)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Compiles the table of the file open as fd (the vDSO image when fd < 0) and loads its rows
 * into t. */
static int load_into(struct bt_unwtables *u, int fd, struct utable *t)
{
	struct bt_elf *be = NULL;
	int err = fd >= 0 ? bt_elf_open_fd(fd, &be) : bt_elf_open_mem(u->vdso_image, u->vdso_len, &be);
	if (!err)
		err = bt_elf_layout(be, &t->layout);
	bt_elf_close(be);
	if (err)
		return err;
	struct bt_ehtable et;
	uint64_t t0 = mono_ns();
	err = fd >= 0 ? bt_ehtable_compile(fd, &et) : bt_ehtable_compile_mem(u->vdso_image, u->vdso_len, &et);
	u->st.compile_ns += mono_ns() - t0;
	if (err)
		return err;
	uint32_t lo = 0;
	if (et.n > UINT32_MAX)
		err = -E2BIG;
	else if ((err = rows_alloc(u, (uint32_t)et.n, &lo)) == 0) {
		if ((err = rows_write(u, lo, et.rows, (uint32_t)et.n)) != 0) {
			rows_release(u, lo, (uint32_t)et.n);
		} else {
			t->row_lo = lo;
			t->nrows = (uint32_t)et.n;
			t->base = et.base;
		}
	}
	bt_ehtable_free(&et);
	return err;
}

/* Every process mapping the build-id of t is written again at the next flush. */
static void touch_users(struct bt_unwtables *u, const struct utable *t)
{
	for (size_t i = 0; i < u->procs.cap; i++) {
		if (!u->procs.slots[i].used)
			continue;
		struct uproc *p = (struct uproc *)(uintptr_t)u->procs.slots[i].val;
		for (size_t j = 0; j < p->n && !p->dirty; j++)
			if (p->maps[j].bid_len == t->bid_len && !memcmp(p->maps[j].bid, t->bid, t->bid_len))
				p->dirty = true;
	}
	u->dirty = true;
}

/* The table of the file at m of process p: compiled and loaded once per build-id. A failure that
 * a later try could overcome (the process gone, the mapping changed) leaves no trace. */
static void load_table(struct bt_unwtables *u, struct uproc *p, const struct umap *m)
{
	if (m->bid_status != BT_BID_OK || !m->bid_len || find_table(u, m))
		return;
	int fd = m->vdso ? -1 : open_checked(u, p->pid, m);
	if (fd < 0 && !m->vdso)
		return;
	struct utable *t = new_table(u, m);
	if (!t) {
		if (fd >= 0)
			close(fd);
		return;
	}
	int err = load_into(u, fd, t);
	if (fd >= 0)
		close(fd);
	if (err) {
		u->st.load_failed++;
	} else {
		t->state = T_LOADED;
		u->st.loads++;
		u->st.tables++;
		u->st.rows += t->nrows;
		u->st.rows_loaded += t->nrows;
	}
	touch_users(u, t);
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

static void map_add(struct bt_unwtables *u, const struct bt_rec_mapping *r)
{
	if (r->end <= r->start)
		return;
	struct uproc *p = get_proc(u, r->pid);
	if (!p)
		return;
	unmap_range(p, r->start, r->end);
	if (p->n == p->cap) {
		size_t ncap = p->cap ? 2 * p->cap : 16;
		struct umap *nm = realloc(p->maps, ncap * sizeof(*nm));
		if (!nm)
			return;
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
	if (u->eager) {
		struct umap copy = *m;  /* load_table may not keep pointers into p->maps */
		load_table(u, p, &copy);
	}
}

static void fork_proc(struct bt_unwtables *u, uint32_t parent, uint32_t child)
{
	struct uproc *pp = find_proc(u, parent);
	if (!pp || find_proc(u, child))
		return;
	struct uproc *c = get_proc(u, child);
	if (!c || !pp->n || !(c->maps = malloc(pp->n * sizeof(*c->maps))))
		return;
	memcpy(c->maps, pp->maps, pp->n * sizeof(*c->maps));
	c->n = c->cap = pp->n;
	c->dirty = true;
	u->dirty = true;
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
	map_add(u, &rec);
	for (size_t i = 0; i < p->n; i++)
		if (p->maps[i].start == r.start)
			p->maps[i].vdso = true;
}

static const struct umap *map_at(const struct uproc *p, uint64_t pc)
{
	for (size_t i = 0; i < p->n; i++)
		if (pc >= p->maps[i].start && pc < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* A walked sample: counted, and the tables its frames lacked loaded for the next ones. */
static void on_sample(struct bt_unwtables *u, const struct bt_rec_sample *s)
{
	uint32_t f = s->user_err >= 0 ? (uint32_t)s->user_err : 0;
	if (!s->user_n)
		return;   /* a kernel thread, or nothing readable: no user stack was walked */
	u->st.walks++;
	u->st.walk_frames += s->user_n;
	u->st.walks_done += !!(f & BT_UWALK_DONE);
	u->st.walks_fp += !!(f & BT_UWALK_FP);
	u->st.walks_no_table += !!(f & BT_UWALK_NO_TABLE);
	u->st.walks_no_proc += !!(f & BT_UWALK_NO_PROC);
	struct uproc *p = find_proc(u, s->pid);
	if (!p)
		return;
	if (f & BT_UWALK_NO_PROC)
		p->dirty = u->dirty = true;
	if (f & BT_UWALK_NO_MAP)
		add_vdso(u, p);
	if (!(f & BT_UWALK_NO_TABLE) || s->kern_n + s->user_n > 2 * BT_MAX_STACK)
		return;
	for (size_t i = s->kern_n; i < (size_t)s->kern_n + s->user_n; i++) {
		const struct umap *m = map_at(p, s->ips[i] - (i > s->kern_n));
		if (!m)
			continue;
		if (find_table(u, m))
			p->dirty = u->dirty = true;  /* loaded meanwhile: this process's entry is stale */
		else
			load_table(u, p, m);
	}
}

void bt_unwtables_record(struct bt_unwtables *u, const struct bt_rec_hdr *h)
{
	switch (h->type) {
	case BT_REC_SAMPLE:
		if (h->size >= offsetof(struct bt_rec_sample, ips))
			on_sample(u, (const struct bt_rec_sample *)h);
		break;
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
	case BT_REC_EXEC: {
		struct uproc *p = find_proc(u, ((const struct bt_rec_exec *)h)->pid);
		if (p) {
			p->n = 0;
			p->vdso_asked = false;
			p->dirty = u->dirty = true;
		}
		break;
	}
	case BT_REC_FORK: {
		const struct bt_rec_fork *f = (const void *)h;
		fork_proc(u, f->parent_pid, f->child_pid);
		break;
	}
	case BT_REC_EXIT:
		drop_proc(u, ((const struct bt_rec_exit *)h)->pid);
		break;
	}
}

/* ---- flush --------------------------------------------------------------------------------- */

/* The entry of one mapping: its table's rows and the adjustment from a pc to a row's pc. */
static void fill_map(struct bt_unwtables *u, const struct umap *m, struct bt_unw_map *out)
{
	out->start = m->start;
	out->end = m->end;
	out->adj = 0;
	out->row_lo = out->row_hi = 0;
	struct utable *t = find_table(u, m);
	uint64_t vaddr;
	if (t)
		t->used = true;
	if (m->bid_status != BT_BID_OK && m->bid_status != BT_BID_PENDING)
		out->row_lo = out->row_hi = BT_UNW_NO_CFI;
	if (!t)
		return;
	if (t->state != T_LOADED || bt_elf_offset_to_vaddr(&t->layout, m->pgoff, &vaddr) != 0) {
		out->row_lo = out->row_hi = BT_UNW_NO_CFI;
		return;
	}
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

/* Tables no process maps any more give their rows back. */
static void evict(struct bt_unwtables *u)
{
	for (size_t i = 0; i < u->ntables; i++)
		u->tables[i].used = false;
	for (size_t i = 0; i < u->procs.cap; i++) {
		if (!u->procs.slots[i].used)
			continue;
		struct uproc *p = (struct uproc *)(uintptr_t)u->procs.slots[i].val;
		for (size_t j = 0; j < p->n; j++) {
			struct utable *t = find_table(u, &p->maps[j]);
			if (t)
				t->used = true;
		}
	}
	for (size_t i = 0; i < u->ntables; i++) {
		struct utable *t = &u->tables[i];
		if (t->state == T_FREE || t->used)
			continue;
		if (t->state == T_LOADED) {
			rows_release(u, t->row_lo, t->nrows);
			u->st.tables--;
			u->st.rows -= t->nrows;
			u->st.evicted++;
		}
		t->state = T_FREE;
	}
}

int bt_unwtables_flush(struct bt_unwtables *u)
{
	if (!u || !u->dirty)
		return 0;
	int first = 0;
	for (size_t i = 0; i < u->procs.cap; i++) {
		if (!u->procs.slots[i].used)
			continue;
		struct uproc *p = (struct uproc *)(uintptr_t)u->procs.slots[i].val;
		if (!p->dirty)
			continue;
		int err = write_proc(u, p);
		if (err && !first)
			first = err;
	}
	/* a process's entry is written before the rows of a table it no longer maps are reused */
	evict(u);
	u->dirty = false;
	return first;
}

void bt_unwtables_stats(const struct bt_unwtables *u, struct bt_unwtables_stats *out)
{
	if (u)
		*out = u->st;
	else
		memset(out, 0, sizeof(*out));
}
