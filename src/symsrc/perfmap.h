/* perfmap.h - the perf map convention of JIT compilers (/tmp/perf-PID.map: "START SIZE NAME" lines,
 * START and SIZE in hex, appended to as code is compiled), parsed from a buffer or an fd into a
 * table sorted by address. Knows nothing of processes: the session finds the file. */
#ifndef BT_PERFMAP_H
#define BT_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/membudget.h"

/* Bounds on what one map may hold: bytes read, lines taken, and the length of one line (a longer
 * line is skipped as garbage). A map that reaches a bound stops growing and says so (truncated). */
#define BT_PERFMAP_MAX_BYTES (128ULL << 20)
#define BT_PERFMAP_MAX_LINES (4u << 20)
#define BT_PERFMAP_LINE_MAX 4096
/* What a line costs a budget besides its name (twice: the names grow by doubling): its entry in
 * the file-order and the sorted tables (each grown by doubling), the sort's scratch, a jitdump's
 * index of it. */
#define BT_PERFMAP_LINE_COST 160

struct bt_perfmap_entry {
	uint64_t start, end;   /* [start, end) */
	uint32_t name_off;     /* into names */
	uint32_t seq;          /* order in the file: a later line describes newer code */
};

struct bt_perfmap {
	struct bt_perfmap_entry *raw;   /* every line taken, in file order */
	size_t nraw, raw_cap;
	struct bt_perfmap_entry *sorted; /* the lookup table: sorted, non-overlapping */
	size_t nsorted;
	bool dirty;                      /* raw has lines sorted does not */
	char *names;
	size_t names_len, names_cap;
	uint64_t bytes;                  /* bytes consumed (complete lines) */
	uint64_t lines;                  /* lines seen, garbage included */
	uint64_t bad_lines;              /* garbage lines skipped */
	bool truncated;                  /* a bound was reached: later lines are ignored */
	struct bt_membudget *budget;     /* shared with every other map; NULL: only the bounds above */
	uint64_t share_max;              /* at most this much of it for this map; 0: any */
	uint64_t charged;                /* taken from it, given back when freed */
	uint64_t over_budget;            /* lines refused for the budget */
	bool skipping;                   /* inside an over-long line, skipped up to its newline */
};

void bt_perfmap_init(struct bt_perfmap *m);
/* Frees the tables and gives back what they took from the budget (which stays set, as does
 * share_max). */
void bt_perfmap_free(struct bt_perfmap *m);

/* Takes the complete lines of buf[0..len) (and, when eof, a last line without its newline). A line
 * that is not "HEX HEX NAME" (optional 0x prefixes, a non-empty name, a size that neither is 0 nor
 * runs past the end of the address space) is skipped and counted in bad_lines; so is a line longer
 * than BT_PERFMAP_LINE_MAX or holding a NUL byte. *used (may be NULL) gets the bytes consumed: an
 * unfinished last line is left for the next call. 0 or -ENOMEM. */
int bt_perfmap_parse(struct bt_perfmap *m, const char *buf, size_t len, bool eof, size_t *used);

/* Adds the code at [start, start + size) named name[0..nlen) as a line would: 1 taken, 0 refused
 * (an empty or over-long name, one holding a NUL, a size of 0 or past the end of the address space,
 * or a full table or budget, which sets truncated; over_budget counts the latter), -ENOMEM. */
int bt_perfmap_add(struct bt_perfmap *m, uint64_t start, uint64_t size, const char *name, size_t nlen);

/* Reads fd from offset m->bytes to its end (the lines appended since the last read), within the
 * bounds; an unfinished last line waits for the next read. 0 or -errno (a read error, -ENOMEM). */
int bt_perfmap_read_fd(struct bt_perfmap *m, int fd);

/* The entry holding addr, or NULL. Where lines overlap, the later one wins. Sorts what was added
 * since the last lookup first; NULL with errno ENOMEM when that fails. */
const struct bt_perfmap_entry *bt_perfmap_lookup(struct bt_perfmap *m, uint64_t addr);

/* The same on a table already sorted (by an earlier bt_perfmap_lookup): lines added since are not
 * seen. */
const struct bt_perfmap_entry *bt_perfmap_find(const struct bt_perfmap *m, uint64_t addr);

static inline const char *bt_perfmap_name(const struct bt_perfmap *m, const struct bt_perfmap_entry *e)
{
	return m->names + e->name_off;
}

#endif
