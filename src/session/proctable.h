/* proctable.h - the processes of a session and their executable file mappings, kept in the order the
 * kernel reported exec, fork, mmap, munmap and exit, so each sample is read against the address space
 * it was taken in. */
#ifndef BT_PROCTABLE_H
#define BT_PROCTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/htab.h"

struct bt_mapping {
	uint64_t start, end, pgoff;
	uint32_t file_id;   /* in the session's dso registry */
};

struct bt_process {
	int pid;
	uint32_t comm_id;
	bool dead;
	uint64_t dead_ns;        /* when the exit record arrived */
	struct bt_mapping *maps; /* sorted by start, non-overlapping */
	size_t nmaps, cap;
	bool vdso_known;         /* its [vdso] was looked for */
	uint64_t vdso_start, vdso_end;  /* where it is, when found (else 0, 0) */
	uint32_t vdso_file;      /* its file in the session's dso registry */
	uint64_t cgroup_id;      /* the cgroup it last ran in, as its last sample said (0: none yet) */
};

struct bt_proctable {
	struct bt_htab index;    /* pid -> struct bt_process * */
	size_t nprocs;           /* live and dead-but-kept */
	uint64_t seen;           /* processes ever created */
};

void bt_proctable_init(struct bt_proctable *t);
void bt_proctable_free(struct bt_proctable *t);

struct bt_process *bt_proctable_find(const struct bt_proctable *t, int pid);
/* The process, created when absent. A process marked dead is replaced by a fresh one: a pid reused
 * after exit never inherits the old mappings. NULL on ENOMEM. */
struct bt_process *bt_proctable_get(struct bt_proctable *t, int pid);

/* exec: a fresh address space. */
int bt_proctable_exec(struct bt_proctable *t, int pid, uint32_t comm_id);
/* fork: the child starts with a copy of the parent's mappings. */
int bt_proctable_fork(struct bt_proctable *t, int parent, int child, uint32_t comm_id);
/* exit: kept (so samples already in flight still symbolize) until reaped. */
void bt_proctable_exit(struct bt_proctable *t, int pid, uint64_t now_ns);
/* Removes processes that exited more than grace_ns before now_ns; returns how many. */
size_t bt_proctable_reap(struct bt_proctable *t, uint64_t now_ns, uint64_t grace_ns);

/* Adds a mapping, replacing whatever it overlaps (as mmap does). 0 or -errno. */
int bt_proctable_map(struct bt_proctable *t, int pid, const struct bt_mapping *m);
/* Removes [start, end), splitting mappings that straddle it. 0 or -errno. */
int bt_proctable_unmap(struct bt_proctable *t, int pid, uint64_t start, uint64_t end);

/* The mapping containing addr, or NULL. */
const struct bt_mapping *bt_process_lookup(const struct bt_process *p, uint64_t addr);

#endif
