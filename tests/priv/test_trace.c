/* test_trace.c - `buildtrace trace` end to end: the hits of a function in a test program against the
 * program's own count of its calls (a command, and a process found with -p through map_files),
 * each under its callers; and bad input: a function that does not exist, an address outside the
 * code, a file without a build-id (refused, or placed with a warning when asked), a process that
 * does not exist or exits while traced. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-trace"
#define TRACEE "build/tests/progs/tracee"
#define NOBID "build/tests/progs/tracee-nobid"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "mkdir -p " TMP) == 0 ? 0 : -1;
}

static long total(const char *folded)
{
	char out[64];
	if (bt_test_run(out, sizeof(out), "tests/tools/foldtool.py total %s", folded) != 0)
		return -1;
	return atol(out);
}

static int count(const char *pattern, const char *path)
{
	char out[64];
	bt_test_run(out, sizeof(out), "grep -c -E '%s' %s; true", pattern, path);
	return atoi(out);
}

static void trace__command__hits_equal_the_program_count(void **state)
{
	bt_test_require_priv();
	char out[8192];
	int rc = bt_test_run(out, sizeof(out), "rm -f " TMP "/cmd.folded; ./buildtrace trace -o " TMP
			     "/cmd.folded " TRACEE ":tracee_hit -- " TRACEE " 1000 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "calls: 1000"));
	assert_non_null(strstr(out, TRACEE ":tracee_hit: 1000 hits, 0 lost"));
	assert_int_equal(total(TMP "/cmd.folded"), 1000);
	/* every hit is the probed function, under its callers */
	assert_int_equal(count(";tracee_hit [0-9]+$", TMP "/cmd.folded"), count(".", TMP "/cmd.folded"));
	assert_true(count("^tracee;_start;__libc_start_main;__libc_start_call_main;main;tracee_outer;"
			  "tracee_hit 1000$", TMP "/cmd.folded") == 1);
	assert_non_null(strstr(out, " 0 unresolved frames"));
}

/* A function named by an alias the symbol table does not keep (libc's getpid is __getpid there, and
 * stripped libc has getpid in .dynsym only): found in the file's own dynamic symbols, and every one
 * of Python's 300 calls counted under os.getpid's C function. */
static void trace__alias_in_dynsym__found(void **state)
{
	bt_test_require_priv();
	char out[8192], libc[512];
	assert_int_equal(bt_test_run(libc, sizeof(libc), "readlink -f /lib/x86_64-linux-gnu/libc.so.6 | tr -d '\\n'"), 0);
	int rc = bt_test_run(out, sizeof(out), "rm -f " TMP "/alias.folded; ./buildtrace trace -o " TMP
			     "/alias.folded %s:getpid -- /usr/bin/python3 -c 'import os; [os.getpid() for _ in range(300)]' 2>&1",
			     libc);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	bt_test_run(out, sizeof(out), "grep ';os_getpid[^;]*;[^;]*getpid ' " TMP "/alias.folded | awk '{ s += $NF } END { print s + 0 }'");
	assert_int_equal(atoi(out), 300);
}

/* A command that runs and exits between two reads of the ring buffer: its program, ld.so and libc
 * are named all the same (their mmap records are kept though the kernel forgot the process, and
 * build-ids not read before it exited are read from the very files). Often enough to catch it. */
static void trace__short_command__every_frame_named(void **state)
{
	bt_test_require_priv();
	char out[8192];
	for (int i = 0; i < 8; i++) {
		int rc = bt_test_run(out, sizeof(out), "./buildtrace trace -o " TMP "/short.folded " TRACEE
				     ":tracee_hit -- " TRACEE " 50 2>&1");
		assert_int_equal(rc, 0);
		if (!strstr(out, " 0 unresolved frames"))
			fail_msg("run %d: %s", i, out);
		assert_int_equal(count("^tracee;_start;__libc_start_main;__libc_start_call_main;main;tracee_outer;"
				       "tracee_hit 50$", TMP "/short.folded"), 1);
	}
}

