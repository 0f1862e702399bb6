/* traceopts.c - see traceopts.h. */
#include "cmd/trace/traceopts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/callgraph.h"
#include "capture/capture.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"
#include "elf/sdt.h"

enum {
	OPT_KEY = BT_OPT_LONG, OPT_LATENCY, OPT_NO_BID_CHECK, OPT_FORCE, OPT_CALL_GRAPH, OPT_CACHE_DIR, OPT_RINGBUF,
	OPT_LIVE, OPT_NO_LIVE, OPT_KEEP_ROOT,
};

/* trace's options, in --help's order: an option added here is parsed (its case below), listed by
 * --help and the man page, completed by the shell, and needs a row in the README's table. */
static const struct bt_opt trace_opts[] = {
	BT_OPT_HEAD("PROBE is one of"),
	{ .kind = BT_OPT_OPERAND, .arg = "FILE:FUNCTION", .help = "a function of FILE, found in the symbols of "
	  "FILE's build-id" },
	{ .kind = BT_OPT_OPERAND, .arg = "FILE:0xADDR", .help = "an address of FILE as nm and objdump show it "
	  "(in a code section)" },
	{ .kind = BT_OPT_OPERAND, .arg = "BUILDID:FUNCTION", .help = "a function of the file of that build-id "
	  "(mapped by -p, or the path the build-id cache recorded for it)" },
	{ .kind = BT_OPT_OPERAND, .arg = "sdt:FILE:PROVIDER:NAME", .help = "an SDT marker of FILE (readelf -n "
	  "lists them)" },
	{ .kind = BT_OPT_OPERAND, .arg = "sdt:PROVIDER:NAME", .help = "the marker in whichever file has it (of "
	  "-p's processes, or COMMAND's)" },
	{ .kind = BT_OPT_OPERAND, .arg = "cache:GROUP:EVENT", .help = "a probe of the probe cache (buildtrace "
	  "probe list), placed only in files of the build-id it was resolved for" },
	BT_OPT_HEAD("What to trace (one of)"),
	{ 'p', "pid", "PID[,PID...]", "these processes: FILE is found among their mappings, and opened "
	  "through /proc/PID/map_files", .values = "@pid" },
	{ 'a', "all-cpus", NULL, "every process that maps FILE" },
	{ .kind = BT_OPT_OPERAND, .arg = "-- COMMAND [ARGS...]", .help = "start COMMAND (and follow the "
	  "children it starts), until it exits" },
	BT_OPT_HEAD("Options"),
	{ 'd', "duration", "TIME", "stop after TIME (500ms, 10s, 2m; by default at Ctrl-C or when the "
	  "processes have exited)" },
	{ 'o', "output", "FILE", "write the counts here (default: standard output)", .values = "@file" },
	{ 'f', "format", "FORMAT", "folded, svg, pprof or json", .def = "folded", .values = "@format-totals" },
	{ OPT_KEY, "key", "argN[:str]", "count SDT hits by their Nth argument (from 1), an integer, or a "
	  "string with :str; lines are comm;PROVIDER:NAME;VALUE COUNT", .values = "arg1 arg2 arg3 arg1:str arg2:str" },
	{ OPT_LATENCY, "latency", NULL, "time each call (a uretprobe) and print a latency histogram per probe" },
	{ OPT_NO_BID_CHECK, "no-build-id-check", NULL, "place probes in files without a GNU build-id too "
	  "(with a warning)" },
	{ OPT_FORCE, "force", NULL, "resolve cached probes again instead of using the probe cache" },
	{ OPT_CALL_GRAPH, "call-graph", "dwarf[,SIZE]|fp", "user stacks from a stack copy unwound with call "
	  "frame information (8 KiB, or SIZE bytes, a multiple of 8 up to 65536), or by frame pointers",
	  .def = "dwarf", .values = "dwarf fp" },
	{ OPT_CACHE_DIR, "cache-dir", "DIR", "the build-id cache", .def = "~/.debug", .values = "@dir" },
	{ OPT_RINGBUF, "ringbuf-size", "SIZE", "the BPF ring buffer, 4K to 1G", .def = "16M" },
	{ OPT_LIVE, "live", NULL, "the live view on stderr (by default on a terminal, without COMMAND)" },
	{ OPT_NO_LIVE, "no-live", NULL, "no live view" },
	{ OPT_KEEP_ROOT, "keep-root", NULL, "run COMMAND as root even when started through sudo" },
	{ 'v', "verbose", NULL, "say more" },
	{ 'h', "help", NULL, "this text" },
	BT_OPT_END,
};

