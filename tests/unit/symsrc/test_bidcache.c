/* test_bidcache.c - the build-id cache against perf as the oracle (perf lists what buildtrace
 * stores, buildtrace reads what perf stores), plus corruption, removal, pruning and archiving, links
 * and FIFOs planted inside the cache, size limits and sparse files. */
#include "testutil.h"
#include "symsrc/bidcache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
	char dir[64];          /* the temporary directory */
	char cache[128];
	char inl[PATH_MAX];    /* real paths of the fixture files */
	char dbg[PATH_MAX];
	char mini[PATH_MAX];
	char other[PATH_MAX];  /* a system binary, a third build-id */
	struct bt_build_id inl_id, mini_id, other_id;
};

static void fixture_path(const char *name, char *out)
{
	char rel[256];
	bt_test_fixture(rel, sizeof(rel), name);
	assert_non_null(realpath(rel, out));
}

/* The build-id as readelf prints it: the oracle for the hex form used in paths. */
static void readelf_id(const char *path, struct bt_build_id *id)
{
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out),
				     "readelf -n '%s' | awk '/Build ID/ { printf \"%%s\", $3 }'", path), 0);
	assert_int_equal(bt_buildid_parse_hex(out, id), 0);
	struct bt_build_id mine;
	assert_int_equal(bt_buildid_from_path(path, &mine), 0);
	assert_true(bt_buildid_eq(&mine, id));
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bt-bidcache-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->cache, sizeof(f->cache), "%s/cache", f->dir);
	fixture_path("symsrc/inl", f->inl);
	fixture_path("symsrc/inl.debug", f->dbg);
	fixture_path("symsrc/libmini.so", f->mini);
	assert_non_null(realpath("/bin/true", f->other));
	readelf_id(f->inl, &f->inl_id);
	readelf_id(f->mini, &f->mini_id);
	readelf_id(f->other, &f->other_id);
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

static int add_path(const char *cache, const struct bt_build_id *id, const char *path,
		    const char *as, bool debug)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	int err = debug ? bt_bidcache_add_debug_fd(cache, id, as, fd)
			: bt_bidcache_add_fd(cache, id, as, fd);
	close(fd);
	return err;
}

static const char *hex(const struct bt_build_id *id)
{
	static char buf[4][2 * BT_BUILD_ID_MAXLEN + 1];
	static int i;
	i = (i + 1) % 4;
	return bt_buildid_hex(id, buf[i], sizeof(buf[i]));
}

struct seen {
	size_t n;
	struct bt_bidcache_entry last;
	char orig[PATH_MAX];
	bool found_elf[3], found_debug[3];
	const struct bt_build_id *ids[3];
};

static int count_entry(void *ctx, const struct bt_bidcache_entry *e)
{
	struct seen *s = ctx;
	s->n++;
	s->last = *e;
	snprintf(s->orig, sizeof(s->orig), "%s", e->orig_path);
	for (int i = 0; i < 3; i++) {
		if (s->ids[i] && bt_buildid_eq(s->ids[i], &e->id)) {
			s->found_elf[i] = e->has_elf;
			s->found_debug[i] = e->has_debug;
		}
	}
	return 0;
}

static void bidcache__add_fd__perf_layout_and_listing(void **state)
{
	struct fx *f = *state;
	char out[8192], want[PATH_MAX + 200];
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	/* perf's layout: the link is "../.." + the original path + "/" + the build-id. */
	assert_int_equal(bt_test_run(out, sizeof(out), "readlink '%s/.build-id/%.2s/%s'", f->cache,
				     hex(&f->inl_id), hex(&f->inl_id) + 2), 0);
	snprintf(want, sizeof(want), "../..%s/%s\n", f->inl, hex(&f->inl_id));
	assert_string_equal(out, want);
	assert_int_equal(bt_test_run(NULL, 0, "cmp '%s' '%s%s/%s/elf'", f->inl, f->cache, f->inl,
				     hex(&f->inl_id)), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "DEBUGINFOD_URLS= perf --buildid-dir '%s' buildid-cache --list",
				     f->cache), 0);
	snprintf(want, sizeof(want), "%s %s\n", hex(&f->inl_id), f->inl);
	assert_string_equal(out, want);
	/* Writes go through temporary names that never survive. */
	assert_int_equal(bt_test_run(out, sizeof(out), "find '%s' -name '.*tmp*'", f->cache), 0);
	assert_string_equal(out, "");
}

