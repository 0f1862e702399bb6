/* agent.c - `buildtrace agent`: the always-on fleet agent. Samples the whole machine and, every
 * interval, writes one profile per format into the output directory (and the push spool), then
 * starts the next interval with the same process table and symbol tables, evicting the tables no
 * recent interval used. Reports its health in a status file. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/esc.h"
#include "cmd/agent/agentconf.h"
#include "cmd/agent/series.h"
#include "capture/capture.h"
#include "capture/caps.h"
#include "base/wfile.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"
#include "cmd/live/live.h"
#include "output/jsonout.h"
#include "output/output.h"
#include "output/profdir.h"
#include "cmd/net/push.h"
#include "cmd/net/serve.h"
#include "base/selfmem.h"
#include "session/session.h"

enum { O_CONFIG = BT_OPT_LONG, O_SETTINGS = BT_OPT_LONG + 16 };

/* The agent's own options; its settings (agentconf.c) follow them in bt_agent_doc's table. */
static const struct bt_opt agent_own_opts[] = {
	BT_OPT_HEAD("Options"),
	{ O_CONFIG, "config", "FILE", "settings as KEY = VALUE lines, the keys those below (see "
	  "buildtrace-agent.conf(5)); settings given on the command line win over the file, which must "
	  "be root's (or the agent's) and writable by no one else", .values = "@file" },
	{ 'v', "verbose", NULL, "say what is written and sent" },
	{ 'h', "help", NULL, "this text" },
	BT_OPT_HEAD("Settings (--KEY VALUE here, KEY = VALUE in the config file)"),
};

static struct bt_opt agent_opts[BT_OPTS_MAX];
static struct bt_cmd_doc agent_doc = {
	.name = "buildtrace agent",
	.summary = "sample the whole machine always, a profile per interval (fleet agent)",
	.usage = "buildtrace agent [--config FILE] [--KEY VALUE]... [-v]",
	.about = "Samples every process all the time; every interval writes one profile per format into the "
		 "output directory (timestamped names, the oldest removed beyond max-files) and, with push, "
		 "sends it to a Pyroscope-compatible server (POST /ingest) through a bounded spool that "
		 "survives restarts: one request per series and interval with samples, windows that tile time.\n\n"
		 "Each process is a target named by labels: relabel rules (Prometheus' relabel_config) over its "
		 "__meta_* labels give it a service_name and others, or drop it (then it is not sampled); each "
		 "label set is a series (at most max-series an interval, the rest folded into "
		 "service_name=other). 'buildtrace agent targets [--config FILE] [--json]' lists every live "
		 "process, its metadata and the labels the rules give it.\n\n"
		 "SIGTERM or SIGINT: a last profile, the spool sent for up to push-drain seconds, then exit 0. "
		 "SIGHUP: read the config file (and the credential files) again.",
};

const struct bt_cmd_doc *bt_agent_doc(void)
{
	if (!agent_doc.opts) {
		size_t n = sizeof(agent_own_opts) / sizeof(agent_own_opts[0]);
		memcpy(agent_opts, agent_own_opts, sizeof(agent_own_opts));
		n += bt_agent_conf_options(agent_opts + n, BT_OPTS_MAX - 1 - n, O_SETTINGS);
		agent_opts[n] = (struct bt_opt)BT_OPT_END;
		agent_doc.opts = agent_opts;
	}
	return &agent_doc;
}

/* Set by the handlers; the loop reads them through bt_live_opts.stop and struct agent's hup. */
static volatile sig_atomic_t got_stop, got_hup;

static void on_stop(int sig)
{
	got_stop = sig;
}

static void on_hup(int sig)
{
	got_hup = 1;
}

/* Settings from the command line, kept to be applied again over the config file on SIGHUP. */
struct cli_set {
	const char *key, *value;
};

struct agent {
	struct bt_agent_conf conf;
	const char *config_path;
	struct cli_set *cli;
	size_t ncli;
	int verbose;
	struct bt_live live;
	volatile sig_atomic_t *hup;    /* set by SIGHUP: read the config again */
	struct bt_push *push;
	uint64_t intervals, write_errors, files_removed;
	char last_write[64], last_error[256];
	uint64_t last_unresolved;
	uint64_t lost_before;          /* capture drops before this interval */
	int64_t from_ns;               /* wall clock when this interval began */
	int64_t push_from_s;           /* the next pushed window's start: the last one's end */
	int outfd;                     /* the output directory, held open: written whatever its path becomes */
	int statusfd;                  /* the status file's directory, and the file's name in it */
	char status_name[BT_AGENT_STR];
	struct bt_serve *serve;        /* the pull endpoint, when listening */
	struct bt_profile *pull;       /* the profile a pull request is being answered with */
	bool pull_off_cpu;             /* it asks for the off-CPU time */
	double pull_until;             /* in the loop's seconds */
	int64_t pull_from_ns;
	double metrics_at;             /* when /metrics was last refreshed, in the loop's seconds */
	double interval_start;         /* the same, in the loop's seconds */
	struct agent_series series;    /* the processes' labels: the session's targets */
	struct agent_select pull_select;  /* the series a pull request asked for */
	size_t last_series;            /* series of the last interval */
	uint64_t series_folded, series_folded_samples;  /* label sets and samples folded into other */
	double late_max;               /* the most an interval was written after its end, seconds */
};

static int load_conf(struct agent *a, struct bt_agent_conf *out, char *err, size_t errlen)
{
	bt_agent_conf_defaults(out);
	int e;
	if (a->config_path && (e = bt_agent_conf_load(out, a->config_path, err, errlen)))
		return e;
	for (size_t i = 0; i < a->ncli; i++)
		if ((e = bt_agent_conf_set(out, a->cli[i].key, a->cli[i].value, err, errlen)))
			return e;
	return bt_agent_conf_finish(out, err, errlen);
}

/* The records' clock. */
static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* "buildtrace agent: MSG" on stderr, escaped: a message may name what a profiled program chose. */
static void agent_say(const char *msg)
{
	fputs("buildtrace agent: ", stderr);
	bt_esc_write(stderr, msg, strlen(msg));
	fputc('\n', stderr);
}

static void capture_log(void *ctx, enum bt_log_level level, const char *msg)
{
	const struct agent *a = ctx;
	if (level <= BT_LOG_WARN || a->verbose)
		agent_say(msg);
}

static long status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	char line[256];
	long v = -1;
	size_t n = strlen(field);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

struct status_ctx {
	struct agent *a;
};

/* Paths and error texts may hold any bytes: written as valid JSON whatever they are. */
static void json_str(FILE *f, const char *s)
{
	bt_json_put_string(f, s, strlen(s));
}

