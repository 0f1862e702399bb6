/* test_cmd_report.c - `buildtrace report` run as a command on inputs too large to convert: endless
 * input, a huge sparse file, a small gzip-compressed pprof that expands a thousandfold. Each stops
 * with a message saying the input is too large, inside a memory limit the old readers blew through. */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A virtual memory ceiling for the command: the limits report keeps to fit well inside it. */
#define ULIMIT_KB "716800"

struct fx {
	char dir[64];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bt-cmdreport-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	bt_test_run(NULL, 0, "rm -rf '%s'", f->dir);
	free(f);
	return 0;
}

/* Runs report under the memory ceiling: its exit status, its stderr in out. */
static int report(char *out, size_t len, const char *args)
{
	return bt_test_run(out, len, "ulimit -v " ULIMIT_KB "; ./buildtrace report %s 2>&1 >/dev/null",
			   args);
}

static void cmd_report__endless_input__refused_at_the_cap(void **state)
{
	(void)state;
	char out[512];
	assert_int_equal(report(out, sizeof(out), "/dev/zero"), 1);
	assert_non_null(strstr(out, "/dev/zero: larger than 256 MiB, the most report reads"));
	assert_int_equal(report(out, sizeof(out), "- < /dev/zero"), 1);
	assert_non_null(strstr(out, "-: larger than 256 MiB"));
	/* through a pipe, where the size is not known beforehand */
	assert_int_equal(bt_test_run(out, sizeof(out), "ulimit -v " ULIMIT_KB "; cat /dev/zero | "
				     "./buildtrace report - -f svg 2>&1 >/dev/null"), 1);
	assert_non_null(strstr(out, "larger than 256 MiB"));
}

/* A saved profile holds totals: the formats that show samples one by one are refused, by name. */
static void cmd_report__per_sample_format__refused_with_why(void **state)
{
	struct fx *f = *state;
	char out[512];
	assert_int_equal(bt_test_run(NULL, 0, "printf 'a;b 3\\n' > '%s/x.folded'", f->dir), 0);
	char args[600];
	snprintf(args, sizeof(args), "'%s/x.folded' -f perf-script", f->dir);
	assert_int_equal(report(out, sizeof(out), args), 2);
	assert_non_null(strstr(out, "-f perf-script shows samples one by one"));
	snprintf(args, sizeof(args), "'%s/x.folded' -f heatmap", f->dir);
	assert_int_equal(report(out, sizeof(out), args), 2);
}

static void cmd_report__huge_sparse_file__refused_unread(void **state)
{
	struct fx *f = *state;
	char out[512], args[256];
	assert_int_equal(bt_test_run(NULL, 0, "truncate -s 4G '%s/huge.folded'", f->dir), 0);
	snprintf(args, sizeof(args), "'%s/huge.folded'", f->dir);
	assert_int_equal(report(out, sizeof(out), args), 1);
	assert_non_null(strstr(out, "huge.folded: larger than 256 MiB"));
	/* exactly at the cap is still read: it is zeros, so not folded stacks */
	assert_int_equal(bt_test_run(NULL, 0, "truncate -s 256M '%s/max.folded'", f->dir), 0);
	snprintf(args, sizeof(args), "'%s/max.folded'", f->dir);
	assert_int_equal(report(out, sizeof(out), args), 1);
	assert_non_null(strstr(out, "not a folded stack line"));
}

/* 20 KB of gzip holding ten million empty samples (two bytes each): decoded, each would be a
 * message struct of about 90 bytes, 1.2 GB in all. Refused once it passes the decoding budget. */
static void cmd_report__pprof_bomb__too_large(void **state)
{
	struct fx *f = *state;
	char out[512], args[256];
	assert_int_equal(bt_test_run(NULL, 0, "/usr/bin/python3 -c 'import sys; "
				     "sys.stdout.buffer.write(b\"\\x12\\x00\" * (10 << 20))' | gzip -9 > "
				     "'%s/bomb.pb.gz'", f->dir), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "stat -c %%s '%s/bomb.pb.gz'", f->dir), 0);
	assert_true(atol(out) < 64 * 1024);
	snprintf(args, sizeof(args), "'%s/bomb.pb.gz'", f->dir);
	assert_int_equal(report(out, sizeof(out), args), 1);
	assert_non_null(strstr(out, "bomb.pb.gz: pprof profile too large to convert"));
	/* zeros decompressing past 128 MiB: refused before they are decoded */
	assert_int_equal(bt_test_run(NULL, 0, "head -c 200M /dev/zero | gzip -1 > '%s/zeros.pb.gz'",
				     f->dir), 0);
	snprintf(args, sizeof(args), "'%s/zeros.pb.gz' -f pprof", f->dir);
	assert_int_equal(report(out, sizeof(out), args), 1);
	assert_non_null(strstr(out, "zeros.pb.gz: pprof profile too large to convert"));
}

/* A large real profile still converts under the same ceiling, both ways, to the same stacks. */
static void cmd_report__large_real_profile__converts(void **state)
{
	struct fx *f = *state;
	char out[512], bin[PATH_MAX];
	assert_non_null(realpath("buildtrace", bin));
	/* 60,000 distinct stacks of 30 frames */
	assert_int_equal(bt_test_run(NULL, 0, "/usr/bin/python3 -c '\n"
				     "for i in range(60000):\n"
				     "    print(\"app;\" + \";\".join(\"fn_%%d_%%d\" %% (i %% 97, j) for j in range(29)) "
				     "+ \";leaf_%%d %%d\" %% (i, i %% 7 + 1))' > '%s/in.folded'", f->dir), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "ulimit -v " ULIMIT_KB "; cd '%s' && "
				     "%s report in.folded -f pprof -o in.pb.gz && "
				     "%s report in.pb.gz -o back.folded && "
				     "sort in.folded | cmp - back.folded && echo same", f->dir, bin, bin), 0);
	assert_string_equal(out, "same\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(cmd_report__per_sample_format__refused_with_why),
		T(cmd_report__endless_input__refused_at_the_cap),
		T(cmd_report__huge_sparse_file__refused_unread),
		T(cmd_report__pprof_bomb__too_large),
		T(cmd_report__large_real_profile__converts),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
