/* offstacks.c - see offstacks.h. Stacks live in one array, found through a hash of their keys; a
 * dropped one is replaced by the last, whose index entry moves with it. */
#include "session/offstacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

void bt_offstacks_init(struct bt_offstacks *t)
{
	memset(t, 0, sizeof(*t));
	bt_htab_init(&t->index);
}

void bt_offstacks_free(struct bt_offstacks *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].frames);
	free(t->v);
	bt_htab_free(&t->index);
	memset(t, 0, sizeof(*t));
}

static bool key_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_offstacks *t = ctx;
	return t->v[val].key == *(const uint64_t *)key;
}

static uint64_t *find(struct bt_offstacks *t, uint64_t key)
{
	return bt_htab_find(&t->index, bt_hash_u64(key), key_eq, t, &key);
}

int bt_offstacks_put(struct bt_offstacks *t, const struct bt_offstack *st)
{
	struct bt_offframe *frames = NULL;
	if (st->n) {
		frames = malloc(st->n * sizeof(*frames));
		if (!frames)
			return -ENOMEM;
		memcpy(frames, st->frames, st->n * sizeof(*frames));
	}
	uint64_t *v = find(t, st->key);
	struct bt_offstack *dst;
	if (v) {
		dst = &t->v[*v];
		free(dst->frames);
	} else {
		if (bt_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64) ||
		    bt_htab_insert(&t->index, bt_hash_u64(st->key), t->n)) {
			free(frames);
			return -ENOMEM;
		}
		dst = &t->v[t->n++];
	}
	*dst = *st;
	dst->frames = frames;
	dst->comm[BT_COMM_LEN - 1] = '\0';
	dst->epoch = t->epoch;
	return 0;
}

const struct bt_offstack *bt_offstacks_get(struct bt_offstacks *t, uint64_t key)
{
	uint64_t *v = find(t, key);
	if (!v)
		return NULL;
	t->v[*v].epoch = t->epoch;
	return &t->v[*v];
}

size_t bt_offstacks_next_epoch(struct bt_offstacks *t)
{
	size_t dropped = 0;
	for (size_t i = 0; i < t->n;) {
		struct bt_offstack *st = &t->v[i];
		if (st->epoch + 1 >= t->epoch) {
			i++;
			continue;
		}
		uint64_t key = st->key;
		bt_htab_remove(&t->index, bt_hash_u64(key), key_eq, t, &key);
		free(st->frames);
		size_t last = t->n - 1;
		if (i != last) {
			uint64_t moved = t->v[last].key;
			bt_htab_remove(&t->index, bt_hash_u64(moved), key_eq, t, &moved);
			t->v[i] = t->v[last];
			bt_htab_insert(&t->index, bt_hash_u64(moved), i);
		}
		t->n--;
		dropped++;
	}
	t->epoch++;
	return dropped;
}
