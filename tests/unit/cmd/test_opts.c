/* test_opts.c - a command's option table: getopt_long's tables made from it parse what it
 * declares, --help prints every option within 80 columns, and messages name options as users
 * write them. */
#include "testutil.h"
#include "cmd/cli/opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_LONG_ONLY = BT_OPT_LONG, O_FLAG };

static const struct bt_opt opts[] = {
	BT_OPT_HEAD("First"),
	{ .kind = BT_OPT_OPERAND, .arg = "-- COMMAND [ARGS...]", .help = "an operand, not an option" },
	{ 'p', "pid", "PID[,PID...]", "these processes", .expects = "a process id list" },
	{ 'g', NULL, NULL, "short only" },
	BT_OPT_HEAD("Second"),
	{ O_LONG_ONLY, "a-rather-long-option-name", "SOMETHING", "a long term: the help goes on the next line, "
	  "and it is long enough to be wrapped more than once at eighty columns, word by word, as here",
	  .def = "7" },
	{ O_FLAG, "flag", NULL, "no value" },
	BT_OPT_END,
};

static void opts__getopt_tables__parse_what_is_declared(void **state)
{
	struct bt_getopt g;
	assert_int_equal(bt_opts_getopt(opts, "+:", &g), 0);
	assert_string_equal(g.shortopts, "+:p:g");
	assert_string_equal(g.longopts[0].name, "pid");
	assert_int_equal(g.longopts[0].has_arg, required_argument);
	assert_int_equal(g.longopts[0].val, 'p');
	assert_string_equal(g.longopts[1].name, "a-rather-long-option-name");
	assert_int_equal(g.longopts[1].val, O_LONG_ONLY);
	assert_string_equal(g.longopts[2].name, "flag");
	assert_int_equal(g.longopts[2].has_arg, no_argument);
	assert_null(g.longopts[3].name);
	char *argv[] = { "x", "--pid", "4", "-g", "--flag", "--a-rather-long-option-name=v", "rest", NULL };
	int seen[4] = { 0 }, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(7, argv, g.shortopts, g.longopts, NULL)) != -1) {
		if (c == 'p' && !strcmp(optarg, "4"))
			seen[0]++;
		else if (c == 'g')
			seen[1]++;
		else if (c == O_FLAG)
			seen[2]++;
		else if (c == O_LONG_ONLY && !strcmp(optarg, "v"))
			seen[3]++;
		else
			fail_msg("unexpected %d", c);
	}
	assert_int_equal(optind, 6);
	for (int i = 0; i < 4; i++)
		assert_int_equal(seen[i], 1);
}

static void opts__too_many__refused(void **state)
{
	struct bt_opt *many = calloc(BT_OPTS_MAX + 2, sizeof(*many));
	for (int i = 0; i <= BT_OPTS_MAX; i++)
		many[i] = (struct bt_opt){ BT_OPT_LONG + i, "x", NULL, "h" };
	struct bt_getopt g;
	assert_int_equal(bt_opts_getopt(many, "", &g), -E2BIG);
	free(many);
}

static void opts__names__as_users_write_them(void **state)
{
	char buf[64], term[128];
	assert_string_equal(bt_opts_name(opts, 'p', buf, sizeof(buf)), "-p");
	assert_string_equal(bt_opts_name(opts, O_FLAG, buf, sizeof(buf)), "--flag");
	assert_string_equal(bt_opts_name(opts, 'z', buf, sizeof(buf)), "?");
	assert_string_equal(bt_opts_find(opts, 'p')->expects, "a process id list");
	assert_null(bt_opts_find(opts, 'z'));
	bt_opts_term(&opts[2], term, sizeof(term));
	assert_string_equal(term, "-p, --pid PID[,PID...]");
	bt_opts_term(&opts[3], term, sizeof(term));
	assert_string_equal(term, "-g");
	bt_opts_term(&opts[6], term, sizeof(term));
	assert_string_equal(term, "    --flag");
	bt_opts_term(&opts[1], term, sizeof(term));
	assert_string_equal(term, "-- COMMAND [ARGS...]");
}

static void opts__usage__every_entry_within_80_columns(void **state)
{
	static const struct bt_cmd_doc doc = {
		.name = "buildtrace x", .summary = "s", .usage = "buildtrace x [options]\nbuildtrace x --other",
		.about = "First paragraph.\n\nSecond paragraph, long enough to be wrapped: " "words words words "
			 "words words words words words words words words words words words words words.",
		.opts = opts,
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	bt_opts_usage(f, &doc);
	fclose(f);
	assert_non_null(strstr(text, "usage: buildtrace x [options]\n       buildtrace x --other\n\n"
				     "First paragraph.\n\nSecond paragraph"));
	assert_non_null(strstr(text, "\nFirst:\n  -- COMMAND [ARGS...]     an operand, not an option\n"));
	assert_non_null(strstr(text, "  -p, --pid PID[,PID...]   these processes\n"));
	assert_non_null(strstr(text, "  -g                       short only\n"));
	assert_non_null(strstr(text, "\n\nSecond:\n      --a-rather-long-option-name SOMETHING\n"
				     "                           a long term"));
	assert_non_null(strstr(text, "as here (default 7)\n"));
	assert_non_null(strstr(text, "      --flag               no value\n"));
	for (char *line = text; *line;) {
		size_t n = strcspn(line, "\n");
		if (n > 80)
			fail_msg("a line of %zu columns: %.*s", n, (int)n, line);
		line += n + (line[n] == '\n');
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opts__getopt_tables__parse_what_is_declared),
		cmocka_unit_test(opts__too_many__refused),
		cmocka_unit_test(opts__names__as_users_write_them),
		cmocka_unit_test(opts__usage__every_entry_within_80_columns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