static void bidcache__perf_added_entry__read_back(void **state)
{
	struct fx *f = *state;
	char out[4096], path[PATH_MAX];
	assert_int_equal(bt_test_run(out, sizeof(out), "DEBUGINFOD_URLS= perf --buildid-dir '%s' buildid-cache --add '%s' 2>&1",
				     f->cache, f->mini), 0);
	int fd = bt_bidcache_open(f->cache, &f->mini_id, BT_BIDCACHE_ELF, path, sizeof(path));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bt_test_run(NULL, 0, "cmp '%s' '%s'", f->mini, path), 0);
	assert_int_equal(bt_bidcache_open(f->cache, &f->mini_id, BT_BIDCACHE_DEBUG, NULL, 0), -ENOENT);
	struct seen s = { .ids = { &f->mini_id } };
	assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.orig, f->mini);
	assert_true(s.found_elf[0]);
	assert_false(s.found_debug[0]);
}

static void bidcache__add_twice__kept_not_rewritten(void **state)
{
	struct fx *f = *state;
	char elf[PATH_MAX + 256];
	struct stat a, b;
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	snprintf(elf, sizeof(elf), "%s%s/%s/elf", f->cache, f->inl, hex(&f->inl_id));
	assert_int_equal(stat(elf, &a), 0);
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	assert_int_equal(stat(elf, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
}

static void bidcache__wrong_build_id__refused(void **state)
{
	struct fx *f = *state;
	assert_int_equal(add_path(f->cache, &f->mini_id, f->inl, f->inl, false), -EINVAL);
	assert_int_equal(add_path(f->cache, &f->inl_id, "/etc/hostname", f->inl, false), -EINVAL);
	struct seen s = { 0 };
	assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
	assert_int_equal(s.n, 0);
}

static void bidcache__truncated_entry__ignored_then_repaired(void **state)
{
	struct fx *f = *state;
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	/* Cut after the build-id note but before the section headers. */
	struct stat st;
	assert_int_equal(stat(f->inl, &st), 0);
	assert_int_equal(bt_test_run(NULL, 0, "truncate -s %lld '%s%s/%s/elf'", (long long)st.st_size / 2,
				     f->cache, f->inl, hex(&f->inl_id)), 0);
	struct bt_build_id still;
	char elf[PATH_MAX + 256];
	snprintf(elf, sizeof(elf), "%s%s/%s/elf", f->cache, f->inl, hex(&f->inl_id));
	assert_int_equal(bt_buildid_from_path(elf, &still), 0);  /* the id alone would not tell */
	assert_int_equal(bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0), -EBADMSG);
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	int fd = bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bt_test_run(NULL, 0, "cmp '%s' '%s'", f->inl, elf), 0);
}

static void bidcache__entry_of_other_build_id__ignored(void **state)
{
	struct fx *f = *state;
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	assert_int_equal(bt_test_run(NULL, 0, "cp '%s' '%s%s/%s/elf'", f->mini, f->cache, f->inl,
				     hex(&f->inl_id)), 0);
	assert_int_equal(bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0), -EBADMSG);
}

static void bidcache__debug_file__joins_entry(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX];
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	/* No path given: the existing entry's directory receives it. */
	assert_int_equal(add_path(f->cache, &f->inl_id, f->dbg, NULL, true), 0);
	struct seen s = { .ids = { &f->inl_id } };
	assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
	assert_int_equal(s.n, 1);
	assert_true(s.found_elf[0] && s.found_debug[0]);
	int fd = bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_DEBUG, path, sizeof(path));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bt_test_run(NULL, 0, "cmp '%s' '%s'", f->dbg, path), 0);
	assert_non_null(strstr(path, f->inl));
}

