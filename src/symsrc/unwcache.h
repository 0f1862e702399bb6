/* unwcache.h - compiled unwind tables kept across sessions: each beside its binary's entry in the
 * build-id cache (symsrc/bidcache.h, the file "unwtable"), loaded instead of compiled when the
 * build-id matches, and refused when it fails any check or could have been written by another
 * user, so that it is compiled and stored again. */
#ifndef BT_UNWCACHE_H
#define BT_UNWCACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/ehtable.h"
#include "elf/elffile.h"
#include "symsrc/bidcache.h"

struct bt_unwcache {
	char dir[PATH_MAX];                 /* the build-id cache */
	bool store;                         /* tables compiled are stored */
	struct bt_bidcache_budget budget;   /* what stores may add */
};

/* dir: the build-id cache (NULL: the default, ~/.debug). 0 or -errno. */
int bt_unwcache_init(struct bt_unwcache *c, const char *dir, bool store);

/* The stored table of build-id bid. 0, -ENOENT (none stored), -EBADMSG (refused: corrupt, of
 * another build-id, or a file another user could have changed), -ENOMEM or -errno. */
int bt_unwcache_load(struct bt_unwcache *c, const uint8_t *bid, size_t len, struct bt_ehtable *t,
		     struct bt_elf_layout *lay);

/* Stores the table of build-id bid (path: the binary's, naming the entry when it has none). 0,
 * -EPERM when c does not store, or -errno. */
int bt_unwcache_save(struct bt_unwcache *c, const uint8_t *bid, size_t len, const char *path,
		     const struct bt_ehtable *t, const struct bt_elf_layout *lay);

#endif
