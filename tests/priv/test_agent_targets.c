/* test_agent_targets.c - `buildtrace agent` naming processes with relabel rules, against the
 * Pyroscope stand-in (tests/tools/ingest_server.py, checked by tests/tools/check_series.py): two
 * workloads in two cgroups named like systemd units arrive as two series with their own
 * service_name and their own stacks only, shells dropped everywhere (and skipped by the sampler);
 * the pull endpoint's profile selected by label; a fork bomb of 5,000 distinct commands kept to
 * max-series series an interval, the rest folded into service_name=other and counted; and
 * `agent targets` listing every process as /proc says it is (tests/tools/check_targets.py),
 * environment variables read only from processes whose owner could read them; rules given by a
 * SIGHUP taken up; with off-cpu = yes, each service's off-CPU time a series of its own. */
#include "testutil.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-agent-targets"
#define SPIN "build/tests/session/spin"
#define OFFCPU "build/tests/progs/offcpu"
/* what the pull endpoint's requests carry (on TCP it answers no one without it) */
#define TOKEN "targets-token-0123456789abcdef"
#define AUTH "-H 'Authorization: Bearer " TOKEN "'"

static char mnt[512], cg[600];  /* the cgroup2 mount, and the test's slice under it */

/* Ends what the test started and did not wait for itself, and removes its cgroups. */
static int end_started(void **state)
{
	bt_test_end_kept();
	if (cg[0])
		bt_test_run(NULL, 0, "for d in %s/*/; do for p in $(cat $d/cgroup.procs 2>/dev/null); do "
			    "kill -9 $p; done; done; sleep 0.2; rmdir %s/*/ %s 2>/dev/null", cg, cg, cg);
	return 0;
}

static pid_t start_receiver(int port, const char *dir)
{
	char cmd[1024], out[64];
	snprintf(cmd, sizeof(cmd), "exec /usr/bin/python3 tests/tools/ingest_server.py %d %s", port, dir);
	pid_t pid = bt_test_spawn_kept(cmd);
	for (int i = 0; i < 200; i++) {
		bt_test_run(out, sizeof(out), "curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/ready", port);
		if (!strcmp(out, "200"))
			return pid;
		usleep(50000);
	}
	fail_msg("the receiver did not answer on port %d", port);
	return -1;
}

static pid_t start_agent(const char *name, const char *conf, const char *opts)
{
	char cwd[512], cmd[2048];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace agent --output-dir %s/" TMP "/%s --config %s "
		 "--format pprof --max-files 100000 %s 2> " TMP "/%s.err", cwd, name, conf, opts, name);
	return bt_test_spawn_kept(cmd);
}

static void show_err(const char *name)
{
	char out[8192];
	bt_test_run(out, sizeof(out), "tail -n 20 " TMP "/%s.err", name);
	print_message("agent %s:\n%s", name, out);
}

static int setup(void **state)
{
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "rm -rf " TMP " 2>&1; mkdir -p " TMP " 2>&1 && (umask 077; echo "
			     TOKEN " > " TMP "/token)");
	if (out[0])
		print_message("setup: %s", out);
	return rc == 0 ? 0 : -1;
}

/* The test's slice in the cgroup2 hierarchy, with a cgroup of each name: NAME.service as systemd
 * names a service's (systemd is not PID 1 here: the cgroups are made by hand, as it would make
 * them), or any other. */
static void make_cgroups(const char *const *names, size_t n)
{
	assert_int_equal(bt_test_run(mnt, sizeof(mnt), "awk '$9 == \"cgroup2\" { print $5; exit }' "
				     "/proc/self/mountinfo | tr -d '\\n'"), 0);
	assert_true(mnt[0] == '/');
	snprintf(cg, sizeof(cg), "%s/bt-targets-%d.slice", mnt, (int)getpid());
	for (size_t i = 0; i < n; i++)
		assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/%s", cg, names[i]), 0);
}

/* cmd run inside cgroup name from its first instruction on: a shell that moves itself there, then
 * exec's cmd (its pid is the program's). */
static pid_t spawn_in(const char *name, const char *cmd)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "echo $$ > %s/%s/cgroup.procs && exec %s", cg, name, cmd);
	return bt_test_spawn_kept(buf);
}

static void run_check(const char *script, const char *args)
{
	static char out[65536];
	int rc = bt_test_run(out, sizeof(out), "/usr/bin/python3 tests/tools/%s %s 2>&1", script, args);
	print_message("%s", out);
	assert_int_equal(rc, 0);
}

