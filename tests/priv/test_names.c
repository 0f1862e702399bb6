/* test_names.c - names where perf has none and where perf has one, end to end as a user runs
 * ./buildtrace: the vDSO (against perf, in every call graph, and symbolize --pid), stripped Go
 * programs (against the unstripped build, and Go releases from 1.16 on against the runtime's own
 * tracebacks), and Go stacks that end in the runtime's outermost frames, never in [unknown]. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-names"
#define CLOCKLOOP "build/tests/session/clockloop"
#define GOPROG "build/fixtures/go/goprog"
#define NAMES "tests/tools/stacknames.py"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP) == 0 ? 0 : -1;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A number a helper printed. */
static double run_number(const char *fmt, const char *a, const char *b)
{
	char cmd[1024], out[256];
	snprintf(cmd, sizeof(cmd), fmt, a, b);
	assert_int_equal(bt_test_run(out, sizeof(out), "%s", cmd), 0);
	return atof(out);
}

/* Profiles pid for two seconds into out with the call graph asked for. */
static void profile(pid_t pid, const char *callgraph, const char *out)
{
	char log[4096];
	/* at 499 Hz, so that a busy machine still gives enough samples of a process to count shares */
	int rc = bt_test_run(log, sizeof(log), "./buildtrace -p %d -F 499 -d 2 --call-graph %s -o %s 2>&1", (int)pid,
			     callgraph, out);
	print_message("%s", log);
	assert_int_equal(rc, 0);
	assert_true(run_number("tests/tools/foldtool.py total %s%s", out, "") >= 40);
}

/* The leaf of a clock_gettime loop is in the vDSO nearly always: named as perf names it (from the
 * image's .dynsym, __vdso_clock_gettime), in the default call graph and with frame pointers, and
 * no user frame is left unnamed. perf keeps its own build-id directory here, so that no entry of
 * another tool in the shared one can hide the vDSO from it. */
static void record__clock_gettime_loop__vdso_leaf_named_as_perf(void **state)
{
	bt_test_require_priv();
	pid_t w = bt_test_spawn("exec " CLOCKLOOP);
	usleep(300000);
	char out[8192], dir[4096];
	/* (perf takes the directory as an absolute path only) */
	assert_non_null(getcwd(dir, sizeof(dir) - 64));
	strcat(dir, "/" TMP "/perf-debug");
	assert_int_equal(bt_test_run(out, sizeof(out), "perf --buildid-dir %s record -q -e cpu-clock -F 99 -g -p %d -o "
				     TMP "/perf.data -- sleep 2 2>&1 && perf --buildid-dir %s script -i " TMP
				     "/perf.data -F ip,sym > " TMP "/perf.txt 2>/dev/null", dir, (int)w, dir), 0);
	profile(w, "dwarf", TMP "/clock.folded");
	profile(w, "fp", TMP "/clock-fp.folded");
	stop(w);
	bt_test_run(out, sizeof(out), NAMES " perf-leaves " TMP "/perf.txt | head -n 3");
	print_message("perf's leaves:\n%s", out);
	double perf_share = run_number(NAMES " perf-leaves %s | awk '$2 == \"__vdso_clock_gettime\" { print $1 }'",
				       TMP "/perf.txt", "");
	assert_true(perf_share >= 0.8);
	static const char *const files[] = { TMP "/clock.folded", TMP "/clock-fp.folded" };
	for (size_t i = 0; i < 2; i++) {
		double share = run_number(NAMES " leaf-share %s %s", files[i], "__vdso_clock_gettime");
		print_message("%s: __vdso_clock_gettime leaf in %.1f%% of samples (perf: %.1f%%)\n", files[i],
			      100 * share, 100 * perf_share);
		assert_true(share >= 0.8);
		bt_test_run(out, sizeof(out), NAMES " unnamed %s", files[i]);
		if (out[0])
			fail_msg("unnamed frames in %s:\n%s", files[i], out);
	}
}

/* An address of the vDSO of a running process: its function, as the image's symbols name it. */
static void symbolize__pid_vdso_address__named(void **state)
{
	bt_test_require_priv();
	pid_t w = bt_test_spawn("exec " CLOCKLOOP);
	usleep(200000);
	char out[4096], cmd[1024];
	/* the image, copied from the process, and where __vdso_clock_gettime is in it */
	snprintf(cmd, sizeof(cmd), "python3 -c \"import sys\nstart, end = [int(x, 16) for x in [l for l in "
		 "open('/proc/%d/maps') if l.rstrip().endswith('[vdso]')][0].split()[0].split('-')]\n"
		 "m = open('/proc/%d/mem', 'rb'); m.seek(start); open('" TMP "/vdso.so', 'wb').write(m.read(end - start))\n"
		 "print('%%x' %% start)\"", (int)w, (int)w);
	assert_int_equal(bt_test_run(out, sizeof(out), "%s", cmd), 0);
	unsigned long long start = strtoull(out, NULL, 16);
	assert_int_equal(bt_test_run(out, sizeof(out), "readelf -Ws " TMP "/vdso.so | awk '$8 ~ "
				     "/^__vdso_clock_gettime/ { print $2; exit }'"), 0);
	unsigned long long sym = strtoull(out, NULL, 16);
	assert_true(sym > 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --pid %d %llx", (int)w,
				     start + sym + 4), 0);
	stop(w);
	print_message("%s", out);
	assert_non_null(strstr(out, "\t__vdso_clock_gettime+0x4\t"));
}

