/* test_agent.c - `buildtrace agent` run as systemd would run it, against real workloads: profiles
 * every interval (named, decodable, rotated), a last profile and exit 0 on SIGTERM, peak memory,
 * capabilities dropped and another user, and a soak with processes starting and exiting constantly
 * whose memory stays flat. Pushing is tested in test_agent_push.c. */
#include "testutil.h"
#include "output/folded.h"
#include "output/pprof.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TMP "build/tests/tmp-agent"
#define SPIN "build/tests/session/spin"

/* In a process group of its own, so that stop_group ends a shell loop and what it started. */
static pid_t spawn(const char *cmd)
{
	return bt_test_spawn_group(cmd);
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

/* A number field of the status file, or -1. */
static long long status_field(const char *status, const char *key)
{
	size_t len;
	char *s = bt_test_read_file(status, &len);
	char k[96];
	snprintf(k, sizeof(k), "\"%s\": ", key);
	const char *at = strstr(s, k);
	long long v = at ? strtoll(at + strlen(k), NULL, 10) : -1;
	free(s);
	return v;
}

/* Waits until the agent has written its first status file (it is attached and sampling). */
static void wait_status(const char *status, double secs)
{
	double end = bt_test_now_s() + secs;
	while (access(status, R_OK) != 0 && bt_test_now_s() < end)
		usleep(100000);
	assert_int_equal(access(status, R_OK), 0);
}

/* Waits until the shell condition cond holds, checking every 0.2 s; whether it came within secs,
 * a bound for a test that would otherwise hang, far above what a loaded machine takes. */
static bool wait_until(const char *cond, double secs)
{
	double end = bt_test_now_s() + secs;
	do {
		if (bt_test_run(NULL, 0, "%s", cond) == 0)
			return true;
		usleep(200000);
	} while (bt_test_now_s() < end);
	return false;
}

static int setup(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP) == 0 ? 0 : -1;
}

/* Five intervals of 2 s against a CPU-bound program: profiles named after it, three kept per
 * format, pprof that decodes, SIGTERM answered with a last profile and exit 0, the peak RSS reported. */
static void agent__intervals__rotated_profiles_and_clean_stop(void **state)
{
	bt_test_require_priv();
	const char *dir = TMP "/run1";
	pid_t spin = spawn("exec " SPIN " 0 30");
	pid_t ag = spawn("exec ./buildtrace agent --output-dir $(pwd)/" TMP "/run1 --interval 2 -F 99 "
			 "--max-files 3 2> " TMP "/run1.err");
	char status[256];
	snprintf(status, sizeof(status), "%s/status.json", dir);
	wait_status(status, 60);
	/* four full intervals written, whatever the wall time they took on a loaded machine */
	char cond[512];
	snprintf(cond, sizeof(cond), "grep -Eq '\"intervals\": ([4-9]|[1-9][0-9])' %s", status);
	assert_true(wait_until(cond, 120));
	long long hwm = status_field(status, "peak_rss_kb");
	double t0 = bt_test_now_s();
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 20);
	double took = bt_test_now_s() - t0;
	stop_group(spin);
	char out[4096];
	bt_test_run(out, sizeof(out), "cat " TMP "/run1.err");
	print_message("agent: %s(stopped in %.2f s, peak RSS %lld kB)\n", out, took, hwm);
	assert_int_equal(rc, 0);
	/* a stop that waited for the next interval's end would take 2 s; 10 s is a margin for load */
	assert_true(took < 10);
	assert_non_null(strstr(out, "terminated"));
	/* at least 4 full intervals and the last partial one were written; 3 of each kept */
	assert_true(status_field(status, "intervals") >= 5);
	assert_int_equal(count_files(dir, ".folded"), 3);
	assert_int_equal(count_files(dir, ".pb.gz"), 3);
	/* the peak is printed, not bounded: the agent samples the whole machine, so its tables are
	 * those of whatever else runs there (13-40 MB beside a build, over 128 MB beside several);
	 * growth is the soak test's subject, where the workload is the test's own */
	assert_true(hwm > 0);
	assert_true(status_field(status, "samples") > 100);
	/* the spin program's burn loop in the profiles, folded and pprof alike */
	assert_int_equal(bt_test_run(out, sizeof(out), "cat %s/*.folded | grep -c '^spin;.*burn'", dir), 0);
	assert_true(atoi(out) >= 1);
	/* the largest: an interval's samples can all arrive in a later one while a stack in front of
	 * them waits for its unwind table (the interval profiles take samples as they are delivered) */
	assert_int_equal(bt_test_run(out, sizeof(out), "ls -S %s/*.pb.gz | head -n 1", dir), 0);
	out[strcspn(out, "\n")] = '\0';
	size_t len;
	void *pb = bt_test_read_file(out, &len);
	struct bt_profile p;
	bt_profile_init(&p);
	assert_int_equal(bt_pprof_decode(pb, len, &p), 0);
	free(pb);
	struct bt_folded f;
	assert_int_equal(bt_folded_from_profile(&p, &f), 0);
	bt_profile_free(&p);
	FILE *mf = fopen(TMP "/decoded.folded", "we");
	assert_non_null(mf);
	assert_int_equal(bt_folded_write(&f, mf), 0);
	fclose(mf);
	bt_folded_free(&f);
	/* the samples carry their pid as a label: read back, the lines are comm-PID's */
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c '^spin-[0-9]*;.*burn' " TMP "/decoded.folded"), 0);
	assert_true(atoi(out) >= 1);
}

