/* record.c - the live session: `buildtrace [-p PID[,PID...] | -a] ...`. Parses the command line,
 * checks privileges, runs the live driver (live.h), shows the live view and writes the profile when
 * the session ends. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/callgraph.h"
#include "capture/caps.h"
#include "base/wfile.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/live.h"
#include "output/output.h"
#include "session/session.h"

/* A profile file: written under a temporary name and renamed once complete, so no reader ever sees
 * half a profile. A NULL path or "-" is standard output. */
struct out_file {
	const char *path;
	enum bt_format fmt;
	struct bt_wfile w;  /* the file being written, unless f is stdout */
	FILE *f;
};

struct record_args {
	int *pids;
	size_t npids;
	bool all;
	unsigned freq;
	double duration;     /* seconds; 0: until stopped */
	const char *output;  /* NULL: stdout */
	const char *format;
	enum bt_format fmt;
	struct out_file *also;   /* --also-write FMT:FILE: more formats of the same profile */
	size_t nalso;
	bool user, kernel;
	const char *cache_dir;
	bool no_debuginfod;
	bool no_cache;
	size_t cache_max_size, cache_max_file;  /* 0: the defaults */
	int verbose;
	size_t ringbuf_bytes;
	bool per_pid;
	bool live;           /* force the live view on or off; default: when stderr is a terminal */
	bool live_set;
	bool dwarf;          /* --call-graph dwarf: user stacks unwound with call frame information */
	unsigned ustack_bytes; /* --call-graph dwarf,SIZE; 0: the default */
	bool lines;          /* --lines: source lines (and inlined functions) in pprof and json */
};

static void record_usage(FILE *f)
{
	fprintf(f,
		"usage: buildtrace [-p PID[,PID...] | -a] [options]\n"
		"  -p, --pid PID[,PID...]  profile these processes (and the children they start)\n"
		"  -a, --all-cpus          profile every process on the machine\n"
		"  -F, --freq HZ           samples per second per CPU (default 99)\n"
		"  -d, --duration SECONDS  stop after this long (default: until Ctrl-C or the processes exit)\n"
		"  -o, --output FILE       write the profile here (default: standard output)\n"
		"  -f, --format FORMAT     folded (default), svg (an interactive flame graph), pprof\n"
		"                          (gzip-compressed profile.proto with build-ids) or json\n"
		"      --also-write FMT:FILE  write the same profile in format FMT to FILE as well\n"
		"                          (repeatable)\n"
		"      --user-only         user stacks only\n"
		"      --kernel-only       kernel stacks only\n"
		"      --per-pid           keep the stacks of different processes apart\n"
		"      --call-graph MODE   user stacks by dwarf (the default: call frame information,\n"
		"                          complete stacks for code built without frame pointers; 8 KiB\n"
		"                          of stack copied per sample, dwarf,SIZE for another size up to\n"
		"                          65536 bytes) or fp (frame pointers only)\n"
		"      --lines             give pprof and json frames their source file and line, and\n"
		"                          the functions inlined there, from the DWARF of each build-id\n"
		"                          (the file's own, a debug file, the cache or debuginfod)\n"
		"      --cache-dir DIR     build-id cache (default ~/.debug)\n"
		"      --no-cache          do not store sampled binaries in the build-id cache\n"
		"      --cache-max-size SIZE  stop storing when the cache holds SIZE (default 8G)\n"
		"      --cache-max-file SIZE  do not store files larger than SIZE (default 512M)\n"
		"      --no-debuginfod     never ask a debuginfod server for symbols\n"
		"      --ringbuf-size SIZE ring buffer size, e.g. 16M (default: a quarter second of samples\n"
		"                          on every CPU, 256K to 64M)\n"
		"      --live / --no-live  force the live view on stderr on or off\n"
		"  -v, --verbose           say more on stderr (repeat for debug)\n"
		"  -h, --help              this text\n"
		"      --version           print the version\n");
}

