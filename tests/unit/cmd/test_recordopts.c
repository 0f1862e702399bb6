/* test_recordopts.c - the live session's command line: perf's spellings parsed, and every bad value
 * refused with exit code 2 and a message naming the option and what it expects. */
#include "testutil.h"
#include "cmd/cli/cli.h"
#include "bt_proto.h"
#include "cmd/record/recordopts.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The words of the last command line parsed: the parsed arguments point into them. */
static char words[2048];
static char *argv_[64];

/* Parses "buildtrace ARGS" (ARGS split at spaces; each "%d" in it becomes this process's pid) into a
 * fresh *a; what was said on stderr lands in msg. The parser's return. */
static int parse(struct bt_record_args **a, char *msg, size_t len, const char *args)
{
	snprintf(words, sizeof(words), "buildtrace %s", args);
	for (char *pct = strstr(words, "%d"); pct; pct = strstr(words, "%d")) {
		char tail[1024];
		snprintf(tail, sizeof(tail), "%s", pct + 2);
		snprintf(pct, sizeof(words) - (size_t)(pct - words), "%d%s", (int)getpid(), tail);
	}
	int argc = 0;
	for (char *save = NULL, *w = strtok_r(words, " ", &save); w && argc < 63; w = strtok_r(NULL, " ", &save))
		argv_[argc++] = w;
	argv_[argc] = NULL;
	*a = calloc(1, sizeof(**a));
	assert_non_null(*a);
	char path[] = "/tmp/bt-recordopts-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	int rc = bt_record_parse(argc, argv_, *a);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	ssize_t n = pread(fd, msg, len - 1, 0);
	msg[n > 0 ? n : 0] = '\0';
	close(fd);
	return rc;
}

static void done(struct bt_record_args *a)
{
	bt_record_args_free(a);
	free(a);
}

static void recordopts__perf_spellings__parsed(void **state)
{
	struct bt_record_args *a;
	char msg[512];
	assert_int_equal(parse(&a, msg, sizeof(msg), "-g -p %d"), 0);
	assert_string_equal(msg, "");
	assert_int_equal(a->npids, 1);
	assert_int_equal(a->pids[0], getpid());
	assert_true(a->bpf_unwind && !a->dwarf);  /* -g: the default call graph, walked in BPF */
	assert_int_equal(a->freq, 99);
	done(a);
	assert_int_equal(parse(&a, msg, sizeof(msg), "-a -F max"), 0);
	assert_true(a->all);
	assert_int_equal(a->freq, bt_cli_max_sample_rate());
	done(a);
	assert_int_equal(parse(&a, msg, sizeof(msg), "--all-cpus -C 0-1,3 -d 500ms"), 0);
	assert_true(a->all);
	assert_true(a->cpu_list);
	assert_true(a->cpus[0] && a->cpus[1] && !a->cpus[2] && a->cpus[3] && !a->cpus[4]);
	assert_true(a->duration > 0.499 && a->duration < 0.501);
	done(a);
	assert_int_equal(parse(&a, msg, sizeof(msg), "-t %d -d 2m"), 0);
	assert_int_equal(a->ntids, 1);
	assert_int_equal(a->tids[0], getpid());
	assert_int_equal(a->npids, 1);  /* the thread's process is watched */
	assert_int_equal(a->pids[0], getpid());
	assert_true(a->duration > 119.9 && a->duration < 120.1);
	done(a);
	assert_int_equal(parse(&a, msg, sizeof(msg), "-p %d -d 10"), 0);
	assert_true(a->duration > 9.99 && a->duration < 10.01);
	done(a);
}

