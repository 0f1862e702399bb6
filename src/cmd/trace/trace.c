/* trace.c - `buildtrace trace`: probes (uprobes, SDT markers) resolved by build-id and attached to
 * the files processes map; each hit is a sample of its stack in the live session (named, shown and
 * written as `record`'s samples are), or a count under a marker argument's value (--key); --latency
 * adds a histogram of each probe's call durations. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/wfile.h"
#include "capture/caps.h"
#include "capture/uprobes.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/live/launch.h"
#include "cmd/live/live.h"
#include "cmd/live/liveview.h"
#include "cmd/live/outfile.h"
#include "cmd/trace/traceopts.h"
#include "output/output.h"

_Static_assert(BT_TRACE_TAG(BT_TRACE_MAX_PROBES - 1) < BT_REC_TAGS, "a tag for every probe");

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	if (stop_signal == SIGINT && sig == SIGINT)
		_exit(130);
	stop_signal = sig;
}

struct trace_ctx {
	struct bt_trace_args *a;
	struct bt_live live;
	struct bt_uprobes *up;
	struct bt_trace_places places;
	struct bt_launch launch;
	bool launched;
	bool live_inited;
	bool view_on;
	struct bt_liveview view;
	struct bt_outfile out;
	struct bt_out_owner owner;     /* who writes the output */
};

static void trace_log(void *ctx, enum bt_log_level level, const char *msg)
{
	const struct trace_ctx *t = ctx;
	if (level <= BT_LOG_WARN || (level == BT_LOG_INFO && t->a->verbose >= 1) || t->a->verbose >= 2)
		bt_cli_say(msg);
}

static void view_tick(void *ctx, struct bt_live *l, double elapsed)
{
	bt_liveview_tick(&((struct trace_ctx *)ctx)->view, l, elapsed);
}

static void view_turn(void *ctx, struct bt_live *l, double elapsed)
{
	bt_liveview_turn(&((struct trace_ctx *)ctx)->view, l);
}

static const char *trace_done(void *ctx, struct bt_live *l)
{
	struct trace_ctx *t = ctx;
	if (t->view_on && t->view.quit)
		return "quit";
	if (t->launched && bt_launch_reap(&t->launch, false) == 1)
		return "the command exited";
	return NULL;
}

/* The output file, created before anything is attached: a path that cannot be written fails now. */
static int out_open(struct trace_ctx *t)
{
	t->out = (struct bt_outfile){ .path = t->a->output, .fmt = t->a->fmt, .w = BT_WFILE_INIT };
	bt_out_owner_init(&t->owner, bt_caps_keep_after_attach());
	int err = bt_out_open(&t->out, &t->owner);
	return err ? bt_cli_error(1, "cannot write %s: %s", t->a->output, bt_out_error(&t->owner, err)) : 0;
}

/* Attaches every place; 0 or the exit code after saying which failed. */
static int attach_places(struct trace_ctx *t)
{
	char msg[512];
	struct bt_uprobes_opts uo = { .all = t->a->all, .dwarf = t->a->dwarf, .ustack_bytes = t->a->ustack_bytes };
	int err = bt_uprobes_open(t->live.cap, &uo, &t->up, msg, sizeof(msg));
	if (err)
		return bt_cli_error(1, "%s", msg);
	for (size_t i = 0; i < t->places.n; i++) {
		const struct bt_trace_place *p = &t->places.v[i];
		/* a process that runs and exits between two snapshots still has its frames named */
		if (p->file.id.len && p->file.id.len <= BT_BUILD_ID_MAX)
			bt_capture_add_build_id(t->live.cap, p->file.fd, p->file.id.data, p->file.id.len);
		err = bt_uprobes_attach(t->up, p->probe, &p->cfg, p->file.fd, p->site.off, p->site.ref_ctr_off,
					p->file.pid > 0 ? p->file.pid : -1);
		if (err)
			return bt_cli_error(1, "%s: attaching a uprobe to %s at file offset 0x%llx failed: %s",
					    t->a->specs[p->probe].text, p->file.path, (unsigned long long)p->site.off,
					    strerror(-err));
		if (t->a->verbose) {
			char hex[2 * BT_BUILD_ID_MAXLEN + 1];
			char who[32] = "every process mapping it";
			if (p->file.pid > 0)
				snprintf(who, sizeof(who), "process %d", p->file.pid);
			bt_cli_error(0, "%s: %s at 0x%llx (%s, file offset 0x%llx, from %s) in %s, "
				"build-id %s, for %s%s", t->a->specs[p->probe].text, p->site.what,
				(unsigned long long)p->site.vaddr, p->site.section, (unsigned long long)p->site.off,
				p->site.origin, p->file.path, bt_probe_id_hex(&p->file.id, hex, sizeof(hex)), who,
				p->site.ref_ctr_off ? ", semaphore raised" : "");
		}
	}
	return 0;
}

