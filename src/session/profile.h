/* profile.h - aggregated samples: each distinct stack once, with its count (or, for off-CPU time, its
 * nanoseconds: each stack says what its count is). Frames are interned as
 * locations (a file version and offset, or a kernel address) when a sample arrives; names are given
 * to locations later, once each, by a resolver, so the hot path neither allocates per frame nor
 * symbolizes the same address twice. Names are plain: a location's kind says it is a kernel frame,
 * and only the writers that need a marker (folded text, the flame graph) spell one. */
#ifndef BT_PROFILE_H
#define BT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "base/htab.h"
#include "base/strtab.h"

enum bt_loc_kind {
	BT_LOC_USER = 0,     /* file_id + file offset */
	BT_LOC_KERNEL = 1,   /* kernel address */
	BT_LOC_UNMAPPED = 2, /* a user address outside any known mapping */
	BT_LOC_JIT = 3,      /* a user address outside any file mapping of a process that writes a
			      * perf map: file_id is its JIT table (see jitmap.h), addr the address */
	BT_LOC_PYTHON = 4,   /* a Python frame: file_id is a code object of the session's (pyproc.h),
			      * addr its instruction's byte offset; its one source line (qualified
			      * name, file, line) is given when it is made */
	BT_LOC_MARK = 5,     /* no frame: a mark where frames are missing, addr says which */
	BT_LOC_OFFCPU = 6,   /* no code: the leaf of an off-CPU stack naming the state the thread was
			      * in, or what stands for frames not taken; a location known by name */
};

/* What a stack's count counts. */
enum bt_value_kind {
	BT_VALUE_SAMPLES = 0,  /* CPU samples */
	BT_VALUE_OFFCPU = 1,   /* nanoseconds off a CPU */
};

/* What an output of a profile shows first (a one-value output: only): its CPU samples, its off-CPU
 * time, or both as time (wall clock: samples weighted by their period). */
enum bt_view {
	BT_VIEW_CPU = 0,
	BT_VIEW_OFFCPU = 1,
	BT_VIEW_WALL = 2,
};

/* The marks (a BT_LOC_MARK's addr) and their names. */
enum bt_mark {
	BT_MARK_TRUNCATED = 0,   /* "[truncated]": the stack was cut here, frames outer to it are missing */
};
#define BT_MARK_TRUNCATED_NAME "[truncated]"

#define BT_NAME_UNSET UINT32_MAX

struct bt_loc {
	uint64_t addr;       /* file offset (USER), kernel or raw user address otherwise */
	uint32_t file_id;
	uint8_t kind;
	uint8_t is_caller;   /* a return address: symbolize addr - 1 */
	uint8_t resolved;    /* name_id is final */
	uint8_t unresolved;  /* the name is a [file+0xoff] placeholder */
	uint32_t name_id;    /* in profile->names, BT_NAME_UNSET until resolved */
	uint32_t lines_first; /* its source lines: srclines[lines_first .. + nlines) */
	uint8_t nlines;
	uint8_t lines_tried; /* bt_profile_set_lines was called for it */
};

/* A source line of a location: innermost first, each outer one the call site of the function
 * inlined into the one before it. Strings are in profile->names; BT_NAME_UNSET when unknown. */
struct bt_srcline {
	uint32_t func_id;
	uint32_t file_id;
	uint32_t line;       /* 0: unknown */
};

/* The same with strings, as given to bt_profile_set_lines (NULL: unknown). */
struct bt_srcline_text {
	const char *function;
	const char *file;
	unsigned line;
};

struct bt_stack {
	uint32_t comm_id;
	uint32_t pid;
	uint32_t nframes;
	uint32_t first;      /* index into frames: outermost first */
	uint64_t count;      /* samples, or nanoseconds for an off-CPU stack */
	/* Kept apart only in a profile with labels (else 0 and BT_NAME_UNSET): */
	uint32_t tid;
	uint32_t exe_file;   /* the process's executable, a file id of the session; BT_NAME_UNSET unknown */
	uint32_t cgroup_id;  /* the cgroup's path in names; BT_NAME_UNSET unknown */
	/* Kept apart always: */
	uint32_t series_id;  /* its series' labels ("name=value,...") in names; BT_NAME_UNSET none */
	uint32_t kind;       /* enum bt_value_kind */
};

/* What a sample is aggregated under besides its frames. */
struct bt_sample_key {
	uint32_t comm_id, pid, tid;
	uint32_t exe_file;   /* BT_NAME_UNSET: unknown */
	uint32_t cgroup_id;  /* a string in names; BT_NAME_UNSET: unknown */
	uint32_t series_id;  /* from bt_profile_series; BT_NAME_UNSET: none */
	uint32_t kind;       /* enum bt_value_kind: what the count added counts */
};

