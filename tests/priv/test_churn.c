/* test_churn.c - what a build machine's churn asks of the default call graph: system-wide, the
 * processes started after the session attached have complete stacks from their first sample
 * (twenty processes that live 50 ms of CPU each: every sample in their hot function reaches _start
 * through main), and a library dlopen'ed again and again has complete stacks in the first samples
 * after each dlopen (2 ms of CPU per dlopen); both built without frame pointers, so that a walk
 * guessed by frame pointer would lose the frames checked. Every sample taken is delivered or counted
 * lost. The walker's compiled tables are kept in the build-id cache: a second session takes every
 * one from there and compiles none; a table spoiled there is refused, compiled again and stored. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-churn"
#define KID "build/tests/session/churnkid"
#define LIB "build/tests/session/libchurn.so"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP) == 0 ? 0 : -1;
}

/* Samples of the folded file's lines that match the grep pattern (extended). */
/* The number after "what" in the summary, e.g. " samples taken" preceded by it. */
static long before(const char *summary, const char *what)
{
	const char *p = strstr(summary, what);
	assert_non_null(p);
	while (p > summary && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return atol(p);
}

/* buildtrace -a until work (a shell command) has run, started once the session samples: the
 * summary into out, the profile into TMP/name.folded. */
static void all_cpus_around(const char *name, const char *work, char *out, size_t len)
{
	char cmd[1024], err[256];
	snprintf(err, sizeof(err), TMP "/%s.err", name);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace -a -F 999 -v --no-live --cache-dir " TMP "/cache -o "
		 TMP "/%s.folded 2>%s", name, err);
	pid_t bt = bt_test_spawn(cmd);
	assert_true(bt_test_wait_for_text(err, "sampling at", bt));
	assert_int_equal(bt_test_run(NULL, 0, "%s", work), 0);
	kill(bt, SIGINT);
	int st;
	assert_int_equal(waitpid(bt, &st, 0), bt);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(bt_test_run(out, len, "grep -e 'samples taken' -e 'call graph dwarf-bpf' %s", err), 0);
	print_message("%s", out);
	/* every sample taken until the end is delivered or counted lost */
	long samples = before(out, " samples, "), lost = before(out, " lost,"), taken = before(out, " samples taken");
	assert_int_equal(samples + lost, taken);
}

static void churn__processes_started_after_attach__complete_from_their_first_sample(void **state)
{
	bt_test_require_priv();
	char out[4096];
	all_cpus_around("start", "for i in $(seq 20); do " KID " burn 50 || exit 1; done", out, sizeof(out));
	long hot = bt_test_samples_matching(TMP "/start.folded", "^churnkid;.*;burn_leaf(;| )");
	long whole = bt_test_samples_matching(TMP "/start.folded",
				      "^churnkid;_start;(.*;)?main;burn_outer;burn_mid;burn_leaf(;| )");
	long copies_lost = before(out, " whose stack copy was lost");
	print_message("burn_leaf: %ld samples, %ld from _start through main (%ld stack copies lost)\n", hot,
		      whole, copies_lost);
	/* 20 x 50 ms of CPU at 999 Hz: about a thousand; at least a third of that, however busy */
	assert_true(hot >= 300);
	assert_true(whole + copies_lost >= hot);
}

static void churn__library_dlopened_again_and_again__complete_in_its_first_samples(void **state)
{
	bt_test_require_priv();
	char out[4096], lib[4096];
	assert_non_null(realpath(LIB, lib));
	char work[4200];
	snprintf(work, sizeof(work), KID " dlopen %s 2 200", lib);
	all_cpus_around("dlopen", work, out, sizeof(out));
	long hot = bt_test_samples_matching(TMP "/dlopen.folded", "^churnkid;.*;lib_leaf(;| )");
	long whole = bt_test_samples_matching(TMP "/dlopen.folded",
				      "^churnkid;_start;(.*;)?main;dl_round;lib_burn;lib_mid;lib_leaf(;| )");
	long copies_lost = before(out, " whose stack copy was lost");
	print_message("lib_leaf: %ld samples, %ld from _start through main (%ld stack copies lost)\n", hot, whole,
		      copies_lost);
	/* 200 x 2 ms of CPU at 999 Hz: about four hundred */
	assert_true(hot >= 120);
	assert_true(whole + copies_lost >= hot);
}

