/* sideband.h - the kernel's own records of new executable mappings (PERF_RECORD_MMAP2: the file's
 * device, inode and path) and of kernel code that comes and goes (BPF
 * programs and trampolines: PERF_RECORD_KSYMBOL), from one software perf event per CPU: how
 * mappings are learnt where the kernel refuses a BPF program on the mmap path, at no cost to any
 * other system call, and how BPF programs are named without reading kallsyms again. Records are
 * read in time order, on CLOCK_MONOTONIC like the BPF records. */
#ifndef BT_SIDEBAND_H
#define BT_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_sideband;

/* What to ask the kernel for (bt_sideband_open). */
#define BT_SB_MMAP 0x1        /* new executable mappings */
#define BT_SB_KSYMBOL 0x4     /* kernel code registered and unregistered (Linux 5.1+) */
/* The kernel could put the file's build-id in mmap records (attr.build_id, Linux 5.12+), but once
 * one listener asks for it, the kernel marks the mmap records of every listener it visits after
 * that one as carrying build-ids while writing device and inode into them (the record's misc field
 * is not restored between listeners, up to 6.18 at least), and perf aborts on what it recorded: so
 * it is never asked for, and the flag is ignored where another listener's request set it. */

enum bt_sb_kind { BT_SB_REC_MMAP = 1, BT_SB_REC_KSYMBOL };

/* One record as the kernel wrote it. */
struct bt_sb_rec {
	enum bt_sb_kind kind;
	uint64_t time_ns;       /* CLOCK_MONOTONIC */
	uint32_t pid, tid;      /* mmap: whose mapping; ksymbol: who loaded or unloaded it */
	uint64_t start, len;    /* the mapping, or the code's address and size */
	uint64_t pgoff;         /* mmap: file offset of start */
	uint32_t prot, flags;   /* mmap: PROT_*, MAP_* */
	bool anon;              /* mmap: no file, anonymous executable memory (JIT code) */
	uint32_t dev;           /* mmap: the kernel's form, (major << 20) | minor */
	uint64_t ino;
	uint16_t ksym_type;     /* ksymbol: PERF_RECORD_KSYMBOL_TYPE_* */
	bool unregister;        /* ksymbol: the code went away */
	const char *path;       /* mmap: the file; ksymbol: the symbol's name. NUL-terminated, valid
				 * during the callback only */
};

typedef int (*bt_sb_fn)(void *ctx, const struct bt_sb_rec *r);

/* Opens the event on every CPU in cpus[0..ncpus) with a ring of pages (a power of two) each, asking
 * for what `what` (BT_SB_*) names. 0 or -errno (-EOPNOTSUPP: the kernel does not know one of the
 * attributes). */
int bt_sideband_open(const int *cpus, size_t ncpus, size_t pages, unsigned what,
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
