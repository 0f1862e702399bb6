/* buildid_list.c - `buildtrace buildid-list`: the build-id of every executable file mapping of
 * the watched processes, read live in the kernel, printed perf-style or as JSON lines. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/esc.h"
#include "elf/buildid.h"
#include "capture/capture.h"
#include "capture/caps.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/commands.h"
#include "cmd/cli/opts.h"
#include "base/htab.h"
#include "kernel/kident.h"
#include "output/jsonout.h"
#include "capture/procmaps.h"

struct bl_args {
	int *pids;
	size_t npids;
	bool all;
	double duration;  /* 0: until stopped */
	bool json;
	bool kernel;
	int verbose;
};

/* A mapping already printed: (pid, start, build-id), the identity of a JSON line. */
struct bl_seen {
	uint32_t pid;
	uint64_t start;
	struct bt_build_id id;
};

struct bl_ctx {
	const struct bl_args *a;
	struct bt_htab seen;
	struct bl_seen *keys;
	size_t nkeys, cap;
	/* Text lines already printed ("BUILDID PATH"): like perf, each file version once. */
	struct bt_htab lines;
	char **line_keys;
	size_t nlines, lines_cap;
	uint64_t printed;
	uint64_t fallbacks;      /* build-ids read through /proc/PID/map_files */
	uint64_t unreadable;     /* mappings whose build-id neither side could read */
	int err;                 /* -ENOMEM and the like, ends the run */
};

enum { OPT_JSON = BT_OPT_LONG, OPT_KERNEL };

static const struct bt_opt buildid_list_opts[] = {
	{ 'p', "pid", "PID[,PID...]", "these processes", .values = "@pid" },
	{ 'a', "all", NULL, "every process" },
	{ 'd', "duration", "SECONDS", "stop after this long" },
	{ OPT_JSON, "json", NULL, "one JSON object per line: pid, start, end, offset (hex strings \"0x...\"), "
	  "build_id, path, deleted, source (\"bpf\": read in the kernel; \"userspace\": read through "
	  "/proc/PID/map_files); the path of a deleted file ends in \" (deleted)\", as in /proc/PID/maps" },
	{ OPT_KERNEL, "kernel", NULL, "also the running kernel ([kernel.kallsyms]) and its loaded modules "
	  "([NAME]), from /sys; JSON lines have build_id, path, source \"sysfs\"" },
	{ 'v', "verbose", NULL, "say more on stderr" },
	{ 'h', "help", NULL, "this text" },
	BT_OPT_END,
};

static const struct bt_cmd_doc buildid_list_doc = {
	.name = "buildtrace buildid-list",
	.summary = "list the build-ids of the files processes map, live",
	.usage = "buildtrace buildid-list (-p PID[,PID...] | -a) [-d SECONDS] [--json] [--kernel]\n"
		 "buildtrace buildid-list --kernel [--json]",
	.about = "Prints 'BUILDID PATH' for every executable file the processes map (once per file version; "
		 "with --json, once per process and address), as they map them, until -d expires, Ctrl-C, or "
		 "every watched process has exited.",
	.opts = buildid_list_opts,
};

const struct bt_cmd_doc *bt_buildid_list_doc(void)
{
	return &buildid_list_doc;
}

