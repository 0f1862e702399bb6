/* test_kdyn.c - kernel code that comes and goes: names by range, replaced where new code overlaps,
 * kept after the code went away until something takes its place, and bounded in number. */
#include "testutil.h"
#include "kernel/kdyn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void kdyn__ranges__named_with_offsets(void **state)
{
	struct bt_kdyn t;
	bt_kdyn_init(&t);
	assert_false(t.announced);
	assert_int_equal(bt_kdyn_add(&t, 0x3000, 0x100, "bpf_prog_c"), 0);
	assert_int_equal(bt_kdyn_add(&t, 0x1000, 0x100, "bpf_prog_a"), 0);
	assert_int_equal(bt_kdyn_add(&t, 0x2000, 0x80, "bpf_prog_b"), 0);
	assert_true(t.announced);
	uint64_t off;
	assert_string_equal(bt_kdyn_lookup(&t, 0x1000, &off), "bpf_prog_a");
	assert_int_equal(off, 0);
	assert_string_equal(bt_kdyn_lookup(&t, 0x207f, &off), "bpf_prog_b");
	assert_int_equal(off, 0x7f);
	assert_null(bt_kdyn_lookup(&t, 0x2080, &off));
	assert_null(bt_kdyn_lookup(&t, 0xfff, &off));
	assert_string_equal(bt_kdyn_lookup(&t, 0x30ff, &off), "bpf_prog_c");
	assert_null(bt_kdyn_lookup(&t, 0x3100, &off));
	assert_int_equal(bt_kdyn_add(&t, 0x5000, 0, "empty"), -EINVAL);
	assert_int_equal(bt_kdyn_add(&t, UINT64_MAX - 1, 0x10, "wraps"), -EINVAL);
	bt_kdyn_free(&t);
}

static void kdyn__gone_then_replaced__old_name_until_overlapped(void **state)
{
	struct bt_kdyn t;
	bt_kdyn_init(&t);
	assert_int_equal(bt_kdyn_add(&t, 0x1000, 0x100, "old"), 0);
	bt_kdyn_remove(&t, 0x1000);
	uint64_t off;
	assert_string_equal(bt_kdyn_lookup(&t, 0x1010, &off), "old");
	/* new code straddling the old range's end takes its place whole */
	assert_int_equal(bt_kdyn_add(&t, 0x1080, 0x100, "new"), 0);
	assert_null(bt_kdyn_lookup(&t, 0x1010, &off));
	assert_string_equal(bt_kdyn_lookup(&t, 0x1080, &off), "new");
	assert_int_equal(t.n, 1);
	assert_int_equal(t.removed, 1);
	/* removing an address no code starts at changes nothing */
	bt_kdyn_remove(&t, 0x1090);
	assert_false(t.v[0].gone);
	bt_kdyn_free(&t);
}

static void kdyn__programs_coming_and_going_all_day__bounded(void **state)
{
	struct bt_kdyn t;
	bt_kdyn_init(&t);
	char name[32];
	for (uint64_t i = 0; i < 100000; i++) {
		snprintf(name, sizeof(name), "bpf_prog_%llu", (unsigned long long)i);
		assert_int_equal(bt_kdyn_add(&t, 0x100000 + i * 0x100, 0x80, name), 0);
		bt_kdyn_remove(&t, 0x100000 + i * 0x100);
	}
	assert_true(t.n <= 4096 + 1);
	uint64_t off;
	assert_string_equal(bt_kdyn_lookup(&t, 0x100000 + 99999 * 0x100 + 4, &off), "bpf_prog_99999");
	bt_kdyn_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kdyn__ranges__named_with_offsets),
		cmocka_unit_test(kdyn__gone_then_replaced__old_name_until_overlapped),
		cmocka_unit_test(kdyn__programs_coming_and_going_all_day__bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
