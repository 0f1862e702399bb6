/* test_outputs.c - every output format of one live session, end to end through ./buildtrace: the same
 * stacks and totals in folded, pprof, JSON and SVG, read back by other tools (protoc, pprof-format,
 * Python's json, xmllint) and by `buildtrace report`; build-ids against readelf and perf; source
 * lines (--lines) against llvm-symbolizer. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define T "build/tests/tmp-outputs-e2e"
#define PY "/usr/bin/python3"
#define DUMP "NODE_PATH=build/npm/node_modules node tests/outputs/pprof_dump.cjs"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " T " && mkdir -p " T) == 0 ? 0 : -1;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Runs cmd; on failure prints its output and fails the test. */
static void run_ok(const char *what, const char *cmd)
{
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "%s 2>&1", cmd);
	if (rc)
		print_message("%s: %s\n", what, out);
	assert_int_equal(rc, 0);
}

static int npm_ready(void)
{
	char out[1024];
	if (bt_test_run(out, sizeof(out), "tests/outputs/npm-setup.sh 2>&1") == 0)
		return 1;
	if (bt_test_in_ci())
		fail_msg("npm packages unavailable under CI: %s", out);
	print_message("pprof-format checks left out: %s\n", out);
	return 0;
}

/* One session of the demo workload, written in all four formats at once. */
static void record_all(void)
{
	pid_t w = bt_test_spawn("exec build/demo-workload 6");
	usleep(300000);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "./buildtrace -p %d -F 199 -d 2 -o " T "/all.folded --also-write pprof:" T
		 "/all.pb.gz --also-write json:" T "/all.json --also-write svg:" T "/all.svg", (int)w);
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "%s 2>&1", cmd);
	stop(w);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	/* complete files only: no temporary left behind */
	bt_test_run(out, sizeof(out), "ls " T " | grep -c tmp; true");
	assert_string_equal(out, "0\n");
}

static void outputs__one_session__every_format_has_the_same_stacks(void **state)
{
	bt_test_require_priv();
	record_all();
	char out[4096];
	bt_test_run(out, sizeof(out), "tests/tools/foldtool.py total " T "/all.folded");
	long total = atol(out);
	print_message("%ld samples\n", total);
	assert_true(total > 50);
	/* pprof: any protobuf reader takes it; reading it back gives the folded output byte for byte */
	run_ok("protoc", "gzip -dc " T "/all.pb.gz | protoc --decode_raw > /dev/null");
	run_ok("report pprof", "./buildtrace report " T "/all.pb.gz -f folded -o " T "/from-pprof.folded && "
	       "cmp " T "/all.folded " T "/from-pprof.folded");
	/* JSON: the stacks it lists fold to the same lines */
	run_ok("json", PY " tests/outputs/json_fold.py " T "/all.json | sort > " T "/from-json.folded && "
	       "sort " T "/all.folded | cmp - " T "/from-json.folded");
	/* SVG: well-formed, every sample in its root */
	run_ok("xmllint", "xmllint --noout " T "/all.svg");
	bt_test_run(out, sizeof(out), "grep -o 'data-total=\"[0-9]*\"' " T "/all.svg | head -n1 | tr -dc 0-9");
	assert_int_equal(atol(out), total);
	/* it works in a browser (when one is there; tests/unit/test_browser.c insists on it) */
	int rc = bt_test_run(out, sizeof(out), "tests/browser/run.sh " T "/all.svg " T "/all.folded " T " 2>&1");
	print_message("%s", out);
	assert_true(rc == 0 || rc == 77);
	/* and a converted profile's flame graph is the same picture */
	run_ok("report svg", "./buildtrace report " T "/all.pb.gz -f svg -o " T "/from-pprof.svg && "
	       "cmp " T "/all.svg " T "/from-pprof.svg");
	if (!npm_ready())
		return;
	/* an independent decoder agrees on every stack */
	run_ok("pprof-format", DUMP " " T "/all.pb.gz > " T "/all.dump && awk -F'\\t' '$1 == \"folded\" "
	       "{ print $2 \" \" $3 }' " T "/all.dump | sort > " T "/from-js.folded && sort " T "/all.folded | "
	       "cmp - " T "/from-js.folded");
}

