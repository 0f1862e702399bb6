/* proctable.c - a pid-keyed hash of processes, each with a sorted array of mappings. */
#include "session/proctable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool pid_eq(void *ctx, uint64_t val, const void *key)
{
	return ((struct bt_process *)(uintptr_t)val)->pid == *(const int *)key;
}

void bt_proctable_init(struct bt_proctable *t)
{
	memset(t, 0, sizeof(*t));
	bt_htab_init(&t->index);
}

static void process_free(struct bt_process *p)
{
	if (p) {
		free(p->maps);
		free(p);
	}
}

void bt_proctable_free(struct bt_proctable *t)
{
	for (size_t i = 0; i < t->index.cap; i++)
		if (t->index.slots[i].used)
			process_free((struct bt_process *)(uintptr_t)t->index.slots[i].val);
	bt_htab_free(&t->index);
	memset(t, 0, sizeof(*t));
}

struct bt_process *bt_proctable_find(const struct bt_proctable *t, int pid)
{
	uint64_t *v = bt_htab_find(&t->index, bt_hash_u64((uint64_t)pid), pid_eq, NULL, &pid);
	return v ? (struct bt_process *)(uintptr_t)*v : NULL;
}

static void drop(struct bt_proctable *t, struct bt_process *p)
{
	int pid = p->pid;
	bt_htab_remove(&t->index, bt_hash_u64((uint64_t)pid), pid_eq, NULL, &pid);
	process_free(p);
	t->nprocs--;
}

struct bt_process *bt_proctable_get(struct bt_proctable *t, int pid)
{
	struct bt_process *p = bt_proctable_find(t, pid);
	if (p && !p->dead)
		return p;
	if (p)
		drop(t, p);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (bt_htab_insert(&t->index, bt_hash_u64((uint64_t)pid), (uintptr_t)p)) {
		free(p);
		return NULL;
	}
	t->nprocs++;
	t->seen++;
	return p;
}

int bt_proctable_exec(struct bt_proctable *t, int pid, uint32_t comm_id)
{
	struct bt_process *p = bt_proctable_get(t, pid);
	if (!p)
		return -ENOMEM;
	p->nmaps = 0;
	p->comm_id = comm_id;
	p->vdso_known = false;  /* a new address space */
	p->vdso_start = p->vdso_end = 0;
	return 0;
}

int bt_proctable_fork(struct bt_proctable *t, int parent, int child, uint32_t comm_id)
{
	struct bt_process *c = bt_proctable_find(t, child);
	if (c)
		drop(t, c);  /* whatever was known under this pid belongs to an earlier process */
	c = bt_proctable_get(t, child);
	if (!c)
		return -ENOMEM;
	c->comm_id = comm_id;
	struct bt_process *p = bt_proctable_find(t, parent);
	if (p) {  /* the same address space, its [vdso] included */
		c->vdso_known = p->vdso_known;
		c->vdso_start = p->vdso_start;
		c->vdso_end = p->vdso_end;
		c->vdso_file = p->vdso_file;
	}
	if (p && p->nmaps) {
		c->maps = malloc(p->nmaps * sizeof(*c->maps));
		if (!c->maps)
			return -ENOMEM;
		memcpy(c->maps, p->maps, p->nmaps * sizeof(*c->maps));
		c->nmaps = c->cap = p->nmaps;
	}
	return 0;
}

void bt_proctable_exit(struct bt_proctable *t, int pid, uint64_t now_ns)
{
	struct bt_process *p = bt_proctable_find(t, pid);
	if (p && !p->dead) {
		p->dead = true;
		p->dead_ns = now_ns;
	}
}

size_t bt_proctable_reap(struct bt_proctable *t, uint64_t now_ns, uint64_t grace_ns)
{
	size_t n = 0;
	/* Removal shifts slots, so rescan from the start after each one. */
	for (size_t i = 0; i < t->index.cap;) {
		struct bt_htab_slot *s = &t->index.slots[i];
		struct bt_process *p = (struct bt_process *)(uintptr_t)s->val;
		if (s->used && p->dead && now_ns - p->dead_ns >= grace_ns) {
			drop(t, p);
			n++;
			continue;
		}
		i++;
	}
	return n;
}

static int reserve(struct bt_process *p, size_t n)
{
	if (n <= p->cap)
		return 0;
	size_t ncap = p->cap ? p->cap * 2 : 16;
	while (ncap < n)
		ncap *= 2;
	struct bt_mapping *nm = realloc(p->maps, ncap * sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	p->maps = nm;
	p->cap = ncap;
	return 0;
}

/* First mapping whose end is above addr. */
static size_t first_above(const struct bt_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int unmap(struct bt_process *p, uint64_t start, uint64_t end)
{
	size_t i = first_above(p, start);
	while (i < p->nmaps && p->maps[i].start < end) {
		struct bt_mapping *m = &p->maps[i];
		if (m->start < start && m->end > end) {
			/* A hole in the middle: split in two. */
			if (reserve(p, p->nmaps + 1))
				return -ENOMEM;
			m = &p->maps[i];
			memmove(m + 1, m, (p->nmaps - i) * sizeof(*m));
			p->nmaps++;
			m[1].pgoff += end - m[1].start;
			m[1].start = end;
			m->end = start;
			return 0;
		}
		if (m->start < start) {
			m->end = start;
			i++;
		} else if (m->end > end) {
			m->pgoff += end - m->start;
			m->start = end;
			i++;
		} else {
			memmove(m, m + 1, (p->nmaps - i - 1) * sizeof(*m));
			p->nmaps--;
		}
	}
	return 0;
}

int bt_proctable_map(struct bt_proctable *t, int pid, const struct bt_mapping *m)
{
	if (m->end <= m->start)
		return -EINVAL;
	struct bt_process *p = bt_proctable_get(t, pid);
	if (!p)
		return -ENOMEM;
	int err = unmap(p, m->start, m->end);
	if (err)
		return err;
	if (reserve(p, p->nmaps + 1))
		return -ENOMEM;
	size_t i = first_above(p, m->start);
	memmove(&p->maps[i + 1], &p->maps[i], (p->nmaps - i) * sizeof(*m));
	p->maps[i] = *m;
	p->nmaps++;
	return 0;
}

int bt_proctable_unmap(struct bt_proctable *t, int pid, uint64_t start, uint64_t end)
{
	struct bt_process *p = bt_proctable_find(t, pid);
	if (!p || end <= start)
		return 0;
	return unmap(p, start, end);
}

const struct bt_mapping *bt_process_lookup(const struct bt_process *p, uint64_t addr)
{
	size_t i = first_above(p, addr);
	if (i < p->nmaps && p->maps[i].start <= addr)
		return &p->maps[i];
	return NULL;
}
