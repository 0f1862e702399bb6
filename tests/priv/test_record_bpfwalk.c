/* test_record_bpfwalk.c - `--call-graph dwarf-bpf`, the user stack walked in the kernel from unwind
 * tables compiled per build-id, against perf --call-graph dwarf on the same process during the
 * same seconds: on a program built without frame pointers whose hot paths run through libc's
 * qsort, its stacks reach _start at least as often as perf's; on a recursion 200 calls deep
 * (about 52 KiB of stack, more frames than the kernel's frame-pointer walk takes), they reach
 * _start where perf's 8 KiB copy cuts every one of them short. Through a signal handler (the
 * trampoline's sigcontext) and a frame whose CFA only rbx knows, as often as perf. The sampling
 * program stays cheap to load: the verifier's instruction count, as the kernel reports it, is
 * bounded (the walk once took it 454,000 instructions and 0.6 s of CPU at every start). */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-record-bpfwalk"
#define PROG "build/tests/session/nofp"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP) == 0 ? 0 : -1;
}

/* Samples of the folded file's lines that match the grep pattern. */
/* Runs "PROG SECONDS MODE" and profiles it with perf --call-graph dwarf and buildtrace (extra
 * options) for the same 4 seconds, into NAME-perf.folded and NAME.folded. */
static void profile_both(const char *mode, const char *name, const char *extra, char *summary, size_t len)
{
	char cmd[512], folded[256], data[256];
	snprintf(cmd, sizeof(cmd), "exec " PROG " 8 %s", mode);
	pid_t w = bt_test_spawn(cmd);
	usleep(300000);
	snprintf(data, sizeof(data), TMP "/%s-perf.data", name);
	snprintf(cmd, sizeof(cmd), "exec perf record -q -e cpu-clock -F 199 --call-graph dwarf -o %s -p %d "
		 "-- sleep 4 >/dev/null 2>&1", data, (int)w);
	pid_t perf = bt_test_spawn(cmd);
	int rc = bt_test_run(summary, len, "./buildtrace -p %d -F 199 -d 4 --call-graph dwarf-bpf %s -o "
			     TMP "/%s.folded 2>&1", (int)w, extra, name);
	waitpid(perf, NULL, 0);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	print_message("%s", summary);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(summary, "call graph dwarf-bpf:"));
	snprintf(folded, sizeof(folded), TMP "/%s-perf.folded", name);
	assert_int_equal(bt_test_perf_fold(data, "--no-inline", folded), 0);
}

static void bpfwalk__nofp_through_libc__complete_as_often_as_perf_dwarf(void **state)
{
	bt_test_require_priv();
	char out[8192];
	profile_both("", "qsort", "", out, sizeof(out));
	const char *leaf = ";cmp ";
	const char *whole = "^nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;run;"
			    "fill_and_sort;sort_block;[^;]*qsort[^;]*;.*cmp ";
	int bt_leaf = bt_test_samples_matching(TMP "/qsort.folded", leaf),
	    bt_whole = bt_test_samples_matching(TMP "/qsort.folded", whole),
	    perf_leaf = bt_test_samples_matching(TMP "/qsort-perf.folded", leaf),
	    perf_whole = bt_test_samples_matching(TMP "/qsort-perf.folded", whole);
	int bt_all = bt_test_samples_matching(TMP "/qsort.folded", "."),
	    bt_start = bt_test_samples_matching(TMP "/qsort.folded", "^nofp;_start;"),
	    perf_all = bt_test_samples_matching(TMP "/qsort-perf.folded", "."),
	    perf_start = bt_test_samples_matching(TMP "/qsort-perf.folded", "^nofp;_start;");
	print_message("comparator samples from _start through qsort: buildtrace %d of %d, perf %d of %d; "
		      "all samples from _start: buildtrace %d of %d, perf %d of %d\n", bt_whole, bt_leaf,
		      perf_whole, perf_leaf, bt_start, bt_all, perf_start, perf_all);
	assert_true(bt_leaf >= 50 && perf_leaf >= 50);
	assert_true(bt_all >= 100 && perf_all >= 100);
	/* the first samples of each file are walked by frame pointer until its table is loaded */
	assert_true((double)bt_whole / bt_leaf >= (double)perf_whole / perf_leaf - 0.03);
	assert_true((double)bt_start / bt_all >= (double)perf_start / perf_all - 0.03);
	assert_true(bt_start >= 0.9 * bt_all);
	/* the frame-pointer function in the middle of code without them is walked through too */
	assert_true(bt_test_samples_matching(TMP "/qsort.folded", "^nofp;_start;.*;main;run;fp_layer;nofp_leaf ") >= 1);
}

