/* test_agent_unit.c - the agent as the shipped systemd unit confines it, and its configuration
 * checked before it is used: `systemd-analyze security` rates the unit 4.0 or better; under the
 * unit's capability bounding set and no_new_privs (systemd-run where systemd runs, else setpriv) the
 * agent still writes profiles, keeps only what it needs and makes no system call the unit's filter
 * refuses (strace); run as root without `user =` it keeps only what it needs, bounding set
 * included, with no_new_privs; a SIGHUP naming an output it cannot write (or a status file that is a
 * directory) is refused and the old configuration kept; a status file in a missing directory, or
 * one that is a directory, stops it at start; three processes flooding it with 4 Mi-line perf maps
 * do not take it past the unit's MemoryMax. */
#include "testutil.h"

#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNIT "tools/buildtrace-agent.service"
#define TMP "build/tests/tmp-agent-unit"
#define SPIN "build/tests/session/spin"

/* Exit status of pid, waiting up to secs (then -1, the process killed). */
static int wait_exit(pid_t pid, double secs)
{
	double end = bt_test_now_s() + secs;
	int st;
	while (bt_test_now_s() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(20000);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* Waits up to secs for the shell condition cond to hold; whether it did. */
static bool wait_until(double secs, const char *cond)
{
	double end = bt_test_now_s() + secs;
	do {
		if (bt_test_run(NULL, 0, "%s", cond) == 0)
			return true;
		usleep(100000);
	} while (bt_test_now_s() < end);
	return false;
}

/* Profiles (of either format) in dir. */
static int count_profiles(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		n += !strncmp(de->d_name, "buildtrace-", 11) && !strstr(de->d_name, ".tmp");
	closedir(d);
	return n;
}

/* A capability set line of /proc/PID/status, e.g. "CapBnd", or all ones when missing. */
static uint64_t proc_caps(pid_t pid, const char *key)
{
	char path[64], line[256], k[32];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	snprintf(k, sizeof(k), "%s: %%" SCNx64, key);
	FILE *f = fopen(path, "re");
	uint64_t v = UINT64_MAX;
	while (f && fgets(line, sizeof(line), f) && sscanf(line, k, &v) != 1)
		;
	if (f)
		fclose(f);
	return v;
}

/* The unit's CapabilityBoundingSet as bits, and as setpriv's --bounding-set argument. */
static uint64_t unit_bounding_set(char *setpriv_arg, size_t len)
{
	char line[1024];
	assert_int_equal(bt_test_run(line, sizeof(line), "sed -n 's/^CapabilityBoundingSet=//p' " UNIT), 0);
	uint64_t bits = 0;
	size_t used = (size_t)snprintf(setpriv_arg, len, "-all");
	for (char *save = NULL, *tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		cap_value_t c;
		assert_int_equal(cap_from_name(tok, &c), 0);
		bits |= 1ULL << c;
		used += (size_t)snprintf(setpriv_arg + used, len - used, ",+%s", tok + 4);
		assert_true(used < len);
	}
	for (char *p = setpriv_arg; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	assert_true(bits != 0);
	return bits;
}

static bool systemd_is_init(void)
{
	return access("/run/systemd/system", F_OK) == 0;
}

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP) == 0 ? 0 : -1;
}

static void agent_unit__systemd_analyze__exposure_4_or_better(void **state)
{
	bt_test_require_priv();
	char out[4096];
	if (bt_test_run(NULL, 0, "command -v systemd-analyze >/dev/null") != 0) {
		assert_false(bt_test_in_ci());
		skip();
	}
	assert_int_equal(bt_test_run(out, sizeof(out), "systemd-analyze security --offline=true " UNIT
				     " 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \\([0-9.]*\\).*/\\1/p'"),
			 0);
	print_message("systemd-analyze security: %s", out);
	assert_true(out[0] >= '0' && out[0] <= '9');
	assert_true(atof(out) <= 4.0);
	/* the unit parses: no unknown or misspelt setting */
	assert_int_equal(bt_test_run(out, sizeof(out), "systemd-analyze verify --man=no " UNIT
				     " 2>&1 | grep -i 'unknown\\|invalid\\|failed to parse' || true"), 0);
	assert_string_equal(out, "");
}

/* The unit's [Service] settings that confine the process, as systemd-run properties:
 * " -p 'KEY=VALUE'" each. */
static void unit_properties(char *out, size_t len)
{
	FILE *f = fopen(UNIT, "re");
	assert_non_null(f);
	static const char *const skip_keys[] = { "Exec", "Type=", "Restart", "KillSignal=", "Timeout",
						 "StateDirectory", "Description=" };
	char line[1024];
	bool service = false;
	size_t used = 0;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '[')
			service = !strcmp(line, "[Service]");
		if (!service || !strchr(line, '=') || line[0] < 'A' || line[0] > 'Z')
			continue;
		bool skipped = false;
		for (size_t i = 0; i < sizeof(skip_keys) / sizeof(skip_keys[0]); i++)
			skipped |= !strncmp(line, skip_keys[i], strlen(skip_keys[i]));
		if (!skipped) {
			assert_null(strchr(line, '\''));
			used += (size_t)snprintf(out + used, len - used, " -p '%s'", line);
			assert_true(used < len);
		}
	}
	fclose(f);
}