/* As user nobody (from the config file), with CAP_PERFMON, CAP_SYS_ADMIN (from 5.9) and the rest
 * dropped: a program started after the drop is still found, its mappings read and its frames named. */
static void agent__other_user_and_dropped_caps__still_profiles(void **state)
{
	bt_test_require_priv();
	const char *dir = TMP "/run2";
	FILE *cf = fopen(TMP "/agent.conf", "we");
	assert_non_null(cf);
	fprintf(cf, "# a test config\noutput-dir = %s/%s\ninterval = 2\nfrequency = 99\nformat = folded\n"
		"user = nobody\n", getcwd((char[512]){ 0 }, 512), dir);
	fclose(cf);
	pid_t ag = spawn("exec ./buildtrace agent --config " TMP "/agent.conf 2> " TMP "/run2.err");
	char status[256], out[4096];
	snprintf(status, sizeof(status), "%s/status.json", dir);
	wait_status(status, 60);
	pid_t spin = spawn("exec " SPIN " 0 30");
	char cond[512];
	snprintf(cond, sizeof(cond), "cat %s/*.folded 2>/dev/null | grep -q '^spin;.*burn'", dir);
	bool named = wait_until(cond, 120);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "awk '/^(Uid|CapEff|CapPrm):/' /proc/%d/status", (int)ag);
	bt_test_run(out, sizeof(out), "%s", cmd);
	char uid[32];
	bt_test_run(uid, sizeof(uid), "id -u nobody | tr -d '\\n'");
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 20);
	stop_group(spin);
	print_message("agent status: %s", out);
	assert_int_equal(rc, 0);
	/* Uid: real effective saved fs, all nobody */
	char want[160];
	snprintf(want, sizeof(want), "Uid:\t%s\t%s\t%s", uid, uid, uid);
	assert_non_null(strstr(out, want));
	const char *eff = strstr(out, "CapEff:");
	assert_non_null(eff);
	unsigned long long capeff = strtoull(eff + 7, NULL, 16);
	assert_int_equal(capeff & (1ULL << 38), 0);  /* CAP_PERFMON */
	assert_int_equal(capeff & (1ULL << 12), 0);  /* CAP_NET_ADMIN, as an example of the rest */
	/* from 5.9, CAP_BPF and CAP_CHECKPOINT_RESTORE do what CAP_SYS_ADMIN was kept for */
	char last[16];
	bt_test_run(last, sizeof(last), "cat /proc/sys/kernel/cap_last_cap");
	if (atoi(last) >= 40) {
		assert_int_equal(capeff & (1ULL << 21), 0);  /* CAP_SYS_ADMIN */
		assert_true(capeff & (1ULL << 39));          /* CAP_BPF: the snapshots' bpf() calls */
		assert_true(capeff & (1ULL << 40));          /* CAP_CHECKPOINT_RESTORE, for map_files */
	}
	assert_true(capeff != 0);
	assert_true(named);
}

