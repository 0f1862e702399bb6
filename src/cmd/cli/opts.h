/* opts.h - a command's options, declared once in a table: getopt_long's tables and --help are made
 * from it here, the man pages and the bash completion by tools/gendoc.c, and tools/check-docs.py
 * holds the README, the example config and the man pages to it.
 *
 * To add an option to a command: one entry in its table (its help text there is what --help, the
 * man page and the completion show), one case where the command reads it, and a row in the
 * README's table of that command (`make check` names what is missing). */
#ifndef BT_OPTS_H
#define BT_OPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* Ids of options without a short form start here (getopt_long returns the id). */
#define BT_OPT_LONG 256

enum bt_opt_kind {
	BT_OPT_OPTION = 0,  /* -x / --name [ARG] */
	BT_OPT_HEADING,     /* starts a group: help is its title */
	BT_OPT_OPERAND,     /* not an option: arg is how the operand is written (-- COMMAND [ARGS...]) */
};

struct bt_opt {
	int id;              /* what getopt_long returns: the short form's letter, or BT_OPT_LONG and up */
	const char *name;    /* the long form without "--"; NULL for a short form only */
	const char *arg;     /* the value's name in the help (PID[,PID...]); NULL: the option takes none */
	const char *help;    /* what it does: one paragraph, wrapped when printed ('\n' breaks a line) */
	const char *def;     /* the default as users write the value, shown as "(default DEF)"; or NULL */
	const char *values;  /* what the shell completes the value with: words ("fp dwarf"), or one of
			      * @pid @tid @file @dir @format (the output formats) @format-totals
			      * (those that hold totals, not samples one by one) @command @user */
	const char *expects; /* what a missing or bad value should have been, for error messages */
	enum bt_opt_kind kind;
};

#define BT_OPT_HEAD(title) { .kind = BT_OPT_HEADING, .help = (title) }
#define BT_OPT_END { 0 }

/* One command as --help and its man page present it. */
struct bt_cmd_doc {
	const char *name;     /* "buildtrace agent" */
	const char *summary;  /* one line: the dispatcher's list, the man page's NAME */
	const char *usage;    /* the synopsis lines, '\n' between them */
	const char *about;    /* what the command does: paragraphs separated by an empty line */
	const struct bt_opt *opts;
	const char *operands; /* what the shell completes words that are not options with, as values */
};

static inline int bt_opt_end(const struct bt_opt *o)
{
	return !o->id && !o->help && !o->arg;
}

/* getopt_long's two tables for opts. */
#define BT_OPTS_MAX 96
struct bt_getopt {
	struct option longopts[BT_OPTS_MAX + 1];
	char shortopts[2 * BT_OPTS_MAX + 4];
};

/* Fills g from opts; the short string begins with prefix ("+:" ...). 0, or -E2BIG. */
int bt_opts_getopt(const struct bt_opt *opts, const char *prefix, struct bt_getopt *g);

/* The option whose id this is, or NULL. */
const struct bt_opt *bt_opts_find(const struct bt_opt *opts, int id);

/* An option as users know it, for messages: its short form when it has one ("-p"), else its long
 * one ("--call-graph"); "?" for an unknown id. buf holds it. */
const char *bt_opts_name(const struct bt_opt *opts, int id, char *buf, size_t len);

/* An option's term as --help shows it: "-p, --pid PID[,PID...]", "    --lines", "-g"; for an
 * operand its arg. */
void bt_opts_term(const struct bt_opt *o, char *buf, size_t len);

/* Prints the usage, the paragraphs about the command and the options, grouped, wrapped to 80
 * columns. */
void bt_opts_usage(FILE *f, const struct bt_cmd_doc *d);

/* Prints text wrapped to width columns, each line after the first indented by indent spaces (the
 * first begins at column col, already written). */
void bt_opts_wrap(FILE *f, const char *text, int col, int indent, int width);

#endif