static const struct bt_cmd_doc trace_doc = {
	.name = "buildtrace trace",
	.summary = "count the hits of uprobes and SDT markers per stack, placed by build-id",
	.usage = "buildtrace trace [-p PID[,PID...] | -a] [options] PROBE... [-- COMMAND [ARGS...]]",
	.about = "Counts the hits of each PROBE per stack, named like samples (folded: "
		 "comm;outer;...;FUNCTION COUNT).",
	.opts = trace_opts,
	.operands = "@file",
};

const struct bt_cmd_doc *bt_trace_doc(void)
{
	return &trace_doc;
}

/* --key argN or argN:str. */
static int parse_key(struct bt_trace_args *a, const char *arg)
{
	char num[16];
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	if (strncmp(arg, "arg", 3) || n <= 3 || n - 3 >= sizeof(num) || (colon && strcmp(colon, ":str") &&
									 strcmp(colon, ":int")))
		return bt_cli_error(2, "invalid --key '%s': expected argN, argN:str or argN:int", arg);
	memcpy(num, arg + 3, n - 3);
	num[n - 3] = '\0';
	if (bt_cli_parse_uint(num, 1, BT_SDT_MAX_ARGS, &a->key_arg))
		return bt_cli_error(2, "invalid --key '%s': arguments are numbered from 1 to %d", arg,
				    BT_SDT_MAX_ARGS);
	a->key_str = colon && !strcmp(colon, ":str");
	return 0;
}

static int value_opt(struct bt_trace_args *a, int c, const char *arg)
{
	int err;
	switch (c) {
	case 'p':
		free(a->pids);
		if ((err = bt_cli_parse_pids(arg, &a->pids, &a->npids)))
			return bt_cli_error(2, "invalid -p '%s': expected PID[,PID...]", arg);
		return 0;
	case 'd':
		return bt_cli_parse_duration(arg, &a->duration) ?
			bt_cli_error(2, "invalid -d '%s': expected a duration (500ms, 10s, 2m)", arg) : 0;
	case 'o':
		a->output = arg;
		return 0;
	case 'f':
		a->format = arg;
		if (bt_format_parse(arg, &a->fmt))
			return bt_cli_error(2, "-f needs a format: %s", bt_format_names());
		return bt_format_per_sample(a->fmt) ?
			bt_cli_error(2, "-f %s: trace counts its probes' hits; per-sample formats are the sampling "
				     "session's (buildtrace -f %s ...)", arg, arg) : 0;
	case OPT_KEY:
		return parse_key(a, arg);
	case OPT_CALL_GRAPH: {
		/* trace's probes copy the user stack for dwarf (bpf/trace.bpf.c has no walk of its own) */
		bool walk = false;
		return bt_call_graph_parse(arg, &a->dwarf, &a->ustack_bytes, &walk) ?
			bt_cli_error(2, "invalid --call-graph '%s': expected dwarf[,SIZE] or fp", arg) : 0;
	}
	case OPT_CACHE_DIR:
		a->cache_dir = arg;
		return 0;
	case OPT_RINGBUF:
		if (bt_cli_parse_size(arg, &a->ringbuf_bytes) || a->ringbuf_bytes < BT_RINGBUF_SIZE_MIN ||
		    a->ringbuf_bytes > BT_RINGBUF_SIZE_MAX)
			return bt_cli_error(2, "invalid --ringbuf-size '%s': expected 4K to 1G", arg);
		return 0;
	}
	return bt_cli_error(2, "unknown option (see buildtrace trace --help)");
}

