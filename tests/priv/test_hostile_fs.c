/* test_hostile_fs.c - buildtrace as root against files another local user controls: that user
 * (btattacker, created here when missing) plants links in an agent output directory, in a build-id
 * cache it can write, at a report's -o path, and runs a 2 GiB sparse program. Each test asserts
 * that nothing outside the intended directory was written, chowned, followed or deleted, and that
 * profiles are written 0600. */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define USER "btattacker"
#define SPIN "build/tests/session/spin"

struct fx {
	char dir[64];      /* root's, 0755: holds the attacker's directory and the victims */
	char att[96];      /* the attacker's own directory */
	char victim[96];   /* a root-only directory outside everything buildtrace was given */
	char spin[4096];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	*state = f;
	if (geteuid() != 0)
		return 0;  /* each test skips (or fails under CI) */
	if (bt_test_ensure_user(USER) != 0)
		return -1;
	strcpy(f->dir, "/tmp/bt-hostile-XXXXXX");
	if (!mkdtemp(f->dir) || chmod(f->dir, 0755) != 0)
		return -1;
	snprintf(f->att, sizeof(f->att), "%s/att", f->dir);
	snprintf(f->victim, sizeof(f->victim), "%s/victim", f->dir);
	/* the program the attacker runs and copies: out of the build tree, which may sit in a
	 * directory only root can enter */
	snprintf(f->spin, sizeof(f->spin), "%s/spin", f->dir);
	if (bt_test_run(NULL, 0, "cp " SPIN " %s && chmod 0755 %s", f->spin, f->spin) != 0)
		return -1;
	return bt_test_run(NULL, 0, "mkdir -m 0755 '%s' && chown " USER ": '%s' && mkdir -m 0700 '%s' && "
			   "echo secret > '%s/secret' && chmod 0600 '%s/secret'", f->att, f->att, f->victim,
			   f->victim, f->victim) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (f->dir[0])
		bt_test_run(NULL, 0, "rm -rf '%s'", f->dir);
	free(f);
	return 0;
}

/* Runs a shell command as the attacker; its exit status. */
static int as_attacker(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int as_attacker(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return bt_test_run(NULL, 0, "setpriv --reuid=" USER " --regid=" USER " --init-groups -- sh -c \"%s\"",
			   cmd);
}

/* The victim directory: still root's, 0700, holding exactly "secret" with its content. */
static void assert_victim_intact(const struct fx *f)
{
	char out[1024];
	assert_int_equal(bt_test_run(out, sizeof(out), "stat -c '%%U %%a' '%s' && cd '%s' && find . | sort | "
				     "tr '\\n' ' ' && cat secret", f->victim, f->victim), 0);
	assert_string_equal(out, "root 700\n. ./secret secret\n");
}

/* Exit status of pid, waiting up to secs (then -1, killed). */
/* Waits (polling) until the shell test `cond` holds; false if pid exited first or after secs. */
static bool wait_cond(const char *cond, pid_t pid, double secs)
{
	double end = bt_test_now_s() + secs;
	while (bt_test_now_s() < end) {
		if (bt_test_run(NULL, 0, "%s", cond) == 0)
			return true;
		if (pid > 0 && waitpid(pid, NULL, WNOHANG) != 0)
			return false;
		usleep(50000);
	}
	return false;
}

/* Case 1: the directory's owner plants links at the names the agent writes (status.json, and the
 * NAME.tmp.PID temporary name writers used to take) before it starts. The agent writes its files
 * as new 0600 files of its own; the victim is untouched. */
static void hostile__agent_planted_links__files_own_and_0600(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char cmd[4096], go[160], log[160], cond[1024], out_dir[160];
	/* the attacker's, writable by all as the agent (with its capabilities dropped) needs */
	snprintf(out_dir, sizeof(out_dir), "%s/out", f->att);
	assert_int_equal(as_attacker("mkdir -m 0777 %s && chmod 0777 %s", out_dir, out_dir), 0);
	snprintf(go, sizeof(go), "%s/go", f->dir);
	snprintf(log, sizeof(log), "%s/agent.err", f->dir);
	/* The agent starts when told, so that its pid is known to the attacker first. */
	snprintf(cmd, sizeof(cmd), "until [ -e %s ]; do sleep 0.05; done; exec ./buildtrace agent --output-dir "
		 "%s --interval 1 -F 49 --format folded --max-files 2 2> %s", go, out_dir, log);
	pid_t ag = bt_test_spawn_group(cmd);
	assert_int_equal(as_attacker("ln -s %s/secret %s/status.json.tmp.%d && ln -s %s/secret "
				     "%s/status.json", f->victim, out_dir, (int)ag, f->victim, out_dir), 0);
	assert_int_equal(bt_test_run(NULL, 0, "touch %s", go), 0);
	snprintf(cond, sizeof(cond), "[ -f %s/status.json ] && [ ! -L %s/status.json ] && ls %s/*.folded",
		 out_dir, out_dir, out_dir);
	bool ok = wait_cond(cond, ag, 120);
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 30);
	char out[4096];
	bt_test_run(out, sizeof(out), "cat %s; ls -la %s", log, out_dir);
	print_message("%s", out);
	assert_true(ok);
	assert_int_equal(rc, 0);
	assert_victim_intact(f);
	assert_int_equal(bt_test_run(out, sizeof(out), "stat -c '%%U %%a' %s/status.json %s/*.folded | sort -u",
				     out_dir, out_dir), 0);
	assert_string_equal(out, "root 600\n");
	/* no temporary file left behind */
	assert_int_equal(bt_test_run(out, sizeof(out), "ls -A %s | grep -c '^\\.tmp\\.'", out_dir), 1);
}

