/* test_agent_push.c - `buildtrace agent --push` against a loopback server standing in for
 * Pyroscope's POST /ingest (tests/tools/ingest_server.py): one pprof request per interval with
 * samples, windows that tile time, credentials and tenant headers, bodies that are the intervals'
 * own profiles (tests/tools/check_ingest.py compares them with the files the agent wrote); a server
 * that answers 500 or slowly costs no profile; the spool drained at SIGTERM and bounded while the
 * server is down; TLS verified against a CA file. */
#include "testutil.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TMP "build/tests/tmp-agent-push"
#define SPIN "build/tests/session/spin"

/* Ends every process group the test started (bt_test_spawn_kept) and did not wait for itself, so
 * that a test failing half-way leaves none running (an agent left behind would write into the next
 * run's directory). */
static int end_started(void **state)
{
	bt_test_end_kept();
	return 0;
}

/* Exit status of pid, waiting up to secs (then -1, the process killed). */
static void stop_group(pid_t pid)
{
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Files in dir whose names end in suffix. */
static int count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	size_t sl = strlen(suffix);
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		n += l > sl && !strcmp(de->d_name + l - sl, suffix) && !strstr(de->d_name, ".tmp.");
	}
	closedir(d);
	return n;
}

/* A number field of the status file ("key": N, the first one), or -1. */
static long long status_field(const char *status, const char *key)
{
	if (access(status, R_OK) != 0)
		return -1;
	size_t len;
	char *s = bt_test_read_file(status, &len);
	char k[96];
	snprintf(k, sizeof(k), "\"%s\": ", key);
	const char *at = strstr(s, k);
	long long v = at ? strtoll(at + strlen(k), NULL, 10) : -1;
	free(s);
	return v;
}

/* Waits until the status file's key reaches min (the agent got that far), at most secs. */
static void wait_field(const char *status, const char *key, long long min, double secs)
{
	double end = bt_test_now_s() + secs;
	while (status_field(status, key) < min && bt_test_now_s() < end)
		usleep(100000);
	if (status_field(status, key) < min)
		fail_msg("%s stayed below %lld in %s", key, min, status);
}

/* A config or credential file, 0600: a secret others may read is refused. */
static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
}

/* The receiver on port, recording into dir; extra: its options (--fail, --delay, --tls). */
static pid_t start_receiver(int port, const char *dir, const char *extra, bool tls)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "exec /usr/bin/python3 tests/tools/ingest_server.py %d %s %s", port, dir, extra);
	pid_t pid = bt_test_spawn_kept(cmd);
	char probe[256], out[64];
	snprintf(probe, sizeof(probe), "curl -sk -o /dev/null -w '%%{http_code}' %s://127.0.0.1:%d/ready",
		 tls ? "https" : "http", port);
	for (int i = 0; i < 200; i++) {
		bt_test_run(out, sizeof(out), "%s", probe);
		if (!strcmp(out, "200"))
			return pid;
		usleep(50000);
	}
	fail_msg("the receiver did not answer on port %d", port);
	return -1;
}

/* Runs check_ingest.py on what recv got and the agent's profiles in dir, with its options. */
static void check_ingest(const char *recv, const char *dir, const char *opts)
{
	char out[8192];
	int rc = bt_test_run(out, sizeof(out), "/usr/bin/python3 tests/tools/check_ingest.py %s %s %s 2>&1",
			     recv, dir, opts);
	print_message("%s", out);
	assert_int_equal(rc, 0);
}

static int setup(void **state)
{
	/* what an earlier run left is removed as far as it can be; the directory must exist */
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "rm -rf " TMP " 2>&1; mkdir -p " TMP " 2>&1");
	if (out[0])
		print_message("setup: %s", out);
	return rc == 0 ? 0 : -1;
}

/* The agent with config file conf and options opts, its output in TMP/NAME, messages in TMP/NAME.err. */
static pid_t start_agent(const char *name, const char *conf, const char *opts)
{
	char cwd[512], cmd[2048];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace agent --output-dir %s/" TMP "/%s --config %s -F 99 "
		 "--format pprof --max-files 100000 %s 2> " TMP "/%s.err", cwd, name, conf, opts, name);
	return bt_test_spawn_kept(cmd);
}

static void show_err(const char *name)
{
	char out[8192];
	bt_test_run(out, sizeof(out), "tail -n 20 " TMP "/%s.err", name);
	print_message("agent %s:\n%s", name, out);
}