/* -a: every process that runs the file; with a command, until it exits. */
static void trace__all__with_a_command(void **state)
{
	bt_test_require_priv();
	char out[8192];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace trace -a -o " TMP "/all.folded " TRACEE ":tracee_hit -- "
			     TRACEE " 40 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "the command exited"));
	assert_int_equal(total(TMP "/all.folded"), 40);
}

static void trace__pid__found_through_map_files(void **state)
{
	bt_test_require_priv();
	char out[8192];
	bt_test_run(NULL, 0, "rm -f " TMP "/pid.out");  /* an earlier run's "ready" must not count */
	pid_t t = bt_test_spawn("exec " TRACEE " 700 wait > " TMP "/pid.out");
	assert_true(bt_test_wait_for_text(TMP "/pid.out", "ready", t));
	/* a relative path naming the same file as the mapping's */
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace trace -p %d -o " TMP "/pid.folded ./" TRACEE
		 ":tracee_hit 2> " TMP "/pid.log", (int)t);
	bt_test_run(NULL, 0, "rm -f " TMP "/pid.folded " TMP "/pid.log");
	pid_t bt = bt_test_spawn(cmd);
	assert_true(bt_test_wait_for_text(TMP "/pid.log", "tracing 1 probe", bt));
	kill(t, SIGUSR1);
	int st;
	waitpid(t, &st, 0);
	/* the traced process exited: so does the session */
	assert_int_equal(waitpid(bt, &st, 0), bt);
	bt_test_run(out, sizeof(out), "cat " TMP "/pid.log " TMP "/pid.out");
	print_message("%s", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_non_null(strstr(out, "calls: 700"));
	assert_non_null(strstr(out, "every watched process exited"));
	assert_int_equal(total(TMP "/pid.folded"), 700);
}

/* Ended by -d while the process goes on calling: the stacks written hold every hit counted. */
static void trace__duration_ends_it__hits_equal_the_stacks(void **state)
{
	bt_test_require_priv();
	char out[8192];
	bt_test_run(NULL, 0, "rm -f " TMP "/dur.out");
	pid_t t = bt_test_spawn("exec " TRACEE " 2000000000 wait > " TMP "/dur.out");
	assert_true(bt_test_wait_for_text(TMP "/dur.out", "ready", t));
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace trace -d 1 -p %d -o " TMP "/dur.folded " TRACEE
		 ":tracee_hit 2> " TMP "/dur.log", (int)t);
	bt_test_run(NULL, 0, "rm -f " TMP "/dur.log");
	pid_t bt = bt_test_spawn(cmd);
	assert_true(bt_test_wait_for_text(TMP "/dur.log", "tracing 1 probe", bt));
	kill(t, SIGUSR1);
	int st;
	waitpid(bt, &st, 0);
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	bt_test_run(out, sizeof(out), "cat " TMP "/dur.log");
	print_message("%s", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_non_null(strstr(out, "duration reached"));
	long n = total(TMP "/dur.folded"), hits = -1, lost = -1;
	assert_true(n > 0);
	/* hits lost to a full ring buffer (a loaded machine) are counted apart */
	const char *at = strstr(out, ":tracee_hit: ");
	assert_non_null(at);
	assert_int_equal(sscanf(at, ":tracee_hit: %ld hits, %ld lost", &hits, &lost), 2);
	assert_int_equal(hits - lost, n);
}

