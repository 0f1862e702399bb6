/* test_symbolize_llvm.c - `buildtrace symbolize` names addresses in a large C++ library at least as
 * often, and the same way, as llvm-symbolizer does (the oracle). Needs no privileges; it lives with
 * the end-to-end tests because it runs the built ./buildtrace. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolize__libllvm_random_addresses__agrees_with_llvm_symbolizer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
