/* test_launch.c - starting a command held until released: the user it runs as, finding it, its
 * exit status, and a command that cannot run. Unprivileged: no session is attached. */
#include "testutil.h"
#include "cmd/live/launch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void launch__sudo_ids__dropped_only_for_root(void **state)
{
	struct bt_launch_user u;
	assert_int_equal(bt_launch_user_for("65534", "65534", 0, false, &u), 0);
	assert_true(u.drop);
	assert_int_equal(u.uid, 65534);
	assert_int_equal(u.gid, 65534);
	assert_true(u.ngroups >= 1);
	/* the primary group is among the groups the user gets */
	bool found = false;
	for (size_t i = 0; i < u.ngroups; i++)
		found |= u.groups[i] == 65534;
	assert_true(found);
	/* not root, --keep-root, or not started by sudo: nothing changes */
	assert_int_equal(bt_launch_user_for("65534", "65534", 1000, false, &u), 0);
	assert_false(u.drop);
	assert_int_equal(bt_launch_user_for("65534", "65534", 0, true, &u), 0);
	assert_false(u.drop);
	assert_int_equal(bt_launch_user_for(NULL, NULL, 0, false, &u), 0);
	assert_false(u.drop);
}

static void launch__bad_sudo_ids__rejected(void **state)
{
	struct bt_launch_user u;
	assert_int_equal(bt_launch_user_for("abc", "1", 0, false, &u), -EINVAL);
	assert_int_equal(bt_launch_user_for("1", NULL, 0, false, &u), -EINVAL);
	assert_int_equal(bt_launch_user_for("", "1", 0, false, &u), -EINVAL);
	assert_int_equal(bt_launch_user_for("-1", "1", 0, false, &u), -EINVAL);
	assert_int_equal(bt_launch_user_for("4294967295", "1", 0, false, &u), -EINVAL);
	assert_false(u.drop);
}

static void launch__find__as_execvp(void **state)
{
	assert_int_equal(bt_launch_find("sh", "/nonexistent:/bin:/usr/bin"), 0);
	assert_int_equal(bt_launch_find("sh", "/nonexistent"), -ENOENT);
	assert_int_equal(bt_launch_find("no-such-command-here", "/bin:/usr/bin"), -ENOENT);
	assert_int_equal(bt_launch_find("/bin/sh", NULL), 0);
	assert_int_equal(bt_launch_find("./no/such/file", NULL), -ENOENT);
	assert_int_equal(bt_launch_find("", NULL), -ENOENT);
	/* a directory, and a file without execute permission, exist but cannot run */
	assert_int_equal(bt_launch_find("/tmp/", NULL), -EACCES);
	char path[] = "/tmp/bt-launch-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(bt_launch_find(path, NULL), -EACCES);
	unlink(path);
}

static void launch__released__runs_and_gives_its_status(void **state)
{
	char *const argv[] = { "sh", "-c", "exit 3", NULL };
	struct bt_launch l;
	assert_int_equal(bt_launch_start(&l, argv, NULL), 0);
	assert_true(l.pid > 0);
	/* held until released */
	assert_int_equal(bt_launch_reap(&l, false), 0);
	assert_int_equal(bt_launch_release(&l), 0);
	assert_int_equal(bt_launch_reap(&l, true), 1);
	assert_int_equal(bt_launch_exit_code(l.status), 3);
	bt_launch_close(&l);
}

static void launch__killed__128_plus_signal(void **state)
{
	char *const argv[] = { "sleep", "60", NULL };
	struct bt_launch l;
	assert_int_equal(bt_launch_start(&l, argv, NULL), 0);
	assert_int_equal(bt_launch_release(&l), 0);
	assert_int_equal(bt_launch_signal(&l, SIGTERM), 0);
	assert_int_equal(bt_launch_reap(&l, true), 1);
	assert_int_equal(bt_launch_exit_code(l.status), 128 + SIGTERM);
	assert_int_equal(bt_launch_signal(&l, SIGTERM), -ESRCH);
	bt_launch_close(&l);
}

/* Killed while held (a Ctrl-C to the terminal reaches the held command too): releasing it says
 * -EPIPE instead of this process dying of SIGPIPE, and its status is the signal's. */
static void launch__killed_while_held__epipe_not_sigpipe(void **state)
{
	char *const argv[] = { "sleep", "60", NULL };
	struct bt_launch l;
	assert_int_equal(bt_launch_start(&l, argv, NULL), 0);
	/* SIGKILL, which no inherited disposition can ignore (a CI job may ignore SIGINT) */
	assert_int_equal(bt_launch_signal(&l, SIGKILL), 0);
	/* gone before the release: its end of the pipe is closed */
	assert_int_equal(bt_launch_reap(&l, true), 1);
	assert_int_equal(bt_launch_release(&l), -EPIPE);
	sigset_t pending;
	sigpending(&pending);
	assert_false(sigismember(&pending, SIGPIPE));
	assert_int_equal(bt_launch_exit_code(l.status), 128 + SIGKILL);
	bt_launch_close(&l);
}

static void launch__missing_command__enoent_and_127(void **state)
{
	char *const argv[] = { "no-such-command-here", NULL };
	struct bt_launch l;
	assert_int_equal(bt_launch_start(&l, argv, NULL), 0);
	assert_int_equal(bt_launch_release(&l), -ENOENT);
	assert_int_equal(bt_launch_reap(&l, true), 1);
	assert_int_equal(bt_launch_exit_code(l.status), 127);
	bt_launch_close(&l);
}

static void launch__never_released__command_does_not_run(void **state)
{
	char path[] = "/tmp/bt-launch-ran-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "touch %s", path);
	char *const argv[] = { "sh", "-c", cmd, NULL };
	struct bt_launch l;
	assert_int_equal(bt_launch_start(&l, argv, NULL), 0);
	pid_t pid = l.pid;
	bt_launch_close(&l);  /* reaps the child, which exited without running sh */
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(launch__sudo_ids__dropped_only_for_root),
		cmocka_unit_test(launch__bad_sudo_ids__rejected),
		cmocka_unit_test(launch__find__as_execvp),
		cmocka_unit_test(launch__released__runs_and_gives_its_status),
		cmocka_unit_test(launch__killed__128_plus_signal),
		cmocka_unit_test(launch__killed_while_held__epipe_not_sigpipe),
		cmocka_unit_test(launch__missing_command__enoent_and_127),
		cmocka_unit_test(launch__never_released__command_does_not_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
