/* offstacks.h - the off-CPU stacks a session was given, by the key the kernel sums their time under:
 * each one's frames as locations that do not depend on any profile (a profile is remade every
 * interval, a stack key lives on), and what its time is labelled with. When the kernel forgets its
 * keys (an epoch ends), the stacks neither given nor used since the epoch before are dropped: a
 * thread blocked for long still finds the stack it blocked in. */
#ifndef BT_OFFSTACKS_H
#define BT_OFFSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "bt_proto.h"

/* A location as bt_profile_loc takes it. */
struct bt_offframe {
	uint64_t addr;
	uint32_t file_id;
	uint8_t kind;        /* enum bt_loc_kind */
	uint8_t is_caller;
};

struct bt_offstack {
	uint64_t key;
	struct bt_offframe *frames;  /* outermost first */
	uint32_t n;
	uint32_t pid;
	char comm[BT_COMM_LEN];      /* NUL-terminated */
	uint32_t exe_file;           /* a file id of the session's; BT_NAME_UNSET unknown */
	uint64_t cgroup_id;          /* the thread's cgroup (v2); 0 unknown */
	uint64_t time_ns;            /* when it was taken (the records' clock): the thread was comm in
				      * cgroup_id then */
	bool early;                  /* kernel frames only: the thread was off a CPU since before the
				      * session began (its user stack was not taken) */
	uint64_t epoch;              /* the last epoch it was given or used in */
};

struct bt_offstacks {
	struct bt_offstack *v;
	size_t n, cap;
	struct bt_htab index;        /* key -> index in v */
	uint64_t epoch;
};

void bt_offstacks_init(struct bt_offstacks *t);
void bt_offstacks_free(struct bt_offstacks *t);

/* Keeps stack st (its frames copied) under st->key, replacing what was there. 0 or -ENOMEM. */
int bt_offstacks_put(struct bt_offstacks *t, const struct bt_offstack *st);

/* The stack of key, marked used in this epoch, or NULL. */
const struct bt_offstack *bt_offstacks_get(struct bt_offstacks *t, uint64_t key);

/* The epoch ends: the stacks neither given nor used in it or the one before are dropped. Returns how
 * many were. */
size_t bt_offstacks_next_epoch(struct bt_offstacks *t);

#endif
