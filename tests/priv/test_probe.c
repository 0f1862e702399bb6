/* test_probe.c - the probe cache against perf's: a probe `buildtrace probe add` stores is listed by
 * `perf probe --cache --list`, and one perf cached is traced by buildtrace; after a library is
 * replaced on disk, a cached probe for the old build is refused for a process of the new build
 * (both build-ids named), still counts every call in the process that maps the old one, and is
 * resolved again for the new build with --force. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-probe"
#define PROGS "build/tests/progs/trace"
#define TRHOST PROGS "/trhost"
#define TRACEE "build/tests/progs/tracee"

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP "/lib " TMP "/cache && cp " PROGS
			   "/v1/libtrlib.so " TMP "/lib/libtrlib.so") == 0 ? 0 : -1;
}

static long total(const char *folded)
{
	char out[64];
	if (bt_test_run(out, sizeof(out), "tests/tools/foldtool.py total %s", folded) != 0)
		return -1;
	return atol(out);
}

static void readelf_id(const char *path, char *hex, size_t len)
{
	bt_test_run(hex, len, "LC_ALL=C readelf -nW '%s' | sed -n 's/.*Build ID: \\([0-9a-f]*\\).*/\\1/p'", path);
	hex[strcspn(hex, "\n")] = '\0';
}

static void probe__added__perf_lists_it(void **state)
{
	bt_test_require_priv();
	char out[8192], id[128];
	readelf_id(TMP "/lib/libtrlib.so", id, sizeof(id));
	int rc = bt_test_run(out, sizeof(out), "./buildtrace probe add --cache-dir " TMP "/cache " TMP
			     "/lib/libtrlib.so:trlib_work 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "probe_libtrlib:trlib_work"));
	assert_non_null(strstr(out, id));
	rc = bt_test_run(out, sizeof(out), "perf --buildid-dir " TMP "/cache probe --cache --list 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	/* perf: "PATH (BUILDID):" then the entry's command */
	assert_non_null(strstr(out, id));
	assert_non_null(strstr(out, "trlib_work"));
	rc = bt_test_run(out, sizeof(out), "./buildtrace probe list --cache-dir " TMP "/cache 2>&1");
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "probe_libtrlib:trlib_work\t"));
}

static void probe__remove_and_bad_input(void **state)
{
	bt_test_require_priv();
	char out[8192];
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace probe add --cache-dir " TMP "/rcache " TRACEE
				     ":tracee_hit " TRACEE ":tracee_outer 2>&1"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace probe remove --cache-dir " TMP "/rcache "
				     "probe_tracee:tracee_hit 2>&1"), 0);
	bt_test_run(out, sizeof(out), "./buildtrace probe list --cache-dir " TMP "/rcache 2>&1");
	assert_null(strstr(out, "probe_tracee:tracee_hit\t"));
	assert_non_null(strstr(out, "probe_tracee:tracee_outer\t"));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace probe remove --cache-dir " TMP "/rcache "
				     "probe_tracee:tracee_hit 2>&1"), 1);
	assert_non_null(strstr(out, "no probe probe_tracee:tracee_hit"));
	/* what it cannot key by build-id, or find */
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace probe add --cache-dir " TMP "/rcache "
				     "build/tests/progs/tracee-nobid:tracee_hit 2>&1"), 1);
	assert_non_null(strstr(out, "has no GNU build-id"));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace probe add --cache-dir " TMP "/rcache " TRACEE
				     ":nothing_here 2>&1"), 1);
	assert_non_null(strstr(out, "no function nothing_here"));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace probe frobnicate 2>&1"), 2);
	/* a cached probe that is not there */
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace trace --cache-dir " TMP "/rcache "
				     "cache:probe_tracee:nothing -- " TRACEE " 1 2>&1"), 1);
	assert_non_null(strstr(out, "no probe probe_tracee:nothing in the probe cache"));
}