/* What the session keeps; a command (which may run as another user) also the right to signal it. */
static int drop_privileges(const struct trace_ctx *t)
{
	if (!t->launched)
		return bt_live_drop_privileges();
	const char *keep = bt_caps_keep_after_attach();
	char buf[512];
	snprintf(buf, sizeof(buf), "%s%scap_kill", keep ? keep : "", keep && *keep ? "," : "");
	return bt_caps_drop(buf);
}

/* The session, the probes, then the command let go; the loop until the session ends. */
static int start_and_loop(struct trace_ctx *t)
{
	struct bt_trace_args *a = t->a;
	int child = t->launched ? t->launch.pid : 0;
	struct bt_live_opts lo = {
		.pids = a->npids ? a->pids : &child, .npids = a->npids ? a->npids : (child && !a->all ? 1 : 0),
		.all = a->all, .user = true, .kernel = false, .no_sampler = true,
		.ringbuf_bytes = a->ringbuf_bytes, .dwarf = a->dwarf, .ustack_bytes = a->ustack_bytes,
		.cache_dir = a->cache_dir, .cache_store = true, .tables_store = true, .debuginfod = true, .duration = a->duration,
		.stop = &stop_signal, .log = trace_log, .ctx = t, .done = trace_done,
		.on_tick = t->view_on ? view_tick : NULL, .on_turn = t->view_on ? view_turn : NULL,
	};
	char msg[512];
	int err = bt_live_init(&t->live, &lo);
	t->live_inited = true;
	if (err)
		return bt_cli_error(1, "cannot start the session: %s", strerror(-err));
	if (bt_live_attach(&t->live, msg, sizeof(msg)))
		return bt_cli_error(1, "%s", msg);
	int rc = attach_places(t);
	if (rc)
		return rc;
	if ((err = drop_privileges(t)) && a->verbose)
		fprintf(stderr, "buildtrace: could not drop capabilities: %s\n", strerror(-err));
	bt_live_catch_stop(on_signal);
	fprintf(stderr, "buildtrace: tracing %zu probe%s in %zu place%s%s\n", a->nspecs, a->nspecs == 1 ? "" : "s",
		t->places.n, t->places.n == 1 ? "" : "s", a->cmd ? "" : "; Ctrl-C to end");
	/* -EPIPE: the command was killed while held (a Ctrl-C to its terminal): the loop ends with it */
	if (t->launched && (err = bt_launch_release(&t->launch)) && err != -EPIPE)
		return bt_cli_error(err == -ENOENT ? 127 : 126, "cannot run %s: %s", a->cmd[0], strerror(-err));
	if (t->view_on)
		bt_liveview_start(&t->view, STDERR_FILENO, t->launched ? -1 : STDIN_FILENO, false);
	err = bt_live_run(&t->live);
	if (t->view_on)
		bt_liveview_stop(&t->view);
	if (err)
		return bt_cli_error(1, "reading the ring buffer failed: %s", strerror(-err));
	return 0;
}