static void bpfwalk__recursion_200_deep__complete_where_perf_copy_is_cut_short(void **state)
{
	bt_test_require_priv();
	char out[8192];
	profile_both("deep200", "deep", "", out, sizeof(out));
	/* descend 201 times: _start ... deep_loop, then the recursion, then the leaf */
	char whole[2600];
	int n = snprintf(whole, sizeof(whole), "^nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;"
			 "main;deep_loop;");
	for (int i = 0; i < 201; i++)
		n += snprintf(whole + n, sizeof(whole) - (size_t)n, "descend;");
	snprintf(whole + n, sizeof(whole) - (size_t)n, "nofp_leaf ");
	int bt_leaf = bt_test_samples_matching(TMP "/deep.folded", ";nofp_leaf "),
	    bt_whole = bt_test_samples_matching(TMP "/deep.folded", whole),
	    perf_leaf = bt_test_samples_matching(TMP "/deep-perf.folded", ";nofp_leaf "),
	    perf_whole = bt_test_samples_matching(TMP "/deep-perf.folded", "^nofp;_start;");
	print_message("leaf samples reaching _start through 201 calls: buildtrace %d of %d, perf %d of %d\n",
		      bt_whole, bt_leaf, perf_whole, perf_leaf);
	assert_true(bt_leaf >= 100 && perf_leaf >= 100);
	assert_true(bt_whole >= 0.9 * bt_leaf);
	assert_true(perf_whole <= 0.1 * perf_leaf);
}

/* Of the samples matching pattern in both profiles, the share that matches whole: buildtrace's at
 * least 90% and at least perf's, give or take the noise of a few samples. */
static void as_whole_as_perf(const char *name, const char *pattern, const char *whole)
{
	char bt[256], pf[256];
	snprintf(bt, sizeof(bt), TMP "/%s.folded", name);
	snprintf(pf, sizeof(pf), TMP "/%s-perf.folded", name);
	int bt_all = bt_test_samples_matching(bt, pattern), bt_whole = bt_test_samples_matching(bt, whole),
	    perf_all = bt_test_samples_matching(pf, pattern), perf_whole = bt_test_samples_matching(pf, whole);
	print_message("%s: samples reaching _start: buildtrace %d of %d, perf %d of %d\n", name, bt_whole, bt_all,
		      perf_whole, perf_all);
	assert_true(bt_all >= 20 && perf_all >= 20);
	assert_true(bt_whole >= 0.9 * bt_all);
	assert_true((double)bt_whole / bt_all >= (double)perf_whole / perf_all - 0.03);
}

static void bpfwalk__signal_handler__walked_through_the_sigcontext(void **state)
{
	bt_test_require_priv();
	char out[8192];
	profile_both("signal", "signal", "", out, sizeof(out));
	as_whole_as_perf("signal", ";on_tick;tick_work ",
			 "^nofp;_start;.*;main;signal_loop;.*__restore_rt;on_tick;tick_work ");
}

static void bpfwalk__cfa_in_rbx__walked_from_the_saved_rbx(void **state)
{
	bt_test_require_priv();
	char out[8192];
	profile_both("realign", "realign", "", out, sizeof(out));
	as_whole_as_perf("realign", ";rbx_spin",
			 "^nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;realign_loop;rbx_spin");
}

/* No loop is verified nested in another's states: the walk, its row search and its frame step,
 * and the mapping search are global functions, checked once each, and elf_read's note walks follow
 * its program header walk instead of running inside it. On this kernel the sampling program then
 * takes the verifier 11,600 instructions (of them 2,700 for a walk that stops where a table is
 * missing: the kernel's answer about memory in no known mapping, the stack copied for userspace;
 * about 1,000 for the Python walk of every CPython version) and all the programs 19,200; the
 * nested forms took it 17,200 for the sampling program without those (454,000 before the walk's
 * step was a global function) and 21,600 for elf_read alone. The bounds leave room for other
 * kernels and compilers, not for one more nested loop. */
static void bpfwalk__programs__verified_in_bounded_instructions(void **state)
{
	bt_test_require_priv();
	pid_t w = bt_test_spawn("exec " PROG " 8");
	usleep(200000);
	char out[8192];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -v -p %d -F 199 -d 1 -o " TMP "/insns.folded 2>&1",
			     (int)w);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	const char *at = strstr(out, "the sampling program took the verifier ");
	assert_non_null(at);
	unsigned long insns = strtoul(at + strlen("the sampling program took the verifier "), NULL, 10);
	assert_true(insns > 1000);
	assert_true(insns < 14500);
	unsigned progs = 0, all = 0, sampling = 0;
	at = strstr(out, "buildtrace: BPF programs: ");
	assert_non_null(at);
	assert_int_equal(sscanf(at, "buildtrace: BPF programs: %u loaded, the verifier checked %u instructions "
				"(the sampling program %u)", &progs, &all, &sampling), 3);
	assert_int_equal(sampling, insns);
	assert_true(progs >= 5);
	assert_true(all > insns);
	assert_true(all < 25000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bpfwalk__nofp_through_libc__complete_as_often_as_perf_dwarf),
		cmocka_unit_test(bpfwalk__recursion_200_deep__complete_where_perf_copy_is_cut_short),
		cmocka_unit_test(bpfwalk__signal_handler__walked_through_the_sigcontext),
		cmocka_unit_test(bpfwalk__cfa_in_rbx__walked_from_the_saved_rbx),
		cmocka_unit_test(bpfwalk__programs__verified_in_bounded_instructions),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
