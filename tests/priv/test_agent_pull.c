/* test_agent_pull.c - `buildtrace agent --listen`, fetched by real clients: Google's pprof (`go tool
 * pprof`) takes a fresh profile of the next 2 seconds and prints a top list naming the sampled
 * program's function and its per-sample labels; /debug/pprof/latest is the last interval's profile
 * byte for byte; Prometheus' text parser reads /metrics; bad requests, paths that would climb out of a
 * directory and too many connections are refused (tests/tools/pull_checks.py); another local user
 * (nobody) gets 401 without the token, and on a Unix socket cannot connect or is refused (403). */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TMP "build/tests/tmp-agent-pull"
#define SPIN "build/tests/session/spin"
/* what every request but /healthz carries (the agent reads it from a file only root may read) */
#define TOKEN "pull-token-0123456789abcdef"
#define AUTH "-H 'Authorization: Bearer " TOKEN "'"
#define AS_NOBODY "setpriv --reuid=nobody --regid=nogroup --clear-groups "

/* Ends every process group the test started (bt_test_spawn_kept) and did not wait for itself, so
 * that a test failing half-way leaves none running (an agent left behind would write into the next
 * run's directory). */
static int end_started(void **state)
{
	bt_test_end_kept();
	return 0;
}

static int setup(void **state)
{
	/* what an earlier run left is removed as far as it can be; the directory must exist */
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "rm -rf " TMP " 2>&1; mkdir -p " TMP " 2>&1 && (umask 077; echo "
			     TOKEN " > " TMP "/token)");
	if (out[0])
		print_message("setup: %s", out);
	return rc == 0 ? 0 : -1;
}

/* The agent listening on a free loopback port, a CPU-bound program beside it. */
static pid_t start_agent(int port, const char *name)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace agent --output-dir $(pwd)/" TMP "/%s --interval 2 -F 99 "
		 "--format pprof --max-files 1000 --listen 127.0.0.1:%d --listen-token-file " TMP "/token %s 2> " TMP
		 "/agent.err", name, port,
		 !strcmp(name, "idle") ? "--config " TMP "/idle.conf" : !strcmp(name, "off") ? "--off-cpu yes" :
		 !strcmp(name, "b") ? "--push http://127.0.0.1:9 --config " TMP "/b.conf" : "");
	pid_t ag = bt_test_spawn_kept(cmd);
	for (int i = 0; i < 600 && bt_test_http_status(port, "/healthz") != 200; i++)
		usleep(100000);
	assert_int_equal(bt_test_http_status(port, "/healthz"), 200);
	return ag;
}

static void stop_agent(pid_t ag)
{
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 30);
	char out[4096];
	bt_test_run(out, sizeof(out), "tail -n 5 " TMP "/agent.err");
	print_message("agent: %s", out);
	assert_int_equal(rc, 0);
}

/* go tool pprof -top -tags on /debug/pprof/profile?seconds=2: spin's burn loop at the top by name,
 * the labels of its samples (its pid, comm, executable, build-id as readelf reads it, cgroup).
 * pprof's own deadline for a 2 s profile is 3 s, which a busy machine overruns: -timeout 120. */
static void pull__go_tool_pprof__top_and_labels(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	pid_t spin = bt_test_spawn_kept("exec " SPIN " 0 60");
	pid_t ag = start_agent(port, "a");
	static char out[65536];
	char bid[128], exe[4096];
	assert_int_equal(bt_test_run(bid, sizeof(bid), "readelf -n " SPIN " | awk '/Build ID/ { printf \"%%s\", $3 }'"), 0);
	assert_non_null(realpath(SPIN, exe));
	int rc = bt_test_run(out, sizeof(out), "HOME=$(pwd)/" TMP " go tool pprof -timeout 120 -top "
			     "'http://bt:" TOKEN "@127.0.0.1:%d/debug/pprof/profile?seconds=2' 2>&1", port);
	print_message("%.3000s\n", out);
	assert_int_equal(rc, 0);
	/* at least the seconds asked for (a loop held up by a busy machine may end it later) */
	const char *dur = strstr(out, "Duration: ");
	assert_non_null(dur);
	assert_true(atof(dur + 10) >= 2.0);
	assert_non_null(strstr(out, " burn\n"));
	rc = bt_test_run(out, sizeof(out), "HOME=$(pwd)/" TMP " go tool pprof -timeout 120 -tags "
			 "'http://bt:" TOKEN "@127.0.0.1:%d/debug/pprof/profile?seconds=2' 2>&1", port);
	print_message("%.3000s\n", out);
	assert_int_equal(rc, 0);
	char want[4200];
	snprintf(want, sizeof(want), "): %d\n", (int)spin);
	assert_non_null(strstr(out, want));                       /* pid and tid */
	assert_non_null(strstr(out, "): spin\n"));                /* comm */
	snprintf(want, sizeof(want), "): %s\n", exe);
	assert_non_null(strstr(out, want));                       /* exe */
	snprintf(want, sizeof(want), "): %s\n", bid);
	assert_non_null(strstr(out, want));                       /* build_id */
	assert_non_null(strstr(out, " cgroup: Total"));
	assert_non_null(strstr(out, " tid: Total"));
	stop_agent(ag);
	kill(-spin, SIGKILL);
	waitpid(spin, NULL, 0);
}

