/* test_proctable.c - address spaces follow exec, fork, mmap, munmap and exit as the kernel reports them. */
#include "testutil.h"
#include "session/proctable.h"

static void map(struct bt_proctable *t, int pid, uint64_t s, uint64_t e, uint64_t off, uint32_t file)
{
	struct bt_mapping m = { .start = s, .end = e, .pgoff = off, .file_id = file };
	assert_int_equal(bt_proctable_map(t, pid, &m), 0);
}

static uint32_t file_at(struct bt_proctable *t, int pid, uint64_t addr)
{
	struct bt_process *p = bt_proctable_find(t, pid);
	const struct bt_mapping *m = p ? bt_process_lookup(p, addr) : NULL;
	return m ? m->file_id : UINT32_MAX;
}

static void proctable__lookup__finds_containing_mapping_only(void **state)
{
	struct bt_proctable t;
	bt_proctable_init(&t);
	map(&t, 10, 0x3000, 0x4000, 0, 2);
	map(&t, 10, 0x1000, 0x2000, 0, 1);
	assert_int_equal(file_at(&t, 10, 0x1000), 1);
	assert_int_equal(file_at(&t, 10, 0x1fff), 1);
	assert_int_equal(file_at(&t, 10, 0x2000), UINT32_MAX);
	assert_int_equal(file_at(&t, 10, 0x3800), 2);
	assert_int_equal(file_at(&t, 10, 0x4000), UINT32_MAX);
	assert_int_equal(file_at(&t, 11, 0x1000), UINT32_MAX);
	bt_proctable_free(&t);
}

static void proctable__overlapping_map__replaces_old(void **state)
{
	struct bt_proctable t;
	bt_proctable_init(&t);
	map(&t, 1, 0x1000, 0x5000, 0, 1);
	map(&t, 1, 0x2000, 0x3000, 0x7000, 2);
	assert_int_equal(file_at(&t, 1, 0x1800), 1);
	assert_int_equal(file_at(&t, 1, 0x2800), 2);
	assert_int_equal(file_at(&t, 1, 0x3800), 1);
	struct bt_process *p = bt_proctable_find(&t, 1);
	assert_int_equal(p->nmaps, 3);
	/* the tail keeps its file offset right */
	const struct bt_mapping *m = bt_process_lookup(p, 0x3800);
	assert_int_equal(m->start, 0x3000);
	assert_int_equal(m->pgoff, 0x2000);
	bt_proctable_free(&t);
}

static void proctable__munmap_middle__splits(void **state)
{
	struct bt_proctable t;
	bt_proctable_init(&t);
	map(&t, 1, 0x10000, 0x20000, 0x1000, 1);
	assert_int_equal(bt_proctable_unmap(&t, 1, 0x14000, 0x18000), 0);
	assert_int_equal(file_at(&t, 1, 0x13fff), 1);
	assert_int_equal(file_at(&t, 1, 0x14000), UINT32_MAX);
	assert_int_equal(file_at(&t, 1, 0x18000), 1);
	const struct bt_mapping *m = bt_process_lookup(bt_proctable_find(&t, 1), 0x18000);
	assert_int_equal(m->pgoff, 0x1000 + 0x8000);
	assert_int_equal(bt_proctable_unmap(&t, 1, 0, 0x100000), 0);
	assert_int_equal(bt_proctable_find(&t, 1)->nmaps, 0);
	bt_proctable_free(&t);
}

static void proctable__fork__child_copies_parent(void **state)
{
	struct bt_proctable t;
	bt_proctable_init(&t);
	map(&t, 1, 0x1000, 0x2000, 0, 7);
	assert_int_equal(bt_proctable_fork(&t, 1, 2, 0), 0);
	assert_int_equal(file_at(&t, 2, 0x1000), 7);
	/* the copies are independent */
	map(&t, 2, 0x1000, 0x2000, 0, 8);
	assert_int_equal(file_at(&t, 1, 0x1000), 7);
	assert_int_equal(file_at(&t, 2, 0x1000), 8);
	bt_proctable_free(&t);
}

static void proctable__exec__starts_empty(void **state)
{
	struct bt_proctable t;
	bt_proctable_init(&t);
	map(&t, 1, 0x1000, 0x2000, 0, 7);
	assert_int_equal(bt_proctable_exec(&t, 1, 0), 0);
	assert_int_equal(file_at(&t, 1, 0x1000), UINT32_MAX);
	bt_proctable_free(&t);
}

static void proctable__exited__still_resolves_until_reaped(void **state)
{
	struct bt_proctable t;
	bt_proctable_init(&t);
	map(&t, 5, 0x1000, 0x2000, 0, 3);
	bt_proctable_exit(&t, 5, 1000);
	assert_int_equal(file_at(&t, 5, 0x1000), 3);
	assert_int_equal(bt_proctable_reap(&t, 1500, 1000), 0);
	assert_int_equal(file_at(&t, 5, 0x1000), 3);
	assert_int_equal(bt_proctable_reap(&t, 2000, 1000), 1);
	assert_null(bt_proctable_find(&t, 5));
	bt_proctable_free(&t);
}

static void proctable__pid_reused_after_exit__does_not_inherit(void **state)
{
	struct bt_proctable t;
	bt_proctable_init(&t);
	map(&t, 5, 0x1000, 0x2000, 0, 3);
	bt_proctable_exit(&t, 5, 1000);
	/* a new process gets pid 5 by fork from pid 9, which maps nothing there */
	assert_int_equal(bt_proctable_fork(&t, 9, 5, 0), 0);
	assert_int_equal(file_at(&t, 5, 0x1000), UINT32_MAX);
	/* and a reused pid seen first through a mapping is fresh as well */
	bt_proctable_exit(&t, 5, 2000);
	map(&t, 5, 0x8000, 0x9000, 0, 4);
	assert_int_equal(file_at(&t, 5, 0x1000), UINT32_MAX);
	assert_int_equal(file_at(&t, 5, 0x8000), 4);
	bt_proctable_free(&t);
}

static void proctable__thousands_of_processes__memory_returns(void **state)
{
	struct bt_proctable t;
	bt_proctable_init(&t);
	for (int round = 0; round < 5; round++) {
		for (int pid = 1; pid <= 5000; pid++) {
			map(&t, pid, 0x1000, 0x2000, 0, (uint32_t)pid);
			bt_proctable_exit(&t, pid, (uint64_t)round * 10);
		}
		bt_proctable_reap(&t, (uint64_t)round * 10 + 5, 1);
		assert_int_equal(t.nprocs, 0);
		assert_int_equal(t.index.count, 0);
	}
	bt_proctable_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(proctable__lookup__finds_containing_mapping_only),
		cmocka_unit_test(proctable__overlapping_map__replaces_old),
		cmocka_unit_test(proctable__munmap_middle__splits),
		cmocka_unit_test(proctable__fork__child_copies_parent),
		cmocka_unit_test(proctable__exec__starts_empty),
		cmocka_unit_test(proctable__exited__still_resolves_until_reaped),
		cmocka_unit_test(proctable__pid_reused_after_exit__does_not_inherit),
		cmocka_unit_test(proctable__thousands_of_processes__memory_returns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