static void outputs__one_session__build_ids_are_those_of_the_files(void **state)
{
	bt_test_require_priv();
	if (access(T "/all.pb.gz", R_OK) != 0)
		record_all();
	char out[8192];
	/* JSON frames: each file's build-id as readelf reads it (files still on disk) */
	run_ok("json frames", PY " tests/outputs/json_fold.py " T "/all.json frames > " T "/frames.tsv");
	int rc = bt_test_run(out, sizeof(out), "awk -F'\\t' '$2 == \"user\" && $5 != \"None\" { print $4 \"\\t\" $5 }' "
			     T "/frames.tsv | sort -u | while IFS='\t' read -r f b; do [ -f \"$f\" ] || continue; "
			     "r=$(readelf -n \"$f\" | awk '/Build ID/ { print $3 }'); echo \"$f $b $r\"; "
			     "[ \"$b\" = \"$r\" ] || exit 1; done");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "demo-workload"));
	/* the workload's own functions are named in it */
	bt_test_run(out, sizeof(out), "awk -F'\\t' '$4 ~ /demo-workload$/ { print $3 }' " T "/frames.tsv | sort -u | "
		    "tr '\\n' ' '");
	assert_non_null(strstr(out, "main "));
	assert_non_null(strstr(out, "do_work "));
	/* the version of libc's __libc_start_main beside its name, the default one readelf prints */
	char want[128];
	assert_int_equal(bt_test_run(want, sizeof(want), "f=$(awk -F'\t' '$3 == \"__libc_start_main\" { print $4; exit }' "
				     T "/frames.tsv); readelf -W --dyn-syms \"$f\" | sed -n 's/.* __libc_start_main@@//p' | "
				     "head -n1 | tr -d '\n'"), 0);
	assert_true(want[0] != '\0');
	assert_int_equal(bt_test_run(out, sizeof(out), PY " -c 'import json, sys; d = json.load(open(sys.argv[1])); "
				     "print(\" \".join(sorted({f[\"symbol_version\"] or \"-\" for f in d[\"frames\"] "
				     "if f[\"name\"] == \"__libc_start_main\"})), end=\"\")' " T "/all.json"), 0);
	assert_string_equal(out, want);
	/* kernel frames carry the running kernel's build-id, as perf reads it */
	char kbid[128];
	if (bt_test_run(kbid, sizeof(kbid), "perf buildid-list -k 2>/dev/null | tr -d '\\n'") == 0 && kbid[0]) {
		bt_test_run(out, sizeof(out), "awk -F'\\t' '$2 == \"kernel\" { print $5 }' " T "/frames.tsv | sort -u | "
			    "tr -d '\\n'");
		if (out[0])
			assert_string_equal(out, kbid);
	}
	if (!npm_ready())
		return;
	if (access(T "/all.dump", R_OK) != 0)
		run_ok("pprof-format", DUMP " " T "/all.pb.gz > " T "/all.dump");
	/* pprof mappings: the same build-ids, one mapping per file */
	rc = bt_test_run(out, sizeof(out), "awk -F'\\t' '$1 == \"mapping\" && $3 ~ /^\\// { print $3 \"\\t\" $4 }' "
			 T "/all.dump | while IFS='\t' read -r f b; do [ -f \"$f\" ] || continue; "
			 "r=$(readelf -n \"$f\" | awk '/Build ID/ { print $3 }'); echo \"$f $b\"; "
			 "[ \"$b\" = \"$r\" ] || exit 1; done");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "demo-workload"));
	bt_test_run(out, sizeof(out), "awk -F'\\t' '$1 == \"mapping\" { print $3 }' " T "/all.dump | sort | uniq -d");
	assert_string_equal(out, "");
	if (kbid[0]) {
		bt_test_run(out, sizeof(out), "awk -F'\\t' '$1 == \"mapping\" && $3 == \"[kernel.kallsyms]\" "
			    "{ printf \"%%s\", $4 }' " T "/all.dump");
		if (out[0])
			assert_string_equal(out, kbid);
	}
	/* samples: count and count x period (1e9 / 199 Hz) */
	bt_test_run(out, sizeof(out), "awk -F'\\t' '$1 == \"period\" { print $4 } $1 == \"sample\" { split($2, v, \",\"); "
		    "if (v[2] != v[1] * 5025125) bad++ } END { print bad + 0 }' " T "/all.dump | tr '\\n' ' '");
	assert_string_equal(out, "5025125 0 ");
}