/* A cgroup named as docker's systemd driver names a container's, in the cgroup2 hierarchy. */
#define CONTAINER "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Five intervals and a SIGTERM: one pprof request per interval with samples, windows tiling, the
 * bearer token (from a file) and the tenant header on every request, each body the interval's own
 * profile; the last interval's profile sent before the agent exits, status.json counting exactly
 * what the server acknowledged. The series name holds host, service_name and the configured labels;
 * the samples of a program run in a container's cgroup are labelled with its pid, tid, comm, path,
 * build-id (readelf's), cgroup and container id. */
static void push__intervals__one_pprof_request_each_tiled_with_auth(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	char opts[512];
	write_text(TMP "/token", "tok-123\n");
	write_text(TMP "/a.conf", "interval = 1\nbearer-token-file = " TMP "/token\n");
	pid_t srv = start_receiver(port, TMP "/recv-a", "", false);
	pid_t spin = bt_test_spawn_kept("exec " SPIN " 0 60");
	char mnt[512], out[4096], labels[8192], exe[4096];
	assert_int_equal(bt_test_run(mnt, sizeof(mnt), "awk '$9 == \"cgroup2\" { print $5; exit }' "
				     "/proc/self/mountinfo | tr -d '\\n'"), 0);
	assert_true(mnt[0] == '/');
	assert_int_equal(bt_test_run(out, sizeof(out), "rmdir %s/docker-" CONTAINER ".scope 2>/dev/null; "
				     "mkdir %s/docker-" CONTAINER ".scope && echo %d > %s/docker-" CONTAINER
				     ".scope/cgroup.procs", mnt, mnt, (int)spin, mnt), 0);
	char bid[128];
	assert_int_equal(bt_test_run(bid, sizeof(bid), "readelf -n " SPIN " | awk '/Build ID/ { printf \"%%s\", $3 }'"), 0);
	assert_non_null(realpath(SPIN, exe));
	snprintf(labels, sizeof(labels), "--labels 'pid=%d,tid=%d,comm=spin,exe=%s,build_id=%s,cgroup=/docker-"
		 CONTAINER ".scope,container_id=" CONTAINER "'", (int)spin, (int)spin, exe, bid);
	snprintf(opts, sizeof(opts), "--push http://127.0.0.1:%d --header 'X-Scope-OrgID: team-a' "
		 "--app-name testapp --label env=ci", port);
	pid_t ag = start_agent("a", TMP "/a.conf", opts);
	wait_field(TMP "/a/status.json", "intervals", 5, 90);
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 30);
	stop_group(spin);
	bt_test_run(NULL, 0, "rmdir %s/docker-" CONTAINER ".scope", mnt);
	show_err("a");
	assert_int_equal(rc, 0);
	/* the series: the machine, the configured labels and the application (no rules: every
	 * process has the same labels); nothing per process */
	char host[256], want[512];
	assert_int_equal(bt_test_run(host, sizeof(host), "hostname | tr -d '\\n' | tr -c 'A-Za-z0-9._-' _"), 0);
	snprintf(want, sizeof(want), "name=testapp.cpu%%7Bhost%%3D%s%%2Cenv%%3Dci%%2Cservice_name%%3Dtestapp%%7D&from=",
		 host);
	assert_int_equal(bt_test_run(out, sizeof(out), "sed -n 3p " TMP "/recv-a/0001.meta"), 0);
	if (!strstr(out, want))
		fail_msg("query %s lacks %s", out, want);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	char copts[9000];
	snprintf(copts, sizeof(copts), "--auth 'Bearer tok-123' --tenant team-a --status " TMP
		 "/a/status.json --min-acked 5 %s", labels);
	check_ingest(TMP "/recv-a", TMP "/a", copts);
	assert_int_equal(count_files(TMP "/a/spool", ".pprof"), 0);
}

/* off-cpu = yes: each interval's off-CPU time goes to the server as a series of its own, APP.off_cpu
 * with units=nanoseconds and aggregationType=sum, its profile's one sample type off_cpu/nanoseconds,
 * beside the CPU series, windows tiling in each; every nanosecond the agent counted is acknowledged
 * once. The blocking function of a program that sleeps is in it. */
static void push__off_cpu__own_series_in_nanoseconds(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	char opts[512], out[8192];
	write_text(TMP "/o.conf", "interval = 1\noff-cpu = yes\n");
	pid_t srv = start_receiver(port, TMP "/recv-o", "", false);
	pid_t prog = bt_test_spawn_kept("exec build/tests/progs/offcpu 60 > /dev/null");
	snprintf(opts, sizeof(opts), "--push http://127.0.0.1:%d --app-name offapp", port);
	pid_t ag = start_agent("o", TMP "/o.conf", opts);
	wait_field(TMP "/o/status.json", "intervals", 4, 90);
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 30);
	stop_group(prog);
	show_err("o");
	assert_int_equal(rc, 0);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	check_ingest(TMP "/recv-o", TMP "/o", "--status " TMP "/o/status.json --min-acked 3 --off-cpu 3");
	rc = bt_test_run(out, sizeof(out), "for f in " TMP "/o/buildtrace-off_cpu-*.pb.gz; do zcat $f; done | "
			 "grep -c -a sleep_phase");
	assert_int_equal(rc, 0);
	assert_int_equal(count_files(TMP "/o/spool", ".pprof"), 0);
}

