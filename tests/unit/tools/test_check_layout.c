/* test_check_layout.c - tools/check-layout.py passes on the tree as it is, and fails, naming the
 * file and the rule, on copies of it with one breach each: an upward include, an include of a
 * layer beside, libbpf outside the loader, a function over 100 lines, a file outside the layer
 * folders, and a README without the layer order; inside cmd/, split into one folder per program:
 * an include from a folder above or beside, from the dispatcher, a file outside the folders. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TMP "build/tests/tmp-layout"

/* Debian's python3 when there is one (the interpreter the README's users have), else PATH's. */
static const char *python(void)
{
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* Runs the check on dir; its exit status, and what it said in out. */
static int check(const char *dir, char *out, size_t len)
{
	return bt_test_run(out, len, "%s tools/check-layout.py --root %s 2>&1", python(), dir);
}

/* A fresh copy of README.md and src/ in TMP, then cmd (a shell command run inside it). */
static void copy_and(const char *cmd)
{
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP " && cp -r README.md src " TMP
				     " && cd " TMP " && %s", cmd), 0);
}

static void layout__tree_as_it_is__passes(void **state)
{
	char out[8192];
	int rc = check(".", out, sizeof(out));
	if (rc)
		print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
}

static void layout__include_from_above__fails_naming_it(void **state)
{
	char out[8192];
	copy_and("sed -i '0,/^#include \"/s//#include \"cmd\\/cli\\/cli.h\"\\n&/' src/elf/symtab.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/elf/symtab.c:"));
	assert_non_null(strstr(out, "includes cmd/cli/cli.h: cmd is above elf"));
}

static void layout__include_from_beside__fails(void **state)
{
	char out[8192];
	copy_and("sed -i '0,/^#include \"/s//#include \"kernel\\/kallsyms.h\"\\n&/' src/symsrc/symsrc.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/symsrc/symsrc.c:"));
	assert_non_null(strstr(out, "kernel is beside symsrc"));
}

static void layout__libbpf_outside_the_loader__fails(void **state)
{
	char out[8192];
	copy_and("sed -i '0,/^#include </s//#include <bpf\\/libbpf.h>\\n&/' src/session/session.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/session/session.c:"));
	assert_non_null(strstr(out, "only the loader (src/capture/) uses libbpf"));
}

static void layout__long_function__fails(void **state)
{
	char out[8192];
	copy_and("{ printf 'static int too_long(void)\\n{\\n'; for i in $(seq 99); do printf '\\tint v%d = %d;\\n' $i $i; done;"
		 " printf '}\\n'; } >> src/base/htab.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/base/htab.c:"));
	assert_non_null(strstr(out, "too_long(void) is 102 lines long (at most 100)"));
}

static void layout__file_outside_the_layers__fails(void **state)
{
	char out[8192];
	copy_and("echo 'int x;' > src/stray.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/stray.c: not in a layer folder"));
}

static void layout__cmd_folder_includes_a_program_above__fails(void **state)
{
	char out[8192];
	copy_and("sed -i '0,/^#include \"/s//#include \"cmd\\/record\\/recordopts.h\"\\n&/' src/cmd/live/live.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/cmd/live/live.c:"));
	assert_non_null(strstr(out, "includes cmd/record/recordopts.h: cmd/record is above cmd/live"));
}

static void layout__cmd_program_includes_another_program__fails(void **state)
{
	char out[8192];
	copy_and("sed -i '0,/^#include \"/s//#include \"cmd\\/agent\\/agentconf.h\"\\n&/' src/cmd/trace/trace.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/cmd/trace/trace.c:"));
	assert_non_null(strstr(out, "cmd/agent is beside cmd/trace"));
}

static void layout__cmd_protocol_code_includes_the_agent__fails(void **state)
{
	char out[8192];
	copy_and("sed -i '0,/^#include \"/s//#include \"cmd\\/agent\\/agentconf.h\"\\n&/' src/cmd/net/push.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "cmd/agent is above cmd/net"));
}

static void layout__cmd_file_outside_its_folders__fails(void **state)
{
	char out[8192];
	copy_and("mkdir -p src/cmd/misc && echo 'int x;' > src/cmd/misc/stray.c && echo 'int y;' > src/cmd/cli/deep.h"
		 " && mkdir -p src/cmd/cli/sub && echo 'int z;' > src/cmd/cli/sub/deeper.c");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/cmd/misc/stray.c: not in a folder of src/cmd/"));
	assert_non_null(strstr(out, "src/cmd/cli/sub/deeper.c: not in a folder of src/cmd/"));
	assert_null(strstr(out, "deep.h"));
}

static void layout__cmd_folder_missing__fails(void **state)
{
	char out[8192];
	copy_and("rm -rf src/cmd/net");
	assert_int_equal(check(TMP, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "src/cmd/net/: a folder of the README with no folder"));
}

static void layout__readme_without_order__exit_2(void **state)
{
	char out[8192];
	copy_and("sed -i '/^    cmd > /d' README.md");
	assert_int_equal(check(TMP, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "no layer order"));
}

static int teardown(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " TMP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layout__tree_as_it_is__passes),
		cmocka_unit_test(layout__include_from_above__fails_naming_it),
		cmocka_unit_test(layout__include_from_beside__fails),
		cmocka_unit_test(layout__libbpf_outside_the_loader__fails),
		cmocka_unit_test(layout__long_function__fails),
		cmocka_unit_test(layout__file_outside_the_layers__fails),
		cmocka_unit_test(layout__cmd_folder_includes_a_program_above__fails),
		cmocka_unit_test(layout__cmd_program_includes_another_program__fails),
		cmocka_unit_test(layout__cmd_protocol_code_includes_the_agent__fails),
		cmocka_unit_test(layout__cmd_file_outside_its_folders__fails),
		cmocka_unit_test(layout__cmd_folder_missing__fails),
		cmocka_unit_test(layout__readme_without_order__exit_2),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