/* Case 2: the agent's output directory is a link the attacker made to a root-only directory; with
 * `user = nobody` the agent refuses to chown through it and says why. */
static void hostile__agent_chown_output_link__refused(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char conf[160], cmd[1024], log[160];
	assert_int_equal(as_attacker("ln -s %s %s/out", f->victim, f->att), 0);
	snprintf(conf, sizeof(conf), "%s/agent.conf", f->dir);
	snprintf(log, sizeof(log), "%s/agent.err", f->dir);
	FILE *c = fopen(conf, "we");
	assert_non_null(c);
	fprintf(c, "output-dir = %s/out\ninterval = 1\nformat = folded\nuser = nobody\n", f->att);
	fclose(c);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace agent --config %s 2> %s", conf, log);
	pid_t ag = bt_test_spawn_group(cmd);
	int rc = bt_test_wait_exit(ag, 120);
	char out[4096];
	bt_test_run(out, sizeof(out), "cat %s", log);
	print_message("agent: %s", out);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "symbolic link"));
	assert_victim_intact(f);
}

/* Case 4, record: a cache directory the attacker owns, with the first directory of the profiled
 * program's path and .build-id planted as links to the victim. record stores nothing through them;
 * its own profile is 0600 (case 9). */
static void hostile__record_cache_links__nothing_outside(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char cache[160], out[4096], cmd[8192];
	snprintf(cache, sizeof(cache), "%s/cache", f->att);
	/* the program's path starts at its first directory: /work/... or /tmp/... */
	char first[256];
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(f->spin + 1, "/"), f->spin + 1);
	assert_int_equal(as_attacker("mkdir %s && ln -s %s %s/%s && ln -s %s %s/.build-id && ln -s %s %s/usr",
				     cache, f->victim, cache, first, f->victim, cache, f->victim, cache), 0);
	snprintf(cmd, sizeof(cmd), "exec setpriv --reuid=" USER " --regid=" USER " --init-groups -- %s 0 20",
		 f->spin);
	pid_t spin = bt_test_spawn_group(cmd);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -d 2 --no-live -f folded -o %s/rec.folded "
			     "--cache-dir %s 2>&1", (int)spin, f->dir, cache);
	kill(-spin, SIGKILL);
	waitpid(spin, NULL, 0);
	print_message("record: %s", out);
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c '^spin;' %s/rec.folded", f->dir), 0);
	assert_victim_intact(f);
	assert_int_equal(bt_test_run(out, sizeof(out), "stat -c '%%U %%a' %s/rec.folded", f->dir), 0);
	assert_string_equal(out, "root 600\n");
}

