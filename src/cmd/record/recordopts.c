/* recordopts.c - see recordopts.h. */
#include "cmd/record/recordopts.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bt_proto.h"
#include "capture/callgraph.h"
#include "capture/capture.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"

enum { OPT_USER_ONLY = BT_OPT_LONG, OPT_KERNEL_ONLY, OPT_CACHE_DIR, OPT_NO_CACHE, OPT_NO_DEBUGINFOD, OPT_VERSION,
       OPT_RINGBUF, OPT_PER_PID, OPT_LIVE, OPT_NO_LIVE, OPT_ALSO_WRITE, OPT_CALL_GRAPH,
       OPT_LINES, OPT_KEEP_ROOT, OPT_CACHE_MAX_SIZE, OPT_CACHE_MAX_FILE, OPT_PER_THREAD, OPT_OFF_CPU, OPT_WALL,
       OPT_OFFCPU_STATES, OPT_OFFCPU_MIN, OPT_OFFCPU_RATE };

/* The live session's options, in --help's order. An option added here is parsed (its case below),
 * listed by --help and the man page, completed by the shell, and must have a row in the README's
 * table of options. */
static const struct bt_opt record_opts[] = {
	BT_OPT_HEAD("What to profile"),
	{ .kind = BT_OPT_OPERAND, .arg = "-- COMMAND [ARGS...]",
	  .help = "start COMMAND, profile it (and the children it starts) from its first instruction until it "
		  "exits, then exit with its status; Ctrl-C and -d end it as they end perf's" },
	{ 'p', "pid", "PID[,PID...]", "these processes, and the children they start", .values = "@pid",
	  .expects = "a process id list, PID[,PID...]" },
	{ 't', "tid", "TID[,TID...]", "these threads only: their processes are watched, other threads' "
	  "samples are dropped", .values = "@tid", .expects = "a thread id list, TID[,TID...]" },
	{ 'a', "all-cpus", NULL, "every process on the machine (with COMMAND: while it runs)" },
	{ 'C', "cpu", "CPU-LIST", "sample only these CPUs, such as 0-3,6", .expects = "a CPU list such as 0-3,6" },
	{ OPT_KEEP_ROOT, "keep-root", NULL, "run COMMAND as root when buildtrace was started through sudo "
	  "(by default it runs as SUDO_UID and SUDO_GID)" },
	BT_OPT_HEAD("Sampling"),
	{ 'F', "freq", "HZ|max", "samples per second per CPU; max: the kernel's "
	  "kernel.perf_event_max_sample_rate", .def = "99", .values = "99 999 max",
	  .expects = "a frequency in Hz, or max" },
	{ 'd', "duration", "TIME", "stop after TIME: 500ms, 10s, 2m, 1h; a plain number is seconds (by "
	  "default: at Ctrl-C, or when the processes or the COMMAND have exited)",
	  .expects = "a duration: a number with ms, s, m or h (a plain number is seconds)" },
	{ 'g', NULL, NULL, "the default call graph (--call-graph dwarf), accepted for perf's users" },
	{ OPT_CALL_GRAPH, "call-graph", "dwarf|dwarf-bpf|dwarf-copy[,SIZE]|fp",
	  "how user stacks are walked. dwarf is dwarf-bpf: the sampler walks the stack in the kernel "
	  "with unwind tables compiled from call frame information once per build-id (complete stacks "
	  "without frame pointers, no stack copied, as deep as a sample holds: 254 frames less the "
	  "kernel's). dwarf-copy: 8 KiB of stack copied per sample and unwound in buildtrace "
	  "(dwarf-copy,SIZE or dwarf,SIZE: SIZE bytes, a multiple of 8 up to 65536). fp: frame "
	  "pointers only, cheaper, cut short where they are missing", .def = "dwarf",
	  .values = "dwarf dwarf-bpf dwarf-copy fp",
	  .expects = "a call graph mode: dwarf, dwarf-bpf, dwarf-copy, dwarf-copy,SIZE or fp" },
	{ OPT_USER_ONLY, "user-only", NULL, "user stacks only" },
	{ OPT_KERNEL_ONLY, "kernel-only", NULL, "kernel stacks only" },
	{ OPT_RINGBUF, "ringbuf-size", "SIZE", "the BPF ring buffer, such as 16M (by default room for a "
	  "quarter second of samples on every CPU, 256K to 64M)", .expects = "a size from 4K to 1G, such as 16M" },
	BT_OPT_HEAD("Off-CPU time"),
	{ OPT_OFF_CPU, "off-cpu", NULL, "also where the threads wait: each time one leaves a CPU its stack is "
	  "taken and the time until it runs again added to it, in the state it waited in; folded and svg "
	  "show that time (microseconds), pprof, json and the live view both" },
	{ OPT_WALL, "wall", NULL, "on-CPU and off-CPU time in one unit (microseconds): each CPU sample counts "
	  "as its period, so every thread's total is its wall time" },
	{ OPT_OFFCPU_STATES, "off-cpu-states", "LIST", "only these states: S (sleeping), D (uninterruptible: "
	  "disk and other waits), R (runnable, waiting for a CPU)", .def = "S,D,R", .values = "S D R S,D",
	  .expects = "a list of states: S, D, R (or sleeping, uninterruptible, runnable)" },
	{ OPT_OFFCPU_MIN, "off-cpu-min", "TIME", "leave out the times a thread was off a CPU for less than "
	  "TIME, such as 1ms or 50us (a plain number is seconds)",
	  .expects = "a duration: a number with us, ms or s (a plain number is seconds)" },
	{ OPT_OFFCPU_RATE, "off-cpu-rate", "N", "take at most N stacks per second per CPU (0: no bound); "
	  "beyond that the time is counted without its stack", .def = "20000",
	  .expects = "a number of stacks per second per CPU, 0 for no bound" },
	BT_OPT_HEAD("Output"),
	{ 'o', "output", "FILE", "write the profile here, a new file of mode 0600 (default: standard output)",
	  .values = "@file", .expects = "a file name (- for standard output)" },
	{ 'f', "format", "FORMAT", "folded (comm;outer;...;inner COUNT lines), svg (an interactive flame "
	  "graph), pprof (gzip-compressed profile.proto with build-ids), json, perf-script (every sample "
	  "in time order, as perf script prints it) or heatmap (samples over time; select a range to see "
	  "its flame graph)", .def = "folded", .values = "@format",
	  .expects = "a format: folded, svg, pprof, json, perf-script or heatmap" },
	{ OPT_ALSO_WRITE, "also-write", "FORMAT:FILE", "the same profile in FORMAT to FILE as well "
	  "(repeatable)", .values = "@format:",
	  .expects = "FORMAT:FILE (FORMAT: folded, svg, pprof, json, perf-script or heatmap)" },
	{ OPT_PER_PID, "per-pid", NULL, "keep the stacks of different processes apart (folded lines begin "
	  "with comm-PID)" },
	{ OPT_PER_THREAD, "per-thread", NULL, "and of different threads (folded: comm-PID/TID)" },
	{ OPT_LINES, "lines", NULL, "give pprof and json frames their source file and line, and the "
	  "functions inlined there, from the DWARF of each build-id" },
	{ OPT_LIVE, "live", NULL, "the live view on stderr (by default on when stderr is a terminal and no "
	  "COMMAND shares it)" },
	{ OPT_NO_LIVE, "no-live", NULL, "no live view" },
	BT_OPT_HEAD("Symbols"),
	{ OPT_CACHE_DIR, "cache-dir", "DIR", "the build-id cache", .def = "~/.debug", .values = "@dir",
	  .expects = "a directory" },
	{ OPT_NO_CACHE, "no-cache", NULL, "do not store sampled binaries, or the stack walk's compiled tables, in the build-id cache" },
	{ OPT_CACHE_MAX_SIZE, "cache-max-size", "SIZE", "stop storing when the cache holds SIZE", .def = "8G",
	  .expects = "a size above 0, in bytes or with K, M or G" },
	{ OPT_CACHE_MAX_FILE, "cache-max-file", "SIZE", "do not store files larger than SIZE", .def = "512M",
	  .expects = "a size above 0, in bytes or with K, M or G" },
	{ OPT_NO_DEBUGINFOD, "no-debuginfod", NULL, "never ask a debuginfod server for symbols" },
	BT_OPT_HEAD("Other"),
	{ 'v', "verbose", NULL, "say more on stderr (twice: debug)" },
	{ 'h', "help", NULL, "this text" },
	{ OPT_VERSION, "version", NULL, "print the version" },
	BT_OPT_END,
};

