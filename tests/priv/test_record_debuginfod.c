/* test_record_debuginfod.c - the live session names the frames of a stripped program from a debug
 * file that only a debuginfod server (started here, on loopback) has; then, with the server gone,
 * from the build-id cache that session filled. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SESSION_DIR "build/tests/session"
#define TMP "build/tests/tmp-dbgd"

static pid_t start_server(int port)
{
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		char p[16];
		snprintf(p, sizeof(p), "%d", port);
		freopen(TMP "/server.log", "w", stdout);
		dup2(1, 2);
		execlp("debuginfod", "debuginfod", "-F", "-p", p, "-d", TMP "/db.sqlite", "-t", "0", "-g", "0",
		       "-c", "1", TMP "/srv", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Runs buildtrace on the stripped spinner (which waits 1 s for it to attach, then burns 1.5 s). */
static int profile(const char *env, const char *folded, char *out, size_t len)
{
	return bt_test_run(out, len,
		"%s " SESSION_DIR "/dspin 1 1.5 >/dev/null & p=$!; "
		"%s ./buildtrace -p $p --cache-dir " TMP "/cache -o %s 2>&1; rc=$?; wait $p; exit $rc",
		env, env, folded);
}

static void record__debug_file_only_on_debuginfod__named_then_cached(void **state)
{
	bt_test_require_priv();
	char out[4096], hex[128];
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP "/srv && cp " SESSION_DIR
				     "/dspin.debug " TMP "/srv/"), 0);
	assert_int_equal(bt_test_run(hex, sizeof(hex), "readelf -n " SESSION_DIR "/dspin | "
				     "awk '/Build ID/{printf \"%%s\", $3}'"), 0);
	assert_true(strlen(hex) >= 16);
	bt_test_isolate_network();
	int port = bt_test_free_port();
	assert_true(port > 0);

	/* Without any source of its symbols, the program's own frames stay unnamed, and say so. */
	int rc = profile("DEBUGINFOD_URLS=", TMP "/none.folded", out, sizeof(out));
	assert_int_equal(rc, 0);
	assert_true(bt_test_run(NULL, 0, "grep -q 'burn' " TMP "/none.folded") != 0);
	assert_int_equal(bt_test_run(NULL, 0, "grep -q '\\[dspin+0x' " TMP "/none.folded"), 0);

	pid_t srv = start_server(port);
	char path[256];
	snprintf(path, sizeof(path), "/buildid/%s/debuginfo", hex);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (bt_test_http_status(port, path) != 200) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 30) {
			kill(srv, SIGTERM);
			fail_msg("debuginfod did not serve the debug file; see " TMP "/server.log");
		}
		usleep(100000);
	}
	char env[256];
	snprintf(env, sizeof(env), "DEBUGINFOD_URLS=http://127.0.0.1:%d DEBUGINFOD_CACHE_PATH=" TMP "/client",
		 port);
	rc = profile(env, TMP "/served.folded", out, sizeof(out));
	kill(srv, SIGTERM);
	waitpid(srv, NULL, 0);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_run(NULL, 0, "grep -q ';main;burn ' " TMP "/served.folded"), 0);

	/* The server is gone and the client's own cache with it: the build-id cache alone names them. */
	bt_test_run(NULL, 0, "rm -rf " TMP "/client");
	rc = profile(env, TMP "/cached.folded", out, sizeof(out));
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_run(NULL, 0, "grep -q ';main;burn ' " TMP "/cached.folded"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(record__debug_file_only_on_debuginfod__named_then_cached),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