enum { OPT_USER_ONLY = 256, OPT_KERNEL_ONLY, OPT_CACHE_DIR, OPT_NO_CACHE, OPT_NO_DEBUGINFOD, OPT_VERSION,
       OPT_RINGBUF, OPT_PER_PID, OPT_LIVE, OPT_NO_LIVE, OPT_ALSO_WRITE, OPT_CALL_GRAPH,
       OPT_LINES, OPT_CACHE_MAX_SIZE, OPT_CACHE_MAX_FILE };

/* FMT:FILE for --also-write, appended to a->also. 0, or the exit code after saying what is wrong. */
static int add_also_write(struct record_args *a, char *arg)
{
	char *colon = strchr(arg, ':');
	if (!colon || colon == arg || !colon[1] || !strcmp(colon + 1, "-"))
		return bt_cli_error(2, "invalid --also-write '%s': expected FORMAT:FILE", arg);
	*colon = '\0';
	enum bt_format fmt;
	if (bt_format_parse(arg, &fmt))
		return bt_cli_error(2, "unknown output format '%s' (supported: %s)", arg, bt_format_names());
	struct out_file *n = realloc(a->also, (a->nalso + 1) * sizeof(*n));
	if (!n)
		return bt_cli_error(1, "out of memory");
	a->also = n;
	a->also[a->nalso++] = (struct out_file){ .path = colon + 1, .fmt = fmt };
	return 0;
}

static const struct option record_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "also-write", required_argument, NULL, OPT_ALSO_WRITE },
	{ "user-only", no_argument, NULL, OPT_USER_ONLY },
	{ "kernel-only", no_argument, NULL, OPT_KERNEL_ONLY },
	{ "per-pid", no_argument, NULL, OPT_PER_PID },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "cache-max-size", required_argument, NULL, OPT_CACHE_MAX_SIZE },
	{ "cache-max-file", required_argument, NULL, OPT_CACHE_MAX_FILE },
	{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "live", no_argument, NULL, OPT_LIVE },
	{ "no-live", no_argument, NULL, OPT_NO_LIVE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 },
};

/* What no single option shows: options that exclude each other, a missing target, the format's
 * name, pids that do not exist. 0, or the exit code after saying what is wrong. */