/* The stack walk in BPF: how the stacks went, and where the tables came from. */
static void write_unwind_status(FILE *f, const struct bt_unwtables_stats *u)
{
	fprintf(f, ",\n  \"bpf_unwind\": {\"walks\": %llu, \"reached_outermost\": %llu, \"frame_pointer_used\": %llu, "
		"\"table_missing\": %llu, \"process_unknown\": %llu, \"finished_in_userspace\": %llu, "
		"\"finished_to_outermost\": %llu, \"waited_for_table\": %llu, \"stack_copies_lost\": %llu, "
		"\"tables\": %llu, \"tables_from_cache\": %llu, \"tables_compiled\": %llu, "
		"\"tables_refused_from_cache\": %llu, \"tables_unavailable\": %llu, \"rows\": %llu, "
		"\"rows_max\": %llu, \"files_without_table\": %llu, \"tables_evicted\": %llu}",
		(unsigned long long)u->walks, (unsigned long long)u->walks_done, (unsigned long long)u->walks_fp,
		(unsigned long long)u->walks_no_table, (unsigned long long)u->walks_no_proc,
		(unsigned long long)u->walks_user, (unsigned long long)u->walks_user_done,
		(unsigned long long)u->walks_held, (unsigned long long)u->cont_lost, (unsigned long long)u->tables,
		(unsigned long long)u->from_cache, (unsigned long long)u->compiled,
		(unsigned long long)u->cache_refused, (unsigned long long)u->unavailable,
		(unsigned long long)u->rows, (unsigned long long)u->rows_max, (unsigned long long)u->load_failed,
		(unsigned long long)u->evicted);
}

static int write_status(void *ctx, FILE *f)
{
	struct agent *a = ((struct status_ctx *)ctx)->a;
	struct bt_session *s = &a->live.session;
	struct bt_capture_stats cs = { 0 };
	bt_capture_stats(a->live.cap, &cs);
	/* What a leak would move (heap in use) apart from what only looks like growth (the ring
	 * buffer's pages, touched as its write position goes round). */
	struct bt_selfmem mem;
	bt_selfmem_read(NULL, &mem);
	uint64_t lost = bt_live_lost_samples(&cs), other = bt_live_lost_other(&cs);
	fprintf(f, "{\n  \"time_ns\": %lld,\n  \"pid\": %d,\n  \"intervals\": %llu,\n  \"samples\": %llu,\n"
		"  \"lost_samples\": %llu,\n  \"lost_other_records\": %llu,\n  \"unresolved_frames_last_interval\": %llu,\n"
		"  \"processes\": %zu,\n  \"processes_exited\": %llu,\n  \"build_ids\": %zu,\n  \"symtabs_loaded\": %llu,\n  \"symtabs_evicted\": %llu,\n"
		"  \"rss_kb\": %ld,\n  \"peak_rss_kb\": %ld,\n  \"heap_in_use_kb\": %llu,\n  \"rss_anon_kb\": %llu,\n"
		"  \"ring_buffer_kb\": %llu,\n  \"bpf_maps_rss_kb\": %llu,\n  \"symbol_tables_kb\": %llu,\n  \"kallsyms_reloads\": %llu,\n  \"last_write\": ",
		(long long)wall_ns(), (int)getpid(), (unsigned long long)a->intervals,
		(unsigned long long)s->stats.samples, (unsigned long long)lost, (unsigned long long)other,
		(unsigned long long)a->last_unresolved, s->procs.nprocs,
		(unsigned long long)s->stats.exits, bt_session_build_ids(s),
		(unsigned long long)s->dsos.symtabs_loaded, (unsigned long long)s->dsos.symtabs_evicted,
		status_kb("VmRSS"), status_kb("VmHWM"), (unsigned long long)(mem.heap_in_use / 1024),
		(unsigned long long)(mem.rss_anon / 1024), (unsigned long long)(cs.ringbuf_bytes / 1024),
		(unsigned long long)(mem.bpf_maps_rss / 1024),
		(unsigned long long)((bt_dso_tables_bytes(&s->dsos) + bt_kallsyms_bytes(s->ksyms)) / 1024),
		(unsigned long long)s->stats.kallsyms_reloads);
	json_str(f, a->last_write);
	fprintf(f, ",\n  \"write_errors\": %llu,\n  \"last_error\": ", (unsigned long long)a->write_errors);
	json_str(f, a->last_error);
	fprintf(f, ",\n  \"file_registry_kb\": %llu,\n  \"file_versions\": %zu,\n  \"dwarf_refused\": %llu",
		(unsigned long long)(bt_dso_registry_bytes(&s->dsos) / 1024), s->dsos.nfiles,
		(unsigned long long)s->dsos.dwarf_refused);
	const struct bt_targets_stats *ts = &a->series.targets.st;
	fprintf(f, ",\n  \"targets\": {\"processes_named\": %llu, \"processes_dropped\": %llu, \"named_from_sample\": %llu, "
		"\"samples_dropped\": %llu, \"samples_skipped\": %llu, \"skip_full\": %llu},\n"
		"  \"series\": {\"last_interval\": %zu, \"max\": %u, \"folded\": %llu, \"folded_samples\": %llu}",
		(unsigned long long)ts->targets, (unsigned long long)ts->dropped, (unsigned long long)ts->from_sample,
		(unsigned long long)s->stats.samples_dropped, (unsigned long long)cs.skipped,
		(unsigned long long)cs.skip_full, a->last_series, a->conf.max_series,
		(unsigned long long)a->series_folded, (unsigned long long)a->series_folded_samples);
	if (a->conf.off_cpu)
		fprintf(f, ",\n  \"off_cpu\": {\"ns\": %llu, \"times_off_cpu\": %llu, \"stacks\": %llu, \"stacks_not_taken\": %llu, "
			"\"without_stack_ns\": %llu, \"lost_ns\": %llu, \"threads_not_counted\": %llu, \"dropped_ns\": %llu}",
			(unsigned long long)s->stats.offcpu_ns, (unsigned long long)cs.offcpu.blocks,
			(unsigned long long)s->stats.offcpu_stacks, (unsigned long long)cs.offcpu.unwalked,
			(unsigned long long)s->stats.offcpu_nostack_ns,
			(unsigned long long)(cs.offcpu.lost_ns + s->stats.offcpu_lost_ns),
			(unsigned long long)cs.offcpu.no_thread, (unsigned long long)s->stats.offcpu_rule_ns);
	fprintf(f, ",\n  \"process_data\": {\"bytes\": %llu, \"max\": %llu, \"refused\": %llu}",
		(unsigned long long)s->proc_mem.used, (unsigned long long)s->proc_mem.max,
		(unsigned long long)s->proc_mem.refused);
	const struct bt_pyprocs_stats *py = &s->py.stats;
	fprintf(f, ",\n  \"python\": {\"interpreters\": %llu, \"unsupported\": %llu, \"stacks\": %llu, "
		"\"cut_not_resident\": %llu, \"frames\": %llu, \"outer_to_cut\": %llu, \"truncated\": %llu, "
		"\"code_unreadable\": %llu}",
		(unsigned long long)py->procs, (unsigned long long)py->unsupported, (unsigned long long)py->stacks,
		(unsigned long long)py->walks[BT_PY_WALK_FAULT], (unsigned long long)py->frames,
		(unsigned long long)py->rooted, (unsigned long long)py->truncated, (unsigned long long)py->code_failed);
	fprintf(f, ",\n  \"samples_taken\": %llu,\n  \"interval_late_max_ms\": %.0f",
		(unsigned long long)cs.samples, a->late_max * 1e3);
	if (cs.unw.walks || cs.unw.loads)
		write_unwind_status(f, &cs.unw);
	if (a->push) {
		struct bt_push_stats ps;
		bt_push_get_stats(a->push, &ps);
		fprintf(f, ",\n  \"push\": {\"sent\": %llu, \"errors\": %llu, \"dropped\": %llu, \"spool_files\": %llu, "
			"\"spool_bytes\": %llu, \"last_error\": ", (unsigned long long)ps.sent,
			(unsigned long long)ps.errors, (unsigned long long)ps.dropped,
			(unsigned long long)ps.spool_files, (unsigned long long)ps.spool_bytes);
		json_str(f, ps.last_error);
		fputc('}', f);
	}
	fputs("\n}\n", f);
	return ferror(f) ? -EIO : 0;
}

