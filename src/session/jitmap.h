/* jitmap.h - names of the code JIT compilers make in the session's processes, from the perf maps
 * they write (/tmp/perf-NSPID.map inside the process's own root, NSPID its pid in its own pid
 * namespace) and the jitdump files they map (jit-N.dump, found in the process's mappings, as perf
 * finds them). Each process incarnation (up to its exec or exit) has tables of its own. */
#ifndef BT_JITMAP_H
#define BT_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/htab.h"
#include "symsrc/jitdump.h"
#include "symsrc/perfmap.h"

/* A process's perf map is looked for, and read again for the lines appended to it, at most this
 * often: a miss costs at most one read per second per process. */
#define BT_JITMAP_REREAD_NS 1000000000ULL

/* A process's map, and its jitdump, may each take at most this share (1/N) of the budget all maps
 * share. */
#define BT_JITMAP_SHARES 4

struct bt_jitproc {
	int pid;              /* as the host sees it */
	int nspid;            /* in its own pid namespace: the name of its map */
	int fd;               /* the open map, -1 when none or gone */
	int dump_fd;          /* the open jitdump, -1 when none or gone */
	bool has_map;         /* a map or a jitdump found: its id may be in locations, never reused */
	bool gone;            /* exec'ed or exited: its map describes no live address space */
	uint64_t checked_ns;  /* when the map was last looked for or read */
	uint32_t looks;       /* times looked for in vain: each waits twice as long, up to 64 s */
	uint64_t gone_ns;
	struct bt_perfmap map;
	struct bt_jitdump dump;
	struct bt_perfmap dump_map;  /* what the jitdump's records name */
};

struct bt_jitmaps {
	const char *proc_root;   /* "" for the real /proc */
	struct bt_jitproc *procs;
	size_t n, cap;
	struct bt_htab index;    /* pid -> index of its live entry */
	uint32_t *free_ids;      /* entries of processes gone without a map, for reuse */
	size_t nfree, free_cap;
	uint64_t reads;          /* reads of perf maps */
	uint64_t refused;        /* maps not opened: not a regular file, or owned by another user */
	struct bt_membudget *budget;  /* what every process's map and jitdump together may hold; NULL: none */
};

void bt_jitmaps_init(struct bt_jitmaps *j, const char *proc_root);
void bt_jitmaps_free(struct bt_jitmaps *j);

/* The id of pid's JIT code tables, when the process writes a perf map or maps a jitdump (both
 * looked for again while it has neither, after 1, 2, 4 ... and then every 64 seconds, as its
 * maps are read to find a jitdump); -ENOENT when it has none,
 * -ENOMEM. A map is opened only when it is a regular file inside the process's root, a jitdump
 * through the process's own mapping of it (/proc/PID/map_files), and either only when it is owned
 * by the process's user or root. */
int64_t bt_jitmaps_proc(struct bt_jitmaps *j, int pid, uint64_t now_ns);

/* The name of the code at addr in table id, as the jitdump's record or the map's line gives it, and
 * in *off (may be NULL) how far addr is into that code. On
 * a miss, what was appended since the last read is read first (at most once per
 * BT_JITMAP_REREAD_NS). NULL when none holds addr; then *final says whether that is for good (the
 * process is gone). */
const char *bt_jitmaps_name(struct bt_jitmaps *j, uint32_t id, uint64_t addr, uint64_t now_ns,
			    bool *final, uint64_t *off);

/* Where the name of addr in table id came from, as bt_jitmaps_name last read the tables:
 * "jitdump", "perf-map", or NULL. */
const char *bt_jitmaps_source(const struct bt_jitmaps *j, uint32_t id, uint64_t addr);

/* The host pid of table id, or 0. */
int bt_jitmaps_pid(const struct bt_jitmaps *j, uint32_t id);

/* pid exec'ed or exited: its files are read a last time (a runtime that buffers its writes flushes
 * them as it exits) and then no more, and its later samples get new tables. */
void bt_jitmaps_gone(struct bt_jitmaps *j, int pid, uint64_t now_ns);

/* Frees the tables of processes gone more than grace_ns before now_ns (their ids stay valid and
 * name nothing). */
void bt_jitmaps_reap(struct bt_jitmaps *j, uint64_t now_ns, uint64_t grace_ns);

#endif
