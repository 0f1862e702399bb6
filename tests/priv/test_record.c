/* test_record.c - the live session end to end, as a user runs it: ./buildtrace against real
 * processes, compared with perf and with what the processes are known to run. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SESSION_DIR "build/tests/session"
#define TMP "build/tests/tmp-record"

static int setup(void **state)
{
	char out[256];
	return bt_test_run(out, sizeof(out), "mkdir -p " TMP) == 0 ? 0 : -1;
}

/* Starts a command in the background; returns its pid. */
static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int count_lines(const char *path, const char *must, const char *must_not)
{
	char out[64];
	bt_test_run(out, sizeof(out), "grep -c -E '%s' %s | tr -d '\\n'; true", must, path);
	int n = atoi(out);
	if (must_not) {
		bt_test_run(out, sizeof(out), "grep -E '%s' %s | grep -c -E '%s' | tr -d '\\n'; true", must,
			    path, must_not);
		if (atoi(out) > 0)
			return -atoi(out);
	}
	return n;
}

static void record__demo_workload__stacks_match_perf(void **state)
{
	bt_test_require_priv();
	char out[4096];
	pid_t w = bt_test_spawn("exec build/demo-workload 8");
	usleep(300000);
	/* Both profilers watch the same process over the same seconds, at 499 Hz: the overlap of two
	 * samplings of one distribution falls with their size, and on a machine loaded many times
	 * over its CPUs 99 Hz gave the workload too few samples (0.71 once). */
	pid_t perf = bt_test_perf_record_at(w, "fp", 499, 3, TMP "/perf.data");
	/* frame pointers on both sides: the walks must agree frame for frame; the DWARF
	 * call graph is compared with perf's in test_record_dwarf.c */
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -F 499 -d 3 --call-graph fp -o " TMP
			     "/bt.folded 2>&1", (int)w);
	waitpid(perf, NULL, 0);
	stop(w);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "samples"));
	assert_int_equal(bt_test_perf_fold(TMP "/perf.data", "", TMP "/perf.folded"), 0);
	rc = bt_test_run(out, sizeof(out), "tests/tools/foldtool.py overlap --user " TMP "/bt.folded " TMP
			 "/perf.folded");
	assert_int_equal(rc, 0);
	double ov = atof(out);
	char n[64];
	bt_test_run(n, sizeof(n), "tests/tools/foldtool.py total " TMP "/bt.folded | tr -d '\\n'; echo -n ' and '; "
		    "tests/tools/foldtool.py total " TMP "/perf.folded | tr -d '\\n'");
	print_message("stack overlap with perf: %.3f (samples: %s)\n", ov, n);
	assert_true(ov >= 0.8);
	/* and the names are the workload's own */
	assert_true(count_lines(TMP "/bt.folded", "main;do_work;checksum_data;hash_block", NULL) > 0);
	assert_true(count_lines(TMP "/bt.folded", "main;do_work;count_primes;is_prime", NULL) > 0);
}

/* The demo as `make demo` profiles it (its default call graph, by pid, kernel frames too): no frame
 * of its flame graph is unnamed, none is [unknown] or [FILE+0xOFFSET]. Three sessions, each from
 * the start of a new process, where frames of files whose build-ids are still to come are. */
static void record__demo_as_make_demo__every_frame_named(void **state)
{
	bt_test_require_priv();
	char out[4096];
	for (int i = 0; i < 3; i++) {
		pid_t w = bt_test_spawn("exec build/demo-workload 8");
		int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -d 2 -o " TMP "/demo.folded 2>&1", (int)w);
		stop(w);
		print_message("%s", out);
		assert_int_equal(rc, 0);
		assert_true(count_lines(TMP "/demo.folded", "main;do_work", NULL) > 0);
		bt_test_run(out, sizeof(out), "grep -E '\\[unknown\\]|\\+0x' " TMP "/demo.folded; true");
		if (out[0])
			fail_msg("unnamed frames in the demo's profile:\n%s", out);
	}
}

