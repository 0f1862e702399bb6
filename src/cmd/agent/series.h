/* series.h - the agent's targets and series: the configured rules, labels and environment names
 * made into the session's targets (its processes named by labels, kept apart by series, dropped
 * ones skipped by the kernel side too), and profiles encoded whole, one series at a time, or for
 * the series a pull request selects. */
#ifndef BT_AGENT_SERIES_H
#define BT_AGENT_SERIES_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd/agent/agentconf.h"
#include "output/output.h"
#include "session/session.h"
#include "session/targets.h"

struct agent_series {
	struct bt_relabel rules;
	struct bt_labels labels;                       /* the configured labels */
	char env[BT_AGENT_MAX_ENV][64];
	const char *envp[BT_AGENT_MAX_ENV];
	char fallback[128];
	struct bt_targets targets;
	bool ready;
};

/* The targets of configuration c (its rules compiled again). 0, or -errno with a message. */
int agent_series_init(struct agent_series *as, const struct bt_agent_conf *c, char *err, size_t errlen);
void agent_series_free(struct agent_series *as);

/* The session's profile, or of it the stacks keep accepts (NULL: all), encoded in fmt into *buf
 * (malloc'ed, *len bytes). 0 or -errno. */
int agent_encode(struct bt_session *s, bt_series_keep_fn keep, void *ctx, enum bt_format fmt,
		 const struct bt_output_opts *oo, char **buf, size_t *len);

/* keep for one series: ctx is its labels text as the extracted profile's names hold it (compared by
 * address: a profile interns each text once). */
bool agent_series_is(void *ctx, const char *series);

/* A pull request's selection: the labels its query names (every parameter but seconds) a series
 * must all have. */
#define AGENT_MAX_MATCHERS 8
struct agent_select {
	size_t n;
	char name[AGENT_MAX_MATCHERS][64];
	char value[AGENT_MAX_MATCHERS][BT_TARGETS_VALUE_MAX + 1];
};
/* 0, or -EINVAL with what is wrong in err (a malformed or unknown-looking parameter, too many). */
int agent_select_parse(const char *query, struct agent_select *sel, char *err, size_t errlen);
/* keep for a selection: ctx is the struct agent_select. */
bool agent_select_keep(void *ctx, const char *series);

#endif
