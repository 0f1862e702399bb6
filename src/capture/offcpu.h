/* offcpu.h - the off-CPU sums as userspace reads them (bpf/bt_offcpu.h): at each cut the map being
 * written is swapped for the other, whose sums, and the time of the threads still off a CPU up to the
 * cut, become BT_REC_OFFCPU records. */
#ifndef BT_CAPTURE_OFFCPU_H
#define BT_CAPTURE_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "bt_proto.h"

struct bt_offcpu;

/* The maps of the loaded object (descriptors it keeps owning) and its counting start, a variable
 * of its mapped data the BPF programs read. */
struct bt_offcpu_maps {
	int threads_fd, sums_fd, sums_a_fd, sums_b_fd, known_fd;
	volatile uint64_t *t0;
	unsigned states;          /* 1 << enum bt_offcpu_state: the states counted */
	uint64_t min_ns;          /* blocks shorter than this are not counted */
};

typedef int (*bt_offcpu_fn)(void *ctx, const struct bt_rec_hdr *rec);

/* Puts the first sums map in place. 0 or -errno. */
int bt_offcpu_new(const struct bt_offcpu_maps *m, struct bt_offcpu **out);
void bt_offcpu_free(struct bt_offcpu *o);

/* Counting starts now (CLOCK_MONOTONIC ns); the threads off a CPU already are to be entered by the
 * caller's iterator run. */
void bt_offcpu_begin(struct bt_offcpu *o, uint64_t now);
bool bt_offcpu_started(const struct bt_offcpu *o);

/* The first half of a cut at now: the sums map is swapped, which waits for the programs running to
 * finish (so every stack key in the swapped-out sums has had its frames written to the ring buffer
 * before this returns). 0 or -errno. */
int bt_offcpu_swap(struct bt_offcpu *o, uint64_t now);

/* The second half, once the ring buffer is drained: the swapped-out sums (less what earlier cuts
 * counted of their blocks), then the time of the threads still off a CPU up to the cut (since what
 * earlier cuts counted of them), to fn as BT_REC_OFFCPU records (timed at the cut); then a
 * record of key 0 when forget is true: the stack keys delivered so far are forgotten by the kernel,
 * and written again when met. Returns records delivered, or fn's non-zero return, or -errno. */
int bt_offcpu_read(struct bt_offcpu *o, bool forget, bt_offcpu_fn fn, void *ctx);

struct bt_offcpu_stats {
	uint64_t cuts;
	uint64_t forgets;          /* times the known stack keys were forgotten */
	uint64_t open_ns;          /* time of blocks going on at a cut, counted there */
};
void bt_offcpu_stats(const struct bt_offcpu *o, struct bt_offcpu_stats *out);

#endif
