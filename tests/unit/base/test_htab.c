/* test_htab.c - the hash table against a plain array as the oracle, through growth and deletion. */
#include "testutil.h"
#include "base/htab.h"

#include <errno.h>
#include <stdlib.h>

static bool eq_u64(void *ctx, uint64_t val, const void *key)
{
	return val == *(const uint64_t *)key;
}

/* A weak hash makes long probe runs, which is where deletion bugs hide. */
static uint32_t weak_hash(uint64_t k)
{
	return (uint32_t)(k % 7);
}

static void htab__random_ops__match_reference(void **state)
{
	struct bt_htab h;
	bt_htab_init(&h);
	enum { N = 3000 };
	static bool present[N];
	srand(42);
	for (int round = 0; round < 20000; round++) {
		uint64_t k = (uint64_t)(rand() % N);
		/* some keys collide on purpose, and a key always hashes the same */
		uint32_t hh = (k % 3) ? weak_hash(k) : bt_hash_u64(k);
		if (rand() % 3) {
			if (!present[k]) {
				assert_int_equal(bt_htab_insert(&h, hh, k), 0);
				present[k] = true;
			}
		} else {
			int r = bt_htab_remove(&h, hh, eq_u64, NULL, &k);
			assert_int_equal(r, present[k] ? 0 : -ENOENT);
			present[k] = false;
		}
	}
	size_t count = 0;
	for (uint64_t k = 0; k < N; k++) {
		uint32_t hh = (k % 3) ? weak_hash(k) : bt_hash_u64(k);
		uint64_t *v = bt_htab_find(&h, hh, eq_u64, NULL, &k);
		if (present[k]) {
			assert_non_null(v);
			assert_int_equal(*v, k);
			count++;
		} else {
			assert_null(v);
		}
	}
	assert_int_equal(h.count, count);
	bt_htab_free(&h);
}

static void htab__empty__finds_nothing(void **state)
{
	struct bt_htab h;
	bt_htab_init(&h);
	uint64_t k = 5;
	assert_null(bt_htab_find(&h, 1, eq_u64, NULL, &k));
	assert_int_equal(bt_htab_remove(&h, 1, eq_u64, NULL, &k), -ENOENT);
	bt_htab_free(&h);
}

static void hash_bytes__differs_by_seed_and_content(void **state)
{
	assert_int_not_equal(bt_hash_bytes("abc", 3, 0), bt_hash_bytes("abd", 3, 0));
	assert_int_not_equal(bt_hash_bytes("abc", 3, 0), bt_hash_bytes("abc", 3, 1));
	assert_int_equal(bt_hash_bytes("abc", 3, 7), bt_hash_bytes("abc", 3, 7));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(htab__random_ops__match_reference),
		cmocka_unit_test(htab__empty__finds_nothing),
		cmocka_unit_test(hash_bytes__differs_by_seed_and_content),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
