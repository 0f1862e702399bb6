/* test_timeline.c - the per-sample outputs of a live session, end to end through ./buildtrace: a
 * workload with a 300 ms burst in two threads, written as perf script text, a heat map and
 * per-thread folded stacks at once. The perf script text is read by speedscope in headless Chromium
 * (its samples fold to the folded output, and speedscope shows them per thread in time order); the
 * heat map holds the burst where the workload says it was. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T "build/tests/tmp-timeline"
#define BURST "build/tests/progs/burst"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " T " && mkdir -p " T) == 0 ? 0 : -1;
}

/* One session of the burst workload: 3 s of sleep, 300 ms of CPU in each of two threads, 3 s of
 * sleep, in every per-sample format and per-thread folded stacks. */
static void record_burst(void)
{
	if (access(T "/b.perf-script", R_OK) == 0)
		return;
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -F 499 --per-thread -o " T "/b.folded --also-write "
			     "perf-script:" T "/b.perf-script --also-write heatmap:" T "/b.heatmap.svg -- " BURST
			     " 3000 300 3000 " T "/b.times 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
}

static void timeline__perf_script__speedscope_shows_every_thread_in_time_order(void **state)
{
	bt_test_require_priv();
	record_burst();
	char out[8192];
	/* the layout perf script prints: comm pid/tid [cpu] time: period event, then the frames */
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -m1 -E '^burst +[0-9]+/[0-9]+ +\\[[0-9]{3}\\] +[0-9]+\\.[0-9]{6}: "
				     "+2004008 cpu-clock: $' " T "/b.perf-script"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -m1 -P '^\\t {4,15}[0-9a-f]+ burst_b\\+0x[0-9a-f]+ \\(/.*/burst\\)$' "
				     T "/b.perf-script"), 0);
	/* a frame's address is its address in the file: less its offset, its function's, as nm has it */
	char nm[64];
	assert_int_equal(bt_test_run(nm, sizeof(nm), "nm " BURST " | awk '$3 == \"burst_a\" { print $1 }'"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -m1 -P '^\\t +[0-9a-f]+ burst_a\\+0x' " T "/b.perf-script"), 0);
	unsigned long long addr = 0, off = 0;
	assert_int_equal(sscanf(out, " %llx burst_a+0x%llx", &addr, &off), 2);
	assert_int_equal(addr - off, strtoull(nm, NULL, 16));
	int rc = bt_test_run(out, sizeof(out), "tests/browser/run.sh tests/browser/speedscope.cjs " T "/b.perf-script "
			     T "/b.folded " T " 2>&1");
	print_message("%s", out);
	if (rc == 77 && !bt_test_in_ci())
		skip();
	assert_int_equal(rc, 0);
}

/* The burst is where the heat map puts its samples: the cells that meet the moments the workload
 * says its threads burnt CPU hold nearly all of them (the rest: starting the command), and as many
 * as 2 x 300 ms of CPU at 499 Hz give; the page's own script draws the same samples' flame graphs. */
static void timeline__heatmap__burst_in_its_cells_and_ranges_drawn(void **state)
{
	bt_test_require_priv();
	record_burst();
	char times[128], out[8192];
	assert_int_equal(bt_test_run(times, sizeof(times), "tr -d '\\n' < " T "/b.times"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "xmllint --noout " T "/b.heatmap.svg 2>&1"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "tests/outputs/heatmap_cells.py " T "/b.heatmap.svg %s", times), 0);
	unsigned long inside = 0, outside = 0, total = 0;
	assert_int_equal(sscanf(out, "%lu %lu %lu", &inside, &outside, &total), 3);
	print_message("burst %s: %lu samples in its cells, %lu elsewhere, %lu in all\n", times, inside, outside, total);
	assert_int_equal(inside + outside, total);
	assert_true(inside >= 240);          /* 299 expected */
	assert_true(inside >= 9 * total / 10);
	/* the burst began 3 s in: seconds 1 and 2 are empty (the command started in second 0) */
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c '<rect class=\"c\" data-c=\"[12]\"' " T "/b.heatmap.svg"), 1);
	assert_string_equal(out, "0\n");
	int rc = bt_test_run(out, sizeof(out), "tests/browser/run.sh tests/browser/heatmap.cjs " T "/b.heatmap.svg "
			     T "/b.perf-script " T " 2>&1");
	print_message("%s", out);
	if (rc == 77 && !bt_test_in_ci())
		skip();
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timeline__perf_script__speedscope_shows_every_thread_in_time_order),
		cmocka_unit_test(timeline__heatmap__burst_in_its_cells_and_ranges_drawn),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