struct membuf {
	char *buf;
	size_t len;
};

static int write_membuf(void *ctx, FILE *f)
{
	const struct membuf *m = ctx;
	return fwrite(m->buf, 1, m->len, f) == m->len ? 0 : -EIO;
}

/* A format the agent writes: the profile's, its file name extension and the server's name for it,
 * of the CPU samples or, a profile type of its own, of the off-CPU time (files
 * buildtrace-off_cpu-TIME.EXT, counted in nanoseconds as the server is told). */
struct agent_format {
	enum bt_format fmt;
	const char *ext, *pushfmt;
	bool off_cpu;
};

static const struct agent_format pprof_format = { BT_FMT_PPROF, "pb.gz", "pprof", false };
static const struct agent_format folded_format = { BT_FMT_FOLDED, "folded", "folded", false };
static const struct agent_format off_pprof_format = { BT_FMT_PPROF, "pb.gz", "off_cpu.pprof", true };
static const struct agent_format off_folded_format = { BT_FMT_FOLDED, "folded", "off_cpu.folded", true };

/* The server's window for an interval ending at until_ns: whole seconds (as Pyroscope reads them),
 * each starting where the one before ended so that windows tile time, none counted twice. The
 * seconds are the intervals' ends rounded down: an interval of at least 1 s (when pushing) moves
 * them on by one at least. Only the last interval, cut short by the stop, can end within the
 * second its window starts: its window is that second, which holds the whole interval. */
static void push_window(struct agent *a, int64_t until_ns, int64_t *from_s, int64_t *until_s)
{
	*from_s = a->push_from_s;
	*until_s = until_ns / 1000000000;
	if (*until_s <= *from_s)
		*until_s = *from_s + 1;
	a->push_from_s = *until_s;
}

/* The interval's profile in one format: into memory, then the output directory (when the format is
 * one of the files') and the spool (when it is the one pushed and the interval has samples, or empty
 * intervals are pushed too). The interval is oo's, from time_ns for duration_ns. */
/* What a profile of format f writes: one profile type, CPU samples or off-CPU time (in nanoseconds
 * in folded text too). */
static struct bt_output_opts format_opts(const struct agent_format *f, const struct bt_output_opts *oo)
{
	struct bt_output_opts o = *oo;
	o.view = f->off_cpu ? BT_VIEW_OFFCPU : BT_VIEW_CPU;
	o.view_only = true;
	o.folded_ns = true;
	return o;
}

static void write_format(struct agent *a, const struct agent_format *f, const struct bt_output_opts *oo,
			 bool to_file, bool to_push, int64_t from_s, int64_t until_s)
{
	const char *ext = f->ext, *prefix = f->off_cpu ? "buildtrace-off_cpu" : "buildtrace";
	int64_t until_ns = oo->time_ns + oo->duration_ns;
	struct bt_output_opts o = format_opts(f, oo);
	struct membuf m = { 0 };
	int err = agent_encode(&a->live.session, NULL, NULL, f->fmt, &o, &m.buf, &m.len);
	char path[BT_AGENT_STR + 128];
	if (!err && !to_file)
		goto push;
	char name[128];
	if (!err)
		err = bt_profdir_name(name, sizeof(name), NULL, prefix, until_ns, ext);
	if (!err) {
		snprintf(path, sizeof(path), "%s/%s", a->conf.output_dir, name);
		err = bt_atomic_write_at(a->outfd, name, write_membuf, &m);
	}
	if (err) {
		a->write_errors++;
		snprintf(a->last_error, sizeof(a->last_error), "writing the %s profile: %s", ext, strerror(-err));
		agent_say(a->last_error);
	} else {
		snprintf(a->last_write, sizeof(a->last_write), "%s", strrchr(path, '/') + 1);
		unsigned removed = 0;
		bt_profdir_prune(a->outfd, prefix, ext, a->conf.max_files, &removed);
		a->files_removed += removed;
		if (a->verbose)
			fprintf(stderr, "buildtrace agent: wrote %s (%zu bytes)\n", path, m.len);
	}
push:
	if (!err && a->serve && f->fmt == BT_FMT_PPROF)
		bt_serve_set_latest(a->serve, f->off_cpu, m.buf, m.len);
	/* the whole profile is its one series' (none: an empty interval, pushed as the fallback's) */
	const struct bt_profile *pr = &a->live.session.prof;
	const char *series = pr->nseries ? bt_strtab_get(&pr->names, pr->series[0]) : NULL;
	if (!err && to_push && bt_push_enqueue(a->push, m.buf, m.len, f->pushfmt, from_s, until_s, series, 0) != 0)
		fprintf(stderr, "buildtrace agent: cannot spool the %s profile for pushing\n", ext);
	free(m.buf);
}