static void recordopts__long_forms__parsed(void **state)
{
	struct bt_record_args *a;
	char msg[512];
	assert_int_equal(parse(&a, msg, sizeof(msg), "--pid %d --freq 199 --duration 10s --output out.pb.gz "
			       "--format pprof --cpu 0 --call-graph fp --user-only --per-pid --lines --no-live "
			       "--no-cache --no-debuginfod --cache-dir /tmp/c --ringbuf-size 1M --keep-root "
			       "--also-write json:x.json --verbose"), 0);
	assert_string_equal(msg, "");
	assert_int_equal(a->pids[0], getpid());
	assert_int_equal(a->freq, 199);
	assert_string_equal(a->output, "out.pb.gz");
	assert_int_equal(a->fmt, BT_FMT_PPROF);
	assert_true(a->cpus[0] && !a->cpus[1]);
	assert_false(a->dwarf || a->bpf_unwind);
	assert_true(a->user && !a->kernel);
	assert_true(a->per_pid && a->lines && a->live_set && !a->live && a->no_cache && a->no_debuginfod);
	assert_string_equal(a->cache_dir, "/tmp/c");
	assert_int_equal(a->ringbuf_bytes, 1 << 20);
	assert_true(a->keep_root);
	assert_int_equal(a->nalso, 1);
	assert_int_equal(a->verbose, 1);
	done(a);
	assert_int_equal(parse(&a, msg, sizeof(msg), "--tid %d"), 0);
	assert_int_equal(a->ntids, 1);
	done(a);
	/* the per-sample formats and per-thread stacks */
	assert_int_equal(parse(&a, msg, sizeof(msg), "-p %d -f perf-script --per-thread --also-write heatmap:h.svg"), 0);
	assert_int_equal(a->fmt, BT_FMT_PERFSCRIPT);
	assert_true(a->per_tid && !a->per_pid);
	assert_int_equal(a->also[0].fmt, BT_FMT_HEATMAP);
	done(a);
}

static void recordopts__off_cpu__states_minimum_and_bound_parsed(void **state)
{
	struct bt_record_args *a;
	char msg[512];
	assert_int_equal(parse(&a, msg, sizeof(msg), "-p %d --off-cpu"), 0);
	assert_true(a->off_cpu && !a->wall);
	assert_int_equal(a->offcpu_states, 0);   /* all */
	assert_int_equal(a->offcpu_rate, BT_RECORD_OFFCPU_RATE);
	done(a);
	assert_int_equal(parse(&a, msg, sizeof(msg), "-p %d --off-cpu --off-cpu-states S,d --off-cpu-min 50us "
			       "--off-cpu-rate 0"), 0);
	assert_string_equal(msg, "");
	assert_int_equal(a->offcpu_states, (1u << BT_OFFCPU_SLEEP) | (1u << BT_OFFCPU_UNINT));
	assert_true(a->offcpu_min > 49e-6 && a->offcpu_min < 51e-6);
	assert_int_equal(a->offcpu_rate, 0);
	done(a);
	assert_int_equal(parse(&a, msg, sizeof(msg), "-p %d --off-cpu --off-cpu-states runnable"), 0);
	assert_int_equal(a->offcpu_states, 1u << BT_OFFCPU_RUNQ);
	done(a);
	assert_int_equal(parse(&a, msg, sizeof(msg), "-a --wall --off-cpu-min 2ms"), 0);
	assert_true(a->wall);
	assert_true(a->offcpu_min > 0.0019 && a->offcpu_min < 0.0021);
	done(a);
}

static void recordopts__command__its_own_options_untouched(void **state)
{
	struct bt_record_args *a;
	char msg[512];
	assert_int_equal(parse(&a, msg, sizeof(msg), "-F 999 -o out.folded -- ./prog -p 3 --help"), 0);
	assert_non_null(a->cmd);
	assert_string_equal(a->cmd[0], "./prog");
	assert_string_equal(a->cmd[1], "-p");
	assert_string_equal(a->cmd[3], "--help");
	assert_null(a->cmd[4]);
	assert_int_equal(a->freq, 999);
	assert_int_equal(a->npids, 0);
	done(a);
	/* perf's way too: options end at the command's name */
	assert_int_equal(parse(&a, msg, sizeof(msg), "-a -d 1 sleep 5"), 0);
	assert_true(a->all);
	assert_string_equal(a->cmd[0], "sleep");
	assert_string_equal(a->cmd[1], "5");
	done(a);
}

static void recordopts__help__printed_not_an_error(void **state)
{
	struct bt_record_args *a;
	char msg[512];
	/* stdout is not captured: what matters is the "exit 0" return */
	int saved = dup(STDOUT_FILENO);
	int null = open("/dev/null", O_WRONLY);
	fflush(stdout);
	dup2(null, STDOUT_FILENO);
	int rc = parse(&a, msg, sizeof(msg), "--help");
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(null);
	assert_int_equal(rc, 1);
	done(a);
}