/* A service per systemd unit, shells dropped: spin in alpha.service and python in beta.service,
 * each started through a shell that exec's it, and a busy sh and a busy bash loop in each. The
 * server gets one series per service and window: alpha's samples are spin's only and hold nothing
 * of python, beta's the reverse; no sample anywhere is a shell's, every sample the agent kept was
 * acknowledged, and the shells were skipped in the kernel once dropped. A pull request for
 * service_name=alpha answers alpha's samples only, labelled with its series. */
static void targets__two_cgroups__two_series_no_shells(void **state)
{
	bt_test_require_priv();
	static const char *const names[] = { "alpha.service", "beta.service" };
	make_cgroups(names, 2);
	int port = bt_test_free_port(), lport = bt_test_free_port();
	bt_test_write_text(TMP "/a.conf", "interval = 2\n"
		   "relabel = action=drop source_labels=__meta_process_comm regex=sh|bash\n"
		   "relabel = action=replace source_labels=__meta_systemd_unit regex=(.+)\\.service target_label=service_name\n");
	pid_t srv = start_receiver(port, TMP "/recv-a");
	char opts[512];
	snprintf(opts, sizeof(opts), "-F 199 --push http://127.0.0.1:%d --listen 127.0.0.1:%d --listen-token-file "
		 TMP "/token", port, lport);
	pid_t ag = start_agent("a", TMP "/a.conf", opts);
	bt_test_wait_json_number(TMP "/a/status.json", "intervals", 1, 90);
	pid_t spin = spawn_in("alpha.service", SPIN " 0 60");
	pid_t py = spawn_in("beta.service", "/usr/bin/python3 -c 'while True: pass'");
	spawn_in("alpha.service", "sh -c 'while :; do :; done'");
	spawn_in("beta.service", "bash -c 'while :; do :; done'");
	long long first = bt_test_json_number(TMP "/a/status.json", "intervals");
	bt_test_wait_json_number(TMP "/a/status.json", "intervals", first + 4, 90);
	/* the pull endpoint: two seconds of alpha only */
	char out[4096];
	assert_int_equal(bt_test_run(out, sizeof(out), "curl -s " AUTH " -o " TMP "/alpha.pb.gz -w '%%{http_code}' "
				     "'http://127.0.0.1:%d/debug/pprof/profile?seconds=2&service_name=alpha'", lport), 0);
	assert_string_equal(out, "200");
	assert_int_equal(bt_test_run(out, sizeof(out), "curl -s " AUTH " -o /dev/null -w '%%{http_code}' "
				     "'http://127.0.0.1:%d/debug/pprof/profile?seconds=1&bad-name=x'", lport), 0);
	assert_string_equal(out, "500");
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 60);
	show_err("a");
	assert_int_equal(rc, 0);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	/* each series holds none of the other's executable and hottest function */
	char args[2 * PATH_MAX + 512], spin_exe[PATH_MAX], py_exe[PATH_MAX];
	assert_non_null(realpath(SPIN, spin_exe));
	assert_non_null(realpath("/usr/bin/python3", py_exe));
	snprintf(args, sizeof(args), TMP "/recv-a --expect alpha=%d:%s,_PyEval_EvalFrameDefault "
		 "--expect beta=%d:%s,burn --forbid-comm sh,bash --status " TMP "/a/status.json", (int)spin, py_exe,
		 (int)py, spin_exe);
	run_check("check_series.py", args);
	snprintf(args, sizeof(args), "--profile " TMP "/alpha.pb.gz --expect alpha=%d:%s,_PyEval_EvalFrameDefault "
		 "--forbid-comm sh,bash", (int)spin, py_exe);
	run_check("check_series.py", args);
	bt_test_run(out, sizeof(out), "cat " TMP "/a/status.json");
	print_message("%s", out);
	/* both shells dropped by the rule, then no more sampled at all */
	assert_true(bt_test_json_number(TMP "/a/status.json", "processes_dropped") >= 2);
	assert_true(bt_test_json_number(TMP "/a/status.json", "samples_skipped") > 0);
}

/* off-cpu = yes with the same rules: each service's off-CPU time is a series of its own,
 * SERVICE.off_cpu, holding its own processes' stacks only (offcpu's threads blocked in
 * sleep_phase and read_phase in alpha, python asleep in time.sleep in beta, sleep in gamma, which
 * never runs: a series of off-CPU time only, for which no empty CPU profile is sent), none of a
 * shell's (the rules drop them off a CPU too), and every nanosecond the agent counted acknowledged
 * once. python and sleep, asleep throughout their 8 s at least, have 5 s of it at least, offcpu's
 * four threads 15 s (two asleep throughout, two half the time), and no window more than its
 * threads' time: python is not left out for the
 * bash it was before its exec, asleep in beta for half a second (that time arrives at a cut, after
 * the exec: the kernel side is told to skip the bash, not the python). The CPU series stay as they
 * were. */
