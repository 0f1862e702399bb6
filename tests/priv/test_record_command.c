/* test_record_command.c - `buildtrace [OPTIONS] -- COMMAND [ARGS...]` end to end: the command is
 * profiled from its start to its exit, buildtrace exits with its status, a command that cannot run
 * is said so, and under sudo the command runs as the user who called it. Also perf's narrower
 * targets: -t (threads) and -C (CPUs). */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define TMP "build/tests/tmp-record-command"
#define EXITWITH "build/tests/progs/exitwith"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "mkdir -p " TMP) == 0 ? 0 : -1;
}

static int count(const char *pattern, const char *path)
{
	char out[64];
	bt_test_run(out, sizeof(out), "grep -c -E '%s' %s; true", pattern, path);
	return atoi(out);
}

static void command__folded__main_in_stacks_and_its_exit_status(void **state)
{
	bt_test_require_priv();
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "rm -f " TMP "/out.folded; ./buildtrace -F 999 -o " TMP
			     "/out.folded -- " EXITWITH " 0.5 3 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 3);
	assert_non_null(strstr(out, "the command exited"));
	/* its own functions under main, from the dynamic loader's hand-over on */
	assert_true(count("^exitwith;.*main;exitwith_work ", TMP "/out.folded") > 0);
	/* 0.5 s of CPU at 999 Hz: most of it sampled (the count is not the point; emptiness is) */
	bt_test_run(out, sizeof(out), "tests/tools/foldtool.py total " TMP "/out.folded");
	assert_true(atof(out) >= 100);
}

static void command__all_cpus__ends_with_the_command(void **state)
{
	bt_test_require_priv();
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -a -f pprof -o " TMP "/all.pb.gz --also-write "
			     "json:" TMP "/all.json -- " EXITWITH " 0.3 0 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "the command exited"));
	/* sampling stops when the session ends: every sample taken was delivered or counted lost, so
	 * the lost can never be more than were taken */
	unsigned long long samples, lost, taken;
	const char *p = strstr(out, "the command exited: ");
	assert_int_equal(sscanf(p, "the command exited: %llu samples, %llu lost", &samples, &lost), 2);
	p = strstr(out, " samples taken");
	assert_non_null(p);
	while (p > out && p[-1] != ' ')
		p--;
	assert_int_equal(sscanf(p, "%llu samples taken", &taken), 1);
	assert_int_equal(samples + lost, taken);
	assert_true(samples > 0);
	/* system-wide, and the command among what was sampled, its stacks whole from _start to its
	 * work (the tables of a process that started after attach): in both formats */
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace report " TMP "/all.pb.gz -o " TMP "/all.folded"), 0);
	assert_true(count("^exitwith;_start;__libc_start_main;__libc_start_call_main;main;exitwith_work ",
			  TMP "/all.folded") > 0);
	assert_true(count("exitwith_work", TMP "/all.json") > 0);
}

static void command__missing__127_and_a_message(void **state)
{
	bt_test_require_priv();
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -o " TMP "/none.folded -- "
			     "no-such-command-anywhere 2>&1");
	assert_int_equal(rc, 127);
	assert_non_null(strstr(out, "no-such-command-anywhere: command not found"));
	/* nothing was written */
	assert_int_equal(bt_test_run(NULL, 0, "test -e " TMP "/none.folded"), 1);
	/* a file that is not executable: 126, as a shell says */
	bt_test_run(NULL, 0, "echo data > " TMP "/plain; chmod 0644 " TMP "/plain");
	rc = bt_test_run(out, sizeof(out), "./buildtrace -o /dev/null -- " TMP "/plain 2>&1");
	assert_int_equal(rc, 126);
	assert_non_null(strstr(out, TMP "/plain: Permission denied"));
}

static void command__sudo__runs_as_the_caller_unless_keep_root(void **state)
{
	bt_test_require_priv();
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "SUDO_UID=65534 SUDO_GID=65534 ./buildtrace -o /dev/null -- "
			     "sh -c 'echo uid=$(id -u) gid=$(id -g) groups=$(id -G)' 2>/dev/null");
	assert_int_equal(rc, 0);
	print_message("%s", out);
	assert_non_null(strstr(out, "uid=65534 gid=65534 "));
	/* root's groups are gone */
	assert_null(strstr(out, "groups=0"));
	assert_null(strstr(out, " 0\n"));
	rc = bt_test_run(out, sizeof(out), "SUDO_UID=65534 SUDO_GID=65534 ./buildtrace --keep-root "
			 "-o /dev/null -- id -u 2>/dev/null");
	assert_int_equal(rc, 0);
	assert_string_equal(out, "0\n");
	rc = bt_test_run(out, sizeof(out), "SUDO_UID=x SUDO_GID=1 ./buildtrace -o /dev/null -- id -u 2>&1");
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "SUDO_UID"));
}

