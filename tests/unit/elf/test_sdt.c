/* test_sdt.c - SDT argument specs parsed into registers, memory and constants, forms read at no
 * fixed place refused; the markers of Debian's python3 read as readelf -n lists them. */
#include "testutil.h"
#include "elf/elffile.h"
#include "elf/sdt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PYTHON "/usr/bin/python3.11"

static void args__registers_memory_constants__parsed(void **state)
{
	struct bt_sdt_arg a[BT_SDT_MAX_ARGS];
	size_t n;
	assert_int_equal(bt_sdt_parse_args("8@%rbp 8@%r12 -4@%eax", a, BT_SDT_MAX_ARGS, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(a[0].loc, BT_SDT_REG);
	assert_int_equal(a[0].reg, 4);   /* rbp in pt_regs */
	assert_int_equal(a[0].size, 8);
	assert_false(a[0].is_signed);
	assert_int_equal(a[1].reg, 3);   /* r12 */
	assert_int_equal(a[2].reg, 10);  /* eax is rax */
	assert_int_equal(a[2].size, 4);
	assert_true(a[2].is_signed);
	assert_int_equal(bt_sdt_parse_args("-4@112(%rsp) 8@-16(%rbp) 2@(%r15d) 8@$-5", a, BT_SDT_MAX_ARGS, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(a[0].loc, BT_SDT_MEM);
	assert_int_equal(a[0].reg, 19);  /* rsp */
	assert_int_equal(a[0].off, 112);
	assert_int_equal(a[1].off, -16);
	assert_int_equal(a[2].reg, 0);   /* r15 */
	assert_int_equal(a[2].off, 0);
	assert_int_equal(a[3].loc, BT_SDT_CONST);
	assert_int_equal(a[3].off, -5);
	/* an old note without sizes: 8 bytes */
	assert_int_equal(bt_sdt_parse_args("%rdi", a, BT_SDT_MAX_ARGS, &n), 0);
	assert_int_equal(a[0].reg, 14);
	assert_int_equal(a[0].size, 8);
	assert_int_equal(bt_sdt_parse_args("", a, BT_SDT_MAX_ARGS, &n), 0);
	assert_int_equal(n, 0);
}

static void args__no_fixed_place_or_garbage__refused(void **state)
{
	struct bt_sdt_arg a[BT_SDT_MAX_ARGS];
	size_t n;
	assert_int_equal(bt_sdt_parse_args("8@foo(%rip)", a, BT_SDT_MAX_ARGS, &n), -ENOTSUP);
	assert_int_equal(bt_sdt_parse_args("8@8(%rax,%rbx,8)", a, BT_SDT_MAX_ARGS, &n), -ENOTSUP);
	assert_int_equal(bt_sdt_parse_args("8@%fs:8", a, BT_SDT_MAX_ARGS, &n), -ENOTSUP);
	assert_int_equal(bt_sdt_parse_args("3@%rax", a, BT_SDT_MAX_ARGS, &n), -EINVAL);
	assert_int_equal(bt_sdt_parse_args("8@", a, BT_SDT_MAX_ARGS, &n), -EINVAL);
	assert_int_equal(bt_sdt_parse_args("8@16(%rax", a, BT_SDT_MAX_ARGS, &n), -EINVAL);
	assert_int_equal(bt_sdt_parse_args("x@%rax", a, BT_SDT_MAX_ARGS, &n), -EINVAL);
	/* more arguments than a marker has room for */
	assert_int_equal(bt_sdt_parse_args("1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1",
					   a, BT_SDT_MAX_ARGS, &n), -EINVAL);
}

struct collect {
	int n;
	char listing[16384];
};

static int collect(void *ctx, const struct bt_sdt_marker *m)
{
	struct collect *c = ctx;
	size_t len = strlen(c->listing);
	snprintf(c->listing + len, sizeof(c->listing) - len, "%s %s 0x%llx 0x%llx %s\n", m->provider, m->name,
		 (unsigned long long)m->pc, (unsigned long long)m->semaphore, m->args);
	c->n++;
	return 0;
}

static void markers__python3__as_readelf_lists_them(void **state)
{
	if (access(PYTHON, R_OK) != 0)
		skip();
	char want[16384];
	/* readelf -n: Provider, Name, then "Location: 0x.., Base: 0x.., Semaphore: 0x.." and Arguments */
	bt_test_run(want, sizeof(want), "LC_ALL=C readelf -nW " PYTHON " | awk '"
		    "/Provider:/ { p = $0; sub(/.*Provider: */, \"\", p) } /Name:/ { n = $0; sub(/.*Name: */, \"\", n) } "
		    "/Location:/ { l = $2; s = $6; sub(\",\", \"\", l); sub(\"0x0*\", \"0x\", l); sub(\"0x0*\", \"0x\", s); if (s == \"0x\") s = \"0x0\" } "
		    "/Arguments:/ { a = $0; sub(\"^ *Arguments: *\", \"\", a); printf \"%%s %%s %%s %%s %%s\\n\", p, n, l, s, a }'");
	struct bt_elf *e;
	assert_int_equal(bt_elf_open_path(PYTHON, &e), 0);
	struct collect *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	assert_int_equal(bt_sdt_foreach(e, collect, c), 0);
	assert_true(c->n > 0);
	assert_string_equal(c->listing, want);
	struct bt_sdt_marker m;
	assert_int_equal(bt_sdt_find(e, "python", "function__entry", &m), 0);
	assert_true(m.semaphore != 0);
	assert_int_equal(bt_sdt_find(e, "python", "no__such", &m), -ENOENT);
	free(c);
	bt_elf_close(e);
}

static void markers__file_without_notes__none(void **state)
{
	char path[256];
	struct bt_elf *e;
	assert_int_equal(bt_elf_open_path(bt_test_fixture(path, sizeof(path), "fx-sha1"), &e), 0);
	struct collect *c = calloc(1, sizeof(*c));
	assert_int_equal(bt_sdt_foreach(e, collect, c), 0);
	assert_int_equal(c->n, 0);
	struct bt_sdt_marker m;
	assert_int_equal(bt_sdt_find(e, "python", "function__entry", &m), -ENOENT);
	free(c);
	bt_elf_close(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(args__registers_memory_constants__parsed),
		cmocka_unit_test(args__no_fixed_place_or_garbage__refused),
		cmocka_unit_test(markers__python3__as_readelf_lists_them),
		cmocka_unit_test(markers__file_without_notes__none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