static void targets__off_cpu__own_series_per_service(void **state)
{
	bt_test_require_priv();
	/* services named apart from those of any other run of the test on the machine */
	char svc[3][32], unit[3][48];
	const char *names[3];
	for (int i = 0; i < 3; i++) {
		snprintf(svc[i], sizeof(svc[i]), "%s-%d", (const char *[]){ "alpha", "beta", "gamma" }[i], (int)getpid());
		snprintf(unit[i], sizeof(unit[i]), "%s.service", svc[i]);
		names[i] = unit[i];
	}
	make_cgroups(names, 3);
	int port = bt_test_free_port(), lport = bt_test_free_port();
	bt_test_write_text(TMP "/o.conf", "interval = 2\noff-cpu = yes\n"
		   "relabel = action=drop source_labels=__meta_process_comm regex=sh|bash\n"
		   "relabel = action=replace source_labels=__meta_systemd_unit regex=(.+)\\.service target_label=service_name\n");
	pid_t srv = start_receiver(port, TMP "/recv-o");
	char opts[512];
	snprintf(opts, sizeof(opts), "--push http://127.0.0.1:%d --listen 127.0.0.1:%d --listen-token-file " TMP "/token",
		 port, lport);
	pid_t ag = start_agent("o", TMP "/o.conf", opts);
	bt_test_wait_json_number(TMP "/o/status.json", "intervals", 1, 90);
	pid_t off = spawn_in(unit[0], OFFCPU " 60");
	/* python asleep for half a second as the bash it was (in its cgroup, on a pipe of its own) */
	pid_t py = spawn_in(unit[1], "bash -c 'exec 3<> <(:); read -t 0.5 <&3; "
			    "exec /usr/bin/python3 -c \"import time\nwhile True: time.sleep(0.01)\"'");
	spawn_in(unit[0], "sh -c 'while :; do :; done'");
	spawn_in(unit[1], "bash -c 'while :; do :; done'");
	pid_t sl = spawn_in(unit[2], "sleep 600");
	long long first = bt_test_json_number(TMP "/o/status.json", "intervals");
	bt_test_wait_json_number(TMP "/o/status.json", "intervals", first + 4, 90);
	/* the pull endpoint: two seconds of gamma's off-CPU time only */
	char out[4096];
	assert_int_equal(bt_test_run(out, sizeof(out), "curl -s " AUTH " -o " TMP "/gamma.pb.gz -w '%%{http_code}' "
				     "'http://127.0.0.1:%d/debug/pprof/off_cpu?seconds=2&service_name=%s'", lport, svc[2]), 0);
	assert_string_equal(out, "200");
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 60);
	show_err("o");
	assert_int_equal(rc, 0);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	char args[5 * PATH_MAX], off_exe[PATH_MAX], py_exe[PATH_MAX];
	assert_non_null(realpath(OFFCPU, off_exe));
	assert_non_null(realpath("/usr/bin/python3", py_exe));
	snprintf(args, sizeof(args), TMP "/recv-o --type off_cpu --expect %s=%d:%s,_PyEval_EvalFrameDefault "
		 "--expect %s=%d:%s,sleep_phase,read_phase --expect %s=%d:%s,%s,sleep_phase,_PyEval_EvalFrameDefault "
		 "--min %s=15000000000 --min %s=5000000000 --min %s=5000000000 --threads %s=4 --threads %s=1 "
		 "--threads %s=1 --forbid-comm sh,bash --status " TMP "/o/status.json",
		 svc[0], (int)off, py_exe, svc[1], (int)py, off_exe, svc[2], (int)sl, off_exe, py_exe,
		 svc[0], svc[1], svc[2], svc[0], svc[1], svc[2]);
	run_check("check_series.py", args);
	/* and the CPU series beside them, as without off-CPU time */
	snprintf(args, sizeof(args), TMP "/recv-o --forbid-comm sh,bash --status " TMP "/o/status.json");
	run_check("check_series.py", args);
	/* the pulled profile: sleep's two seconds, nothing of another service */
	snprintf(args, sizeof(args), "--profile " TMP "/gamma.pb.gz --type off_cpu --expect %s=%d:%s,%s,sleep_phase,"
		 "_PyEval_EvalFrameDefault --min %s=1500000000 --threads %s=1 --forbid-comm sh,bash", svc[2], (int)sl,
		 off_exe, py_exe, svc[2], svc[2]);
	run_check("check_series.py", args);
	bt_test_run(out, sizeof(out), "cat " TMP "/o/status.json");
	printf("%s\n", out);   /* whole: print_message keeps 1 KiB of it */
}