static int check_args(struct record_args *a, bool user_only, bool kernel_only)
{
	if (user_only && kernel_only)
		return bt_cli_error(2, "--user-only and --kernel-only exclude each other");
	if (a->all && a->npids)
		return bt_cli_error(2, "-a and -p exclude each other");
	if (!a->all && !a->npids)
		return bt_cli_error(2, "say which processes to profile: -p PID or -a (see buildtrace --help)");
	if (bt_format_parse(a->format, &a->fmt))
		return bt_cli_error(2, "unknown output format '%s' (supported: %s)", a->format,
				    bt_format_names());
	a->user = !kernel_only;
	a->kernel = !user_only;
	for (size_t i = 0; i < a->npids; i++)
		if (!bt_cli_pid_exists(a->pids[i]))
			return bt_cli_error(2, "no process with pid %d", a->pids[i]);
	return 0;
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
	bool user_only = false, kernel_only = false;
	int c, err;
	a->freq = 99;
	a->format = "folded";
	a->dwarf = true;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:aF:d:o:f:vh", record_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if ((err = bt_cli_parse_pids(optarg, &a->pids, &a->npids)))
				return bt_cli_error(2, "invalid pid list '%s': %s", optarg,
						    err == -ERANGE ? "pid out of range" : "expected PID[,PID...]");
			break;
		case 'a': a->all = true; break;
		case 'F': {
			unsigned long max = bt_cli_max_sample_rate();
			if (bt_cli_parse_uint(optarg, 1, max, &a->freq))
				return bt_cli_error(2, "invalid frequency '%s': expected 1..%lu Hz "
						    "(kernel.perf_event_max_sample_rate)", optarg, max);
			break;
		}
		case 'd':
			if (bt_cli_parse_seconds(optarg, &a->duration))
				return bt_cli_error(2, "invalid duration '%s': expected seconds > 0", optarg);
			break;
		case 'o': a->output = optarg; break;
		case 'f': a->format = optarg; break;
		case OPT_ALSO_WRITE:
			if ((err = add_also_write(a, optarg)))
				return err;
			break;
		case OPT_USER_ONLY: user_only = true; break;
		case OPT_KERNEL_ONLY: kernel_only = true; break;
		case OPT_PER_PID: a->per_pid = true; break;
		case OPT_CALL_GRAPH:
			if (bt_call_graph_parse(optarg, &a->dwarf, &a->ustack_bytes))
				return bt_cli_error(2, "invalid --call-graph '%s': expected dwarf, dwarf,SIZE (bytes "
						    "of stack per sample, a multiple of 8 from %d to %d) or fp", optarg,
						    BT_USTACK_MIN, BT_USTACK_MAX);
			break;
		case OPT_CACHE_DIR: a->cache_dir = optarg; break;
		case OPT_NO_CACHE: a->no_cache = true; break;
		case OPT_CACHE_MAX_SIZE:
		case OPT_CACHE_MAX_FILE: {
			size_t *v = c == OPT_CACHE_MAX_SIZE ? &a->cache_max_size : &a->cache_max_file;
			if (bt_cli_parse_size(optarg, v) || *v == 0)
				return bt_cli_error(2, "invalid size '%s' for %s: expected bytes > 0, or with K, "
						    "M or G", optarg,
						    c == OPT_CACHE_MAX_SIZE ? "--cache-max-size" : "--cache-max-file");
			break;
		}
		case OPT_NO_DEBUGINFOD: a->no_debuginfod = true; break;
		case OPT_RINGBUF:
			if (bt_cli_parse_size(optarg, &a->ringbuf_bytes) || a->ringbuf_bytes < 4096 ||
			    a->ringbuf_bytes > (1ULL << 30))
				return bt_cli_error(2, "invalid ring buffer size '%s': expected 4K..1G", optarg);
			break;
		case OPT_LIVE: a->live = true; a->live_set = true; break;
		case OPT_NO_LIVE: a->live = false; a->live_set = true; break;
		case OPT_LINES: a->lines = true; break;
		case 'v': a->verbose++; break;
		case 'h': record_usage(stdout); return 1;
		case OPT_VERSION: printf("buildtrace %s\n", BT_VERSION); return 1;
		case ':': return bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]);
		default: return bt_cli_error(2, "unknown option '%s' (see buildtrace --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bt_cli_error(2, "unexpected argument '%s' (see buildtrace --help)", argv[optind]);
	return check_args(a, user_only, kernel_only);
}

/* Set by the handler, read by the loop (through bt_live_opts.stop). */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	if (stop_signal == SIGINT && sig == SIGINT)
		_exit(130);  /* a second Ctrl-C: leave at once */
	stop_signal = sig;
}

/* The context of the driver's callbacks: the live session, how talkative to be, and the sample
 * count at the last live view (for its rate). */
struct record_ctx {
	struct bt_live live;
	int verbose;
	uint64_t last_samples;
};

static void record_log(void *ctx, enum bt_log_level level, const char *msg)
{
	const struct record_ctx *rc = ctx;
	if (level <= BT_LOG_WARN || (level == BT_LOG_INFO && rc->verbose >= 1) || rc->verbose >= 2)
		fprintf(stderr, "buildtrace: %s\n", msg);
}

