/* test_browser.c - the flame graph SVG in a real browser: ./buildtrace report turns known folded
 * stacks into a flame graph, which tests/browser/run.sh opens in headless Chromium to check that it
 * renders where the stacks say, and that clicking a frame zooms into it. Skipped (with the reason)
 * when Chromium is missing, unless CI=true or BT_BROWSER_TESTS=1, which install it and must run. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#define T "build/tests/tmp-browser"

/* Names that need escaping in XML, kernel and unnamed frames, a deep and a shallow stack. */
static const char folded[] =
	"app;main;parse_args 5\n"
	"app;main;run;compute;std::vector<int>::push_back 30\n"
	"app;main;run;compute;operator<< 12\n"
	"app;main;run;compute;hash_block 40\n"
	"app;main;run;io;write;entry_SYSCALL_64_[k];do_syscall_64_[k];ksys_write_[k] 15\n"
	"app;main;run;[libfoo.so+0x1a2b] 6\n"
	"app;main;cleanup 2\n"
	"worker;start_thread;worker_loop;a&b \"quoted\" 20\n"
	"worker;start_thread;worker_loop;sleep 1\n";

static void browser__flame_graph__renders_and_zooms_on_click(void **state)
{
	char out[8192];
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " T " && mkdir -p " T), 0);
	FILE *f = fopen(T "/in.folded", "we");
	assert_non_null(f);
	fputs(folded, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace report " T "/in.folded -f svg "
				     "--title 'browser test' -o " T "/flame.svg 2>&1"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "xmllint --noout " T "/flame.svg 2>&1"), 0);
	int rc = bt_test_run(out, sizeof(out), "tests/browser/run.sh " T "/flame.svg " T "/in.folded " T " 2>&1");
	print_message("%s", out);
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "FAIL"));
	assert_non_null(strstr(out, "ok loaded without script errors"));
	assert_non_null(strstr(out, "boxes where the folded stacks put them"));
	assert_non_null(strstr(out, "ok clicking compute zooms"));
	assert_non_null(strstr(out, "ok Reset Zoom restores the full view"));
	assert_non_null(strstr(out, "ok search for compute: Matched: 62.6%"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(browser__flame_graph__renders_and_zooms_on_click),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