/* SIGHUP: the config file is read again; a change of formats shows in the next profiles, and so
 * does `lines`: the spin program's source file is named in the pprof profiles then written. */
static void agent__sighup__config_reloaded(void **state)
{
	bt_test_require_priv();
	const char *dir = TMP "/run4";
	char cwd[512], out[2048];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	pid_t spin = spawn("exec " SPIN " 0 30");
	FILE *cf = fopen(TMP "/hup.conf", "we");
	fprintf(cf, "output-dir = %s/%s\ninterval = 1\nformat = folded\n", cwd, dir);
	fclose(cf);
	pid_t ag = spawn("exec ./buildtrace agent --config " TMP "/hup.conf 2> " TMP "/run4.err");
	char status[256];
	snprintf(status, sizeof(status), "%s/status.json", dir);
	wait_status(status, 60);
	char cond[512];
	snprintf(cond, sizeof(cond), "ls %s/*.folded >/dev/null 2>&1", dir);
	assert_true(wait_until(cond, 120));
	assert_int_equal(count_files(dir, ".pb.gz"), 0);
	cf = fopen(TMP "/hup.conf", "we");
	fprintf(cf, "output-dir = %s/%s\ninterval = 1\nformat = pprof\nlines = yes\n", cwd, dir);
	fclose(cf);
	kill(ag, SIGHUP);
	snprintf(cond, sizeof(cond), "ls %s/*.pb.gz >/dev/null 2>&1", dir);
	wait_until(cond, 120);
	int pb = count_files(dir, ".pb.gz");
	kill(ag, SIGTERM);
	assert_int_equal(bt_test_wait_exit(ag, 20), 0);
	stop_group(spin);
	bt_test_run(out, sizeof(out), "cat " TMP "/run4.err");
	assert_non_null(strstr(out, "config reloaded"));
	assert_true(pb >= 1);
	assert_int_equal(bt_test_run(out, sizeof(out), "for f in %s/*.pb.gz; do gzip -dc $f | grep -a -c "
				     "'tests/session/spin\\.c'; done | sort -n | tail -n 1", dir), 0);
	assert_true(atoi(out) >= 1);
}

/* Minutes of processes starting and exiting all the time: the agent's memory stays flat. What is
 * watched is what a leak moves: malloc's bytes in use less what the symbol tables hold (they come
 * and go with the programs that run, here and elsewhere on the machine) and less the file registry
 * (an entry per file version ever mapped: it grows with the new binaries other work on the machine
 * builds and runs, not with exits), read from status.json at the end of each interval, after the
 * interval's profile is freed. Not VmRSS: it also counts heap
 * pages malloc keeps after a transient peak (a profile being written, a table loaded and evicted),
 * which rose and fell by 20 MB in runs whose heap in use stayed within 0.2 MB. The BPF maps' pages
 * (the ring buffer, mapped twice) are bounded by their size. */