static const struct bt_cmd_doc record_doc = {
	.name = "buildtrace",
	.summary = "profile processes live (the default)",
	.usage = "buildtrace [-p PID[,PID...] | -t TID[,TID...] | -a] [options]\n"
		 "buildtrace [-a] [options] -- COMMAND [ARGS...]",
	.about = "Samples the stacks of the processes asked for, shows where their CPU time goes while it "
		 "runs (the live view, on a terminal), and writes the profile when it stops. Every frame is "
		 "named against the exact binary that was mapped when it was sampled, identified by its GNU "
		 "build-id.",
	.opts = record_opts,
	.operands = "@command",
};

const struct bt_cmd_doc *bt_record_doc(void)
{
	return &record_doc;
}

/* The exit code 2 after "OPTION needs WHAT" (no value) or "invalid OPTION 'VALUE': expected WHAT"
 * (a bad one), with detail appended when given. */
static int bad_value(int opt, const char *value, const char *detail)
{
	char name[64];
	const struct bt_opt *o = bt_opts_find(record_opts, opt);
	const char *expects = o && o->expects ? o->expects : "a value";
	bt_opts_name(record_opts, opt, name, sizeof(name));
	if (!value)
		return bt_cli_error(2, "%s needs %s", name, expects);
	return bt_cli_error(2, "invalid %s '%s': expected %s%s%s", name, value, expects,
			    detail ? "; " : "", detail ? detail : "");
}