/* 0 to run, 1 when done (help), else the exit code. */
static int parse_args(int argc, char **argv, struct bl_args *a)
{
	struct bt_getopt g;
	if (bt_opts_getopt(buildid_list_opts, ":", &g))
		return bt_cli_error(1, "too many options");
	int c, err;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			int *p = NULL;
			size_t n = 0;
			if ((err = bt_cli_parse_pids(optarg, &p, &n)))
				return bt_cli_error(2, "invalid pid list '%s': %s", optarg,
						    err == -ERANGE ? "pid out of range" : "expected PID[,PID...]");
			free(a->pids);
			a->pids = p;
			a->npids = n;
			break;
		}
		case 'a': a->all = true; break;
		case 'd':
			if (bt_cli_parse_seconds(optarg, &a->duration))
				return bt_cli_error(2, "invalid duration '%s': expected seconds > 0", optarg);
			break;
		case OPT_JSON: a->json = true; break;
		case OPT_KERNEL: a->kernel = true; break;
		case 'v': a->verbose++; break;
		case 'h': bt_opts_usage(stdout, &buildid_list_doc); return 1;
		case ':': return bt_cli_error(2, "option '%s' needs an argument", argv[optind - 1]);
		default: return bt_cli_error(2, "unknown option '%s' (see buildtrace buildid-list --help)",
					     argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bt_cli_error(2, "unexpected argument '%s'", argv[optind]);
	if (a->all && a->npids)
		return bt_cli_error(2, "-a and -p exclude each other");
	if (!a->all && !a->npids && !a->kernel)
		return bt_cli_error(2, "say which processes to list: -p PID or -a (see --help)");
	for (size_t i = 0; i < a->npids; i++)
		if (!bt_cli_pid_exists(a->pids[i]))
			return bt_cli_error(2, "no process with pid %d", a->pids[i]);
	return 0;
}

/* ---- output ------------------------------------------------------------------------------ */

static void print_kernel_line(const struct bl_args *a, const struct bt_build_id *id, const char *name)
{
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	bt_buildid_hex(id, hex, sizeof(hex));
	if (a->json) {
		printf("{\"build_id\":\"%s\",\"path\":", hex);
		bt_json_put_string(stdout, name, strlen(name));
		printf(",\"source\":\"sysfs\"}\n");
	} else {
		printf("%s ", hex);
		bt_esc_write(stdout, name, strlen(name));
		putchar('\n');
	}
	fflush(stdout);
}

/* ---- kernel build-ids -------------------------------------------------------------------- */

static int print_module(void *ctx, const char *name, const struct bt_build_id *id)
{
	char label[BT_KMOD_NAME_LEN + 2];
	snprintf(label, sizeof(label), "[%s]", name);
	print_kernel_line(ctx, id, label);
	return 0;
}

static int print_kernel(const struct bl_args *a)
{
	struct bt_build_id id;
	int err = bt_kident_kernel_build_id("", &id);
	if (err) {
		fprintf(stderr, "buildtrace: cannot read the kernel's build-id from /sys/kernel/notes: %s\n",
			strerror(-err));
		return err;
	}
	print_kernel_line(a, &id, "[kernel.kallsyms]");
	/* Without /sys/module there are no modules to list. */
	bt_kident_module_notes("", print_module, (void *)a);
	return 0;
}

/* ---- live records ------------------------------------------------------------------------ */

static uint32_t seen_hash(uint32_t pid, uint64_t start, const struct bt_build_id *id)
{
	return bt_hash_bytes(id->data, id->len, bt_hash_u64(start) ^ ((uint64_t)pid << 32));
}

static bool seen_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bl_ctx *b = ctx;
	const struct bl_seen *k = key, *s = &b->keys[val];
	return s->pid == k->pid && s->start == k->start && bt_buildid_eq(&s->id, &k->id);
}

/* Records the mapping as printed; 1 when it was new, 0 when seen before, -ENOMEM. */
static int mark_seen(struct bl_ctx *b, const struct bl_seen *k)
{
	uint32_t h = seen_hash(k->pid, k->start, &k->id);
	if (bt_htab_find(&b->seen, h, seen_eq, b, k))
		return 0;
	if (b->nkeys == b->cap) {
		size_t ncap = b->cap ? 2 * b->cap : 256;
		struct bl_seen *nk = realloc(b->keys, ncap * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		b->keys = nk;
		b->cap = ncap;
	}
	b->keys[b->nkeys] = *k;
	if (bt_htab_insert(&b->seen, h, b->nkeys))
		return -ENOMEM;
	b->nkeys++;
	return 1;
}

static bool line_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bl_ctx *b = ctx;
	return strcmp(b->line_keys[val], key) == 0;
}

