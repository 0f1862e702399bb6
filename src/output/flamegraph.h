/* flamegraph.h - an interactive flame graph as one self-contained SVG file: click to zoom, search,
 * tooltips with sample counts and percentages, kernel and user frames in different colours. */
#ifndef BT_FLAMEGRAPH_H
#define BT_FLAMEGRAPH_H

#include <stdio.h>
#include "output/folded.h"

struct bt_flamegraph_opts {
	const char *title;   /* NULL: "buildtrace flame graph" */
	unsigned width;      /* pixels; 0: 1200 */
	const char *unit;    /* "samples" */
};

/* 0 or -errno (a write error, ENOMEM). */
int bt_flamegraph_write(const struct bt_folded *f, const struct bt_flamegraph_opts *o, FILE *out);

#endif
