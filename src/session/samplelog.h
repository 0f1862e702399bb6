/* samplelog.h - a session's samples one by one, beside the aggregate: each sample's time, CPU,
 * process, thread and stack (an index into the profile's stacks), kept in time order for the
 * per-sample outputs. Only the newest samples stay in memory; older ones go to a scratch file that
 * no name leads to (bt_wfile_scratch), so a long session costs disk rather than memory. */
#ifndef BT_SAMPLELOG_H
#define BT_SAMPLELOG_H

#include <stddef.h>
#include <stdint.h>

struct bt_sample_rec {
	uint64_t time_ns;   /* the records' clock, CLOCK_MONOTONIC */
	uint32_t stack;     /* its stack: an index into the profile's stacks */
	uint32_t pid, tid;
	uint32_t cpu;
};

/* Records kept in memory by default (24 bytes each): 1.5 MiB. */
#define BT_SAMPLELOG_KEEP 65536

struct bt_samplelog {
	struct bt_sample_rec *mem;   /* the newest records, in time order */
	size_t n, cap;               /* cap: records kept in memory at most */
	int fd;                      /* the older records, in time order; -1 until memory first fills */
	uint64_t spilled;            /* records in the file */
	uint64_t spilled_until;      /* time of the newest record in the file */
	uint64_t late;               /* records older than the file's newest: given its time */
	char dir[256];               /* where the file goes */
};

/* An empty log keeping at most keep records in memory (0: BT_SAMPLELOG_KEEP; at least 2), the
 * rest in a scratch file in dir (NULL: /var/tmp). 0 or -ENOMEM. */
int bt_samplelog_init(struct bt_samplelog *l, const char *dir, size_t keep);
void bt_samplelog_free(struct bt_samplelog *l);

/* Adds a record in its place by time. The ring buffer hands samples over nearly in time order:
 * one is moved back past the few newer ones already kept. One older than the records already in
 * the file (never seen: memory keeps the newer half of its capacity) takes the file's newest time,
 * so the log stays in order, and is counted in late. 0 or -errno (the file could not be made or
 * written). */
int bt_samplelog_add(struct bt_samplelog *l, const struct bt_sample_rec *r);

static inline uint64_t bt_samplelog_count(const struct bt_samplelog *l)
{
	return l->spilled + l->n;
}

/* Calls fn for every record in time order, until it returns nonzero, which is returned; 0 after
 * the last, -errno when the file cannot be read. */
typedef int (*bt_samplelog_fn)(void *ctx, const struct bt_sample_rec *r);
int bt_samplelog_each(const struct bt_samplelog *l, bt_samplelog_fn fn, void *ctx);

#endif