static void command__duration__ends_it_with_sigterm(void **state)
{
	bt_test_require_priv();
	char out[4096];
	/* the command would run for a minute of CPU; -d ends the session and passes SIGTERM on */
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -d 0.5 -o " TMP "/d.folded -- "
			     EXITWITH " 60 0 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 128 + 15);
	assert_non_null(strstr(out, "duration reached"));
	assert_true(count("exitwith_work ", TMP "/d.folded") > 0);
}

static void command__sigterm_to_buildtrace__passed_on(void **state)
{
	bt_test_require_priv();
	char out[4096];
	/* buildtrace -v says when it samples; only then is it sent SIGTERM, which the command gets too */
	int rc = bt_test_run(out, sizeof(out),
			     "rm -f " TMP "/t.folded " TMP "/t.log; ./buildtrace -v -o " TMP "/t.folded -- " EXITWITH " 60 0 2> " TMP "/t.log & bt=$!; "
			     "while ! grep -q 'sampling at' " TMP "/t.log; do "
			     "  kill -0 $bt 2>/dev/null || break; sleep 0.05; done; "
			     "kill -TERM $bt; wait $bt");
	bt_test_run(out, sizeof(out), "cat " TMP "/t.log");
	print_message("%s", out);
	assert_int_equal(rc, 128 + 15);
	assert_non_null(strstr(out, "terminated"));
	/* the profile is written (however few samples it holds by then) */
	assert_int_equal(bt_test_run(NULL, 0, "test -f " TMP "/t.folded"), 0);
}

static int spawned;  /* a workload to kill however the test ends */

/* Starts exitwith with its second thread; its pid, and the second thread's id in *tid once the
 * thread has named itself. */
static int start_two_threads(int *tid)
{
	char out[256];
	int pid = spawned = bt_test_spawn("exec " EXITWITH " 600 0 thread");
	assert_true(pid > 0);
	int rc = bt_test_run(out, sizeof(out), "for i in $(seq 200); do for t in /proc/%d/task/*; do "
			     "[ \"$(cat $t/comm 2>/dev/null)\" = bt-other ] && { basename $t; exit 0; }; done; "
			     "sleep 0.05; done; exit 1", pid);
	assert_int_equal(rc, 0);
	*tid = atoi(out);
	assert_true(*tid > 0 && *tid != pid);
	return pid;
}

static void stop(int pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	spawned = 0;
}

/* Whatever a failed assertion left running. */
static int kill_spawned(void **state)
{
	if (spawned > 0)
		stop(spawned);
	return 0;
}

static void threads__one_tid__only_its_samples(void **state)
{
	bt_test_require_priv();
	char out[4096];
	int tid, pid = start_two_threads(&tid);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -t %d -F 499 -d 1 -o " TMP "/tid.folded 2>&1", tid);
	int rc_all = bt_test_run(out, sizeof(out), "./buildtrace -p %d -F 499 -d 1 -o " TMP "/pid.folded 2>&1",
				 pid);
	stop(pid);
	assert_int_equal(rc, 0);
	assert_int_equal(rc_all, 0);
	assert_true(count("exitwith_other ", TMP "/tid.folded") > 0);
	assert_int_equal(count("exitwith_work", TMP "/tid.folded"), 0);
	/* the whole process has both */
	assert_true(count("exitwith_other ", TMP "/pid.folded") > 0);
	assert_true(count("exitwith_work ", TMP "/pid.folded") > 0);
}

static void cpus__cpu_list__only_samples_taken_there(void **state)
{
	bt_test_require_priv();
	char out[4096];
	if (bt_test_run(out, sizeof(out), "nproc") != 0 || atoi(out) < 2)
		skip();
	/* pinned to CPU 1: sampled there, never on CPU 0 */
	int pid = spawned = bt_test_spawn("exec taskset -c 1 " EXITWITH " 600 0");
	int rc0 = bt_test_run(out, sizeof(out), "./buildtrace -p %d -C 0 -F 499 -d 1 -o " TMP "/cpu0.folded "
			      "2>&1", pid);
	int rc1 = bt_test_run(out, sizeof(out), "./buildtrace -p %d --cpu 1 -F 499 -d 1 -o " TMP
			      "/cpu1.folded 2>&1", pid);
	stop(pid);
	assert_int_equal(rc0, 0);
	assert_int_equal(rc1, 0);
	assert_int_equal(count("exitwith_work", TMP "/cpu0.folded"), 0);
	assert_true(count("exitwith_work ", TMP "/cpu1.folded") > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(command__folded__main_in_stacks_and_its_exit_status),
		cmocka_unit_test(command__all_cpus__ends_with_the_command),
		cmocka_unit_test(command__missing__127_and_a_message),
		cmocka_unit_test(command__sudo__runs_as_the_caller_unless_keep_root),
		cmocka_unit_test(command__duration__ends_it_with_sigterm),
		cmocka_unit_test(command__sigterm_to_buildtrace__passed_on),
		cmocka_unit_test_teardown(threads__one_tid__only_its_samples, kill_spawned),
		cmocka_unit_test_teardown(cpus__cpu_list__only_samples_taken_there, kill_spawned),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
