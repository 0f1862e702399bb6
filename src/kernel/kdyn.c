/* kdyn.c - a sorted array of ranges; additions replace what they overlap. Code that went away is
 * dropped once many such entries have piled up (a machine loading and unloading programs all day
 * does not make it grow without bound). */
#include "kernel/kdyn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GONE_MAX 4096

void bt_kdyn_init(struct bt_kdyn *t)
{
	memset(t, 0, sizeof(*t));
}

void bt_kdyn_free(struct bt_kdyn *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* The first entry whose end lies above addr. */
static size_t first_ending_above(const struct bt_kdyn *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void drop(struct bt_kdyn *t, size_t i, size_t n)
{
	if (n == 0)
		return;
	for (size_t k = i; k < i + n; k++)
		free(t->v[k].name);
	memmove(&t->v[i], &t->v[i + n], (t->n - i - n) * sizeof(*t->v));
	t->n -= n;
}

static void drop_gone(struct bt_kdyn *t)
{
	size_t gone = 0;
	for (size_t i = 0; i < t->n; i++)
		gone += t->v[i].gone;
	if (gone < GONE_MAX)
		return;
	size_t w = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].gone)
			free(t->v[i].name);
		else
			t->v[w++] = t->v[i];
	}
	t->n = w;
}

int bt_kdyn_add(struct bt_kdyn *t, uint64_t addr, uint64_t len, const char *name)
{
	if (!len || addr + len < addr || !name)
		return -EINVAL;
	t->announced = true;
	drop_gone(t);
	uint64_t end = addr + len;
	size_t i = first_ending_above(t, addr), j = i;
	while (j < t->n && t->v[j].addr < end)
		j++;
	drop(t, i, j - i);
	if (t->n == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 64;
		struct bt_kdyn_sym *nv = realloc(t->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = ncap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
	t->v[i] = (struct bt_kdyn_sym){ .addr = addr, .end = end, .name = copy };
	t->n++;
	t->added++;
	return 0;
}

void bt_kdyn_remove(struct bt_kdyn *t, uint64_t addr)
{
	t->announced = true;
	size_t i = first_ending_above(t, addr);
	if (i < t->n && t->v[i].addr == addr && !t->v[i].gone) {
		t->v[i].gone = true;
		t->removed++;
	}
}

const char *bt_kdyn_lookup(const struct bt_kdyn *t, uint64_t addr, uint64_t *off)
{
	size_t i = first_ending_above(t, addr);
	if (i == t->n || t->v[i].addr > addr)
		return NULL;
	if (off)
		*off = addr - t->v[i].addr;
	return t->v[i].name;
}