static void agent__soak_with_churn__memory_flat(void **state)
{
	bt_test_require_priv();
	const char *status = TMP "/soak/status.json";
	pid_t churn = spawn("while :; do /bin/true; sh -c 'exec " SPIN " 0 0.01' >/dev/null; done");
	FILE *cf = fopen(TMP "/soak.conf", "we");
	fprintf(cf, "evict-after = 10\n");
	fclose(cf);
	pid_t ag = spawn("exec ./buildtrace agent --output-dir $(pwd)/" TMP "/soak --interval 5 -F 99 "
			 "--max-files 2 --config " TMP "/soak.conf 2> " TMP "/soak.err");
	wait_status(status, 60);
	enum { N = 30 };
	long long rest[N], exited[N], rss[N], tables[N], files[N], maps_rss = 0, ring = 0;
	int n = 0;
	long long last_interval = status_field(status, "intervals");
	double end = bt_test_now_s() + N * 5 + 60;
	while (n < N && bt_test_now_s() < end) {
		usleep(200000);
		long long iv = status_field(status, "intervals");
		if (iv <= last_interval)
			continue;
		last_interval = iv;
		tables[n] = status_field(status, "symbol_tables_kb") * 1024;
		files[n] = status_field(status, "file_registry_kb") * 1024;
		rest[n] = status_field(status, "heap_in_use_kb") * 1024 - tables[n] - files[n];
		exited[n] = status_field(status, "processes_exited");
		rss[n] = status_field(status, "rss_kb");
		long long m = status_field(status, "bpf_maps_rss_kb");
		maps_rss = m > maps_rss ? m : maps_rss;
		ring = status_field(status, "ring_buffer_kb");
		n++;
	}
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 20);
	stop_group(churn);
	print_message("per interval: heap in use less symbol tables and file registry kB / symbol tables kB "
		      "/ file registry kB / processes exited / RSS kB:\n");
	for (int i = 0; i < n; i++)
		print_message(" %lld/%lld/%lld/%lld/%lld", rest[i] / 1024, tables[i] / 1024, files[i] / 1024,
			      exited[i], rss[i]);
	assert_int_equal(rc, 0);
	assert_int_equal(n, N);
	/* After a warm-up third, the floor of the rest (its least value in each 25 s window: a profile
	 * or a process table being large at the moment of reading lifts single values, not a window's
	 * least) per exited process, from the first window to the middle one and from there to the
	 * last: a leak of 100 bytes per exited process gives about 100 here (200 gave 199.6), in both
	 * spans. Runs without one gave -1 to 18 on a quiet machine; on a busy one (other builds and
	 * tests beside it) up to 73 over the whole run, 64 and 25, 18 and 39 in its two spans: what the
	 * rest of the machine runs moves the rest too (the Python code objects read for its
	 * interpreters, the hash tables sized for its most processes at once), with what runs, not per
	 * exit. So the smaller of the two spans is held to the bound; a leak of anything else shows as
	 * a rise of the last floor. */
	long long f[3];
	static const int from[3] = { 10, 17, 25 };
	for (int w = 0; w < 3; w++) {
		f[w] = rest[from[w]];
		for (int i = from[w]; i < from[w] + 5; i++)
			f[w] = rest[i] < f[w] ? rest[i] : f[w];
	}
	long long exits[2] = { exited[19] - exited[12], exited[27] - exited[19] };
	double per_exit[2];
	for (int k = 0; k < 2; k++)
		per_exit[k] = exits[k] > 0 ? (double)(f[k + 1] - f[k]) / (double)exits[k] : 0;
	print_message("\n%lld then %lld processes exited between the windows; heap floor less tables %lld -> "
		      "%lld -> %lld kB, %.1f then %.1f bytes per exited process; BPF map pages %lld kB for a %lld "
		      "kB ring buffer\n", exits[0], exits[1], f[0] / 1024, f[1] / 1024, f[2] / 1024, per_exit[0],
		      per_exit[1], maps_rss, ring);
	assert_true(exits[0] >= 1000 && exits[1] >= 1000);
	assert_true(per_exit[0] < 50 || per_exit[1] < 50);
	assert_true(f[2] <= f[0] + 1024 * 1024);
	assert_true(ring > 0 && maps_rss <= 2 * ring + 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agent__intervals__rotated_profiles_and_clean_stop),
		cmocka_unit_test(agent__other_user_and_dropped_caps__still_profiles),
		cmocka_unit_test(agent__sighup__config_reloaded),
		cmocka_unit_test(agent__soak_with_churn__memory_flat),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