/* The server answers the first three requests 500, and every answer takes half a second: the agent
 * backs off, keeps sampling, and in the end every interval's profile was acknowledged once (basic
 * auth from a file on each request); the failures are counted as errors, nothing as sent twice, and
 * the samples acknowledged are every sample the agent took. */
static void push__server_failing_and_slow__no_profile_lost(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	char opts[512];
	write_text(TMP "/basic", "user:pw\n");
	write_text(TMP "/b.conf", "interval = 1\nbasic-auth-file = " TMP "/basic\npush-drain = 60\n");
	pid_t srv = start_receiver(port, TMP "/recv-b", "--fail 3 --delay 0.5", false);
	pid_t spin = bt_test_spawn_kept("exec " SPIN " 0 60");
	snprintf(opts, sizeof(opts), "--push http://127.0.0.1:%d", port);
	pid_t ag = start_agent("b", TMP "/b.conf", opts);
	wait_field(TMP "/b/status.json", "errors", 3, 120);
	wait_field(TMP "/b/status.json", "sent", 1, 120);
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 90);
	stop_group(spin);
	show_err("b");
	assert_int_equal(rc, 0);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	/* "user:pw" in base64 */
	check_ingest(TMP "/recv-b", TMP "/b", "--auth 'Basic dXNlcjpwdw==' --status " TMP
		     "/b/status.json --min-failed 3 --min-acked 3");
	assert_int_equal(status_field(TMP "/b/status.json", "dropped"), 0);
}

/* No server, then one that takes connections and never answers: profiles wait in the spool, at most
 * spool-max-files of them, the oldest dropped and counted; SIGTERM cuts the request in flight after
 * push-drain seconds rather than the 20 s a request may take. The next run, with a server that
 * answers, sends what was spooled. */
static void push__server_down__spool_bounded_then_sent(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	char opts[512];
	write_text(TMP "/c.conf", "interval = 1\nspool-max-files = 3\npush-drain = 2\n");
	pid_t spin = bt_test_spawn_kept("exec " SPIN " 0 60");
	snprintf(opts, sizeof(opts), "--push http://127.0.0.1:%d", port);
	/* nothing listens yet: connections refused, profiles kept */
	pid_t ag = start_agent("c", TMP "/c.conf", opts);
	wait_field(TMP "/c/status.json", "errors", 1, 90);
	wait_field(TMP "/c/status.json", "spool_files", 1, 90);
	kill(ag, SIGTERM);
	assert_int_equal(bt_test_wait_exit(ag, 30), 0);
	assert_int_equal(status_field(TMP "/c/status.json", "sent"), 0);
	assert_true(count_files(TMP "/c/spool", ".pprof") >= 1);
	unlink(TMP "/c/status.json");
	pid_t srv = start_receiver(port, TMP "/recv-hang", "--delay 1000", false);
	ag = start_agent("c", TMP "/c.conf", opts);
	wait_field(TMP "/c/status.json", "intervals", 6, 90);
	double t0 = bt_test_now_s();
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 30);
	double took = bt_test_now_s() - t0;
	show_err("c");
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	assert_int_equal(rc, 0);
	/* the drain's bound, with room for the last interval's writing: not a timing of the agent's
	 * work, a check that a dead server does not hold the stop for the 20 s a request may take */
	assert_true(took < 15);
	char out[4096];
	bt_test_run(out, sizeof(out), "cat " TMP "/c/status.json");
	print_message("status with the server down: %s", out);
	int spooled = count_files(TMP "/c/spool", ".pprof");
	assert_true(spooled >= 1 && spooled <= 3);
	assert_true(status_field(TMP "/c/status.json", "dropped") >= 1);
	assert_true(status_field(TMP "/c/status.json", "errors") >= 1);
	assert_int_equal(status_field(TMP "/c/status.json", "sent"), 0);
	assert_int_equal(status_field(TMP "/c/status.json", "spool_files"), spooled);

	/* back up: the next run sends what was spooled */
	srv = start_receiver(port, TMP "/recv-c", "", false);
	write_text(TMP "/c2.conf", "interval = 30\n");
	ag = start_agent("c", TMP "/c2.conf", opts);
	double end = bt_test_now_s() + 60;
	while (count_files(TMP "/recv-c", ".meta") < spooled && bt_test_now_s() < end)
		usleep(200000);
	kill(ag, SIGTERM);
	assert_int_equal(bt_test_wait_exit(ag, 30), 0);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	stop_group(spin);
	assert_true(count_files(TMP "/recv-c", ".meta") >= spooled);
	assert_int_equal(count_files(TMP "/c/spool", ".pprof"), 0);
}