/* Once a second, when the live view is on: the top functions so far, redrawn on stderr. */
static void live_view(void *ctx, struct bt_live *l, double elapsed)
{
	struct record_ctx *rc = ctx;
	struct bt_session *s = &l->session;
	uint64_t rate = s->stats.samples - rc->last_samples;
	rc->last_samples = s->stats.samples;
	struct bt_top_entry top[20];
	struct bt_capture_stats st = { 0 };
	bt_capture_stats(l->cap, &st);
	bt_session_resolve(s);
	size_t n = bt_profile_top(&s->prof, top, 20);
	uint64_t total = s->prof.total ? s->prof.total : 1;
	fprintf(stderr, "\033[H\033[2J");
	fprintf(stderr, "buildtrace  %.0fs  %llu samples (%llu/s)  lost %llu  unresolved frames %llu  "
		"processes %zu  build-ids %zu\n\n",
		elapsed, (unsigned long long)s->stats.samples, (unsigned long long)rate,
		(unsigned long long)bt_live_lost_samples(&st),
		(unsigned long long)bt_profile_unresolved_frames(&s->prof), s->procs.nprocs,
		bt_session_build_ids(s));
	fprintf(stderr, "  %6s %6s  %s\n", "self%", "total%", "function");
	for (size_t i = 0; i < n; i++) {
		/* kernel functions marked as in folded stacks */
		char fn[128];
		snprintf(fn, sizeof(fn), "%s%s", bt_strtab_get(&s->prof.names, top[i].name_id),
			 top[i].kernel ? BT_FOLDED_KERNEL_SUFFIX : "");
		fprintf(stderr, "  %6.1f %6.1f  %.100s\n", 100.0 * top[i].self / total,
			100.0 * top[i].total / total, fn);
	}
	fflush(stderr);
}

static int out_open(struct out_file *o)
{
	o->f = stdout;
	o->w.fd = -1;
	if (!o->path || !strcmp(o->path, "-"))
		return 0;
	o->f = NULL;
	/* A new file 0600, as profiles hold other users' stacks; a device or a FIFO (-o /dev/null, a
	 * pipe) is written in place, and never removed. */
	int fd = bt_wfile_open_path(&o->w, o->path, BT_WFILE_MODE);
	if (fd < 0)
		return fd;
	int dfd = dup(fd);
	if (dfd < 0 || !(o->f = fdopen(dfd, "w"))) {
		int e = -errno;
		if (dfd >= 0)
			close(dfd);
		bt_wfile_abort(&o->w);
		return e;
	}
	return 0;
}

/* Writes the profile and puts the file in place. 0 or -errno. */
static int out_commit(struct out_file *o, const struct bt_session *s, const struct bt_output_opts *oo)
{
	int err = bt_output_session(s, o->fmt, oo, o->f);
	if (o->f == stdout)
		return err;
	if (fclose(o->f) != 0 && !err)
		err = -errno;
	o->f = NULL;
	if (err)
		bt_wfile_abort(&o->w);
	else
		err = bt_wfile_commit(&o->w);
	return err;
}

/* Closes what is still open and removes the temporary file (a no-op after a successful commit). */
static void out_discard(struct out_file *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	bt_wfile_abort(&o->w);
}

static void outs_discard(struct out_file *main_out, struct record_args *a)
{
	out_discard(main_out);
	for (size_t i = 0; i < a->nalso; i++)
		out_discard(&a->also[i]);
}

/* Every output is created before profiling starts: a path that cannot be written fails now.
 * 0, or the exit code after saying which path and why (nothing is left open then). */
static int outs_open(struct out_file *main_out, struct record_args *a)
{
	const struct out_file *bad = NULL;
	int err = out_open(main_out);
	if (err)
		bad = main_out;
	for (size_t i = 0; !bad && i < a->nalso; i++)
		if ((err = out_open(&a->also[i])))
			bad = &a->also[i];
	if (!bad)
		return 0;
	const char *path = bad->path;
	outs_discard(main_out, a);
	return bt_cli_error(1, "cannot write %s: %s", path, bt_cli_write_error(err));
}

/* Every format is written from the one session: their totals and stacks agree. 0, or the exit code
 * after saying which file failed. */