/* The tables of a run of `churnkid burn 200` profiled from its start, in the cache TMP/tc: the
 * summary's "tables:" part into out; every burn_leaf sample complete. */
static void profile_kid(const char *name, char *out, size_t len)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "./buildtrace -F 999 --cache-dir " TMP "/tc -o " TMP "/%s.folded -- " KID
		 " burn 200 2>&1 | grep -o 'tables: [^;]*'", name);
	assert_int_equal(bt_test_run(out, len, "%s", cmd), 0);
	print_message("%s: %s", name, out);
	char folded[128];
	snprintf(folded, sizeof(folded), TMP "/%s.folded", name);
	long hot = bt_test_samples_matching(folded, "^churnkid;.*;burn_leaf(;| )");
	assert_true(hot > 0);
	assert_int_equal(bt_test_samples_matching(folded, "^churnkid;_start;(.*;)?main;burn_outer;burn_mid;burn_leaf(;| )"),
			 hot);
}

static void churn__tables_kept_in_the_cache__used_and_a_spoiled_one_compiled_again(void **state)
{
	bt_test_require_priv();
	char out[1024];
	profile_kid("first", out, sizeof(out));
	long loaded = before(out, " loaded (");
	assert_true(loaded > 0);
	assert_int_equal(before(out, " from the cache"), 0);
	assert_int_equal(before(out, " compiled in"), loaded);
	assert_int_equal(before(out, " stored)"), loaded);
	/* the program's own table beside its entry, under its build-id */
	char table[512];
	assert_int_equal(bt_test_run(table, sizeof(table), "id=$(readelf -n " KID " | sed -n 's/.*Build ID: //p'); "
				     "f=$(readlink -f " TMP "/tc/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-))"
				     "/unwtable; test -f $f && echo -n $f"), 0);
	assert_int_equal(bt_test_run(NULL, 0, "cp %s " TMP "/table.first", table), 0);
	/* every table of the first session taken from the cache, but the vDSO's, which is loaded only
	 * when a sample is in it: new if the first session had none there, not loaded if this one has
	 * none; the program's left as it was */
	profile_kid("second", out, sizeof(out));
	long cached = before(out, " from the cache"), compiled = before(out, " compiled in");
	assert_int_equal(cached + compiled, before(out, " loaded ("));
	assert_true(cached == loaded || cached == loaded - 1);
	assert_int_equal(before(out, " refused from the cache"), 0);
	assert_int_equal(compiled, before(out, " stored)"));
	assert_true(compiled <= 1);
	assert_int_equal(bt_test_run(NULL, 0, "cmp -s %s " TMP "/table.first", table), 0);
	/* one byte of a row changed: refused, compiled again, stored as it was */
	assert_int_equal(bt_test_run(NULL, 0, "size=$(stat -c %%s %s); printf '\\377' | dd of=%s bs=1 "
				     "seek=$((size - 12)) conv=notrunc status=none", table, table), 0);
	assert_int_not_equal(bt_test_run(NULL, 0, "cmp -s %s " TMP "/table.first", table), 0);
	profile_kid("spoiled", out, sizeof(out));
	assert_int_equal(before(out, " refused from the cache"), 1);
	assert_true(before(out, " compiled in") >= 1);
	assert_int_equal(before(out, " compiled in"), before(out, " stored)"));
	assert_int_equal(bt_test_run(NULL, 0, "cmp -s %s " TMP "/table.first", table), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(churn__processes_started_after_attach__complete_from_their_first_sample),
		cmocka_unit_test(churn__library_dlopened_again_and_again__complete_in_its_first_samples),
		cmocka_unit_test(churn__tables_kept_in_the_cache__used_and_a_spoiled_one_compiled_again),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