/* One session over the spinner: the samples it got and the CPU seconds the spinner used. */
static void count_once(double *got, double *cpu)
{
	char out[4096], go[512];
	/* The spinner waits until buildtrace samples (-v says so), burns 2.5 s of CPU, reports its CPU
	 * time and exits, which ends the session: every CPU-second it used falls inside the session. */
	assert_non_null(realpath(TMP, go));
	strncat(go, "/spin.go", sizeof(go) - strlen(go) - 1);
	unlink(go);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "exec " SESSION_DIR "/spin %s 2.5 > " TMP "/spin.cpu", go);
	pid_t w = bt_test_spawn(cmd);
	int rc = bt_test_run(out, sizeof(out), "rm -f " TMP "/count.log; ./buildtrace -v -p %d -F 199 -o " TMP "/count.folded 2> " TMP
			     "/count.log & bt=$!; while ! grep -q 'sampling at' " TMP "/count.log; do "
			     "kill -0 $bt 2>/dev/null || break; sleep 0.05; done; touch %s; wait $bt", (int)w, go);
	waitpid(w, NULL, 0);
	bt_test_run(out, sizeof(out), "cat " TMP "/count.log");
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "every watched process exited"));
	bt_test_run(out, sizeof(out), "cat " TMP "/spin.cpu");
	*cpu = atof(out);
	bt_test_run(out, sizeof(out), "tests/tools/foldtool.py total " TMP "/count.folded");
	*got = atof(out);
}

static void record__sample_count__matches_frequency_and_cpu_time(void **state)
{
	bt_test_require_priv();
	/* cpu-clock fires on wall-clock time while the process runs, and its CPU time excludes time a
	 * loaded host stole from this virtual machine: under load a session can hold up to half as many
	 * samples again (721 for 498 expected was seen). The bounds: none lost (at least 90% of rate x
	 * CPU time) and none counted twice (which would double the count). */
	double got = 0, cpu = 0, want = 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		count_once(&got, &cpu);
		want = 199 * cpu;
		print_message("samples %.0f, expected %.0f (cpu %.2fs)\n", got, want, cpu);
		assert_true(cpu >= 2.5);
		if (got >= 0.9 * want && got <= 1.1 * want)
			break;
	}
	assert_true(got >= 0.9 * want && got < 1.8 * want);
}

/* Two processes map different versions of one library path: the file is replaced by rename between
 * their starts and deleted afterwards. */
static const char *versions_script =
	"set -e; d=" SESSION_DIR "/lib; mkdir -p $d; cp " SESSION_DIR "/v1/libverlib.so $d/.new; "
	"mv $d/.new $d/libverlib.so; " SESSION_DIR "/verhost verA %s & sleep 0.3; "
	"cp " SESSION_DIR "/v2/libverlib.so $d/.new; mv $d/.new $d/libverlib.so; "
	SESSION_DIR "/verhost verB %s & sleep 0.3; rm $d/libverlib.so; wait";

static void check_versions(const char *folded)
{
	int a = count_lines(folded, "^verA;", "_v2|verlib_v2_padding");
	int b = count_lines(folded, "^verB;", "_v1");
	assert_true(a > 0);
	assert_true(b > 0);
	assert_true(count_lines(folded, "^verA;.*verlib_work;verlib_spin_v1 ", NULL) > 0);
	assert_true(count_lines(folded, "^verB;.*verlib_work;verlib_spin_v2 ", NULL) > 0);
}

static void record__library_replaced_before_attach__each_process_its_version(void **state)
{
	bt_test_require_priv();
	char cmd[1024], out[4096];
	snprintf(cmd, sizeof(cmd), versions_script, "6", "6");
	pid_t launcher = bt_test_spawn(cmd);
	sleep(1);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p $(pgrep -d, -P %d -f verhost) -d 2 "
			     "-o " TMP "/after.folded 2>&1", (int)launcher);
	bt_test_run(NULL, 0, "pkill -P %d -f verhost", (int)launcher);
	waitpid(launcher, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	check_versions(TMP "/after.folded");
}

static void record__library_replaced_during_session__each_process_its_version(void **state)
{
	bt_test_require_priv();
	char cmd[1200], out[4096];
	snprintf(cmd, sizeof(cmd), "sleep 1.5; " "%s", versions_script);
	char full[1400];
	snprintf(full, sizeof(full), cmd, "2", "2");
	pid_t launcher = bt_test_spawn(full);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -d 8 -o " TMP "/during.folded 2>&1",
			     (int)launcher);
	waitpid(launcher, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	/* the launcher and its children exited, which ends the session before -d */
	assert_non_null(strstr(out, "every watched process exited"));
	check_versions(TMP "/during.folded");
}

