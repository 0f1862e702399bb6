/* test_cli.c - strict parsing of what users type. */
#include "testutil.h"
#include "cmd/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static void cli__pid_list__parsed(void **state)
{
	int *p;
	size_t n;
	assert_int_equal(bt_cli_parse_pids("12,345,6", &p, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(p[0], 12);
	assert_int_equal(p[1], 345);
	assert_int_equal(p[2], 6);
	free(p);
}

static void cli__bad_pid_lists__rejected(void **state)
{
	const char *bad[] = { "", "abc", "12,", ",12", "1,,2", "-5", "0", "12x", " 12", "1.5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int *p = NULL;
		size_t n = 99;
		assert_true(bt_cli_parse_pids(bad[i], &p, &n) < 0);
		assert_null(p);
		assert_int_equal(n, 0);
	}
	int *p;
	size_t n;
	assert_int_equal(bt_cli_parse_pids("99999999999", &p, &n), -ERANGE);
}

static void cli__uint_range__enforced(void **state)
{
	unsigned v;
	assert_int_equal(bt_cli_parse_uint("99", 1, 1000, &v), 0);
	assert_int_equal(v, 99);
	assert_int_equal(bt_cli_parse_uint("0", 1, 1000, &v), -EINVAL);
	assert_int_equal(bt_cli_parse_uint("1001", 1, 1000, &v), -EINVAL);
	assert_int_equal(bt_cli_parse_uint("-1", 1, 1000, &v), -EINVAL);
	assert_int_equal(bt_cli_parse_uint("5k", 1, 1000, &v), -EINVAL);
	assert_int_equal(bt_cli_parse_uint("99999999999999999999", 1, 1000, &v), -EINVAL);
}

static void cli__seconds_and_sizes(void **state)
{
	double d;
	size_t s;
	assert_int_equal(bt_cli_parse_seconds("2.5", &d), 0);
	assert_true(d > 2.49 && d < 2.51);
	assert_int_equal(bt_cli_parse_seconds("0", &d), -EINVAL);
	assert_int_equal(bt_cli_parse_seconds("nan", &d), -EINVAL);
	assert_int_equal(bt_cli_parse_seconds("inf", &d), -EINVAL);
	assert_int_equal(bt_cli_parse_seconds("3s", &d), -EINVAL);
	assert_int_equal(bt_cli_parse_size("16M", &s), 0);
	assert_int_equal(s, 16u << 20);
	assert_int_equal(bt_cli_parse_size("4k", &s), 0);
	assert_int_equal(s, 4096);
	assert_int_equal(bt_cli_parse_size("1T", &s), -EINVAL);
}

static void cli__pid_exists__self_and_nonexistent(void **state)
{
	assert_true(bt_cli_pid_exists(getpid()));
	assert_false(bt_cli_pid_exists(0));
	assert_false(bt_cli_pid_exists(-1));
	/* pid_max bounds real pids; one above it never exists */
	assert_false(bt_cli_pid_exists(4194305 + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cli__pid_list__parsed),
		cmocka_unit_test(cli__bad_pid_lists__rejected),
		cmocka_unit_test(cli__uint_range__enforced),
		cmocka_unit_test(cli__seconds_and_sizes),
		cmocka_unit_test(cli__pid_exists__self_and_nonexistent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