/* Case 4, `cache remove`: an entry whose link goes through an attacker's directory link into the
 * victim (which holds a valid-looking entry), and a .build-id/xx that is itself a link: removal
 * deletes nothing in the victim; `cache list` does not look inside it. */
static void hostile__cache_remove_through_links__nothing_deleted(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char cache[160], out[4096];
	const char *hex = "aabbccddeeff00112233445566778899aabbccdd";
	snprintf(cache, sizeof(cache), "%s/cache", f->att);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir %s/%s && cp %s %s/%s/elf && echo x > %s/bbccddeeff00112233"
				     "445566778899aabbccdd", f->victim, hex, f->spin, f->victim, hex, f->victim), 0);
	assert_int_equal(as_attacker("mkdir -p %s/.build-id/aa && ln -s %s %s/evil && ln -s ../../evil/%s "
				     "%s/.build-id/aa/%s && ln -s %s %s/.build-id/bb",
				     cache, f->victim, cache, hex, cache, hex + 2, f->victim, cache), 0);
	/* stat the victim's listing before: the entry is there */
	char before[1024];
	assert_int_equal(bt_test_run(before, sizeof(before), "cd %s && find . | sort | tr '\\n' ' '", f->victim), 0);
	bt_test_run(out, sizeof(out), "./buildtrace cache --cache-dir %s remove %s bbccddeeff00112233445566778899"
		    "aabbccdd11 2>&1; ./buildtrace cache --cache-dir %s list -l 2>&1", cache, hex, cache);
	print_message("cache: %s", out);
	char after[1024];
	assert_int_equal(bt_test_run(after, sizeof(after), "cd %s && find . | sort | tr '\\n' ' '", f->victim), 0);
	assert_string_equal(after, before);
	assert_int_equal(bt_test_run(NULL, 0, "cmp %s %s/%s/elf && stat -c %%U %s/%s/elf | grep -qx root", f->spin,
				     f->victim, hex, f->victim, hex), 0);
	assert_null(strstr(out, "/secret"));
}

/* Case 5: a 2 GiB sparse ELF (the spin program and a hole) run by the attacker: over the per-file
 * limit it is not stored, with a counted message; with the limit raised it is stored with its
 * holes, so the cache holds kilobytes, not gigabytes. */
static void hostile__sparse_2g_elf__skipped_or_stored_sparse(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char big[160], out[4096], cmd[8192];
	snprintf(big, sizeof(big), "%s/big", f->att);
	assert_int_equal(as_attacker("cp %s %s && truncate -s 2G %s", f->spin, big, big), 0);
	for (int pass = 0; pass < 2; pass++) {
		snprintf(cmd, sizeof(cmd), "exec setpriv --reuid=" USER " --regid=" USER " --init-groups -- %s 0 20",
			 big);
		pid_t p = bt_test_spawn_group(cmd);
		int rc = bt_test_run(out, sizeof(out), "./buildtrace -p %d -d 2 --no-live -f folded -o /dev/null "
				     "--cache-dir %s/cache%d %s 2>&1", (int)p, f->dir, pass,
				     pass ? "--cache-max-file 4G" : "");
		kill(-p, SIGKILL);
		waitpid(p, NULL, 0);
		print_message("record: %s", out);
		assert_int_equal(rc, 0);
		if (pass == 0)
			assert_non_null(strstr(out, "1 files not stored in the build-id cache: larger than"));
		else
			assert_null(strstr(out, "not stored"));
		/* allocated size of the whole cache, in KiB */
		assert_int_equal(bt_test_run(out, sizeof(out), "du -sk %s/cache%d | cut -f1", f->dir, pass), 0);
		assert_true(atol(out) < 64 * 1024);
	}
	assert_int_equal(bt_test_run(out, sizeof(out), "find %s/cache1 -path '*/big/*/elf' -size 2G | wc -l", f->dir), 0);
	assert_string_equal(out, "1\n");
}

