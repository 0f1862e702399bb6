/* output.c - format dispatch. */
#include "output/output.h"

#include <errno.h>
#include <string.h>

#include "output/flamegraph.h"
#include "output/folded.h"
#include "output/heatmap.h"
#include "output/jsonout.h"
#include "output/perfscript.h"
#include "output/pprof.h"
#include "session/session.h"

static const char *const names[] = {
	[BT_FMT_FOLDED] = "folded", [BT_FMT_SVG] = "svg", [BT_FMT_PPROF] = "pprof", [BT_FMT_JSON] = "json",
	[BT_FMT_PERFSCRIPT] = "perf-script", [BT_FMT_HEATMAP] = "heatmap",
};

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
	return "folded, svg, pprof, json, perf-script, heatmap";
}

bool bt_format_per_sample(enum bt_format fmt)
{
	return fmt == BT_FMT_PERFSCRIPT || fmt == BT_FMT_HEATMAP;
}

static struct bt_pprof_opts pprof_opts(const struct bt_output_opts *o)
{
	struct bt_pprof_opts po = { 0 };
	if (o) {
		po.period_ns = o->period_ns;
		po.time_ns = o->time_ns;
		po.duration_ns = o->duration_ns;
		po.kernel_root = o->kernel_root;
		po.main_pid = o->main_pid;
		po.view = o->view;
		po.view_only = o->view_only;
	}
	return po;
}

static struct bt_json_opts json_opts(const struct bt_output_opts *o)
{
	struct bt_json_opts jo = { 0 };
	if (o) {
		jo.period_ns = o->period_ns;
		jo.time_ns = o->time_ns;
		jo.duration_ns = o->duration_ns;
		jo.kernel_root = o->kernel_root;
		jo.source = o->source;
		jo.view = o->view;
	}
	return jo;
}

/* The lines the view of o shows: CPU samples, or time in microseconds (nanoseconds with time_ns). */
static int fold_view(const struct bt_profile *p, const struct bt_output_opts *o, struct bt_folded *f)
{
	if (!o || o->view == BT_VIEW_CPU)
		return bt_folded_from_profile(p, f);
	struct bt_fold_time t = { .wall = o->view == BT_VIEW_WALL, .period_ns = o->period_ns,
				  .unit_ns = o->folded_ns ? 1 : 1000 };
	return bt_folded_time_from_profile(p, &t, f);
}

int bt_output_profile(const struct bt_profile *p, enum bt_format fmt, const struct bt_output_opts *o,
		      FILE *out)
{
	static const char *const titles[] = { [BT_VIEW_CPU] = "buildtrace flame graph",
					      [BT_VIEW_OFFCPU] = "buildtrace off-CPU time",
					      [BT_VIEW_WALL] = "buildtrace wall-clock time (on-CPU and off-CPU)" };
	int view = o && o->view >= BT_VIEW_CPU && o->view <= BT_VIEW_WALL ? o->view : BT_VIEW_CPU;
	switch (fmt) {
	case BT_FMT_FOLDED: {
		struct bt_folded f;
		int err = fold_view(p, o, &f);
		if (err)
			return err;
		err = bt_folded_write(&f, out);
		bt_folded_free(&f);
		return err;
	}
	case BT_FMT_SVG: {
		struct bt_folded f;
		int err = fold_view(p, o, &f);
		if (err)
			return err;
		struct bt_flamegraph_opts fo = { .title = o && o->title ? o->title : titles[view],
						 .unit = view == BT_VIEW_CPU ? "samples" : "us" };
		err = bt_flamegraph_write(&f, &fo, out);
		bt_folded_free(&f);
		return err;
	}
	case BT_FMT_PPROF: {
		struct bt_pprof_opts po = pprof_opts(o);
		return bt_pprof_write_profile(p, &po, out);
	}
	case BT_FMT_JSON: {
		struct bt_json_opts jo = json_opts(o);
		return bt_json_write_profile(p, &jo, out);
	}
	case BT_FMT_PERFSCRIPT:
	case BT_FMT_HEATMAP:
		return -EOPNOTSUPP;
	}
	return -EINVAL;
}

int bt_output_session(const struct bt_session *s, enum bt_format fmt, const struct bt_output_opts *o,
		      FILE *out)
{
	switch (fmt) {
	case BT_FMT_PPROF: {
		struct bt_pprof_opts po = pprof_opts(o);
		return bt_pprof_write_session(s, &po, out);
	}
	case BT_FMT_JSON: {
		struct bt_json_opts jo = json_opts(o);
		return bt_json_write_session(s, &jo, out);
	}
	case BT_FMT_PERFSCRIPT: {
		struct bt_perfscript_opts po = { 0 };
		if (o)
			po = (struct bt_perfscript_opts){ .period_ns = o->period_ns, .time_ns = o->time_ns,
							  .mono_ns = o->mono_ns, .duration_ns = o->duration_ns };
		return bt_perfscript_write(s, &po, out);
	}
	case BT_FMT_HEATMAP: {
		struct bt_heatmap_opts ho = { .mono_ns = o ? o->mono_ns : 0, .duration_ns = o ? o->duration_ns : 0 };
		return bt_heatmap_write(s, &ho, out);
	}
	case BT_FMT_FOLDED:
	case BT_FMT_SVG:
		return bt_output_profile(&s->prof, fmt, o, out);
	}
	return -EINVAL;
}
