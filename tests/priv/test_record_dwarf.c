/* test_record_dwarf.c - `--call-graph dwarf` on a program built without frame pointers, whose hot paths
 * run through libc's qsort into a comparator and through a function built with frame pointers back
 * into code without them: the stacks match perf --call-graph dwarf's for the same process and
 * seconds, and reach the program's entry; the frame-pointer walk, for contrast, does not. Stacks
 * through the vDSO, through a signal handler and through PLT entries are whole too. `dwarf` is the
 * default, the walk in BPF (dwarf-bpf); the copy's size limits are checked with dwarf-copy. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-record-dwarf"
#define PROG "build/tests/session/nofp"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP) == 0 ? 0 : -1;
}

/* The hot functions really have no frame pointer: none of them sets %rbp up. */
static void unwind__fixture__built_without_frame_pointers(void **state)
{
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "objdump -d --no-show-raw-insn " PROG " | awk '"
				     "/^[0-9a-f]+ <(run|fill_and_sort|sort_block|nofp_leaf|cmp)>:/ { f = $2; n++ } "
				     "/^[0-9a-f]+ </ && !/<(run|fill_and_sort|sort_block|nofp_leaf|cmp)>/ { f = \"\" } "
				     "f != \"\" && /mov +%%rsp,%%rbp/ { bad++ } END { print n + 0, bad + 0 }'"), 0);
	assert_string_equal(out, "5 0\n");
	/* and the frame-pointer half does */
	assert_int_equal(bt_test_run(out, sizeof(out), "objdump -d --no-show-raw-insn --disassemble=fp_layer "
				     PROG " | grep -c 'mov  *%%rsp,%%rbp'"), 0);
	assert_int_equal(atoi(out), 1);
}

static void unwind__dwarf__same_full_chains_as_perf_dwarf(void **state)
{
	bt_test_require_priv();
	char out[8192];
	pid_t w = bt_test_spawn("exec " PROG " 12");
	usleep(300000);
	pid_t perf = bt_test_perf_record(w, "dwarf", 5, TMP "/perf.data");
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -F 99 -d 5 --call-graph dwarf -o " TMP
			     "/bt.folded 2>&1", (int)w);
	waitpid(perf, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "call graph dwarf"));   /* -bpf or the copy's "dwarf:" */
	/* Frame-pointer stacks of the same process, for contrast. */
	rc = bt_test_run(NULL, 0, "./buildtrace -p %d -F 99 -d 2 --call-graph fp -o " TMP "/fp.folded 2>/dev/null",
			 (int)w);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	assert_int_equal(rc, 0);
	/* perf without inlined frames: buildtrace names each physical frame once */
	assert_int_equal(bt_test_perf_fold(TMP "/perf.data", "--no-inline", TMP "/perf.folded"), 0);
	rc = bt_test_run(out, sizeof(out), "tests/tools/foldtool.py chain-match " TMP "/bt.folded " TMP
			 "/perf.folded main && "
			 "tests/tools/foldtool.py chain-match " TMP "/fp.folded " TMP "/perf.folded main");
	assert_int_equal(rc, 0);
	double dwarf = atof(out), fp = atof(strchr(out, '\n') + 1);
	print_message("samples whose chain from main perf also shows: dwarf %.3f, frame pointers %.3f\n", dwarf, fp);
	assert_true(dwarf >= 0.8);
	/* Both hot paths, complete: from the program's entry through libc into the comparator, and
	 * through the frame-pointer function back into code without frame pointers. */
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c '^nofp;_start;__libc_start_main[^;]*;"
				     "__libc_start_call_main;main;run;fill_and_sort;sort_block;[^;]*qsort[^;]*;.*cmp ' "
				     TMP "/bt.folded"), 0);
	assert_true(atoi(out) >= 1);
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c '^nofp;_start;.*;main;run;fp_layer;nofp_leaf ' "
				     TMP "/bt.folded"), 0);
	assert_int_equal(atoi(out), 1);
	/* the frame-pointer walk loses most of these chains */
	assert_true(fp < dwarf);
}

/* Profiles "PROG 6 MODE" for 3 s at hz samples per second into folded, with the call graph given
 * (NULL: the default, dwarf), printing buildtrace's summary. */
static void profile_prog(const char *mode, int hz, const char *callgraph, const char *folded)
{
	char cmd[128], out[4096];
	snprintf(cmd, sizeof(cmd), "exec " PROG " 6 %s", mode);
	pid_t w = bt_test_spawn(cmd);
	usleep(300000);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -F %d -d 3 %s%s -o %s 2>&1", (int)w, hz,
			     callgraph ? "--call-graph " : "", callgraph ? callgraph : "", folded);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
}