static void record__bad_command_lines__clear_message_nonzero_exit(void **state)
{
	static const struct {
		const char *args, *expect;
	} cases[] = {
		{ "-p 999999999", "pid" },
		{ "-p abc", "invalid -p 'abc': expected a process id list" },
		{ "-p 1 -F 0", "invalid -F '0': expected a frequency" },
		{ "-p 1 -F 100000000", "kernel.perf_event_max_sample_rate" },
		{ "-p 1 -f nosuch", "invalid -f 'nosuch': expected a format" },
		{ "-a -p 1", "exclude" },
		{ "--user-only --kernel-only -a", "exclude" },
		{ "", "say what to profile: -p PID, -t TID, -a or -- COMMAND" },
		{ "-p 1 -d -3", "-d needs a duration" },
		{ "-p 1 -d 3x", "invalid -d '3x'" },
		{ "-f -p 1", "-f needs a format" },
		{ "-p 1 --bogus", "unknown option" },
		{ "nosuchcommand", "unknown subcommand" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[2048];
		int rc = bt_test_run(out, sizeof(out), "./buildtrace %s 2>&1", cases[i].args);
		if (rc == 0 || !strstr(out, cases[i].expect))
			fail_msg("'buildtrace %s' gave rc %d and: %s", cases[i].args, rc, out);
	}
}

static void record__unwritable_output__error_and_no_file(void **state)
{
	bt_test_require_priv();
	char out[2048];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -d 1 -o /nonexistent-dir/x.folded 2>&1",
			     (int)getpid());
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(out, "cannot write /nonexistent-dir/x.folded"));
}

/* Output to a FIFO (or a device such as /dev/null) is written into it: the profile is not renamed
 * over it, which would replace the node with a regular file. */
static void record__output_to_fifo__written_in_place(void **state)
{
	bt_test_require_priv();
	char out[2048];
	int rc = bt_test_run(out, sizeof(out), "rm -f " TMP "/out.fifo && mkfifo " TMP "/out.fifo && "
			     "{ timeout 20 cat " TMP "/out.fifo > " TMP "/fifo.json & } && "
			     "./buildtrace -p %d -d 1 -f json -o " TMP "/out.fifo 2>&1 && wait && "
			     "test -p " TMP "/out.fifo && grep -c '\"frames\"' " TMP "/fifo.json", (int)getpid());
	print_message("%s", out);
	assert_int_equal(rc, 0);
}

static void record__system_wide_kernel_frames__all_in_kallsyms(void **state)
{
	bt_test_require_priv();
	char out[4096];
	pid_t w = bt_test_spawn("exec dd if=/dev/zero of=/dev/null bs=64 count=100000000 2>/dev/null");
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -a --kernel-only -d 2 -o " TMP "/kernel.folded 2>&1");
	stop(w);
	assert_int_equal(rc, 0);
	/* every kernel frame name, without its _[k], must be a symbol the kernel lists (read now, so
	 * that the BPF programs loaded meanwhile are there too). BPF programs are left out: another
	 * tool's program may have come and gone during the session, and kallsyms no longer lists it
	 * (test_capture checks the programs' names against the kernel's announcements) */
	rc = bt_test_run(out, sizeof(out),
		"tr ';' '\\n' < " TMP "/kernel.folded | sed -n 's/_\\[k\\]\\( [0-9]*\\)\\{0,1\\}$//p' | "
		"grep -v '^bpf_prog_[0-9a-f]\\{16\\}_' | sort -u > " TMP "/knames; "
		"awk '{print $3}' /proc/kallsyms | sort -u > " TMP "/kallsyms; "
		"echo $(wc -l < " TMP "/knames) $(comm -23 " TMP "/knames " TMP "/kallsyms | wc -l); "
		"comm -23 " TMP "/knames " TMP "/kallsyms | head -5");
	assert_int_equal(rc, 0);
	int names = -1, missing = -1;
	assert_int_equal(sscanf(out, "%d %d", &names, &missing), 2);
	print_message("%d kernel function names, %d not in /proc/kallsyms\n%s", names, missing, out);
	assert_true(names >= 10);
	assert_int_equal(missing, 0);
	/* a dd copying /dev/zero spends its kernel time in the read and write paths */
	assert_int_equal(bt_test_run(NULL, 0, "grep -q '^dd;.*vfs_read_\\[k\\]' " TMP "/kernel.folded"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record__bad_command_lines__clear_message_nonzero_exit),
		cmocka_unit_test(record__unwritable_output__error_and_no_file),
		cmocka_unit_test(record__output_to_fifo__written_in_place),
		cmocka_unit_test(record__demo_workload__stacks_match_perf),
		cmocka_unit_test(record__demo_as_make_demo__every_frame_named),
		cmocka_unit_test(record__sample_count__matches_frequency_and_cpu_time),
		cmocka_unit_test(record__library_replaced_before_attach__each_process_its_version),
		cmocka_unit_test(record__library_replaced_during_session__each_process_its_version),
		cmocka_unit_test(record__system_wide_kernel_frames__all_in_kallsyms),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
