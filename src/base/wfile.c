/* wfile.c - create-then-rename writes inside a directory fd, following no link. */
#include "base/wfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static bool plain_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       strlen(name) <= NAME_MAX;
}

static void release(struct bt_wfile *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->own_dir && w->dirfd >= 0)
		close(w->dirfd);
	w->fd = -1;
	w->dirfd = -1;
	w->own_dir = false;
	w->tmp[0] = '\0';
}

/* The temporary name still names the file we created (an owner of the directory could have
 * replaced it meanwhile). */
static bool tmp_is_ours(const struct bt_wfile *w)
{
	struct stat st;
	return w->tmp[0] && fstatat(w->dirfd, w->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       st.st_dev == w->dev && st.st_ino == w->ino;
}

static int create_tmp(struct bt_wfile *w, mode_t mode, int access)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		unsigned char r[8];
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -EIO;
		snprintf(w->tmp, sizeof(w->tmp), ".tmp.%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1],
			 r[2], r[3], r[4], r[5], r[6], r[7]);
		int fd = openat(w->dirfd, w->tmp,
				access | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0) {
			w->dev = st.st_dev;
			w->ino = st.st_ino;
			return fd;
		}
		if (fd >= 0) {
			int e = -errno;
			unlinkat(w->dirfd, w->tmp, 0);
			close(fd);
			return e;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int bt_wfile_open(struct bt_wfile *w, int dirfd, const char *name, mode_t mode)
{
	*w = (struct bt_wfile){ .fd = -1, .dirfd = dirfd };
	if (!plain_name(name) || dirfd < 0)
		return -EINVAL;
	snprintf(w->name, sizeof(w->name), "%s", name);
	int fd = create_tmp(w, mode, O_WRONLY);
	if (fd < 0) {
		w->dirfd = -1;
		w->tmp[0] = '\0';
		return fd;
	}
	return w->fd = fd;
}

/* An existing final name that is not a regular file: written in place when it is the caller's or
 * root's, refused otherwise (a FIFO or a link planted by another user). */
static int open_existing(struct bt_wfile *w, const char *path, const struct stat *st)
{
	if (st->st_uid != geteuid() && st->st_uid != 0)
		return -EPERM;
	int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC;
	if (!S_ISLNK(st->st_mode))
		flags |= O_NOFOLLOW;
	int fd = open(path, flags);
	if (fd < 0)
		return -errno;
	struct stat t;
	if (fstat(fd, &t) != 0 || S_ISDIR(t.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	if (S_ISREG(t.st_mode) && ftruncate(fd, 0) != 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	w->direct = true;
	return w->fd = fd;
}

/* Opens path's directory and points *name at its last component. dirfd or -errno. */
static int open_parent(const char *path, const char **name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (slash && (size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else if (slash)
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), ".");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -errno : dfd;
}

int bt_wfile_create(struct bt_wfile *w, const char *path, mode_t mode)
{
	*w = (struct bt_wfile){ .fd = -1, .dirfd = -1 };
	if (!path || !*path)
		return -EINVAL;
	const char *name;
	int dfd = open_parent(path, &name);
	if (dfd < 0)
		return dfd;
	int fd = bt_wfile_open(w, dfd, name, mode);
	if (fd < 0) {
		close(dfd);
		return fd;
	}
	w->own_dir = true;
	return fd;
}

int bt_wfile_open_path(struct bt_wfile *w, const char *path, mode_t mode)
{
	*w = (struct bt_wfile){ .fd = -1, .dirfd = -1 };
	if (!path || !*path)
		return -EINVAL;
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (!S_ISREG(st.st_mode))
			return open_existing(w, path, &st);
	} else if (errno != ENOENT) {
		return -errno;
	}
	return bt_wfile_create(w, path, mode);
}

int bt_wfile_commit(struct bt_wfile *w)
{
	if (w->fd < 0)
		return -EBADF;
	if (w->direct) {
		int err = close(w->fd) != 0 ? -errno : 0;
		w->fd = -1;
		release(w);
		return err;
	}
	int err = close(w->fd) != 0 ? -errno : 0;
	w->fd = -1;
	if (!err && !tmp_is_ours(w))
		err = -ESTALE;
	if (!err && renameat(w->dirfd, w->tmp, w->dirfd, w->name) != 0)
		err = -errno;
	if (err && tmp_is_ours(w))
		unlinkat(w->dirfd, w->tmp, 0);
	release(w);
	return err;
}

int bt_wfile_check_commit(const struct bt_wfile *w)
{
	if (w->direct)
		return 0;
	if (w->fd < 0 || w->dirfd < 0)
		return -EBADF;
	/* the kernel's own decision for the effective ids and capabilities (faccessat2) */
	if (faccessat(w->dirfd, ".", W_OK | X_OK, AT_EACCESS) != 0)
		return -errno;
	struct stat d, t;
	if (fstat(w->dirfd, &d) != 0)
		return -errno;
	if ((d.st_mode & S_ISVTX) && d.st_uid != geteuid() &&
	    fstatat(w->dirfd, w->name, &t, AT_SYMLINK_NOFOLLOW) == 0 && t.st_uid != geteuid())
		return -EACCES;
	return 0;
}

void bt_wfile_abort(struct bt_wfile *w)
{
	if (w->fd >= 0 && !w->direct && tmp_is_ours(w))
		unlinkat(w->dirfd, w->tmp, 0);
	release(w);
}

FILE *bt_wfile_stream(const struct bt_wfile *w)
{
	int fd = w->fd >= 0 ? fcntl(w->fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0) {
		if (w->fd < 0)
			errno = EBADF;
		return NULL;
	}
	FILE *f = fdopen(fd, "we");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int bt_wfile_open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	int e = -errno;
	struct stat st;
	/* O_DIRECTORY|O_NOFOLLOW says ENOTDIR for a link: say what it is. */
	if (e == -ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		e = -ELOOP;
	return e;
}

int bt_wfile_scratch(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, BT_WFILE_MODE);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR))
		return fd >= 0 ? fd : -errno;
	struct bt_wfile w = { .fd = -1, .dirfd = bt_wfile_open_dir(dir) };
	if (w.dirfd < 0)
		return w.dirfd;
	fd = create_tmp(&w, BT_WFILE_MODE, O_RDWR);
	if (fd >= 0 && unlinkat(w.dirfd, w.tmp, 0) != 0) {
		int e = -errno;
		close(fd);
		fd = e;
	}
	close(w.dirfd);
	return fd;
}

int bt_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