static int launch_command(struct trace_ctx *t)
{
	char **cmd = t->a->cmd;
	int err = bt_launch_find(cmd[0], getenv("PATH"));
	if (err == -ENOENT)
		return bt_cli_error(127, "%s: command not found", cmd[0]);
	if (err)
		return bt_cli_error(126, "%s: %s", cmd[0], strerror(-err));
	struct bt_launch_user u;
	if (bt_launch_user_for(getenv("SUDO_UID"), getenv("SUDO_GID"), geteuid(), t->a->keep_root, &u))
		return bt_cli_error(2, "SUDO_UID and SUDO_GID must both be numeric to run the command as the "
				    "user who called sudo (or use --keep-root)");
	if ((err = bt_launch_start(&t->launch, cmd, &u)))
		return bt_cli_error(1, "cannot start %s: %s", cmd[0], strerror(-err));
	t->launched = true;
	return 0;
}

/* ---- what was counted ---------------------------------------------------------------------- */

struct keyed_ctx {
	const struct trace_ctx *t;
	struct bt_profile p;
};

/* A key's count as a stack comm;probe;key, each frame known by its name. */
static int add_keyed(void *ctx, const struct bt_trace_key *k, uint64_t count)
{
	struct keyed_ctx *kc = ctx;
	const struct bt_trace_args *a = kc->t->a;
	const char *what = k->probe < a->nspecs ? a->specs[k->probe].name : "?";
	for (size_t i = 0; i < kc->t->places.n; i++)
		if (kc->t->places.v[i].probe == k->probe)
			what = kc->t->places.v[i].site.what;
	char key[BT_TRACE_KEY_STR + 1];
	if (a->key_str)
		snprintf(key, sizeof(key), "%.*s", BT_TRACE_KEY_STR, k->str);
	else
		snprintf(key, sizeof(key), "%lld", (long long)k->ival);
	/* the same comm and key in two processes: one stack */
	int64_t comm = bt_strtab_intern(&kc->p.names, k->comm, strnlen(k->comm, sizeof(k->comm)));
	int64_t probe = bt_profile_named_loc(&kc->p, BT_LOC_USER, what, strlen(what));
	int64_t value = bt_profile_named_loc(&kc->p, BT_LOC_USER, key, strlen(key));
	if (comm < 0 || probe < 0 || value < 0)
		return -ENOMEM;
	uint32_t ids[2] = { (uint32_t)probe, (uint32_t)value };
	return bt_profile_add(&kc->p, (uint32_t)comm, 0, ids, 2, count);
}

static int write_output(struct trace_ctx *t)
{
	struct bt_output_opts oo = { .time_ns = t->live.start_ns,
				     .duration_ns = (int64_t)(bt_live_elapsed(&t->live) * 1e9) };
	int err;
	if (t->a->key_arg) {
		struct keyed_ctx kc = { .t = t };
		bt_profile_init(&kc.p);
		err = bt_uprobes_foreach_key(t->up, add_keyed, &kc);
		if (!err)
			err = bt_output_profile(&kc.p, t->a->fmt, &oo, t->out.f);
		bt_profile_free(&kc.p);
	} else {
		err = bt_output_session(&t->live.session, t->a->fmt, &oo, t->out.f);
	}
	err = bt_out_finish(&t->out, err);
	if (err)
		return bt_cli_error(1, "writing %s failed: %s", t->a->output ? t->a->output : "the counts",
				    strerror(-err));
	return 0;
}

/* ns as a short duration: 512ns, 1.5us, 2ms. */
static const char *human(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.3gus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.3gms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3gs", (double)ns / 1e9);
	return buf;
}

/* A histogram of one probe's call durations, in powers of two. */
static void print_latency(const char *what, const uint64_t *h)
{
	uint64_t total = 0, max = 0;
	int lo = -1, hi = -1;
	for (int b = 0; b < BT_TRACE_LAT_BUCKETS; b++) {
		total += h[b];
		max = h[b] > max ? h[b] : max;
		if (h[b]) {
			lo = lo < 0 ? b : lo;
			hi = b;
		}
	}
	fprintf(stderr, "buildtrace: latency of %s: %llu calls\n", what, (unsigned long long)total);
	for (int b = lo; lo >= 0 && b <= hi; b++) {
		char from[32], to[32], range[80], bar[41];
		snprintf(range, sizeof(range), "[%s, %s)", human(b ? 1ULL << b : 0, from, sizeof(from)),
			 human(1ULL << (b + 1), to, sizeof(to)));
		size_t n = max ? (size_t)(h[b] * 40 / max) : 0;
		memset(bar, '@', n);
		bar[n] = '\0';
		fprintf(stderr, "  %-22s %10llu |%-40s|\n", range, (unsigned long long)h[b], bar);
	}
}

