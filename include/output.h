/* output.h - the profile formats buildtrace writes, chosen by name, from a live profile or from
 * folded stacks read back from a file. */
#ifndef BT_OUTPUT_H
#define BT_OUTPUT_H

#include <stdio.h>
#include "profile.h"

enum bt_format { BT_FMT_FOLDED = 0, BT_FMT_SVG };

/* 0, or -EINVAL for an unknown name. */
int bt_format_parse(const char *name, enum bt_format *out);
/* The names accepted, for messages: "folded, svg". */
const char *bt_format_names(void);

struct bt_output_opts {
	const char *title;
};

int bt_output_folded(const struct bt_folded *f, enum bt_format fmt, const struct bt_output_opts *o,
		     FILE *out);
int bt_output_profile(const struct bt_profile *p, enum bt_format fmt, const struct bt_output_opts *o,
		      FILE *out);

#endif