/* 5,000 distinct commands (links to spin named c0000 ... c4999, each burning 3 ms), each its own
 * service by the rules, against max-series = 20: no window holds more than 20 series besides
 * other, the rest are folded into service_name=other and counted, and still every sample kept
 * reaches the server once. */
static void targets__fork_bomb__series_capped(void **state)
{
	bt_test_require_priv();
	int port = bt_test_free_port();
	char spin[PATH_MAX], out[4096];
	assert_non_null(realpath(SPIN, spin));
	assert_int_equal(bt_test_run(out, sizeof(out), "mkdir -p " TMP "/bomb && cd " TMP "/bomb && for i in "
				     "$(seq -w 0 4999); do ln -sf %s c$i; done && ls | wc -l", spin), 0);
	assert_int_equal(atoi(out), 5000);
	bt_test_write_text(TMP "/b.conf", "interval = 2\nmax-series = 20\n"
		   "relabel = source_labels=__meta_process_comm regex=(c[0-9]+) target_label=service_name\n");
	pid_t srv = start_receiver(port, TMP "/recv-b");
	char opts[256];
	snprintf(opts, sizeof(opts), "-F 999 --push http://127.0.0.1:%d", port);
	pid_t ag = start_agent("b", TMP "/b.conf", opts);
	bt_test_wait_json_number(TMP "/b/status.json", "intervals", 1, 90);
	/* at most 8 at a time */
	pid_t bomb = bt_test_spawn_kept("cd " TMP "/bomb && exec /usr/bin/python3 -c '\n"
			   "import subprocess\n"
			   "run = []\n"
			   "for i in range(5000):\n"
			   "    run.append(subprocess.Popen([\"./c%04d\" % i, \"0\", \"0.003\"], stdout=subprocess.DEVNULL))\n"
			   "    if len(run) >= 8:\n"
			   "        run.pop(0).wait()\n"
			   "for p in run:\n"
			   "    p.wait()\n'");
	assert_int_equal(bt_test_wait_exit(bomb, 600), 0);
	long long n = bt_test_json_number(TMP "/b/status.json", "intervals");
	bt_test_wait_json_number(TMP "/b/status.json", "intervals", n + 1, 60);
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 60);
	show_err("b");
	assert_int_equal(rc, 0);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	run_check("check_series.py", TMP "/recv-b --max-series 20 --want-other --status " TMP "/b/status.json");
	bt_test_run(out, sizeof(out), "cat " TMP "/b/status.json");
	print_message("%s", out);
	assert_true(bt_test_json_number(TMP "/b/status.json", "folded") > 0);
	assert_true(bt_test_json_number(TMP "/b/status.json", "folded_samples") > 0);
	/* the commands were named one by one */
	assert_true(bt_test_json_number(TMP "/b/status.json", "processes_named") >= 100);
}

/* `agent targets` against /proc for every process; and for processes of ours, the labels the rules
 * give: a service per unit, a shell dropped by rule 1, OTEL_SERVICE_NAME read from another user's
 * dumpable process and not from one that made itself undumpable. */
