/* test_hostile_text.c - text a profiled process chooses, run by user nobody: its comm is terminal
 * escape sequences (clear the screen, set the title), its perf map names its JIT code with an OSC
 * sequence, and it runs from a path whose newline would forge a `buildid-list` line and a probe.
 * Nothing of it reaches the operator's terminal raw: folded stacks on stdout, `go tool pprof -top`
 * of the pprof profile, `report`, `symbolize --pid`, `buildid-list` and `probe` print it escaped
 * (\xHH), and `report` reads the escapes back to the same text. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOSTILE "build/tests/progs/hostile"
#define AS_NOBODY "setpriv --reuid=nobody --regid=nogroup --clear-groups "
#define FORGED "0123456789abcdef0123456789abcdef01234567"
/* what the process chose, and how it must come out */
#define COMM "\x1b[2J\x1b]0;pwned\x07"
#define COMM_ESC "\\x1b[2J\\x1b]0;pwned\\x07"
#define JIT "jit\x1b]52;c;cHduZWQ=\x07x"
#define JIT_ESC "jit\\x1b]52;c;cHduZWQ=\\x07x"
/* folded stacks also write a name's ';' (their frame separator) as ':' */
#define COMM_FOLDED "\\x1b[2J\\x1b]0:pwned\\x07"
#define JIT_FOLDED "jit\\x1b]52:c:cHduZWQ=\\x07x"

struct fx {
	char dir[64];
	char prog[256];    /* dir/evil NEWLINE FORGED forged */
	pid_t pid;
};

static int setup(void **state)
{
	static struct fx f;
	memset(&f, 0, sizeof(f));
	*state = &f;
	if (geteuid() != 0)
		return 0;
	strcpy(f.dir, "/tmp/bt-text-XXXXXX");
	if (!mkdtemp(f.dir) || chmod(f.dir, 0755) != 0)
		return -1;
	snprintf(f.prog, sizeof(f.prog), "%s/evil\n" FORGED " forged", f.dir);
	/* a copy nobody may run, wherever the build tree is */
	if (bt_test_run(NULL, 0, "cp " HOSTILE " \"$(printf '%%s/evil\\n%%s forged' %s " FORGED ")\"", f.dir))
		return -1;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "exec " AS_NOBODY "\"$(printf '%%s/evil\\n%%s forged' %s " FORGED ")\" "
		 "\"$(printf '\\033[2J\\033]0;pwned\\007')\" \"$(printf 'jit\\033]52;c;cHduZWQ=\\007x')\" 120", f.dir);
	f.pid = bt_test_spawn_group(cmd);
	/* running once it has its name and its map */
	char map[64], comm[64] = "";
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)f.pid);
	while (strcmp(comm, COMM "\n") != 0 || access(map, F_OK) != 0) {
		if (waitpid(f.pid, NULL, WNOHANG) != 0)
			return -1;
		bt_test_run(comm, sizeof(comm), "cat /proc/%d/comm 2>/dev/null", (int)f.pid);
	}
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (f->pid > 0) {
		kill(-f->pid, SIGTERM);
		waitpid(f->pid, NULL, 0);
	}
	if (f->dir[0])
		bt_test_run(NULL, 0, "rm -rf %s", f->dir);
	return 0;
}

/* No control byte of the process's (ESC, BEL, CR, or a C1 CSI) in out. */
static void assert_no_controls(const char *out)
{
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\x07'));
	assert_null(strstr(out, "\xc2\x9b"));
}

static void text__folded_pprof_report__escaped_and_read_back(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	static char out[1 << 16];
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace -p %d -d 1.5 -F 199 --no-live --no-cache "
				     "--also-write pprof:%s/p.pb.gz 2>/dev/null", (int)f->pid, f->dir), 0);
	print_message("%s", out);
	assert_no_controls(out);
	assert_non_null(strstr(out, COMM_FOLDED ";"));
	assert_non_null(strstr(out, ";" JIT_FOLDED " "));
	/* go tool pprof prints the function names to the terminal */
	assert_int_equal(bt_test_run(out, sizeof(out), "HOME=%s go tool pprof -top %s/p.pb.gz 2>&1", f->dir, f->dir), 0);
	print_message("%s", out);
	assert_no_controls(out);
	assert_non_null(strstr(out, JIT_ESC));
	/* report reads the escapes back, and writes them again: the same text, not escaped twice */
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace report %s/p.pb.gz -f folded", f->dir), 0);
	assert_no_controls(out);
	assert_non_null(strstr(out, COMM_FOLDED ";"));
	assert_non_null(strstr(out, ";" JIT_FOLDED " "));
	assert_null(strstr(out, "\\\\x1b"));
}

/* symbolize --pid of the JIT code's address; buildid-list of the process: the path's newline does
 * not begin a line, the forged build-id never starts one. */
static void text__symbolize_buildid_list__escaped_no_forged_line(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	static char out[1 << 16];
	char addr[64];
	assert_int_equal(bt_test_run(addr, sizeof(addr), "cut -d' ' -f1 /tmp/perf-%d.map | tr -d '\\n'", (int)f->pid), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --pid %d 0x%s 2>&1", (int)f->pid, addr), 0);
	print_message("%s", out);
	assert_no_controls(out);
	assert_non_null(strstr(out, "\t" JIT_ESC "+0x"));
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace buildid-list -p %d -d 1 2>/dev/null", (int)f->pid), 0);
	print_message("%s", out);
	assert_no_controls(out);
	assert_non_null(strstr(out, "/evil\\x0a" FORGED " forged\n"));
	assert_null(strstr(out, "\n" FORGED));
	assert_false(!strncmp(out, FORGED, strlen(FORGED)));
}

/* A probe in the file whose path has a newline: refused, nothing written to the probe cache, and
 * `probe list` lists nothing forged. */
static void text__probe_cache__path_with_newline_refused(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace probe add --cache-dir %s/cache \"$(printf '%%s/evil\\n%%s "
			     "forged' %s " FORGED "):main\" 2>&1", f->dir, f->dir);
	print_message("%s", out);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "perf's probe cache cannot hold a path with white space or a control character"));
	assert_no_controls(out);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace probe list --cache-dir %s/cache 2>&1; find %s/cache "
				     "-name probes 2>/dev/null; true", f->dir, f->dir), 0);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text__folded_pprof_report__escaped_and_read_back),
		cmocka_unit_test(text__symbolize_buildid_list__escaped_no_forged_line),
		cmocka_unit_test(text__probe_cache__path_with_newline_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
