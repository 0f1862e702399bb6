/* relabel.c - label sets as sorted arrays, rules parsed from key=value text and checked as
 * Prometheus checks relabel_config, and applied action by action as Prometheus' relabel.Process. */
#include "session/relabel.h"
#include "base/grow.h"
#include "base/md5.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bt_labels_init(struct bt_labels *l)
{
	memset(l, 0, sizeof(*l));
}

static void labels_clear(struct bt_labels *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	l->n = 0;
}

void bt_labels_free(struct bt_labels *l)
{
	labels_clear(l);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Where name is, or would go: its index, *found saying which. */
static size_t find(const struct bt_labels *l, const char *name, bool *found)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(l->v[mid].name, name);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

const char *bt_labels_get(const struct bt_labels *l, const char *name)
{
	bool found;
	size_t i = find(l, name, &found);
	return found ? l->v[i].value : NULL;
}

int bt_labels_set(struct bt_labels *l, const char *name, const char *value)
{
	bool found;
	size_t i = find(l, name, &found);
	if (!value || !*value) {
		if (found) {
			free(l->v[i].name);
			free(l->v[i].value);
			memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(l->v[0]));
			l->n--;
		}
		return 0;
	}
	char *v = strdup(value);
	if (!v)
		return -ENOMEM;
	if (found) {
		free(l->v[i].value);
		l->v[i].value = v;
		return 0;
	}
	char *n = strdup(name);
	if (!n || bt_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(l->v[0]), 16)) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof(l->v[0]));
	l->v[i] = (struct bt_label){ n, v };
	l->n++;
	return 0;
}

int bt_labels_copy(struct bt_labels *dst, const struct bt_labels *src)
{
	labels_clear(dst);
	for (size_t i = 0; i < src->n; i++)
		if (bt_labels_set(dst, src->v[i].name, src->v[i].value))
			return -ENOMEM;
	return 0;
}

