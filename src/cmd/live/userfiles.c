/* userfiles.c - see userfiles.h. One request at a time over a SOCK_SEQPACKET pair: create (the
 * answer carries the descriptor), commit, abort; end of file ends the helper. */
#include "cmd/live/userfiles.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/wfile.h"

#define MAX_FILES 64

enum { OP_CREATE = 1, OP_COMMIT, OP_ABORT };

struct request {
	uint32_t op, id;
	char path[PATH_MAX];
};

struct answer {
	int32_t err;
	uint32_t id;
};

struct bt_userfiles {
	pid_t pid;
	int sock;
};

/* The answer, with fd attached when fd >= 0. */
static void reply(int sock, const struct answer *a, int fd)
{
	struct iovec iov = { .iov_base = (void *)a, .iov_len = sizeof(*a) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		memset(&c, 0, sizeof(c));
		m.msg_control = c.buf;
		m.msg_controllen = sizeof(c.buf);
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &fd, sizeof(int));
	}
	(void)!sendmsg(sock, &m, MSG_NOSIGNAL);
}

/* A new file of the user's (or a device or FIFO written in place) in slot w, checked to be one the
 * user can rename into place at the end. fd or -errno. */
static int create(struct bt_wfile *w, const char *path)
{
	int fd = bt_wfile_open_path(w, path, BT_WFILE_MODE);
	if (fd < 0)
		return fd;
	int err = bt_wfile_check_commit(w);
	if (err) {
		bt_wfile_abort(w);
		return err;
	}
	return fd;
}

/* The helper's loop, as the user. Never returns. */
static void serve(int sock)
{
	static struct bt_wfile w[MAX_FILES];
	bool used[MAX_FILES] = { false };
	for (;;) {
		struct request r;
		ssize_t n = recv(sock, &r, sizeof(r), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		struct answer a = { .err = -EINVAL };
		int fd = -1;
		bool known = n >= (ssize_t)offsetof(struct request, path) && r.id < MAX_FILES && used[r.id];
		if (r.op == OP_CREATE && n > (ssize_t)offsetof(struct request, path)) {
			((char *)&r)[n - 1] = '\0';  /* the path ends within what was sent */
			size_t i = 0;
			while (i < MAX_FILES && used[i])
				i++;
			if (i == MAX_FILES) {
				a.err = -EMFILE;
			} else {
				fd = create(&w[i], r.path);
				a.err = fd < 0 ? fd : 0;
				used[i] = fd >= 0;
				a.id = (uint32_t)i;
			}
		} else if (r.op == OP_COMMIT && known) {
			a.err = bt_wfile_commit(&w[r.id]);
			used[r.id] = false;
		} else if (r.op == OP_ABORT && known) {
			bt_wfile_abort(&w[r.id]);
			used[r.id] = false;
			a.err = 0;
		}
		reply(sock, &a, fd);
	}
	for (size_t i = 0; i < MAX_FILES; i++)
		if (used[i])
			bt_wfile_abort(&w[i]);
	_exit(0);
}

/* The child: nothing of buildtrace's but the channel, the user for good, out of the terminal's
 * reach (a Ctrl-C meant for the session must not lose its files). */
static void child(int sock, const struct bt_launch_user *u)
{
	if (sock > 3)
		close_range(3, (unsigned)sock - 1, 0);
	close_range((unsigned)sock + 1, ~0U, 0);
	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if (bt_launch_become(u) != 0 || prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0)
		_exit(1);
	serve(sock);
}

int bt_userfiles_start(const struct bt_launch_user *u, struct bt_userfiles **out)
{
	if (!u || !u->drop)
		return -EINVAL;
	struct bt_userfiles *h = calloc(1, sizeof(*h));
	int sv[2];
	if (!h)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		int e = -errno;
		free(h);
		return e;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(sv[0]);
		close(sv[1]);
		free(h);
		return e;
	}
	if (pid == 0)
		child(sv[1], u);
	close(sv[1]);
	h->pid = pid;
	h->sock = sv[0];
	*out = h;
	return 0;
}

/* One request and its answer; *fd (may be NULL) receives a descriptor sent with it. */
static int ask(struct bt_userfiles *h, uint32_t op, uint32_t id, const char *path, int *fd)
{
	struct request r = { .op = op, .id = id };
	size_t len = offsetof(struct request, path);
	if (path) {
		size_t n = strlen(path);
		if (n >= sizeof(r.path))
			return -ENAMETOOLONG;
		memcpy(r.path, path, n + 1);
		len += n + 1;
	}
	if (send(h->sock, &r, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -EPIPE;
	struct answer a;
	struct iovec iov = { .iov_base = &a, .iov_len = sizeof(a) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	ssize_t n;
	do
		n = recvmsg(h->sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(a))
		return -EPIPE;
	int got = -1;
	for (struct cmsghdr *ch = CMSG_FIRSTHDR(&m); ch; ch = CMSG_NXTHDR(&m, ch))
		if (ch->cmsg_level == SOL_SOCKET && ch->cmsg_type == SCM_RIGHTS)
			memcpy(&got, CMSG_DATA(ch), sizeof(int));
	if (fd)
		*fd = got;
	else if (got >= 0)
		close(got);
	if (a.err == 0 && op == OP_CREATE && got < 0)
		return -EPROTO;
	if (a.err && got >= 0 && fd) {
		close(got);
		*fd = -1;
	}
	return a.err ? a.err : (int)a.id;
}

int bt_userfiles_create(struct bt_userfiles *h, const char *path, unsigned *id)
{
	int fd = -1;
	int r = ask(h, OP_CREATE, 0, path, &fd);
	if (r < 0)
		return r;
	*id = (unsigned)r;
	return fd;
}

int bt_userfiles_commit(struct bt_userfiles *h, unsigned id)
{
	int r = ask(h, OP_COMMIT, id, NULL, NULL);
	return r < 0 ? r : 0;
}

void bt_userfiles_abort(struct bt_userfiles *h, unsigned id)
{
	ask(h, OP_ABORT, id, NULL, NULL);
}

void bt_userfiles_stop(struct bt_userfiles *h)
{
	if (!h)
		return;
	close(h->sock);
	int st;
	while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR)
		;
	free(h);
}
