/* gendoc.c - makes buildtrace's man pages, its bash completion and a JSON description of its
 * options from the commands' option tables (src/cmd/cmdtab.c, src/cmd/cli/opts.h), so that what
 * they say is what --help says. tools/check-docs.py reads the JSON to hold the README and the
 * example config to the same tables.
 *
 *   gendoc man DIR DATE FRAGMENTS   buildtrace.1, buildtrace-SUB.1, buildtrace-agent.conf.5 in DIR,
 *                                   each followed by FRAGMENTS/PAGE.in when there is one
 *   gendoc bash FILE                the completion script
 *   gendoc json FILE                every command's options and the agent's settings
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/agent/agentconf.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"
#include "output/output.h"

#define AGENT_CONF_PATH "/etc/buildtrace/agent.conf"

/* ---- roff ---------------------------------------------------------------------------------- */

/* Text as roff shows it, on one line: backslashes and dashes escaped (a dash stays a minus sign,
 * to be copied as such). */
static void roff_esc(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else
			fputc(s[i], f);
	}
}

static void roff_text(FILE *f, const char *s)
{
	roff_esc(f, s, strlen(s));
}

/* Prose as roff wants it: lines of at most 80 bytes, each sentence on a line of its own (roff
 * spaces sentences by their line ends), a line break of the table ('\n') a .br request. */
static void roff_prose(FILE *f, const char *s)
{
	size_t col = 0;
	while (*s) {
		if (*s == ' ') {
			s++;
			continue;
		}
		if (*s == '\n') {
			fputs(col ? "\n.br\n" : ".br\n", f);
			col = 0;
			s++;
			continue;
		}
		size_t n = strcspn(s, " \n"), width = n;
		for (size_t i = 0; i < n; i++)
			width += s[i] == '-' || s[i] == '\\';
		if (col && col + 1 + width > 79) {
			fputc('\n', f);
			col = 0;
		} else if (col) {
			fputc(' ', f);
			col++;
		}
		if (!col && (*s == '.' || *s == '\''))
			fputs("\\&", f), col += 2;
		roff_esc(f, s, n);
		col += width;
		s += n;
		/* a sentence ends: the next begins a line */
		if (col && s[-1] == '.' && *s == ' ') {
			fputc('\n', f);
			col = 0;
		}
	}
	if (col)
		fputc('\n', f);
}

/* An option's term: the dashed forms bold, the value italic; an operand bold. */
static void roff_term(FILE *f, const struct bt_opt *o, int setting)
{
	fputs(".TP\n", f);
	if (o->kind == BT_OPT_OPERAND) {
		fputs("\\fB", f);
		roff_text(f, o->arg);
		fputs("\\fR\n", f);
		return;
	}
	if (setting) {
		fprintf(f, "\\fB");
		roff_text(f, o->name);
		fputs("\\fR = \\fI", f);
		roff_text(f, o->arg);
		fputs("\\fR\n", f);
		return;
	}
	if (o->id > 0 && o->id < BT_OPT_LONG)
		fprintf(f, "\\fB\\-%c\\fR%s", o->id, o->name ? ", " : "");
	if (o->name) {
		fputs("\\fB\\-\\-", f);
		roff_text(f, o->name);
		fputs("\\fR", f);
	}
	if (o->arg) {
		fputs(" \\fI", f);
		roff_text(f, o->arg);
		fputs("\\fR", f);
	}
	fputc('\n', f);
}

static void roff_help(FILE *f, const struct bt_opt *o)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s%s%s%s", o->help, o->def ? " (default " : "", o->def ? o->def : "",
		 o->def ? ")" : "");
	roff_prose(f, text);
}

/* Paragraphs separated by an empty line; the first follows a section heading. */
static void roff_paragraphs(FILE *f, const char *text)
{
	for (int first = 1; text && *text; first = 0) {
		const char *end = strstr(text, "\n\n");
		size_t n = end ? (size_t)(end - text) : strlen(text);
		char *para = strndup(text, n);
		if (!para)
			exit(1);
		for (char *p = para; *p; p++)
			if (*p == '\n')
				*p = ' ';
		if (!first)
			fputs(".PP\n", f);
		roff_prose(f, para);
		free(para);
		text = end ? end + 2 : text + n;
	}
}

