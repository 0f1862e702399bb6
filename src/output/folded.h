/* folded.h - folded text, the stack format of flamegraph.pl, speedscope and Pyroscope: the writer
 * from a profile (the one place a kernel frame's name gets its "_[k]" suffix), the reader back into
 * a profile (the one place the suffix is taken as a kernel frame), and the lines between them. */
#ifndef BT_FOLDED_H
#define BT_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "session/profile.h"

/* Folded text marks a kernel frame by this suffix on its name, as perf's stackcollapse and
 * flamegraph.pl do. */
#define BT_FOLDED_KERNEL_SUFFIX "_[k]"
#define BT_FOLDED_KERNEL_SUFFIX_LEN 4
/* Whether the folded frame name[0..len) is a kernel frame's: the suffix after a name of its own. */
bool bt_folded_is_kernel(const char *name, size_t len);

/* Stacks as folded lines: "comm;outer;...;inner" with their counts, identical name sequences
 * merged, sorted frame by frame (lines sharing leading frames are adjacent); kernel frames that have
 * a name carry BT_FOLDED_KERNEL_SUFFIX, Python frames their file's base name and line: "name
 * (file.py:12)". ';' and newlines inside names are replaced by ':'. A profile
 * kept per process begins each line with "comm-PID" instead, as stackcollapse-perf --pid does. */
struct bt_folded_line {
	char *text;
	uint64_t count;
};
struct bt_folded {
	struct bt_folded_line *v;
	size_t n, cap;
	uint64_t total;
	bool per_pid;        /* every line begins with comm-PID */
	bool per_tid;        /* every line begins with comm-PID/TID (and per_pid is set) */
};
/* The first element of a folded line read as "comm-PID": the comm's length and the pid. false when
 * it does not end with '-' and a pid after a comm of its own. */
bool bt_folded_comm_pid(const char *text, size_t *comm_len, uint32_t *pid);
/* The same for "comm-PID/TID" (--per-thread): false when the first element is not of that form. */
bool bt_folded_comm_tid(const char *text, size_t *comm_len, uint32_t *pid, uint32_t *tid);
/* The lines of profile p: its CPU samples. 0 or -ENOMEM. */
int bt_folded_from_profile(const struct bt_profile *p, struct bt_folded *out);
/* The same, and line_of[i] (p->nstacks entries) the index in out->v of the line of stack i
 * (UINT32_MAX for a stack of off-CPU time, which has none). */
int bt_folded_from_profile_map(const struct bt_profile *p, struct bt_folded *out, uint32_t *line_of);
/* Lines of time instead: the off-CPU stacks' nanoseconds and, with wall, the CPU stacks' samples
 * times period_ns (each thread's total then is its wall time), counted in units of unit_ns (1000:
 * microseconds), rounded; a line of less than half a unit is left out. */
struct bt_fold_time {
	bool wall;
	uint64_t period_ns;
	uint64_t unit_ns;
};
int bt_folded_time_from_profile(const struct bt_profile *p, const struct bt_fold_time *t, struct bt_folded *out);
/* Reads folded text ("stack count" per line, escaped as bt_folded_write writes it: bt_unesc undoes
 * it); -EINVAL with *bad_line set on a malformed line. The lines are taken as per process (per_pid)
 * when every one begins with comm-PID, and per thread (per_tid) when every one begins with
 * comm-PID/TID. */
int bt_folded_parse(FILE *in, struct bt_folded *out, size_t *bad_line);
/* The lines as a profile (p initialised by the caller): each frame a location known by its name
 * (bt_profile_named_loc), a kernel frame's (BT_FOLDED_KERNEL_SUFFIX) of kind BT_LOC_KERNEL without
 * the suffix, a "[...]" placeholder's unresolved; kept per process (or thread) when the lines are. 0 or -ENOMEM. */
int bt_folded_to_profile(const struct bt_folded *f, struct bt_profile *p);
void bt_folded_free(struct bt_folded *f);
/* Writes "text count\n" lines, the text escaped (base/esc.h: control characters and bytes that are
 * not UTF-8 as \xHH, a backslash as \\). 0 or -errno (a write error). */
int bt_folded_write(const struct bt_folded *f, FILE *out);

/* bt_folded_from_profile + bt_folded_write. */
int bt_profile_write_folded(const struct bt_profile *p, FILE *out);

#endif