struct bt_profile {
	struct bt_strtab names;     /* function names, comms, placeholders */
	struct bt_loc *locs;
	size_t nlocs, locs_cap;
	struct bt_htab loc_index;
	uint32_t *frames;
	size_t nframes, frames_cap;
	struct bt_stack *stacks;
	size_t nstacks, stacks_cap;
	struct bt_htab stack_index;
	struct bt_srcline *srclines;
	size_t nsrclines, srclines_cap;
	uint64_t total;             /* samples added */
	uint64_t offcpu_ns;         /* off-CPU nanoseconds added */
	bool per_pid;               /* distinct stacks per pid, not only per comm */
	bool labels;                /* distinct stacks per pid, tid, executable and cgroup (implies per_pid) */
	bool per_tid;               /* distinct stacks per thread (implies per_pid) */
	uint32_t last_stack;        /* the stack the last sample added was counted to */
	/* Series (the agent's targets, see bt_profile_series): */
	size_t series_max;          /* distinct series besides the "other" one; 0: no bound */
	uint32_t *series;           /* their labels in names, in the order first seen */
	size_t nseries, series_cap;
	struct bt_htab series_index;
	struct bt_htab folded_index;  /* labels folded into the other series */
	size_t series_folded;       /* distinct label sets folded */
	uint64_t series_folded_samples;
};

void bt_profile_init(struct bt_profile *p);
void bt_profile_free(struct bt_profile *p);

/* Interns a location; returns its id or -ENOMEM. */
int64_t bt_profile_loc(struct bt_profile *p, enum bt_loc_kind kind, uint32_t file_id, uint64_t addr,
		       bool is_caller);
/* A location known by its name only (a profile read from folded text, a trace's keys): its file_id
 * is BT_LOC_NAMED and addr the name's id in names; it is resolved from the start, and a "[...]"
 * placeholder is counted as unresolved. Returns its id, -ENOMEM. */
#define BT_LOC_NAMED UINT32_MAX
int64_t bt_profile_named_loc(struct bt_profile *p, enum bt_loc_kind kind, const char *name, size_t len);
/* Adds count samples of the stack loc_ids[0..n) (outermost first) for comm (interned) and pid. */
int bt_profile_add(struct bt_profile *p, uint32_t comm_id, uint32_t pid, const uint32_t *loc_ids,
		   size_t n, uint64_t count);
/* The same with everything a sample is labelled with (kept apart only as per_pid, per_tid and labels
 * say); last_stack then names the stack it was counted to. */
int bt_profile_add_key(struct bt_profile *p, const struct bt_sample_key *k, const uint32_t *loc_ids,
		       size_t n, uint64_t count);

/* The series id (in names) of a sample labelled text: text's own while the profile holds fewer
 * than series_max series or already holds that one, else other's (the labels beyond the bound fold
 * into one series, counted). -ENOMEM. */
int64_t bt_profile_series(struct bt_profile *p, const char *text, const char *other);

/* dst (initialized) receives the stacks of p whose series keep accepts (given its labels text; a
 * stack of no series is given NULL), with their locations, names and source lines, to be written
 * on its own. 0 or -ENOMEM. */
typedef bool (*bt_series_keep_fn)(void *ctx, const char *series);
int bt_profile_extract(const struct bt_profile *p, bt_series_keep_fn keep, void *ctx, struct bt_profile *dst);

/* Gives a name to every location that has none yet (or whose name was a placeholder and that asks
 * to be retried). resolve returns a name (copied here) and sets *final to whether it may change later
 * (false while a build-id is still pending); *unresolved marks [file+0xoff] placeholders. */
typedef const char *(*bt_resolve_fn)(void *ctx, const struct bt_loc *loc, bool *final,
				     bool *unresolved);
int bt_profile_resolve(struct bt_profile *p, bt_resolve_fn fn, void *ctx);

/* Gives location loc_id its source lines (n may be 0: none known), interning the strings; a
 * location keeps the lines it was first given. 0, -EINVAL or -ENOMEM. */
int bt_profile_set_lines(struct bt_profile *p, uint32_t loc_id, const struct bt_srcline_text *t, size_t n);

static inline const char *bt_profile_loc_name(const struct bt_profile *p, uint32_t loc_id)
{
	return bt_strtab_get(&p->names, p->locs[loc_id].name_id);
}

/* Frames whose location could not be named, counted over all samples. */
uint64_t bt_profile_unresolved_frames(const struct bt_profile *p);
/* Off-CPU nanoseconds in stacks with a frame that could not be named. */
uint64_t bt_profile_unresolved_ns(const struct bt_profile *p);

struct bt_top_entry {
	uint32_t name_id;
	bool kernel;         /* a kernel function: a user one of the same name is another entry */
	uint64_t self, total;
};
/* The n functions with the most self samples (ties by total, then user before kernel); returns how
 * many were written. Off-CPU stacks are left out. */
size_t bt_profile_top(const struct bt_profile *p, struct bt_top_entry *out, size_t n);

#endif