/* Whether series (its labels' id) of profile p has a value of kind: samples, or off-CPU time (a
 * series is one of the interval's as soon as either has some). */
static bool series_has(const struct bt_profile *p, uint32_t series, enum bt_value_kind kind)
{
	for (size_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].series_id == series && p->stacks[i].kind == kind && p->stacks[i].count)
			return true;
	return false;
}

/* An interval of several series pushed one request per series: each extracted from the interval's
 * profile, encoded and spooled with its labels; a series without values of the profile type's kind
 * (samples only, or off-CPU time only) is not sent, unless empty intervals are. */
static void push_series(struct agent *a, const struct agent_format *f, const struct bt_output_opts *oo,
			int64_t from_s, int64_t until_s)
{
	const struct bt_profile *pr = &a->live.session.prof;
	struct bt_output_opts o = format_opts(f, oo);
	for (size_t i = 0; i < pr->nseries; i++) {
		/* the interval's profile is left as it is meanwhile: the text stays where it is */
		const char *series = bt_strtab_get(&pr->names, pr->series[i]);
		if (!a->conf.push_empty && !series_has(pr, pr->series[i], f->off_cpu ? BT_VALUE_OFFCPU : BT_VALUE_SAMPLES))
			continue;
		char *buf = NULL;
		size_t len = 0;
		int err = agent_encode(&a->live.session, agent_series_is, (void *)series, f->fmt, &o, &buf, &len);
		if (!err)
			err = bt_push_enqueue(a->push, buf, len, f->pushfmt, from_s, until_s, series, (unsigned)i);
		if (err)
			fprintf(stderr, "buildtrace agent: cannot spool the %s profile of series %zu for pushing: %s\n",
				f->ext, i, strerror(-err));
		free(buf);
	}
}

/* Ends an interval: everything sampled so far named and written, then a fresh profile. */
static void end_interval(struct agent *a, int64_t from_ns, int64_t until_ns)
{
	struct bt_session *s = &a->live.session;
	/* Source lines are best effort here: a profile without them is still written. */
	bt_live_collect(&a->live, a->conf.lines);
	struct bt_output_opts oo = { .period_ns = 1000000000ULL / a->conf.freq_hz, .time_ns = from_ns,
				     .duration_ns = until_ns - from_ns };
	/* One request per interval, in one format; an interval without samples only when asked. */
	int64_t from_s = 0, until_s = 0;
	bool push = a->push && (s->prof.total || a->conf.push_empty);
	if (a->push)
		push_window(a, until_ns, &from_s, &until_s);
	bool pp = a->conf.fmt_pprof, fo = a->conf.fmt_folded;
	/* one request per series: several series are pushed apart, one is the whole profile */
	bool split = push && s->prof.nseries > 1;
	if (pp || (push && !a->conf.push_folded) || a->serve)
		write_format(a, &pprof_format, &oo, pp, push && !split && !a->conf.push_folded, from_s, until_s);
	if (fo || (push && a->conf.push_folded))
		write_format(a, &folded_format, &oo, fo, push && !split && a->conf.push_folded, from_s, until_s);
	if (split)
		push_series(a, a->conf.push_folded ? &folded_format : &pprof_format, &oo, from_s, until_s);
	a->last_series = s->prof.nseries;
	a->series_folded += s->prof.series_folded;
	a->series_folded_samples += s->prof.series_folded_samples;
	/* the off-CPU time, in the same window: its own profile type, sent when there is some */
	if (a->conf.off_cpu) {
		bool opush = a->push && (s->prof.offcpu_ns || a->conf.push_empty), osplit = opush && s->prof.nseries > 1;
		if (pp || (opush && !a->conf.push_folded) || a->serve)
			write_format(a, &off_pprof_format, &oo, pp, opush && !osplit && !a->conf.push_folded, from_s,
				     until_s);
		if (fo || (opush && a->conf.push_folded))
			write_format(a, &off_folded_format, &oo, fo, opush && !osplit && a->conf.push_folded, from_s,
				     until_s);
		if (osplit)
			push_series(a, a->conf.push_folded ? &off_folded_format : &off_pprof_format, &oo, from_s, until_s);
	}
	a->intervals++;
	a->last_unresolved = bt_profile_unresolved_frames(&s->prof);
	/* A new profile each interval: its tables would otherwise grow with every frame ever seen. */
	bool per_pid = s->prof.per_pid, labels = s->prof.labels;
	bt_profile_free(&s->prof);
	bt_profile_init(&s->prof);
	s->prof.per_pid = per_pid;
	s->prof.labels = labels;
	s->prof.series_max = a->conf.max_series;
	/* Symbol tables no interval asked for during evict-after are dropped. */
	s->dsos.epoch++;
	uint64_t keep = (uint64_t)(a->conf.evict_s / a->conf.interval_s) + 1;
	if (s->dsos.epoch > keep)
		bt_dso_evict(&s->dsos, s->dsos.epoch - keep);
	/* What the interval's profile, its encoding and evicted tables freed goes back to the system:
	 * malloc would keep it (it raises its threshold for returning large blocks as they are freed),
	 * and an always-on agent's resident size is what a fleet pays for. */
	malloc_trim(0);
	struct status_ctx sc = { a };
	int err = bt_atomic_write_at(a->statusfd, a->status_name, write_status, &sc);
	if (err && a->verbose)
		fprintf(stderr, "buildtrace agent: cannot write %s: %s\n", a->conf.status_file, strerror(-err));
}

/* chowns a directory of the agent's to pw's user, never through a link at its last component (a
 * user owning the parent could point it anywhere). 0 or -errno (-ELOOP: a link). */
static int give_dir(const char *path, const struct passwd *pw)
{
	int fd = bt_wfile_open_dir(path);
	if (fd < 0)
		return fd;
	int err = fchown(fd, pw->pw_uid, pw->pw_gid) != 0 ? -errno : 0;
	close(fd);
	return err;
}

/* After attaching: another user if configured, and only the capabilities the session still needs
 * (bt_caps_keep_after_attach). */
static int switch_user(const struct agent *a)
{
	const struct bt_agent_conf *c = &a->conf;
	if (!c->user[0])
		return 0;
	struct passwd *pw = getpwnam(c->user);
	if (!pw)
		return bt_cli_error(1, "user '%s' does not exist", c->user);
	/* The agent's own files must stay writable by the user it becomes: the output directory it
	 * holds open (checked not to be a link when it was opened). */
	int err = fchown(a->outfd, pw->pw_uid, pw->pw_gid) != 0 ? -errno : 0;
	const char *dir = c->output_dir;
	if (!err && c->push_url[0]) {
		err = give_dir(c->spool_dir, pw);
		dir = c->spool_dir;
	}
	if (err)
		return bt_cli_error(1, "cannot give %s to user %s: %s", dir, c->user,
				    err == -ELOOP ? "it is a symbolic link" : strerror(-err));
	if (prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) != 0 || setgroups(0, NULL) != 0 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 || setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0)
		return bt_cli_error(1, "cannot become user %s: %s", c->user, strerror(errno));
	prctl(PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L);
	return 0;
}