static void print_summary(const struct trace_ctx *t)
{
	const struct bt_trace_args *a = t->a;
	fprintf(stderr, "buildtrace: %s: %llu unresolved frames, %zu processes\n", t->live.why,
		(unsigned long long)bt_profile_unresolved_frames(&t->live.session.prof),
		(size_t)t->live.session.procs.seen);
	for (unsigned p = 0; p < a->nspecs; p++) {
		uint64_t c[BT_TCNT_MAX] = { 0 }, h[BT_TRACE_LAT_BUCKETS] = { 0 };
		bt_uprobes_counters(t->up, p, c);
		/* lost: the ring buffer was full, or the queue of what was read and not yet written */
		uint64_t lost = c[BT_TCNT_LOST] + t->live.stats.queue_drops_tag[BT_TRACE_TAG(p)];
		fprintf(stderr, "buildtrace: %s: %llu hit%s, %llu lost", a->specs[p].text,
			(unsigned long long)c[BT_TCNT_HITS], c[BT_TCNT_HITS] == 1 ? "" : "s",
			(unsigned long long)lost);
		if (c[BT_TCNT_BADARG])
			fprintf(stderr, ", %llu whose key could not be read", (unsigned long long)c[BT_TCNT_BADARG]);
		fprintf(stderr, "\n");
		if (a->latency && bt_uprobes_latency(t->up, p, h) == 0)
			print_latency(a->specs[p].text, h);
	}
}

static int run(struct bt_trace_args *a)
{
	char msg[512];
	if (bt_caps_check(msg, sizeof(msg)))
		return bt_cli_error(1, "%s; run as root (sudo buildtrace trace ...)", msg);
	struct trace_ctx *t = calloc(1, sizeof(*t));
	if (!t)
		return bt_cli_error(1, "out of memory");
	t->a = a;
	t->out = (struct bt_outfile){ .w = BT_WFILE_INIT };
	t->launch = (struct bt_launch){ .go_fd = -1, .err_fd = -1 };
	t->view_on = a->live_set ? a->live : isatty(STDERR_FILENO) && !a->cmd;
	int rc = bt_trace_resolve(a, &t->places);
	if (!rc)
		rc = out_open(t);
	if (!rc && a->cmd)
		rc = launch_command(t);
	if (!rc)
		rc = start_and_loop(t);
	if (!rc) {
		if (t->launched && bt_launch_reap(&t->launch, false) == 0)
			bt_launch_signal(&t->launch, stop_signal ? stop_signal : SIGTERM);
		/* the counts and the stacks end at the same hit */
		bt_uprobes_detach(t->up);
		int err = bt_live_collect(&t->live, false);
		if (err)
			bt_cli_error(0, "naming frames: %s", strerror(-err));
		rc = write_output(t);
		print_summary(t);
		if (!rc && t->launched && bt_launch_reap(&t->launch, true) == 1)
			rc = bt_launch_exit_code(t->launch.status);
	}
	bt_out_discard(&t->out);
	bt_out_owner_free(&t->owner);
	bt_uprobes_close(t->up);
	if (t->live_inited)
		bt_live_close(&t->live);
	bt_launch_close(&t->launch);
	bt_trace_places_free(&t->places);
	free(t);
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	struct bt_trace_args a = { 0 };
	int r = bt_trace_parse(argc, argv, &a);
	if (r == 0)
		r = run(&a);
	else if (r == 1)
		r = 0;
	bt_trace_args_free(&a);
	return r;
}