/* The command that runs the agent as the unit would, its stderr into err: its bounding set,
 * no_new_privs and umask; under systemd, as a transient service with all of the unit's hardening.
 * trace, when not empty, is a command the agent runs under. */
static void confined(char *cmd, size_t len, const char *args, const char *err, const char *trace,
		     bool use_systemd)
{
	char bnd[1024], cwd[1024];
	unit_bounding_set(bnd, sizeof(bnd));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	if (use_systemd) {
		char props[4096];
		unit_properties(props, sizeof(props));
		snprintf(cmd, len, "exec systemd-run --quiet --wait --collect --unit=bt-test-agent-%d "
			 "-p ReadWritePaths=%s/" TMP " -p StandardError=file:%s/%s%s %s%s/buildtrace agent %s",
			 (int)getpid(), cwd, cwd, err, props, trace, cwd, args);
	} else {
		snprintf(cmd, len, "exec setpriv --bounding-set=%s --no-new-privs --inh-caps=-all "
			 "sh -c 'umask 077; exec %s%s/buildtrace agent %s 2> %s'", bnd, trace, cwd, args, err);
	}
}

/* Under the unit's restrictions the agent attaches, keeps only what it needs, and writes
 * profiles that hold the running program's frames. */
static void agent_unit__under_its_restrictions__writes_profiles(void **state)
{
	bt_test_require_priv();
	char bnd[1024], cmd[4096], out[4096];
	uint64_t unit_bits = unit_bounding_set(bnd, sizeof(bnd));
	pid_t spin = bt_test_spawn_group("exec " SPIN " 0 60");
	confined(cmd, sizeof(cmd), "--output-dir $(pwd)/" TMP "/run --interval 1 -F 99 -v", TMP "/run.err", "",
		 systemd_is_init());
	pid_t ag = bt_test_spawn_group(cmd);
	/* attached, then a profile with the spinning program in it */
	bool started = wait_until(60, "grep -q 'sampling every CPU' " TMP "/run.err");
	bool wrote = started && wait_until(30, "grep -qs '^spin;' " TMP "/run/*.folded");
	/* the status file is written after the interval's profiles: its pid is there a moment later */
	bool have_status = wrote && wait_until(30, "grep -qs '\"pid\": [0-9]' " TMP "/run/status.json");
	char status[64];
	long long apid = -1;
	if (have_status && bt_test_run(status, sizeof(status), "sed -n 's/.*\"pid\": \\([0-9]*\\).*/\\1/p' "
				 TMP "/run/status.json") == 0)
		apid = atoll(status);
	uint64_t bnd_now = apid > 0 ? proc_caps((pid_t)apid, "CapBnd") : UINT64_MAX;
	uint64_t eff_now = apid > 0 ? proc_caps((pid_t)apid, "CapEff") : UINT64_MAX;
	char nnp[32] = "";
	if (apid > 0)
		bt_test_run(nnp, sizeof(nnp), "sed -n 's/^NoNewPrivs:\\t*//p' /proc/%lld/status", apid);
	if (apid > 0)
		kill((pid_t)apid, SIGTERM);
	int rc = wait_exit(ag, 20);
	kill(-spin, SIGKILL);
	waitpid(spin, NULL, 0);
	bt_test_run(out, sizeof(out), "cat " TMP "/run.err");
	print_message("agent under the unit's restrictions: %s", out);
	assert_true(started);
	assert_true(wrote);
	assert_true(have_status);
	assert_int_equal(rc, 0);
	assert_true(count_profiles(TMP "/run") >= 2);
	assert_non_null(strstr(out, "terminated"));
	/* nothing outside the unit's set, and of that only what sampling needs */
	assert_int_equal(bnd_now & ~unit_bits, 0);
	assert_int_equal(eff_now & ~unit_bits, 0);
	assert_int_equal(eff_now & ((1ULL << CAP_PERFMON) | (1ULL << CAP_SETUID) | (1ULL << CAP_CHOWN)), 0);
	assert_true(eff_now & (1ULL << CAP_SYS_PTRACE));
	assert_string_equal(nnp, "1\n");
}