/* FMT:FILE for --also-write, appended to a->also. 0, or the exit code after saying what is wrong. */
static int add_also_write(struct bt_record_args *a, char *arg)
{
	char *colon = strchr(arg, ':');
	if (!colon || colon == arg || !colon[1] || !strcmp(colon + 1, "-"))
		return bad_value(OPT_ALSO_WRITE, arg, NULL);
	*colon = '\0';
	enum bt_format fmt;
	if (bt_format_parse(arg, &fmt))
		return bt_cli_error(2, "invalid --also-write: unknown output format '%s' (supported: %s)", arg,
				    bt_format_names());
	struct bt_outfile *n = realloc(a->also, (a->nalso + 1) * sizeof(*n));
	if (!n)
		return bt_cli_error(1, "out of memory");
	a->also = n;
	a->also[a->nalso++] = (struct bt_outfile){ .path = colon + 1, .fmt = fmt, .w = BT_WFILE_INIT };
	return 0;
}

/* -t: the threads, and the processes they belong to (each once) to watch. */
static int add_tids(struct bt_record_args *a, const char *arg)
{
	if (a->pid_opt)
		return bt_cli_error(2, "-p and -t exclude each other");
	free(a->tids);
	free(a->pids);
	a->pids = NULL;
	a->npids = 0;
	int err = bt_cli_parse_pids(arg, &a->tids, &a->ntids);
	if (err)
		return bad_value('t', arg, err == -ERANGE ? "a thread id out of range" : NULL);
	a->pids = calloc(a->ntids, sizeof(*a->pids));
	if (!a->pids)
		return bt_cli_error(1, "out of memory");
	for (size_t i = 0; i < a->ntids; i++) {
		int tgid = bt_cli_tid_tgid("", a->tids[i]);
		if (tgid < 0)
			return bt_cli_error(2, "invalid -t: no thread with id %d", a->tids[i]);
		size_t j = 0;
		while (j < a->npids && a->pids[j] != tgid)
			j++;
		if (j == a->npids)
			a->pids[a->npids++] = tgid;
	}
	return 0;
}

static int set_freq(struct bt_record_args *a, const char *arg)
{
	unsigned long max = bt_cli_max_sample_rate();
	char detail[128];
	if (!strcmp(arg, "max")) {
		a->freq = max > UINT_MAX ? UINT_MAX : (unsigned)max;
		return 0;
	}
	snprintf(detail, sizeof(detail), "1..%lu (kernel.perf_event_max_sample_rate)", max);
	return bt_cli_parse_uint(arg, 1, max, &a->freq) ? bad_value('F', arg, detail) : 0;
}

/* --off-cpu-states: S,D,R or their names into a mask of 1 << enum bt_offcpu_state. 0 or -EINVAL. */
static int parse_states(const char *arg, unsigned *out)
{
	static const struct { const char *letter, *name; unsigned state; } states[] = {
		{ "S", "sleeping", BT_OFFCPU_SLEEP },
		{ "D", "uninterruptible", BT_OFFCPU_UNINT },
		{ "R", "runnable", BT_OFFCPU_RUNQ },
	};
	unsigned mask = 0;
	const char *p = arg;
	while (*p) {
		size_t len = strcspn(p, ",");
		size_t i = 0;
		while (i < 3 && !((strlen(states[i].letter) == len && !strncasecmp(p, states[i].letter, len)) ||
				  (strlen(states[i].name) == len && !strncasecmp(p, states[i].name, len))))
			i++;
		if (i == 3)
			return -EINVAL;
		mask |= 1u << states[i].state;
		p += len;
		if (*p == ',' && *++p == '\0')
			return -EINVAL;
	}
	*out = mask;
	return mask ? 0 : -EINVAL;
}

