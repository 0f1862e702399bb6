/* strtab.c - strings live NUL-terminated in one growing arena, indexed by a hash of their bytes. */
#include "base/strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void bt_strtab_init(struct bt_strtab *t)
{
	memset(t, 0, sizeof(*t));
	bt_htab_init(&t->index);
}

void bt_strtab_free(struct bt_strtab *t)
{
	free(t->arena);
	free(t->offs);
	bt_htab_free(&t->index);
	memset(t, 0, sizeof(*t));
}

struct key {
	const char *s;
	size_t n;
};

static bool eq(void *ctx, uint64_t val, const void *k)
{
	const struct bt_strtab *t = ctx;
	const struct key *key = k;
	const char *s = t->arena + t->offs[val];
	return strncmp(s, key->s, key->n) == 0 && s[key->n] == '\0';
}

int64_t bt_strtab_intern(struct bt_strtab *t, const char *s, size_t n)
{
	struct key key = { s, n };
	uint32_t h = bt_hash_bytes(s, n, 0);
	uint64_t *v = bt_htab_find(&t->index, h, eq, t, &key);
	if (v)
		return (int64_t)*v;
	if (t->len + n + 1 > t->cap) {
		size_t ncap = t->cap ? t->cap : 4096;
		while (ncap < t->len + n + 1)
			ncap *= 2;
		char *na = realloc(t->arena, ncap);
		if (!na)
			return -ENOMEM;
		t->arena = na;
		t->cap = ncap;
	}
	if (t->count == t->offs_cap) {
		size_t ncap = t->offs_cap ? t->offs_cap * 2 : 256;
		uint32_t *no = realloc(t->offs, ncap * sizeof(*no));
		if (!no)
			return -ENOMEM;
		t->offs = no;
		t->offs_cap = ncap;
	}
	if (t->len + n + 1 > UINT32_MAX)
		return -ENOMEM;
	memcpy(t->arena + t->len, s, n);
	t->arena[t->len + n] = '\0';
	t->offs[t->count] = (uint32_t)t->len;
	if (bt_htab_insert(&t->index, h, t->count))
		return -ENOMEM;
	t->len += n + 1;
	return (int64_t)t->count++;
}

const char *bt_strtab_get(const struct bt_strtab *t, uint32_t id)
{
	return id < t->count ? t->arena + t->offs[id] : NULL;
}

size_t bt_strtab_count(const struct bt_strtab *t)
{
	return t->count;
}
