/* relabel.h - label sets and Prometheus' relabeling rules over them (relabel_config): the same
 * actions, defaults, checks and results, so that rules written for Prometheus, Grafana Alloy or the
 * Parca agent mean the same here. No I/O: rules come in as text, label sets go in and out. */
#ifndef BT_RELABEL_H
#define BT_RELABEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/regex.h"

/* A label set: names unique, sorted (bytewise), values never empty (an empty value is no label,
 * as in Prometheus). */
struct bt_label {
	char *name, *value;
};
struct bt_labels {
	struct bt_label *v;
	size_t n, cap;
};

void bt_labels_init(struct bt_labels *l);
void bt_labels_free(struct bt_labels *l);
/* The value of name, or NULL when there is no such label. */
const char *bt_labels_get(const struct bt_labels *l, const char *name);
/* Sets name to value (copied); a NULL or empty value removes the label. 0 or -ENOMEM. */
int bt_labels_set(struct bt_labels *l, const char *name, const char *value);
/* dst (initialized, emptied first) becomes a copy of src. 0 or -ENOMEM. */
int bt_labels_copy(struct bt_labels *dst, const struct bt_labels *src);
/* Whether s is a label name: [a-zA-Z_][a-zA-Z0-9_]* (Prometheus' classic names). */
bool bt_label_name_ok(const char *s);

enum bt_relabel_action {
	BT_RELABEL_REPLACE, BT_RELABEL_KEEP, BT_RELABEL_DROP, BT_RELABEL_KEEPEQUAL, BT_RELABEL_DROPEQUAL,
	BT_RELABEL_HASHMOD, BT_RELABEL_LABELMAP, BT_RELABEL_LABELDROP, BT_RELABEL_LABELKEEP,
	BT_RELABEL_LOWERCASE, BT_RELABEL_UPPERCASE,
};

struct bt_relabel_rule {
	enum bt_relabel_action action;
	char **source;           /* source_labels */
	size_t nsource;
	char *separator;         /* default ";" */
	char *regex_text;        /* default "(.*)" */
	struct bt_regex regex;   /* regex_text, anchored */
	uint64_t modulus;        /* hashmod */
	char *target;            /* target_label; "" unset */
	char *replacement;       /* default "$1" */
	char *text;              /* the rule as written, for messages */
};

struct bt_relabel {
	struct bt_relabel_rule *v;
	size_t n, cap;
};

void bt_relabel_init(struct bt_relabel *r);
void bt_relabel_free(struct bt_relabel *r);

/* Adds one rule written as blank-separated key=value fields: action, source_labels (names joined by
 * commas), separator, regex, modulus, target_label, replacement; a value may be double-quoted
 * (with \" and \\ inside) to hold blanks. Defaults and checks are Prometheus': 0, or -EINVAL with
 * what is wrong in err (an unknown key or action, a bad regex, a missing target_label ...), or
 * -ENOMEM. */
int bt_relabel_add(struct bt_relabel *r, const char *text, char *err, size_t errlen);

/* Applies the rules in order to l: 1 when l is kept (relabeled), 0 when a rule dropped it (the
 * index of that rule into *by, when by is not NULL; l is then left as that rule found it), or
 * -ENOMEM. */
int bt_relabel_apply(const struct bt_relabel *r, struct bt_labels *l, size_t *by);

#endif