/* The options that take a value. 0, or the exit code after saying what is wrong. */
static int value_opt(struct bt_record_args *a, int c, char *arg)
{
	int err;
	/* A value that looks like the next option means this one's value was left out ("-f -p 1"). */
	if (arg[0] == '-' && arg[1] && c != 'o')
		return bad_value(c, NULL, NULL);
	switch (c) {
	case 'p':
		if (a->ntids)
			return bt_cli_error(2, "-p and -t exclude each other");
		a->pid_opt = true;
		free(a->pids);
		if ((err = bt_cli_parse_pids(arg, &a->pids, &a->npids)))
			return bad_value('p', arg, err == -ERANGE ? "a pid out of range" : NULL);
		return 0;
	case 't':
		return add_tids(a, arg);
	case 'C':
		if ((err = bt_cli_parse_cpus(arg, a->cpus, BT_RECORD_MAX_CPUS)) < 0)
			return bad_value('C', arg, err == -ERANGE ? "CPUs are numbered below 4096" : NULL);
		a->cpu_list = true;
		return 0;
	case 'F':
		return set_freq(a, arg);
	case 'd':
		return bt_cli_parse_duration(arg, &a->duration) ? bad_value('d', arg, "more than 0") : 0;
	case 'o':
		if (!*arg || (arg[0] == '-' && arg[1]))
			return bad_value('o', *arg ? NULL : arg, NULL);
		a->output = arg;
		return 0;
	case 'f':
		if (bt_format_parse(arg, &a->fmt))
			return bad_value('f', arg, NULL);
		a->format = arg;
		return 0;
	case OPT_ALSO_WRITE:
		return add_also_write(a, arg);
	case OPT_CALL_GRAPH:
		if (bt_call_graph_parse(arg, &a->dwarf, &a->ustack_bytes, &a->bpf_unwind)) {
			char detail[128];
			snprintf(detail, sizeof(detail), "SIZE: bytes of stack per sample, a multiple of 8 from "
				 "%d to %d", BT_USTACK_MIN, BT_USTACK_MAX);
			return bad_value(OPT_CALL_GRAPH, arg, detail);
		}
		return 0;
	case OPT_CACHE_DIR:
		if (!*arg)
			return bad_value(OPT_CACHE_DIR, arg, NULL);
		a->cache_dir = arg;
		return 0;
	case OPT_RINGBUF:
		if (bt_cli_parse_size(arg, &a->ringbuf_bytes) || a->ringbuf_bytes < BT_RINGBUF_SIZE_MIN ||
		    a->ringbuf_bytes > BT_RINGBUF_SIZE_MAX)
			return bad_value(OPT_RINGBUF, arg, NULL);
		return 0;
	case OPT_OFFCPU_STATES:
		return parse_states(arg, &a->offcpu_states) ? bad_value(c, arg, NULL) : 0;
	case OPT_OFFCPU_MIN:
		return bt_cli_parse_duration(arg, &a->offcpu_min) ? bad_value(c, arg, "more than 0") : 0;
	case OPT_OFFCPU_RATE:
		a->offcpu_rate_set = true;
		return bt_cli_parse_uint(arg, 0, 100000000, &a->offcpu_rate) ? bad_value(c, arg, "0 to 100000000") : 0;
	case OPT_CACHE_MAX_SIZE:
	case OPT_CACHE_MAX_FILE: {
		size_t *v = c == OPT_CACHE_MAX_SIZE ? &a->cache_max_size : &a->cache_max_file;
		return bt_cli_parse_size(arg, v) || *v == 0 ? bad_value(c, arg, NULL) : 0;
	}
	}
	return bt_cli_error(2, "unknown option (see buildtrace --help)");
}

/* What no single option shows: options that exclude each other, a missing target, the format's
 * name, pids that do not exist. 0, or the exit code after saying what is wrong. */
