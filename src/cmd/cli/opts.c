/* opts.c - see opts.h. */
#include "cmd/cli/opts.h"

#include <errno.h>
#include <string.h>

#define USAGE_WIDTH 80
#define TERM_COL 27     /* where an option's help begins in --help */

static int is_short(int id)
{
	return id > 0 && id < BT_OPT_LONG && id != '?' && id != ':';
}

int bt_opts_getopt(const struct bt_opt *opts, const char *prefix, struct bt_getopt *g)
{
	size_t nl = 0, ns = strlen(prefix);
	memset(g, 0, sizeof(*g));
	memcpy(g->shortopts, prefix, ns);
	for (const struct bt_opt *o = opts; !bt_opt_end(o); o++) {
		if (o->kind != BT_OPT_OPTION)
			continue;
		if (nl == BT_OPTS_MAX || ns + 3 > sizeof(g->shortopts))
			return -E2BIG;
		if (o->name)
			g->longopts[nl++] = (struct option){ o->name, o->arg ? required_argument : no_argument,
							     NULL, o->id };
		if (is_short(o->id)) {
			g->shortopts[ns++] = (char)o->id;
			if (o->arg)
				g->shortopts[ns++] = ':';
		}
	}
	return 0;
}

const struct bt_opt *bt_opts_find(const struct bt_opt *opts, int id)
{
	for (const struct bt_opt *o = opts; !bt_opt_end(o); o++)
		if (o->kind == BT_OPT_OPTION && o->id == id)
			return o;
	return NULL;
}

const char *bt_opts_name(const struct bt_opt *opts, int id, char *buf, size_t len)
{
	const struct bt_opt *o = bt_opts_find(opts, id);
	if (!o)
		snprintf(buf, len, "?");
	else if (is_short(o->id))
		snprintf(buf, len, "-%c", o->id);
	else
		snprintf(buf, len, "--%s", o->name);
	return buf;
}

void bt_opts_term(const struct bt_opt *o, char *buf, size_t len)
{
	if (o->kind == BT_OPT_OPERAND) {
		snprintf(buf, len, "%s", o->arg);
		return;
	}
	char sh[8] = "    ";
	if (is_short(o->id))
		snprintf(sh, sizeof(sh), "-%c%s", o->id, o->name ? ", " : "");
	snprintf(buf, len, "%s%s%s%s%s", sh, o->name ? "--" : "", o->name ? o->name : "", o->arg ? " " : "",
		 o->arg ? o->arg : "");
}

/* The length of the word at s: up to a space, a newline or the end. */
static size_t word_len(const char *s)
{
	size_t n = 0;
	while (s[n] && s[n] != ' ' && s[n] != '\n')
		n++;
	return n;
}

void bt_opts_wrap(FILE *f, const char *text, int col, int indent, int width)
{
	const char *s = text;
	int at = col, fresh = 1;  /* fresh: nothing written on this line yet */
	while (*s) {
		if (*s == ' ') {
			s++;
			continue;
		}
		if (*s == '\n') {
			fprintf(f, "\n%*s", indent, "");
			at = indent;
			fresh = 1;
			s++;
			continue;
		}
		size_t n = word_len(s);
		if (!fresh && at + 1 + (int)n > width) {
			fprintf(f, "\n%*s", indent, "");
			at = indent;
			fresh = 1;
		}
		if (!fresh) {
			fputc(' ', f);
			at++;
		}
		fwrite(s, 1, n, f);
		at += (int)n;
		fresh = 0;
		s += n;
	}
	fputc('\n', f);
}

/* One option (or operand) of --help: its term, then its help from TERM_COL. */
static void usage_opt(FILE *f, const struct bt_opt *o)
{
	char term[160], text[2048];
	bt_opts_term(o, term, sizeof(term));
	fprintf(f, "  %s", term);
	int col = 2 + (int)strlen(term);
	if (col > TERM_COL - 2) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", TERM_COL - col, "");
	snprintf(text, sizeof(text), "%s%s%s%s", o->help ? o->help : "", o->def ? " (default " : "",
		 o->def ? o->def : "", o->def ? ")" : "");
	bt_opts_wrap(f, text, TERM_COL, TERM_COL, USAGE_WIDTH);
}

/* The paragraphs of about, each wrapped, an empty line after each. */
static void usage_about(FILE *f, const char *about)
{
	char para[4096];
	for (const char *s = about; s && *s;) {
		const char *end = strstr(s, "\n\n");
		size_t n = end ? (size_t)(end - s) : strlen(s);
		if (n >= sizeof(para))
			n = sizeof(para) - 1;
		memcpy(para, s, n);
		para[n] = '\0';
		for (char *p = para; *p; p++)
			if (*p == '\n')
				*p = ' ';
		bt_opts_wrap(f, para, 0, 0, USAGE_WIDTH);
		fputc('\n', f);
		s = end ? end + 2 : s + n;
	}
}

void bt_opts_usage(FILE *f, const struct bt_cmd_doc *d)
{
	const char *s = d->usage;
	for (int first = 1; s && *s; first = 0) {
		size_t n = strcspn(s, "\n");
		fprintf(f, "%s%.*s\n", first ? "usage: " : "       ", (int)n, s);
		s += n + (s[n] == '\n');
	}
	fputc('\n', f);
	usage_about(f, d->about);
	int grouped = 0;
	for (const struct bt_opt *o = d->opts; !bt_opt_end(o); o++) {
		if (o->kind == BT_OPT_HEADING) {
			fprintf(f, "%s%s:\n", grouped ? "\n" : "", o->help);
			grouped = 1;
			continue;
		}
		usage_opt(f, o);
	}
}
