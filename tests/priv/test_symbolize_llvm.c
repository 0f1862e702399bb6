/* test_symbolize_llvm.c - `buildtrace symbolize` names addresses in a large C++ library at least as
 * often, and the same way, as llvm-symbolizer does (the oracle), and names the functions perf names
 * in libc and the test programs as perf does. The first needs no privileges; they live with the
 * end-to-end tests because they run the built ./buildtrace. */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIB "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"
#define TMP "build/tests/tmp-symbolize"

/* Demanglers differ only in spacing ("> >" or ">>"), so names are compared without spaces. */
static void squeeze(char *s)
{
	char *d = s;
	for (; *s; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = '\0';
}

static void symbolize__libllvm_random_addresses__agrees_with_llvm_symbolizer(void **state)
{
	char out[512];
	if (bt_test_run(out, sizeof(out), "test -r " LIB " && command -v llvm-symbolizer") != 0) {
		if (bt_test_in_ci())
			fail_msg("%s or llvm-symbolizer missing", LIB);
		skip();
	}
	/* 5000 addresses spread over .text, from a fixed seed */
	int rc = bt_test_run(out, sizeof(out),
		"mkdir -p " TMP " && readelf -SW " LIB " | awk '$2==\".text\"{print $4, $6}' | "
		"/usr/bin/python3 -c 'import sys,random; a,s=[int(x,16) for x in sys.stdin.read().split()]; "
		"random.seed(7); print(\"\\n\".join(hex(a+random.randrange(s)) for _ in range(5000)))' > " TMP "/addrs && "
		"./buildtrace symbolize --elf " LIB " --no-debuginfod < " TMP "/addrs > " TMP "/bt && "
		"llvm-symbolizer --obj=" LIB " --no-inlines --output-style=GNU < " TMP "/addrs | awk 'NR%%2==1' > " TMP "/llvm");
	assert_int_equal(rc, 0);
	FILE *a = fopen(TMP "/bt", "r"), *b = fopen(TMP "/llvm", "r");
	assert_non_null(a);
	assert_non_null(b);
	char la[16384], lb[16384];
	int n = 0, same = 0, llvm_only = 0, bt_only = 0;
	while (fgets(la, sizeof(la), a) && fgets(lb, sizeof(lb), b)) {
		n++;
		char *name = strchr(la, '\t');
		assert_non_null(name);
		name++;
		char *end = strchr(name, '\t');
		if (end)
			*end = '\0';
		char *plus = strstr(name, "+0x");
		if (plus && !strchr(plus + 3, '+'))
			*plus = '\0';
		lb[strcspn(lb, "\n")] = '\0';
		bool bn = strcmp(name, "??") != 0, ln = strcmp(lb, "??") != 0;
		squeeze(name);
		squeeze(lb);
		if ((bn && ln && !strcmp(name, lb)) || (!bn && !ln))
			same++;  /* the same name, or both finding none (a stripped local function) */
		else if (ln && !bn)
			llvm_only++;
		else if (bn && !ln)
			bt_only++;
	}
	fclose(a);
	fclose(b);
	print_message("%d addresses: %d same, %d named only by llvm-symbolizer, %d only by buildtrace\n", n,
		      same, llvm_only, bt_only);
	assert_int_equal(n, 5000);
	assert_int_equal(llvm_only, 0);
	/* lambdas are spelled differently by the two demanglers; everything else must agree */
	assert_true(same >= n * 99 / 100);
}

/* perf record --call-graph dwarf of cmd, and perfnames.py's comparison for file: "functions N same M". */
static void perf_names(const char *cmd, const char *file, int *functions, int *same)
{
	char out[8192];
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p " TMP " && perf record -q -o " TMP "/names.data --call-graph dwarf -F 999 -- %s "
				     ">/dev/null 2>&1 && perf script -F ip,sym,symoff,dso -i " TMP "/names.data > "
				     TMP "/names.txt 2>/dev/null", cmd), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "tests/tools/perfnames.py " TMP "/names.txt %s ./buildtrace",
				     file), 0);
	print_message("%s", out);
	const char *last = strstr(out, "functions ");
	assert_non_null(last);
	assert_int_equal(sscanf(last, "functions %d same %d", functions, same), 2);
}

/* The functions perf names in libc and in the test programs (its own choice among aliases, read
 * from the same debug symbols; its "(inlined)" lines, named from DWARF, left aside) get the same
 * names from buildtrace, versions aside: __GI___qsort_r, __memmove_avx512_unaligned_erms, cfree
 * (perf: cfree@GLIBC_2.2.5), __libc_start_main (perf: __libc_start_main@@GLIBC_2.34). */
static void symbolize__libc_and_programs__named_as_perf_names_them(void **state)
{
	bt_test_require_priv();
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	int n, same, total = 0, total_same = 0;
	perf_names("build/demo-workload 2", "build/demo-workload", &n, &same);
	assert_true(n >= 5);
	assert_int_equal(same, n);
	perf_names("build/demo-workload 2", libc, &n, &same);
	total += n;
	total_same += same;
	perf_names("build/tests/session/nofp 2", "build/tests/session/nofp", &n, &same);
	assert_true(n >= 5);
	assert_int_equal(same, n);
	perf_names("/usr/bin/python3 -c \"import json, zlib, re; d = [{'a': i, 'b': str(i) * 5} for i in range(20000)]; "
		   "[(json.loads(json.dumps(d)), zlib.compress(json.dumps(d).encode()), re.findall('[0-9]+', json.dumps(d)[:100000])) "
		   "for k in range(8)]\"", libc, &n, &same);
	total += n;
	total_same += same;
	print_message("libc: %d of %d functions named as perf names them\n", total_same, total);
	/* how many distinct libc functions the samples land in varies (9 to 12 seen): enough that
	 * the comparison means something */
	assert_true(total >= 5);
	assert_int_equal(total_same, total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolize__libllvm_random_addresses__agrees_with_llvm_symbolizer),
		cmocka_unit_test(symbolize__libc_and_programs__named_as_perf_names_them),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