static int check_args(struct bt_record_args *a, bool user_only, bool kernel_only)
{
	if (user_only && kernel_only)
		return bt_cli_error(2, "--user-only and --kernel-only exclude each other");
	if (a->wall && a->offcpu_states && a->offcpu_states != BT_OFFCPU_ALL_STATES)
		return bt_cli_error(2, "--wall counts the time of every state: --off-cpu-states would leave "
				    "some out");
	if (!a->off_cpu && !a->wall && (a->offcpu_states || a->offcpu_min > 0 || a->offcpu_rate_set))
		return bt_cli_error(2, "--off-cpu-states, --off-cpu-min and --off-cpu-rate need --off-cpu or --wall");
	int targets = (a->all && !a->cmd) + a->pid_opt + !!a->ntids + !!a->cmd;
	if (targets > 1)
		return bt_cli_error(2, "-p, -t, -a and a command exclude each other (-a with a command "
				    "profiles the whole machine while it runs)");
	if (!targets && !a->all)
		return bt_cli_error(2, "say what to profile: -p PID, -t TID, -a or -- COMMAND [ARGS...] "
				    "(see buildtrace --help)");
	if (bt_format_parse(a->format, &a->fmt))
		return bad_value('f', a->format, NULL);
	bool per_sample = bt_format_per_sample(a->fmt);
	for (size_t i = 0; i < a->nalso; i++)
		per_sample |= bt_format_per_sample(a->also[i].fmt);
	if ((a->off_cpu || a->wall) && per_sample)
		return bt_cli_error(2, "perf-script and heatmap show CPU samples one by one, and off-CPU time "
				    "is summed in the kernel, not kept per switch: with --off-cpu or --wall write "
				    "folded, svg, pprof or json");
	a->user = !kernel_only;
	a->kernel = !user_only;
	for (size_t i = 0; i < a->npids; i++)
		if (!bt_cli_pid_exists(a->pids[i]))
			return bt_cli_error(2, "no process with pid %d", a->pids[i]);
	return 0;
}

int bt_record_parse(int argc, char **argv, struct bt_record_args *a)
{
	bool user_only = false, kernel_only = false;
	int c, err;
	a->freq = 99;
	a->format = "folded";
	a->offcpu_rate = BT_RECORD_OFFCPU_RATE;
	a->dwarf = !BT_CALL_GRAPH_DWARF_IS_BPF;
	a->bpf_unwind = BT_CALL_GRAPH_DWARF_IS_BPF;
	struct bt_getopt g;
	/* "+": options end at the command's name, whose own options are its own. */
	if (bt_opts_getopt(record_opts, "+:", &g))
		return bt_cli_error(1, "too many options");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'a': a->all = true; break;
		case 'g': break;  /* perf's "a call graph": every session has one, dwarf by default */
		case OPT_USER_ONLY: user_only = true; break;
		case OPT_KERNEL_ONLY: kernel_only = true; break;
		case OPT_PER_PID: a->per_pid = true; break;
		case OPT_PER_THREAD: a->per_tid = true; break;
		case OPT_NO_CACHE: a->no_cache = true; break;
		case OPT_NO_DEBUGINFOD: a->no_debuginfod = true; break;
		case OPT_LIVE: a->live = true; a->live_set = true; break;
		case OPT_NO_LIVE: a->live = false; a->live_set = true; break;
		case OPT_LINES: a->lines = true; break;
		case OPT_KEEP_ROOT: a->keep_root = true; break;
		case OPT_OFF_CPU: a->off_cpu = true; break;
		case OPT_WALL: a->wall = true; break;
		case 'v': a->verbose++; break;
		case 'h': bt_opts_usage(stdout, &record_doc); return 1;
		case OPT_VERSION: printf("buildtrace %s\n", BT_VERSION); return 1;
		case ':': return bad_value(optopt ? optopt : 0, NULL, NULL);
		case '?':
			if (optopt && optopt < 256)
				return bt_cli_error(2, "unknown option '-%c' (see buildtrace --help)", optopt);
			return bt_cli_error(2, "unknown option '%s' (see buildtrace --help)", argv[optind - 1]);
		default:
			if ((err = value_opt(a, c, optarg)))
				return err;
		}
	}
	if (optind < argc)
		a->cmd = argv + optind;
	return check_args(a, user_only, kernel_only);
}

void bt_record_args_free(struct bt_record_args *a)
{
	free(a->pids);
	free(a->tids);
	free(a->also);
	a->pids = a->tids = NULL;
	a->also = NULL;
}