/* BUILDID:FUNCTION: the file is the mapping of that build-id, whatever its path. */
static void trace__build_id__found_among_the_mappings(void **state)
{
	bt_test_require_priv();
	char out[8192], id[128], cmd[512];
	bt_test_run(id, sizeof(id), "LC_ALL=C readelf -nW " TRACEE " | sed -n 's/.*Build ID: \\([0-9a-f]*\\).*/\\1/p'");
	id[strcspn(id, "\n")] = '\0';
	assert_true(strlen(id) == 40);
	bt_test_run(NULL, 0, "rm -f " TMP "/bid.out " TMP "/bid.log");
	pid_t t = bt_test_spawn("exec " TRACEE " 432 wait > " TMP "/bid.out");
	assert_true(bt_test_wait_for_text(TMP "/bid.out", "ready", t));
	/* a build-id the process does not map */
	int rc = bt_test_run(out, sizeof(out), "./buildtrace trace -p %d 00112233445566778899aabbccddeeff00112233:"
			     "tracee_hit 2>&1", (int)t);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "no process given with -p maps a file of build-id 00112233445566778899aabbccddeeff00112233"));
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace trace -p %d -o " TMP "/bid.folded %s:tracee_hit 2> " TMP
		 "/bid.log", (int)t, id);
	pid_t bt = bt_test_spawn(cmd);
	assert_true(bt_test_wait_for_text(TMP "/bid.log", "tracing 1 probe", bt));
	kill(t, SIGUSR1);
	int st;
	waitpid(t, NULL, 0);
	waitpid(bt, &st, 0);
	bt_test_run(out, sizeof(out), "cat " TMP "/bid.log");
	print_message("%s", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(total(TMP "/bid.folded"), 432);
}

static void trace__no_such_function__refused(void **state)
{
	bt_test_require_priv();
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace trace -o " TMP "/none.folded " TRACEE
			     ":no_such_function -- " TRACEE " 1 2>&1");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "no function no_such_function in " TRACEE " (build-id "));
	assert_int_equal(bt_test_run(NULL, 0, "test -e " TMP "/none.folded"), 1);
}

static void trace__address_outside_code__refused(void **state)
{
	bt_test_require_priv();
	char out[4096], addr[64];
	/* the ELF header, and the first byte of .data (from readelf) */
	int rc = bt_test_run(out, sizeof(out), "./buildtrace trace " TRACEE ":0x10 -- " TRACEE " 1 2>&1");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "0x10 is outside .text"));
	bt_test_run(addr, sizeof(addr), "LC_ALL=C readelf -SW " TRACEE " | awk '$2 == \".data\" { print \"0x\" $4 }'");
	addr[strcspn(addr, "\n")] = '\0';
	assert_true(addr[0]);
	rc = bt_test_run(out, sizeof(out), "./buildtrace trace " TRACEE ":%s -- " TRACEE " 1 2>&1", addr);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "is outside .text"));
	/* an address inside .text is taken: tracee_hit's, from nm */
	bt_test_run(addr, sizeof(addr), "nm " TRACEE " | awk '$3 == \"tracee_hit\" { print \"0x\" $1 }'");
	addr[strcspn(addr, "\n")] = '\0';
	rc = bt_test_run(out, sizeof(out), "./buildtrace trace -o " TMP "/addr.folded " TRACEE ":%s -- " TRACEE
			 " 25 2>&1", addr);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_int_equal(total(TMP "/addr.folded"), 25);
}

static void trace__file_without_build_id__refused_unless_asked(void **state)
{
	bt_test_require_priv();
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace trace " NOBID ":tracee_hit -- " NOBID " 5 2>&1");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, NOBID " has no GNU build-id"));
	assert_null(strstr(out, "calls:"));
	rc = bt_test_run(out, sizeof(out), "./buildtrace trace --no-build-id-check -o " TMP "/nobid.folded "
			 NOBID ":tracee_hit -- " NOBID " 5 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "warning: " NOBID " has no GNU build-id"));
	assert_int_equal(total(TMP "/nobid.folded"), 5);
}

static void trace__process_gone__said_so(void **state)
{
	bt_test_require_priv();
	char out[4096];
	pid_t t = bt_test_spawn("exit 0");
	int st;
	waitpid(t, &st, 0);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace trace -p %d " TRACEE ":tracee_hit 2>&1", (int)t);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "no process with pid"));
	/* a process that does not map the file */
	pid_t s = bt_test_spawn("exec sleep 30");
	rc = bt_test_run(out, sizeof(out), "./buildtrace trace -p %d " TRACEE ":tracee_hit 2>&1", (int)s);
	kill(s, SIGKILL);
	waitpid(s, &st, 0);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "no process given with -p maps " TRACEE));
}

