/* test_profdir.c - timestamped profile names that sort by time, atomic writes (no partial or
 * temporary file left after an error), and pruning to the newest N of one kind. */
#include "testutil.h"
#include "output/profdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
	assert_int_equal(bt_profdir_name(a, sizeof(a), NULL, "buildtrace", 1795378650123456789LL, "pb.gz"), 0);
	assert_string_equal(a, "buildtrace-20261122T201730.123Z.pb.gz");
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
	/* what another user planted: a name that sorts after ours, a link and (as root) a file of
	 * theirs under our own kind of name; none counts towards keep, none is removed */
	assert_int_equal(bt_test_run(NULL, 0, "cd %s && touch buildtrace-keep.folded buildtrace-zzzzzzzzTzzzzzz.zzzZ.folded "
				     "&& ln -s /etc/passwd buildtrace-20991122T202130.000Z.folded", dir), 0);
	if (geteuid() == 0)
		assert_int_equal(bt_test_run(NULL, 0, "cd %s && touch buildtrace-20991122T202230.000Z.folded && chown 65534 "
					     "buildtrace-20991122T202230.000Z.folded", dir), 0);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	unsigned removed = 0;
	assert_int_equal(bt_profdir_prune(dfd, "buildtrace", "folded", 2, &removed), 0);
	assert_int_equal(removed, 4);
	char out[512];
	assert_int_equal(bt_test_run(out, sizeof(out), "ls %s | grep folded | grep 2026 | grep -v off_cpu | tr '\\n' ' '",
				     dir), 0);
	assert_string_equal(out, "buildtrace-20261122T202130.000Z.folded buildtrace-20261122T202230.000Z.folded ");
	assert_int_equal(bt_test_run(NULL, 0, "cd %s && test -e buildtrace-keep.folded && test -e "
				     "buildtrace-zzzzzzzzTzzzzzz.zzzZ.folded && test -L buildtrace-20991122T202130.000Z.folded",
				     dir), 0);
	if (geteuid() == 0)
		assert_int_equal(bt_test_run(NULL, 0, "test -e %s/buildtrace-20991122T202230.000Z.folded", dir), 0);
	assert_int_equal(bt_test_run(NULL, 0, "test -e %s/buildtrace-off_cpu-20261122T201730.000Z.folded", dir), 0);
	assert_int_equal(bt_profdir_prune(dfd, "buildtrace", "pb.gz", 10, &removed), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "ls %s | grep -c pb.gz", dir), 0);
	assert_string_equal(out, "6\n");
	close(dfd);
	assert_int_equal(bt_profdir_prune(-1, "buildtrace", "pb.gz", 1, NULL), -EBADF);
	/* written through a directory held open: where it is, whatever its path names meanwhile */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(bt_test_run(NULL, 0, "mv %s %s.moved && mkdir %s", dir, dir, dir), 0);
	assert_int_equal(bt_atomic_write_at(dfd, "status.json", put_text, "{\"a\": 1}"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "cat %s.moved/status.json; ls -A %s", dir, dir), 0);
	assert_string_equal(out, "{\"a\": 1}");
	assert_int_equal(bt_atomic_write_at(dfd, "../escape", put_text, "x"), -EINVAL);
	close(dfd);
	bt_test_run(NULL, 0, "rm -rf %s %s.moved", dir, dir);
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