static void outputs__per_pid__pid_labels_are_the_processes(void **state)
{
	bt_test_require_priv();
	pid_t a = bt_test_spawn("exec build/tests/session/spin 0.3 1.5 > /dev/null");
	pid_t b = bt_test_spawn("exec build/tests/session/spin 0.3 1.5 > /dev/null");
	char cmd[512], out[4096];
	snprintf(cmd, sizeof(cmd), "./buildtrace -p %d,%d --per-pid --user-only -d 3 -f pprof -o " T "/pid.pb.gz "
		 "--also-write json:" T "/pid.json --also-write folded:" T "/pid.folded 2>&1", (int)a, (int)b);
	int rc = bt_test_run(out, sizeof(out), "%s", cmd);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	char want[64];
	snprintf(want, sizeof(want), "%d %d ", a < b ? (int)a : (int)b, a < b ? (int)b : (int)a);
	bt_test_run(out, sizeof(out), PY " -c 'import json, sys; d = json.load(open(sys.argv[1])); "
		    "print(\" \".join(str(p) for p in sorted(set(s[\"pid\"] for s in d[\"stacks\"]))), end=\" \")' "
		    T "/pid.json");
	assert_string_equal(out, want);
	/* folded lines say whose they are: comm-PID, as stackcollapse-perf --pid writes them */
	bt_test_run(out, sizeof(out), "grep -c -v -E '^spin-(%d|%d);' " T "/pid.folded; "
		    "sed 's/;.*//' " T "/pid.folded | sort -u | sed 's/^spin-//' | sort -n | tr '\\n' ' '", (int)a, (int)b);
	char want_folded[80];
	snprintf(want_folded, sizeof(want_folded), "0\n%s", want);
	assert_string_equal(out, want_folded);
	/* and report reads them back: into JSON with the same pids, and from the pprof profile into the
	 * same folded lines */
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace report " T "/pid.folded -f json -o " T
				     "/back.json && " PY " -c 'import json, sys; d = json.load(open(sys.argv[1])); "
				     "print(d[\"per_pid\"], \" \".join(str(p) for p in sorted(set(s[\"pid\"] for s in "
				     "d[\"stacks\"]))), end=\" \")' " T "/back.json"), 0);
	snprintf(want_folded, sizeof(want_folded), "True %s", want);
	assert_string_equal(out, want_folded);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace report " T "/pid.pb.gz -o " T "/back.folded && "
				     "sort " T "/pid.folded | cmp - " T "/back.folded && echo same"), 0);
	assert_string_equal(out, "same\n");
	if (!npm_ready())
		return;
	bt_test_run(out, sizeof(out), DUMP " " T "/pid.pb.gz | awk -F'\\t' '$1 == \"sample\" { n = split($3, l, \",\"); "
		    "for (i = 1; i <= n; i++) if (l[i] ~ /^pid=/) print substr(l[i], 5) }' | sort -n -u | tr '\\n' ' '");
	assert_string_equal(out, want);
}

static void outputs__unwritable_output__fails_before_profiling(void **state)
{
	bt_test_require_priv();
	char out[1024];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p 1 -d 1 -o " T "/ok.folded --also-write "
			     "pprof:" T "/no/such/dir/x.pb.gz 2>&1");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "cannot write " T "/no/such/dir/x.pb.gz"));
	/* nothing was left behind, the main output neither */
	bt_test_run(out, sizeof(out), "ls " T " | grep -c '^ok\\.folded'; true");
	assert_string_equal(out, "0\n");
}

static void outputs__bad_also_write__usage_error(void **state)
{
	const char *bad[] = { "bogus:" T "/x", "pprof", "pprof:", "pprof:-", ":" T "/x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char out[1024];
		int rc = bt_test_run(out, sizeof(out), "./buildtrace -p 1 --also-write '%s' 2>&1", bad[i]);
		assert_int_equal(rc, 2);
		assert_true(strstr(out, "--also-write") || strstr(out, "unknown output format"));
	}
}

/* --lines: the JSON and pprof frames of a program with inlined helpers (its symbols and DWARF in
 * a separate debug file, found by its debuglink) and of libc (libc6-dbg's debug file, by build-id)
 * carry the source lines and inlined functions llvm-symbolizer gives for the same instructions. */