/* Every system call the agent makes, attaching, sampling, writing and stopping, is one the unit's
 * SystemCallFilter allows (traced by strace, groups expanded by systemd-analyze): under systemd a
 * refused call would fail with EPERM. Traced under setpriv even where systemd runs: inside the
 * unit, its filter would refuse strace's own ptrace calls. */
static void agent_unit__system_calls__inside_the_units_filter(void **state)
{
	bt_test_require_priv();
	char cmd[4096], out[4096];
	if (bt_test_run(NULL, 0, "command -v systemd-analyze >/dev/null && command -v strace >/dev/null")) {
		assert_false(bt_test_in_ci());
		skip();
	}
	confined(cmd, sizeof(cmd), "--output-dir $(pwd)/" TMP "/trace --interval 1 -F 99", TMP "/trace.err",
		 "strace -f -qq -o " TMP "/strace.txt ", false);
	pid_t ag = bt_test_spawn_group(cmd);
	bool wrote = wait_until(90, "test -s " TMP "/trace/status.json && ls " TMP "/trace/*.folded");
	char pid[32] = "";
	bt_test_run(pid, sizeof(pid), "sed -n 's/.*\"pid\": \\([0-9]*\\).*/\\1/p' " TMP "/trace/status.json");
	if (atoi(pid) > 0)
		kill(atoi(pid), SIGTERM);
	int rc = wait_exit(ag, 30);
	assert_true(wrote);
	assert_int_equal(rc, 0);
	int frc = bt_test_run(out, sizeof(out), "/usr/bin/python3 tests/tools/syscallfilter.py " UNIT " "
			      TMP "/strace.txt");
	print_message("%s", out);
	assert_int_equal(frc, 0);
}

/* Run as root without `user =`, the agent still drops what it no longer needs after attaching.
 * A SIGHUP whose config names an output directory that cannot be created, or a status file in a
 * missing directory, is refused with a message; the agent goes on writing where it wrote. */
static void agent_reload__unusable_output__refused_old_config_kept(void **state)
{
	bt_test_require_priv();
	char out[4096];
	assert_int_equal(bt_test_run(NULL, 0, "printf 'output-dir = %%s\\ninterval = 1\\nfreq = 49\\n' "
				     "$(pwd)/" TMP "/good > " TMP "/agent.conf && touch " TMP "/plain"), 0);
	pid_t ag = bt_test_spawn_group("exec ./buildtrace agent --config " TMP "/agent.conf 2> " TMP "/hup.err");
	bool started = wait_until(60, "test -s " TMP "/good/status.json");
	/* as root, without `user =`: only what sampling needs, in every set, for good */
	uint64_t eff = proc_caps(ag, "CapEff"), bnd = proc_caps(ag, "CapBnd"), prm = proc_caps(ag, "CapPrm");
	char nnp[32] = "";
	bt_test_run(nnp, sizeof(nnp), "sed -n 's/^NoNewPrivs:\t*//p' /proc/%d/status", (int)ag);
	/* a directory under a regular file cannot be created */
	bt_test_run(NULL, 0, "printf 'output-dir = %%s/plain/sub\\ninterval = 1\\n' $(pwd)/" TMP " > "
		    TMP "/agent.conf");
	kill(ag, SIGHUP);
	bool refused = wait_until(30, "grep -q 'config not reloaded' " TMP "/hup.err");
	/* the status file's directory does not exist */
	bt_test_run(NULL, 0, "printf 'output-dir = %%s/good\\nstatus-file = %%s/missing/s.json\\n' "
		    "$(pwd)/" TMP " $(pwd)/" TMP " > " TMP "/agent.conf");
	kill(ag, SIGHUP);
	bool refused2 = wait_until(30, "test $(grep -c 'config not reloaded' " TMP "/hup.err) -ge 2");
	/* the status file an existing directory */
	bt_test_run(NULL, 0, "mkdir -p " TMP "/sdir/s.json && printf 'output-dir = %%s/good\\nstatus-file = %%s/sdir/s.json\\n' "
		    "$(pwd)/" TMP " $(pwd)/" TMP " > " TMP "/agent.conf");
	kill(ag, SIGHUP);
	bool refused3 = wait_until(30, "test $(grep -c 'config not reloaded' " TMP "/hup.err) -ge 3");
	/* still writing where it wrote, with the old interval */
	int before = count_profiles(TMP "/good");
	char cond[256];
	snprintf(cond, sizeof(cond), "test $(ls " TMP "/good | grep -c '^buildtrace-') -ge %d", before + 2);
	bool goes_on = wait_until(30, cond);
	kill(ag, SIGTERM);
	int rc = wait_exit(ag, 20);
	bt_test_run(out, sizeof(out), "cat " TMP "/hup.err");
	print_message("%s", out);
	assert_true(started);
	uint64_t keep = (1ULL << CAP_BPF) | (1ULL << CAP_CHECKPOINT_RESTORE) | (1ULL << CAP_SYS_PTRACE) |
			(1ULL << CAP_DAC_READ_SEARCH) | (1ULL << CAP_SYSLOG);
	assert_int_equal(eff, keep);
	assert_int_equal(prm, keep);
	assert_int_equal(bnd, keep);
	assert_string_equal(nnp, "1\n");
	assert_true(refused);
	assert_true(refused2);
	assert_true(refused3);
	assert_non_null(strstr(out, "sdir/s.json: it is a directory"));
	assert_true(goes_on);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "config reloaded"));
	assert_non_null(strstr(out, "cannot create "));
	assert_non_null(strstr(out, "plain/sub: Not a directory"));
	assert_non_null(strstr(out, "missing/s.json: cannot write in "));
	assert_int_equal(access(TMP "/plain/sub", F_OK), -1);
	assert_int_equal(access(TMP "/missing", F_OK), -1);
}

