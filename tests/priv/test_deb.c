/* test_deb.c - the Debian package as an operator gets it: `make deb` builds it with Debian's tools
 * and lintian finds no error or warning in it; it depends on the libraries dpkg-shlibdeps found in
 * the binary, holds the config as a conffile, its version is the binary's; installed with dpkg -i
 * (as root) buildtrace --version, man buildtrace-agent and the bash completion work (a Tab typed
 * into bash in tmux), the agent's unit is there (systemd-analyze verify accepts it) but disabled; dpkg -r leaves only the conffile and
 * dpkg --purge nothing. Runs of this test on one machine take turns (a lock), and a buildtrace
 * package installed by someone else is left alone. */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli/commands.h"

#define DEB "build/deb/buildtrace_" BT_VERSION "_amd64.deb"
#define LOCK "/run/lock/buildtrace-test-deb.lock"

static void deb__built__lintian_clean_with_its_contents(void **state)
{
	static char out[1 << 20];
	double t0 = bt_test_now_s();
	int rc = bt_test_run(out, sizeof(out), "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "
			     "deb 2>&1");
	print_message("make deb: %.0f s\n", bt_test_now_s() - t0);
	if (rc)
		fail_msg("make deb: status %d:\n%s", rc, out + (strlen(out) > 8000 ? strlen(out) - 8000 : 0));
	/* lintian's findings are lines "E: ..." and "W: ..." */
	for (char *line = out; *line;) {
		size_t n = strcspn(line, "\n");
		if (!strncmp(line, "E: ", 3) || !strncmp(line, "W: ", 3))
			fail_msg("lintian: %.*s", (int)n, line);
		line += n + (line[n] == '\n');
	}
	assert_non_null(strstr(out, "lintian " DEB));
	char field[4096];
	assert_int_equal(bt_test_run(field, sizeof(field), "dpkg-deb -f " DEB " Version Depends"), 0);
	assert_non_null(strstr(field, "Version: " BT_VERSION "\n"));
	static const char *const libs[] = { "libbpf1", "libdw1", "libelf1", "libdebuginfod1", "libcap2", "libcurl4",
					    "libprotobuf-c1", "libzstd1", "liblzma5", "zlib1g", "libc6" };
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strstr(field, libs[i]))
			fail_msg("Depends lacks %s: %s", libs[i], field);
	assert_int_equal(bt_test_run(field, sizeof(field), "dpkg-deb --ctrl-tarfile " DEB " | tar -xOf - ./conffiles"), 0);
	assert_string_equal(field, "/etc/buildtrace/agent.conf\n");
	assert_int_equal(bt_test_run(field, sizeof(field), "dpkg-deb -c " DEB " | awk '{ print $6 }' | "
				     "grep -E '^\\./(usr/bin|lib/systemd|etc|usr/share/(man|bash-completion))/.*[^/]$'"), 0);
	static const char *const paths[] = {
		"./usr/bin/buildtrace\n", "./etc/buildtrace/agent.conf\n", "./lib/systemd/system/buildtrace-agent.service\n",
		"./usr/share/bash-completion/completions/buildtrace\n", "./usr/share/man/man1/buildtrace.1.gz\n",
		"./usr/share/man/man1/buildtrace-agent.1.gz\n", "./usr/share/man/man5/buildtrace-agent.conf.5.gz\n",
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!strstr(field, paths[i]))
			fail_msg("the package lacks %s: %s", paths[i], field);
}

static bool installed;  /* the package this test installed, until it has purged it */

/* dpkg ARGS, waiting while another dpkg or apt holds dpkg's lock; dpkg's status. */
static int dpkg(char *out, size_t len, const char *args)
{
	int rc = -1;
	for (int i = 0; i < 300; i++) {
		rc = bt_test_run(out, len, "dpkg %s 2>&1", args);
		if (rc == 0 || !strstr(out, "lock"))
			break;
		sleep(1);
	}
	return rc;
}

/* Whether the shell condition cond holds within secs. */
static bool within(double secs, const char *cond)
{
	double end = bt_test_now_s() + secs;
	do {
		if (bt_test_run(NULL, 0, "%s", cond) == 0)
			return true;
		usleep(100000);
	} while (bt_test_now_s() < end);
	return false;
}

/* A Tab typed into an interactive bash (in tmux, with bash-completion loaded as a login shell
 * loads it) after `line` completes it to `want`. */
static void tab_completes(const char *line, const char *want)
{
	char sock[64], cmd[1024], out[8192];
	snprintf(sock, sizeof(sock), "bt-test-deb-%d", (int)getpid());
	/* tmux's server has been seen to die as it starts ("server exited unexpectedly") on a
	 * machine where it works the next time: started again, up to three times, its words kept */
	int rc = -1;
	for (int i = 0; i < 3 && rc; i++) {
		bt_test_run(NULL, 0, "tmux -L %s kill-server 2>/dev/null", sock);
		rc = bt_test_run(out, sizeof(out), "tmux -f /dev/null -L %s new-session -d -x 160 -y 20 "
				 "'bash --norc --noprofile' 2>&1", sock);
		if (rc)
			print_message("tmux new-session: %s", out);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_run(NULL, 0, "tmux -L %s send-keys '. /usr/share/bash-completion/bash_completion' Enter && "
				     "tmux -L %s send-keys '%s' Tab", sock, sock, line), 0);
	snprintf(cmd, sizeof(cmd), "tmux -L %s capture-pane -p | grep -qF -- '%s'", sock, want);
	bool ok = within(30, cmd);
	bt_test_run(out, sizeof(out), "tmux -L %s capture-pane -p; tmux -L %s kill-server", sock, sock);
	if (!ok)
		fail_msg("'%s' and a Tab did not give '%s':\n%s", line, want, out);
}