/* HTTPS with a self-signed certificate: refused by default (verification is on), accepted with
 * that certificate as ca-file. */
static void push__tls__verified_with_ca_file(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	char opts[512], out[4096];
	assert_int_equal(bt_test_run(out, sizeof(out), "openssl req -x509 -newkey rsa:2048 -nodes -days 2 "
				     "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " TMP
				     "/key.pem -out " TMP "/cert.pem 2>&1"), 0);
	pid_t srv = start_receiver(port, TMP "/recv-d", "--tls " TMP "/cert.pem " TMP "/key.pem", true);
	pid_t spin = bt_test_spawn_kept("exec " SPIN " 0 60");
	snprintf(opts, sizeof(opts), "--push https://127.0.0.1:%d", port);
	write_text(TMP "/d.conf", "interval = 1\npush-drain = 1\n");
	pid_t ag = start_agent("d", TMP "/d.conf", opts);
	wait_field(TMP "/d/status.json", "errors", 1, 90);
	kill(ag, SIGTERM);
	assert_int_equal(bt_test_wait_exit(ag, 30), 0);
	bt_test_run(out, sizeof(out), "cat " TMP "/d/status.json");
	print_message("without the CA: %s", out);
	assert_int_equal(status_field(TMP "/d/status.json", "sent"), 0);
	assert_non_null(strstr(out, "certificate"));
	assert_int_equal(count_files(TMP "/recv-d", ".meta"), 0);

	write_text(TMP "/d.conf", "interval = 1\nca-file = " TMP "/cert.pem\n");
	ag = start_agent("d", TMP "/d.conf", opts);
	wait_field(TMP "/d/status.json", "sent", 2, 90);
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 30);
	stop_group(spin);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	show_err("d");
	assert_int_equal(rc, 0);
	assert_true(count_files(TMP "/recv-d", ".meta") >= 2);
}

/* SIGHUP reads the credential file again: requests before carry the old token, the last ones the
 * new one. */
static void push__sighup__rotated_token_taken_up(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	char opts[256], out[4096];
	write_text(TMP "/rot-token", "tok-old\n");
	write_text(TMP "/e.conf", "interval = 1\nbearer-token-file = " TMP "/rot-token\n");
	pid_t srv = start_receiver(port, TMP "/recv-e", "", false);
	pid_t spin = bt_test_spawn_kept("exec " SPIN " 0 60");  /* intervals with samples, pushed */
	snprintf(opts, sizeof(opts), "--push http://127.0.0.1:%d", port);
	pid_t ag = start_agent("e", TMP "/e.conf", opts);
	wait_field(TMP "/e/status.json", "sent", 1, 90);
	write_text(TMP "/rot-token", "tok-new\n");
	kill(ag, SIGHUP);
	double end = bt_test_now_s() + 60;
	while (bt_test_run(NULL, 0, "grep -q 'config reloaded' " TMP "/e.err") != 0 && bt_test_now_s() < end)
		usleep(100000);
	int before = count_files(TMP "/recv-e", ".meta");
	end = bt_test_now_s() + 60;
	while (count_files(TMP "/recv-e", ".meta") < before + 2 && bt_test_now_s() < end)
		usleep(100000);
	kill(ag, SIGTERM);
	assert_int_equal(bt_test_wait_exit(ag, 30), 0);
	stop_group(spin);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	show_err("e");
	assert_int_equal(bt_test_run(out, sizeof(out), "sed -n 5p " TMP "/recv-e/0001.meta"), 0);
	assert_string_equal(out, "Bearer tok-old\n");
	assert_int_equal(bt_test_run(out, sizeof(out), "sed -n 5p $(ls " TMP "/recv-e/*.meta | tail -n 1)"), 0);
	assert_string_equal(out, "Bearer tok-new\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(push__intervals__one_pprof_request_each_tiled_with_auth, end_started),
		cmocka_unit_test_teardown(push__off_cpu__own_series_in_nanoseconds, end_started),
		cmocka_unit_test_teardown(push__server_failing_and_slow__no_profile_lost, end_started),
		cmocka_unit_test_teardown(push__server_down__spool_bounded_then_sent, end_started),
		cmocka_unit_test_teardown(push__tls__verified_with_ca_file, end_started),
		cmocka_unit_test_teardown(push__sighup__rotated_token_taken_up, end_started),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
