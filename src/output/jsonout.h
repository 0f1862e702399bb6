/* jsonout.h - the JSON profile format: the aggregated stacks with, for every frame, its name, the
 * file and build-id it belongs to and its offset (or kernel address). docs/json-format.md is the
 * schema; this module writes it from a live session or, names and kinds only, from a profile read
 * back from a file. */
#ifndef BT_JSONOUT_H
#define BT_JSONOUT_H

#include <stdint.h>
#include <stdio.h>

#include "session/profile.h"

struct bt_session;

#define BT_JSON_FORMAT_VERSION 1

struct bt_json_opts {
	uint64_t period_ns;        /* time between two samples; 0: unknown (written as null) */
	int64_t time_ns;           /* start, ns since the epoch; 0: unknown */
	int64_t duration_ns;       /* 0: unknown */
	const char *kernel_root;   /* where sys/kernel/notes is read (see kident.h); NULL: "" */
	const char *source;        /* without a session, where the profile came from: "folded",
				    * "pprof"; NULL: "profile" */
	int view;                  /* enum bt_view: with OFFCPU or WALL (or off-CPU stacks in the
				    * profile) every stack says its kind and off-CPU time */
};

/* 0 or -errno (a write error's, e.g. -ENOSPC; -ENOMEM). */
int bt_json_write_session(const struct bt_session *s, const struct bt_json_opts *o, FILE *out);
/* A profile without its session (read back from a file): frames carry their names and kinds only. */
int bt_json_write_profile(const struct bt_profile *p, const struct bt_json_opts *o, FILE *out);

/* Writes s as a JSON string literal (quotes included): control characters escaped, bytes that are
 * not valid UTF-8 replaced by U+FFFD, so the output is always valid JSON. n bytes of s are written,
 * NULs included. */
void bt_json_put_string(FILE *out, const char *s, size_t n);

#endif
