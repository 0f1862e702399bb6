/* sideband.h - the kernel's own records of new executable mappings (PERF_RECORD_MMAP2, with the
 * file's build-id where the kernel could read it), from one software perf event per CPU: how
 * mappings are learnt where the kernel refuses a BPF program on the mmap path, at no cost to any
 * other system call. Records are read in time order, on CLOCK_MONOTONIC like the BPF records. */
#ifndef BT_SIDEBAND_H
#define BT_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_sideband;

/* One new executable mapping, as the kernel reported it. */
struct bt_sb_mmap {
	uint64_t time_ns;       /* CLOCK_MONOTONIC */
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t prot, flags;   /* PROT_*, MAP_* */
	bool anon;              /* no file: anonymous executable memory (JIT code) */
	uint8_t build_id_len;   /* 0: the kernel could not read it (pages not in memory) */
	uint8_t build_id[20];
	const char *path;       /* NUL-terminated; valid during the callback only */
};

typedef int (*bt_sb_fn)(void *ctx, const struct bt_sb_mmap *m);

/* Opens the event on every CPU in cpus[0..ncpus) with a ring of pages (a power of two) each.
 * build_ids: ask the kernel for build-ids in the records (Linux 5.12+); without, records name the
 * file only. 0 or -errno (-EOPNOTSUPP: the kernel does not know one of the attributes). */
int bt_sideband_open(const int *cpus, size_t ncpus, size_t pages, bool build_ids,
		     struct bt_sideband **out);

/* Adds the rings to an epoll set (EPOLLIN, with data): the kernel wakes it when a ring is a quarter
 * full. 0 or -errno. */
int bt_sideband_add_to_epoll(struct bt_sideband *sb, int epfd, uint64_t data);

/* Moves every record now in the rings into the queue, in time order. Returns how many. */
int bt_sideband_drain(struct bt_sideband *sb);

/* Calls fn for each queued record with a time at or before until_ns (UINT64_MAX: all), oldest
 * first, and forgets it. A non-zero return from fn stops and is returned; else the count. */
int bt_sideband_deliver(struct bt_sideband *sb, uint64_t until_ns, bt_sb_fn fn, void *ctx);

/* The oldest queued record's time, UINT64_MAX when none is queued. */
uint64_t bt_sideband_next_time(const struct bt_sideband *sb);

/* Records the kernel dropped because a ring was full (PERF_RECORD_LOST), and other record types
 * that were skipped. */
uint64_t bt_sideband_lost(const struct bt_sideband *sb);

void bt_sideband_close(struct bt_sideband *sb);

#endif