/* 1 when the text line is new (and now remembered), 0 when printed before, -ENOMEM. */
static int mark_line(struct bl_ctx *b, const char *line)
{
	uint32_t h = bt_hash_bytes(line, strlen(line), 0);
	if (bt_htab_find(&b->lines, h, line_eq, b, line))
		return 0;
	if (b->nlines == b->lines_cap) {
		size_t ncap = b->lines_cap ? 2 * b->lines_cap : 64;
		char **nk = realloc(b->line_keys, ncap * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		b->line_keys = nk;
		b->lines_cap = ncap;
	}
	char *copy = strdup(line);
	if (!copy)
		return -ENOMEM;
	if (bt_htab_insert(&b->lines, h, b->nlines)) {
		free(copy);
		return -ENOMEM;
	}
	b->line_keys[b->nlines++] = copy;
	return 1;
}

static void print_mapping(struct bl_ctx *b, const struct bt_rec_mapping *m, const struct bt_build_id *id,
			  const char *source)
{
	struct bl_seen k = { .pid = m->pid, .start = m->start, .id = *id };
	int r = mark_seen(b, &k);
	if (r <= 0) {
		if (r < 0)
			b->err = r;
		return;
	}
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	bt_buildid_hex(id, hex, sizeof(hex));
	const char *path = m->path_len ? m->path : "";
	if (b->a->json) {
		printf("{\"pid\":%u,\"start\":\"0x%llx\",\"end\":\"0x%llx\",\"offset\":\"0x%llx\","
		       "\"build_id\":\"%s\",\"path\":",
		       m->pid, (unsigned long long)m->start, (unsigned long long)m->end,
		       (unsigned long long)m->pgoff, hex);
		bt_json_put_string(stdout, path, strlen(path));
		printf(",\"deleted\":%s,\"source\":\"%s\"}\n",
		       (m->flags & BT_MAP_F_DELETED) ? "true" : "false", source);
	} else {
		char line[2 * BT_BUILD_ID_MAXLEN + BT_PATH_MAX + 2];
		snprintf(line, sizeof(line), "%s %s", hex, path);
		if ((r = mark_line(b, line)) <= 0) {
			if (r < 0)
				b->err = r;
			return;
		}
		/* a path is the process's choice: a newline in it must not forge a line, nor a control
		 * reach the terminal (base/esc.h) */
		bt_esc_write(stdout, line, strlen(line));
		putchar('\n');
	}
	fflush(stdout);
	b->printed++;
}

static void on_mapping(struct bl_ctx *b, const struct bt_rec_mapping *m)
{
	struct bt_build_id id = { 0 };
	switch (m->build_id_status) {
	case BT_BID_OK:
		id.len = m->build_id_len;
		memcpy(id.data, m->build_id, m->build_id_len);
		print_mapping(b, m, &id, "bpf");
		return;
	case BT_BID_FAULT:
		/* The kernel could not read the pages: the file itself still can be. */
		if (bt_procmaps_buildid("", (int)m->pid, m->start, m->end, &id) == 0 && id.len) {
			b->fallbacks++;
			print_mapping(b, m, &id, "userspace");
		} else {
			b->unreadable++;
		}
		return;
	default:
		/* PENDING: the iterator's VMA record follows; NONE, NOT_ELF: nothing to print. */
		return;
	}
}

static void on_module(struct bl_ctx *b, const struct bt_rec_module *m)
{
	if (!b->a->kernel)
		return;
	char name[BT_MODNAME_LEN + 1];
	memcpy(name, m->name, BT_MODNAME_LEN);
	name[BT_MODNAME_LEN] = '\0';
	struct bt_build_id id = { 0 };
	if (m->build_id_status == BT_BID_OK) {
		id.len = m->build_id_len;
		memcpy(id.data, m->build_id, m->build_id_len);
	} else if (bt_kident_module_build_id("", name, &id) != 0) {
		b->unreadable++;
		return;
	}
	char label[BT_MODNAME_LEN + 3];
	snprintf(label, sizeof(label), "[%s]", name);
	print_kernel_line(b->a, &id, label);
}

static int on_record(void *ctx, const struct bt_rec_hdr *h)
{
	struct bl_ctx *b = ctx;
	if (h->type == BT_REC_VMA || h->type == BT_REC_MMAP)
		on_mapping(b, (const struct bt_rec_mapping *)h);
	else if (h->type == BT_REC_MODULE)
		on_module(b, (const struct bt_rec_module *)h);
	return b->err;
}

static void on_log(void *ctx, enum bt_log_level level, const char *msg)
{
	const struct bl_ctx *b = ctx;
	if (level <= BT_LOG_WARN || (level == BT_LOG_INFO && b->a->verbose >= 1) || b->a->verbose >= 2)
		bt_cli_say(msg);
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run(const struct bl_args *a)
{
	if (a->kernel && print_kernel(a))
		return 1;
	if (!a->all && !a->npids)
		return 0;
	char msg[512];
	if (bt_caps_check(msg, sizeof(msg)))
		return bt_cli_error(1, "%s; run as root or grant them with setcap " BT_CAPS_SETCAP, msg);

	struct bl_ctx b = { .a = a };
	bt_htab_init(&b.seen);
	bt_htab_init(&b.lines);
	struct bt_capture_opts co = {
		.sz = sizeof(co), .pids = a->pids, .npids = a->npids, .all = a->all, .samples = false,
		.on_record = on_record, .ctx = &b, .log = on_log,
	};
	/* Installed before loading, which takes a while: Ctrl-C then still ends with a summary. */
	stop_signal = 0;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	struct bt_capture *c = NULL;
	int rcode = 0;
	int err = bt_capture_open(&co, &c, msg, sizeof(msg));
	if (err) {
		rcode = bt_cli_error(1, "%s", msg);
		goto out;
	}
	double t0 = now_s(), last_check = t0;
	while (!stop_signal) {
		double t = now_s();
		if (a->duration > 0 && t - t0 >= a->duration)
			break;
		int timeout = 200;
		if (a->duration > 0 && (a->duration - (t - t0)) * 1000 < timeout)
			timeout = (int)((a->duration - (t - t0)) * 1000) + 1;
		err = bt_capture_poll(c, timeout);
		if (err < 0 && err != -EINTR) {
			rcode = bt_cli_error(1, "reading the ring buffer failed: %s", strerror(-err));
			break;
		}
		if (now_s() - last_check >= 0.2) {
			last_check = now_s();
			if (!a->all && bt_capture_watched_alive(c) == 0)
				break;
		}
	}
	/* What the kernel wrote before the end still belongs to the list. */
	while (!rcode && (err = bt_capture_poll(c, 0)) > 0)
		;

	struct bt_capture_stats st;
	if (bt_capture_stats(c, &st) == 0) {
		uint64_t drops = 0;
		for (int t = 0; t < BT_REC_TYPE_MAX; t++)
			drops += st.drops[t];
		if (drops)
			fprintf(stderr, "buildtrace: %llu records lost (ring buffer full): %llu mmap, "
				"%llu snapshot\n", (unsigned long long)drops,
				(unsigned long long)st.drops[BT_REC_MMAP],
				(unsigned long long)st.drops[BT_REC_VMA]);
	}
	fprintf(stderr, "buildtrace: %llu mappings listed, %llu build-ids read by the userspace "
		"fallback\n", (unsigned long long)b.printed, (unsigned long long)b.fallbacks);
	if (b.unreadable && a->verbose)
		fprintf(stderr, "buildtrace: %llu mappings without a readable build-id\n",
			(unsigned long long)b.unreadable);
	if (b.err && !rcode)
		rcode = bt_cli_error(1, "%s", strerror(-b.err));
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	bt_capture_close(c);
	bt_htab_free(&b.seen);
	free(b.keys);
	bt_htab_free(&b.lines);
	for (size_t i = 0; i < b.nlines; i++)
		free(b.line_keys[i]);
	free(b.line_keys);
	return rcode;
}

int cmd_buildid_list(int argc, char **argv)
{
	struct bl_args a = { 0 };
	int r = parse_args(argc, argv, &a);
	if (!r)
		r = run(&a);
	else if (r == 1)
		r = 0;
	free(a.pids);
	return r;
}
