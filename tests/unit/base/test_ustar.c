/* test_ustar.c - the tar writer against GNU tar as the oracle: listings, long names and link
 * targets (pax), contents extracted byte for byte, and the refusal of unsafe names. */
#include "testutil.h"
#include "base/ustar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fx {
	char dir[64];
	char tar[128];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bt-ustar-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->tar, sizeof(f->tar), "%s/out.tar", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	bt_test_run(NULL, 0, "rm -rf '%s'", f->dir);
	free(f);
	return 0;
}

/* A file of n pseudo-random bytes; returns its fd, open for reading. */
static int make_file(const char *path, size_t n, unsigned seed)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		unsigned char b = (unsigned char)(seed >> 16);
		assert_int_equal(write(fd, &b, 1), 1);
	}
	return fd;
}

static void ustar__files_dirs_links__tar_lists_them(void **state)
{
	struct fx *f = *state;
	char src[256], out[4096];
	snprintf(src, sizeof(src), "%s/src", f->dir);
	int in = make_file(src, 1000, 7);
	int fd = open(f->tar, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	struct bt_ustar t;
	bt_ustar_init(&t, fd);
	assert_int_equal(bt_ustar_add_dir(&t, "a", 0755, 1700000000), 0);
	assert_int_equal(bt_ustar_add_file(&t, "a/data", 0640, 1700000000, in, 1000), 0);
	assert_int_equal(bt_ustar_add_symlink(&t, ".build-id/ab/cdef", "../../a/data", 1700000000), 0);
	assert_int_equal(bt_ustar_finish(&t), 0);
	close(fd);
	close(in);
	/* Every member is a whole number of blocks, plus the two closing blocks. */
	assert_int_equal(t.written % 512, 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "tar -tvf '%s' 2>&1", f->tar), 0);
	assert_non_null(strstr(out, "drwxr-xr-x"));
	assert_non_null(strstr(out, " a/\n"));
	assert_non_null(strstr(out, "-rw-r----- root/root      1000 "));
	assert_non_null(strstr(out, " a/data\n"));
	assert_non_null(strstr(out, " .build-id/ab/cdef -> ../../a/data\n"));
	assert_int_equal(bt_test_run(out, sizeof(out), "cd '%s' && mkdir x && tar -xf out.tar -C x && "
				     "cmp src x/a/data && readlink x/.build-id/ab/cdef", f->dir), 0);
	assert_string_equal(out, "../../a/data\n");
}

static void ustar__long_name_and_link__pax_roundtrip(void **state)
{
	struct fx *f = *state;
	char name[400], target[300], src[256], out[8192];
	/* 300 characters: beyond ustar's 100-byte name and 155-byte prefix. */
	size_t n = 0;
	while (n < 290) {
		memcpy(name + n, "component/", 10);
		n += 10;
	}
	strcpy(name + n, "elf");
	n = 0;
	target[n++] = '.';
	target[n++] = '.';
	for (; n < 250; n++)
		target[n] = n % 20 ? 'x' : '/';
	target[n] = '\0';
	snprintf(src, sizeof(src), "%s/src", f->dir);
	int in = make_file(src, 513, 11);  /* one byte into the second block */
	int fd = open(f->tar, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct bt_ustar t;
	bt_ustar_init(&t, fd);
	assert_int_equal(bt_ustar_add_file(&t, name, 0755, 1, in, 513), 0);
	assert_int_equal(bt_ustar_add_symlink(&t, "lnk", target, 1), 0);
	assert_int_equal(bt_ustar_finish(&t), 0);
	close(fd);
	close(in);
	assert_int_equal(bt_test_run(out, sizeof(out), "cd '%s' && mkdir x && tar -xf out.tar -C x && "
				     "cmp src 'x/%s' && readlink x/lnk", f->dir, name), 0);
	assert_int_equal(strncmp(out, target, strlen(target)), 0);
	assert_int_equal(out[strlen(target)], '\n');
}

static void ustar__name_between_100_and_255__uses_prefix(void **state)
{
	struct fx *f = *state;
	char name[200], out[4096];
	memset(name, 'p', 120);
	name[120] = '/';
	memset(name + 121, 'n', 60);
	name[181] = '\0';
	int fd = open(f->tar, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct bt_ustar t;
	bt_ustar_init(&t, fd);
	assert_int_equal(bt_ustar_add_dir(&t, name, 0700, 5), 0);
	assert_int_equal(bt_ustar_finish(&t), 0);
	close(fd);
	/* A split name needs no pax header: the archive is exactly one header and two end blocks. */
	assert_int_equal(t.written, 3 * 512);
	assert_int_equal(bt_test_run(out, sizeof(out), "tar -tf '%s'", f->tar), 0);
	name[181] = '/';
	name[182] = '\n';
	name[183] = '\0';
	assert_string_equal(out, name);
}

static void ustar__unsafe_names__refused(void **state)
{
	struct fx *f = *state;
	int fd = open(f->tar, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct bt_ustar t;
	bt_ustar_init(&t, fd);
	assert_int_equal(bt_ustar_add_dir(&t, "/etc", 0755, 0), -EINVAL);
	assert_int_equal(bt_ustar_add_dir(&t, "a/../../etc", 0755, 0), -EINVAL);
	assert_int_equal(bt_ustar_add_dir(&t, "..", 0755, 0), -EINVAL);
	assert_int_equal(bt_ustar_add_dir(&t, "", 0755, 0), -EINVAL);
	assert_int_equal(bt_ustar_add_symlink(&t, "l", "", 0), -EINVAL);
	assert_int_equal(t.written, 0);
	close(fd);
}

static void ustar__short_file__error_sticks(void **state)
{
	struct fx *f = *state;
	char src[256];
	snprintf(src, sizeof(src), "%s/src", f->dir);
	int in = make_file(src, 10, 3);
	int fd = open(f->tar, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct bt_ustar t;
	bt_ustar_init(&t, fd);
	/* The header promises 100 bytes that the file does not have. */
	assert_int_equal(bt_ustar_add_file(&t, "f", 0644, 0, in, 100), -EIO);
	assert_int_equal(bt_ustar_add_dir(&t, "d", 0755, 0), -EIO);
	assert_int_equal(bt_ustar_finish(&t), -EIO);
	close(fd);
	close(in);
}

static void ustar__write_failure__reported(void **state)
{
	(void)state;
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		skip();
	struct bt_ustar t;
	bt_ustar_init(&t, fd);
	assert_int_equal(bt_ustar_add_dir(&t, "d", 0755, 0), -ENOSPC);
	assert_int_equal(bt_ustar_finish(&t), -ENOSPC);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ustar__files_dirs_links__tar_lists_them, setup, teardown),
		cmocka_unit_test_setup_teardown(ustar__long_name_and_link__pax_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(ustar__name_between_100_and_255__uses_prefix, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ustar__unsafe_names__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(ustar__short_file__error_sticks, setup, teardown),
		cmocka_unit_test_setup_teardown(ustar__write_failure__reported, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