/* The options, a subsection per heading. */
static void roff_options(FILE *f, const struct bt_opt *opts, const char *title)
{
	fprintf(f, ".SH %s\n", title);
	for (const struct bt_opt *o = opts; !bt_opt_end(o); o++) {
		if (o->kind == BT_OPT_HEADING) {
			fputs(".SS ", f);
			roff_text(f, o->help);
			fputc('\n', f);
			continue;
		}
		roff_term(f, o, 0);
		roff_help(f, o);
	}
}

/* The synopsis: each usage line, the command's words bold. */
static void roff_synopsis(FILE *f, const struct bt_cmd_doc *d)
{
	size_t cmdlen = strlen(d->name);
	fputs(".SH SYNOPSIS\n.nf\n", f);
	for (const char *s = d->usage; *s;) {
		size_t n = strcspn(s, "\n");
		char *line = strndup(s, n);
		if (!line)
			exit(1);
		size_t bold = !strncmp(line, d->name, cmdlen) ? cmdlen : 0;
		fputs("\\fB", f);
		char *rest = line + bold, save = *rest;
		*rest = '\0';
		roff_text(f, line);
		*rest = save;
		fputs("\\fR", f);
		roff_text(f, rest);
		fputc('\n', f);
		free(line);
		s += n + (s[n] == '\n');
	}
	fputs(".fi\n", f);
}

/* FRAGMENTS/PAGE.in, copied as it is: the sections written by hand (examples, files...). */
static int roff_fragment(FILE *f, const char *dir, const char *page)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.in", dir, page);
	FILE *in = fopen(path, "re");
	if (!in)
		return errno == ENOENT ? 0 : -errno;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, f);
	fclose(in);
	return 0;
}