static int outs_commit(struct out_file *main_out, struct record_args *a, const struct bt_live *l)
{
	struct bt_output_opts oo = { .title = NULL, .period_ns = 1000000000ULL / a->freq,
				     .time_ns = l->start_ns, .duration_ns = (int64_t)(bt_live_elapsed(l) * 1e9) };
	const struct out_file *failed = main_out;
	int err = out_commit(main_out, &l->session, &oo);
	for (size_t i = 0; !err && i < a->nalso; i++)
		if ((err = out_commit(&a->also[i], &l->session, &oo)))
			failed = &a->also[i];
	if (!err)
		return 0;
	return bt_cli_error(1, "writing %s failed: %s", failed->path && strcmp(failed->path, "-") ? failed->path :
			    "the profile",
			    strerror(-err));
}

static void print_dwarf_summary(const struct record_args *a, const struct bt_session_stats *ss)
{
	const uint64_t *w = ss->dwarf_stops;
	fprintf(stderr, "buildtrace: call graph dwarf: %llu user stacks unwound, %.1f frames and %.1f us "
		"each, %u bytes copied per sample at most; ended at the outermost frame %llu, without call frame "
		"information %llu, past the copied stack %llu, on a bad rule %llu, at the frame limit %llu; "
		"%llu samples kept their frame-pointer stack\n",
		(unsigned long long)ss->dwarf_stacks,
		(double)ss->dwarf_frames / (double)ss->dwarf_stacks,
		(double)ss->dwarf_unwind_ns / 1e3 / (double)ss->dwarf_stacks,
		a->ustack_bytes ? a->ustack_bytes : BT_USTACK_BYTES, (unsigned long long)w[0], (unsigned long long)w[1],
		(unsigned long long)w[2], (unsigned long long)w[3], (unsigned long long)w[4],
		(unsigned long long)ss->dwarf_fallback);
}

/* The summary on stderr: why the session ended and how complete its profile is. */
static void print_summary(const struct record_args *a, const struct bt_live *l)
{
	const struct bt_session *s = &l->session;
	const struct bt_capture_stats *st = &l->stats;
	fprintf(stderr,
		"buildtrace: %s: %llu samples, %llu lost, %llu unresolved frames, %zu processes, "
		"%zu build-ids, %llu kallsyms reloads",
		l->why, (unsigned long long)s->stats.samples, (unsigned long long)bt_live_lost_samples(st),
		(unsigned long long)bt_profile_unresolved_frames(&s->prof), (size_t)s->procs.seen,
		bt_session_build_ids(s), (unsigned long long)s->stats.kallsyms_reloads);
	if (bt_live_lost_other(st))
		fprintf(stderr, ", %llu other records lost", (unsigned long long)bt_live_lost_other(st));
	if (s->stats.bid_userspace)
		fprintf(stderr, ", %llu build-ids read by the userspace fallback",
			(unsigned long long)s->stats.bid_userspace);
	if (s->stats.bid_missing)
		fprintf(stderr, ", %llu mappings without a readable build-id",
			(unsigned long long)s->stats.bid_missing);
	if (s->dsos.dwarf_refused)
		fprintf(stderr, ", %llu files without lines: their DWARF strings lack a final NUL (corrupt)",
			(unsigned long long)s->dsos.dwarf_refused);
	fprintf(stderr, "\n");
	const struct bt_bidcache_budget *b = &s->dsos.cache_budget;
	if (b->too_large)
		fprintf(stderr, "buildtrace: %llu files not stored in the build-id cache: larger than %llu "
			"bytes (--cache-max-file)\n", (unsigned long long)b->too_large,
			(unsigned long long)(b->max_file ? b->max_file : BT_BIDCACHE_MAX_FILE));
	if (b->full)
		fprintf(stderr, "buildtrace: %llu files not stored in the build-id cache: it holds its limit "
			"of %llu bytes (--cache-max-size, or buildtrace cache prune)\n", (unsigned long long)b->full,
			(unsigned long long)(b->max_total ? b->max_total : BT_BIDCACHE_MAX_TOTAL));
	if (a->dwarf && s->stats.dwarf_stacks)
		print_dwarf_summary(a, &s->stats);
	if (a->verbose)
		fprintf(stderr, "buildtrace: process table: %zu entries at the end, %llu processes seen, "
			"%llu exits; %llu records, %llu malformed; symbols loaded for %llu build-ids\n",
			s->procs.nprocs, (unsigned long long)s->procs.seen,
			(unsigned long long)s->stats.exits, (unsigned long long)s->stats.records,
			(unsigned long long)s->stats.bad_records,
			(unsigned long long)s->dsos.symtabs_loaded);
}

