/* test_probecache.c - perf's probe cache files: definition lines as perf writes them (perf's own
 * output, kept here), entries added (the build-id cache entry made as well), replaced, listed and
 * removed in a cache of the test's own, and the group names perf gives files. */
#include "testutil.h"
#include "symsrc/probecache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void line__perf_forms__parsed(void **state)
{
	struct bt_pcache_probe p;
	/* lines `perf probe --cache` 6.1 wrote for Debian's python3.11 */
	assert_int_equal(bt_pcache_parse_line("p:sdt_python/function__entry /usr/bin/python3.11:0xc779b(0x67dd40) "
					      "arg1=%bp:u64 arg2=%r12:u64 arg3=%ax:s32", &p), 0);
	assert_string_equal(p.group, "sdt_python");
	assert_string_equal(p.event, "function__entry");
	assert_string_equal(p.path, "/usr/bin/python3.11");
	assert_int_equal(p.off, 0xc779b);
	assert_int_equal(p.ref_ctr_off, 0x67dd40);
	assert_false(p.ret);
	assert_string_equal(p.args, "arg1=%bp:u64 arg2=%r12:u64 arg3=%ax:s32");
	assert_int_equal(bt_pcache_parse_line("p:probe_python3/PyList_New /usr/bin/python3.11:0xd06c0", &p), 0);
	assert_string_equal(p.event, "PyList_New");
	assert_int_equal(p.off, 0xd06c0);
	assert_int_equal(p.ref_ctr_off, 0);
	assert_string_equal(p.args, "");
	assert_int_equal(bt_pcache_parse_line("r:probe_libc/malloc /usr/lib/x86_64-linux-gnu/libc.so.6:0x9a3f0", &p), 0);
	assert_true(p.ret);
}

static void line__malformed__refused(void **state)
{
	struct bt_pcache_probe p;
	const char *bad[] = { "", "x:g/e /f:0x1", "p:g/e", "p:/e /f:0x1", "p:g/ /f:0x1", "p:ge /f:0x1",
			      "p:g/e /f", "p:g/e /f:12", "p:g/e /f:0x", "p:g/e /f:0x1(0x2", "p:g/e /f:0x1junk" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bt_pcache_parse_line(bad[i], &p) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
}

static void group__as_perf_names_them(void **state)
{
	char g[64];
	bt_pcache_group("/usr/lib/x86_64-linux-gnu/libc.so.6", g, sizeof(g));
	assert_string_equal(g, "probe_libc");
	bt_pcache_group("/usr/bin/python3.11", g, sizeof(g));
	assert_string_equal(g, "probe_python3");
	bt_pcache_group("build/tests/progs/tracee-nobid", g, sizeof(g));
	assert_string_equal(g, "probe_tracee");
}

struct seen {
	int n;
	char events[8][800];
	struct bt_pcache_probe last;
};

static int collect(void *ctx, const struct bt_pcache_probe *p)
{
	struct seen *s = ctx;
	if (s->n < 8)
		snprintf(s->events[s->n], sizeof(s->events[0]), "%s/%s %s", p->group, p->event, p->header);
	s->n++;
	s->last = *p;
	return 0;
}

static void cache__add_replace_list_remove(void **state)
{
	char dir[] = "/tmp/bt-pcache-XXXXXX", rel[256], bin[PATH_MAX], probes[PATH_MAX + 64];
	assert_non_null(mkdtemp(dir));
	assert_non_null(realpath(bt_test_fixture(rel, sizeof(rel), "fx-sha1"), bin));
	struct bt_build_id id;
	assert_int_equal(bt_buildid_from_path(bin, &id), 0);
	int fd = open(bin, O_RDONLY);
	assert_true(fd >= 0);
	char line1[PATH_MAX + 64], line2[PATH_MAX + 64];
	snprintf(line1, sizeof(line1), "p:probe_fx/main %s:0x1139", bin);
	snprintf(line2, sizeof(line2), "p:probe_fx/other %s:0x1200(0x4010)", bin);
	const char *l1[] = { line1 }, *l2[] = { line2 };
	assert_int_equal(bt_pcache_add(dir, &id, bin, fd, false, "main", l1, 1), 0);
	assert_int_equal(bt_pcache_add(dir, &id, bin, fd, false, "other", l2, 1), 0);
	/* the same header again: replaced, not doubled */
	assert_int_equal(bt_pcache_add(dir, &id, bin, fd, false, "main", l1, 1), 0);
	struct seen s = { 0 };
	assert_int_equal(bt_pcache_foreach(dir, collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_true(bt_buildid_eq(&s.last.id, &id));
	assert_string_equal(s.events[0], "probe_fx/other other");
	assert_string_equal(s.events[1], "probe_fx/main main");
	/* in perf's place, the build-id cache's entry directory, mode 0600 */
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	snprintf(probes, sizeof(probes), "%s%s/%s/probes", dir, bin, bt_buildid_hex(&id, hex, sizeof(hex)));
	struct stat st;
	assert_int_equal(stat(probes, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(bt_pcache_remove(dir, "probe_fx", "other"), 1);
	assert_int_equal(bt_pcache_remove(dir, "probe_fx", "other"), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(bt_pcache_foreach(dir, collect, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.events[0], "probe_fx/main main");
	/* another build-id's file is refused */
	struct bt_build_id other = id;
	other.data[0] ^= 0xff;
	assert_int_equal(bt_pcache_add(dir, &other, bin, fd, false, "x", l1, 1), -EINVAL);
	close(fd);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(line__perf_forms__parsed),
		cmocka_unit_test(line__malformed__refused),
		cmocka_unit_test(group__as_perf_names_them),
		cmocka_unit_test(cache__add_replace_list_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
