/* heatmap.h - a session's samples over time as one self-contained SVG, as FlameScope draws them: a
 * column per second, a row per 20 ms within it, each cell coloured by its samples; clicking a first
 * and a last cell draws the flame graph of the samples between them on the same page. */
#ifndef BT_HEATMAP_H
#define BT_HEATMAP_H

#include <stdint.h>
#include <stdio.h>

struct bt_session;

/* Rows of a column: each holds 1 s / BT_HEATMAP_ROWS. */
#define BT_HEATMAP_ROWS 50

struct bt_heatmap_opts {
	uint64_t mono_ns;       /* the session's start on the samples' clock; 0: its first sample's time */
	int64_t duration_ns;    /* the session's length: its columns at least; 0: up to the last sample */
};

/* The heat map of s->log. Its data, for scripts and tests: the root's data-start-ns (time 0 of
 * column 0, CLOCK_MONOTONIC), data-bucket-ns, data-rows, data-cols and data-total; each cell with
 * samples is a rect of class "c" with data-c (column: seconds since the start), data-r (row) and
 * data-n (samples). The flame graph's boxes are groups of class "f" as in flamegraph.h. 0,
 * -EOPNOTSUPP when the session kept no log, or -errno. */
int bt_heatmap_write(const struct bt_session *s, const struct bt_heatmap_opts *o, FILE *out);

#endif