static void roff_header(FILE *f, const char *page, int section, const char *date)
{
	char up[128];
	size_t i = 0;
	for (; page[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)(page[i] >= 'a' && page[i] <= 'z' ? page[i] - 32 : page[i]);
	up[i] = '\0';
	fprintf(f, ".\\\" Made by tools/gendoc.c from buildtrace's option tables: edit those, or "
		"docs/man/%s.%d.in.\n", page, section);
	fputs(".TH ", f);
	roff_text(f, up);
	fprintf(f, " %d %s \"buildtrace %s\" \"%s\"\n", section, date, BT_VERSION,
		section == 5 ? "File Formats" : "User Commands");
	/* no hyphenation nor justification: option names and paths are copied from the page */
	fputs(".nh\n.ad l\n.SH NAME\n", f);
	roff_text(f, page);
	fputs(" \\-\n", f);
}

static FILE *open_page(const char *dir, const char *page, int section)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.%d", dir, page, section);
	FILE *f = fopen(path, "we");
	if (!f)
		fprintf(stderr, "gendoc: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

static int close_page(FILE *f, const char *dir, const char *page, int section, const char *see_also)
{
	char name[256];
	snprintf(name, sizeof(name), "%s.%d", page, section);
	int err = roff_fragment(f, dir, name);
	fprintf(f, ".SH SEE ALSO\n%s\n", see_also);
	if (fclose(f) || err) {
		fprintf(stderr, "gendoc: cannot write %s\n", name);
		return 1;
	}
	return 0;
}

/* buildtrace-SUB(1), or buildtrace(1) for the live session with the list of subcommands. */
static int man_command(const char *dir, const char *frags, const char *date, const struct bt_command *c)
{
	const struct bt_cmd_doc *d = c->doc();
	int top = !strcmp(c->name, "record");
	char page[128], see[4096] = "";
	snprintf(page, sizeof(page), top ? "buildtrace" : "buildtrace-%s", c->name);
	FILE *f = open_page(dir, page, 1);
	if (!f)
		return 1;
	roff_header(f, page, 1, date);
	roff_prose(f, top ? "a live symbolizing CPU profiler for Linux, on eBPF, by build-id" : d->summary);
	roff_synopsis(f, d);
	if (top)
		fputs(".nf\n\\fBbuildtrace\\fR \\fISUBCOMMAND\\fR [\\fIARGS\\fR]\n.fi\n", f);
	fputs(".SH DESCRIPTION\n", f);
	roff_paragraphs(f, d->about);
	roff_options(f, d->opts, "OPTIONS");
	if (top) {
		fputs(".SH COMMANDS\n", f);
		for (size_t i = 0; i < bt_ncommands; i++) {
			if (!strcmp(bt_commands[i].name, "record"))
				continue;
			fputs(".TP\n.BR buildtrace\\-", f);
			roff_text(f, bt_commands[i].name);
			fputs(" (1)\n", f);
			roff_prose(f, bt_commands[i].doc()->summary);
		}
		for (size_t i = 0; i < bt_ncommands; i++)
			if (strcmp(bt_commands[i].name, "record"))
				snprintf(see + strlen(see), sizeof(see) - strlen(see), ".BR buildtrace\\-%s (1),\n",
					 bt_commands[i].name);
		snprintf(see + strlen(see), sizeof(see) - strlen(see), ".BR buildtrace\\-agent.conf (5),\n.BR perf (1)");
	} else {
		snprintf(see, sizeof(see), ".BR buildtrace (1)%s", !strcmp(c->name, "agent") ?
			 ",\n.BR buildtrace\\-agent.conf (5),\n.BR systemd.service (5)" : "");
	}
	return close_page(f, frags, page, 1, see) ? 1 : 0;
}

/* buildtrace-agent.conf(5): the settings as config file lines. */
static int man_agent_conf(const char *dir, const char *frags, const char *date)
{
	struct bt_opt s[BT_OPTS_MAX];
	size_t n = bt_agent_conf_options(s, BT_OPTS_MAX, BT_OPT_LONG);
	FILE *f = open_page(dir, "buildtrace-agent.conf", 5);
	if (!f)
		return 1;
	roff_header(f, "buildtrace-agent.conf", 5, date);
	fputs("settings of the buildtrace fleet agent\n.SH SYNOPSIS\n", f);
	roff_text(f, AGENT_CONF_PATH);
	fputs("\n.SH DESCRIPTION\n", f);
	roff_paragraphs(f, "buildtrace agent --config FILE reads its settings from FILE: one KEY = VALUE per "
			"line, blanks around the = ignored; a # starts a comment, to the end of the line; empty "
			"lines are skipped. A key given twice takes the later value, but label and header, which "
			"add one more each time. A key may also be written with underscores for its dashes "
			"(output_dir).\n\n"
			"Each setting is also an option of buildtrace agent, --KEY VALUE, and an option wins over "
			"the file. The agent reads the file again on SIGHUP (systemctl reload buildtrace-agent), "
			"and keeps its old settings when the new ones are wrong.");
	fputs(".SH SETTINGS\n", f);
	for (size_t i = 0; i < n; i++) {
		roff_term(f, &s[i], 1);
		roff_help(f, &s[i]);
		const char *alias = bt_agent_conf_alias(s[i].name);
		if (alias && !strchr(alias, '_')) {
			fputs(".br\nAlso written \\fB", f);
			roff_text(f, alias);
			fputs("\\fR.\n", f);
		}
	}
	return close_page(f, frags, "buildtrace-agent.conf", 5,
			  ".BR buildtrace (1),\n.BR buildtrace\\-agent (1)") ? 1 : 0;
}

static int gen_man(const char *dir, const char *date, const char *frags)
{
	int rc = 0;
	for (size_t i = 0; i < bt_ncommands; i++)
		rc |= man_command(dir, frags, date, &bt_commands[i]);
	return rc | man_agent_conf(dir, frags, date);
}

/* ---- bash ---------------------------------------------------------------------------------- */

/* Each output format's name, in bt_format_names' order, and whether it shows samples one by one
 * (not totals); how many. */
#define MAX_FORMATS 32
static size_t formats(char names[][32], bool *per_sample)
{
	size_t k = 0;
	for (const char *s = bt_format_names(); *s && k < MAX_FORMATS; k++) {
		size_t n = strcspn(s, ", ");
		snprintf(names[k], 32, "%.*s", (int)n, s);
		enum bt_format fmt;
		per_sample[k] = !bt_format_parse(names[k], &fmt) && bt_format_per_sample(fmt);
		s += n;
		s += strspn(s, ", ");
	}
	return k;
}

/* What the shell completes a value with: @format becomes the output formats, @format-totals those
 * that hold totals (what report and trace write), each followed by ':' in "@format:"; other words
 * are kept. */
static void bash_values(FILE *f, const char *values)
{
	if (!values)
		return;
	if (strncmp(values, "@format", 7)) {
		for (; *values; values++)
			fputs(*values == '\'' ? "'\\''" : (char[]){ *values, 0 }, f);
		return;
	}
	bool totals = !strncmp(values, "@format-totals", 14);
	const char *suffix = values + (totals ? 14 : 7);
	char names[MAX_FORMATS][32];
	bool per_sample[MAX_FORMATS];
	size_t n = formats(names, per_sample);
	for (size_t i = 0, first = 1; i < n; i++)
		if (!totals || !per_sample[i]) {
			fprintf(f, "%s%s%s", first ? "" : " ", names[i], suffix);
			first = 0;
		}
}

static void bash_spec(FILE *f, const struct bt_command *c)
{
	const struct bt_cmd_doc *d = c->doc();
	fprintf(f, "\t%s)\n\t\topts='", c->name);
	int first = 1;
	for (const struct bt_opt *o = d->opts; !bt_opt_end(o); o++) {
		if (o->kind != BT_OPT_OPTION)
			continue;
		if (o->id > 0 && o->id < BT_OPT_LONG)
			fprintf(f, "%s-%c", first ? "" : " ", o->id), first = 0;
		if (o->name)
			fprintf(f, "%s--%s", first ? "" : " ", o->name), first = 0;
	}
	fprintf(f, "'\n\t\toperands='%s'\n\t\tvals=(", d->operands ? d->operands : "");
	first = 1;
	for (const struct bt_opt *o = d->opts; !bt_opt_end(o); o++) {
		if (o->kind != BT_OPT_OPTION || !o->arg)
			continue;
		for (int form = 0; form < 2; form++) {
			if (form == 0 && !(o->id > 0 && o->id < BT_OPT_LONG))
				continue;
			if (form == 1 && !o->name)
				continue;
			if (form == 0)
				fprintf(f, "%s[-%c]='", first ? "" : " ", o->id);
			else
				fprintf(f, "%s[--%s]='", first ? "" : " ", o->name);
			bash_values(f, o->values);
			fputc('\'', f);
			first = 0;
		}
	}
	fputs(")\n\t\t;;\n", f);
}

static const char bash_body[] =
	"# The value of option $1 or an operand, in cur: $2 is what to complete it with (words, or\n"
	"# @pid @tid @file @dir @user @command).\n"
	"_buildtrace_value()\n"
	"{\n"
	"\tlocal what=$1 pre='' p\n"
	"\tcase $what in\n"
	"\t@pid | @tid)\n"
	"\t\t# a list: complete its last element\n"
	"\t\tif [[ $cur == *,* ]]; then pre=${cur%,*},; fi\n"
	"\t\tlocal ids=()\n"
	"\t\tif [[ $what == @pid ]]; then for p in /proc/[0-9]*; do ids+=(\"${p#/proc/}\"); done\n"
	"\t\telse for p in /proc/[0-9]*/task/[0-9]*; do ids+=(\"${p##*/}\"); done; fi\n"
	"\t\tCOMPREPLY=($(compgen -P \"$pre\" -W \"${ids[*]}\" -- \"${cur##*,}\"))\n"
	"\t\t;;\n"
	"\t@file) COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames 2>/dev/null ;;\n"
	"\t@dir) COMPREPLY=($(compgen -d -- \"$cur\")); compopt -o filenames 2>/dev/null ;;\n"
	"\t@user) COMPREPLY=($(compgen -u -- \"$cur\")) ;;\n"
	"\t@command) COMPREPLY=($(compgen -c -- \"$cur\")) ;;\n"
	"\t*:)\n"
	"\t\t# FORMAT:FILE: a format, then the file after the colon\n"
	"\t\tif [[ $cur == *:* ]]; then\n"
	"\t\t\tCOMPREPLY=($(compgen -P \"${cur%%:*}:\" -f -- \"${cur#*:}\"))\n"
	"\t\telse\n"
	"\t\t\tCOMPREPLY=($(compgen -W \"$what\" -- \"$cur\"))\n"
	"\t\t\tcompopt -o nospace 2>/dev/null\n"
	"\t\tfi\n"
	"\t\t;;\n"
	"\t*) COMPREPLY=($(compgen -W \"$what\" -- \"$cur\")) ;;\n"
	"\tesac\n"
	"}\n"
	"\n"
	"_buildtrace()\n"
	"{\n"
	"\tlocal words=() cword=0 j w\n"
	"\t# a colon breaks words for bash (FORMAT:FILE): glue them back\n"
	"\tfor ((j = 0; j < ${#COMP_WORDS[@]}; j++)); do\n"
	"\t\tw=${COMP_WORDS[j]}\n"
	"\t\tif ((j > 1)) && [[ $w == : || ${COMP_WORDS[j - 1]} == : ]]; then\n"
	"\t\t\twords[${#words[@]} - 1]+=$w\n"
	"\t\telse\n"
	"\t\t\twords+=(\"$w\")\n"
	"\t\tfi\n"
	"\t\t((j == COMP_CWORD)) && cword=$((${#words[@]} - 1))\n"
	"\tdone\n"
	"\tlocal cur=${words[cword]-} prev=${words[cword - 1]-} cmd=record start=1 i nops=0\n"
	"\tlocal opts operands\n"
	"\tlocal -A vals\n"
	"\tCOMPREPLY=()\n"
	"\tif ((cword == 1)) && [[ $cur != -* ]]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$_buildtrace_commands\" -- \"$cur\"))\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif [[ \" $_buildtrace_commands \" == *\" ${words[1]-} \"* ]]; then\n"
	"\t\tcmd=${words[1]}\n"
	"\t\tstart=2\n"
	"\tfi\n"
	"\t_buildtrace_spec \"$cmd\"\n"
	"\t# the words before: option values, a '--' or (the live session's) a command, operands\n"
	"\tfor ((i = start; i < cword; i++)); do\n"
	"\t\tw=${words[i]}\n"
	"\t\tif [[ $w == -- || ( $cmd == record && $w != -* ) ]]; then\n"
	"\t\t\t[[ $w == -- ]] && ((i++))\n"
	"\t\t\tif ((i == cword)); then _buildtrace_value @command; else _buildtrace_value @file; fi\n"
	"\t\t\treturn\n"
	"\t\tfi\n"
	"\t\tif [[ $w == -* ]]; then\n"
	"\t\t\tif [[ -v vals[$w] ]]; then ((i++)); fi\n"
	"\t\t\tcontinue\n"
	"\t\tfi\n"
	"\t\t((nops++))\n"
	"\tdone\n"
	"\tif ((cword - 1 >= start)) && [[ $prev == -* && -v vals[$prev] ]]; then\n"
	"\t\t_buildtrace_value \"${vals[$prev]}\"\n"
	"\telif [[ $cur == -* ]]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	"\telif [[ $operands == @* || ( -n $operands && $nops == 0 ) ]]; then\n"
	"\t\t_buildtrace_value \"$operands\"\n"
	"\telif [[ -n $operands ]]; then\n"
	"\t\t_buildtrace_value @file\n"
	"\tfi\n"
	"\t# bash replaces only what follows the last colon\n"
	"\tif [[ $cur == *:* && $cur != \"${COMP_WORDS[COMP_CWORD]}\" ]]; then\n"
	"\t\tCOMPREPLY=(\"${COMPREPLY[@]#\"${cur%\"${cur##*:}\"}\"}\")\n"
	"\tfi\n"
	"}\n"
	"complete -F _buildtrace buildtrace\n";

static int gen_bash(const char *path)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, "gendoc: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	fputs("# bash completion for buildtrace(1): its subcommands, their options and the values these\n"
	      "# take. Made by tools/gendoc.c from buildtrace's option tables; edit those.\n\n"
	      "_buildtrace_commands='", f);
	for (size_t i = 0; i < bt_ncommands; i++)
		fprintf(f, "%s%s", i ? " " : "", bt_commands[i].name);
	fputs("'\n\n# A command's options (opts), what its operands are (operands) and what the value of each\n"
	      "# option that takes one is completed with (vals).\n_buildtrace_spec()\n{\n\tcase $1 in\n", f);
	for (size_t i = 0; i < bt_ncommands; i++)
		bash_spec(f, &bt_commands[i]);
	fputs("\tesac\n}\n\n", f);
	fputs(bash_body, f);
	return fclose(f) ? 1 : 0;
}

