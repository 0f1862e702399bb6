/* output.h - the profile formats buildtrace writes, chosen by name, from a live session or from a
 * profile read back from a file. */
#ifndef BT_OUTPUT_H
#define BT_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "session/profile.h"

struct bt_session;

/* folded: "comm;outer;...;inner COUNT" lines; svg: an interactive flame graph; pprof: gzip-compressed
 * profile.proto (see pprof.h); json: see docs/json-format.md; perf-script: every sample in time
 * order as perf script prints it (perfscript.h); heatmap: samples by time as a heat map whose
 * ranges become flame graphs (heatmap.h). The last two need a session that logged its samples. */
enum bt_format { BT_FMT_FOLDED = 0, BT_FMT_SVG, BT_FMT_PPROF, BT_FMT_JSON, BT_FMT_PERFSCRIPT, BT_FMT_HEATMAP };

/* 0, or -EINVAL for an unknown name. */
int bt_format_parse(const char *name, enum bt_format *out);
/* The names accepted, for messages: "folded, svg, pprof, json, perf-script, heatmap". */
const char *bt_format_names(void);
/* Whether fmt shows samples one by one (needs bt_session_opts.sample_log). */
bool bt_format_per_sample(enum bt_format fmt);

struct bt_output_opts {
	const char *title;       /* the flame graph's */
	uint64_t period_ns;      /* time between two samples; 0: unknown */
	int64_t time_ns;         /* start of the session, ns since the epoch; 0: unknown */
	int64_t duration_ns;     /* 0: unknown */
	uint64_t mono_ns;        /* start of the session on the records' clock (CLOCK_MONOTONIC); 0: unknown */
	const char *kernel_root; /* where the running kernel's build-id is read (kident.h); NULL: "" */
	int main_pid;            /* the profiled program's process (pprof's main mapping); 0: none */
	const char *source;      /* json, without a session: where the profile came from ("folded") */
	int view;                /* enum bt_view: what folded and svg show (off-CPU and wall time in
				  * microseconds), what pprof and json show first */
	bool view_only;          /* pprof: only the view's value type and stacks (bt_pprof_opts) */
	bool folded_ns;          /* folded time in nanoseconds instead */
};

/* A profile without its session (read back from a file, or a trace's counts): names and kinds
 * only, build-ids and addresses need the session; -EOPNOTSUPP for a per-sample format. */
int bt_output_profile(const struct bt_profile *p, enum bt_format fmt, const struct bt_output_opts *o,
		      FILE *out);
/* Everything the session knows: pprof and json carry each frame's build-id, file and offset. */
int bt_output_session(const struct bt_session *s, enum bt_format fmt, const struct bt_output_opts *o,
		      FILE *out);

#endif
