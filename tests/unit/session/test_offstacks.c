/* test_offstacks.c - the off-CPU stacks by kernel key: kept with their own copy of their frames,
 * replaced when given again, found after many others came and went, and dropped only when two
 * epochs passed without them being given or used. */
#include "testutil.h"
#include "session/offstacks.h"

#include <stdlib.h>
#include <string.h>

static struct bt_offstack stack_of(uint64_t key, struct bt_offframe *fr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		fr[i] = (struct bt_offframe){ .addr = key * 100 + i, .file_id = (uint32_t)key, .kind = 0 };
	struct bt_offstack st = { .key = key, .frames = fr, .n = n, .pid = (uint32_t)key };
	strcpy(st.comm, "app");
	return st;
}

static void offstacks__put_get__frames_copied_and_replaced(void **state)
{
	struct bt_offstacks t;
	bt_offstacks_init(&t);
	struct bt_offframe fr[4];
	struct bt_offstack st = stack_of(77, fr, 3);
	assert_int_equal(bt_offstacks_put(&t, &st), 0);
	memset(fr, 0xff, sizeof(fr));   /* the caller's frames are its own again */
	const struct bt_offstack *got = bt_offstacks_get(&t, 77);
	assert_non_null(got);
	assert_int_equal(got->n, 3);
	assert_int_equal(got->frames[2].addr, 7702);
	assert_string_equal(got->comm, "app");
	assert_null(bt_offstacks_get(&t, 78));
	st = stack_of(77, fr, 1);   /* the kernel wrote the key's stack again */
	assert_int_equal(bt_offstacks_put(&t, &st), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(bt_offstacks_get(&t, 77)->n, 1);
	st = stack_of(5, fr, 0);    /* a stack may have no frames */
	assert_int_equal(bt_offstacks_put(&t, &st), 0);
	assert_int_equal(bt_offstacks_get(&t, 5)->n, 0);
	bt_offstacks_free(&t);
}

/* Given in epoch 0: kept through the next epoch, dropped at the end of the one after unless used. */
static void offstacks__epochs__unused_dropped_after_two(void **state)
{
	struct bt_offstacks t;
	bt_offstacks_init(&t);
	struct bt_offframe fr[2];
	for (uint64_t k = 100; k < 104; k++) {
		struct bt_offstack st = stack_of(k, fr, 2);
		assert_int_equal(bt_offstacks_put(&t, &st), 0);
	}
	assert_int_equal(bt_offstacks_next_epoch(&t), 0);
	assert_non_null(bt_offstacks_get(&t, 101));   /* used in epoch 1 */
	assert_int_equal(bt_offstacks_next_epoch(&t), 0);
	struct bt_offstack st = stack_of(104, fr, 1);  /* given in epoch 2 */
	assert_int_equal(bt_offstacks_put(&t, &st), 0);
	assert_int_equal(bt_offstacks_next_epoch(&t), 3);  /* 100, 102, 103 */
	assert_null(bt_offstacks_get(&t, 100));
	assert_null(bt_offstacks_get(&t, 102));
	assert_non_null(bt_offstacks_get(&t, 101));
	assert_non_null(bt_offstacks_get(&t, 104));   /* both used now, in epoch 3 */
	assert_int_equal(bt_offstacks_next_epoch(&t), 0);
	assert_int_equal(bt_offstacks_next_epoch(&t), 0);
	assert_int_equal(bt_offstacks_next_epoch(&t), 2);
	assert_int_equal(t.n, 0);
	bt_offstacks_free(&t);
}

/* Many stacks, most dropped: the ones kept are still found by their keys, with their own frames
 * (a dropped stack's place is taken by the last one, whose entry moves with it). */
static void offstacks__many_dropped__the_rest_found(void **state)
{
	struct bt_offstacks t;
	bt_offstacks_init(&t);
	struct bt_offframe fr[3];
	for (uint64_t k = 1; k <= 5000; k++) {
		struct bt_offstack st = stack_of(k, fr, (uint32_t)(k % 3));
		assert_int_equal(bt_offstacks_put(&t, &st), 0);
	}
	bt_offstacks_next_epoch(&t);
	for (uint64_t k = 7; k <= 5000; k += 7)
		assert_non_null(bt_offstacks_get(&t, k));
	bt_offstacks_next_epoch(&t);
	assert_int_equal(bt_offstacks_next_epoch(&t), 5000 - 5000 / 7);
	assert_int_equal(t.n, 5000 / 7);
	for (uint64_t k = 1; k <= 5000; k++) {
		const struct bt_offstack *s = bt_offstacks_get(&t, k);
		if (k % 7) {
			assert_null(s);
			continue;
		}
		assert_non_null(s);
		assert_int_equal(s->key, k);
		assert_int_equal(s->n, k % 3);
		if (s->n)
			assert_int_equal(s->frames[s->n - 1].addr, k * 100 + s->n - 1);
	}
	bt_offstacks_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(offstacks__put_get__frames_copied_and_replaced),
		cmocka_unit_test(offstacks__epochs__unused_dropped_after_two),
		cmocka_unit_test(offstacks__many_dropped__the_rest_found),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
