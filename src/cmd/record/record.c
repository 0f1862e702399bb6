/* record.c - the live session: `buildtrace [-p PID[,PID...] | -a] ...` or `buildtrace [OPTIONS] --
 * COMMAND [ARGS...]`. Parses the command line, checks privileges, starts the command (launch.h),
 * runs the live driver (live.h), shows the live view and writes the profile when the session ends. */
#include <errno.h>
#include <fcntl.h>
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
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/live/launch.h"
#include "cmd/live/live.h"
#include "cmd/live/liveview.h"
#include "cmd/live/outfile.h"
#include "cmd/record/recordopts.h"
#include "output/output.h"
#include "session/session.h"

/* Set by the handler, read by the loop (through bt_live_opts.stop) and, for a command, by what passes
 * the signal on: whether the terminal sent it, and so to the command as well. */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_from_tty;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	if (stop_signal == SIGINT && sig == SIGINT)
		_exit(130);  /* a second Ctrl-C: leave at once */
	stop_from_tty = si && si->si_code == SI_KERNEL;
	stop_signal = sig;
}

static void catch_stop(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* The context of the driver's callbacks: the live session, how talkative to be, the command started
 * for the session, if any, and the live view. */
struct record_ctx {
	struct bt_live live;
	int verbose;
	struct bt_launch *launch;
	bool view_on;           /* the live view is on */
	struct bt_liveview view;
};

static void record_log(void *ctx, enum bt_log_level level, const char *msg)
{
	const struct record_ctx *rc = ctx;
	if (level <= BT_LOG_WARN || (level == BT_LOG_INFO && rc->verbose >= 1) || rc->verbose >= 2)
		bt_cli_say(msg);
}

/* The live view's hooks: once a second, and after every poll (keys, resizes). */
static void view_tick(void *ctx, struct bt_live *l, double elapsed)
{
	struct record_ctx *rc = ctx;
	bt_liveview_tick(&rc->view, l, elapsed);
}

static void view_turn(void *ctx, struct bt_live *l, double elapsed)
{
	struct record_ctx *rc = ctx;
	bt_liveview_turn(&rc->view, l);
}

static int out_commit(struct bt_outfile *o, const struct bt_session *s, const struct bt_output_opts *oo)
{
	return bt_out_finish(o, bt_output_session(s, o->fmt, oo, o->f));
}

static void outs_discard(struct bt_outfile *main_out, struct bt_record_args *a)
{
	bt_out_discard(main_out);
	for (size_t i = 0; i < a->nalso; i++)
		bt_out_discard(&a->also[i]);
}

/* Every output is created before profiling starts, by whoever can still rename it into place at
 * the end: a path that cannot be written fails now. 0, or the exit code after saying which path
 * and why (nothing is left open then). */
static int outs_open(struct bt_outfile *main_out, struct bt_record_args *a, struct bt_out_owner *own)
{
	const struct bt_outfile *bad = NULL;
	int err = bt_out_open(main_out, own);
	if (err)
		bad = main_out;
	for (size_t i = 0; !bad && i < a->nalso; i++)
		if ((err = bt_out_open(&a->also[i], own)))
			bad = &a->also[i];
	if (!bad)
		return 0;
	const char *path = bad->path;
	outs_discard(main_out, a);
	return bt_cli_error(1, "cannot write %s: %s", path, bt_out_error(own, err));
}

/* Every format is written from the one session: their totals and stacks agree. 0, or the exit code
 * after saying which file failed. */
static int outs_commit(struct bt_outfile *main_out, struct bt_record_args *a, const struct bt_live *l,
		       int main_pid)
{
	struct bt_output_opts oo = { .title = NULL, .period_ns = 1000000000ULL / a->freq,
				     .time_ns = l->start_ns, .duration_ns = (int64_t)(bt_live_elapsed(l) * 1e9),
				     .mono_ns = l->start_mono_ns, .main_pid = main_pid,
				     .view = a->wall ? BT_VIEW_WALL : a->off_cpu ? BT_VIEW_OFFCPU : BT_VIEW_CPU };
	const struct bt_outfile *failed = main_out;
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

static void print_dwarf_summary(const struct bt_record_args *a, const struct bt_session_stats *ss)
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

static void print_python_summary(const struct bt_live *l)
{
	const struct bt_pyprocs_stats *ps = &l->session.py.stats;
	const uint64_t *w = ps->walks;
	fprintf(stderr, "buildtrace: python: %llu interpreters, %llu stacks walked: complete %llu, cut at %d "
		"frames %llu, cut by a page not resident %llu, threads without Python %llu, idle %llu; %llu "
		"frames placed, %llu of them outer to a native stack cut short; %llu stacks marked [truncated]; "
		"%llu code objects read, %llu unreadable",
		(unsigned long long)ps->procs, (unsigned long long)ps->stacks, (unsigned long long)w[BT_PY_WALK_DONE],
		BT_PY_MAX_FRAMES, (unsigned long long)w[BT_PY_WALK_TRUNCATED], (unsigned long long)w[BT_PY_WALK_FAULT],
		(unsigned long long)w[BT_PY_WALK_NO_THREAD], (unsigned long long)w[BT_PY_WALK_IDLE],
		(unsigned long long)ps->frames, (unsigned long long)ps->rooted, (unsigned long long)ps->truncated, (unsigned long long)ps->code_reads,
		(unsigned long long)ps->code_failed);
	if (ps->unsupported) {
		fprintf(stderr, "; %llu interpreters of a version profiled natively (", (unsigned long long)ps->unsupported);
		for (size_t i = 0; i < ps->nunsupported_versions; i++) {
			unsigned v = ps->unsupported_versions[i];
			if (v)
				fprintf(stderr, "%s%u.%u", i ? ", " : "", v >> 8, v & 0xff);
			else
				fprintf(stderr, "%sunknown", i ? ", " : "");
		}
		fprintf(stderr, "; 3.8 to 3.13 are read)");
	}
	if (l->python_refused)
		fprintf(stderr, "; %llu interpreters the sampler could not take", (unsigned long long)l->python_refused);
	fprintf(stderr, "\n");
}

static void print_bpf_walk_summary(const struct bt_unwtables_stats *u, unsigned insns)
{
	double w = u->walks ? (double)u->walks : 1.0;
	fprintf(stderr, "buildtrace: call graph dwarf-bpf: %llu user stacks walked, %.1f frames each; %.1f%% "
		"reached the outermost frame, %.1f%% had a frame walked by frame pointer; %llu finished in "
		"buildtrace where the kernel met a process (%llu) or a file (%llu) whose table it did not have "
		"yet, %llu of them to the outermost frame, %llu after waiting for a table, %llu whose stack copy "
		"was lost; tables: %llu loaded (%llu from the cache, %llu compiled in %.0f ms, %llu refused from "
		"the cache, %llu stored), %llu files without one, %llu not to be had then, %llu evicted, %llu rows "
		"(%llu KiB) of %llu",
		(unsigned long long)u->walks, (double)u->walk_frames / w, 100.0 * (double)u->walks_done / w,
		100.0 * (double)u->walks_fp / w, (unsigned long long)u->walks_user,
		(unsigned long long)u->walks_no_proc, (unsigned long long)u->walks_no_table,
		(unsigned long long)u->walks_user_done, (unsigned long long)u->walks_held,
		(unsigned long long)u->cont_lost, (unsigned long long)u->loads, (unsigned long long)u->from_cache,
		(unsigned long long)u->compiled, (double)u->compile_ns / 1e6, (unsigned long long)u->cache_refused,
		(unsigned long long)u->cache_stored, (unsigned long long)u->load_failed,
		(unsigned long long)u->unavailable, (unsigned long long)u->evicted, (unsigned long long)u->rows,
		(unsigned long long)(u->rows * sizeof(struct bt_unw_row) >> 10), (unsigned long long)u->rows_max);
	if (insns)   /* 0: the kernel does not count them (before 5.16) */
		fprintf(stderr, "; the sampling program took the verifier %u instructions", insns);
	fprintf(stderr, "\n");
}

/* What off-CPU time was counted, over which window, and what of it has no stack or was lost. */
static void print_offcpu_summary(const struct bt_record_args *a, const struct bt_live *l)
{
	const struct bt_session_stats *ss = &l->session.stats;
	const struct bt_capture_stats *st = &l->stats;
	double win = (double)(l->offcpu_until - l->offcpu_from) / 1e9;
	fprintf(stderr, "buildtrace: off-CPU: %.3f s over %.3f s (sleeping %.3f, uninterruptible %.3f, runnable "
		"%.3f) in %llu stacks, %llu times off a CPU; %.3f s without a whole stack (blocked since before "
		"the session: kernel frames at most; over --off-cpu-rate: %llu stacks not taken), %.3f s in stacks "
		"with an unnamed frame",
		(double)ss->offcpu_ns / 1e9, win, (double)ss->offcpu_state_ns[BT_OFFCPU_SLEEP] / 1e9,
		(double)ss->offcpu_state_ns[BT_OFFCPU_UNINT] / 1e9, (double)ss->offcpu_state_ns[BT_OFFCPU_RUNQ] / 1e9,
		(unsigned long long)ss->offcpu_stacks, (unsigned long long)st->offcpu.blocks,
		(double)ss->offcpu_nostack_ns / 1e9, (unsigned long long)st->offcpu.unwalked,
		(double)bt_profile_unresolved_ns(&l->session.prof) / 1e9);
	if (st->offcpu.lost || st->offcpu.no_thread || ss->offcpu_lost_ns || st->drops[BT_REC_OFFCPU_STACK])
		fprintf(stderr, "; lost: %.3f s in %llu sums (table full), %llu threads not counted (table full), "
			"%.3f s whose stack never arrived (%llu stacks dropped: ring buffer full)",
			(double)st->offcpu.lost_ns / 1e9, (unsigned long long)st->offcpu.lost,
			(unsigned long long)st->offcpu.no_thread, (double)ss->offcpu_lost_ns / 1e9,
			(unsigned long long)st->drops[BT_REC_OFFCPU_STACK]);
	fprintf(stderr, "\n");
	if (a->verbose)
		fprintf(stderr, "buildtrace: off-CPU window: %llu to %llu (CLOCK_MONOTONIC ns), %llu cuts, stack keys "
			"forgotten %llu times\n", (unsigned long long)l->offcpu_from,
			(unsigned long long)l->offcpu_until, (unsigned long long)st->offcpu.cuts,
			(unsigned long long)st->offcpu.forgets);
}

/* The summary on stderr: why the session ended and how complete its profile is. */
static void print_summary(const struct bt_record_args *a, const struct bt_live *l)
{
	const struct bt_session *s = &l->session;
	const struct bt_capture_stats *st = &l->stats;
	fprintf(stderr,
		"buildtrace: %s: %llu samples, %llu lost, %llu unresolved frames, %zu processes, "
		"%zu build-ids, %llu kallsyms reloads, %llu samples taken",
		l->why, (unsigned long long)s->stats.samples, (unsigned long long)bt_live_lost_samples(st),
		(unsigned long long)bt_profile_unresolved_frames(&s->prof), (size_t)s->procs.seen,
		bt_session_build_ids(s), (unsigned long long)s->stats.kallsyms_reloads,
		(unsigned long long)st->samples);
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
	if (s->dsos.cache_errors)
		fprintf(stderr, "buildtrace: %llu files could not be stored in the build-id cache: %s\n",
			(unsigned long long)s->dsos.cache_errors, strerror(-s->dsos.cache_last_err));
	if (b->full)
		fprintf(stderr, "buildtrace: %llu files not stored in the build-id cache: it holds its limit "
			"of %llu bytes (--cache-max-size, or buildtrace cache prune)\n", (unsigned long long)b->full,
			(unsigned long long)(b->max_total ? b->max_total : BT_BIDCACHE_MAX_TOTAL));
	if (s->log && s->log->late)
		fprintf(stderr, "buildtrace: %llu samples arrived after later ones were written to the sample log: "
			"they carry the time of the last one written\n", (unsigned long long)s->log->late);
	if (s->proc_mem.refused)
		fprintf(stderr, "buildtrace: %llu perf maps, jitdumps or Python code objects cut short or not read: "
			"together they reached the %llu MiB the profiled processes may make buildtrace hold\n",
			(unsigned long long)s->proc_mem.refused, (unsigned long long)(s->proc_mem.max >> 20));
	if (a->dwarf && s->stats.dwarf_stacks)
		print_dwarf_summary(a, &s->stats);
	if (s->py.stats.procs || s->py.stats.unsupported)
		print_python_summary(l);
	if (a->bpf_unwind && st->unw.walks)
		print_bpf_walk_summary(&st->unw, st->sample_insns);
	if (a->off_cpu || a->wall)
		print_offcpu_summary(a, l);
	if (a->verbose && st->load_progs) {
		if (st->load_insns)
			fprintf(stderr, "buildtrace: BPF programs: %u loaded, the verifier checked %u instructions "
				"(the sampling program %u)\n", st->load_progs, st->load_insns, st->sample_insns);
		else
			fprintf(stderr, "buildtrace: BPF programs: %u loaded (the kernel does not count the "
				"verifier's instructions)\n", st->load_progs);
	}
	if (a->verbose && s->stats.samples)
		fprintf(stderr, "buildtrace: ring buffer bytes per sample: %.0f (samples %.0f, stack copies %.0f); "
			"%llu KiB of ring buffer, read every %.0f ms at worst, %llu KiB most waiting for delivery\n",
			(double)(st->ring_bytes[BT_REC_SAMPLE] + st->ring_bytes[BT_REC_USTACK] +
				 st->ring_bytes[BT_REC_UCONT]) / (double)s->stats.samples,
			(double)st->ring_bytes[BT_REC_SAMPLE] / (double)s->stats.samples,
			(double)(st->ring_bytes[BT_REC_USTACK] + st->ring_bytes[BT_REC_UCONT]) / (double)s->stats.samples,
			(unsigned long long)(st->ringbuf_bytes >> 10), (double)st->reader_gap_ns / 1e6,
			(unsigned long long)(st->queue_peak >> 10));
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

/* 'q' in the live view ends the session; so does a launched command's exit, whatever its children
 * do (as with perf). */
static const char *session_done(void *ctx, struct bt_live *l)
{
	struct record_ctx *rc = ctx;
	if (rc->view_on && rc->view.quit)
		return "quit";
	if (rc->launch && bt_launch_reap(rc->launch, false) == 1)
		return "the command exited";
	return NULL;
}

/* Keeps what the session needs; a command running as another user also keeps the right to pass
 * signals on to it. */
static int drop_privileges(const struct record_ctx *rc)
{
	if (!rc->launch)
		return bt_live_drop_privileges();
	const char *keep = bt_caps_keep_after_attach();
	char buf[512];
	if (!keep)
		keep = "";
	snprintf(buf, sizeof(buf), "%s%scap_kill", keep, *keep ? "," : "");
	return bt_caps_drop(buf);
}

/* Whether an output shows samples one by one: the session then logs them. */
static bool per_sample(const struct bt_record_args *a)
{
	bool any = bt_format_per_sample(a->fmt);
	for (size_t i = 0; i < a->nalso; i++)
		any |= bt_format_per_sample(a->also[i].fmt);
	return any;
}

/* Opens, attaches and drops privileges, lets the command run, then samples until the session ends.
 * 0, or the exit code after saying what failed. */
static int start_and_loop(struct record_ctx *rc, const struct bt_record_args *a)
{
	int child = rc->launch ? rc->launch->pid : 0;
	struct bt_live_opts lo = {
		.pids = a->pids, .npids = a->npids, .all = a->all, .user = a->user, .kernel = a->kernel,
		.per_pid = a->per_pid, .per_tid = a->per_tid, .sample_log = per_sample(a),
		.scratch_dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : NULL, .freq_hz = a->freq, .ringbuf_bytes = a->ringbuf_bytes,
		.dwarf = a->dwarf, .bpf_unwind = a->bpf_unwind, .ustack_bytes = a->ustack_bytes, .cache_dir = a->cache_dir,
		.cache_store = !a->no_cache, .tables_store = !a->no_cache, .cache_max_size = a->cache_max_size,
		.cache_max_file = a->cache_max_file, .debuginfod = !a->no_debuginfod, .duration = a->duration,
		.stop = &stop_signal, .log = record_log, .ctx = rc, .done = session_done,
		.on_tick = rc->view_on ? view_tick : NULL, .on_turn = rc->view_on ? view_turn : NULL,
		.tids = a->tids, .ntids = a->ntids,
		.cpus = a->cpu_list ? a->cpus : NULL, .ncpus = a->cpu_list ? BT_RECORD_MAX_CPUS : 0,
		.off_cpu = a->off_cpu || a->wall, .offcpu_states = a->wall ? 0 : a->offcpu_states,
		.offcpu_min_ns = (uint64_t)(a->offcpu_min * 1e9), .offcpu_rate = a->offcpu_rate,
	};
	if (rc->launch && !a->all) {
		lo.pids = &child;
		lo.npids = 1;
	}
	struct bt_live *l = &rc->live;
	char msg[512];
	int err = bt_live_init(l, &lo);
	if (err)
		return bt_cli_error(1, "cannot start the session: %s", strerror(-err));
	/* Caught before the programs attach: once -v says the session samples, a SIGTERM or SIGINT
	 * must end it cleanly, and one that comes while attaching ends it as soon as it runs. */
	catch_stop();
	if (bt_live_attach(l, msg, sizeof(msg)))
		return bt_cli_error(1, "%s", msg);
	if (a->kernel && l->session.ksyms_err)
		warn_kernel_symbols(&l->session);
	if ((err = drop_privileges(rc)) && a->verbose)
		fprintf(stderr, "buildtrace: could not drop capabilities: %s\n", strerror(-err));
	/* -EPIPE: a signal to the terminal's foreground group killed the command while it was held;
	 * the loop, already told to stop, ends with its status */
	if (rc->launch && (err = bt_launch_release(rc->launch)) && err != -EPIPE)
		return bt_cli_error(err == -ENOENT ? 127 : 126, "cannot run %s: %s", a->cmd[0], strerror(-err));
	/* The command owns the keyboard when there is one. */
	if (rc->view_on)
		bt_liveview_start(&rc->view, STDERR_FILENO, rc->launch ? -1 : STDIN_FILENO, a->off_cpu || a->wall);
	err = bt_live_run(l);
	if (rc->view_on)
		bt_liveview_stop(&rc->view);
	if (err)
		return bt_cli_error(1, "reading the ring buffer failed: %s", strerror(-err));
	return 0;
}

/* The command before the session starts: found (else 127, or 126 when not executable, as a shell
 * says), the user it runs as, and forked to wait for the session. 0 or the exit code. */
static int launch_command(const struct bt_record_args *a, struct bt_launch *ln)
{
	int err = bt_launch_find(a->cmd[0], getenv("PATH"));
	if (err == -ENOENT)
		return bt_cli_error(127, "%s: command not found", a->cmd[0]);
	if (err)
		return bt_cli_error(126, "%s: %s", a->cmd[0], strerror(-err));
	struct bt_launch_user u;
	if (bt_launch_user_for(getenv("SUDO_UID"), getenv("SUDO_GID"), geteuid(), a->keep_root, &u))
		return bt_cli_error(2, "SUDO_UID and SUDO_GID must both be numeric user and group ids to run "
				    "the command as the user who called sudo (or use --keep-root)");
	if ((err = bt_launch_start(ln, a->cmd, &u)))
		return bt_cli_error(1, "cannot start %s: %s", a->cmd[0], strerror(-err));
	return 0;
}

/* Once the session has ended while the command still runs: the signal that ended it is passed on
 * (unless the terminal already sent it to the command), and the end of -d is SIGTERM, as perf
 * does. */
static void stop_command(struct bt_launch *ln)
{
	if (bt_launch_reap(ln, false) != 0)
		return;
	int sig = stop_signal ? (stop_from_tty ? 0 : stop_signal) : SIGTERM;
	if (sig)
		bt_launch_signal(ln, sig);
}

static int run(struct bt_record_args *a)
{
	char msg[512];
	if (bt_caps_check(msg, sizeof(msg)))
		return bt_cli_error(1, "%s; run as root (sudo buildtrace ...) or grant them with "
				    "setcap " BT_CAPS_SETCAP, msg);
	struct bt_outfile main_out = { .path = a->output, .fmt = a->fmt, .w = BT_WFILE_INIT };
	struct bt_out_owner owner;
	bt_out_owner_init(&owner, bt_caps_keep_after_attach());
	int rcode = outs_open(&main_out, a, &owner);
	if (rcode) {
		bt_out_owner_free(&owner);
		return rcode;
	}
	/* the sample log's older samples go to a scratch file there: one that cannot be made fails now */
	const char *scratch = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	int sfd = per_sample(a) ? bt_wfile_scratch(scratch) : -EBADF;
	if (sfd < 0 && sfd != -EBADF) {
		outs_discard(&main_out, a);
		bt_out_owner_free(&owner);
		return bt_cli_error(1, "cannot make a scratch file in %s for the samples of a per-sample format: %s "
				    "(TMPDIR chooses the directory)", scratch, strerror(-sfd));
	}
	if (sfd >= 0)
		close(sfd);
	struct record_ctx *rc = calloc(1, sizeof(*rc));
	struct bt_launch ln = { .pid = 0, .go_fd = -1, .err_fd = -1 };
	int cmd_pid = 0;
	if (!rc) {
		outs_discard(&main_out, a);
		bt_out_owner_free(&owner);
		return bt_cli_error(1, "out of memory");
	}
	rc->verbose = a->verbose;
	/* A command's own output shares the terminal: the live view only when asked for. */
	rc->view_on = a->live_set ? a->live : isatty(STDERR_FILENO) && !a->cmd;
	if (a->cmd) {
		if ((rcode = launch_command(a, &ln))) {
			free(rc);
			outs_discard(&main_out, a);
			bt_out_owner_free(&owner);
			return rcode;
		}
		rc->launch = &ln;
		cmd_pid = ln.pid;
	}
	if ((rcode = start_and_loop(rc, a)))
		goto out;
	if (rc->launch) {
		/* The command and what it started are gone: the loop may have seen that first. */
		if (bt_launch_reap(rc->launch, false) == 1 && !strcmp(rc->live.why, "every watched process exited"))
			rc->live.why = "the command exited";
		stop_command(rc->launch);
	}
	int err = bt_live_collect(&rc->live, a->lines);
	if (err)
		bt_cli_error(0, "source lines: %s", strerror(-err));
	/* the program: the command, or the first process asked for; none with -a */
	int main_pid = a->all ? 0 : a->cmd ? cmd_pid : a->npids ? a->pids[0] : 0;
	if ((rcode = outs_commit(&main_out, a, &rc->live, main_pid)))
		goto out;
	print_summary(a, &rc->live);
	if (rc->launch && bt_launch_reap(rc->launch, true) == 1)
		rcode = bt_launch_exit_code(rc->launch->status);
out:
	bt_live_close(&rc->live);
	bt_launch_close(&ln);
	free(rc);
	outs_discard(&main_out, a);
	bt_out_owner_free(&owner);
	return rcode;
}

int cmd_record(int argc, char **argv)
{
	struct bt_record_args a = { 0 };
	int r = bt_record_parse(argc, argv, &a);
	if (r == 0)
		r = run(&a);
	else if (r == 1)
		r = 0;
	bt_record_args_free(&a);
	return r;
}
