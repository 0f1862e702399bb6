/* test_wfile.c - the create-then-rename writer: mode 0600, a link at the final name replaced and
 * never followed, failures removing only the writer's own temporary file, devices and foreign
 * links at a user-named path. The different-user attacks are in tests/priv/test_hostile_fs.c. */
#include "testutil.h"
#include "base/wfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
	char dir[64];
	char victim[128];  /* a file outside dir that nothing may touch */
	int dfd;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bt-wfile-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->victim, sizeof(f->victim), "%s.victim", f->dir);
	FILE *v = fopen(f->victim, "w");
	if (!v || fputs("victim\n", v) < 0 || fclose(v) != 0)
		return -1;
	f->dfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	*state = f;
	return f->dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	close(f->dfd);
	bt_test_run(NULL, 0, "rm -rf '%s' '%s'", f->dir, f->victim);
	free(f);
	return 0;
}

static void assert_victim_intact(const struct fx *f)
{
	size_t len;
	char *s = bt_test_read_file(f->victim, &len);
	assert_string_equal(s, "victim\n");
	free(s);
}

/* Names in dir, sorted, space separated. */
static void listing(const struct fx *f, char *out, size_t len)
{
	assert_int_equal(bt_test_run(out, len, "ls -A '%s' | tr '\\n' ' '", f->dir), 0);
}

static void write_str(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void wfile__commit__file_0600_with_content_no_temporary(void **state)
{
	struct fx *f = *state;
	struct bt_wfile w;
	int fd = bt_wfile_open(&w, f->dfd, "out.txt", BT_WFILE_MODE);
	assert_true(fd >= 0);
	write_str(fd, "hello\n");
	assert_int_equal(bt_wfile_commit(&w), 0);
	char path[160], ls[256];
	snprintf(path, sizeof(path), "%s/out.txt", f->dir);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	size_t len;
	char *s = bt_test_read_file(path, &len);
	assert_string_equal(s, "hello\n");
	free(s);
	listing(f, ls, sizeof(ls));
	assert_string_equal(ls, "out.txt ");
}

static void wfile__link_at_final_name__replaced_not_followed(void **state)
{
	struct fx *f = *state;
	char link[160];
	snprintf(link, sizeof(link), "%s/status.json", f->dir);
	assert_int_equal(symlink(f->victim, link), 0);
	struct bt_wfile w;
	int fd = bt_wfile_open(&w, f->dfd, "status.json", BT_WFILE_MODE);
	assert_true(fd >= 0);
	write_str(fd, "{}\n");
	assert_int_equal(bt_wfile_commit(&w), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_victim_intact(f);
}

static void wfile__abort__removes_only_its_temporary(void **state)
{
	struct fx *f = *state;
	char path[160], ls[256];
	snprintf(path, sizeof(path), "%s/keep", f->dir);
	FILE *k = fopen(path, "w");
	assert_non_null(k);
	fclose(k);
	struct bt_wfile w;
	int fd = bt_wfile_open(&w, f->dfd, "keep", BT_WFILE_MODE);
	assert_true(fd >= 0);
	listing(f, ls, sizeof(ls));
	assert_non_null(strstr(ls, ".tmp."));
	bt_wfile_abort(&w);
	bt_wfile_abort(&w);  /* twice: a no-op */
	listing(f, ls, sizeof(ls));
	assert_string_equal(ls, "keep ");
}

/* The directory's owner swaps the temporary name for a link to a file outside: the commit
 * notices, renames nothing and removes nothing of theirs. */
static void wfile__temporary_replaced__stale_nothing_renamed(void **state)
{
	struct fx *f = *state;
	struct bt_wfile w;
	int fd = bt_wfile_open(&w, f->dfd, "out", BT_WFILE_MODE);
	assert_true(fd >= 0);
	char tmp[160], aside[160], ls[256];
	snprintf(tmp, sizeof(tmp), "%s/%s", f->dir, w.tmp);
	snprintf(aside, sizeof(aside), "%s/aside", f->dir);
	assert_int_equal(rename(tmp, aside), 0);
	assert_int_equal(symlink(f->victim, tmp), 0);
	write_str(fd, "data\n");
	assert_int_equal(bt_wfile_commit(&w), -ESTALE);
	listing(f, ls, sizeof(ls));
	char want[64];
	snprintf(want, sizeof(want), "%s aside ", strrchr(tmp, '/') + 1);
	assert_string_equal(ls, want);
	assert_victim_intact(f);
}

static void wfile__bad_names__refused(void **state)
{
	struct fx *f = *state;
	struct bt_wfile w;
	assert_int_equal(bt_wfile_open(&w, f->dfd, "a/b", BT_WFILE_MODE), -EINVAL);
	assert_int_equal(bt_wfile_open(&w, f->dfd, "..", BT_WFILE_MODE), -EINVAL);
	assert_int_equal(bt_wfile_open(&w, f->dfd, "", BT_WFILE_MODE), -EINVAL);
	assert_int_equal(bt_wfile_open_path(&w, f->dir, BT_WFILE_MODE), -EISDIR);
}

/* A user-named path: a missing file is created in its directory; /dev/null is written in place and
 * survives both a commit and an abort; a link of our own to it as well. */
static void wfile__open_path__devices_in_place_never_removed(void **state)
{
	struct fx *f = *state;
	char path[160], link[160];
	snprintf(path, sizeof(path), "%s/new.svg", f->dir);
	struct bt_wfile w;
	int fd = bt_wfile_open_path(&w, path, BT_WFILE_MODE);
	assert_true(fd >= 0);
	write_str(fd, "<svg/>\n");
	assert_int_equal(bt_wfile_commit(&w), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 7);

	fd = bt_wfile_open_path(&w, "/dev/null", BT_WFILE_MODE);
	assert_true(fd >= 0);
	assert_true(w.direct);
	bt_wfile_abort(&w);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));

	snprintf(link, sizeof(link), "%s/null", f->dir);
	assert_int_equal(symlink("/dev/null", link), 0);
	fd = bt_wfile_open_path(&w, link, BT_WFILE_MODE);
	assert_true(fd >= 0);
	write_str(fd, "x");
	assert_int_equal(bt_wfile_commit(&w), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

static void wfile__open_dir__link_refused(void **state)
{
	struct fx *f = *state;
	char link[160];
	snprintf(link, sizeof(link), "%s/d", f->dir);
	assert_int_equal(symlink("/tmp", link), 0);
	int fd = bt_wfile_open_dir(link);
	assert_int_equal(fd, -ELOOP);
	fd = bt_wfile_open_dir(f->dir);
	assert_true(fd >= 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(wfile__commit__file_0600_with_content_no_temporary, setup,
						teardown),
		cmocka_unit_test_setup_teardown(wfile__link_at_final_name__replaced_not_followed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(wfile__abort__removes_only_its_temporary, setup, teardown),
		cmocka_unit_test_setup_teardown(wfile__temporary_replaced__stale_nothing_renamed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(wfile__bad_names__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(wfile__open_path__devices_in_place_never_removed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(wfile__open_dir__link_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
