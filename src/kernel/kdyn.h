/* kdyn.h - kernel code that comes and goes during a session (BPF programs, their trampolines and
 * dispatchers), named as the kernel announces it: address ranges to names. Code that went away
 * keeps its name until other code is placed over it, so that frames sampled before the unload
 * still read as what ran there. */
#ifndef BT_KDYN_H
#define BT_KDYN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_kdyn_sym {
	uint64_t addr, end;
	char *name;
	bool gone;
};

struct bt_kdyn {
	struct bt_kdyn_sym *v;  /* sorted by addr, not overlapping */
	size_t n, cap;
	bool announced;         /* announcements arrive: kallsyms' names of such code are final */
	uint64_t added, removed;
};

void bt_kdyn_init(struct bt_kdyn *t);
void bt_kdyn_free(struct bt_kdyn *t);

/* New code at [addr, addr + len) named name: replaces what it overlaps. 0, -EINVAL or -ENOMEM. */
int bt_kdyn_add(struct bt_kdyn *t, uint64_t addr, uint64_t len, const char *name);
/* The code at addr went away: its name stays until something is added over it. */
void bt_kdyn_remove(struct bt_kdyn *t, uint64_t addr);

/* The name of the code holding addr and addr's offset in it; NULL when none does. */
const char *bt_kdyn_lookup(const struct bt_kdyn *t, uint64_t addr, uint64_t *off);

#endif
