/* testutil.c - see testutil.h. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/capability.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

int bt_test_run(char *out, size_t len, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	size_t n = 0;
	if (out && len) {
		size_t r;
		while (n + 1 < len && (r = fread(out + n, 1, len - 1 - n, f)) > 0)
			n += r;
		out[n] = '\0';
	}
	char sink[4096];
	while (fread(sink, 1, sizeof(sink), f) > 0)
		;
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int bt_test_in_ci(void)
{
	const char *ci = getenv("CI");
	return ci && strcmp(ci, "true") == 0;
}

const char *bt_test_priv_missing(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		return "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
	cap_t caps = cap_get_proc();
	if (!caps)
		return "cannot read own capabilities";
	const cap_value_t need[] = { CAP_BPF, CAP_PERFMON };
	const char *why = NULL;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (cap_get_flag(caps, need[i], CAP_EFFECTIVE, &v) != 0 || v != CAP_SET) {
			why = i == 0 ? "CAP_BPF is missing (run as root)" : "CAP_PERFMON is missing (run as root)";
			break;
		}
	}
	cap_free(caps);
	return why;
}

const char *bt_test_fixture(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", BT_FIXTURE_DIR, name);
	return buf;
}

/* A network namespace of our own (when allowed) keeps the test server off every real interface;
 * its loopback starts down. */
bool bt_test_isolate_network(void)
{
	if (unshare(CLONE_NEWNET) != 0)
		return false;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return false;
	struct ifreq ifr = { 0 };
	strcpy(ifr.ifr_name, "lo");
	bool ok = ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
	ifr.ifr_flags |= IFF_UP;
	ok = ok && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
	close(s);
	return ok;
}

int bt_test_free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) != 0)
		return -1;
	close(s);
	return ntohs(a.sin_port);
}

/* The status code of GET path on the loopback port, or -1. */
int bt_test_http_status(int port, const char *path)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (s < 0)
		return -1;
	struct timeval tv = { 2, 0 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char req[512], resp[64] = { 0 };
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	int code = -1;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    write(s, req, strlen(req)) == (ssize_t)strlen(req) && read(s, resp, sizeof(resp) - 1) > 12)
		sscanf(resp, "HTTP/%*s %d", &code);
	close(s);
	return code;
}


void *bt_test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	size_t cap = 1 << 16, n = 0, r;
	char *buf = malloc(cap + 1);
	assert_non_null(buf);
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
	}
	assert_false(ferror(f));
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static pid_t spawn_sh(const char *cmd, bool group)
{
	pid_t pid = fork();
	if (pid == 0) {
		/* a test that fails leaves nothing running behind it (the shell's exec keeps this) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (group)
			setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

pid_t bt_test_spawn(const char *cmd)
{
	return spawn_sh(cmd, false);
}

pid_t bt_test_spawn_group(const char *cmd)
{
	return spawn_sh(cmd, true);
}

static pid_t kept[32];
static int nkept;

pid_t bt_test_spawn_kept(const char *cmd)
{
	pid_t pid = spawn_sh(cmd, true);
	if (nkept < (int)(sizeof(kept) / sizeof(kept[0])))
		kept[nkept++] = pid;
	return pid;
}

void bt_test_end_kept(void)
{
	for (int i = 0; i < nkept; i++)
		if (waitpid(kept[i], NULL, WNOHANG) == 0) {
			kill(-kept[i], SIGKILL);
			waitpid(kept[i], NULL, 0);
		}
	nkept = 0;
}

int bt_test_ensure_user(const char *name)
{
	return bt_test_run(NULL, 0, "id -u %s >/dev/null 2>&1 || useradd --system --no-create-home "
			   "--shell /usr/sbin/nologin %s", name, name);
}

bool bt_test_wait_for_text(const char *path, const char *needle, pid_t pid)
{
	for (;;) {
		char out[4096];
		bt_test_run(out, sizeof(out), "cat %s 2>/dev/null", path);
		if (strstr(out, needle))
			return true;
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return false;
		usleep(50000);
	}
}

pid_t bt_test_perf_record_at(int pid, const char *callgraph, int hz, int seconds, const char *data)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "exec perf record -q -e cpu-clock -F %d --call-graph %s -o '%s' -p %d "
		 "-- sleep %d >'%s.log' 2>&1", hz, callgraph, data, pid, seconds, data);
	return spawn_sh(cmd, false);
}

pid_t bt_test_perf_record(int pid, const char *callgraph, int seconds, const char *data)
{
	return bt_test_perf_record_at(pid, callgraph, 99, seconds, data);
}

int bt_test_perf_fold(const char *data, const char *extra, const char *folded)
{
	return bt_test_run(NULL, 0, "perf script %s -F comm,ip,sym,dso -i '%s' 2>/dev/null | "
			   "tests/tools/foldtool.py perf-fold > '%s'", extra, data, folded);
}

/* BT_TEST_FILTER=PATTERN runs only the tests whose names match (cmocka's * and ? wildcards), in
 * every test binary: for running one slow test by hand. */
__attribute__((constructor)) static void bt_test_filter_from_env(void)
{
	const char *p = getenv("BT_TEST_FILTER");
	if (p && *p)
		cmocka_set_test_filter(p);
}

double bt_test_proc_cpu(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

const char *bt_test_pyenv(unsigned minor, char *buf, size_t len)
{
	const char *root = getenv("PYENV_ROOT");
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/versions", root && *root ? root : "/root/.pyenv");
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	int best = -1;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		unsigned ma, mi, micro;
		int n = 0;
		if (sscanf(e->d_name, "%u.%u.%u%n", &ma, &mi, &micro, &n) == 3 && !e->d_name[n] && ma == 3 &&
		    mi == minor && (int)micro > best)
			best = (int)micro;
	}
	closedir(d);
	if (best < 0)
		return NULL;
	snprintf(buf, len, "%s/3.%u.%d", dir, minor, best);
	char py[1024];
	snprintf(py, sizeof(py), "%s/bin/python3.%u", buf, minor);
	return access(py, X_OK) == 0 ? buf : NULL;
}

void bt_test_write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	if (!f)
		fail_msg("cannot write %s", path);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

double bt_test_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int bt_test_wait_exit(pid_t pid, double secs)
{
	double end = bt_test_now_s() + secs;
	int st;
	while (bt_test_now_s() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(20000);
	}
	/* its process group when it leads one (bt_test_spawn_group), itself otherwise */
	if (kill(-pid, SIGKILL) != 0)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

long long bt_test_json_number(const char *path, const char *key)
{
	if (access(path, R_OK) != 0)
		return -1;
	size_t len;
	char *s = bt_test_read_file(path, &len), k[128];
	snprintf(k, sizeof(k), "\"%s\": ", key);
	const char *at = strstr(s, k);
	long long v = at ? strtoll(at + strlen(k), NULL, 10) : -1;
	free(s);
	return v;
}

void bt_test_wait_json_number(const char *path, const char *key, long long min, double secs)
{
	double end = bt_test_now_s() + secs;
	while (bt_test_json_number(path, key) < min && bt_test_now_s() < end)
		usleep(100000);
	if (bt_test_json_number(path, key) < min)
		fail_msg("%s stayed below %lld in %s", key, min, path);
}

long bt_test_samples_matching(const char *folded, const char *ere)
{
	char out[32];
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -E -e '%s' %s > %s.matching; tests/tools/foldtool.py total "
				     "%s.matching", ere, folded, folded, folded), 0);
	return atol(out);
}
