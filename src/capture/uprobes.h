/* uprobes.h - the probes of a trace session (bpf/trace.bpf.c): loaded beside a capture, sharing its
 * ring buffer and watched set, attached as uprobes (uretprobes for latency) to files open in this
 * process, each probe with its own counters, keyed counts and latency histogram. Prints nothing. */
#ifndef BT_UPROBES_H
#define BT_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "bt_trace.h"

struct bt_uprobes;

struct bt_uprobes_opts {
	bool all;               /* every process; else only the capture's watched set */
	bool dwarf;             /* copy registers and stack with each hit, for the CFI unwinder */
	unsigned ustack_bytes;  /* 0: BT_USTACK_BYTES */
};

/* Loads the probe programs into the kernel, sharing c's ring buffer and watched set.
 * 0 or -errno, with a message in msg. */
int bt_uprobes_open(struct bt_capture *c, const struct bt_uprobes_opts *o, struct bt_uprobes **out,
		    char *msg, size_t len);

/* One attachment of probe number probe (< BT_TRACE_MAX_PROBES) to the file open as fd, at file
 * offset off; ref_ctr_off: the file offset of the marker's semaphore (0: none), which the kernel
 * increments in every process the probe is placed in and decrements when it is removed; pid: only
 * this process (-1: every process). cfg says how a keyed probe's argument is read (kind
 * BT_TARG_NONE: one stack sample per hit) and whether its return is timed: then a uretprobe is
 * attached too. 0 or -errno. */
int bt_uprobes_attach(struct bt_uprobes *u, unsigned probe, const struct bt_trace_probe_cfg *cfg, int fd,
		      uint64_t off, uint64_t ref_ctr_off, int pid);

/* Removes every probe (the kernel lowers the markers' semaphores), keeping what they counted: no
 * hit comes after the session's last read. */
void bt_uprobes_detach(struct bt_uprobes *u);

/* A probe's counters (enum bt_trace_counter), summed over the CPUs. 0 or -errno. */
int bt_uprobes_counters(struct bt_uprobes *u, unsigned probe, uint64_t out[BT_TCNT_MAX]);

/* Calls fn for each keyed count; fn's non-zero return stops the walk and is returned. */
int bt_uprobes_foreach_key(struct bt_uprobes *u,
			   int (*fn)(void *ctx, const struct bt_trace_key *k, uint64_t count), void *ctx);

/* A probe's latency histogram: out[b] calls took [2^b, 2^(b+1)) ns. 0 or -errno. */
int bt_uprobes_latency(struct bt_uprobes *u, unsigned probe, uint64_t out[BT_TRACE_LAT_BUCKETS]);

/* Detaches everything (the kernel decrements the markers' semaphores) and unloads. */
void bt_uprobes_close(struct bt_uprobes *u);

#endif