/* The script counts its own calls of each function, and prints the counts. Python 3.11 reaches its
 * function__entry marker only while a trace function is set (perf counts the same): the script sets
 * one for its calls. */
static const char py_script[] =
	"import collections, sys\n"
	"calls = collections.Counter()\n"
	"def fib(n):\n"
	"    calls['fib'] += 1\n"
	"    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
	"def leaf():\n"
	"    calls['leaf'] += 1\n"
	"sys.settrace(lambda *args: None)\n"
	"for i in range(77):\n"
	"    leaf()\n"
	"fib(14)\n"
	"sys.settrace(None)\n"
	"for name, n in sorted(calls.items()):\n"
	"    print('calls', name, n)\n"
	"print('lines', fib.__code__.co_firstlineno, leaf.__code__.co_firstlineno)\n";

static void trace__python_sdt__keyed_by_function_name(void **state)
{
	bt_test_require_priv();
	if (access("/usr/bin/python3.11", X_OK) != 0)
		fail_msg("/usr/bin/python3.11 (Debian's python3, with SDT markers) is needed");
	char out[8192];
	FILE *f = fopen(TMP "/calls.py", "w");
	assert_non_null(f);
	fputs(py_script, f);
	fclose(f);
	int rc = bt_test_run(out, sizeof(out), "rm -f " TMP "/py.folded; ./buildtrace trace --key arg2:str -o " TMP
			     "/py.folded sdt:python:function__entry -- /usr/bin/python3 "
			     TMP "/calls.py 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	/* the marker found in the command's own file (python3 leads to python3.11); the script's own
	 * counts, and the marker's: a line per comm and function name */
	assert_non_null(strstr(out, "calls fib 1219"));
	assert_non_null(strstr(out, "calls leaf 77"));
	assert_int_equal(count("^python3;python:function__entry;fib 1219$", TMP "/py.folded"), 1);
	assert_int_equal(count("^python3;python:function__entry;leaf 77$", TMP "/py.folded"), 1);
	/* nothing lost, and the lines hold every hit */
	char hits[64];
	snprintf(hits, sizeof(hits), "function__entry: %ld hits, 0 lost", total(TMP "/py.folded"));
	assert_non_null(strstr(out, hits));
	/* an integer key: the third argument, the line the function starts at (the script says which) */
	rc = bt_test_run(out, sizeof(out), "./buildtrace trace --key arg3 -o " TMP "/pyline.folded "
			 "sdt:python:function__entry -- /usr/bin/python3 " TMP "/calls.py 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	int fib_line = 0, leaf_line = 0;
	const char *l = strstr(out, "lines ");
	assert_non_null(l);
	assert_int_equal(sscanf(l, "lines %d %d", &fib_line, &leaf_line), 2);
	char want[128];
	snprintf(want, sizeof(want), "^python3;python:function__entry;%d 1219$", fib_line);
	assert_int_equal(count(want, TMP "/pyline.folded"), 1);
	snprintf(want, sizeof(want), "^python3;python:function__entry;%d 77$", leaf_line);
	assert_int_equal(count(want, TMP "/pyline.folded"), 1);
}

/* The semaphore of python:function__entry in process pid (python3.11 is not position-independent:
 * its address is the note's). */
static int semaphore(pid_t pid)
{
	char out[64];
	bt_test_run(out, sizeof(out), "a=$(LC_ALL=C readelf -nW /usr/bin/python3.11 | grep -A2 'Name: function__entry$' "
		    "| sed -n 's/.*Semaphore: \\(0x[0-9a-f]*\\).*/\\1/p'); dd if=/proc/%d/mem bs=1 skip=$((a)) count=2 "
		    "2>/dev/null | od -An -tu2", (int)pid);
	return atoi(out);
}

static void trace__sdt_semaphore__raised_while_traced_then_lowered(void **state)
{
	bt_test_require_priv();
	char out[8192], cmd[512];
	bt_test_run(NULL, 0, "rm -f " TMP "/sem.out");
	pid_t py = bt_test_spawn("exec /usr/bin/python3.11 -c \"import time; print('ready', flush=True); "
				 "time.sleep(120)\" > " TMP "/sem.out");
	assert_true(bt_test_wait_for_text(TMP "/sem.out", "ready", py));
	assert_int_equal(semaphore(py), 0);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace trace -p %d -o /dev/null "
		 "sdt:/usr/bin/python3.11:python:function__entry 2> " TMP "/sem.log", (int)py);
	bt_test_run(NULL, 0, "rm -f " TMP "/sem.log");
	pid_t bt = bt_test_spawn(cmd);
	assert_true(bt_test_wait_for_text(TMP "/sem.log", "tracing 1 probe", bt));
	int during = semaphore(py);
	kill(bt, SIGINT);
	int st;
	waitpid(bt, &st, 0);
	int after = semaphore(py);
	kill(py, SIGKILL);
	waitpid(py, NULL, 0);
	bt_test_run(out, sizeof(out), "cat " TMP "/sem.log");
	print_message("%s", out);
	assert_int_equal(during, 1);
	assert_int_equal(after, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void trace__latency__every_call_in_the_histogram(void **state)
{
	bt_test_require_priv();
	char out[8192];
	int rc = bt_test_run(NULL, 0, "./buildtrace trace --latency -o " TMP "/lat.folded " TRACEE
			     ":tracee_hit -- " TRACEE " 200 > " TMP "/lat.log 2>&1");
	bt_test_run(out, sizeof(out), "cat " TMP "/lat.log");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "latency of " TRACEE ":tracee_hit: 200 calls"));
	/* the buckets ("  [FROM, TO)  COUNT |@@@|") add up to the calls */
	char sum[64];
	bt_test_run(sum, sizeof(sum), "sed -n 's/^  \\[.*) *\\([0-9]*\\) |.*/\\1/p' " TMP "/lat.log | "
		    "awk '{ n += $1 } END { print n }'");
	assert_int_equal(atoi(sum), 200);
	assert_int_equal(total(TMP "/lat.folded"), 200);
}

static void trace__bad_command_line__exit_2(void **state)
{
	char out[4096];
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace trace -a 2>&1"), 2);
	assert_non_null(strstr(out, "say what to trace"));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace trace -a nocolon 2>&1"), 2);
	assert_non_null(strstr(out, "invalid probe 'nocolon'"));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace trace " TRACEE ":f 2>&1"), 2);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace trace --key arg0 -a sdt:/x:p:n 2>&1"), 2);
	assert_non_null(strstr(out, "numbered from 1"));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace trace --key arg1 -a /x:f 2>&1"), 2);
	assert_non_null(strstr(out, "no marker"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trace__command__hits_equal_the_program_count),
		cmocka_unit_test(trace__short_command__every_frame_named),
		cmocka_unit_test(trace__all__with_a_command),
		cmocka_unit_test(trace__pid__found_through_map_files),
		cmocka_unit_test(trace__duration_ends_it__hits_equal_the_stacks),
		cmocka_unit_test(trace__build_id__found_among_the_mappings),
		cmocka_unit_test(trace__alias_in_dynsym__found),
		cmocka_unit_test(trace__no_such_function__refused),
		cmocka_unit_test(trace__address_outside_code__refused),
		cmocka_unit_test(trace__file_without_build_id__refused_unless_asked),
		cmocka_unit_test(trace__process_gone__said_so),
		cmocka_unit_test(trace__python_sdt__keyed_by_function_name),
		cmocka_unit_test(trace__sdt_semaphore__raised_while_traced_then_lowered),
		cmocka_unit_test(trace__latency__every_call_in_the_histogram),
		cmocka_unit_test(trace__bad_command_line__exit_2),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