static int take_specs(struct bt_trace_args *a, char **v, size_t n)
{
	if (!n)
		return bt_cli_error(2, "say what to trace: FILE:FUNCTION, FILE:0xADDR, BUILDID:FUNCTION, "
				    "sdt:FILE:PROVIDER:NAME or cache:GROUP:EVENT (see buildtrace trace --help)");
	if (n > BT_TRACE_MAX_PROBES)
		return bt_cli_error(2, "at most %d probes at once", BT_TRACE_MAX_PROBES);
	a->specs = calloc(n, sizeof(*a->specs));
	if (!a->specs)
		return bt_cli_error(1, "out of memory");
	for (size_t i = 0; i < n; i++, a->nspecs++) {
		if (bt_probe_spec_parse(v[i], &a->specs[i]))
			return bt_cli_error(2, "invalid probe '%s': expected FILE:FUNCTION, FILE:0xADDR, "
					    "BUILDID:FUNCTION, sdt:FILE:PROVIDER:NAME or cache:GROUP:EVENT", v[i]);
		if (a->key_arg && a->specs[i].kind != BT_PROBE_SDT && a->specs[i].kind != BT_PROBE_CACHED)
			return bt_cli_error(2, "--key reads an SDT marker's argument: %s is no marker", v[i]);
	}
	return 0;
}

static int check_args(struct bt_trace_args *a)
{
	int targets = a->all + !!a->npids + !!a->cmd;
	if (a->npids && (a->all || a->cmd))
		return bt_cli_error(2, "-p, -a and a command exclude each other (-a with a command traces "
				    "the whole machine while it runs)");
	if (!targets)
		return bt_cli_error(2, "say what to trace: -p PID, -a or -- COMMAND [ARGS...]");
	for (size_t i = 0; i < a->npids; i++)
		if (!bt_cli_pid_exists(a->pids[i]))
			return bt_cli_error(2, "no process with pid %d", a->pids[i]);
	return 0;
}

int bt_trace_parse(int argc, char **argv, struct bt_trace_args *a)
{
	a->format = "folded";
	a->dwarf = true;
	a->ringbuf_bytes = 16u << 20;
	/* The command after "--" is its own: options are read before it only. */
	int end = argc;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			end = i;
			break;
		}
	if (end < argc) {
		if (end + 1 == argc)
			return bt_cli_error(2, "a command is expected after --");
		a->cmd = argv + end + 1;
	}
	struct bt_getopt g;
	if (bt_opts_getopt(trace_opts, ":", &g))
		return bt_cli_error(1, "too many options");
	optind = 1;
	opterr = 0;
	int c, err;
	while ((c = getopt_long(end, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'a': a->all = true; break;
		case OPT_LATENCY: a->latency = true; break;
		case OPT_NO_BID_CHECK: a->no_bid_check = true; break;
		case OPT_FORCE: a->force = true; break;
		case OPT_LIVE: a->live = a->live_set = true; break;
		case OPT_NO_LIVE: a->live = false; a->live_set = true; break;
		case OPT_KEEP_ROOT: a->keep_root = true; break;
		case 'v': a->verbose++; break;
		case 'h': bt_opts_usage(stdout, &trace_doc); return 1;
		case ':': return bt_cli_error(2, "%s needs a value", argv[optind - 1]);
		case '?': return bt_cli_error(2, "unknown option '%s' (see buildtrace trace --help)", argv[optind - 1]);
		default:
			if ((err = value_opt(a, c, optarg)))
				return err;
		}
	}
	if ((err = take_specs(a, argv + optind, (size_t)(end - optind))))
		return err;
	return check_args(a);
}

void bt_trace_args_free(struct bt_trace_args *a)
{
	free(a->pids);
	free(a->specs);
	a->pids = NULL;
	a->specs = NULL;
}