static void targets__listing__matches_proc(void **state)
{
	bt_test_require_priv();
	/* "plain" names no unit: whatever cgroup the test runs in, its processes there have none */
	static const char *const names[] = { "alpha.service", "plain" };
	make_cgroups(names, 2);
	pid_t spin = spawn_in("alpha.service", SPIN " 0 60");
	pid_t sh = spawn_in("plain", "sh -c 'while :; do sleep 1; done'");
	pid_t otel = spawn_in("plain", "setpriv --reuid=nobody --regid=nogroup --clear-groups env "
			      "OTEL_SERVICE_NAME=checkout sleep 60");
	pid_t secret = spawn_in("plain", "setpriv --reuid=nobody --regid=nogroup --clear-groups env "
				"OTEL_SERVICE_NAME=hidden /usr/bin/python3 -c 'import ctypes, time; "
				"ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(60)'");
	bt_test_write_text(TMP "/c.conf", "target-env = OTEL_SERVICE_NAME\nlabel = env=ci\n"
		   "relabel = action=drop source_labels=__meta_process_comm regex=sh\n"
		   "relabel = source_labels=__meta_systemd_unit regex=(.+)\\.service target_label=service_name\n"
		   "relabel = source_labels=__meta_process_env_OTEL_SERVICE_NAME regex=(.+) target_label=service_name\n");
	/* the processes are what they will be (exec'd, undumpable) */
	char out[256];
	for (int i = 0; i < 200; i++) {
		bt_test_run(out, sizeof(out), "cat /proc/%d/comm /proc/%d/comm /proc/%d/comm 2>/dev/null | tr '\\n' ' '",
			    (int)spin, (int)otel, (int)secret);
		if (!strcmp(out, "spin sleep python3 ") &&
		    bt_test_run(NULL, 0, "[ $(stat -c %%u /proc/%d/environ) = 0 ]", (int)secret) == 0)
			break;
		usleep(50000);
	}
	char args[2048];
	snprintf(args, sizeof(args), "./buildtrace --config " TMP "/c.conf "
		 "--expect '%d={\"env\": \"ci\", \"service_name\": \"alpha\"}' --expect %d=1 "
		 "--expect '%d={\"env\": \"ci\", \"service_name\": \"checkout\"}' "
		 "--expect '%d={\"env\": \"ci\", \"service_name\": \"unspecified\"}'",
		 (int)spin, (int)sh, (int)otel, (int)secret);
	run_check("check_targets.py", args);
	/* without --config: every process, the default labels */
	run_check("check_targets.py", "./buildtrace");
	/* the text form escapes what the processes chose */
	pid_t odd = bt_test_spawn_kept("exec /usr/bin/python3 -c 'import time, sys; time.sleep(60)' 'x\"y\\z' \"$(printf 'a\\033b')\"");
	usleep(300000);
	static char listing[1 << 20];
	assert_int_equal(bt_test_run(listing, sizeof(listing), "./buildtrace agent targets"), 0);
	char want[256];
	snprintf(want, sizeof(want), "__meta_process_pid=\"%d\"", (int)odd);
	assert_non_null(strstr(listing, want));
	assert_non_null(strstr(listing, "x\\\"y\\\\z a\\x1bb\""));
	assert_null(strchr(listing, '\033'));
}

/* SIGHUP with rules where there were none: before it, every process is in one series
 * (service_name=unspecified); after it, spin in alpha.service is a series of its own, holding only
 * its samples, and every sample kept still reaches the server once. */
static void targets__sighup__new_rules_taken_up(void **state)
{
	bt_test_require_priv();
	static const char *const names[] = { "alpha.service" };
	make_cgroups(names, 1);
	int port = bt_test_free_port();
	bt_test_write_text(TMP "/d.conf", "interval = 1\n");
	pid_t srv = start_receiver(port, TMP "/recv-d");
	char opts[256], out[4096];
	snprintf(opts, sizeof(opts), "-F 99 --push http://127.0.0.1:%d", port);
	pid_t ag = start_agent("d", TMP "/d.conf", opts);
	bt_test_wait_json_number(TMP "/d/status.json", "intervals", 1, 90);
	pid_t spin = spawn_in("alpha.service", SPIN " 0 60");
	long long n = bt_test_json_number(TMP "/d/status.json", "intervals");
	bt_test_wait_json_number(TMP "/d/status.json", "intervals", n + 2, 60);
	bt_test_write_text(TMP "/d.conf", "interval = 1\n"
			   "relabel = source_labels=__meta_systemd_unit regex=(.+)\\.service target_label=service_name\n");
	kill(ag, SIGHUP);
	for (int i = 0; i < 600 && bt_test_run(NULL, 0, "grep -q 'config reloaded' " TMP "/d.err") != 0; i++)
		usleep(100000);
	n = bt_test_json_number(TMP "/d/status.json", "intervals");
	bt_test_wait_json_number(TMP "/d/status.json", "intervals", n + 3, 60);
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 60);
	show_err("d");
	assert_int_equal(rc, 0);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "sed -n 3p " TMP "/recv-d/0001.meta"), 0);
	assert_non_null(strstr(out, "service_name%3Dunspecified"));
	assert_null(strstr(out, "service_name%3Dalpha"));
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -l 'service_name%%3Dalpha' " TMP "/recv-d/*.meta | wc -l"), 0);
	assert_true(atoi(out) >= 2);
	char args[512];
	snprintf(args, sizeof(args), TMP "/recv-d --expect alpha=%d --status " TMP "/d/status.json", (int)spin);
	run_check("check_series.py", args);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(targets__two_cgroups__two_series_no_shells, end_started),
		cmocka_unit_test_teardown(targets__off_cpu__own_series_per_service, end_started),
		cmocka_unit_test_teardown(targets__fork_bomb__series_capped, end_started),
		cmocka_unit_test_teardown(targets__listing__matches_proc, end_started),
		cmocka_unit_test_teardown(targets__sighup__new_rules_taken_up, end_started),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
