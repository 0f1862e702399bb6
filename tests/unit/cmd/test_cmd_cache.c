/* test_cmd_cache.c - `buildtrace cache` and `buildtrace archive` run as commands, with perf and
 * tar as oracles: both tools agree on the cache's contents whichever of them wrote it. */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fx {
	char dir[64];
	char cache[128];
	char inl[PATH_MAX], stripped[PATH_MAX], mini[PATH_MAX];
	char inl_id[130], mini_id[130];
};

static void fixture_path(const char *name, char *out)
{
	char rel[256];
	bt_test_fixture(rel, sizeof(rel), name);
	assert_non_null(realpath(rel, out));
}

static void readelf_id(const char *path, char *out, size_t len)
{
	assert_int_equal(bt_test_run(out, len, "readelf -n '%s' | awk '/Build ID/ { printf \"%%s\", $3 }'",
				     path), 0);
	assert_true(strlen(out) >= 32);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bt-cmdcache-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->cache, sizeof(f->cache), "%s/cache", f->dir);
	fixture_path("symsrc/inl", f->inl);
	fixture_path("symsrc/inl.stripped", f->stripped);
	fixture_path("symsrc/libmini.so", f->mini);
	readelf_id(f->inl, f->inl_id, sizeof(f->inl_id));
	readelf_id(f->mini, f->mini_id, sizeof(f->mini_id));
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

static void cmd_cache__add_then_list__same_as_perf(void **state)
{
	struct fx *f = *state;
	char out[4096], perf[4096], want[2 * PATH_MAX + 300];
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir '%s' add '%s' '%s'",
				     f->cache, f->inl, f->mini), 0);
	snprintf(want, sizeof(want), "%s %s\n%s %s\n", f->inl_id, f->inl, f->mini_id, f->mini);
	assert_string_equal(out, want);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir '%s' list", f->cache), 0);
	assert_int_equal(bt_test_run(perf, sizeof(perf), "DEBUGINFOD_URLS= perf --buildid-dir '%s' buildid-cache --list",
				     f->cache), 0);
	assert_string_equal(out, perf);
	assert_non_null(strstr(out, f->inl_id));
	assert_non_null(strstr(out, f->mini_id));
}

static void cmd_cache__perf_entries__listed_and_symbolized(void **state)
{
	struct fx *f = *state;
	char out[4096], addr[64];
	assert_int_equal(bt_test_run(out, sizeof(out), "DEBUGINFOD_URLS= perf --buildid-dir '%s' buildid-cache --add '%s' 2>&1",
				     f->cache, f->inl), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir '%s' list -l", f->cache), 0);
	assert_non_null(strstr(out, f->inl_id));
	assert_non_null(strstr(out, " elf "));
	assert_int_equal(bt_test_run(addr, sizeof(addr), "nm '%s' | awk '$3 == \"fx_caller\" { print $1 }'",
				     f->inl), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --no-debuginfod --cache-dir '%s' "
				     "--root '%s' --build-id %s %s", f->cache, f->dir, f->inl_id, addr), 0);
	assert_non_null(strstr(out, "\tfx_caller+0x0\t"));
}

static void cmd_cache__stripped_with_debuglink__debug_file_kept(void **state)
{
	struct fx *f = *state;
	char out[4096];
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir '%s' add '%s'",
				     f->cache, f->stripped), 0);
	assert_non_null(strstr(out, "(with debug file)"));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir '%s' list -l", f->cache), 0);
	assert_non_null(strstr(out, " elf+debug "));
	/* The stripped binary is now fully symbolized from the cache, inlined frames included. */
	char addr[64];
	assert_int_equal(bt_test_run(addr, sizeof(addr), "nm '%s' | awk '$3 == \"fx_outer\" { print $1 }'",
				     f->inl), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --no-debuginfod --cache-dir '%s' "
				     "--root '%s' --build-id %s %s", f->cache, f->dir, f->inl_id, addr), 0);
	assert_non_null(strstr(out, "\tfx_outer+0x0\t"));
	assert_non_null(strstr(out, "inl.c:"));
}

