/* test_unwcache.c - compiled tables kept in the build-id cache: stored beside the binary's entry
 * (in the entry perf's layout names, made for it when the binary is not stored, or the binary's own
 * one when it is), a file of
 * this user's only (0600), read back the same; refused when spoiled or when another user could
 * have written it; nothing stored when storing is off. */
#include "testutil.h"
#include "symsrc/unwcache.h"
#include "elf/buildid.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
	char dir[64];
	char cache[128];
	char libc[PATH_MAX];
	struct bt_build_id id;
	struct bt_ehtable t;
	struct bt_elf_layout lay;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || bt_test_run(f->libc, sizeof(f->libc), "awk '$6 ~ /libc\\.so/ {printf \"%%s\", $6; exit}' "
			      "/proc/%d/maps", (int)getpid()) != 0)
		return -1;
	int fd = open(f->libc, O_RDONLY | O_CLOEXEC);
	struct bt_elf *e = NULL;
	if (fd < 0 || bt_ehtable_compile(fd, &f->t) || bt_elf_open_fd(fd, &e) || bt_elf_layout(e, &f->lay) ||
	    bt_buildid_from_fd(fd, &f->id))
		return -1;
	bt_elf_close(e);
	close(fd);
	strcpy(f->dir, "/tmp/bt-unwcache-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->cache, sizeof(f->cache), "%s/cache", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	bt_test_run(NULL, 0, "rm -rf '%s'", f->dir);
	bt_ehtable_free(&f->t);
	free(f);
	return 0;
}

/* The table's file in the cache, through the build-id link. */
static void table_path(const struct fx *f, char *out, size_t len)
{
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	bt_buildid_hex(&f->id, hex, sizeof(hex));
	assert_int_equal(bt_test_run(out, len, "readlink -f '%s/.build-id/%.2s/%s' | tr -d '\\n'; echo -n /unwtable",
				     f->cache, hex, hex + 2), 0);
}

static void loaded_same(struct fx *f, struct bt_unwcache *c)
{
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	assert_int_equal(bt_unwcache_load(c, f->id.data, f->id.len, &t, &lay), 0);
	assert_int_equal(t.n, f->t.n);
	assert_memory_equal(t.rows, f->t.rows, t.n * sizeof(*t.rows));
	assert_memory_equal(t.rules, f->t.rules, t.nrules * sizeof(*t.rules));
	assert_int_equal(lay.nload, f->lay.nload);
	bt_ehtable_free(&t);
}

static void unwcache__stored__beside_the_entry_0600_and_read_back(void **state)
{
	struct fx *f = *state;
	struct bt_unwcache c;
	assert_int_equal(bt_unwcache_init(&c, f->cache, true), 0);
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	assert_int_equal(bt_unwcache_load(&c, f->id.data, f->id.len, &t, &lay), -ENOENT);
	assert_int_equal(bt_unwcache_save(&c, f->id.data, f->id.len, f->libc, &f->t, &f->lay), 0);
	char path[PATH_MAX], want[2 * PATH_MAX], hex[2 * BT_BUILD_ID_MAXLEN + 1];
	table_path(f, path, sizeof(path));
	bt_buildid_hex(&f->id, hex, sizeof(hex));
	/* perf's layout: DIR/ORIGPATH/BUILDID/, the original path the binary's */
	char real[PATH_MAX];
	assert_non_null(realpath(f->libc, real));
	snprintf(want, sizeof(want), "%s%s/%s/unwtable", f->cache, f->libc, hex);
	char wreal[PATH_MAX];
	assert_non_null(realpath(want, wreal));
	assert_string_equal(path, wreal);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	loaded_same(f, &c);
	/* the cache lists the entry under the binary's path */
	char list[4096];
	assert_int_equal(bt_test_run(list, sizeof(list), "ls '%s/.build-id/%.2s/'", f->cache, hex), 0);
	assert_non_null(strstr(list, hex + 2));
}

static void unwcache__binary_stored_first__table_in_its_entry(void **state)
{
	struct fx *f = *state;
	struct bt_unwcache c;
	assert_int_equal(bt_unwcache_init(&c, f->cache, true), 0);
	int fd = open(f->libc, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bt_bidcache_add_fd(f->cache, &f->id, "/somewhere/libc.so.6", fd), 0);
	close(fd);
	assert_int_equal(bt_unwcache_save(&c, f->id.data, f->id.len, f->libc, &f->t, &f->lay), 0);
	char path[PATH_MAX];
	table_path(f, path, sizeof(path));
	assert_non_null(strstr(path, "/somewhere/libc.so.6/"));
	char elf[PATH_MAX + 8];
	snprintf(elf, sizeof(elf), "%s", path);
	strcpy(strrchr(elf, '/'), "/elf");
	assert_int_equal(access(elf, R_OK), 0);
	loaded_same(f, &c);
}

static void unwcache__spoiled_or_writable_by_others__refused(void **state)
{
	struct fx *f = *state;
	struct bt_unwcache c;
	assert_int_equal(bt_unwcache_init(&c, f->cache, true), 0);
	assert_int_equal(bt_unwcache_save(&c, f->id.data, f->id.len, f->libc, &f->t, &f->lay), 0);
	char path[PATH_MAX];
	table_path(f, path, sizeof(path));
	struct bt_ehtable t;
	struct bt_elf_layout lay;
	assert_int_equal(chmod(path, 0620), 0);
	assert_int_equal(bt_unwcache_load(&c, f->id.data, f->id.len, &t, &lay), -EBADMSG);
	assert_int_equal(chmod(path, 0600), 0);
	loaded_same(f, &c);
	assert_int_equal(bt_test_run(NULL, 0, "printf 'X' | dd of='%s' bs=1 seek=4000 conv=notrunc status=none",
				     path), 0);
	assert_int_equal(bt_unwcache_load(&c, f->id.data, f->id.len, &t, &lay), -EBADMSG);
	/* stored again over it */
	assert_int_equal(bt_unwcache_save(&c, f->id.data, f->id.len, f->libc, &f->t, &f->lay), 0);
	loaded_same(f, &c);
}

static void unwcache__storing_off__nothing_written(void **state)
{
	struct fx *f = *state;
	struct bt_unwcache c;
	assert_int_equal(bt_unwcache_init(&c, f->cache, false), 0);
	assert_int_equal(bt_unwcache_save(&c, f->id.data, f->id.len, f->libc, &f->t, &f->lay), -EPERM);
	struct stat st;
	assert_int_not_equal(stat(f->cache, &st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(unwcache__stored__beside_the_entry_0600_and_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(unwcache__binary_stored_first__table_in_its_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(unwcache__spoiled_or_writable_by_others__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(unwcache__storing_off__nothing_written, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