static void bidcache__remove__only_that_entry(void **state)
{
	struct fx *f = *state;
	char out[4096], want[PATH_MAX + 100];
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	assert_int_equal(add_path(f->cache, &f->inl_id, f->dbg, f->inl, true), 0);
	assert_int_equal(add_path(f->cache, &f->mini_id, f->mini, f->mini, false), 0);
	assert_int_equal(bt_bidcache_remove(f->cache, &f->inl_id), 0);
	assert_int_equal(bt_bidcache_remove(f->cache, &f->inl_id), -ENOENT);
	assert_int_equal(bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0), -ENOENT);
	assert_int_equal(bt_test_run(out, sizeof(out), "find '%s' -path '*/inl*'", f->cache), 0);
	assert_string_equal(out, "");
	assert_int_equal(bt_test_run(out, sizeof(out), "DEBUGINFOD_URLS= perf --buildid-dir '%s' buildid-cache --list",
				     f->cache), 0);
	snprintf(want, sizeof(want), "%s %s\n", hex(&f->mini_id), f->mini);
	assert_string_equal(out, want);
}

static void set_used(const char *cache, const struct bt_build_id *id, time_t t)
{
	char lp[PATH_MAX];
	snprintf(lp, sizeof(lp), "%s/.build-id/%.2s/%s", cache, hex(id), hex(id) + 2);
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, lp, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

static void bidcache__prune__least_recently_used_first(void **state)
{
	struct fx *f = *state;
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	assert_int_equal(add_path(f->cache, &f->mini_id, f->mini, f->mini, false), 0);
	assert_int_equal(add_path(f->cache, &f->other_id, f->other, f->other, false), 0);
	set_used(f->cache, &f->inl_id, 1000);
	set_used(f->cache, &f->mini_id, 2000);
	set_used(f->cache, &f->other_id, 3000);
	/* Opening marks use: inl becomes the most recent. */
	int fd = bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0);
	assert_true(fd >= 0);
	close(fd);
	size_t removed = 0;
	uint64_t freed = 0;
	uint64_t keep = file_size(f->inl) + file_size(f->other);
	assert_int_equal(bt_bidcache_prune(f->cache, keep, &removed, &freed), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(freed, file_size(f->mini));
	struct seen s = { .ids = { &f->inl_id, &f->mini_id, &f->other_id } };
	assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
	assert_int_equal(s.n, 2);
	assert_true(s.found_elf[0] && !s.found_elf[1] && s.found_elf[2]);
	assert_int_equal(bt_bidcache_prune(f->cache, 0, &removed, NULL), 0);
	assert_int_equal(removed, 2);
	s = (struct seen){ 0 };
	assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
	assert_int_equal(s.n, 0);
}

static void bidcache__archive__extracts_into_a_working_cache(void **state)
{
	struct fx *f = *state;
	char tar[256], other[256], out[8192], want[PATH_MAX + 100];
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	assert_int_equal(add_path(f->cache, &f->inl_id, f->dbg, f->inl, true), 0);
	assert_int_equal(add_path(f->cache, &f->mini_id, f->mini, f->mini, false), 0);
	snprintf(tar, sizeof(tar), "%s/x.tar", f->dir);
	snprintf(other, sizeof(other), "%s/other", f->dir);
	int fd = open(tar, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t count = 0;
	assert_int_equal(bt_bidcache_archive(f->cache, &f->inl_id, 1, fd, &count), 0);
	close(fd);
	assert_int_equal(count, 1);
	assert_int_equal(bt_test_run(out, sizeof(out), "mkdir '%s' && tar -xf '%s' -C '%s' && "
				     "DEBUGINFOD_URLS= perf --buildid-dir '%s' buildid-cache --list", other, tar, other,
				     other), 0);
	snprintf(want, sizeof(want), "%s %s\n", hex(&f->inl_id), f->inl);
	assert_string_equal(out, want);
	char path[PATH_MAX];
	fd = bt_bidcache_open(other, &f->inl_id, BT_BIDCACHE_DEBUG, path, sizeof(path));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bt_test_run(NULL, 0, "cmp '%s' '%s'", f->dbg, path), 0);
	assert_int_equal(bt_bidcache_open(other, &f->mini_id, BT_BIDCACHE_ELF, NULL, 0), -ENOENT);
	/* Everything when no build-id is named. */
	fd = open(tar, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(bt_bidcache_archive(f->cache, NULL, 0, fd, &count), 0);
	close(fd);
	assert_int_equal(count, 2);
	assert_int_equal(bt_test_run(out, sizeof(out), "tar -tf '%s' | grep -c /elf", tar), 0);
	assert_string_equal(out, "2\n");
}

static void bidcache__unusable_paths__stored_as_unknown(void **state)
{
	struct fx *f = *state;
	static const char *const bad[] = { NULL, "relative/inl", "/a/../inl", "/a//inl", "/a/./inl",
					   "/.build-id/ab", "/", "/dir/" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, bad[i], false), 0);
		struct seen s = { 0 };
		assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
		assert_int_equal(s.n, 1);
		assert_string_equal(s.orig, "[unknown]");
		assert_int_equal(bt_bidcache_remove(f->cache, &f->inl_id), 0);
	}
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "ls -A '%s'", f->cache), 0);
	assert_string_equal(out, ".build-id\n");
}

