/* kmods.h - the kernel modules a session has seen: each loaded version with a stable id (name, base,
 * size, build-id), the live ones found by address, and a version's function symbols read from its
 * .ko file (compressed or not) when that file carries the same build-id. */
#ifndef BT_KMODS_H
#define BT_KMODS_H

#include <stddef.h>
#include <stdint.h>
#include "kernel/kident.h"

struct bt_kmod_syms;

struct bt_kmod_ver {
	struct bt_kmodule mod;
	int live;                    /* not replaced by a later load at its name or addresses */
	int ko_state;                /* 0: .ko not tried yet; 1: loaded; -errno: none usable */
	struct bt_kmod_syms *syms;   /* from the .ko file, once loaded */
	char ko_path[512];           /* the file the symbols came from, or the one refused */
};

struct bt_kmods {
	struct bt_kmod_ver *v;       /* every version seen, by id; never removed */
	size_t n, cap;
	uint32_t *live;              /* ids of live versions with addresses, sorted by base */
	size_t nlive;
	char root[256];              /* "" for this machine (see kident.h) */
	char release[128];           /* the running kernel's, for finding .ko files; "" unknown */
	uint64_t ko_loaded, ko_refused;  /* .ko files used, and found with another build-id */
};

/* Starts with the modules loaded now (ROOT/proc/modules and ROOT/sys/module/NAME/notes). A kernel
 * without modules or with hidden addresses gives an empty table and returns 0; -errno otherwise
 * (the table is usable all the same). */
int bt_kmods_init(struct bt_kmods *k, const char *root);
void bt_kmods_free(struct bt_kmods *k);

/* A module loaded now (as the module-load event reports it): a new version; live versions of the
 * same name or overlapping its addresses are not live any more. Returns its id or -errno. */
int64_t bt_kmods_add(struct bt_kmods *k, const struct bt_kmodule *m);

/* The id of the live version whose [base, base + size) holds addr, or -ENOENT. */
int64_t bt_kmods_at(const struct bt_kmods *k, uint64_t addr);

static inline const struct bt_kmod_ver *bt_kmods_get(const struct bt_kmods *k, uint32_t id)
{
	return id < k->n ? &k->v[id] : NULL;
}

/* The function of version id at addr from its .ko file, loaded on first use (found under
 * ROOT/usr/lib/debug/lib/modules/REL and ROOT/lib/modules/REL, used only with the version's
 * build-id; symbol addresses are the loaded sections' from ROOT/sys/module/NAME/sections/). NULL
 * when there is no such file or no symbol; *off is addr's offset in the function. */
const char *bt_kmods_symbolize(struct bt_kmods *k, uint32_t id, uint64_t addr, uint64_t *off);

#endif
