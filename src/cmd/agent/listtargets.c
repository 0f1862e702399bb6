/* listtargets.c - `buildtrace agent targets`: every live process with its __meta_* labels and the
 * labels the configured rules give it (or the rule that drops it), as the agent would name it, for
 * writing rules. Names and command lines are the processes' own text: escaped wherever printed. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "cmd/agent/agentconf.h"
#include "cmd/agent/series.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "output/jsonout.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: buildtrace agent targets [--config FILE] [--json]\n"
		"  Lists every live process: its metadata (__meta_* labels) and the labels the config\n"
		"  file's relabel rules, labels, app-name and target-env give it, or the rule that drops it:\n"
		"  what the agent pushes it as. Run as root to read every process's executable.\n"
		"  --config FILE  the agent's config file\n"
		"  --json         one JSON array: pid, meta, labels (null when dropped), dropped_by (the rule's\n"
		"                 number, from 1), series\n");
}

/* s quoted, as Prometheus prints label values: \\ \" \n \t escaped, other control bytes and bytes
 * that are not UTF-8 as \xHH. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t u = c >= 0x80 ? bt_utf8_len(s + i, n - i) : 1;
		if (c == '\\' || c == '"')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f || u == 0)
			fprintf(f, "\\x%02x", c);
		else
			fwrite(s + i, 1, u, f);
		i += u ? u : 1;
	}
	fputc('"', f);
}

static void put_json_labels(FILE *f, const struct bt_labels *l)
{
	fputc('{', f);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			fputs(", ", f);
		bt_json_put_string(f, l->v[i].name, strlen(l->v[i].name));
		fputs(": ", f);
		bt_json_put_string(f, l->v[i].value, strlen(l->v[i].value));
	}
	fputc('}', f);
}

/* One process: its metadata, then what the rules make of it. */
static void show(FILE *f, bool json, bool first, int pid, const struct bt_labels *meta, const struct bt_labels *out,
		 int kept, size_t by, const struct bt_relabel *rules)
{
	if (json) {
		fprintf(f, "%s\n {\"pid\": %d, \"meta\": ", first ? "" : ",", pid);
		put_json_labels(f, meta);
		fputs(", \"labels\": ", f);
		if (kept)
			put_json_labels(f, out);
		else
			fputs("null", f);
		fprintf(f, ", \"dropped_by\": ");
		kept ? fputs("null", f) : (void)fprintf(f, "%zu", by + 1);
		fputs(", \"series\": ", f);
		char *text = kept ? bt_targets_series_text(out) : NULL;
		text ? bt_json_put_string(f, text, strlen(text)) : (void)fputs("null", f);
		free(text);
		fputc('}', f);
		return;
	}
	const char *comm = bt_labels_get(meta, "__meta_process_comm");
	fprintf(f, "%d ", pid);
	put_quoted(f, comm ? comm : "");
	fputc('\n', f);
	for (size_t i = 0; i < meta->n; i++) {
		fprintf(f, "    %s=", meta->v[i].name);
		put_quoted(f, meta->v[i].value);
		fputc('\n', f);
	}
	if (!kept) {
		fprintf(f, "  => dropped by rule %zu: ", by + 1);
		put_quoted(f, rules->v[by].text);
		fputs("\n\n", f);
		return;
	}
	fputs("  => {", f);
	for (size_t i = 0; i < out->n; i++) {
		fprintf(f, "%s%s=", i ? ", " : "", out->v[i].name);
		put_quoted(f, out->v[i].value);
	}
	fputs("}\n\n", f);
}

static int by_pid(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The live processes' pids, sorted (*out malloc'ed): how many, or -errno. */
static int list_pids(int **out)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	int *v = NULL, n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (n == cap) {
			int *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 256) * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = (int)pid;
	}
	closedir(d);
	qsort(v, (size_t)n, sizeof(*v), by_pid);
	*out = v;
	return n;
}

/* Every process through the targets' configuration, printed. */
static int list(const struct agent_series *as, bool json)
{
	int *pids = NULL;
	int n = list_pids(&pids);
	if (n < 0)
		return bt_cli_error(1, "cannot list /proc: %s", strerror(-n));
	const struct bt_targets_conf *c = &as->targets.conf;
	if (json)
		fputc('[', stdout);
	bool first = true;
	for (int i = 0; i < n; i++) {
		struct bt_procmeta m;
		if (bt_procmeta_read(c->proc_root, pids[i], c->env, c->nenv, &m) != 0)
			continue;  /* gone meanwhile */
		struct bt_labels meta, l;
		bt_labels_init(&meta);
		bt_labels_init(&l);
		int e = bt_targets_meta(&m, c->env, c->nenv, &meta);
		for (size_t k = 0; !e && c->labels && k < c->labels->n; k++)
			e = bt_labels_set(&l, c->labels->v[k].name, c->labels->v[k].value);
		for (size_t k = 0; !e && k < meta.n; k++)
			e = bt_labels_set(&l, meta.v[k].name, meta.v[k].value);
		size_t by = 0;
		int kept = e ? e : bt_targets_finish(c, &l, &by);
		if (kept >= 0)
			show(stdout, json, first, pids[i], &meta, &l, kept, by, c->rules);
		first = false;
		bt_labels_free(&meta);
		bt_labels_free(&l);
		bt_procmeta_free(&m);
		if (kept < 0) {
			free(pids);
			return bt_cli_error(1, "out of memory");
		}
	}
	if (json)
		fputs("\n]\n", stdout);
	free(pids);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : bt_cli_error(1, "writing the list failed");
}

int cmd_agent_targets(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *config = NULL;
	bool json = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'c')
			config = optarg;
		else if (c == 'j')
			json = true;
		else if (c == 'h')
			return usage(stdout), 0;
		else if (c == ':')
			return bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]);
		else
			return bt_cli_error(2, "unknown option '%s' (see buildtrace agent targets --help)", argv[optind - 1]);
	}
	if (optind < argc)
		return bt_cli_error(2, "unexpected argument '%s'", argv[optind]);
	struct bt_agent_conf *conf = malloc(sizeof(*conf));
	struct agent_series *as = malloc(sizeof(*as));
	char err[1024];
	int rc = !conf || !as ? bt_cli_error(1, "out of memory") : 0;
	if (!rc) {
		bt_agent_conf_defaults(conf);
		if ((config && bt_agent_conf_load(conf, config, err, sizeof(err))) ||
		    bt_agent_conf_finish(conf, err, sizeof(err)))
			rc = bt_cli_error(2, "%s", err);
	}
	if (!rc && agent_series_init(as, conf, err, sizeof(err)))
		rc = bt_cli_error(2, "relabel: %s", err);
	else if (!rc) {
		rc = list(as, json);
		agent_series_free(as);
	}
	free(conf);
	free(as);
	return rc;
}
