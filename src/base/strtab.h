/* strtab.h - interned strings: each distinct string stored once, named by a small integer id. */
#ifndef BT_STRTAB_H
#define BT_STRTAB_H

#include <stddef.h>
#include <stdint.h>
#include "base/htab.h"

struct bt_strtab {
	char *arena;
	size_t len, cap;
	uint32_t *offs;   /* id -> offset in arena */
	size_t count, offs_cap;
	struct bt_htab index;
};

void bt_strtab_init(struct bt_strtab *t);
void bt_strtab_free(struct bt_strtab *t);
/* The id of s (n bytes, need not be NUL-terminated), adding it if new; -ENOMEM on failure. */
int64_t bt_strtab_intern(struct bt_strtab *t, const char *s, size_t n);
static inline int64_t bt_strtab_add(struct bt_strtab *t, const char *s);
const char *bt_strtab_get(const struct bt_strtab *t, uint32_t id);
size_t bt_strtab_count(const struct bt_strtab *t);

#include <string.h>
static inline int64_t bt_strtab_add(struct bt_strtab *t, const char *s)
{
	return bt_strtab_intern(t, s, strlen(s));
}

#endif