/* A status file in a missing directory: an error at start naming it, before anything is loaded. */
static void agent__status_file_in_missing_directory__error_at_start(void **state)
{
	bt_test_require_priv();
	char out[1024];
	assert_int_equal(bt_test_run(NULL, 0, "printf 'status-file = /nonexistent-bt-dir/status.json\\n' > "
				     TMP "/bad.conf"), 0);
	int rc = bt_test_run(out, sizeof(out), "timeout 20 ./buildtrace agent --config " TMP "/bad.conf "
			     "--output-dir $(pwd)/" TMP "/out 2>&1");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "status-file /nonexistent-bt-dir/status.json: cannot write in "
				    "/nonexistent-bt-dir: No such file or directory"));
	assert_null(strstr(out, "sampling"));
	assert_int_equal(access("/nonexistent-bt-dir", F_OK), -1);
	/* a status file that is an existing directory: every write would fail, so it is refused */
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p " TMP "/isdir/status.json && printf 'status-file = %%s\\n' "
				     "$(pwd)/" TMP "/isdir/status.json > " TMP "/dir.conf"), 0);
	rc = bt_test_run(out, sizeof(out), "timeout 20 ./buildtrace agent --config " TMP "/dir.conf "
			 "--output-dir $(pwd)/" TMP "/out 2>&1");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "isdir/status.json: it is a directory"));
	assert_null(strstr(out, "sampling"));
}

/* The unit's MemoryMax in bytes. */
static unsigned long long unit_memory_max(void)
{
	char v[64];
	assert_int_equal(bt_test_run(v, sizeof(v), "sed -n 's/^MemoryMax=//p' " UNIT), 0);
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	assert_true(n > 0);
	return n << (*end == 'G' ? 30 : *end == 'M' ? 20 : *end == 'K' ? 10 : 0);
}

/* A memory cgroup of its own limited to limit bytes, as the unit's MemoryMax makes one: under this
 * process's own v1 memory cgroup, else in the v2 hierarchy. Its directory into dir, and the file
 * that counts its OOM kills ("oom_kill N" lines) into events; false when neither can be made. */
static bool make_memcg(unsigned long long limit, char *dir, size_t len, char *events, size_t elen)
{
	char own[1024] = "";
	if (bt_test_run(own, sizeof(own), "sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup | tr -d '\\n'") == 0 &&
	    own[0] && access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0) {
		snprintf(dir, len, "/sys/fs/cgroup/memory%s/bt-unit-%d", strcmp(own, "/") ? own : "", (int)getpid());
		snprintf(events, elen, "%s/memory.oom_control", dir);
		return bt_test_run(NULL, 0, "mkdir -p %s && echo %llu > %s/memory.limit_in_bytes", dir, limit, dir) == 0;
	}
	/* v2: a group beside everything, at the root of the hierarchy, with the memory controller */
	const char *root = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 ? "/sys/fs/cgroup" :
			   "/sys/fs/cgroup/unified";
	snprintf(dir, len, "%s/bt-unit-%d", root, (int)getpid());
	snprintf(events, elen, "%s/memory.events", dir);
	return bt_test_run(NULL, 0, "grep -qw memory %s/cgroup.controllers && (grep -qw memory %s/cgroup.subtree_control "
			   "|| echo +memory > %s/cgroup.subtree_control) && mkdir -p %s && echo %llu > %s/memory.max",
			   root, root, root, dir, limit, dir) == 0;
}

