/* launch.h - a command started for a session: forked stopped (it waits on a pipe), run as the user
 * who called sudo unless told otherwise, released once the session is attached to it, and its exit
 * status turned into buildtrace's. Prints nothing. */
#ifndef BT_LAUNCH_H
#define BT_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct bt_launch_user {
	bool drop;            /* become uid/gid (with groups) in the child before it runs */
	uid_t uid;
	gid_t gid;
	gid_t groups[64];     /* supplementary groups of uid, as the group database lists them */
	size_t ngroups;
};

struct bt_launch {
	pid_t pid;            /* the child, 0 before start and after it was reaped */
	int go_fd;            /* written to release the child; closed unwritten, it exits 127 */
	int err_fd;           /* the child's exec errno, or end of file once exec succeeded */
	int status;           /* waitpid's status once reaped */
	bool reaped;
};

/* Whom to run the command as: the user sudo names (SUDO_UID and SUDO_GID, given here; NULL when
 * unset) when this process runs as root (euid 0) and keep_root is false; else no change. 0, or
 * -EINVAL when either is set but is not a number (or only one is set). */
int bt_launch_user_for(const char *sudo_uid, const char *sudo_gid, uid_t euid, bool keep_root,
		       struct bt_launch_user *u);

/* Becomes u's user for good in this process (groups, gid, uid; no way back to root), when u->drop.
 * 0 or -errno. */
int bt_launch_become(const struct bt_launch_user *u);

/* argv[0] as execvp would find it: a path with a slash as it is, else the first executable match
 * in path (a colon-separated list, PATH). 0, -ENOENT or -EACCES. */
int bt_launch_find(const char *cmd, const char *path);

/* Forks argv; the child becomes u's user, then waits for bt_launch_release. 0 or -errno. */
int bt_launch_start(struct bt_launch *l, char *const *argv, const struct bt_launch_user *u);

/* Lets the child exec its command and waits until it has: 0, or the child's -errno when exec (or
 * becoming the user) failed, after which the child exits 127 (-ENOENT) or 126; -EPIPE when the
 * child was killed while it waited (bt_launch_reap has its status). */
int bt_launch_release(struct bt_launch *l);

/* Sends sig to the child while it has not been reaped. 0 or -errno. */
int bt_launch_signal(struct bt_launch *l, int sig);

/* Reaps the child if it has exited (block: waits until it has). 1 when reaped, 0 when still
 * running, or -errno. */
int bt_launch_reap(struct bt_launch *l, bool block);

/* The exit code a shell would give for a waitpid status: the code, or 128 + the signal. */
int bt_launch_exit_code(int status);

/* Releases what is left: an unreleased child exits without running its command and is reaped; a
 * released one is left to run. */
void bt_launch_close(struct bt_launch *l);

#endif
