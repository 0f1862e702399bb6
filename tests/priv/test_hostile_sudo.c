/* test_hostile_sudo.c - buildtrace run through sudo by a user who may be hostile (btattacker,
 * created here when missing; SUDO_UID and SUDO_GID name it as sudo would): the command it starts
 * holds no descriptor of buildtrace's (it lists its own /proc/PID/fd and writes to every number it
 * can), and the profile of a command started from that user's own directory is written there, as
 * that user, with nothing left behind. Programs the user runs are copied out of the build tree
 * first: a clone may sit in a directory only root can enter. */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define USER "btattacker"
#define EXITWITH "build/tests/progs/exitwith"

struct fx {
	char dir[64];      /* root's, 0755 */
	char home[96];     /* the user's own directory, 0755, as a home is */
	char env[64];      /* "SUDO_UID=N SUDO_GID=M" */
	char bt[4096];     /* ./buildtrace, absolute */
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
	char ids[64];
	if (bt_test_run(ids, sizeof(ids), "echo SUDO_UID=$(id -u " USER ") SUDO_GID=$(id -g " USER ") | tr -d '\\n'"))
		return -1;
	snprintf(f->env, sizeof(f->env), "%s", ids);
	strcpy(f->dir, "/tmp/bt-sudo-XXXXXX");
	if (!mkdtemp(f->dir) || chmod(f->dir, 0755) != 0 || !realpath("buildtrace", f->bt))
		return -1;
	snprintf(f->home, sizeof(f->home), "%s/home", f->dir);
	/* the user's programs: copies of the build's, theirs */
	return bt_test_run(NULL, 0, "mkdir -m 0755 %s && cp " EXITWITH " %s/ && chown -R " USER ": %s", f->home,
			   f->home, f->home) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (f->dir[0])
		bt_test_run(NULL, 0, "rm -rf '%s'", f->dir);
	free(f);
	return 0;
}

/* Case 1: the command (running as the user) holds nothing of buildtrace's: its /proc/PID/fd lists
 * 0, 1 and 2 only, whatever outputs buildtrace writes, and what it writes to every other number
 * reaches no output. */
static void sudo__command_descriptors__only_its_own(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char out[4096];
	/* -o into root's directory (root writes it), --also-write into the user's (the user does) */
	int rc = bt_test_run(out, sizeof(out), "cd %s && %s %s -o %s/root.folded --also-write svg:%s/user.svg "
			     "--also-write json:%s/root.json -- sh -c 'ls /proc/$$/fd; for n in 3 4 5 6 7 8 9 10 "
			     "11 12; do (echo forged >&$n) 2>/dev/null; done; exec ./exitwith 0.2 0' 2>/dev/null", f->home,
			     f->env, f->bt, f->dir, f->home, f->dir);
	/* what the shell that is the command held (stdout is this test's pipe: nothing else uses it) */
	assert_int_equal(rc, 0);
	assert_string_equal(out, "0\n1\n2\n");
	assert_int_equal(bt_test_run(NULL, 0, "grep -q forged %s/root.folded %s/user.svg %s/root.json", f->dir,
				     f->home, f->dir), 1);
	assert_int_equal(bt_test_run(NULL, 0, "grep -q '^exitwith;' %s/root.folded", f->dir), 0);
}

/* Case 2: `sudo buildtrace -o prog.folded -- ./prog` in the user's own directory: the profile is
 * written there, as that user (it is theirs, 0600), with the command's exit status and no
 * temporary file left; in root's directory root writes it; where neither the user nor root without
 * its capabilities may write (a third user's directory, a file of theirs in a sticky directory of
 * theirs), it is refused
 * before the command runs. */
static void sudo__output_in_the_users_directory__written_as_the_user(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "cd %s && %s %s -o prog.folded -- ./exitwith 0.3 3 2>&1", f->home,
			     f->env, f->bt);
	print_message("%s", out);
	assert_int_equal(rc, 3);
	assert_int_equal(bt_test_run(out, sizeof(out), "stat -c '%%U %%a' %s/prog.folded", f->home), 0);
	assert_string_equal(out, USER " 600\n");
	assert_int_equal(bt_test_run(NULL, 0, "grep -q '^exitwith;.*main;exitwith_work ' %s/prog.folded", f->home), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "ls -A %s | grep -c '^\\.tmp\\.'", f->home), 1);

	/* root's own directory: root's file */
	rc = bt_test_run(out, sizeof(out), "cd %s && %s %s -o %s/root.folded -- ./exitwith 0.1 0 2>&1", f->home,
			 f->env, f->bt, f->dir);
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "stat -c '%%U %%a' %s/root.folded", f->dir), 0);
	assert_string_equal(out, "root 600\n");

	/* nobody's directory, and nobody's file at the name in a sticky directory: refused at once */
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -m 0755 %s/third %s/sticky && chown nobody %s/third && "
				     "chmod 1777 %s/sticky && touch %s/sticky/x.folded && chown nobody %s/sticky %s/sticky/x.folded",
				     f->dir, f->dir, f->dir, f->dir, f->dir, f->dir, f->dir), 0);
	static const char *const refused[] = { "third/x.folded", "sticky/x.folded" };
	for (size_t i = 0; i < 2; i++) {
		rc = bt_test_run(out, sizeof(out), "cd %s && %s %s -o %s/%s -- sh -c 'touch ran' 2>&1", f->home,
				 f->env, f->bt, f->dir, refused[i]);
		print_message("%s", out);
		assert_int_equal(rc, 1);
		assert_non_null(strstr(out, "permission denied to the user who called sudo, and to root once it has "
					    "dropped its capabilities"));
		assert_int_equal(bt_test_run(NULL, 0, "test -e %s/ran", f->home), 1);
	}
	assert_int_equal(bt_test_run(out, sizeof(out), "ls -A %s/third; stat -c %%U %s/sticky/x.folded; ls -A "
				     "%s/sticky", f->dir, f->dir, f->dir), 0);
	assert_string_equal(out, "nobody\nx.folded\n");
}