/* Every bad value: exit code 2, and the message it must contain. */
static const struct { const char *args, *says; } bad[] = {
	{ "-f -p 1", "-f needs a format: folded, svg, pprof, json, perf-script or heatmap" },
	{ "-p %d -f", "-f needs a format" },
	{ "-p %d -f xml", "invalid -f 'xml': expected a format" },
	{ "-p", "-p needs a process id list" },
	{ "-p 1,x", "invalid -p '1,x': expected a process id list" },
	{ "-p 99999999999", "a pid out of range" },
	{ "-t", "-t needs a thread id list" },
	{ "-t abc", "invalid -t 'abc'" },
	{ "-t 4194306", "no thread with id 4194306" },
	{ "-C", "-C needs a CPU list" },
	{ "-a -C 1-", "invalid -C '1-': expected a CPU list" },
	{ "-a -C 5000", "CPUs are numbered below 4096" },
	{ "-F", "-F needs a frequency" },
	{ "-a -F fast", "invalid -F 'fast': expected a frequency in Hz, or max" },
	{ "-a -F 0", "invalid -F '0'" },
	{ "-a -F 99999999", "kernel.perf_event_max_sample_rate" },
	{ "-d", "-d needs a duration" },
	{ "-a -d 10x", "invalid -d '10x': expected a duration: a number with ms, s, m or h" },
	{ "-a -d 0s", "invalid -d '0s'" },
	{ "-a -d -p", "-d needs a duration" },
	{ "-o", "-o needs a file name" },
	{ "-a -o -p", "-o needs a file name" },
	{ "-a --also-write x", "invalid --also-write 'x': expected FORMAT:FILE" },
	{ "-a --also-write xml:f", "unknown output format 'xml'" },
	{ "-a --call-graph", "--call-graph needs a call graph mode" },
	{ "-a --call-graph lbr", "invalid --call-graph 'lbr'" },
	{ "-a --call-graph dwarf,7", "a multiple of 8" },
	{ "-a --ringbuf-size", "--ringbuf-size needs a size" },
	{ "-a --ringbuf-size 1", "invalid --ringbuf-size '1'" },
	{ "-a --cache-dir", "--cache-dir needs a directory" },
	{ "-a --bogus", "unknown option '--bogus'" },
	{ "-a -x", "unknown option '-x'" },
	{ "", "say what to profile" },
	{ "-a -p %d", "exclude each other" },
	{ "-p %d -t %d", "-p and -t exclude each other" },
	{ "-p %d -- sleep 1", "exclude each other" },
	{ "-t %d -- sleep 1", "exclude each other" },
	{ "-a --user-only --kernel-only", "--user-only and --kernel-only exclude each other" },
	{ "-p 4194306", "no process with pid 4194306" },
	{ "-a --off-cpu --off-cpu-states", "--off-cpu-states needs a list of states: S, D, R" },
	{ "-a --off-cpu --off-cpu-states S,X", "invalid --off-cpu-states 'S,X'" },
	{ "-a --off-cpu --off-cpu-states S,", "invalid --off-cpu-states 'S,'" },
	{ "-a --off-cpu --off-cpu-min 0", "invalid --off-cpu-min '0'" },
	{ "-a --off-cpu --off-cpu-min 5x", "invalid --off-cpu-min '5x': expected a duration" },
	{ "-a --off-cpu --off-cpu-rate many", "invalid --off-cpu-rate 'many'" },
	{ "-a --off-cpu-min 1ms", "need --off-cpu or --wall" },
	{ "-a --off-cpu-rate 10", "need --off-cpu or --wall" },
	{ "-a --wall --off-cpu-states S", "--wall counts the time of every state" },
	{ "-a --off-cpu -f perf-script", "with --off-cpu or --wall write folded, svg, pprof or json" },
	{ "-a --wall --also-write heatmap:x.svg", "perf-script and heatmap show CPU samples one by one" },
};

static void recordopts__bad_values__named_with_what_they_expect(void **state)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bt_record_args *a;
		char msg[512];
		int rc = parse(&a, msg, sizeof(msg), bad[i].args);
		if (rc != 2 || !strstr(msg, bad[i].says) || strncmp(msg, "buildtrace: ", 12))
			fail_msg("'%s': rc %d, said '%s', expected '%s'", bad[i].args, rc, msg, bad[i].says);
		done(a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recordopts__perf_spellings__parsed),
		cmocka_unit_test(recordopts__long_forms__parsed),
		cmocka_unit_test(recordopts__off_cpu__states_minimum_and_bound_parsed),
		cmocka_unit_test(recordopts__command__its_own_options_untouched),
		cmocka_unit_test(recordopts__help__printed_not_an_error),
		cmocka_unit_test(recordopts__bad_values__named_with_what_they_expect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