static void outputs__lines__match_llvm_symbolizer(void **state)
{
	bt_test_require_priv();
	pid_t w = bt_test_spawn("exec " BT_FIXTURE_DIR "/symsrc/inl.stripped 1 6 > /dev/null");
	usleep(300000);
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -F 199 -d 2 --lines -f json -o " T "/lines.json "
			     "--also-write pprof:" T "/lines.pb.gz --also-write folded:" T "/lines.folded 2>&1", (int)w);
	stop(w);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	/* the program's own frames, strictly */
	assert_int_equal(bt_test_run(out, sizeof(out), PY " tests/tools/srclines.py " T "/lines.json inl.stripped"), 0);
	print_message("inl: %s", out);
	unsigned compared, differ, pc, pd;
	assert_int_equal(sscanf(out, "compared %u differ %u pprof_checked %u pprof_differ %u", &compared, &differ,
				&pc, &pd), 4);
	assert_true(compared >= 3);
	assert_int_equal(differ, 0);
	/* inlined chains were there: fx_round inlined into fx_step inlined into fx_outer */
	assert_int_equal(bt_test_run(out, sizeof(out), PY " -c \"import json,sys; d=json.load(open('" T "/lines.json')); "
				     "print(max(len(f.get('lines', [])) for f in d['frames']))\""), 0);
	assert_true(atoi(out) >= 2);
	/* every user frame with lines, libc's too, and pprof's lines are JSON's */
	if (npm_ready()) {
		run_ok("pprof-format", DUMP " " T "/lines.pb.gz > " T "/lines.dump");
		assert_int_equal(bt_test_run(out, sizeof(out), PY " tests/tools/srclines.py " T "/lines.json / " T
					     "/lines.dump"), 0);
		print_message("all: %s", out);
		assert_int_equal(sscanf(out, "compared %u differ %u pprof_checked %u pprof_differ %u", &compared,
					&differ, &pc, &pd), 4);
		assert_int_equal(differ, 0);
		assert_true(pc >= compared);
		assert_int_equal(pd, 0);
	}
	/* folded names stay the symbols' */
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c ';fx_caller;fx_outer' " T "/lines.folded"), 0);
	/* and a frame is named the same with lines: the outermost of its lines is the frame's own name
	 * (libc's entry point is __libc_start_main, which DWARF calls __libc_start_main_impl, in every
	 * output) */
	assert_int_equal(bt_test_run(out, sizeof(out), PY " -c \"import json; d = json.load(open('" T "/lines.json')); "
				     "print(sum(1 for f in d['frames'] if f.get('lines') and f['lines'][-1]['function'] != f['name']), "
				     "sum(1 for f in d['frames'] if f.get('lines')))\""), 0);
	unsigned bad = 1, lined = 0;
	assert_int_equal(sscanf(out, "%u %u", &bad, &lined), 2);
	assert_int_equal(bad, 0);
	assert_true(lined >= 3);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace report " T "/lines.pb.gz -o " T "/lines-back.folded && "
				     "grep -c '^inl[^;]*;_start;__libc_start_main;' " T "/lines.folded " T
				     "/lines-back.folded"), 0);
	assert_null(strstr(out, ":0"));
}

static void outputs__report__converts_between_formats_offline(void **state)
{
	/* in the order buildtrace writes folded lines */
	static const char folded[] = "app;main;read;entry_SYSCALL_64_[k] 4\napp;main;run;[libfoo.so+0x1a2b] 3\n"
				     "app;main;run;compute 10\nother;start_thread;worker 2\n";
	FILE *f = fopen(T "/in.folded", "we");
	assert_non_null(f);
	fputs(folded, f);
	fclose(f);
	/* folded -> pprof -> folded, pprof read from standard input as well */
	run_ok("to pprof", "./buildtrace report " T "/in.folded -f pprof -o " T "/in.pb.gz");
	run_ok("from pprof", "./buildtrace report - -f folded < " T "/in.pb.gz > " T "/back.folded && "
	       "cmp " T "/in.folded " T "/back.folded");
	run_ok("uncompressed", "gzip -dc " T "/in.pb.gz > " T "/in.pb && ./buildtrace report " T "/in.pb | "
	       "cmp - " T "/back.folded");
	run_ok("to json", "./buildtrace report " T "/in.pb.gz -f json | " PY " tests/outputs/json_fold.py /dev/stdin | "
	       "sort > " T "/back.json.folded && sort " T "/in.folded | cmp - " T "/back.json.folded");
	/* a broken profile is refused with a message, not half converted */
	char out[1024];
	run_ok("truncate", "head -c 40 " T "/in.pb.gz > " T "/cut.pb.gz");
	int rc = bt_test_run(out, sizeof(out), "./buildtrace report " T "/cut.pb.gz -o " T "/cut.folded 2>&1");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "not a valid pprof profile"));
	assert_int_not_equal(access(T "/cut.folded", F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(outputs__one_session__every_format_has_the_same_stacks),
		cmocka_unit_test(outputs__one_session__build_ids_are_those_of_the_files),
		cmocka_unit_test(outputs__per_pid__pid_labels_are_the_processes),
		cmocka_unit_test(outputs__unwritable_output__fails_before_profiling),
		cmocka_unit_test(outputs__bad_also_write__usage_error),
		cmocka_unit_test(outputs__lines__match_llvm_symbolizer),
		cmocka_unit_test(outputs__report__converts_between_formats_offline),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