/* With --off-cpu: go tool pprof on /debug/pprof/off_cpu?seconds=2 reads a profile of the one type
 * off_cpu/nanoseconds over those 2 seconds, with the sleeping program's blocking function in it;
 * /debug/pprof/latest_off_cpu is the last interval's off-CPU profile, byte for byte as written. An
 * agent without it answers those paths 404. */
static void pull__off_cpu__own_paths(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	pid_t prog = bt_test_spawn_kept("exec build/tests/progs/offcpu 60 > /dev/null");
	pid_t ag = start_agent(port, "off");
	static char out[65536];
	/* -timeout: the answer comes once the 2 seconds are over and the agent's loop takes the request
	 * up, which a busy machine delays beyond pprof's own 3 s */
	int rc = bt_test_run(out, sizeof(out), "HOME=$(pwd)/" TMP " go tool pprof -timeout 120 -raw "
			     "'http://bt:" TOKEN "@127.0.0.1:%d/debug/pprof/off_cpu?seconds=2' > " TMP "/off.raw 2>&1; e=$?; "
			     "head -c 2000 " TMP "/off.raw; exit $e", port);
	print_message("%s\n", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "Samples:\noff_cpu/nanoseconds[dflt]\n"));
	bt_test_run(out, sizeof(out), "grep -c ' sleep_phase ' " TMP "/off.raw");
	assert_true(atoi(out) > 0);
	/* an interval has ended (2 s): its off-CPU profile as written */
	rc = bt_test_run(out, sizeof(out), "for i in $(seq 100); do curl -sf " AUTH " -o " TMP "/latest_off.pb.gz "
			 "http://127.0.0.1:%d/debug/pprof/latest_off_cpu && break; sleep 0.1; done; "
			 "h=$(sha256sum < " TMP "/latest_off.pb.gz) && for f in " TMP "/off/"
			 "buildtrace-off_cpu-*.pb.gz; do [ \"$(sha256sum < $f)\" = \"$h\" ] && echo same; done", port);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "same"));
	stop_agent(ag);
	kill(-prog, SIGKILL);
	waitpid(prog, NULL, 0);
	port = bt_test_free_port();
	ag = start_agent(port, "plain");
	assert_int_equal(bt_test_run(out, sizeof(out), "for p in 'off_cpu?seconds=1' latest_off_cpu; do curl -s " AUTH
				     " -o /dev/null -w '%%{http_code} ' \"http://127.0.0.1:%d/debug/pprof/$p\"; done", port), 0);
	assert_string_equal(out, "404 404 ");
	stop_agent(ag);
}

/* /debug/pprof/latest: one of the interval profiles the agent wrote, the same bytes; /metrics and the
 * refusals as pull_checks.py checks them. */
static void pull__latest_metrics_and_refusals(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	pid_t spin = bt_test_spawn_kept("exec " SPIN " 0 60");
	FILE *f = fopen(TMP "/b.conf", "we");
	assert_non_null(f);
	fputs("push-drain = 0\n", f);
	fclose(f);
	pid_t ag = start_agent(port, "b");
	char out[8192];
	/* /metrics answers as soon as the endpoint does, before the loop has turned */
	assert_int_equal(bt_test_run(out, sizeof(out), "curl -s " AUTH " -w ' %%{http_code}' http://127.0.0.1:%d/metrics "
				     "| grep -c -e '^buildtrace_samples_total [0-9]*$' -e '^ 200$'", port), 0);
	assert_string_equal(out, "2\n");
	/* every thread (the loop, the push worker, the HTTP ones) holds only what the loop kept: a
	 * thread keeps the capabilities it was created with */
	assert_int_equal(bt_test_run(out, sizeof(out), "cat /proc/%d/task/*/status | awk '/^CapEff/ { print $2 }' "
				     "| sort | uniq -c", (int)ag), 0);
	print_message("capabilities of the agent's threads: %s", out);
	assert_int_equal(bt_test_run(NULL, 0, "[ $(ls /proc/%d/task | wc -l) -ge 3 ] && [ $(cat /proc/%d/task/*/status "
				     "| awk '/^CapEff/ { print $2 }' | sort -u | wc -l) -eq 1 ]", (int)ag, (int)ag), 0);
	/* the latest profile is there once the first interval ends (a 404 until then), status.json
	 * just after its profile's file: both are waited for, then the endpoint */
	for (int i = 0; i < 600 && bt_test_run(NULL, 0, "ls " TMP "/b/*.pb.gz >/dev/null 2>&1 && test -e " TMP
					       "/b/status.json") != 0; i++)
		usleep(100000);
	assert_int_equal(access(TMP "/b/status.json", R_OK), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "for i in $(seq 100); do curl -sf " AUTH " -o " TMP "/latest.pb.gz "
				     "http://127.0.0.1:%d/debug/pprof/latest && break; sleep 0.1; done; "
				     "[ -s " TMP "/latest.pb.gz ] && for f in " TMP "/b/*.pb.gz; do "
				     "cmp -s $f " TMP "/latest.pb.gz && echo same $f; done", port), 0);
	print_message("%s", out);
	assert_non_null(strstr(out, "same "));
	/* another local user, who cannot read the token's file, gets 401 for the profile that names
	 * every process (and /healthz only) */
	assert_int_equal(bt_test_run(out, sizeof(out), AS_NOBODY "sh -c 'cat " TMP "/token 2>/dev/null; for p in "
				     "debug/pprof/latest metrics healthz; do curl -s -o /dev/null -w \"%%{http_code} \" "
				     "http://127.0.0.1:%d/$p; done'", port), 0);
	assert_string_equal(out, "401 401 200 ");
	int rc = bt_test_run(out, sizeof(out), "/usr/bin/python3 tests/tools/pull_checks.py %d " TOKEN " 2>&1", port);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	stop_agent(ag);
	kill(-spin, SIGKILL);
	waitpid(spin, NULL, 0);
}

