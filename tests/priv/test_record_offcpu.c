/* test_record_offcpu.c - off-CPU and wall-clock time end to end, as a user runs them: ./buildtrace
 * --off-cpu and --wall -p PID -d 4 against a program whose threads alternate 100 ms of computing
 * with 100 ms blocked, compared with the kernel's own accounting of each thread (its schedstat, read
 * by the thread itself at the start and the end of its life, which the session holds whole) and with
 * perf's sched:sched_switch call graphs, and every format read by its own reader. The checks are
 * tests/tools/offcpu_check.py's; they compare each thread with itself, so a busy machine slows both
 * sides alike. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

#define TMP "build/tests/tmp-offcpu"
#define PROG "build/tests/progs/offcpu"

static void run_check(const char *mode)
{
	static char out[65536];
	bt_test_require_priv();
	int rc = bt_test_run(out, sizeof(out), "tests/tools/offcpu_check.py %s " PROG " ./buildtrace " TMP
			     " 2>&1", mode);
	fputs(out, stdout);   /* whole: print_message keeps 1 KiB of it */
	fflush(stdout);
	assert_int_equal(rc, 0);
}

/* Each blocking stack holds its share of its thread's wall time (within 10 points), each thread's
 * time blocked is the kernel's within 5% (less what the hypervisor stole, which the kernel counts
 * neither as running nor as waiting), its time runnable the kernel's run-queue delay, and the
 * stacks are perf's. */
static void record_offcpu__blocked_threads__match_schedstat_and_perf(void **state)
{
	run_check("off-cpu");
}

/* Samples weighted by their period and off-CPU time add up to each thread's wall time (5%). */
static void record_offcpu__wall__each_thread_totals_its_wall_time(void **state)
{
	run_check("wall");
}

/* Folded text in microseconds, pprof with off_cpu/nanoseconds as go tool pprof reads it, the
 * flame graph titled by the kind, JSON with each stack's kind and time: one session, totals agreeing. */
static void record_offcpu__every_format__knows_the_kind(void **state)
{
	run_check("formats");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record_offcpu__blocked_threads__match_schedstat_and_perf),
		cmocka_unit_test(record_offcpu__wall__each_thread_totals_its_wall_time),
		cmocka_unit_test(record_offcpu__every_format__knows_the_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