bool bt_label_name_ok(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

void bt_relabel_init(struct bt_relabel *r)
{
	memset(r, 0, sizeof(*r));
}

static void rule_free(struct bt_relabel_rule *u)
{
	for (size_t i = 0; i < u->nsource; i++)
		free(u->source[i]);
	free(u->source);
	free(u->separator);
	free(u->regex_text);
	bt_regex_free(&u->regex);
	free(u->target);
	free(u->replacement);
	free(u->text);
	memset(u, 0, sizeof(*u));
}

void bt_relabel_free(struct bt_relabel *r)
{
	for (size_t i = 0; i < r->n; i++)
		rule_free(&r->v[i]);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int say(char *err, size_t len, int code, const char *fmt, ...)
{
	if (err && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

static const char *const action_names[] = {
	[BT_RELABEL_REPLACE] = "replace", [BT_RELABEL_KEEP] = "keep", [BT_RELABEL_DROP] = "drop",
	[BT_RELABEL_KEEPEQUAL] = "keepequal", [BT_RELABEL_DROPEQUAL] = "dropequal",
	[BT_RELABEL_HASHMOD] = "hashmod", [BT_RELABEL_LABELMAP] = "labelmap",
	[BT_RELABEL_LABELDROP] = "labeldrop", [BT_RELABEL_LABELKEEP] = "labelkeep",
	[BT_RELABEL_LOWERCASE] = "lowercase", [BT_RELABEL_UPPERCASE] = "uppercase",
};
#define NACTIONS (sizeof(action_names) / sizeof(action_names[0]))

/* The next key=value field of *p (its value unquoted), moving *p past it: 1, 0 at the end, or
 * -EINVAL / -ENOMEM. */
static int next_field(const char **p, char **key, char **val, char *err, size_t errlen)
{
	const char *s = *p;
	while (isblank((unsigned char)*s))
		s++;
	if (!*s)
		return 0;
	const char *eq = s;
	while (*eq && *eq != '=' && !isblank((unsigned char)*eq))
		eq++;
	if (*eq != '=' || eq == s)
		return say(err, errlen, -EINVAL, "'%.*s' is not key=value", (int)(eq - s), s);
	const char *v = eq + 1;
	size_t cap = strlen(v) + 1, n = 0;
	char *out = malloc(cap);
	if (!out || !(*key = strndup(s, (size_t)(eq - s)))) {
		free(out);
		return -ENOMEM;
	}
	if (*v == '"') {
		for (v++; *v && *v != '"'; v++)
			out[n++] = *v == '\\' && (v[1] == '"' || v[1] == '\\') ? *++v : *v;
		if (*v != '"' || (v[1] && !isblank((unsigned char)v[1]))) {
			free(out);
			free(*key);
			return say(err, errlen, -EINVAL, "%.*s: a quoted value needs its closing '\"' before a blank",
				   (int)(eq - s), s);
		}
		v++;
	} else {
		while (*v && !isblank((unsigned char)*v))
			out[n++] = *v++;
	}
	out[n] = '\0';
	*val = out;
	*p = v;
	return 1;
}

/* Names joined by commas into u->source. 0, -EINVAL or -ENOMEM. */
static int set_sources(struct bt_relabel_rule *u, const char *v, char *err, size_t errlen)
{
	char *copy = strdup(v), *save = NULL;
	if (!copy)
		return -ENOMEM;
	int e = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !e; t = strtok_r(NULL, ",", &save)) {
		char **nv = realloc(u->source, (u->nsource + 1) * sizeof(*nv));
		if (!nv) {
			e = -ENOMEM;
			break;
		}
		u->source = nv;
		if (!bt_label_name_ok(t))
			e = say(err, errlen, -EINVAL, "source_labels: '%s' is not a label name", t);
		else if (!(u->source[u->nsource++] = strdup(t)))
			e = -ENOMEM;
	}
	free(copy);
	return e;
}

/* One field into u; each may be given once. */
static int set_field(struct bt_relabel_rule *u, const char *k, char *v, unsigned *seen, char *err, size_t errlen)
{
	static const char *const keys[] = { "action", "source_labels", "separator", "regex", "modulus",
					    "target_label", "replacement" };
	size_t i = 0;
	while (i < 7 && strcmp(k, keys[i]))
		i++;
	if (i == 7 || (*seen & (1u << i))) {
		free(v);
		return i == 7 ? say(err, errlen, -EINVAL, "unknown field '%s' (action, source_labels, separator, "
				    "regex, modulus, target_label, replacement)", k) :
				say(err, errlen, -EINVAL, "%s given twice", k);
	}
	*seen |= 1u << i;
	char **slot[] = { NULL, NULL, &u->separator, &u->regex_text, NULL, &u->target, &u->replacement };
	if (slot[i]) {
		free(*slot[i]);
		*slot[i] = v;
		return 0;
	}
	int e = 0;
	if (i == 0) {
		size_t a = 0;
		while (a < NACTIONS && strcasecmp(v, action_names[a]))
			a++;
		if (a == NACTIONS)
			e = say(err, errlen, -EINVAL, "unknown action '%s'", v);
		u->action = (enum bt_relabel_action)a;
	} else if (i == 1) {
		e = set_sources(u, v, err, errlen);
	} else {
		char *end;
		errno = 0;
		u->modulus = strtoull(v, &end, 10);
		if (errno || end == v || *end || *v == '-')
			e = say(err, errlen, -EINVAL, "modulus: '%s' is not a number", v);
	}
	free(v);
	return e;
}

/* Prometheus' relabelTarget: letters, digits and '_' with $N / ${N} / $name references, not
 * starting with a digit. */
static bool target_template_ok(const char *s)
{
	bool started = false;
	while (*s) {
		if (isalpha((unsigned char)*s) || *s == '_') {
			s++;
		} else if (isdigit((unsigned char)*s) && started) {
			s++;
		} else if (*s == '$') {
			bool brace = s[1] == '{';
			const char *n = s + 1 + brace, *e = n;
			while (isalnum((unsigned char)*e) || *e == '_')
				e++;
			if (e == n || (brace && *e != '}'))
				return false;
			s = e + brace;
		} else {
			return false;
		}
		started = true;
	}
	return started;
}

/* The checks of Prometheus' relabel Config.Validate. */
static int validate(const struct bt_relabel_rule *u, unsigned seen, char *err, size_t errlen)
{
	enum bt_relabel_action a = u->action;
	const char *an = action_names[a], *t = u->target;
	bool needs_target = a == BT_RELABEL_REPLACE || a == BT_RELABEL_HASHMOD || a == BT_RELABEL_LOWERCASE ||
			    a == BT_RELABEL_UPPERCASE || a == BT_RELABEL_KEEPEQUAL || a == BT_RELABEL_DROPEQUAL;
	bool plain_target = a == BT_RELABEL_HASHMOD || a == BT_RELABEL_LOWERCASE || a == BT_RELABEL_UPPERCASE ||
			    a == BT_RELABEL_KEEPEQUAL || a == BT_RELABEL_DROPEQUAL;
	bool default_repl = !strcmp(u->replacement, "$1"), default_sep = !strcmp(u->separator, ";");
	if (a == BT_RELABEL_HASHMOD && u->modulus == 0)
		return say(err, errlen, -EINVAL, "hashmod needs a non-zero modulus");
	if (needs_target && !*t)
		return say(err, errlen, -EINVAL, "%s needs a target_label", an);
	if (a == BT_RELABEL_REPLACE && (strchr(t, '$') ? !target_template_ok(t) : !bt_label_name_ok(t)))
		return say(err, errlen, -EINVAL, "'%s' is not a valid target_label for %s", t, an);
	if (plain_target && !bt_label_name_ok(t))
		return say(err, errlen, -EINVAL, "'%s' is not a valid target_label for %s", t, an);
	if ((a == BT_RELABEL_LOWERCASE || a == BT_RELABEL_UPPERCASE || a == BT_RELABEL_KEEPEQUAL ||
	     a == BT_RELABEL_DROPEQUAL) && !default_repl)
		return say(err, errlen, -EINVAL, "replacement cannot be set for %s", an);
	if (a == BT_RELABEL_LABELMAP && !target_template_ok(u->replacement))
		return say(err, errlen, -EINVAL, "'%s' is not a valid replacement for labelmap", u->replacement);
	if ((a == BT_RELABEL_KEEPEQUAL || a == BT_RELABEL_DROPEQUAL) &&
	    ((seen & (1u << 3)) || u->modulus || !default_sep))
		return say(err, errlen, -EINVAL, "%s takes only source_labels and target_label", an);
	if ((a == BT_RELABEL_LABELDROP || a == BT_RELABEL_LABELKEEP) &&
	    ((seen & (1u << 1)) || *t || u->modulus || !default_sep || !default_repl))
		return say(err, errlen, -EINVAL, "%s takes only a regex", an);
	return 0;
}

/* The rule in text, parsed and checked into u (which rule_free frees either way). */
static int parse_rule(struct bt_relabel_rule *u, const char *text, char *err, size_t errlen)
{
	u->action = BT_RELABEL_REPLACE;
	u->separator = strdup(";");
	u->regex_text = strdup("(.*)");
	u->target = strdup("");
	u->replacement = strdup("$1");
	u->text = strdup(text);
	if (!u->separator || !u->regex_text || !u->target || !u->replacement || !u->text)
		return -ENOMEM;
	unsigned seen = 0;
	const char *p = text;
	char *k = NULL, *v = NULL;
	int e;
	while ((e = next_field(&p, &k, &v, err, errlen)) > 0) {
		e = set_field(u, k, v, &seen, err, errlen);
		free(k);
		if (e)
			return e;
	}
	if (e)
		return e;
	if (!seen)
		return say(err, errlen, -EINVAL, "an empty rule");
	if ((e = validate(u, seen, err, errlen)))
		return e;
	char msg[256];
	if ((e = bt_regex_compile(&u->regex, u->regex_text, msg, sizeof(msg))))
		return e == -ENOMEM ? e : say(err, errlen, e, "regex '%s': %s", u->regex_text, msg);
	return 0;
}

int bt_relabel_add(struct bt_relabel *r, const char *text, char *err, size_t errlen)
{
	if (bt_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(r->v[0]), 8))
		return -ENOMEM;
	struct bt_relabel_rule *u = &r->v[r->n];
	memset(u, 0, sizeof(*u));
	int e = parse_rule(u, text, err, errlen);
	if (e) {
		if (e == -ENOMEM)
			say(err, errlen, e, "out of memory");
		rule_free(u);
		return e;
	}
	r->n++;
	return 0;
}

/* The source labels' values joined by the separator (absent labels as ""): malloc'ed or NULL. */
static char *joined(const struct bt_relabel_rule *u, const struct bt_labels *l)
{
	size_t len = 1, sl = strlen(u->separator);
	for (size_t i = 0; i < u->nsource; i++) {
		const char *v = bt_labels_get(l, u->source[i]);
		len += (v ? strlen(v) : 0) + sl;
	}
	char *s = malloc(len), *o = s;
	if (!s)
		return NULL;
	for (size_t i = 0; i < u->nsource; i++) {
		const char *v = bt_labels_get(l, u->source[i]);
		if (i)
			o = stpcpy(o, u->separator);
		o = stpcpy(o, v ? v : "");
	}
	*o = '\0';
	return s;
}

static int replace(const struct bt_relabel_rule *u, struct bt_labels *l, const char *val)
{
	struct bt_regex_match m;
	if (!bt_regex_match(&u->regex, val, &m))
		return 1;  /* no match, no replacement */
	char *target = bt_regex_expand(&u->regex, u->target, val, &m);
	char *res = target ? bt_regex_expand(&u->regex, u->replacement, val, &m) : NULL;
	int e = !res ? -ENOMEM : !bt_label_name_ok(target) ? 1 : bt_labels_set(l, target, res) ? -ENOMEM : 1;
	free(target);
	free(res);
	return e;
}

/* labelmap, labeldrop, labelkeep: over the names as they were before the rule. */
static int by_name(const struct bt_relabel_rule *u, struct bt_labels *l)
{
	struct bt_labels snap;
	bt_labels_init(&snap);
	int e = bt_labels_copy(&snap, l) ? -ENOMEM : 1;
	for (size_t i = 0; e > 0 && i < snap.n; i++) {
		struct bt_regex_match m;
		bool match = bt_regex_match(&u->regex, snap.v[i].name, &m);
		if (u->action == BT_RELABEL_LABELMAP && match) {
			char *name = bt_regex_expand(&u->regex, u->replacement, snap.v[i].name, &m);
			if (!name || bt_labels_set(l, name, snap.v[i].value))
				e = -ENOMEM;
			free(name);
		} else if ((u->action == BT_RELABEL_LABELDROP && match) || (u->action == BT_RELABEL_LABELKEEP && !match)) {
			bt_labels_set(l, snap.v[i].name, NULL);
		}
	}
	bt_labels_free(&snap);
	return e;
}

static int apply_one(const struct bt_relabel_rule *u, struct bt_labels *l)
{
	char *val = joined(u, l);
	if (!val)
		return -ENOMEM;
	const char *cur = u->target[0] ? bt_labels_get(l, u->target) : NULL;
	int e = 1;
	switch (u->action) {
	case BT_RELABEL_DROP: e = !bt_regex_match(&u->regex, val, NULL); break;
	case BT_RELABEL_KEEP: e = bt_regex_match(&u->regex, val, NULL); break;
	case BT_RELABEL_DROPEQUAL: e = strcmp(cur ? cur : "", val) != 0; break;
	case BT_RELABEL_KEEPEQUAL: e = strcmp(cur ? cur : "", val) == 0; break;
	case BT_RELABEL_REPLACE: e = replace(u, l, val); break;
	case BT_RELABEL_LOWERCASE:
	case BT_RELABEL_UPPERCASE:
		for (char *c = val; *c; c++)  /* ASCII letters; other bytes as they are */
			*c = (char)(u->action == BT_RELABEL_LOWERCASE ? tolower((unsigned char)*c) : toupper((unsigned char)*c));
		e = bt_labels_set(l, u->target, val) ? -ENOMEM : 1;
		break;
	case BT_RELABEL_HASHMOD: {
		uint8_t d[16];
		bt_md5(val, strlen(val), d);
		uint64_t h = 0;
		for (int i = 8; i < 16; i++)  /* the digest's last 8 bytes, big-endian, as Prometheus */
			h = h << 8 | d[i];
		char num[24];
		snprintf(num, sizeof(num), "%" PRIu64, h % u->modulus);
		e = bt_labels_set(l, u->target, num) ? -ENOMEM : 1;
		break;
	}
	case BT_RELABEL_LABELMAP:
	case BT_RELABEL_LABELDROP:
	case BT_RELABEL_LABELKEEP: e = by_name(u, l); break;
	}
	free(val);
	return e;
}

int bt_relabel_apply(const struct bt_relabel *r, struct bt_labels *l, size_t *by)
{
	for (size_t i = 0; i < r->n; i++) {
		int k = apply_one(&r->v[i], l);
		if (k <= 0) {
			if (k == 0 && by)
				*by = i;
			return k;
		}
	}
	return 1;
}