/* Samples of the folded file's lines that match the grep pattern. */
/* Of the samples matching pattern (more than min_total of them), at least 80% match whole. */
static void mostly_whole(const char *folded, const char *pattern, const char *whole, int min_total,
			 const char *what)
{
	int total = bt_test_samples_matching(folded, pattern), n = bt_test_samples_matching(folded, whole);
	print_message("%d of %d %s\n", n, total, what);
	assert_true(total > min_total);
	assert_true(n >= 0.8 * total);
}

/* A program that lives in clock_gettime: its samples are in the vDSO, which is no file; the
 * unwinder takes the vDSO's call frame information from buildtrace's own copy of the same image. */
static void unwind__dwarf__through_the_vdso(void **state)
{
	bt_test_require_priv();
	/* 199 Hz and at least 20 samples: on a machine loaded 9 times over its CPUs the program got
	 * 49 samples at 99 Hz in 3 s */
	profile_prog("vdso", 199, NULL, TMP "/vdso.folded");
	mostly_whole(TMP "/vdso.folded", ".", "^nofp;_start;.*;main;vdso_loop", 20, "samples reach _start");
}

/* A program whose profiling-timer handler takes a good part of its time: those samples go from
 * the handler through the signal trampoline (named: it is glibc's __restore_rt, reached by no
 * call) into the frame the signal interrupted, and on to _start. */
static void unwind__dwarf__through_a_signal_handler(void **state)
{
	bt_test_require_priv();
	profile_prog("signal", 199, NULL, TMP "/sig.folded");
	mostly_whole(TMP "/sig.folded", ";on_tick;tick_work ",
		     "^nofp;_start;.*;main;signal_loop;.*__restore_rt;on_tick;tick_work ", 20,
		     "samples in the handler reach _start through __restore_rt");
}

/* A program spinning in a PLT entry (rand@plt, its GOT slot pointed at the entry itself): every
 * sample stops there. buildtrace names the entry as perf does and walks through it (its CFA is a
 * DWARF expression) to _start, at least as often as perf --call-graph dwarf does over the same run;
 * no frame is left as an address in a file. */
static void unwind__dwarf__through_plt_entries(void **state)
{
	bt_test_require_priv();
	char out[4096], cmd[512];
	/* "ADDR <plt_loop>:", then "ADDR <rand@plt>:" and its jump "... # SLOT <rand@GLIBC...>" */
	assert_int_equal(bt_test_run(out, sizeof(out), "objdump -d " PROG " | grep -A1 -E '<(plt_loop|rand@plt)>:' "
				     "| grep -oE '^[0-9a-f]+ <(plt_loop|rand@plt)>|# [0-9a-f]+' | tr -d '#<>'"), 0);
	unsigned long loop = 0, plt = 0, slot = 0, v;
	char what[64];
	for (char *line = out, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		*nl = '\0';
		int k = sscanf(line, " %lx %63s", &v, what);
		if (k == 2 && !strcmp(what, "plt_loop"))
			loop = v;
		else if (k == 2 && !strcmp(what, "rand@plt"))
			plt = v;
		else if (k == 1 && plt && !slot)
			slot = v;
	}
	long plt_off = (long)(plt - loop), slot_off = (long)(slot - loop);
	assert_true(loop && plt && slot);
	assert_true(plt_off != 0 && slot_off != 0);
	/* both profilers watch it until it exits, after 4 s of CPU time */
	snprintf(cmd, sizeof(cmd), "exec " PROG " 4 plt %ld %ld", plt_off, slot_off);
	pid_t w = bt_test_spawn(cmd);
	snprintf(cmd, sizeof(cmd), "exec perf record -q -e cpu-clock -F 499 --call-graph dwarf -o " TMP
		 "/plt-perf.data -p %d >/dev/null 2>&1", (int)w);
	pid_t perf = bt_test_spawn(cmd);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -F 499 -o " TMP "/plt.folded 2>&1", (int)w);
	waitpid(w, NULL, 0);
	waitpid(perf, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_perf_fold(TMP "/plt-perf.data", "", TMP "/plt-perf.folded"), 0);
	const char *whole = "^nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;plt_loop;rand@plt";
	int bt_all = bt_test_samples_matching(TMP "/plt.folded", "."),
	    bt_whole = bt_test_samples_matching(TMP "/plt.folded", whole),
	    perf_all = bt_test_samples_matching(TMP "/plt-perf.folded", "."),
	    perf_whole = bt_test_samples_matching(TMP "/plt-perf.folded", whole);
	print_message("samples through rand@plt from _start: buildtrace %d of %d, perf %d of %d\n", bt_whole,
		      bt_all, perf_whole, perf_all);
	assert_true(bt_all >= 200 && perf_all >= 200);
	assert_true(bt_whole >= 0.9 * bt_all);
	/* at least as complete as perf's, give or take the noise of a few samples */
	assert_true((double)bt_whole / bt_all >= (double)perf_whole / perf_all - 0.02);
	/* every frame of a file is named: none is [FILE+0xOFFSET] */
	assert_int_equal(bt_test_samples_matching(TMP "/plt.folded", "\\[[^];]*\\+0x"), 0);
}