static void bidcache__deleted_suffix__dropped(void **state)
{
	struct fx *f = *state;
	char as[PATH_MAX + 16];
	snprintf(as, sizeof(as), "%s (deleted)", f->inl);
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, as, false), 0);
	struct seen s = { 0 };
	assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
	assert_string_equal(s.orig, f->inl);
}

static void bidcache__missing_cache__empty(void **state)
{
	struct fx *f = *state;
	struct seen s = { 0 };
	assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0), -ENOENT);
	assert_int_equal(bt_bidcache_remove(f->cache, &f->inl_id), -ENOENT);
	size_t removed = 7;
	assert_int_equal(bt_bidcache_prune(f->cache, 0, &removed, NULL), 0);
	assert_int_equal(removed, 0);
}

static void bidcache__escaping_link__not_followed(void **state)
{
	struct fx *f = *state;
	char out[256];
	/* A link whose target climbs out of the cache, to a file that must survive removal. */
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p '%s/.build-id/%.2s' '%s/victim/%s' && "
				     "cp '%s' '%s/victim/%s/elf' && ln -s '../../../victim/%s' "
				     "'%s/.build-id/%.2s/%s'", f->cache, hex(&f->inl_id), f->dir,
				     hex(&f->inl_id), f->inl, f->dir, hex(&f->inl_id), hex(&f->inl_id),
				     f->cache, hex(&f->inl_id), hex(&f->inl_id) + 2), 0);
	assert_int_equal(bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0), -EBADMSG);
	assert_int_equal(bt_bidcache_remove(f->cache, &f->inl_id), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "ls '%s/victim/%s'", f->dir, hex(&f->inl_id)), 0);
	assert_string_equal(out, "elf\n");
}

/* Files in a directory outside the cache, listed: what the attacks below must leave alone. */
static void victim_listing(const struct fx *f, char *out, size_t len)
{
	assert_int_equal(bt_test_run(out, len, "cd '%s/victim' && find . | sort | tr '\\n' ' '", f->dir), 0);
}

static void make_victim(const struct fx *f)
{
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p '%s/victim' && echo keep > '%s/victim/keep'", f->dir,
				     f->dir), 0);
}

