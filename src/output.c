/* output.c - format dispatch. */
#include "output.h"

#include <errno.h>
#include <string.h>

#include "flamegraph.h"

static const char *const names[] = { [BT_FMT_FOLDED] = "folded", [BT_FMT_SVG] = "svg" };

int bt_format_parse(const char *name, enum bt_format *out)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (name && !strcmp(name, names[i])) {
			*out = (enum bt_format)i;
			return 0;
		}
	return -EINVAL;
}

const char *bt_format_names(void)
{
	return "folded, svg";
}

int bt_output_folded(const struct bt_folded *f, enum bt_format fmt, const struct bt_output_opts *o,
		     FILE *out)
{
	switch (fmt) {
	case BT_FMT_FOLDED:
		return bt_folded_write(f, out);
	case BT_FMT_SVG: {
		struct bt_flamegraph_opts fo = { .title = o ? o->title : NULL };
		return bt_flamegraph_write(f, &fo, out);
	}
	}
	return -EINVAL;
}

int bt_output_profile(const struct bt_profile *p, enum bt_format fmt, const struct bt_output_opts *o,
		      FILE *out)
{
	struct bt_folded f;
	int err = bt_profile_fold(p, &f);
	if (err)
		return err;
	err = bt_output_folded(&f, fmt, o, out);
	bt_folded_free(&f);
	return err;
}
