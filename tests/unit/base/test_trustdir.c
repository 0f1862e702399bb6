/* test_trustdir.c - a directory is trusted only when it and every directory above belong to us or
 * root, with only sticky ones above it writable by others; a missing one is judged by the nearest
 * existing directory above it; symlinks are judged by where they lead. */
#include "testutil.h"
#include "base/trustdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void trustdir__own_private_dir__trusted(void **state)
{
	char dir[] = "/tmp/bt-trustdir-XXXXXX", p[128];
	assert_non_null(mkdtemp(dir));  /* 0700, ours, under sticky /tmp */
	assert_int_equal(bt_dir_trusted(dir, NULL, 0), 0);
	snprintf(p, sizeof(p), "%s/not/yet/there", dir);
	assert_int_equal(bt_dir_trusted(p, NULL, 0), 0);
	assert_int_equal(bt_dir_trusted("/", NULL, 0), 0);
	assert_int_equal(bt_dir_trusted("relative/dir", NULL, 0), -EINVAL);
	assert_int_equal(bt_dir_trusted(NULL, NULL, 0), -EINVAL);
	assert_int_equal(rmdir(dir), 0);
}

static void trustdir__writable_by_others__refused_unless_sticky_above(void **state)
{
	char dir[] = "/tmp/bt-trustdir-XXXXXX", p[128], why[256], want[256];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
	snprintf(want, sizeof(want), "%s may be written by others (mode 0777)", dir);
	assert_int_equal(bt_dir_trusted(dir, why, sizeof(why)), -EPERM);
	assert_string_equal(why, want);
	/* what would be created in it, by whoever gets there first */
	snprintf(p, sizeof(p), "%s/cache", dir);
	assert_int_equal(bt_dir_trusted(p, why, sizeof(why)), -EPERM);
	assert_string_equal(why, want);
	/* an existing private directory under a world-writable one that is not sticky: refused */
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(bt_dir_trusted(p, why, sizeof(why)), -EPERM);
	assert_string_equal(why, want);
	/* sticky, as /tmp: others cannot move what is ours, so ours below it is trusted */
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(bt_dir_trusted(p, NULL, 0), 0);
	/* but a sticky directory is not itself a place of ours */
	assert_int_equal(bt_dir_trusted(dir, NULL, 0), -EPERM);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s", dir), 0);
}

/* Judged where a symlink leads; as root, a directory of another user's is refused. */
static void trustdir__symlink_and_other_owner(void **state)
{
	char dir[] = "/tmp/bt-trustdir-XXXXXX", link[128], sub[128], why[256], want[256];
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/open", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(sub, link), 0);
	snprintf(want, sizeof(want), "%s may be written by others (mode 0777)", sub);
	assert_int_equal(bt_dir_trusted(link, why, sizeof(why)), -EPERM);
	assert_string_equal(why, want);
	if (geteuid() == 0) {
		assert_int_equal(chmod(sub, 0700), 0);
		assert_int_equal(chown(sub, 65534, 65534), 0);
		snprintf(want, sizeof(want), "%s belongs to uid 65534", sub);
		assert_int_equal(bt_dir_trusted(link, why, sizeof(why)), -EPERM);
		assert_string_equal(why, want);
	}
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s", dir), 0);
}

/* A file as sshd's StrictModes takes it: ours, writable by no one else, in a trusted directory; a
 * secret readable by no one else either; a link judged where it leads. */
static void trustdir__file__as_sshd_takes_it(void **state)
{
	char dir[] = "/tmp/bt-trustdir-XXXXXX", f[128], l[128], why[256], want[256];
	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/conf", dir);
	snprintf(l, sizeof(l), "%s/link", dir);
	int fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(f, l), 0);
	static const struct { mode_t mode; bool secret; int want; const char *how; } cases[] = {
		{ 0600, true, 0, NULL }, { 0644, false, 0, NULL }, { 0400, true, 0, NULL },
		{ 0644, true, -EPERM, "read" }, { 0640, true, -EPERM, "read" }, { 0604, true, -EPERM, "read" },
		{ 0664, false, -EPERM, "written" }, { 0666, false, -EPERM, "written" }, { 0620, true, -EPERM, "written" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(chmod(f, cases[i].mode), 0);
		for (int through_link = 0; through_link < 2; through_link++) {
			fd = open(through_link ? l : f, O_RDONLY | O_CLOEXEC);
			assert_true(fd >= 0);
			why[0] = '\0';
			assert_int_equal(bt_file_trusted(fd, f, cases[i].secret, why, sizeof(why)), cases[i].want);
			if (cases[i].how) {
				snprintf(want, sizeof(want), "%s may be %s by others (mode %04o)", f, cases[i].how,
					 (unsigned)cases[i].mode);
				assert_string_equal(why, want);
			}
			close(fd);
		}
	}
	/* in a directory others may write: refused whatever the file's mode */
	assert_int_equal(chmod(f, 0600), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	fd = open(f, O_RDONLY | O_CLOEXEC);
	assert_int_equal(bt_file_trusted(fd, f, true, why, sizeof(why)), -EPERM);
	snprintf(want, sizeof(want), "%s may be written by others (mode 0777)", dir);
	assert_string_equal(why, want);
	close(fd);
	/* another user's file (when we can make one) */
	if (geteuid() == 0) {
		assert_int_equal(chmod(dir, 0700), 0);
		assert_int_equal(chown(f, 65534, 65534), 0);
		fd = open(f, O_RDONLY | O_CLOEXEC);
		assert_int_equal(bt_file_trusted(fd, f, false, why, sizeof(why)), -EPERM);
		snprintf(want, sizeof(want), "%s belongs to uid 65534", f);
		assert_string_equal(why, want);
		close(fd);
	}
	unlink(l);
	unlink(f);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trustdir__own_private_dir__trusted),
		cmocka_unit_test(trustdir__writable_by_others__refused_unless_sticky_above),
		cmocka_unit_test(trustdir__symlink_and_other_owner),
		cmocka_unit_test(trustdir__file__as_sshd_takes_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
