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
	unsigned long inside = 0, outside = 0, total = 0, before = 1;
	assert_int_equal(sscanf(out, "%lu %lu %lu %lu", &inside, &outside, &total, &before), 4);
	print_message("burst %s: %lu samples in its cells, %lu elsewhere, %lu in all\n", times, inside, outside, total);
	assert_int_equal(inside + outside, total);
	assert_true(inside >= 240);          /* 299 expected */
	assert_true(inside >= 9 * total / 10);
	/* while it slept, from one second in until its burst, it had no sample */
	assert_int_equal(before, 0);
	int rc = bt_test_run(out, sizeof(out), "tests/browser/run.sh tests/browser/heatmap.cjs " T "/b.heatmap.svg "
			     T "/b.perf-script " T " 2>&1");
	print_message("%s", out);
	if (rc == 77 && !bt_test_in_ci())
		skip();
	assert_int_equal(rc, 0);
}

/* pprof's own disassembler finds the sampled instructions in the binary: -disasm lists the leaf
 * function's instructions with samples on them, at the addresses objdump gives them; the profile is
 * named after the program, and a system-wide one after none. */
static void timeline__pprof__go_tool_pprof_disassembles_the_leaf(void **state)
{
	bt_test_require_priv();
	static char out[65536];
	assert_int_equal(bt_test_run(out, 4096, "./buildtrace -F 999 -f pprof -o " T "/d.pb.gz -- " BURST " 0 300 0 "
				     T "/d.times 2>&1"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "go tool pprof -top " T "/d.pb.gz 2>&1 | head -n1"), 0);
	assert_string_equal(out, "File: burst\n");
	char lo[32], hi[32];
	assert_int_equal(bt_test_run(lo, sizeof(lo), "nm -S " BURST " | awk '$4 == \"burn\" { print $1 }'"), 0);
	assert_int_equal(bt_test_run(hi, sizeof(hi), "nm -S " BURST " | awk '$4 == \"burn\" { print $2 }'"), 0);
	unsigned long long start = strtoull(lo, NULL, 16), end = start + strtoull(hi, NULL, 16);
	/* objdump's instruction addresses of burn, " 1266 1267 ... " */
	static char insns[8192];
	assert_int_equal(bt_test_run(insns + 1, sizeof(insns) - 2, "objdump -d --no-show-raw-insn " BURST " | awk "
				     "'/<burn>:/ { f = 1; next } /^$/ { f = 0 } f' | cut -d: -f1 | tr -d ' \\t' | tr '\\n' ' '"), 0);
	insns[0] = ' ';
	int rc = bt_test_run(out, sizeof(out), "go tool pprof -disasm=burn " T "/d.pb.gz 2>&1");
	if (rc)
		print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "ROUTINE ======================== burn"));
	/* "FLAT CUM ADDR: INSTRUCTION" per instruction, "." where none */
	unsigned listed = 0, hot = 0, objdump = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char flat[32], cum[32], at[40];
		unsigned long long addr;
		int end_at = 0;
		if (sscanf(line, " %31s %31s %llx%n", flat, cum, &addr, &end_at) != 3 || line[end_at] != ':')
			continue;
		assert_true(addr >= start && addr < end);
		snprintf(at, sizeof(at), " %llx ", addr);
		if (!strstr(insns, at))
			fail_msg("pprof lists %llx, which is no instruction of burn to objdump: %s", addr, insns);
		listed++;
		hot += strcmp(flat, ".") != 0;
	}
	for (char *p = insns; (p = strchr(p + 1, ' ')) && p[1];)
		objdump++;
	print_message("burn [%llx, %llx): %u of objdump's %u instructions listed, %u with samples\n", start, end,
		      listed, objdump, hot);
	assert_true(listed >= 10 && listed + 1 >= objdump);
	assert_true(hot >= 1);
	/* a system-wide profile has no program */
	assert_int_equal(bt_test_run(out, 4096, "./buildtrace -a -F 49 -d 1 -f pprof -o " T "/a.pb.gz 2>&1"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "go tool pprof -top " T "/a.pb.gz 2>&1 | grep -c '^File:'"), 1);
	assert_string_equal(out, "0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timeline__perf_script__speedscope_shows_every_thread_in_time_order),
		cmocka_unit_test(timeline__heatmap__burst_in_its_cells_and_ranges_drawn),
		cmocka_unit_test(timeline__pprof__go_tool_pprof_disassembles_the_leaf),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
