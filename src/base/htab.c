/* htab.c - linear probing with backward-shift deletion, so no tombstones accumulate. */
#include "base/htab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void bt_htab_init(struct bt_htab *h)
{
	memset(h, 0, sizeof(*h));
}

void bt_htab_free(struct bt_htab *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

uint64_t *bt_htab_find(const struct bt_htab *h, uint32_t hash, bt_htab_eq_fn eq, void *ctx,
		       const void *key)
{
	if (!h->cap)
		return NULL;
	size_t mask = h->cap - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		struct bt_htab_slot *s = &h->slots[i];
		if (!s->used)
			return NULL;
		if (s->hash == hash && eq(ctx, s->val, key))
			return &s->val;
	}
}

static void place(struct bt_htab_slot *slots, size_t mask, uint32_t hash, uint64_t val)
{
	size_t i = hash & mask;
	while (slots[i].used)
		i = (i + 1) & mask;
	slots[i] = (struct bt_htab_slot){ .val = val, .hash = hash, .used = 1 };
}

static int grow(struct bt_htab *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 64;
	struct bt_htab_slot *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slots[i].used)
			place(ns, ncap - 1, h->slots[i].hash, h->slots[i].val);
	free(h->slots);
	h->slots = ns;
	h->cap = ncap;
	return 0;
}

int bt_htab_insert(struct bt_htab *h, uint32_t hash, uint64_t val)
{
	if ((h->count + 1) * 2 > h->cap) {
		int err = grow(h);
		if (err)
			return err;
	}
	place(h->slots, h->cap - 1, hash, val);
	h->count++;
	return 0;
}

int bt_htab_remove(struct bt_htab *h, uint32_t hash, bt_htab_eq_fn eq, void *ctx, const void *key)
{
	uint64_t *v = bt_htab_find(h, hash, eq, ctx, key);
	if (!v)
		return -ENOENT;
	size_t mask = h->cap - 1;
	size_t hole = (size_t)((struct bt_htab_slot *)v - h->slots);
	h->slots[hole].used = 0;
	/* Shift later members of the probe run back so lookups never stop early at the hole. */
	for (size_t i = (hole + 1) & mask; h->slots[i].used; i = (i + 1) & mask) {
		size_t home = h->slots[i].hash & mask;
		bool movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
		if (movable) {
			h->slots[hole] = h->slots[i];
			h->slots[i].used = 0;
			hole = i;
		}
	}
	h->count--;
	return 0;
}

uint32_t bt_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	/* FNV-1a over the bytes, finished with a 64-bit mix. */
	const unsigned char *b = p;
	uint64_t x = 0xcbf29ce484222325ULL ^ seed;
	for (size_t i = 0; i < n; i++) {
		x ^= b[i];
		x *= 0x100000001b3ULL;
	}
	return bt_hash_u64(x);
}