/* A directory of the entry's path planted as a link to a directory outside: the store fails with
 * ELOOP and writes nothing there; nothing is listed through it. */
static void bidcache__link_in_entry_path__store_refused_nothing_outside(void **state)
{
	struct fx *f = *state;
	char out[4096];
	make_victim(f);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p '%s' && ln -s '%s/victim' '%s/x'", f->cache, f->dir,
				     f->cache), 0);
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, "/x/inl", false), -ELOOP);
	victim_listing(f, out, sizeof(out));
	assert_string_equal(out, ". ./keep ");
	/* .build-id itself a link: the link is not written there either */
	assert_int_equal(bt_test_run(NULL, 0, "ln -s '%s/victim' '%s/.build-id'", f->dir, f->cache), 0);
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, "/y/inl", false), -ELOOP);
	victim_listing(f, out, sizeof(out));
	assert_string_equal(out, ". ./keep ");
	struct seen s = { 0 };
	assert_true(bt_bidcache_foreach(f->cache, count_entry, &s) != 0 || s.n == 0);
	assert_int_equal(s.n, 0);
}

/* An entry whose link goes through a planted directory link: open, list, remove and archive see
 * nothing there, and remove deletes nothing outside the cache. */
static void bidcache__entry_through_link__not_opened_not_removed(void **state)
{
	struct fx *f = *state;
	char out[4096];
	const char *h = hex(&f->inl_id);
	make_victim(f);
	/* victim/HEX/elf is a valid copy: only the way to it is foreign */
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p '%s/victim/%s' && cp '%s' '%s/victim/%s/elf' && "
				     "mkdir -p '%s/.build-id/%.2s' && ln -s '%s/victim' '%s/evil' && "
				     "ln -s '../../evil/%s' '%s/.build-id/%.2s/%s'", f->dir, h, f->inl, f->dir, h,
				     f->cache, h, f->dir, f->cache, h, f->cache, h, h + 2), 0);
	assert_int_equal(bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0), -EBADMSG);
	struct seen s = { .ids = { &f->inl_id } };
	assert_int_equal(bt_bidcache_foreach(f->cache, count_entry, &s), 0);
	assert_int_equal(s.n, 1);
	assert_false(s.found_elf[0]);
	assert_int_equal(s.last.size, 0);
	assert_int_equal(bt_bidcache_remove(f->cache, &f->inl_id), 0);
	victim_listing(f, out, sizeof(out));
	char want[256];
	snprintf(want, sizeof(want), ". ./%s ./%s/elf ./keep ", h, h);
	assert_string_equal(out, want);
	/* the cache's own link went, the planted directory link stays (it is not an entry's file) */
	assert_int_equal(bt_test_run(out, sizeof(out), "cd '%s' && find . | sort | tr '\\n' ' '", f->cache), 0);
	assert_string_equal(out, ". ./.build-id ./evil ");
}

/* A FIFO as an entry's file: refused without blocking (it is never opened for reading). */
static void bidcache__fifo_entry__refused_not_opened(void **state)
{
	struct fx *f = *state;
	const char *h = hex(&f->inl_id);
	assert_int_equal(add_path(f->cache, &f->inl_id, f->inl, f->inl, false), 0);
	assert_int_equal(bt_test_run(NULL, 0, "rm '%s%s/%s/elf' && mkfifo '%s%s/%s/elf'", f->cache, f->inl, h,
				     f->cache, f->inl, h), 0);
	assert_int_equal(bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, NULL, 0), -EBADMSG);
}

/* Limits: a file over max_file and a store beyond max_total are refused and counted; the budget
 * measures the cache once and keeps count of its own stores. */