static void warn_kernel_symbols(const struct bt_session *s)
{
	fprintf(stderr, "buildtrace: kernel symbols unavailable (%s)%s\n", strerror(-s->ksyms_err),
		s->ksyms_err == -EACCES ? ": /proc/kallsyms shows zero addresses; set "
		"kernel.kptr_restrict=0 or run as root" : "");
}

/* Opens, attaches and drops privileges, then samples until the session ends. 0, or the exit code
 * after saying what failed. */
static int start_and_loop(struct record_ctx *rc, const struct record_args *a, bool live)
{
	struct bt_live_opts lo = {
		.pids = a->pids, .npids = a->npids, .all = a->all, .user = a->user, .kernel = a->kernel,
		.per_pid = a->per_pid, .freq_hz = a->freq, .ringbuf_bytes = a->ringbuf_bytes,
		.dwarf = a->dwarf, .ustack_bytes = a->ustack_bytes, .cache_dir = a->cache_dir,
		.cache_store = !a->no_cache, .cache_max_size = a->cache_max_size,
		.cache_max_file = a->cache_max_file, .debuginfod = !a->no_debuginfod, .duration = a->duration,
		.stop = &stop_signal, .log = record_log, .on_tick = live ? live_view : NULL, .ctx = rc,
	};
	struct bt_live *l = &rc->live;
	char msg[512];
	int err = bt_live_init(l, &lo);
	if (err)
		return bt_cli_error(1, "cannot start the session: %s", strerror(-err));
	if (a->kernel && l->session.ksyms_err)
		warn_kernel_symbols(&l->session);
	if (bt_live_attach(l, msg, sizeof(msg)))
		return bt_cli_error(1, "%s", msg);
	if ((err = bt_live_drop_privileges()) && a->verbose)
		fprintf(stderr, "buildtrace: could not drop capabilities: %s\n", strerror(-err));
	bt_live_catch_stop(on_signal);
	if ((err = bt_live_run(l)))
		return bt_cli_error(1, "reading the ring buffer failed: %s", strerror(-err));
	return 0;
}

static int run(struct record_args *a)
{
	char msg[512];
	if (bt_caps_check(msg, sizeof(msg)))
		return bt_cli_error(1, "%s; run as root (sudo buildtrace ...) or grant them with "
				    "setcap cap_bpf,cap_perfmon,cap_sys_ptrace,cap_dac_read_search,"
				    "cap_checkpoint_restore+ep", msg);
	struct out_file main_out = { .path = a->output, .fmt = a->fmt };
	int rcode = outs_open(&main_out, a);
	if (rcode)
		return rcode;
	struct record_ctx *rc = calloc(1, sizeof(*rc));
	if (!rc) {
		outs_discard(&main_out, a);
		return bt_cli_error(1, "out of memory");
	}
	rc->verbose = a->verbose;
	bool live = a->live_set ? a->live : isatty(STDERR_FILENO);
	if ((rcode = start_and_loop(rc, a, live)))
		goto out;
	int err = bt_live_collect(&rc->live, a->lines);
	if (err)
		bt_cli_error(0, "source lines: %s", strerror(-err));
	if ((rcode = outs_commit(&main_out, a, &rc->live)))
		goto out;
	if (live)
		fprintf(stderr, "\n");
	print_summary(a, &rc->live);
out:
	bt_live_close(&rc->live);
	free(rc);
	outs_discard(&main_out, a);
	return rcode;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	int r = parse_args(argc, argv, &a);
	if (r) {
		free(a.pids);
		free(a.also);
		return r == 1 ? 0 : r;
	}
	r = run(&a);
	free(a.pids);
	free(a.also);
	return r;
}
