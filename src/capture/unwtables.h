/* unwtables.h - what the BPF stack walker reads, kept current from the ring buffer's records: the
 * compiled unwind table of each build-id a sampled stack passed through (loaded into unw_rows once
 * per build-id, shared by every process mapping it, freed when none maps it any more) and each
 * process's executable mappings with their tables (unw_procs). */
#ifndef BT_UNWTABLES_H
#define BT_UNWTABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bt_proto.h"

struct bt_unwtables;

struct bt_unwtables_stats {
	uint64_t tables;          /* tables loaded now */
	uint64_t rows;            /* their rows (of rows_max) */
	uint64_t rows_max;
	uint64_t loads;           /* tables compiled and loaded */
	uint64_t rows_loaded;     /* rows of all of those */
	uint64_t rows_copied;     /* ... copied in through a mapping of the array (the rest: updates) */
	uint64_t load_failed;     /* files whose table cannot be had (no CFI, unreadable, no room) */
	uint64_t evicted;         /* tables freed once no process mapped them */
	uint64_t compile_ns;      /* time spent compiling tables */
	uint64_t procs;           /* processes known */
	uint64_t maps_dropped;    /* mappings beyond BT_UNW_MAPS_MAX in one process: walked by fp */
	uint64_t walks;           /* samples with a user stack walked in BPF */
	uint64_t walks_done;      /* ... that reached the outermost frame */
	uint64_t walks_fp;        /* ... with a frame walked by frame pointer */
	uint64_t walks_no_table;  /* ... that met a mapping whose table was not loaded yet */
	uint64_t walks_no_proc;   /* ... of a process not known yet (the kernel's fp walk) */
	uint64_t walk_frames;     /* frames of all walks */
};

/* rows_fd and procs_fd are the unw_rows and unw_procs maps (rows_max entries in unw_rows);
 * proc_root is "" for the real /proc. eager: each file's table is loaded as soon as a mapping of
 * it is reported (for a few watched processes), not when a sample first meets it (for the whole
 * machine, where most files mapped are never sampled). 0 or -ENOMEM. */
int bt_unwtables_new(int rows_fd, uint32_t rows_max, int procs_fd, const char *proc_root, bool eager,
		     struct bt_unwtables **out);
void bt_unwtables_free(struct bt_unwtables *u);

/* Follows one record: mappings made, snapshot or gone, exec, fork and exit change a process's
 * mappings; a sample whose walk met a mapping without a table has the tables of its frames'
 * files compiled and loaded, for the samples after it. */
void bt_unwtables_record(struct bt_unwtables *u, const struct bt_rec_hdr *h);

/* Writes every process whose mappings or tables changed into unw_procs, and frees the tables no
 * process maps any more. 0 or the first -errno of a map update. */
int bt_unwtables_flush(struct bt_unwtables *u);

void bt_unwtables_stats(const struct bt_unwtables *u, struct bt_unwtables_stats *out);

#endif