/* Case 2, the build-id cache: a cache in the user's own directory (HOME kept, or --cache-dir) is
 * one root may not write once it has dropped its capabilities: said at start, nothing stored,
 * nothing failing silently. Case 5: the user's ~/.debug a link to a directory of theirs: not
 * followed (said so, nothing created there); root's own cache stores a root-only (0711) program as
 * 0711, so the user cannot read it through its copy. */
static void sudo__build_id_cache__users_link_not_followed_copies_no_wider(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char out[4096];
	/* a program only root may read (0711: others may only run it) */
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -m 0755 %s/bin && cp " EXITWITH " %s/bin/secret && chmod 0711 "
				     "%s/bin/secret && mkdir -m 0755 %s/home/loot %s/home/.cache-own && chown " USER
				     ": %s/home/loot %s/home/.cache-own && ln -s loot %s/home/.debug && chown -h " USER
				     ": %s/home/.debug", f->dir, f->dir, f->dir, f->dir, f->dir, f->dir, f->dir, f->dir,
				     f->dir), 0);
	int rc = bt_test_run(out, sizeof(out), "HOME=%s %s %s -o %s/a.folded -- %s/bin/secret 0.2 0 2>&1", f->home,
			     f->env, f->bt, f->dir, f->dir);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	char want[512];
	snprintf(want, sizeof(want), "the build-id cache is not used: %s/.debug is a symbolic link of uid ", f->home);
	assert_non_null(strstr(out, want));
	assert_int_equal(bt_test_run(out, sizeof(out), "find %s/home/loot -mindepth 1", f->dir), 0);
	assert_string_equal(out, "");

	rc = bt_test_run(out, sizeof(out), "%s %s --cache-dir %s/home/.cache-own -o %s/b.folded -- %s/bin/secret 0.2 "
			 "0 2>&1", f->env, f->bt, f->dir, f->dir, f->dir);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "binaries and unwind tables are not stored in the build-id cache"));
	assert_null(strstr(out, "could not be stored"));
	assert_int_equal(bt_test_run(out, sizeof(out), "find %s/home/.cache-own -mindepth 1", f->dir), 0);
	assert_string_equal(out, "");

	/* root's own cache: the copy is 0711 like the program */
	rc = bt_test_run(out, sizeof(out), "%s %s --cache-dir %s/cache -o %s/c.folded -- %s/bin/secret 0.2 0 2>&1",
			 f->env, f->bt, f->dir, f->dir, f->dir);
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "stat -c %%a $(find %s/cache -path '*/secret/*/elf')", f->dir), 0);
	assert_string_equal(out, "711\n");
	assert_int_equal(bt_test_run(NULL, 0, "setpriv --reuid=" USER " --regid=" USER " --init-groups -- cat "
				     "$(find %s/cache -path '*/secret/*/elf') > /dev/null 2>&1", f->dir), 1);
}

/* Case 11: run by the user without privileges, buildtrace names the capabilities it lacks and a
 * setcap set; a copy given exactly that set profiles the whole machine as that user with kernel
 * frames named (CAP_SYSLOG among them: /proc/kallsyms shows addresses), none left
 * [kernel.kallsyms]. */
static void sudo__setcap_hint__its_set_names_kernel_frames(void **state)
{
	bt_test_require_priv();
	struct fx *f = *state;
	char out[4096], set[512];
	/* copies the user may run: the build tree may sit in a directory only root can enter */
	assert_int_equal(bt_test_run(NULL, 0, "cp %s %s/bt-plain && chmod 0755 %s/bt-plain", f->bt, f->dir, f->dir), 0);
	int rc = bt_test_run(out, sizeof(out), "cd %s && setpriv --reuid=" USER " --regid=" USER " --init-groups -- "
			     "%s/bt-plain -a -d 1 -o /dev/null 2>&1", f->home, f->dir);
	print_message("%s", out);
	assert_int_equal(rc, 1);
	const char *hint = strstr(out, "setcap ");
	assert_non_null(hint);
	assert_int_equal(sscanf(hint + 7, "%511s", set), 1);
	assert_non_null(strstr(set, "cap_syslog"));
	assert_int_equal(bt_test_run(NULL, 0, "cp %s %s/bt && chmod 0755 %s/bt && setcap '%s' %s/bt", f->bt, f->dir,
				     f->dir, set, f->dir), 0);
	rc = bt_test_run(out, sizeof(out), "cd %s && setpriv --reuid=" USER " --regid=" USER " --init-groups -- "
			 "%s/bt -a -d 1.5 -F 199 --no-live --no-cache -o k.folded -- sh -c 'dd if=/dev/zero "
			 "of=/dev/null bs=1 count=300000 2>/dev/null' 2>&1", f->home, f->dir);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c '_\\[k\\]' %s/k.folded", f->home), 0);
	assert_true(atoi(out) > 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c 'kernel.kallsyms' %s/k.folded", f->home), 1);
}

int main(void)
{
	/* buildtrace, and so the command, start with nothing but 0, 1 and 2 from here */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
		return 1;
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(sudo__command_descriptors__only_its_own),
		T(sudo__output_in_the_users_directory__written_as_the_user),
		T(sudo__build_id_cache__users_link_not_followed_copies_no_wider),
		T(sudo__setcap_hint__its_set_names_kernel_frames),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
