/* htab.h - an open-addressing hash table of 64-bit values (indices or pointers) with caller-supplied
 * hashes and equality, the one associative container buildtrace's hot paths use. */
#ifndef BT_HTAB_H
#define BT_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_htab_slot {
	uint64_t val;
	uint32_t hash;
	uint32_t used;
};

struct bt_htab {
	struct bt_htab_slot *slots;
	size_t cap;   /* a power of two, or 0 */
	size_t count;
};

/* True when the stored value val is the entry searched for as key. */
typedef bool (*bt_htab_eq_fn)(void *ctx, uint64_t val, const void *key);

void bt_htab_init(struct bt_htab *h);
void bt_htab_free(struct bt_htab *h);
/* The stored value's slot, or NULL. */
uint64_t *bt_htab_find(const struct bt_htab *h, uint32_t hash, bt_htab_eq_fn eq, void *ctx,
		       const void *key);
/* Adds val (no duplicate check); 0 or -ENOMEM. */
int bt_htab_insert(struct bt_htab *h, uint32_t hash, uint64_t val);
/* Removes the entry eq matches; 0 or -ENOENT. */
int bt_htab_remove(struct bt_htab *h, uint32_t hash, bt_htab_eq_fn eq, void *ctx, const void *key);

/* Hashes for keys made of bytes or integers. */
uint32_t bt_hash_bytes(const void *p, size_t n, uint64_t seed);
static inline uint32_t bt_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

#endif
