/* live.c - a live session from open to finish: the loop `record` and `agent` share. It opens the
 * capture into a session, drives the poll/tick loop and names what was sampled; it prints nothing. */
#include "cmd/live/live.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "capture/caps.h"
#include "symsrc/bidcache.h"
#include "symsrc/debuginfod_client.h"
#include "symsrc/symsrc.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

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

static void say(const struct bt_live *l, enum bt_log_level level, const char *msg)
{
	if (l->opts.log)
		l->opts.log(l->opts.ctx, level, msg);
}

/* debuginfod is asked for but its cache is someone else's to change. */
static void say_untrusted_cache(const struct bt_live *l)
{
	char why[PATH_MAX + 64] = "", msg[PATH_MAX + 192];
	bt_debuginfod_cache_check(why, sizeof(why));
	snprintf(msg, sizeof(msg), "debuginfod not used: its cache is not safe, %s (set DEBUGINFOD_CACHE_PATH "
		 "to a directory only you can change)", why);
	say(l, BT_LOG_WARN, msg);
}

static int writable_dir(void *path)
{
	return faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0 ? 0 : -errno;
}

/* The build-id cache, before anything is stored: one bidcache refuses (a link someone else made,
 * another user's directory) is said so, and so is one this process will not be allowed to write
 * once it has dropped its capabilities (another user's directory under sudo: binaries are stored
 * after the drop); either way nothing is stored. Whether to store. */
static bool cache_usable(const struct bt_live *l)
{
	char dir[PATH_MAX], why[PATH_MAX + 64], msg[2 * PATH_MAX + 256];
	struct bt_symsrc_opts so = { .cache_dir = l->opts.cache_dir };
	if (bt_symsrc_cache_dir(&so, dir, sizeof(dir)) != 0)
		return false;
	int err = bt_bidcache_check_root(dir, why, sizeof(why));
	if (err) {
		snprintf(msg, sizeof(msg), "the build-id cache is not used: %s (give one with --cache-dir)", why);
		say(l, BT_LOG_WARN, msg);
		return false;
	}
	/* not made yet: made then, in the nearest directory that exists */
	char probe[PATH_MAX];
	snprintf(probe, sizeof(probe), "%s", dir);
	struct stat st;
	while (stat(probe, &st) != 0 && strrchr(probe, '/') && strrchr(probe, '/') != probe)
		*strrchr(probe, '/') = '\0';
	if ((err = bt_caps_with_only(bt_caps_keep_after_attach(), writable_dir, probe)) != 0) {
		snprintf(msg, sizeof(msg), "binaries and unwind tables are not stored in the build-id cache %s: "
			 "once attached, buildtrace may not write in %s (%s; it keeps no capability to write "
			 "where it may not)",
			 dir, probe, strerror(-err));
		say(l, BT_LOG_WARN, msg);
		return false;
	}
	return true;
}

static bool tid_wanted(const struct bt_live_opts *o, uint32_t tid)
{
	for (size_t i = 0; i < o->ntids; i++)
		if ((uint32_t)o->tids[i] == tid)
			return true;
	return false;
}

/* The capture has one context for its two callbacks: the driver, which passes each on. The samples
 * (and user stacks) of threads not asked for stop here; the rest of a process's records are its
 * threads' common ground. */
static int on_record(void *ctx, const struct bt_rec_hdr *rec)
{
	struct bt_live *l = ctx;
	if (l->opts.tids && rec->type == BT_REC_SAMPLE && rec->size >= offsetof(struct bt_rec_sample, ips) &&
	    !tid_wanted(&l->opts, ((const struct bt_rec_sample *)rec)->tid))
		return 0;
	if (l->opts.tids && rec->type == BT_REC_USTACK && rec->size >= sizeof(struct bt_rec_ustack) &&
	    !tid_wanted(&l->opts, ((const struct bt_rec_ustack *)rec)->tid))
		return 0;
	/* an off-CPU stack may be another thread's too: only the time is the thread's */
	if (l->opts.tids && rec->type == BT_REC_OFFCPU && rec->size >= sizeof(struct bt_rec_offcpu) &&
	    ((const struct bt_rec_offcpu *)rec)->key && !tid_wanted(&l->opts, ((const struct bt_rec_offcpu *)rec)->tid))
		return 0;
	return bt_session_record(&l->session, rec);
}