static void cmd_cache__remove__entry_and_errors(void **state)
{
	struct fx *f = *state;
	char out[4096];
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' add '%s' '%s' >/dev/null",
				     f->cache, f->inl, f->mini), 0);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' remove %s", f->cache,
				     f->inl_id), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "DEBUGINFOD_URLS= perf --buildid-dir '%s' buildid-cache --list", f->cache), 0);
	assert_null(strstr(out, f->inl_id));
	assert_non_null(strstr(out, f->mini_id));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir '%s' remove %s 2>&1",
				     f->cache, f->inl_id), 1);
	assert_non_null(strstr(out, "not in the cache"));
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' remove xyz 2>/dev/null",
				     f->cache), 2);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' frobnicate 2>/dev/null",
				     f->cache), 2);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' add /nonexistent 2>/dev/null",
				     f->cache), 1);
}

static void cmd_cache__prune__down_to_size(void **state)
{
	struct fx *f = *state;
	char out[4096];
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' add '%s' '%s' >/dev/null",
				     f->cache, f->inl, f->mini), 0);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' prune 2>/dev/null", f->cache), 2);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' prune --max-size 1X "
				     "2>/dev/null", f->cache), 2);
	/* Large enough for both: nothing goes. */
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir '%s' prune --max-size 10M",
				     f->cache), 0);
	assert_string_equal(out, "removed 0 entries, 0 bytes\n");
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir '%s' prune --max-size 0",
				     f->cache), 0);
	assert_non_null(strstr(out, "removed 2 entries"));
	assert_int_equal(bt_test_run(out, sizeof(out), "DEBUGINFOD_URLS= perf --buildid-dir '%s' buildid-cache --list", f->cache), 0);
	assert_string_equal(out, "");
}

static void cmd_archive__ids_from_a_file__tarball_of_entries(void **state)
{
	struct fx *f = *state;
	char out[8192];
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace cache --cache-dir '%s' add '%s' '%s' >/dev/null",
				     f->cache, f->inl, f->mini), 0);
	/* A listing that mentions one build-id among other words. */
	assert_int_equal(bt_test_run(NULL, 0, "printf 'main;fx %s\\nnot-an-id 1234\\n' > '%s/ids.txt'",
				     f->inl_id, f->dir), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace archive --cache-dir '%s' -o '%s/a.tar' "
				     "'%s/ids.txt'", f->cache, f->dir, f->dir), 0);
	assert_non_null(strstr(out, "archived 1 entries"));
	assert_int_equal(bt_test_run(out, sizeof(out), "tar -tf '%s/a.tar'", f->dir), 0);
	char want[PATH_MAX + 200];
	snprintf(want, sizeof(want), ".build-id/%.2s/%s\n", f->inl_id, f->inl_id + 2);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "%s/%s/elf\n", f->inl + 1, f->inl_id);
	assert_non_null(strstr(out, want));
	assert_null(strstr(out, f->mini_id));
	/* By build-id on the command line, and everything with none. */
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace archive --cache-dir '%s' -o '%s/b.tar' %s "
				     ">/dev/null && tar -tf '%s/b.tar' | grep -c /elf", f->cache, f->dir, f->mini_id,
				     f->dir), 0);
	assert_string_equal(out, "1\n");
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace archive --cache-dir '%s' -o '%s/c.tar' "
				     ">/dev/null && mkdir '%s/x' && tar -xf '%s/c.tar' -C '%s/x' && "
				     "DEBUGINFOD_URLS= perf --buildid-dir '%s/x' buildid-cache --list | wc -l", f->cache, f->dir,
				     f->dir, f->dir, f->dir, f->dir), 0);
	assert_string_equal(out, "2\n");
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace archive --cache-dir '%s' 2>/dev/null", f->cache), 2);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace archive --cache-dir '%s' -o '%s/d.tar' "
				     "/nonexistent 2>/dev/null", f->cache, f->dir), 1);
	/* Neither the archive nor its temporary file is left behind. */
	assert_int_equal(bt_test_run(out, sizeof(out), "ls '%s' | grep -c '^d\\.tar'", f->dir), 1);
	assert_string_equal(out, "0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(cmd_cache__add_then_list__same_as_perf),
		T(cmd_cache__perf_entries__listed_and_symbolized),
		T(cmd_cache__stripped_with_debuglink__debug_file_kept),
		T(cmd_cache__remove__entry_and_errors),
		T(cmd_cache__prune__down_to_size),
		T(cmd_archive__ids_from_a_file__tarball_of_entries),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
