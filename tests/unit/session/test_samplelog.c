/* test_samplelog.c - the per-sample log: every record back in time order whatever the order of
 * arrival within its window, across the scratch file; the file unnamed, 0600; late records counted. */
#include "testutil.h"
#include "session/samplelog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR "build/tests/tmp-samplelog"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " DIR " && mkdir -p " DIR) == 0 ? 0 : -1;
}

struct seen {
	uint64_t n, last, sum_stack;
	int sorted;
};

static int collect(void *ctx, const struct bt_sample_rec *r)
{
	struct seen *s = ctx;
	if (s->n && r->time_ns < s->last)
		s->sorted = 0;
	s->last = r->time_ns;
	s->sum_stack += r->stack;
	s->n++;
	return 0;
}

static void samplelog__shuffled_within_window__all_back_in_order_through_file(void **state)
{
	struct bt_samplelog l;
	assert_int_equal(bt_samplelog_init(&l, DIR, 64), 0);
	uint64_t sum = 0;
	srand(7);
	for (uint32_t i = 0; i < 10000; i++) {
		/* each arrives up to 20 places off its time order */
		struct bt_sample_rec r = { .time_ns = 1000000ULL * i + (uint64_t)(rand() % 20) * 1000000ULL,
					   .stack = i % 97, .pid = 5, .tid = 6, .cpu = i % 2 };
		sum += r.stack;
		assert_int_equal(bt_samplelog_add(&l, &r), 0);
	}
	assert_int_equal(bt_samplelog_count(&l), 10000);
	assert_true(l.spilled > 9000);
	assert_int_equal(l.late, 0);
	struct seen s = { .sorted = 1 };
	assert_int_equal(bt_samplelog_each(&l, collect, &s), 0);
	assert_int_equal(s.n, 10000);
	assert_int_equal(s.sum_stack, sum);
	assert_true(s.sorted);
	/* the scratch file: no name in the directory, only its owner reads it */
	struct stat st;
	assert_int_equal(fstat(l.fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_nlink, 0);
	assert_true((fcntl(l.fd, F_GETFD) & FD_CLOEXEC) != 0);
	char out[256];
	bt_test_run(out, sizeof(out), "ls -A " DIR " | wc -l");
	assert_string_equal(out, "0\n");
	bt_samplelog_free(&l);
}

static void samplelog__older_than_the_file__takes_its_time_and_is_counted(void **state)
{
	struct bt_samplelog l;
	assert_int_equal(bt_samplelog_init(&l, DIR, 4), 0);
	for (uint64_t t = 10; t <= 50; t += 10) {
		struct bt_sample_rec r = { .time_ns = t };
		assert_int_equal(bt_samplelog_add(&l, &r), 0);
	}
	/* 10 and 20 went to the file */
	struct bt_sample_rec old = { .time_ns = 5, .stack = 9 };
	assert_int_equal(bt_samplelog_add(&l, &old), 0);
	assert_int_equal(l.late, 1);
	struct seen s = { .sorted = 1 };
	assert_int_equal(bt_samplelog_each(&l, collect, &s), 0);
	assert_int_equal(s.n, 6);
	assert_true(s.sorted);
	bt_samplelog_free(&l);
}

static int stop_at_three(void *ctx, const struct bt_sample_rec *r)
{
	return ++*(int *)ctx == 3 ? 42 : 0;
}

static void samplelog__callback_stops__its_value_returned(void **state)
{
	struct bt_samplelog l;
	assert_int_equal(bt_samplelog_init(&l, DIR, 0), 0);
	for (uint64_t t = 0; t < 10; t++) {
		struct bt_sample_rec r = { .time_ns = t };
		assert_int_equal(bt_samplelog_add(&l, &r), 0);
	}
	assert_int_equal(l.fd, -1);  /* small: memory only */
	int calls = 0;
	assert_int_equal(bt_samplelog_each(&l, stop_at_three, &calls), 42);
	assert_int_equal(calls, 3);
	bt_samplelog_free(&l);
}

static void samplelog__directory_missing__error_not_crash(void **state)
{
	struct bt_samplelog l;
	assert_int_equal(bt_samplelog_init(&l, DIR "/none/such", 2), 0);
	struct bt_sample_rec r = { .time_ns = 1 };
	assert_int_equal(bt_samplelog_add(&l, &r), 0);
	assert_int_equal(bt_samplelog_add(&l, &r), 0);
	assert_int_equal(bt_samplelog_add(&l, &r), -ENOENT);
	bt_samplelog_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(samplelog__shuffled_within_window__all_back_in_order_through_file, setup),
		cmocka_unit_test_setup(samplelog__older_than_the_file__takes_its_time_and_is_counted, setup),
		cmocka_unit_test_setup(samplelog__callback_stops__its_value_returned, setup),
		cmocka_unit_test_setup(samplelog__directory_missing__error_not_crash, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