static int mkdirs(const char *path)
{
	char buf[BT_AGENT_STR];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* The directories a configuration writes to, held open. */
struct dirs {
	int out, status;
	char status_name[BT_AGENT_STR];
};

static void dirs_close(struct dirs *d)
{
	if (d->out >= 0)
		close(d->out);
	if (d->status >= 0)
		close(d->status);
	d->out = d->status = -1;
}

/* path opened as a directory this process can create files in, not through a link at its last
 * component (a user owning its parent could point it anywhere). fd or -errno (-ELOOP: a link). */
static int writable_dir(const char *path)
{
	int fd = bt_wfile_open_dir(path);
	if (fd < 0)
		return fd;
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static const char *dir_error(int err)
{
	return err == -ELOOP ? "it is a symbolic link (give the directory itself)" : strerror(-err);
}

/* The directories a configuration writes to, usable and held open in d: the output directory
 * created if missing and writable, the status file's directory existing and writable (it is not
 * created: a typo there should not make a tree of directories), neither of them a link, and the
 * status file not a directory. 0, or -errno with what is wrong in msg. */
static int check_dirs(const struct bt_agent_conf *c, struct dirs *d, char *msg, size_t len)
{
	*d = (struct dirs){ .out = -1, .status = -1 };
	int err = mkdirs(c->output_dir);
	if (err) {
		snprintf(msg, len, "cannot create %s: %s", c->output_dir, strerror(-err));
		return err;
	}
	if ((d->out = writable_dir(c->output_dir)) < 0) {
		err = d->out;
		snprintf(msg, len, "cannot write to %s: %s", c->output_dir, dir_error(err));
		return err;
	}
	char dir[BT_AGENT_STR];
	snprintf(dir, sizeof(dir), "%s", c->status_file);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = '\0';  /* "/status.json": the root */
	snprintf(d->status_name, sizeof(d->status_name), "%s", slash ? strrchr(c->status_file, '/') + 1 : c->status_file);
	struct stat st;
	if ((d->status = writable_dir(dir)) < 0) {
		err = d->status;
		snprintf(msg, len, "status-file %s: cannot write in %s: %s", c->status_file, dir, dir_error(err));
	} else if (!d->status_name[0] || (fstatat(d->status, d->status_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
					  S_ISDIR(st.st_mode))) {
		err = -EISDIR;
		snprintf(msg, len, "status-file %s: it is a directory", c->status_file);
	}
	if (err)
		dirs_close(d);
	return err;
}

/* The push worker's settings, as c holds them (pc points into c). */
static const struct bt_push_conf *push_conf(const struct bt_agent_conf *c, struct bt_push_conf *pc)
{
	*pc = (struct bt_push_conf){
		.url = c->push_url, .app_name = c->app_name, .labels = c->labels, .nlabels = c->nlabels,
		.basic_auth_file = c->basic_auth_file, .bearer_token_file = c->bearer_token_file,
		.headers = c->headers, .nheaders = c->nheaders, .ca_file = c->ca_file, .tls_verify = c->tls_verify,
		.spool_dir = c->spool_dir, .spool_max_files = c->spool_max_files,
		.spool_max_bytes = c->spool_max_bytes, .freq_hz = c->freq_hz,
	};
	return pc;
}

/* Whether what names the processes changed between two configurations. */
static bool targets_changed(const struct bt_agent_conf *o, const struct bt_agent_conf *n)
{
	return o->nrelabel != n->nrelabel || o->ntarget_env != n->ntarget_env || o->nlabels != n->nlabels ||
	       strcmp(o->app_name, n->app_name) ||
	       memcmp(o->relabel, n->relabel, sizeof(o->relabel[0]) * n->nrelabel) ||
	       memcmp(o->target_env, n->target_env, sizeof(o->target_env[0]) * n->ntarget_env) ||
	       memcmp(o->labels, n->labels, sizeof(o->labels[0]) * n->nlabels);
}

/* New rules: every process is named again, and sampled again until they drop it. */
static void targets_reload(struct agent *a)
{
	char msg[512];
	struct bt_session *s = &a->live.session;
	s->targets = NULL;
	agent_series_free(&a->series);
	bt_capture_skip_clear(a->live.cap);
	if (agent_series_init(&a->series, &a->conf, msg, sizeof(msg)) == 0)
		s->targets = &a->series.targets;
	else
		fprintf(stderr, "buildtrace agent: relabel: %s; processes are not told apart until the next reload\n", msg);
}

/* SIGHUP: the config file read again; what needs no new attachment takes effect now. */
static void reload(struct agent *a)
{
	struct bt_agent_conf n;
	struct bt_push_conf pc;
	char err[2 * BT_AGENT_STR + 128];  /* two paths and a reason */
	if (load_conf(a, &n, err, sizeof(err))) {
		fprintf(stderr, "buildtrace agent: config not reloaded: %s\n", err);
		return;
	}
	/* an output the agent could not write would fail every interval from now on */
	struct dirs d;
	if (check_dirs(&n, &d, err, sizeof(err))) {
		fprintf(stderr, "buildtrace agent: config not reloaded, the old one stays: %s\n", err);
		return;
	}
	close(a->outfd);
	close(a->statusfd);
	a->outfd = d.out;
	a->statusfd = d.status;
	memcpy(a->status_name, d.status_name, sizeof(a->status_name));
	if (n.freq_hz != a->conf.freq_hz || n.ringbuf_bytes != a->conf.ringbuf_bytes || strcmp(n.user, a->conf.user) ||
	    strcmp(n.listen, a->conf.listen) || strcmp(n.listen_token_file, a->conf.listen_token_file) ||
	    strcmp(n.listen_host, a->conf.listen_host) || n.idle != a->conf.idle ||
	    n.sample_labels != a->conf.sample_labels || n.off_cpu != a->conf.off_cpu)
		fprintf(stderr, "buildtrace agent: frequency, ring buffer size, user, listen (its token and host), "
			"idle, sample-labels and off-cpu change at the next start\n");
	n.freq_hz = a->conf.freq_hz;
	n.ringbuf_bytes = a->conf.ringbuf_bytes;
	memcpy(n.user, a->conf.user, sizeof(n.user));
	memcpy(n.listen, a->conf.listen, sizeof(n.listen));
	memcpy(n.listen_token_file, a->conf.listen_token_file, sizeof(n.listen_token_file));
	memcpy(n.listen_host, a->conf.listen_host, sizeof(n.listen_host));
	n.idle = a->conf.idle;
	n.sample_labels = a->conf.sample_labels;
	n.off_cpu = a->conf.off_cpu;
	/* The worker goes on when only credentials or headers changed (a request in flight is not cut
	 * short: the server might have taken it and get it again): the credential files are read
	 * again, so a rotated token is taken up. */
	bool push_changed = strcmp(n.push_url, a->conf.push_url) || strcmp(n.spool_dir, a->conf.spool_dir) ||
			    strcmp(n.app_name, a->conf.app_name) || n.nlabels != a->conf.nlabels ||
			    memcmp(n.labels, a->conf.labels, sizeof(n.labels[0]) * n.nlabels) ||
			    n.spool_max_files != a->conf.spool_max_files || n.spool_max_bytes != a->conf.spool_max_bytes ||
			    strcmp(n.ca_file, a->conf.ca_file) || n.tls_verify != a->conf.tls_verify;
	bool had_push = a->push != NULL, retarget = targets_changed(&a->conf, &n);
	a->conf = n;
	a->live.session.prof.series_max = n.max_series;
	if (retarget)
		targets_reload(a);
	if (a->push && !push_changed) {
		if (bt_push_set_auth(a->push, push_conf(&a->conf, &pc), err, sizeof(err)))
			fprintf(stderr, "buildtrace agent: credentials not reloaded: %s\n", err);
	} else {
		bt_push_stop(a->push);
		a->push = NULL;
		if (a->conf.push_url[0] && bt_push_start(push_conf(&a->conf, &pc), &a->push, err, sizeof(err)) != 0)
			fprintf(stderr, "buildtrace agent: cannot start pushing: %s\n", err);
	}
	if (a->push && !had_push)
		a->push_from_s = a->from_ns / 1000000000;
	fprintf(stderr, "buildtrace agent: config reloaded\n");
}

/* The Prometheus text of the agent's counters. */
static void metrics_text(struct agent *a, char *buf, size_t len)
{
	struct bt_session *s = &a->live.session;
	struct bt_capture_stats cs = { 0 };
	bt_capture_stats(a->live.cap, &cs);
	struct bt_push_stats ps = { 0 };
	if (a->push)
		bt_push_get_stats(a->push, &ps);
	long rss = status_kb("VmRSS");
	snprintf(buf, len,
		 "# HELP buildtrace_samples_total Samples taken.\n# TYPE buildtrace_samples_total counter\n"
		 "buildtrace_samples_total %llu\n"
		 "# HELP buildtrace_lost_samples_total Samples the ring buffer had no room for.\n"
		 "# TYPE buildtrace_lost_samples_total counter\nbuildtrace_lost_samples_total %llu\n"
		 "# HELP buildtrace_unresolved_frames Frames of the last interval that could not be named.\n"
		 "# TYPE buildtrace_unresolved_frames gauge\nbuildtrace_unresolved_frames %llu\n"
		 "# HELP buildtrace_processes Processes known.\n# TYPE buildtrace_processes gauge\n"
		 "buildtrace_processes %zu\n"
		 "# HELP buildtrace_build_ids Distinct build-ids seen.\n# TYPE buildtrace_build_ids gauge\n"
		 "buildtrace_build_ids %zu\n"
		 "# HELP buildtrace_resident_memory_bytes Resident memory of the agent.\n"
		 "# TYPE buildtrace_resident_memory_bytes gauge\nbuildtrace_resident_memory_bytes %lld\n"
		 "# HELP buildtrace_intervals_total Interval profiles written.\n"
		 "# TYPE buildtrace_intervals_total counter\nbuildtrace_intervals_total %llu\n"
		 "# HELP buildtrace_push_sent_total Profiles the push server acknowledged.\n"
		 "# TYPE buildtrace_push_sent_total counter\nbuildtrace_push_sent_total %llu\n"
		 "# HELP buildtrace_push_errors_total Push attempts that failed.\n"
		 "# TYPE buildtrace_push_errors_total counter\nbuildtrace_push_errors_total %llu\n"
		 "# HELP buildtrace_push_dropped_total Spooled profiles dropped to keep the spool bounded.\n"
		 "# TYPE buildtrace_push_dropped_total counter\nbuildtrace_push_dropped_total %llu\n"
		 "# HELP buildtrace_push_spool_files Profiles waiting in the spool.\n"
		 "# TYPE buildtrace_push_spool_files gauge\nbuildtrace_push_spool_files %llu\n",
		 (unsigned long long)s->stats.samples, (unsigned long long)bt_live_lost_samples(&cs),
		 (unsigned long long)a->last_unresolved, s->procs.nprocs, bt_session_build_ids(s),
		 rss < 0 ? 0LL : (long long)rss * 1024, (unsigned long long)a->intervals,
		 (unsigned long long)ps.sent, (unsigned long long)ps.errors, (unsigned long long)ps.dropped,
		 (unsigned long long)ps.spool_files);
	size_t used = strlen(buf);
	snprintf(buf + used, len - used,
		 "# HELP buildtrace_series Series of the last interval.\n# TYPE buildtrace_series gauge\n"
		 "buildtrace_series %zu\n"
		 "# HELP buildtrace_series_folded_total Label sets beyond max-series, folded into service_name=other.\n"
		 "# TYPE buildtrace_series_folded_total counter\nbuildtrace_series_folded_total %llu\n"
		 "# HELP buildtrace_samples_dropped_total Samples of processes the relabel rules drop.\n"
		 "# TYPE buildtrace_samples_dropped_total counter\nbuildtrace_samples_dropped_total %llu\n",
		 a->last_series, (unsigned long long)a->series_folded,
		 (unsigned long long)(s->stats.samples_dropped + cs.skipped));
}

/* The metrics as /metrics answers them until the next call. */
static void publish_metrics(struct agent *a)
{
	char text[8192];
	metrics_text(a, text, sizeof(text));
	bt_serve_set_metrics(a->serve, text);
}

/* The profile of a pull request ends: named, encoded, handed to the request. Samples stop going to
 * it first; the session's profile is the interval's again afterwards. */
static void finish_pull(struct agent *a)
{
	struct bt_session *s = &a->live.session;
	/* the off-CPU time of the request's seconds: its cut ends them (its records are delivered
	 * behind the samples read before it) */
	bt_live_offcpu_cut(&a->live, true);
	s->also_until_ns = mono_ns();
	while (bt_capture_poll(a->live.cap, 0) > 0)
		;
	s->also = NULL;
	struct bt_profile interval = s->prof;
	s->prof = *a->pull;
	bt_session_resolve(s);
	struct bt_output_opts oo = { .period_ns = 1000000000ULL / a->conf.freq_hz, .time_ns = a->pull_from_ns,
				     .duration_ns = wall_ns() - a->pull_from_ns,
				     .view = a->pull_off_cpu ? BT_VIEW_OFFCPU : BT_VIEW_CPU, .view_only = true };
	struct membuf m = { 0 };
	/* the series the request's labels select, all of them when it names none */
	struct agent_select *sel = &a->pull_select;
	int err = agent_encode(s, sel->n ? agent_select_keep : NULL, sel, BT_FMT_PPROF, &oo, &m.buf, &m.len);
	*a->pull = s->prof;
	s->prof = interval;
	bt_serve_job_done(a->serve, err ? NULL : m.buf, m.len);
	free(m.buf);
	bt_profile_free(a->pull);
	free(a->pull);
	a->pull = NULL;
}

/* The pull endpoint's part of each turn: a profile request taken up or finished, and the metrics
 * refreshed once a second. */
static void pull_turn(struct agent *a, double elapsed)
{
	struct bt_session *s = &a->live.session;
	if (a->pull && elapsed >= a->pull_until)
		finish_pull(a);
	char query[BT_SERVE_MAX_QUERY], why[128];
	bool off = false;
	unsigned secs = a->pull ? 0 : bt_serve_next_job(a->serve, query, sizeof(query), &off);
	if (secs && agent_select_parse(query, &a->pull_select, why, sizeof(why)) != 0) {
		if (a->verbose)
			fprintf(stderr, "buildtrace agent: profile request refused: %s\n", why);
		bt_serve_job_done(a->serve, NULL, 0);
	} else if (secs && (a->pull = calloc(1, sizeof(*a->pull))) != NULL) {
		/* the off-CPU time before the request's seconds is the interval's only (its cut's clock
		 * read after the request's start: the profile's duration holds all of its time; its
		 * records, delivered later, are timed before also_from_ns) */
		a->pull_from_ns = wall_ns();
		bt_live_offcpu_cut(&a->live, true);
		a->pull_off_cpu = off;
		bt_profile_init(a->pull);
		a->pull->per_pid = s->prof.per_pid;
		a->pull->labels = s->prof.labels;
		a->pull->series_max = a->conf.max_series;
		s->also = a->pull;
		s->also_from_ns = mono_ns();
		s->also_until_ns = 0;
		a->pull_until = elapsed + secs;
	} else if (secs) {
		bt_serve_job_done(a->serve, NULL, 0);
	}
	if (elapsed - a->metrics_at >= 1 || a->metrics_at == 0) {
		publish_metrics(a);
		a->metrics_at = elapsed;
	}
}

/* After every poll: a config reload asked for by SIGHUP, and the end of the interval when it is due. */
static void on_turn(void *ctx, struct bt_live *l, double elapsed)
{
	struct agent *a = ctx;
	if (*a->hup) {
		*a->hup = 0;
		reload(a);
	}
	/* The time now, not the turn's: the loop's own work since (naming frames once a second) would
	 * make an interval that much shorter than asked, and two pushed windows share a second. Each
	 * interval ends where it was due, not when the loop got to it: the windows keep time, and what
	 * a late turn delivered goes with the interval it closes (status.json says how late the worst
	 * one was). */
	elapsed = bt_live_elapsed(l);
	double due = a->interval_start + a->conf.interval_s;
	if (elapsed >= due) {
		double late = elapsed - due;
		int64_t until = a->from_ns + (int64_t)(a->conf.interval_s * 1e9);
		if (late > a->late_max)
			a->late_max = late;
		/* more than an interval behind: the next one starts now, not in the past */
		if (late >= a->conf.interval_s) {
			until = wall_ns();
			due = elapsed;
		}
		end_interval(a, a->from_ns, until);
		a->from_ns = until;
		a->interval_start = due;
	}
	if (a->serve)
		pull_turn(a, bt_live_elapsed(l));
}

/* A process the rules drop: the kernel side takes no more samples of it (while it stays in that
 * cgroup and program). When the kernel side has no room, it is dropped in userspace only. */
static void on_drop(void *ctx, int pid, uint64_t cgroup_id, uint64_t time_ns)
{
	struct agent *a = ctx;
	if (a->live.cap && pid > 0)
		bt_capture_skip(a->live.cap, pid, cgroup_id, time_ns);
}

/* The session's targets made from the configuration: the processes' labels and series. 0, or an
 * exit code after saying what failed. */
static int targets_start(struct agent *a)
{
	char msg[512];
	int err = agent_series_init(&a->series, &a->conf, msg, sizeof(msg));
	if (err)
		return bt_cli_error(1, "relabel: %s", msg);
	struct bt_session *s = &a->live.session;
	s->targets = &a->series.targets;
	s->on_drop = on_drop;
	s->drop_ctx = a;
	s->prof.series_max = a->conf.max_series;
	return 0;
}

/* The pull endpoint, with its token read from its file (a secret: no one but root and the agent may
 * read or change it). 0 or -errno with a message in msg. */
static int open_serve(struct agent *a, char *msg, size_t len)
{
	const struct bt_agent_conf *c = &a->conf;
	char token[256] = "";
	int err = c->listen_token_file[0] ? bt_push_read_secret(c->listen_token_file, token, sizeof(token), msg, len) : 0;
	if (!err && c->listen_token_file[0] && strlen(token) < 16) {
		err = -EINVAL;
		snprintf(msg, len, "listen-token-file %s: a token of 16 characters at least", c->listen_token_file);
	}
	struct bt_serve_opts so = { .listen = c->listen, .token = token[0] ? token : NULL,
				    .host = c->listen_host[0] ? c->listen_host : NULL };
	if (!err)
		err = bt_serve_open(&so, &a->serve, msg, len);
	explicit_bzero(token, sizeof(token));
	return err;
}

/* Attached and running as the configured user with only the capabilities it still needs: 0, or the
 * exit code after saying what failed. */
static int start(struct agent *a)
{
	char msg[2 * BT_AGENT_STR + 128];
	struct bt_agent_conf *c = &a->conf;
	struct bt_push_conf pc;
	struct bt_live_opts lo = {
		.all = true, .user = true, .kernel = true, .freq_hz = c->freq_hz,
		.labels = c->sample_labels, .idle = c->idle, .off_cpu = c->off_cpu, .offcpu_rate = BT_LIVE_OFFCPU_RATE,
		.ringbuf_bytes = c->ringbuf_bytes, .dwarf = c->dwarf, .bpf_unwind = c->bpf_unwind, .ustack_bytes = c->ustack_bytes,
		.cache_store = false, .tables_store = true, .proc_mem_max = c->process_data_max, .stop = &got_stop,
		.log = capture_log, .on_turn = on_turn, .ctx = a, .skip = true,
	};
	int err = bt_live_init(&a->live, &lo);
	if (err)
		return bt_cli_error(1, "cannot start the session: %s", strerror(-err));
	if ((err = targets_start(a)))
		return err;
	if (bt_live_attach(&a->live, msg, sizeof(msg)))
		return bt_cli_error(1, "%s", msg);
	if (c->push_url[0] && (err = bt_push_open(push_conf(c, &pc), &a->push, msg, sizeof(msg))))
		return bt_cli_error(1, "%s", msg);
	if (c->listen[0] && (err = open_serve(a, msg, sizeof(msg))))
		return bt_cli_error(1, "%s", msg);
	if (a->serve && c->off_cpu)
		bt_serve_set_off_cpu(a->serve);
	if ((err = switch_user(a)))
		return err;
	if ((err = bt_live_drop_privileges()))
		fprintf(stderr, "buildtrace agent: could not drop capabilities: %s\n", strerror(-err));
	/* /metrics answers from the first request on (the loop refreshes it each second) */
	if (a->serve)
		publish_metrics(a);
	/* Threads keep the capabilities they were created with: the workers start after the drop. */
	if ((a->push && (err = bt_push_run(a->push, msg, sizeof(msg)))) ||
	    (a->serve && (err = bt_serve_run(a->serve, msg, sizeof(msg)))))
		return bt_cli_error(1, "%s", msg);
	malloc_trim(0);  /* what loading freed (kallsyms' text, the BPF object) */
	return 0;
}

static int run(struct agent *a)
{
	char msg[2 * BT_AGENT_STR + 128];
	struct bt_agent_conf *c = &a->conf;
	if (bt_caps_check(msg, sizeof(msg)))
		return bt_cli_error(1, "%s; run the agent as root (it drops what it does not need)", msg);
	struct dirs d;
	if (check_dirs(c, &d, msg, sizeof(msg)))
		return bt_cli_error(1, "%s", msg);
	a->outfd = d.out;
	a->statusfd = d.status;
	memcpy(a->status_name, d.status_name, sizeof(a->status_name));
	/* Caught before the programs attach: a SIGTERM once the agent says it samples ends it cleanly. */
	bt_live_catch_stop(on_stop);
	int rc = start(a);
	if (rc)
		goto out;
	struct sigaction sa = { .sa_handler = on_hup };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	a->hup = &got_hup;
	char url[BT_AGENT_STR];
	bt_push_redact_url(c->push_url, url, sizeof(url));
	fprintf(stderr, "buildtrace agent: sampling every CPU at %u Hz%s, a profile every %g s into %s%s%s\n",
		c->freq_hz, c->off_cpu ? " and counting off-CPU time" : "", c->interval_s, c->output_dir,
		c->push_url[0] ? ", pushed to " : "", url);
	a->from_ns = wall_ns();
	a->push_from_s = a->from_ns / 1000000000;
	a->interval_start = 0;
	int err = bt_live_run(&a->live);
	if (err) {
		rc = bt_cli_error(1, "reading the ring buffer failed: %s", strerror(-err));
		goto out;
	}
	/* The last, partial interval is a profile too; what the spool holds then gets push-drain seconds
	 * to reach the server, and status.json says what it acknowledged. */
	end_interval(a, a->from_ns, wall_ns());
	if (a->push) {
		bt_push_drain(a->push, a->conf.drain_s);
		struct status_ctx sc = { a };
		bt_atomic_write_at(a->statusfd, a->status_name, write_status, &sc);
	}
	fprintf(stderr, "buildtrace agent: %s: %llu intervals, %llu samples\n", a->live.why,
		(unsigned long long)a->intervals, (unsigned long long)a->live.session.stats.samples);
out:
	if (a->pull) {
		a->live.session.also = NULL;
		bt_profile_free(a->pull);
		free(a->pull);
	}
	bt_serve_stop(a->serve);
	bt_push_stop(a->push);
	bt_live_close(&a->live);
	agent_series_free(&a->series);
	if (a->outfd >= 0)
		close(a->outfd);
	if (a->statusfd >= 0)
		close(a->statusfd);
	return rc;
}

int cmd_agent(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "targets"))
		return cmd_agent_targets(argc - 1, argv + 1);
	const struct bt_cmd_doc *doc = bt_agent_doc();
	struct bt_getopt g;
	if (bt_opts_getopt(doc->opts, ":", &g))
		return bt_cli_error(1, "too many options");
	struct agent *a = calloc(1, sizeof(*a));
	if (!a)
		return bt_cli_error(1, "out of memory");
	a->outfd = a->statusfd = -1;
	a->cli = calloc((size_t)argc + 1, sizeof(*a->cli));
	if (!a->cli) {
		free(a);
		return bt_cli_error(1, "out of memory");
	}
	int c, rc = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		const struct bt_opt *o = c == '?' || c == ':' ? NULL : bt_opts_find(doc->opts, c);
		const char *key = NULL;
		switch (c) {
		case O_CONFIG: a->config_path = optarg; break;
		case 'v': a->verbose++; break;
		case 'h': bt_opts_usage(stdout, doc); goto done;
		case ':': rc = bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]); goto done;
		default:
			if (!o) {
				rc = bt_cli_error(2, "unknown option '%s' (see buildtrace agent --help)",
						  argv[optind - 1]);
				goto done;
			}
			key = o->name;  /* a setting: its key is its long name */
		}
		if (key)
			a->cli[a->ncli++] = (struct cli_set){ key, optarg };
	}
	if (optind < argc) {
		rc = bt_cli_error(2, "unexpected argument '%s' (see buildtrace agent --help)", argv[optind]);
		goto done;
	}
	char err[512];
	if (load_conf(a, &a->conf, err, sizeof(err))) {
		rc = bt_cli_error(2, "%s", err);
		goto done;
	}
	unsigned long max = bt_cli_max_sample_rate();
	if (a->conf.freq_hz > max) {
		rc = bt_cli_error(2, "frequency %u Hz is above kernel.perf_event_max_sample_rate (%lu)",
				  a->conf.freq_hz, max);
		goto done;
	}
	rc = run(a);
done:
	free(a->cli);
	free(a);
	return rc;
}