static void probe__perf_cached__traced(void **state)
{
	bt_test_require_priv();
	char out[8192];
	/* perf places the event as well as caching it: it is deleted at once, the cache stays (perf
	 * 6.1 caches nothing for relative paths) */
	int rc = bt_test_run(out, sizeof(out), "perf --buildid-dir $PWD/" TMP "/pcache probe -x $PWD/" TRACEE
			     " --cache --add tracee_hit 2>&1; perf probe -d 'probe_tracee:tracee_hit' 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	rc = bt_test_run(out, sizeof(out), "./buildtrace probe list --cache-dir " TMP "/pcache 2>&1");
	print_message("%s", out);
	assert_non_null(strstr(out, "probe_tracee:tracee_hit\t"));
	rc = bt_test_run(out, sizeof(out), "./buildtrace trace --cache-dir " TMP "/pcache -o " TMP
			 "/perf.folded cache:probe_tracee:tracee_hit -- " TRACEE " 321 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "calls: 321"));
	assert_int_equal(total(TMP "/perf.folded"), 321);
	assert_int_equal(bt_test_run(NULL, 0, "grep -q ';tracee_hit 321$' " TMP "/perf.folded"), 0);
}

/* A marker stored by buildtrace is the line perf writes for it when it caches the file's markers
 * itself (perf buildid-cache --add scans them), arguments and semaphore included. */
static void probe__sdt_added__the_line_perf_writes(void **state)
{
	bt_test_require_priv();
	if (access("/usr/bin/python3.11", R_OK) != 0)
		fail_msg("/usr/bin/python3.11 (Debian's python3, with SDT markers) is needed");
	char out[8192], ours[1024], perfs[1024];
	int rc = bt_test_run(out, sizeof(out), "rm -rf " TMP "/sdtb " TMP "/sdtp; ./buildtrace probe add --cache-dir "
			     TMP "/sdtb sdt:/usr/bin/python3.11:python:function__entry sdt:/usr/bin/python3.11:python:gc__start 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 0);
	rc = bt_test_run(out, sizeof(out), "perf --buildid-dir $PWD/" TMP "/sdtp buildid-cache --add /usr/bin/python3.11 2>&1");
	assert_int_equal(rc, 0);
	for (int i = 0; i < 2; i++) {
		const char *ev = i ? "gc__start" : "function__entry";
		bt_test_run(ours, sizeof(ours), "grep '^p:sdt_python/%s ' " TMP "/sdtb/usr/bin/python3.11/*/probes", ev);
		bt_test_run(perfs, sizeof(perfs), "grep '^p:sdt_python/%s ' " TMP "/sdtp/usr/bin/python3.11/*/probes", ev);
		print_message("ours: %sperf: %s", ours, perfs);
		assert_true(ours[0]);
		assert_string_equal(ours, perfs);
	}
}

/* Starts trhost (waiting for SIGUSR1); its pid, once it is ready. */
static pid_t start_host(const char *out)
{
	char cmd[256];
	bt_test_run(NULL, 0, "rm -f %s", out);  /* an earlier run's "ready" must not count */
	snprintf(cmd, sizeof(cmd), "exec " TRHOST " 400 > %s", out);
	pid_t p = bt_test_spawn(cmd);
	assert_true(bt_test_wait_for_text(out, "ready", p));
	return p;
}

/* Traces host with buildtrace (extra options), lets it run, and returns buildtrace's log. */
static int trace_host(pid_t host, const char *extra, const char *name, char *log, size_t len)
{
	char cmd[1024], logf[256], folded[256];
	snprintf(logf, sizeof(logf), TMP "/%s.log", name);
	snprintf(folded, sizeof(folded), TMP "/%s.folded", name);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace trace --cache-dir " TMP "/cache %s -p %d -o %s "
		 "cache:probe_libtrlib:trlib_work 2> %s", extra, (int)host, folded, logf);
	pid_t bt = bt_test_spawn(cmd);
	assert_true(bt_test_wait_for_text(logf, "tracing 1 probe", bt));
	kill(host, SIGUSR1);
	int st;
	waitpid(host, &st, 0);
	waitpid(bt, &st, 0);
	bt_test_run(log, len, "cat %s", logf);
	print_message("%s", log);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return (int)total(folded);
}

static void probe__library_replaced__old_build_only(void **state)
{
	bt_test_require_priv();
	char out[8192], v1[128], v2[128];
	readelf_id(PROGS "/v1/libtrlib.so", v1, sizeof(v1));
	readelf_id(PROGS "/v2/libtrlib.so", v2, sizeof(v2));
	assert_string_not_equal(v1, v2);
	assert_int_equal(bt_test_run(out, sizeof(out), "cp " PROGS "/v1/libtrlib.so " TMP "/lib/libtrlib.so && "
				     "./buildtrace probe add --cache-dir " TMP "/cache " TMP
				     "/lib/libtrlib.so:trlib_work 2>&1"), 0);
	pid_t old = start_host(TMP "/old.out");
	/* replaced the way package managers do: a new file renamed over the old name */
	assert_int_equal(bt_test_run(NULL, 0, "cp " PROGS "/v2/libtrlib.so " TMP "/lib/libtrlib.so.new && mv -f "
				     TMP "/lib/libtrlib.so.new " TMP "/lib/libtrlib.so"), 0);
	pid_t new = start_host(TMP "/new.out");
	int rc = bt_test_run(out, sizeof(out), "./buildtrace trace --cache-dir " TMP "/cache -p %d "
			     "cache:probe_libtrlib:trlib_work 2>&1", (int)new);
	print_message("%s", out);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, v1));
	assert_non_null(strstr(out, v2));
	assert_non_null(strstr(out, "refused"));
	/* the same for a new process started by trace itself */
	rc = bt_test_run(out, sizeof(out), "./buildtrace trace --cache-dir " TMP "/cache "
			 "cache:probe_libtrlib:trlib_work -- " TRHOST " 1 2>&1");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, v1));
	assert_non_null(strstr(out, v2));
	/* the process of the old build: every call */
	assert_int_equal(trace_host(old, "", "old", out, sizeof(out)), 400);
	bt_test_run(out, sizeof(out), "cat " TMP "/old.out");
	assert_non_null(strstr(out, "calls: 400"));
	/* --force resolves it again in the new build */
	assert_int_equal(trace_host(new, "--force", "new", out, sizeof(out)), 400);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe__added__perf_lists_it),
		cmocka_unit_test(probe__perf_cached__traced),
		cmocka_unit_test(probe__remove_and_bad_input),
		cmocka_unit_test(probe__library_replaced__old_build_only),
		cmocka_unit_test(probe__sdt_added__the_line_perf_writes),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
