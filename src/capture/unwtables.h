/* unwtables.h - what the BPF stack walker reads, kept current from the ring buffer's records: the
 * compiled unwind table of each build-id a sampled stack passed through (loaded into unw_rows once
 * per build-id, its rules into unw_rules, shared by every process mapping it, kept after the last
 * one exits until the room is needed, least recently used first), each process's executable
 * mappings with their tables (unw_procs); and the stacks the walker left to userspace, finished
 * here with the same tables. Tables are taken from the store or compiled by a worker thread
 * (unwjobs.h), never by the thread reading the records. */
#ifndef BT_UNWTABLES_H
#define BT_UNWTABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bt_proto.h"
#include "capture/unwjobs.h"

struct bt_unwtables;

struct bt_unwtables_stats {
	uint64_t tables;          /* tables loaded now */
	uint64_t rows;            /* their rows (of rows_max) */
	uint64_t rows_max;
	uint64_t rules;           /* distinct rules of all tables loaded so far */
	uint64_t loads;           /* tables loaded into the walker's maps */
	uint64_t from_cache;      /* ... of them taken from the store */
	uint64_t compiled;        /* ... compiled from their file */
	uint64_t cache_refused;   /* stored tables refused (corrupt, another build-id's, untrusted) */
	uint64_t cache_stored;    /* tables compiled and stored */
	uint64_t rows_loaded;     /* rows of all of those */
	uint64_t rows_copied;     /* ... copied in through a mapping of the array (the rest: updates) */
	uint64_t load_failed;     /* files without a table to be had (no CFI, malformed) */
	uint64_t unavailable;     /* tables that could not be made then (file gone, no room) */
	uint64_t evicted;         /* tables freed for the room another one needed */
	uint64_t compile_ns;      /* time spent compiling tables (in the worker thread) */
	uint64_t procs;           /* processes known */
	uint64_t maps_dropped;    /* mappings beyond BT_UNW_MAPS_MAX in one process: walked by fp */
	uint64_t walks;           /* samples with a user stack walked */
	uint64_t walks_done;      /* ... that reached the outermost frame */
	uint64_t walks_fp;        /* ... with a frame walked by frame pointer */
	uint64_t walks_no_table;  /* ... whose walk in the kernel met a mapping without a table yet */
	uint64_t walks_no_proc;   /* ... of a process the kernel had no entry for yet */
	uint64_t walks_user;      /* ... finished in userspace (those two, and pcs in no known mapping) */
	uint64_t walks_user_done; /* ... of them to the outermost frame */
	uint64_t walks_held;      /* ... that waited for a table being made */
	uint64_t cont_lost;       /* samples to finish whose stack copy was lost (ring buffer full) */
	uint64_t cont_bytes;      /* stack bytes the walker copied for userspace */
	uint64_t walk_frames;     /* frames of all walks */
};

struct bt_unwtables_opts {
	int rows_fd, rules_fd, procs_fd;  /* unw_rows, unw_rules, unw_procs */
	uint32_t rows_max;                /* entries in unw_rows */
	const char *proc_root;            /* "" for the real /proc */
	/* each file's table is loaded as soon as a mapping of it is reported (for a few watched
	 * processes), not when a stack first needs it (for the whole machine, where most files
	 * mapped are never sampled) */
	bool eager;
	const struct bt_unwtables_store *store;   /* may be NULL: nothing kept between sessions */
};

/* 0 or -errno. The worker thread starts with bt_unwtables_start. */
int bt_unwtables_new(const struct bt_unwtables_opts *o, struct bt_unwtables **out);
/* Starts the worker thread (once the caller has dropped what it does not need). 0 or -errno. */
int bt_unwtables_start(struct bt_unwtables *u);
void bt_unwtables_free(struct bt_unwtables *u);

/* Follows one record: mappings made, snapshot or gone, exec, fork and exit change a process's
 * mappings. A sample whose walk the kernel left to userspace (BT_UWALK_CONT) is finished with the
 * stack copy before it: *out is then the finished sample (valid until the next call), else the
 * record itself; NULL for a record that is only for this module (the stack copy). 0, or
 * BT_UNWTABLES_LATER when the sample needs a table being made: it is kept, under *ticket, to be
 * finished once bt_unwtables_collect has taken that table in (its process's mappings as they were
 * are kept meanwhile), while the records after it go on moving the tables on. */
#define BT_UNWTABLES_LATER 1
int bt_unwtables_record(struct bt_unwtables *u, const struct bt_rec_hdr *h, const struct bt_rec_hdr **out,
			uint64_t *ticket);
/* The sample kept under ticket once finished (valid until released), NULL while it waits. */
const struct bt_rec_hdr *bt_unwtables_finished(struct bt_unwtables *u, uint64_t ticket);
/* The same, unfinished if it still waits (counted as lost continuations): the end of a session. */
const struct bt_rec_hdr *bt_unwtables_give_up(struct bt_unwtables *u, uint64_t ticket);
void bt_unwtables_release(struct bt_unwtables *u, uint64_t ticket);

/* Takes in the tables the worker made (loads their rows and rules), and finishes the samples
 * that waited for them. Returns how many tables. */
int bt_unwtables_collect(struct bt_unwtables *u);
/* Readable when made tables wait to be taken in (for epoll); tables still being made. */
int bt_unwtables_fd(const struct bt_unwtables *u);
size_t bt_unwtables_pending(const struct bt_unwtables *u);
/* Waits up to timeout_ms for a table being made; whether one is ready. */
bool bt_unwtables_wait(struct bt_unwtables *u, int timeout_ms);

/* Writes every process whose mappings or tables changed into unw_procs. 0 or the first -errno of
 * a map update. */
int bt_unwtables_flush(struct bt_unwtables *u);

void bt_unwtables_stats(const struct bt_unwtables *u, struct bt_unwtables_stats *out);

#endif
