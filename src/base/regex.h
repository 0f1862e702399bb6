/* regex.h - regular expressions as Prometheus' relabeling writes them (RE2 syntax, anchored at both
 * ends), run by the C library's POSIX extended regular expressions: the pattern is translated, the
 * RE2 forms POSIX lacks rewritten ((?:...), (?P<name>...), \d \w \s, escapes in brackets, '.' not
 * matching a newline, a leading (?i)) and those it cannot express refused with a message (lazy
 * quantifiers, other flags, back-references, Unicode classes). What still differs: POSIX picks the
 * leftmost-longest submatches where RE2 prefers the first alternative, and matching is by bytes, not
 * UTF-8 characters. Templates ($1, ${1}, $name, $$) expand as Go's Regexp.Expand does. */
#ifndef BT_REGEX_H
#define BT_REGEX_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#define BT_REGEX_MAX_GROUPS 32

struct bt_regex {
	regex_t re;
	bool compiled;
	unsigned ngroups;                           /* the pattern's own capturing groups */
	unsigned nsub;                              /* POSIX subexpressions, the anchoring one first */
	unsigned char map[BT_REGEX_MAX_GROUPS + 1]; /* group i -> the POSIX subexpression holding it */
	char *names[BT_REGEX_MAX_GROUPS + 1];       /* (?P<name>...) names, NULL for unnamed groups */
};

/* A match: span i of group i (0 the whole text), start -1 when the group did not take part. */
struct bt_regex_match {
	int start[BT_REGEX_MAX_GROUPS + 1], end[BT_REGEX_MAX_GROUPS + 1];
};

/* Compiles pattern, anchored at both ends. 0, or -EINVAL with why in err (the RE2 form that is not
 * supported, or the C library's message), -ENOMEM. */
int bt_regex_compile(struct bt_regex *r, const char *pattern, char *err, size_t errlen);

/* Whether the whole of s matches; the groups' spans into m when it is not NULL. */
bool bt_regex_match(const struct bt_regex *r, const char *s, struct bt_regex_match *m);

/* template with $N, ${N}, $name and ${name} replaced by those groups of match m of s (empty when
 * the group does not exist or did not take part), $$ by '$', and a '$' starting none of those kept:
 * a malloc'ed string, or NULL on ENOMEM. */
char *bt_regex_expand(const struct bt_regex *r, const char *tmpl, const char *s,
		      const struct bt_regex_match *m);

void bt_regex_free(struct bt_regex *r);

#endif
