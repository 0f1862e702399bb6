/* topview.h - the live view's table: the functions of a session's profile so far, with their self
 * and total shares of its samples (and of its off-CPU time, when it counts that) and the library
 * each is in, kept to one side (kernel or user) or to names matching a filter, sorted, optionally
 * grouped by process, and laid out as lines of a given width. No terminal here: liveview.c draws
 * the lines and reads the keys. */
#ifndef BT_TOPVIEW_H
#define BT_TOPVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/htab.h"
#include "session/session.h"

enum bt_top_sort { BT_TOP_BY_SELF, BT_TOP_BY_TOTAL, BT_TOP_BY_NAME, BT_TOP_BY_LIBRARY, BT_TOP_BY_OFFCPU,
		   BT_TOP_NSORTS };
enum bt_top_side { BT_TOP_BOTH, BT_TOP_KERNEL, BT_TOP_USER };
/* Where a function is: a file (shown by its name), a kernel module ("[name]"), the kernel itself
 * ("[kernel]"), code generated at run time ("[jit]": anonymous executable memory, BPF programs), or
 * an address no mapping covers ("[unknown]"). */
enum bt_top_lib { BT_TOP_LIB_FILE, BT_TOP_LIB_MODULE, BT_TOP_LIB_KERNEL, BT_TOP_LIB_JIT, BT_TOP_LIB_UNKNOWN,
		  BT_TOP_LIB_OFFCPU /* a state of an off-CPU stack, or what stands for its frames */ };

struct bt_top_opts {
	enum bt_top_sort sort;
	enum bt_top_side side;
	bool per_process;     /* group the functions under the process (comm, or pid with --per-pid) */
	const char *filter;   /* keep functions whose name holds this, ignoring case; NULL or "": all */
	bool offcpu;          /* a column of the off-CPU time too (the session counts it) */
};

struct bt_top_row {
	bool process;         /* a process's heading (per_process): name_id is its comm */
	uint32_t name_id;     /* the function (or comm), in the profile's names */
	uint32_t pid;         /* with --per-pid; else 0 */
	uint32_t proc;        /* the process group key the row belongs to */
	uint8_t lib_kind;     /* enum bt_top_lib */
	const char *lib_name; /* the file's base name, or the module's name */
	bool kernel;
	uint64_t self, total; /* samples with it innermost, and with it anywhere in the stack */
	uint64_t off;         /* off-CPU nanoseconds with it anywhere in the stack */
	uint64_t group_total; /* per_process: its process's samples (off-CPU time when sorted by it),
			       * the first sort key */
	size_t last;          /* the stack that last counted it, + 1 (counts a recursion once) */
};

struct bt_top_table {
	struct bt_top_row *rows;
	size_t n, cap;
	struct bt_htab index;
	uint64_t samples;     /* the profile's samples: what the shares are of */
	uint64_t offcpu_ns;   /* and its off-CPU time, for the off-CPU column */
	bool offcpu;          /* the table has the column */
	size_t nfuncs;        /* function rows, not counting process headings */
};

/* The table for s's profile as it is named now. 0 or -ENOMEM (the table then is empty). */
int bt_top_build(const struct bt_session *s, const struct bt_top_opts *o, struct bt_top_table *t);
void bt_top_free(struct bt_top_table *t);

/* "self", "total", "name", "library", "off-cpu"; and the next sort in the cycle (by off-CPU time
only when the table has that column). */
const char *bt_top_sort_name(enum bt_top_sort s);
enum bt_top_sort bt_top_sort_next(enum bt_top_sort s, bool offcpu);

/* Row r's library as the view shows it, in buf (len bytes). */
const char *bt_top_library(const struct bt_top_row *r, char *buf, size_t len);

/* The column headings (with the off-CPU column when offcpu), then row i of t, each as exactly width
 * columns (width > 0; buf holds width + 1 bytes): shares, function (kernel ones as folded text marks
 * them) and library, names cut with ".." where they do not fit. */
void bt_top_heading(size_t width, bool offcpu, char *buf);
void bt_top_format(const struct bt_session *s, const struct bt_top_table *t, size_t i, size_t width,
		   char *buf);

#endif
