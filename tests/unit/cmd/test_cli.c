/* test_cli.c - strict parsing of what users type. */
#include "testutil.h"
#include "cmd/cli/cli.h"

#include <errno.h>
#include <stdio.h>
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

static void cli__durations__units_and_plain_seconds(void **state)
{
	double d;
	assert_int_equal(bt_cli_parse_duration("500ms", &d), 0);
	assert_true(d > 0.499 && d < 0.501);
	assert_int_equal(bt_cli_parse_duration("10s", &d), 0);
	assert_true(d > 9.99 && d < 10.01);
	assert_int_equal(bt_cli_parse_duration("2m", &d), 0);
	assert_true(d > 119.9 && d < 120.1);
	assert_int_equal(bt_cli_parse_duration("1h", &d), 0);
	assert_true(d > 3599 && d < 3601);
	assert_int_equal(bt_cli_parse_duration("3", &d), 0);
	assert_true(d > 2.99 && d < 3.01);
	assert_int_equal(bt_cli_parse_duration("1.5s", &d), 0);
	assert_true(d > 1.49 && d < 1.51);
	assert_int_equal(bt_cli_parse_duration(".5", &d), 0);
	assert_true(d > 0.49 && d < 0.51);
	const char *bad[] = { "", "s", "0", "0ms", "-1", "-1s", "3x", "3 s", "3sec", "10S", "nan", "inf",
			      "1e30h", "ms", " 3", "3ms5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = -7;
		assert_int_equal(bt_cli_parse_duration(bad[i], &d), -EINVAL);
		assert_true(d == -7);
	}
}

static void cli__cpu_lists__parsed(void **state)
{
	bool set[16] = { false };
	assert_int_equal(bt_cli_parse_cpus("0-3,6", set, 16), 5);
	for (int c = 0; c < 16; c++)
		assert_int_equal(set[c], c <= 3 || c == 6);
	/* added to what is set: only the new ones count */
	assert_int_equal(bt_cli_parse_cpus("6,15", set, 16), 1);
	assert_true(set[15]);
	assert_int_equal(bt_cli_parse_cpus("16", set, 16), -ERANGE);
	assert_int_equal(bt_cli_parse_cpus("1-16", set, 16), -ERANGE);
	const char *bad[] = { "", "a", "1-", "-1", "3-1", "1,", ",1", "1,,2", "1 2", "0x1", "1-2-3" };
	bool none[16] = { false };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(bt_cli_parse_cpus(bad[i], none, 16), -EINVAL);
		for (int c = 0; c < 16; c++)
			assert_false(none[c]);
	}
}

static void cli__tid__its_process(void **state)
{
	assert_int_equal(bt_cli_tid_tgid("", getpid()), getpid());
	assert_int_equal(bt_cli_tid_tgid("", 4194305 + 1), -ESRCH);
	assert_int_equal(bt_cli_tid_tgid("", 0), -ESRCH);
	/* a /proc of its own: a thread 77 of process 42 */
	char root[] = "/tmp/bt-cli-XXXXXX", cmd[256], out[64];
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/77 && printf 'Name:\\tx\\nTgid:\\t42\\nPid:\\t77\\n' "
		 "> %s/proc/77/status", root, root);
	assert_int_equal(bt_test_run(out, sizeof(out), "%s", cmd), 0);
	assert_int_equal(bt_cli_tid_tgid(root, 77), 42);
	bt_test_run(out, sizeof(out), "rm -rf %s", root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cli__pid_list__parsed),
		cmocka_unit_test(cli__bad_pid_lists__rejected),
		cmocka_unit_test(cli__uint_range__enforced),
		cmocka_unit_test(cli__seconds_and_sizes),
		cmocka_unit_test(cli__pid_exists__self_and_nonexistent),
		cmocka_unit_test(cli__durations__units_and_plain_seconds),
		cmocka_unit_test(cli__cpu_lists__parsed),
		cmocka_unit_test(cli__tid__its_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