static void bidcache__limits__refused_and_counted(void **state)
{
	struct fx *f = *state;
	struct stat st;
	assert_int_equal(stat(f->inl, &st), 0);
	struct bt_bidcache_budget b = { .max_file = (uint64_t)st.st_size - 1 };
	int fd = open(f->inl, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(bt_bidcache_store(f->cache, &b, BT_BIDCACHE_ELF, &f->inl_id, f->inl, fd), -EFBIG);
	assert_int_equal(b.too_large, 1);
	close(fd);
	/* room for inl but not for mini after it */
	struct stat sm;
	assert_int_equal(stat(f->mini, &sm), 0);
	b = (struct bt_bidcache_budget){ .max_total = (uint64_t)st.st_size + (uint64_t)sm.st_size - 1 };
	fd = open(f->inl, O_RDONLY);
	assert_int_equal(bt_bidcache_store(f->cache, &b, BT_BIDCACHE_ELF, &f->inl_id, f->inl, fd), 0);
	close(fd);
	assert_int_equal(b.used, (uint64_t)st.st_size);
	fd = open(f->mini, O_RDONLY);
	assert_int_equal(bt_bidcache_store(f->cache, &b, BT_BIDCACHE_ELF, &f->mini_id, f->mini, fd), -ENOSPC);
	close(fd);
	assert_int_equal(b.full, 1);
	assert_int_equal(bt_bidcache_open(f->cache, &f->mini_id, BT_BIDCACHE_ELF, NULL, 0), -ENOENT);
	/* a fresh budget with the same limit measures the cache itself */
	struct bt_bidcache_budget b2 = { .max_total = b.max_total };
	fd = open(f->mini, O_RDONLY);
	assert_int_equal(bt_bidcache_store(f->cache, &b2, BT_BIDCACHE_ELF, &f->mini_id, f->mini, fd), -ENOSPC);
	close(fd);
	assert_int_equal(b2.used, (uint64_t)st.st_size);
}

/* A sparse ELF of 1 GiB (its program, then a hole): stored with its holes, readable, and
 * identical to the original (cmp as the oracle). */
static void bidcache__sparse_file__holes_kept(void **state)
{
	struct fx *f = *state;
	char big[128], out[256];
	snprintf(big, sizeof(big), "%s/big", f->dir);
	assert_int_equal(bt_test_run(NULL, 0, "cp '%s' '%s' && truncate -s 1G '%s'", f->inl, big, big), 0);
	struct bt_bidcache_budget b = { .max_file = 2ULL << 30, .max_total = 4ULL << 30 };
	int fd = open(big, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(bt_bidcache_store(f->cache, &b, BT_BIDCACHE_ELF, &f->inl_id, big, fd), 0);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);  /* the caller's offset kept */
	close(fd);
	char path[PATH_MAX];
	fd = bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_ELF, path, sizeof(path));
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	assert_int_equal(st.st_size, 1LL << 30);
	assert_true((uint64_t)st.st_blocks * 512 < (16ULL << 20));
	assert_int_equal(bt_test_run(out, sizeof(out), "cmp '%s' '%s'", big, path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(bidcache__add_fd__perf_layout_and_listing),
		T(bidcache__perf_added_entry__read_back),
		T(bidcache__add_twice__kept_not_rewritten),
		T(bidcache__wrong_build_id__refused),
		T(bidcache__truncated_entry__ignored_then_repaired),
		T(bidcache__entry_of_other_build_id__ignored),
		T(bidcache__debug_file__joins_entry),
		T(bidcache__remove__only_that_entry),
		T(bidcache__prune__least_recently_used_first),
		T(bidcache__archive__extracts_into_a_working_cache),
		T(bidcache__unusable_paths__stored_as_unknown),
		T(bidcache__deleted_suffix__dropped),
		T(bidcache__missing_cache__empty),
		T(bidcache__escaping_link__not_followed),
		T(bidcache__link_in_entry_path__store_refused_nothing_outside),
		T(bidcache__entry_through_link__not_opened_not_removed),
		T(bidcache__fifo_entry__refused_not_opened),
		T(bidcache__limits__refused_and_counted),
		T(bidcache__sparse_file__holes_kept),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