/* ---- json ---------------------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* One entry of a table; alias, when not NULL, adds the config file's other spelling of a setting
 * (its value may be "" for none). */
static void json_opt(FILE *f, const struct bt_opt *o, const char *sep, const char *alias)
{
	static const char *const kinds[] = { "option", "heading", "operand" };
	char sh[2] = { 0 };
	if (o->kind == BT_OPT_OPTION && o->id > 0 && o->id < BT_OPT_LONG)
		sh[0] = (char)o->id;
	fprintf(f, "%s\n      {\"kind\": \"%s\", \"short\": ", sep, kinds[o->kind]);
	json_str(f, sh[0] ? sh : NULL);
	fputs(", \"long\": ", f);
	json_str(f, o->name);
	fputs(", \"arg\": ", f);
	json_str(f, o->arg);
	fputs(", \"default\": ", f);
	json_str(f, o->def);
	fputs(", \"values\": ", f);
	json_str(f, o->values);
	fputs(", \"help\": ", f);
	json_str(f, o->help);
	if (alias) {
		fputs(", \"alias\": ", f);
		json_str(f, *alias ? alias : NULL);
	}
	fputc('}', f);
}

static int gen_json(const char *path)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, "gendoc: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(f, "{\n  \"version\": \"%s\",\n  \"formats\": ", BT_VERSION);
	json_str(f, bt_format_names());
	char names[MAX_FORMATS][32];
	bool per_sample[MAX_FORMATS];
	size_t nf = formats(names, per_sample);
	fputs(",\n  \"per_sample_formats\": [", f);
	for (size_t i = 0, first = 1; i < nf; i++)
		if (per_sample[i]) {
			fputs(first ? "" : ", ", f);
			json_str(f, names[i]);
			first = 0;
		}
	fputc(']', f);
	fputs(",\n  \"commands\": [", f);
	for (size_t i = 0; i < bt_ncommands; i++) {
		const struct bt_cmd_doc *d = bt_commands[i].doc();
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_str(f, bt_commands[i].name);
		fputs(", \"summary\": ", f);
		json_str(f, d->summary);
		fputs(", \"usage\": ", f);
		json_str(f, d->usage);
		fputs(", \"options\": [", f);
		const char *sep = "";
		for (const struct bt_opt *o = d->opts; !bt_opt_end(o); o++, sep = ",")
			json_opt(f, o, sep, NULL);
		fputs("]}", f);
	}
	fputs("],\n  \"settings\": [", f);
	struct bt_opt s[BT_OPTS_MAX];
	size_t n = bt_agent_conf_options(s, BT_OPTS_MAX, BT_OPT_LONG);
	for (size_t i = 0; i < n; i++) {
		const char *alias = bt_agent_conf_alias(s[i].name);
		json_opt(f, &s[i], i ? "," : "", alias ? alias : "");
	}
	fputs("]\n}\n", f);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "man"))
		return gen_man(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "bash"))
		return gen_bash(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "json"))
		return gen_json(argv[2]);
	fprintf(stderr, "usage: gendoc man DIR DATE FRAGMENTS | bash FILE | json FILE\n");
	return 2;
}
