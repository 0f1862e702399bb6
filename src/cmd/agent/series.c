/* series.c - the agent's targets made from its configuration, and profiles encoded per series. */
#include "cmd/agent/series.h"
#include "cmd/net/httpreq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int agent_series_init(struct agent_series *as, const struct bt_agent_conf *c, char *err, size_t errlen)
{
	memset(as, 0, sizeof(*as));
	bt_relabel_init(&as->rules);
	bt_labels_init(&as->labels);
	int e = 0;
	for (size_t i = 0; !e && i < c->nrelabel; i++)
		e = bt_relabel_add(&as->rules, c->relabel[i], err, errlen);
	for (size_t i = 0; !e && i < c->nlabels; i++)
		e = bt_labels_set(&as->labels, c->labels[i].key, c->labels[i].value);
	for (size_t i = 0; i < c->ntarget_env && i < BT_AGENT_MAX_ENV; i++) {
		snprintf(as->env[i], sizeof(as->env[i]), "%s", c->target_env[i]);
		as->envp[i] = as->env[i];
	}
	snprintf(as->fallback, sizeof(as->fallback), "%s", c->app_name);
	struct bt_targets_conf tc = {
		.rules = &as->rules, .env = as->envp, .nenv = c->ntarget_env, .labels = &as->labels,
		.fallback_service = as->fallback, .proc_root = "",
	};
	if (!e && (e = bt_targets_init(&as->targets, &tc)))
		snprintf(err, errlen, "out of memory");
	if (e) {
		bt_relabel_free(&as->rules);
		bt_labels_free(&as->labels);
		return e;
	}
	as->ready = true;
	return 0;
}

void agent_series_free(struct agent_series *as)
{
	if (!as->ready)
		return;
	bt_targets_free(&as->targets);
	bt_relabel_free(&as->rules);
	bt_labels_free(&as->labels);
	as->ready = false;
}

int agent_encode(struct bt_session *s, bt_series_keep_fn keep, void *ctx, enum bt_format fmt,
		 const struct bt_output_opts *oo, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	struct bt_profile part, whole = s->prof;
	int err = 0;
	if (keep) {
		bt_profile_init(&part);
		if ((err = bt_profile_extract(&whole, keep, ctx, &part))) {
			bt_profile_free(&part);
			return err;
		}
		s->prof = part;
	}
	FILE *mf = open_memstream(buf, len);
	err = mf ? bt_output_session(s, fmt, oo, mf) : -ENOMEM;
	if (mf && fclose(mf) != 0 && !err)
		err = -ENOMEM;
	if (keep) {
		bt_profile_free(&s->prof);
		s->prof = whole;
	}
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

bool agent_series_is(void *ctx, const char *series)
{
	return series && series == ctx;
}

int agent_select_parse(const char *query, struct agent_select *sel, char *err, size_t errlen)
{
	memset(sel, 0, sizeof(*sel));
	size_t pos = 0;
	char name[64], value[BT_TARGETS_VALUE_MAX + 1];
	int k;
	while ((k = bt_http_query_next(query, &pos, name, sizeof(name), value, sizeof(value))) == 1) {
		if (!strcmp(name, "seconds"))
			continue;
		if (!bt_label_name_ok(name)) {
			snprintf(err, errlen, "'%s' is not a label name", name);
			return -EINVAL;
		}
		if (sel->n == AGENT_MAX_MATCHERS) {
			snprintf(err, errlen, "at most %d labels", AGENT_MAX_MATCHERS);
			return -EINVAL;
		}
		snprintf(sel->name[sel->n], sizeof(sel->name[0]), "%s", name);
		snprintf(sel->value[sel->n], sizeof(sel->value[0]), "%s", value);
		sel->n++;
	}
	if (k < 0)
		snprintf(err, errlen, "a malformed query parameter");
	return k < 0 ? -EINVAL : 0;
}

/* Whether series ("name=value,...") has label name with value. */
static bool has(const char *series, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);
	for (const char *s = series; *s;) {
		const char *end = strchrnul(s, ',');
		if ((size_t)(end - s) == nl + 1 + vl && !strncmp(s, name, nl) && s[nl] == '=' &&
		    !strncmp(s + nl + 1, value, vl))
			return true;
		s = *end ? end + 1 : end;
	}
	return false;
}

bool agent_select_keep(void *ctx, const char *series)
{
	const struct agent_select *sel = ctx;
	for (size_t i = 0; i < sel->n; i++)
		if (!series || !has(series, sel->name[i], sel->value[i]))
			return false;
	return true;
}