/* Case 7 (write side) and 9: report -o onto the attacker's link is refused; onto a device or a
 * root-owned link to one, a failed write leaves both in place; a new output is 0600. */
static void hostile__report_onto_links_and_devices__nothing_removed(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char in[160], out[4096];
	snprintf(in, sizeof(in), "%s/in.folded", f->dir);
	assert_int_equal(bt_test_run(NULL, 0, "printf 'main;work 7\\nmain;idle 3\\n' > %s && chmod 1777 %s",
				     in, f->att), 0);
	assert_int_equal(as_attacker("ln -s %s/secret %s/out.svg", f->victim, f->att), 0);
	int rc = bt_test_run(out, sizeof(out), "./buildtrace report %s -f svg -o %s/out.svg 2>&1", in, f->att);
	print_message("report onto a link: %s", out);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "owned by another user"));
	assert_int_equal(bt_test_run(NULL, 0, "[ -L %s/out.svg ]", f->att), 0);
	assert_victim_intact(f);

	rc = bt_test_run(out, sizeof(out), "./buildtrace report %s -f svg -o /dev/full 2>&1", in);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "No space left"));
	assert_int_equal(bt_test_run(NULL, 0, "[ -c /dev/full ] && ln -s /dev/full %s/full", f->dir), 0);
	rc = bt_test_run(out, sizeof(out), "./buildtrace report %s -f svg -o %s/full 2>&1", in, f->dir);
	assert_int_equal(rc, 1);
	assert_int_equal(bt_test_run(NULL, 0, "[ -L %s/full ] && [ -c /dev/full ]", f->dir), 0);

	assert_int_equal(bt_test_run(out, sizeof(out), "umask 022 && ./buildtrace report %s -f svg -o %s/r.svg && "
				     "stat -c '%%U %%a' %s/r.svg", in, f->dir, f->dir), 0);
	assert_string_equal(out, "root 600\n");
}

/* Case 9: the attacker may write the agent's output directory (theirs, 0777) and plants a name that
 * sorts after every profile (buildtrace-keep.folded), files of their own under the agent's own kind
 * of name, dated later, and a link so named to the victim. Pruning to two profiles removes only the
 * agent's own older ones: two of its profiles stay, every planted file stays, the victim is intact.
 * And an output directory that is itself the attacker's link is refused at start. */
static void hostile__agent_prune_planted_names__only_its_own(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char out_dir[160], log[160], cmd[4096], cond[1024], out[4096];
	snprintf(out_dir, sizeof(out_dir), "%s/out", f->att);
	snprintf(log, sizeof(log), "%s/agent.err", f->dir);
	assert_int_equal(as_attacker("mkdir -m 0777 %s && chmod 0777 %s && cd %s && touch buildtrace-keep.folded "
				     "buildtrace-20991122T201730.000Z.folded buildtrace-20991122T201731.000Z.folded && ln -s "
				     "%s/secret buildtrace-20991122T201732.000Z.folded", out_dir, out_dir, out_dir, f->victim), 0);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace agent --output-dir %s --interval 1 -F 49 --format folded "
		 "--max-files 2 2> %s", out_dir, log);
	pid_t ag = bt_test_spawn_group(cmd);
	/* five intervals written: the agent has pruned three of its own by then */
	snprintf(cond, sizeof(cond), "grep -qs '\"intervals\": [5-9]' %s/status.json", out_dir);
	bool ok = wait_cond(cond, ag, 120);
	kill(ag, SIGTERM);
	int rc = bt_test_wait_exit(ag, 30);
	bt_test_run(out, sizeof(out), "cat %s; ls -la %s", log, out_dir);
	print_message("%s", out);
	assert_true(ok);
	assert_int_equal(rc, 0);
	assert_victim_intact(f);
	/* the agent's own: its last two (the one written at stop may make it three) */
	assert_int_equal(bt_test_run(out, sizeof(out), "find %s -name 'buildtrace-*.folded' -user root | wc -l",
				     out_dir), 0);
	assert_true(atoi(out) >= 2 && atoi(out) <= 3);
	assert_int_equal(bt_test_run(NULL, 0, "cd %s && test -f buildtrace-keep.folded && test -f "
				     "buildtrace-20991122T201730.000Z.folded && test -f buildtrace-20991122T201731.000Z.folded "
				     "&& test -L buildtrace-20991122T201732.000Z.folded", out_dir), 0);

	/* the output directory a link of the attacker's: refused, nothing written through it */
	assert_int_equal(as_attacker("ln -s %s %s/linked", f->victim, f->att), 0);
	int r = bt_test_run(out, sizeof(out), "timeout 60 ./buildtrace agent --output-dir %s/linked --interval 1 2>&1",
			    f->att);
	print_message("%s", out);
	assert_int_equal(r, 1);
	assert_non_null(strstr(out, "it is a symbolic link"));
	assert_victim_intact(f);
}

