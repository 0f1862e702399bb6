/* test_perfscript.c - the perf script writer on a session built by hand: perf's layout line by line
 * (event line, frame lines innermost first with their addresses in the file, symbol offsets and
 * files), samples in the order of the log, hostile names escaped, no log refused. */
#include "outputs_session.h"
#include "output/perfscript.h"

#include <errno.h>

static char *write_ps(struct os_fixture *x, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct bt_perfscript_opts o = { .period_ns = 10101010, .time_ns = 1700000000123456789LL,
					.mono_ns = 5000000000ULL, .duration_ns = 2000000000LL };
	*err = bt_perfscript_write(&x->s, &o, f);
	fclose(f);
	return buf;
}

static void log_stack(struct os_fixture *x, uint32_t stack, uint64_t t, uint32_t pid, uint32_t cpu)
{
	struct bt_sample_rec r = { .time_ns = t, .stack = stack, .pid = pid, .tid = pid + 1, .cpu = cpu };
	assert_int_equal(bt_samplelog_add(x->s.log, &r), 0);
}

static void perfscript__session__perf_layout_in_time_order(void **state)
{
	struct os_fixture *x = os_setup(false);
	int err;
	free(write_ps(x, &err));
	assert_int_equal(err, -EOPNOTSUPP);  /* no log kept */
	x->s.log = malloc(sizeof(*x->s.log));
	assert_int_equal(bt_samplelog_init(x->s.log, OS_TMP, 0), 0);
	/* stack 2 is main <- fxl_exported <- do_syscall_64 of prog; stack 0 main <- fx_static_helper */
	log_stack(x, 2, 5200000000ULL, 100, 1);
	log_stack(x, 0, 5100000000ULL, 101, 0);   /* earlier: written first */
	char *out = write_ps(x, &err);
	assert_int_equal(err, 0);
	assert_true(!strncmp(out, "# ========\n# captured on    : ", strlen("# ========\n# captured on    : ")));
	assert_non_null(strstr(out, "\n# session start : 5.000000 (CLOCK_MONOTONIC"));
	char *body = strstr(out, "# ========\n#\n");
	assert_non_null(body);
	body += strlen("# ========\n#\n");
	char nm_main[32], nm_helper[32], nm_lib[32];
	bt_test_run(nm_main, sizeof(nm_main), "nm " OS_PROG " | awk '$3 == \"main\" { printf \"%%s\", $1 }'");
	bt_test_run(nm_helper, sizeof(nm_helper), "nm " OS_PROG " | awk '$3 == \"fx_static_helper\" { printf \"%%s\", $1 }'");
	bt_test_run(nm_lib, sizeof(nm_lib), "nm " OS_LIB " | awk '$3 == \"fxl_exported\" { printf \"%%s\", $1 }'");
	static char want[4 * 4096 + 2048];
	snprintf(want, sizeof(want),
		 "prog   101/102   [000]     5.100000:   10101010 cpu-clock: \n"
		 "\t%16llx fx_static_helper+0x2 (%s)\n"
		 "\t%16llx main+0x1 (%s)\n"
		 "\n"
		 "prog   100/101   [001]     5.200000:   10101010 cpu-clock: \n"
		 "\t%16llx " OS_KSYM_NAME "+0x10 ([kernel.kallsyms])\n"
		 "\t%16llx fxl_exported+0x1 (%s)\n"
		 "\t%16llx main+0x1 (%s)\n"
		 "\n",
		 strtoull(nm_helper, NULL, 16) + 2, x->prog, strtoull(nm_main, NULL, 16) + 1, x->prog,
		 (unsigned long long)OS_KSYM_ADDR + 0x10, strtoull(nm_lib, NULL, 16) + 1, x->lib,
		 strtoull(nm_main, NULL, 16) + 1, x->prog);
	assert_string_equal(body, want);
	free(out);
	os_teardown(x);
}

/* Names and comms are a profiled program's to choose: a newline or escape sequence in them is
 * written as \xHH, so no record can end early or inject one of its own. */
static void perfscript__hostile_names__control_characters_escaped(void **state)
{
	struct os_fixture *x = os_setup(false);
	x->s.log = malloc(sizeof(*x->s.log));
	assert_int_equal(bt_samplelog_init(x->s.log, OS_TMP, 0), 0);
	int64_t evil = bt_profile_named_loc(&x->s.prof, BT_LOC_USER, "f\n\tffff fake (x)\x1b[2J", 20);
	assert_true(evil >= 0);
	uint32_t ids[] = { (uint32_t)evil };
	os_add(x, "a\nb 1/1 [000] 9.0: 1 cpu-clock: ", 1, ids, 1, 1);
	log_stack(x, (uint32_t)x->s.prof.nstacks - 1, 6000000000ULL, 7, 0);
	int err;
	char *out = write_ps(x, &err);
	assert_int_equal(err, 0);
	char *body = strstr(out, "# ========\n#\n");
	assert_non_null(body);
	body += strlen("# ========\n#\n");
	assert_string_equal(body, "a\\x0ab 1/1 [000] 9.0: 1 cpu-clock:      7/8     [000]     6.000000:   10101010 "
			    "cpu-clock: \n\t               0 f\\x0a\\x09ffff fake (x)\\x1b[2J ([unknown])\n\n");
	free(out);
	os_teardown(x);
}

int main(void)
{
	(void)os_add_jit;
	(void)os_write_folded;
	(void)os_add_module;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perfscript__session__perf_layout_in_time_order),
		cmocka_unit_test(perfscript__hostile_names__control_characters_escaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