static void deb__installed_with_dpkg__works_and_removes_cleanly(void **state)
{
	char out[16384];
	if (getuid() != 0) {
		if (bt_test_in_ci())
			fail_msg("dpkg -i needs root");
		skip();
	}
	assert_int_equal(access(DEB, R_OK), 0);
	int lock = open(LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(lock >= 0);
	assert_int_equal(flock(lock, LOCK_EX), 0);
	if (bt_test_run(NULL, 0, "dpkg-query -W -f='${db:Status-Abbrev}' buildtrace 2>/dev/null | grep -q '^[ic]'") == 0) {
		close(lock);
		if (bt_test_in_ci())
			fail_msg("a buildtrace package is installed here already");
		print_message("a buildtrace package is installed here: not replacing it\n");
		skip();
	}
	int rc = dpkg(out, sizeof(out), "-i " DEB);
	installed = true;  /* even half-installed: purged however the test ends */
	if (rc)
		fail_msg("dpkg -i: %s", out);
	assert_int_equal(bt_test_run(out, sizeof(out), "/usr/bin/buildtrace --version"), 0);
	assert_string_equal(out, "buildtrace " BT_VERSION "\n");
	/* the man pages, found by man itself */
	assert_int_equal(bt_test_run(out, sizeof(out), "MANWIDTH=100 man -P cat buildtrace-agent 2>&1"), 0);
	assert_non_null(strstr(out, "--sample-labels yes|no"));
	assert_int_equal(bt_test_run(out, sizeof(out), "man -w buildtrace-agent.conf"), 0);
	assert_string_equal(out, "/usr/share/man/man5/buildtrace-agent.conf.5.gz\n");
	/* the completion, loaded by bash-completion when buildtrace is first completed */
	tab_completes("buildtrace agent --sample-lab", "buildtrace agent --sample-labels");
	tab_completes("buildtrace --call-graph dwarf-b", "buildtrace --call-graph dwarf-bpf");
	/* the unit is installed, not enabled */
	assert_int_equal(access("/lib/systemd/system/buildtrace-agent.service", R_OK), 0);
	if (bt_test_run(NULL, 0, "command -v systemd-analyze >/dev/null") == 0) {
		/* the unit as installed, its ExecStart the installed binary */
		int v = bt_test_run(out, sizeof(out), "systemd-analyze verify /lib/systemd/system/buildtrace-agent.service 2>&1");
		if (v || out[0])
			fail_msg("systemd-analyze verify: %s", out);
	}
	if (bt_test_run(NULL, 0, "command -v systemctl >/dev/null") == 0) {
		bt_test_run(out, sizeof(out), "systemctl is-enabled buildtrace-agent 2>&1");
		assert_string_equal(out, "disabled\n");
	}
	/* removed: the conffile stays; purged: nothing */
	rc = dpkg(out, sizeof(out), "-r buildtrace");
	if (rc)
		fail_msg("dpkg -r: %s", out);
	assert_int_equal(bt_test_run(out, sizeof(out), "ls -d /usr/bin/buildtrace /usr/share/man/man*/buildtrace* "
				     "/lib/systemd/system/buildtrace-agent.service "
				     "/usr/share/bash-completion/completions/buildtrace /usr/share/doc/buildtrace 2>/dev/null"), 2);
	assert_string_equal(out, "");
	assert_int_equal(access("/etc/buildtrace/agent.conf", R_OK), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "dpkg-query -W -f='${db:Status-Abbrev}' buildtrace"), 0);
	assert_string_equal(out, "rc ");
	rc = dpkg(out, sizeof(out), "--purge buildtrace");
	if (rc)
		fail_msg("dpkg --purge: %s", out);
	assert_int_equal(access("/etc/buildtrace", F_OK), -1);
	assert_int_equal(bt_test_run(NULL, 0, "dpkg-query -W buildtrace 2>/dev/null"), 1);
	assert_int_equal(bt_test_run(out, sizeof(out), "ls /var/lib/systemd/deb-systemd-helper-enabled "
				     "/var/lib/systemd/deb-systemd-helper-masked 2>/dev/null | grep buildtrace"), 1);
	installed = false;
	/* what man cached of the pages read above is man's, but goes with them */
	bt_test_run(NULL, 0, "rm -f /var/cache/man/cat1/buildtrace* /var/cache/man/cat5/buildtrace*");
	close(lock);
}

/* A failed run leaves no package behind for the next one to find (and refuse to replace). */
static int purge_installed(void **state)
{
	char out[4096];
	if (installed && dpkg(out, sizeof(out), "--purge buildtrace") != 0)
		print_message("dpkg --purge: %s", out);
	installed = false;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deb__built__lintian_clean_with_its_contents),
		cmocka_unit_test_teardown(deb__installed_with_dpkg__works_and_removes_cleanly, purge_installed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
