/* test_safeopen.c - bt_open_regular opens regular files only, and never opens anything else: a
 * FIFO's blocked writer stays blocked and inotify sees no open of a FIFO or a device node; symlinks
 * are refused on request and kept inside a root. */
#include "testutil.h"
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

struct tmp {
	char dir[64];
};

static void tmp_make(struct tmp *t)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/bt-safeopen-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
}

static void tmp_remove(struct tmp *t)
{
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s", t->dir), 0);
}

static const char *in(const struct tmp *t, char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", t->dir, name);
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Opens of path from now on, as inotify reports them: an fd to read later. */
static int watch_opens(const char *path)
{
	int in_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in_fd >= 0);
	assert_true(inotify_add_watch(in_fd, path, IN_OPEN) >= 0);
	return in_fd;
}

/* How many IN_OPEN events are queued: fsnotify queues them in the opener's own open call, so
 * every open made before this call is already counted. */
static int opens_seen(int in_fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int n = 0;
	ssize_t r;
	while ((r = read(in_fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + r; p += sizeof(struct inotify_event) +
							 ((struct inotify_event *)(void *)p)->len)
			if (((struct inotify_event *)(void *)p)->mask & IN_OPEN)
				n++;
	assert_true(r < 0 && errno == EAGAIN);
	return n;
}

static void safeopen__regular_file__read_only_nonblocking_cloexec(void **state)
{
	struct tmp t;
	tmp_make(&t);
	char p[128];
	write_file(in(&t, p, sizeof(p), "f"), "hello");
	struct stat st, want;
	int fd = bt_open_regular(AT_FDCWD, p, 0, &st);
	assert_true(fd >= 0);
	assert_int_equal(stat(p, &want), 0);
	assert_int_equal(st.st_ino, want.st_ino);
	assert_int_equal(st.st_dev, want.st_dev);
	int fl = fcntl(fd, F_GETFL);
	assert_int_equal(fl & O_ACCMODE, O_RDONLY);
	assert_true(fl & O_NONBLOCK);
	assert_false(fl & O_PATH);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	char buf[16] = { 0 };
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "hello");
	close(fd);
	/* relative to a directory fd */
	int dfd = open(t.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	fd = bt_open_regular(dfd, "f", 0, NULL);
	assert_true(fd >= 0);
	close(fd);
	close(dfd);
	tmp_remove(&t);
}

/* A writer blocked in open(O_WRONLY) on a FIFO is released by any open for reading: it must still be
 * blocked in that open after bt_open_regular refused the FIFO, and inotify must have seen no open. */
static void safeopen__fifo__refused_without_releasing_its_writer(void **state)
{
	struct tmp t;
	tmp_make(&t);
	char fifo[128], link[128];
	in(&t, fifo, sizeof(fifo), "fifo");
	in(&t, link, sizeof(link), "link");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(fifo, link), 0);
	pid_t w = fork();
	assert_true(w >= 0);
	if (w == 0) {
		/* Once released it writes to a FIFO whose reader is gone: SIGPIPE ends it. */
		int fd = open(fifo, O_WRONLY);
		_exit(fd >= 0 && write(fd, "x", 1) == 1 ? 0 : 3);
	}
	/* wait until the writer is inside its open(): /proc/PID/syscall shows the call it is in */
	char sc[64], buf[128];
	snprintf(sc, sizeof(sc), "/proc/%d/syscall", (int)w);
	long nr = -1;
	for (;;) {
		FILE *f = fopen(sc, "re");
		assert_non_null(f);
		nr = fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 10) : -1;
		fclose(f);
		if (nr == SYS_openat || nr == SYS_open)
			break;
		assert_int_equal(waitpid(w, NULL, WNOHANG), 0);
		sched_yield();
	}
	int ino = watch_opens(fifo);
	assert_int_equal(bt_open_regular(AT_FDCWD, fifo, 0, NULL), -EINVAL);
	assert_int_equal(bt_open_regular(AT_FDCWD, link, 0, NULL), -EINVAL);
	assert_int_equal(bt_open_regular(AT_FDCWD, link, BT_OPEN_NOFOLLOW, NULL), -ELOOP);
	assert_int_equal(opens_seen(ino), 0);
	assert_int_equal(waitpid(w, NULL, WNOHANG), 0);
	FILE *f = fopen(sc, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_int_equal(strtol(buf, NULL, 10), nr);
	/* the oracle sees a real open: ours, for reading, which releases the writer */
	int rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(opens_seen(ino), 1);
	int status;
	assert_int_equal(waitpid(w, &status, 0), w);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(rfd);
	close(ino);
	tmp_remove(&t);
}

/* A device node is refused before its driver's open could run: a node on /tmp (often nodev, where
 * opening it would fail with EACCES instead), watched by inotify. Needs CAP_MKNOD; else /dev/null. */
static void safeopen__device_node__refused_without_opening(void **state)
{
	struct tmp t;
	tmp_make(&t);
	char node[128];
	in(&t, node, sizeof(node), "null");
	const char *dev = mknod(node, S_IFCHR | 0600, makedev(1, 3)) == 0 ? node : "/dev/null";
	int ino = watch_opens(dev);
	assert_int_equal(bt_open_regular(AT_FDCWD, dev, 0, NULL), -EINVAL);
	if (dev == node)
		assert_int_equal(opens_seen(ino), 0);
	close(ino);
	tmp_remove(&t);
}

static void safeopen__directory_socket_missing__errors(void **state)
{
	struct tmp t;
	tmp_make(&t);
	char p[128];
	assert_int_equal(bt_open_regular(AT_FDCWD, t.dir, 0, NULL), -EINVAL);
	assert_int_equal(bt_open_regular(AT_FDCWD, in(&t, p, sizeof(p), "none"), 0, NULL), -ENOENT);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", t.dir);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(bt_open_regular(AT_FDCWD, a.sun_path, 0, NULL), -EINVAL);
	close(s);
	assert_int_equal(bt_open_regular(AT_FDCWD, "", 0, NULL), -EINVAL);
	assert_int_equal(bt_open_regular(AT_FDCWD, NULL, 0, NULL), -EINVAL);
	tmp_remove(&t);
}

/* A symlink as last component: followed by default, refused with BT_OPEN_NOFOLLOW; a symlinked
 * directory on the way is followed either way. */
static void safeopen__symlinks__followed_or_refused(void **state)
{
	struct tmp t;
	tmp_make(&t);
	char f[128], l[128], d[128], p[160];
	write_file(in(&t, f, sizeof(f), "f"), "target");
	assert_int_equal(symlink(f, in(&t, l, sizeof(l), "l")), 0);
	assert_int_equal(symlink(t.dir, in(&t, d, sizeof(d), "d")), 0);
	struct stat st, want;
	assert_int_equal(stat(f, &want), 0);
	int fd = bt_open_regular(AT_FDCWD, l, 0, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_ino, want.st_ino);
	close(fd);
	assert_int_equal(bt_open_regular(AT_FDCWD, l, BT_OPEN_NOFOLLOW, NULL), -ELOOP);
	snprintf(p, sizeof(p), "%s/f", d);
	fd = bt_open_regular(AT_FDCWD, p, BT_OPEN_NOFOLLOW, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_ino, want.st_ino);
	close(fd);
	tmp_remove(&t);
}

static int refuse_small(void *ctx, int pfd, const struct stat *st)
{
	*(off_t *)ctx = st->st_size;
	return st->st_size < 6 ? -EPERM : 0;
}

/* A check refuses a file before it is opened: its error comes back and inotify sees no open; a file
 * it accepts is opened as by bt_open_regular. */
static void safeopen__checked__refused_before_opening(void **state)
{
	struct tmp t;
	tmp_make(&t);
	char small[128], big[128];
	write_file(in(&t, small, sizeof(small), "small"), "12345");
	write_file(in(&t, big, sizeof(big), "big"), "123456");
	int watch = watch_opens(small);
	off_t seen = -1;
	assert_int_equal(bt_open_regular_checked(AT_FDCWD, small, 0, NULL, refuse_small, &seen), -EPERM);
	assert_int_equal(seen, 5);
	assert_int_equal(opens_seen(watch), 0);
	close(watch);
	int fd = bt_open_regular_checked(AT_FDCWD, big, 0, NULL, refuse_small, &seen);
	assert_true(fd >= 0);
	assert_int_equal(seen, 6);
	close(fd);
	tmp_remove(&t);
}

/* With a root: absolute symlinks and ".." resolve inside it, magic links are refused. */
static void safeopen__in_root__symlinks_stay_inside(void **state)
{
	struct tmp t;
	tmp_make(&t);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "mkdir -p %1$s/etc %1$s/lib && printf inside > %1$s/etc/passwd && "
		 "ln -s /etc/passwd %1$s/lib/abs && ln -s ../../../../../../etc/passwd %1$s/lib/rel",
		 t.dir);
	assert_int_equal(bt_test_run(NULL, 0, "%s", cmd), 0);
	int root = open(t.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	static const char *const paths[] = { "/lib/abs", "/lib/rel", "/../../etc/passwd", "lib/abs" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char buf[64] = { 0 };
		int fd = bt_open_regular(root, paths[i], BT_OPEN_IN_ROOT, NULL);
		assert_true(fd >= 0);
		assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
		assert_string_equal(buf, "inside");
		close(fd);
	}
	/* the same symlink, refused as a last component; with no link at all, both */
	assert_int_equal(bt_open_regular(root, "/lib/abs", BT_OPEN_IN_ROOT | BT_OPEN_NOFOLLOW, NULL), -ELOOP);
	assert_int_equal(bt_open_regular(root, "/lib/rel", BT_OPEN_IN_ROOT | BT_OPEN_NO_SYMLINKS, NULL), -ELOOP);
	int ok = bt_open_regular(root, "/etc/passwd", BT_OPEN_IN_ROOT | BT_OPEN_NO_SYMLINKS, NULL);
	assert_true(ok >= 0);
	close(ok);
	/* /proc/self/fd/N would lead to any file we hold open: refused, it is a magic link */
	char magic[64];
	int any = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
	assert_true(any >= 0);
	snprintf(magic, sizeof(magic), "/proc/self/fd/%d", any);
	int proc = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(bt_open_regular(proc, magic, BT_OPEN_IN_ROOT, NULL) < 0);
	close(proc);
	close(any);
	close(root);
	tmp_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(safeopen__regular_file__read_only_nonblocking_cloexec),
		cmocka_unit_test(safeopen__fifo__refused_without_releasing_its_writer),
		cmocka_unit_test(safeopen__device_node__refused_without_opening),
		cmocka_unit_test(safeopen__directory_socket_missing__errors),
		cmocka_unit_test(safeopen__symlinks__followed_or_refused),
		cmocka_unit_test(safeopen__in_root__symlinks_stay_inside),
		cmocka_unit_test(safeopen__checked__refused_before_opening),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
