/* launch.c - see launch.h. The child blocks reading a pipe until the session is attached to it, so
 * the profile holds its first instruction; a second pipe, closed by a successful exec, carries the
 * errno of a failed one back. */
#include "cmd/live/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int parse_id(const char *s, unsigned *out)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v >= (unsigned long)UINT_MAX)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

int bt_launch_user_for(const char *sudo_uid, const char *sudo_gid, uid_t euid, bool keep_root,
		       struct bt_launch_user *u)
{
	memset(u, 0, sizeof(*u));
	if (euid != 0 || keep_root || (!sudo_uid && !sudo_gid))
		return 0;
	unsigned uid, gid;
	if (parse_id(sudo_uid, &uid) || parse_id(sudo_gid, &gid))
		return -EINVAL;
	u->drop = true;
	u->uid = uid;
	u->gid = gid;
	u->groups[0] = gid;
	u->ngroups = 1;
	struct passwd *pw = getpwuid(uid);
	int n = (int)(sizeof(u->groups) / sizeof(u->groups[0]));
	if (pw && getgrouplist(pw->pw_name, gid, u->groups, &n) >= 0)
		u->ngroups = (size_t)n;
	return 0;
}

static bool executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int bt_launch_find(const char *cmd, const char *path)
{
	if (!cmd || !*cmd)
		return -ENOENT;
	if (strchr(cmd, '/')) {
		if (access(cmd, F_OK) != 0)
			return -ENOENT;
		return executable_file(cmd) ? 0 : -EACCES;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int err = -ENOENT;
	for (const char *p = path;; ) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		char buf[PATH_MAX];
		/* An empty entry is the current directory. */
		if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, n ? p : ".", "/", cmd) < (int)sizeof(buf)) {
			if (executable_file(buf))
				return 0;
			if (access(buf, F_OK) == 0)
				err = -EACCES;
		}
		if (!colon)
			return err;
		p = colon + 1;
	}
}

int bt_launch_become(const struct bt_launch_user *u)
{
	if (!u || !u->drop)
		return 0;
	if (setgroups(u->ngroups, u->groups) || setgid(u->gid) || setuid(u->uid))
		return -errno;
	/* Root must be gone for good: getting it back has to fail. */
	if (u->uid != 0 && setuid(0) == 0)
		return -EPERM;
	return 0;
}

/* The child: becomes the user, waits for the go byte, runs the command. Never returns. */
static void child(int go_fd, int err_fd, char *const *argv, const struct bt_launch_user *u)
{
	int err = bt_launch_become(u);
	char go;
	ssize_t n;
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);  /* the session did not start: the command must not run */
	close(go_fd);
	if (!err) {
		execvp(argv[0], argv);
		err = -errno;
	}
	int e = -err;
	(void)!write(err_fd, &e, sizeof(e));
	_exit(err == -ENOENT ? 127 : 126);
}

int bt_launch_start(struct bt_launch *l, char *const *argv, const struct bt_launch_user *u)
{
	int go[2], er[2];
	memset(l, 0, sizeof(*l));
	l->go_fd = l->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(er, O_CLOEXEC)) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		return -e;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]); close(go[1]); close(er[0]); close(er[1]);
		return -e;
	}
	if (pid == 0) {
		close(go[1]);
		close(er[0]);
		child(go[0], er[1], argv, u);
	}
	close(go[0]);
	close(er[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = er[0];
	return 0;
}

int bt_launch_release(struct bt_launch *l)
{
	if (l->go_fd < 0)
		return -EINVAL;
	char go = 1;
	ssize_t n;
	/* A command killed while held (the terminal's Ctrl-C reaches it too) has closed its end:
	 * the write fails with EPIPE, and the SIGPIPE it raises is taken here, not by buildtrace. */
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	do
		n = write(l->go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	int werr = n == 1 ? 0 : -errno;
	if (werr == -EPIPE) {
		struct timespec now = { 0, 0 };
		while (sigtimedwait(&pipe_set, NULL, &now) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(l->go_fd);
	l->go_fd = -1;
	if (werr)
		return werr;
	int e = 0;
	size_t got = 0;
	while (got < sizeof(e)) {
		n = read(l->err_fd, (char *)&e + got, sizeof(e) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(l->err_fd);
	l->err_fd = -1;
	return got == sizeof(e) ? -(e ? e : EIO) : 0;
}

int bt_launch_signal(struct bt_launch *l, int sig)
{
	if (l->pid <= 0 || l->reaped)
		return -ESRCH;
	return kill(l->pid, sig) ? -errno : 0;
}

int bt_launch_reap(struct bt_launch *l, bool block)
{
	if (l->pid <= 0)
		return -ECHILD;
	if (l->reaped)
		return 1;
	int st;
	pid_t r;
	do
		r = waitpid(l->pid, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	l->status = st;
	l->reaped = true;
	return 1;
}

int bt_launch_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

void bt_launch_close(struct bt_launch *l)
{
	bool unreleased = l->go_fd >= 0;
	if (unreleased)
		close(l->go_fd);  /* the child reads end of file and exits without running its command */
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	/* A command that runs is never waited for here: it may outlive buildtrace. */
	if (unreleased && l->pid > 0 && !l->reaped)
		bt_launch_reap(l, true);
}