/* Three processes of nobody's, each with a perf map of 4 Mi lines (240 MB), while the agent runs
 * under the unit's restrictions and its MemoryMax: it is not OOM-killed and stops cleanly, what it
 * refused is counted in status.json (process_data.refused), and each process's JIT code is still
 * named in its profiles. */
static void agent_unit__perf_map_flood__within_memory_max(void **state)
{
	bt_test_require_priv();
	char cg[512], events[600], cmd[8192], out[4096], dir[] = "/tmp/bt-flood-XXXXXX";
	unsigned long long limit = unit_memory_max();
	bool have_cg = make_memcg(limit, cg, sizeof(cg), events, sizeof(events));
	if (!have_cg && !bt_test_in_ci())
		skip();
	assert_true(have_cg);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bt_test_run(NULL, 0, "chmod 0755 %s && cp build/tests/progs/hostile %s/", dir, dir), 0);
	pid_t flood[3];
	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "exec setpriv --reuid=nobody --regid=nogroup --clear-groups %s/hostile flood%d "
			 "jitcode%d 120 4194304", dir, i, i);
		flood[i] = bt_test_spawn_group(cmd);
	}
	/* each map whole: 4 Mi lines of 57 bytes after the first */
	for (int i = 0; i < 3; i++) {
		char cond[256];
		snprintf(cond, sizeof(cond), "test $(stat -c %%s /tmp/perf-%d.map 2>/dev/null || echo 0) -ge %llu",
			 (int)flood[i], 4194304ULL * 57);
		assert_true(wait_until(120, cond));
	}
	char inner[4096];
	confined(inner, sizeof(inner), "--output-dir $(pwd)/" TMP "/flood --interval 2 -F 99 --format folded",
		 TMP "/flood.err", "", false);
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && %s", cg, inner);
	pid_t ag = bt_test_spawn_group(cmd);
	/* every flooding process's code named in a profile, or two minutes */
	bool named = wait_until(120, "for i in 0 1 2; do cat " TMP "/flood/*.folded 2>/dev/null | grep -q "
				"\";jitcode$i \" || exit 1; done");
	char pid[32] = "";
	bt_test_run(pid, sizeof(pid), "sed -n 's/.*\"pid\": \\([0-9]*\\).*/\\1/p' " TMP "/flood/status.json 2>/dev/null");
	if (atoi(pid) > 0)
		kill(atoi(pid), SIGTERM);
	int rc = wait_exit(ag, 60);
	for (int i = 0; i < 3; i++) {
		kill(-flood[i], SIGTERM);
		waitpid(flood[i], NULL, 0);
	}
	char oom[64] = "";
	bt_test_run(oom, sizeof(oom), "sed -n 's/^oom_kill //p' %s", events);
	bt_test_run(out, sizeof(out), "tail -n 5 " TMP "/flood.err; grep -o '\"process_data\": {[^}]*}\\|\"peak_rss_kb\": "
		    "[0-9]*' " TMP "/flood/status.json; cat %s/memory.max_usage_in_bytes 2>/dev/null || cat %s/memory.peak "
		    "2>/dev/null", cg, cg);
	print_message("%s", out);
	bt_test_run(NULL, 0, "rmdir %s; rm -rf %s", cg, dir);
	assert_true(named);
	assert_int_equal(rc, 0);
	assert_string_equal(oom, "0\n");
	char refused[32] = "";
	assert_int_equal(bt_test_run(refused, sizeof(refused), "grep -o '\"process_data\": {[^}]*}' " TMP
				     "/flood/status.json | sed 's/.*\"refused\": \\([0-9]*\\).*/\\1/'"), 0);
	assert_true(atoi(refused) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup(fn, setup)
		T(agent_unit__systemd_analyze__exposure_4_or_better),
		T(agent_unit__under_its_restrictions__writes_profiles),
		T(agent_unit__system_calls__inside_the_units_filter),
		T(agent_reload__unusable_output__refused_old_config_kept),
		T(agent__status_file_in_missing_directory__error_at_start),
		T(agent_unit__perf_map_flood__within_memory_max),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
