/* testutil.h - helpers shared by the cmocka test binaries: oracles run as commands, fixture paths,
 * and the rule that a privileged test skips outside CI but fails under CI=true. */
#ifndef BT_TESTUTIL_H
#define BT_TESTUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Directory of the fixtures built by the test Makefile (build/fixtures), relative to the repo root. */
#define BT_FIXTURE_DIR "build/fixtures"

/* Runs a shell command and captures up to len-1 bytes of its stdout (NUL-terminated).
 * Returns the command's exit status, or -1 if it could not be run. */
int bt_test_run(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Starts "sh -c cmd" in the background; its pid. The _group variant puts it in a process group of
 * its own (kill(-pid, ...) reaches everything it started). */
pid_t bt_test_spawn(const char *cmd);
pid_t bt_test_spawn_group(const char *cmd);

/* bt_test_spawn_group, the group remembered (up to 32 at once) until bt_test_end_kept, a teardown's
 * step, kills each one the test did not wait for itself, and waits for it. */
pid_t bt_test_spawn_kept(const char *cmd);
void bt_test_end_kept(void);

/* Makes the local user name exist (a system account: no home, no login shell) for tests that act
 * as another user; the shell's status (0 when it exists). */
int bt_test_ensure_user(const char *name);

/* perf as the oracle for a profile of process pid: bt_test_perf_record starts `perf record -e
 * cpu-clock -F 99 --call-graph callgraph -p pid -- sleep seconds` writing data (its messages go to
 * data.log) and returns its pid to wait for; bt_test_perf_fold runs `perf script` (plus the extra
 * options) on data and folds its stacks into folded with tests/tools/foldtool.py: the shell's status. */
pid_t bt_test_perf_record(int pid, const char *callgraph, int seconds, const char *data);
/* The same at hz samples per second. */
pid_t bt_test_perf_record_at(int pid, const char *callgraph, int hz, int seconds, const char *data);
int bt_test_perf_fold(const char *data, const char *extra, const char *folded);

/* Waits until the file at path holds needle while process pid runs (polled every 50 ms, no time
 * limit: a process that ends without writing it ends the wait): whether it came. */
bool bt_test_wait_for_text(const char *path, const char *needle, pid_t pid);

/* CPU seconds process pid has used (utime + stime of /proc/PID/stat), or -1 when it is gone. */
double bt_test_proc_cpu(pid_t pid);

/* True when CI=true is set in the environment. */
int bt_test_in_ci(void);

/* Skips the calling test (or fails it under CI=true) unless running with the privileges needed to
 * load and attach BPF programs. Use as the first statement of a privileged test. */
#define bt_test_require_priv()                                                          \
	do {                                                                            \
		const char *_why = bt_test_priv_missing();                              \
		if (_why) {                                                             \
			if (bt_test_in_ci())                                            \
				fail_msg("privileged test cannot run under CI: %s", _why); \
			skip();                                                         \
		}                                                                       \
	} while (0)

/* NULL when BPF programs can be loaded, else a short reason. */
const char *bt_test_priv_missing(void);

/* Formats a fixture path into buf: BT_FIXTURE_DIR "/" name. */
const char *bt_test_fixture(char *buf, size_t len, const char *name);

/* Moves the calling process into a network namespace of its own with loopback up, so test servers
 * are reachable from nowhere else. False when not allowed (then they listen on the real loopback). */
#include <stdbool.h>
bool bt_test_isolate_network(void);
/* A free TCP port on loopback, or -1. */
int bt_test_free_port(void);
/* The status code of GET path on loopback port, or -1. */
int bt_test_http_status(int port, const char *path);

/* The prefix pyenv installed CPython 3.minor in (versions/3.minor.N of PYENV_ROOT, default
 * /root/.pyenv; the highest N), its interpreter at bin/python3.minor and its shared libpython at
 * lib/libpython3.minor.so.1.0; NULL when there is none. */
const char *bt_test_pyenv(unsigned minor, char *buf, size_t len);

/* The whole file, malloc'ed (NUL-terminated beyond *len); fails the test when unreadable. */
void *bt_test_read_file(const char *path, size_t *len);

/* Writes text into path (created or emptied); fails the test when it cannot. */
void bt_test_write_text(const char *path, const char *text);

/* The exit status of child pid (128 + N when signal N ended it), waiting up to secs; -1 when it did
 * not end by then (it is then killed, with its process group when it leads one, and reaped). */
int bt_test_wait_exit(pid_t pid, double secs);
/* CLOCK_MONOTONIC in seconds. */
double bt_test_now_s(void);
/* The samples of the lines of a folded file that match an extended regular expression (grep -E),
 * totalled by tests/tools/foldtool.py; the lines go to FOLDED.matching. */
long bt_test_samples_matching(const char *folded, const char *ere);

/* The first number written "key": N in the file at path (the agent's status.json), or -1 when
 * there is no such file or key. */
long long bt_test_json_number(const char *path, const char *key);
/* Waits until that number reaches min, at most secs; fails the test when it does not. */
void bt_test_wait_json_number(const char *path, const char *key, long long min, double secs);

#endif