static void on_log(void *ctx, enum bt_log_level level, const char *msg)
{
	say(ctx, level, msg);
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int bt_live_init(struct bt_live *l, const struct bt_live_opts *opts)
{
	l->opts = *opts;
	l->cap = NULL;
	l->dbgd = NULL;
	l->python_refused = 0;
	l->offcpu_from = l->offcpu_until = 0;
	raise_nofile();
	/* binaries and unwind tables alike are stored after the drop */
	l->cache_ok = (opts->cache_store || opts->tables_store) && cache_usable(l);
	bool store = opts->cache_store && l->cache_ok;
	struct bt_session_opts so = { .proc_root = "", .kernel = opts->kernel, .kernel_later = true, .per_pid = opts->per_pid,
				      .per_tid = opts->per_tid, .sample_log = opts->sample_log, .scratch_dir = opts->scratch_dir,
				      .labels = opts->labels, .cache_dir = opts->cache_dir, .cache_store = store,
				      .cache_max_file = opts->cache_max_file, .cache_max_size = opts->cache_max_size,
				      .bpf_walk = opts->bpf_unwind && opts->user && !opts->dwarf,
				      .proc_mem_max = opts->proc_mem_max };
	int err = bt_session_init(&l->session, &so);
	if (err)
		return err;
	/* Only user frames have files debuginfod could know. */
	if (opts->debuginfod && opts->user && bt_debuginfod_configured()) {
		struct bt_debuginfod_opts dopts = { .timeout_ms = 10000 };
		int derr = bt_debuginfod_new(&dopts, &l->dbgd);
		if (derr == 0)
			bt_dso_set_debuginfod(&l->session.dsos, l->dbgd);
		else if (derr == -EPERM)
			say_untrusted_cache(l);
		else
			say(l, BT_LOG_INFO, "debuginfod is configured but unusable");
	}
	return 0;
}

/* The interpreters the session found since the last turn, or lost, told to the sampler. A process
 * the map has no room for is walked without its Python frames. */
static void python_updates(struct bt_live *l)
{
	struct bt_py_update u[16];
	size_t n;
	while ((n = bt_pyprocs_take(&l->session.py, u, 16)) > 0)
		for (size_t i = 0; i < n; i++)
			if (bt_capture_python(l->cap, u[i].pid, u[i].add ? &u[i].bpf : NULL) && u[i].add)
				l->python_refused++;
}

static int table_load(void *ctx, const uint8_t *bid, size_t len, struct bt_ehtable *t, struct bt_elf_layout *lay)
{
	return bt_unwcache_load(ctx, bid, len, t, lay);
}

static int table_save(void *ctx, const uint8_t *bid, size_t len, const char *path, const struct bt_ehtable *t,
		      const struct bt_elf_layout *lay)
{
	return bt_unwcache_save(ctx, bid, len, path, t, lay);
}

int bt_live_attach(struct bt_live *l, char *msg, size_t len)
{
	const struct bt_live_opts *o = &l->opts;
	/* The tables are read and written by the capture's worker thread alone. */
	bool cache = bt_unwcache_init(&l->tables, o->cache_dir, o->tables_store && l->cache_ok) == 0;
	l->store = (struct bt_unwtables_store){ .load = table_load, .save = table_save, .ctx = &l->tables };
	struct bt_capture_opts co = {
		.sz = sizeof(co), .pids = o->pids, .npids = o->npids, .all = o->all, .samples = !o->no_sampler,
		.user_stacks = o->user, .kernel_stacks = o->kernel, .follow_forks = true,
		.freq_hz = o->freq_hz, .ringbuf_bytes = o->ringbuf_bytes,
		.on_record = on_record, .ctx = l, .log = on_log, .dwarf = o->dwarf, .bpf_unwind = o->bpf_unwind,
		.ustack_bytes = o->ustack_bytes, .cpus = o->cpus, .ncpus = o->ncpus,
		.idle = o->idle, .python = o->user, .skip = o->skip, .unw_store = cache ? &l->store : NULL,
		.off_cpu = o->off_cpu, .offcpu_states = o->offcpu_states, .offcpu_min_ns = o->offcpu_min_ns,
		.offcpu_rate = o->offcpu_rate,
	};
	int err = bt_capture_open(&co, &l->cap, msg, len);
	if (err)
		return err;
	/* The interpreters the initial snapshot found, walked from the first samples on, not from the
	 * first turn of the loop. */
	python_updates(l);
	/* Off-CPU time counts from now on, as samples do: everything is attached. */
	if (o->off_cpu && (err = bt_capture_offcpu_begin(l->cap, &l->offcpu_from))) {
		if (!l->offcpu_from) {
			snprintf(msg, len, "beginning to count off-CPU time: %s", strerror(-err));
			return err;
		}
		char m[160];
		snprintf(m, sizeof(m), "off-CPU time of the threads already off a CPU at the start is not "
			 "counted: %s", strerror(-err));
		say(l, BT_LOG_WARN, m);
	}
	l->offcpu_until = l->offcpu_from;
	/* Kernel symbols are read now that the programs are loaded: their own frames are named, and
	 * the memory the loader used (the kernel's BTF, several MB) is freed before kallsyms' table
	 * is built, which keeps the peak RSS down. */
	bt_capture_stats(l->cap, &l->stats);
	if (o->kernel && bt_session_load_kallsyms(&l->session) == 0)
		l->kallsyms_at = now_s();
	return 0;
}

int bt_live_drop_privileges(void)
{
	/* What stays: reading other processes' mappings, files and kernel symbols, and the snapshots'
	 * bpf() calls. */
	return bt_caps_drop(bt_caps_keep_after_attach());
}

void bt_live_catch_stop(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* kallsyms read again when kernel frames went unnamed, at most once per BT_LIVE_KALLSYMS_GAP_S.
 * Whether it was. */
static bool reload_kallsyms(struct bt_live *l)
{
	struct bt_session *s = &l->session;
	double t = now_s();
	if (!l->opts.kernel || !s->ksyms_misses ||
	    (l->kallsyms_at > 0 && t - l->kallsyms_at < BT_LIVE_KALLSYMS_GAP_S))
		return false;
	l->kallsyms_at = t;
	return bt_session_reload_kallsyms(s) == 0;
}

/* Once a second: the process table, the kernel's symbols and the frame names kept current. */
static void tick(struct bt_live *l)
{
	struct bt_session *s = &l->session;
	bt_session_reap(s, 5ULL * 1000000000);
	/* Kernel frames without a name: code appeared that nothing announced. */
	reload_kallsyms(l);
	/* Names for the frames that arrived this second (and debuginfod lookups started). */
	bt_session_poll_debuginfod(s, 0);
	bt_session_resolve(s);
}

/* A poll wakes at least every 100 ms, and not later than the end of the duration. */
static int poll_timeout(double duration, double elapsed)
{
	int timeout = 100;
	if (duration > 0 && (duration - elapsed) * 1000 < timeout)
		timeout = (int)((duration - elapsed) * 1000) + 1;
	return timeout;
}

int bt_live_offcpu_cut(struct bt_live *l, bool now)
{
	if (!l->opts.off_cpu || !l->offcpu_from)
		return 0;
	uint64_t t = 0;
	if (!now && l->offcpu_until && mono_ns() - l->offcpu_until < 1000000000ULL)
		return 0;
	int n = bt_capture_offcpu_cut(l->cap, &t);
	if (n < 0)
		return n;
	if (t)
		l->offcpu_until = t;
	return 0;
}

int bt_live_run(struct bt_live *l)
{
	const struct bt_live_opts *o = &l->opts;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	l->t0 = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	l->start_mono_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	l->start_ns = wall_ns();
	l->why = "stopped";
	double last_tick = l->t0;
	for (;;) {
		if (o->stop && *o->stop) {
			l->why = *o->stop == SIGINT ? "interrupted" : "terminated";
			l->ended = true;
			return 0;
		}
		double t = now_s();
		if (o->duration > 0 && t - l->t0 >= o->duration) {
			l->why = "duration reached";
			l->ended = true;
			return 0;
		}
		int err = bt_capture_poll(l->cap, poll_timeout(o->duration, t - l->t0));
		if (err < 0 && err != -EINTR)
			return err;
		python_updates(l);
		t = now_s();
		if (t - last_tick >= 1.0) {
			last_tick = t;
			if ((err = bt_live_offcpu_cut(l, true)) && err != -EINTR)
				return err;
			tick(l);
			if (o->on_tick)
				o->on_tick(o->ctx, l, t - l->t0);
			if (!o->all && bt_capture_watched_alive(l->cap) == 0) {
				l->why = "every watched process exited";
				l->ended = true;
				return 0;
			}
		}
		if (o->on_turn)
			o->on_turn(o->ctx, l, t - l->t0);
		const char *why = o->done ? o->done(o->ctx, l) : NULL;
		if (why) {
			l->why = why;
			l->ended = true;
			return 0;
		}
	}
}

int bt_live_collect(struct bt_live *l, bool lines)
{
	struct bt_session *s = &l->session;
	/* The off-CPU time up to now first (a busy machine may take seconds to deliver what was read:
	 * the time meanwhile is the next profile's); its records are queued behind what the kernel
	 * already wrote, which still belongs to this profile, and delivered with it. At the end, with
	 * the stacks that wait for tables being made (bounded: what is not done by then goes as it
	 * is). */
	int err = bt_live_offcpu_cut(l, true);
	if (err)
		return err;
	if (l->ended) {
		/* the session's samples are those taken until it ended: every one of them is then
		 * delivered or counted as lost */
		bt_capture_stop_sampling(l->cap);
		bt_capture_settle(l->cap, BT_LIVE_SETTLE_MS);
	}
	while (bt_capture_poll(l->cap, 0) > 0)
		;
	memset(&l->stats, 0, sizeof(l->stats));
	bt_capture_stats(l->cap, &l->stats);
	bt_session_resolve(s);
	if (reload_kallsyms(l))
		bt_session_resolve(s);
	/* Symbols still coming from debuginfod belong in this profile: each lookup has its timeout. */
	if (bt_session_poll_debuginfod(s, -1) > 0)
		bt_session_resolve(s);
	return lines ? bt_session_resolve_lines(s) : 0;
}

double bt_live_elapsed(const struct bt_live *l)
{
	return now_s() - l->t0;
}

uint64_t bt_live_lost_samples(const struct bt_capture_stats *st)
{
	/* the ring buffer full, or the queue of what was read and not yet delivered */
	return st->drops[BT_REC_SAMPLE] + st->queue_drops[BT_REC_SAMPLE];
}

uint64_t bt_live_lost_other(const struct bt_capture_stats *st)
{
	uint64_t n = 0;
	for (int t = 0; t < BT_REC_TYPE_MAX; t++)
		if (t != BT_REC_SAMPLE)
			n += st->drops[t] + st->queue_drops[t];
	return n;
}

void bt_live_close(struct bt_live *l)
{
	bt_capture_close(l->cap);
	l->cap = NULL;
	bt_session_free(&l->session);
	bt_debuginfod_free(l->dbgd);
	l->dbgd = NULL;
}