/* A program spinning in a function that realigns its stack and keeps its CFA in rbx: the sampler
 * copies rbx (and r12-r15) with the stack, so its samples reach _start as often as perf
 * --call-graph dwarf's of the same seconds. */
static void unwind__dwarf__cfa_in_rbx(void **state)
{
	bt_test_require_priv();
	char out[4096], cmd[256];
	pid_t w = bt_test_spawn("exec " PROG " 8 realign");
	usleep(300000);
	snprintf(cmd, sizeof(cmd), "exec perf record -q -e cpu-clock -F 499 --call-graph dwarf -o " TMP
		 "/rbx-perf.data -p %d -- sleep 3 >/dev/null 2>&1", (int)w);
	pid_t perf = bt_test_spawn(cmd);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -F 499 -d 3 -o " TMP "/rbx.folded 2>&1", (int)w);
	waitpid(perf, NULL, 0);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_perf_fold(TMP "/rbx-perf.data", "", TMP "/rbx-perf.folded"), 0);
	const char *whole = "^nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;realign_loop;rbx_spin";
	int bt_all = bt_test_samples_matching(TMP "/rbx.folded", ";rbx_spin"),
	    bt_whole = bt_test_samples_matching(TMP "/rbx.folded", whole),
	    perf_all = bt_test_samples_matching(TMP "/rbx-perf.folded", ";rbx_spin"),
	    perf_whole = bt_test_samples_matching(TMP "/rbx-perf.folded", whole);
	print_message("samples in rbx_spin reaching _start: buildtrace %d of %d, perf %d of %d\n", bt_whole, bt_all,
		      perf_whole, perf_all);
	/* the ratios are the point; a loaded machine gives the program a fraction of a CPU */
	assert_true(bt_all >= 40 && perf_all >= 40);
	assert_true(bt_whole >= 0.9 * bt_all);
	assert_true((double)bt_whole / bt_all >= (double)perf_whole / perf_all - 0.02);
}

/* A stack of about 28 KiB: with the stack copy's default 8 KiB (dwarf-copy), walks from the leaf end
 * past the copy long before main; dwarf-copy,65536 copies enough for them to reach _start. A size out of
 * range is refused before anything is loaded. */
static void unwind__dwarf_size__deep_stacks_reach_start(void **state)
{
	bt_test_require_priv();
	const char *whole = "^nofp;_start;.*;main;deep_loop;descend;.*;descend;nofp_leaf ";
	/* 199 Hz and more than 20 samples each: at 99 Hz a heavily loaded machine gave 44-48 */
	profile_prog("deep", 199, "dwarf-copy", TMP "/deep8.folded");
	int leaf8 = bt_test_samples_matching(TMP "/deep8.folded", ";nofp_leaf "),
	    whole8 = bt_test_samples_matching(TMP "/deep8.folded", whole);
	profile_prog("deep", 199, "dwarf-copy,65536", TMP "/deep64.folded");
	int leaf64 = bt_test_samples_matching(TMP "/deep64.folded", ";nofp_leaf "),
	    whole64 = bt_test_samples_matching(TMP "/deep64.folded", whole);
	print_message("samples in the leaf reaching _start: 8 KiB copied %d of %d, 64 KiB %d of %d\n",
		      whole8, leaf8, whole64, leaf64);
	assert_true(leaf8 > 20 && leaf64 > 20);
	assert_true(whole8 <= 0.1 * leaf8);
	assert_true(whole64 >= 0.8 * leaf64);
	char out[1024];
	static const char *const bad[] = { "dwarf,100", "dwarf,65544", "dwarf,1001", "dwarf,", "lbr" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace -p 1 -d 1 --call-graph %s 2>&1",
					     bad[i]), 2);
		assert_non_null(strstr(out, "invalid --call-graph"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind__fixture__built_without_frame_pointers),
		cmocka_unit_test(unwind__dwarf__same_full_chains_as_perf_dwarf),
		cmocka_unit_test(unwind__dwarf__through_the_vdso),
		cmocka_unit_test(unwind__dwarf__through_a_signal_handler),
		cmocka_unit_test(unwind__dwarf_size__deep_stacks_reach_start),
		cmocka_unit_test(unwind__dwarf__through_plt_entries),
		cmocka_unit_test(unwind__dwarf__cfa_in_rbx),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
