/* test_profdir.c - timestamped profile names that sort by time, atomic writes (no partial or
 * temporary file left after an error), and pruning to the newest N of one kind. */
#include "testutil.h"
#include "output/profdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int count(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static int put_text(void *ctx, FILE *f)
{
	fputs(ctx, f);
	return 0;
}

static int fail_half_way(void *ctx, FILE *f)
{
	fputs("partial", f);
	return -ENOSPC;
}

static void profdir__names__utc_and_sortable(void **state)
{
	char a[256], b[256];
	assert_int_equal(bt_profdir_name(a, sizeof(a), "/d", "buildtrace", 1795378650123456789LL, "pb.gz"), 0);
	assert_string_equal(a, "/d/buildtrace-20261122T201730.123Z.pb.gz");
	assert_int_equal(bt_profdir_name(b, sizeof(b), "/d", "buildtrace", 1795378660000000000LL, "pb.gz"), 0);
	assert_true(strcmp(a, b) < 0);
	assert_int_equal(bt_profdir_name(a, 10, "/d", "buildtrace", 0, "x"), -ENAMETOOLONG);
}

static void profdir__atomic_write__whole_or_nothing(void **state)
{
	char dir[] = "/tmp/bt-profdir-XXXXXX", path[300];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.folded", dir);
	assert_int_equal(bt_atomic_write(path, put_text, "a;b 1\n"), 0);
	size_t len;
	char *s = bt_test_read_file(path, &len);
	assert_string_equal(s, "a;b 1\n");
	free(s);
	/* a failed write leaves the old file and no temporary one */
	assert_int_equal(bt_atomic_write(path, fail_half_way, NULL), -ENOSPC);
	s = bt_test_read_file(path, &len);
	assert_string_equal(s, "a;b 1\n");
	free(s);
	assert_int_equal(count(dir), 1);
	snprintf(path, sizeof(path), "%s/missing/p.folded", dir);
	assert_int_equal(bt_atomic_write(path, put_text, "x"), -ENOENT);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

static void profdir__prune__keeps_the_newest_of_one_kind(void **state)
{
	char dir[] = "/tmp/bt-profdir-XXXXXX", path[300];
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 6; i++) {
		bt_profdir_name(path, sizeof(path), dir, "buildtrace", 1795378650000000000LL + i * 60000000000LL, "folded");
		assert_int_equal(bt_atomic_write(path, put_text, "x 1\n"), 0);
		bt_profdir_name(path, sizeof(path), dir, "buildtrace", 1795378650000000000LL + i * 60000000000LL, "pb.gz");
		assert_int_equal(bt_atomic_write(path, put_text, "x"), 0);
	}
	snprintf(path, sizeof(path), "%s/status.json", dir);
	assert_int_equal(bt_atomic_write(path, put_text, "{}"), 0);
	/* another kind of profile whose prefix begins with this one's: not this one's to prune */
	bt_profdir_name(path, sizeof(path), dir, "buildtrace-off_cpu", 1795378650000000000LL, "folded");
	assert_int_equal(bt_atomic_write(path, put_text, "x 1\n"), 0);
	unsigned removed = 0;
	assert_int_equal(bt_profdir_prune(dir, "buildtrace", "folded", 2, &removed), 0);
	assert_int_equal(removed, 4);
	assert_int_equal(count(dir), 2 + 6 + 1 + 1);
	char out[512];
	assert_int_equal(bt_test_run(out, sizeof(out), "ls %s | grep folded | grep -v off_cpu | tr '\\n' ' '", dir), 0);
	assert_string_equal(out, "buildtrace-20261122T202130.000Z.folded buildtrace-20261122T202230.000Z.folded ");
	assert_int_equal(bt_profdir_prune(dir, "buildtrace", "pb.gz", 10, &removed), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(bt_profdir_prune("/nonexistent-dir", "buildtrace", "pb.gz", 1, NULL), -ENOENT);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profdir__names__utc_and_sortable),
		cmocka_unit_test(profdir__atomic_write__whole_or_nothing),
		cmocka_unit_test(profdir__prune__keeps_the_newest_of_one_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