/* Case 10: a config file the attacker owns (world-writable, naming their server and every address),
 * and root's own config made world-writable, are refused before anything runs; a token file others
 * may read is refused; a push URL's password is never printed, even with -v. */
static void hostile__agent_config_and_secrets__refused_as_sshd_would(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char out[4096];
	assert_int_equal(as_attacker("printf 'listen = 0.0.0.0:6061\\npush = http://10.9.9.9:4040\\n' > %s/evil.conf && "
				     "chmod 0666 %s/evil.conf", f->att, f->att), 0);
	int rc = bt_test_run(out, sizeof(out), "timeout 60 ./buildtrace agent --config %s/evil.conf --output-dir %s/o1 2>&1",
			     f->att, f->dir);
	print_message("%s", out);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "refused"));
	assert_null(strstr(out, "sampling"));
	assert_int_equal(bt_test_run(NULL, 0, "printf 'interval = 1\\n' > %s/root.conf && chmod 0666 %s/root.conf && "
				     "(umask 022; echo token-0123456789abcdef > %s/token)", f->dir, f->dir, f->dir), 0);
	rc = bt_test_run(out, sizeof(out), "timeout 60 ./buildtrace agent --config %s/root.conf --output-dir %s/o2 2>&1",
			 f->dir, f->dir);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "may be written by others (mode 0666)"));
	rc = bt_test_run(out, sizeof(out), "timeout 60 ./buildtrace agent --output-dir %s/o3 --listen 127.0.0.1:0 "
			 "--listen-token-file %s/token 2>&1", f->dir, f->dir);
	print_message("%s", out);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "may be read by others (mode 0644)"));
	assert_null(strstr(out, "sampling"));
	/* the password of a push URL: *** wherever the agent speaks of it */
	char log[160], cmd[1024];
	snprintf(log, sizeof(log), "%s/push.err", f->dir);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace agent -v --output-dir %s/o4 --interval 1 -F 49 --push "
		 "http://alice:hunter2-s3cret@127.0.0.1:9/ 2> %s", f->dir, log);
	pid_t ag = bt_test_spawn_group(cmd);
	char cond[512];
	snprintf(cond, sizeof(cond), "grep -q 'sampling every CPU' %s", log);
	bool ok = wait_cond(cond, ag, 120);
	kill(ag, SIGTERM);
	bt_test_wait_exit(ag, 60);
	bt_test_run(out, sizeof(out), "cat %s", log);
	print_message("%s", out);
	assert_true(ok);
	assert_non_null(strstr(out, "http://alice:***@127.0.0.1:9/"));
	assert_null(strstr(out, "hunter2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(hostile__agent_planted_links__files_own_and_0600),
		T(hostile__agent_chown_output_link__refused),
		T(hostile__record_cache_links__nothing_outside),
		T(hostile__cache_remove_through_links__nothing_deleted),
		T(hostile__sparse_2g_elf__skipped_or_stored_sparse),
		T(hostile__report_onto_links_and_devices__nothing_removed),
		T(hostile__agent_prune_planted_names__only_its_own),
		T(hostile__agent_config_and_secrets__refused_as_sshd_would),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