/* A Go program built stripped (-ldflags='-s -w') has its main.* functions named in (nearly) every
 * sample of the goroutine that loops in them (its stacks begin in runtime.goexit; the runtime's own
 * threads, sysmon, take the rest), under the names the unstripped build's symbol table gives them,
 * in the default call graph and with frame pointers; no user frame is unnamed. */
static void record__stripped_go__main_functions_as_unstripped(void **state)
{
	bt_test_require_priv();
	char out[8192], names[8192];
	static const char *const cgs[] = { "dwarf", "fp" };
	for (size_t i = 0; i < 2; i++) {
		pid_t w = bt_test_spawn("exec " GOPROG "-stripped spin");
		usleep(300000);
		profile(w, cgs[i], TMP "/go-stripped.folded");
		stop(w);
		double share = run_number(NAMES " frame-share %s '%s' '^runtime\\.goexit$'", TMP "/go-stripped.folded",
					  "^main\\.");
		print_message("%s: main.* named in %.1f%% of samples\n", cgs[i], 100 * share);
		assert_true(share >= 0.95);
		bt_test_run(out, sizeof(out), NAMES " unnamed " TMP "/go-stripped.folded");
		if (out[0])
			fail_msg("unnamed frames:\n%s", out);
		/* every main.* name is one of the unstripped build's functions */
		assert_int_equal(bt_test_run(names, sizeof(names), NAMES " names " TMP "/go-stripped.folded '^main\\.'"), 0);
		assert_true(strstr(names, "main.sum") != NULL);
		for (char *n = strtok(names, "\n"); n; n = strtok(NULL, "\n")) {
			bt_test_run(out, sizeof(out), "go tool nm " GOPROG " | awk '$3 == \"%s\" && $2 == \"T\"' | wc -l", n);
			if (atoi(out) != 1)
				fail_msg("%s is not a function of the unstripped build", n);
		}
	}
}

/* Stacks of a Go program, its collector's threads busy too, end in the runtime's outermost frames
 * (runtime.goexit, mstart, or where the runtime switched stacks), never in [unknown], whatever the
 * call graph, stripped or not. */
static void record__go_stacks__no_unknown_root(void **state)
{
	bt_test_require_priv();
	char out[8192];
	static const char *const bins[] = { GOPROG, GOPROG "-stripped" };
	static const char *const cgs[] = { "dwarf", "fp", "dwarf-copy" };
	for (size_t b = 0; b < 2; b++) {
		for (size_t c = 0; c < 3; c++) {
			char cmd[256];
			snprintf(cmd, sizeof(cmd), "exec %s alloc", bins[b]);
			pid_t w = bt_test_spawn(cmd);
			usleep(300000);
			profile(w, cgs[c], TMP "/go-roots.folded");
			stop(w);
			bt_test_run(out, sizeof(out), "awk -F';' '{ print $2 }' " TMP "/go-roots.folded | sed 's/ [0-9]*$//' "
				    "| sort | uniq -c | sort -rn | head -n 6");
			print_message("%s, %s: roots\n%s", bins[b], cgs[c], out);
			bt_test_run(out, sizeof(out), "grep -E '^[^;]*;(\\[unknown\\]|\\[[^]]*\\+0x)' " TMP
				    "/go-roots.folded; true");
			if (out[0])
				fail_msg("%s, %s: stacks rooted in an unnamed frame:\n%s", bins[b], cgs[c], out);
			assert_true(run_number(NAMES " frame-share %s '%s'", TMP "/go-roots.folded",
					       "^main\\.alloc$") > 0.3);
		}
	}
}

/* Stripped Go programs of the Go releases from 1.16 on (esbuild's builds, from npm: 1.16, 1.17,
 * 1.19, 1.20, 1.23): symbolize names every frame of the runtime's own traceback at its pc as the
 * runtime does, functions inlined there, files and lines included. */
static void symbolize__go_releases__as_the_runtime_traceback(void **state)
{
	char out[16384];
	int rc = bt_test_run(out, sizeof(out), "tests/outputs/npm-setup.sh esbuild-go116 esbuild-go117 esbuild-go119 "
			     "esbuild-go120 esbuild-go123 2>&1");
	if (rc != 0) {
		if (bt_test_in_ci())
			fail_msg("npm packages unavailable under CI: %s", out);
		print_message("skipped: npm packages unavailable: %s\n", out);
		skip();
	}
	static const char *const rel[] = { "116", "117", "119", "120", "123" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		rc = bt_test_run(out, sizeof(out), "tests/tools/gotraceback.py ./buildtrace "
				 "build/npm/node_modules/esbuild-go%s/bin/esbuild 2>&1", rel[i]);
		print_message("Go %s: %s", rel[i], out);
		assert_int_equal(rc, 0);
		const char *last = strrchr(out, '\n');
		while (last && last > out && last[-1] != '\n')
			last--;
		int agree = 0, differ = -1, inlined = 0;
		assert_int_equal(sscanf(last ? last : out, "%d agree %d differ %d inlined", &agree, &differ, &inlined), 3);
		assert_int_equal(differ, 0);
		assert_true(agree >= 15);
		assert_true(inlined >= 3);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record__clock_gettime_loop__vdso_leaf_named_as_perf),
		cmocka_unit_test(symbolize__pid_vdso_address__named),
		cmocka_unit_test(record__stripped_go__main_functions_as_unstripped),
		cmocka_unit_test(record__go_stacks__no_unknown_root),
		cmocka_unit_test(symbolize__go_releases__as_the_runtime_traceback),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