/* idle = yes: the samples of a profile cover every CPU's time, idle or not (rate x CPUs x duration),
 * and those of the idle tasks are swapper/N's, pid 0, in the kernel's idle functions. */
static void pull__idle__every_cpu_counted(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	FILE *f = fopen(TMP "/idle.conf", "we");
	assert_non_null(f);
	fputs("idle = yes\n", f);
	fclose(f);
	pid_t ag = start_agent(port, "idle");
	char out[8192];
	/* perf over the same seconds is the oracle of how many samples the CPUs' timers give: an idle
	 * CPU of a virtual machine may give none */
	pid_t perf = bt_test_spawn("exec perf record -q -a -e cpu-clock -F 99 -o " TMP "/idle.perf -- sleep 3 "
				   ">/dev/null 2>&1");
	assert_int_equal(bt_test_run(out, sizeof(out), "curl -sf " AUTH " -o " TMP "/idle.pb.gz "
				     "'http://127.0.0.1:%d/debug/pprof/profile?seconds=3'", port), 0);
	waitpid(perf, NULL, 0);
	/* perf's count and the seconds its samples span: the two windows are started apart, so
	 * perf's rate over its own span is what is compared, not its count alone */
	char nperf[128] = "";
	assert_int_equal(bt_test_run(nperf, sizeof(nperf), "perf script -F time -i " TMP "/idle.perf 2>/dev/null "
				     "| tr -d ' :' | awk 'NR==1{a=$1} {b=$1; n++} END{printf \"%%d %%.6f\", n, b-a}'"), 0);
	int n = 0;
	double span = 0;
	assert_int_equal(sscanf(nperf, "%d %lf", &n, &span), 2);
	assert_true(n > 0 && span > 0);
	int rc = bt_test_run(out, sizeof(out), "/usr/bin/python3 tests/tools/idle_check.py " TMP "/idle.pb.gz "
			     "$(nproc) 99 %d %.6f 2>&1", n, span);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	stop_agent(ag);
}

/* --listen unix:PATH: a socket of mode 0600 that root reaches without a token; another user cannot
 * connect, and were the socket opened to everyone, is refused by its peer credentials (403). */
static void pull__unix_socket__root_and_agent_user_only(void **state)
{
	bt_test_require_priv();
	char dir[] = "/tmp/bt-pull-XXXXXX", cmd[1024], out[4096];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace agent --output-dir $(pwd)/" TMP "/u --interval 2 -F 49 --format "
		 "pprof --listen unix:%s/pull.sock 2> " TMP "/agent.err", dir);
	pid_t ag = bt_test_spawn_kept(cmd);
	char curl[256];
	snprintf(curl, sizeof(curl), "curl -s -o /dev/null -w '%%{http_code}' --unix-socket %s/pull.sock "
		 "http://localhost/metrics", dir);
	/* /metrics is there once the loop has turned once */
	for (int i = 0; i < 600 && (bt_test_run(out, sizeof(out), "%s", curl) != 0 || strcmp(out, "200")); i++)
		usleep(100000);
	assert_int_equal(bt_test_run(out, sizeof(out), "%s", curl), 0);
	assert_string_equal(out, "200");
	assert_int_equal(bt_test_run(out, sizeof(out), "stat -c '%%U %%a' %s/pull.sock", dir), 0);
	assert_string_equal(out, "root 600\n");
	/* nobody cannot connect at all; with the socket opened to all, the agent refuses it */
	assert_int_equal(bt_test_run(out, sizeof(out), AS_NOBODY "%s", curl), 7);
	assert_int_equal(chmod(strcat(strcpy(cmd, dir), "/pull.sock"), 0666), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), AS_NOBODY "%s", curl), 0);
	assert_string_equal(out, "403");
	stop_agent(ag);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(pull__off_cpu__own_paths, end_started),
		cmocka_unit_test_teardown(pull__go_tool_pprof__top_and_labels, end_started),
		cmocka_unit_test_teardown(pull__latest_metrics_and_refusals, end_started),
		cmocka_unit_test_teardown(pull__idle__every_cpu_counted, end_started),
		cmocka_unit_test_teardown(pull__unix_socket__root_and_agent_user_only, end_started),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
