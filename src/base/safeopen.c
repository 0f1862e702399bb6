/* safeopen.c - opens a path for reading only once it is known to be a regular file: resolved with
 * O_PATH (openat2 where a root applies), checked with fstat, reopened through /proc/self/fd. */
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Without openat2 (before Linux 5.6) a root other than ours cannot be enforced: a path resolved in
 * ours means the same only if dirfd is our own root. */
static int same_root_as_ours(int dirfd)
{
	struct stat theirs, ours;
	if (fstat(dirfd, &theirs) != 0 || stat("/", &ours) != 0)
		return -errno;
	return theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino ? 0 : -EXDEV;
}

/* An O_PATH descriptor of what path names: nothing is opened yet, whatever the file is. */
static int resolve(int dirfd, const char *path, unsigned flags)
{
	int oflags = O_PATH | O_CLOEXEC | ((flags & (BT_OPEN_NOFOLLOW | BT_OPEN_NO_SYMLINKS)) ? O_NOFOLLOW : 0);
	if (flags & BT_OPEN_IN_ROOT) {
		struct open_how how = {
			.flags = (unsigned)oflags,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
				   ((flags & BT_OPEN_NO_SYMLINKS) ? RESOLVE_NO_SYMLINKS : 0),
		};
		int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno != ENOSYS)
			return -errno;
		int err = same_root_as_ours(dirfd);
		if (err)
			return err;
	}
	int fd = openat(dirfd, path, oflags);
	return fd >= 0 ? fd : -errno;
}

int bt_open_regular(int dirfd, const char *path, unsigned flags, struct stat *st)
{
	return bt_open_regular_checked(dirfd, path, flags, st, NULL, NULL);
}

int bt_open_regular_checked(int dirfd, const char *path, unsigned flags, struct stat *st,
			    int (*check)(void *ctx, int pfd, const struct stat *st), void *ctx)
{
	if (!path || !path[0])
		return -EINVAL;
	int pfd = resolve(dirfd, path, flags);
	if (pfd < 0)
		return pfd;
	struct stat s;
	int err = 0;
	if (fstat(pfd, &s) != 0)
		err = -errno;
	else if (S_ISLNK(s.st_mode))
		err = -ELOOP;  /* O_PATH|O_NOFOLLOW gave the link itself */
	else if (!S_ISREG(s.st_mode))
		err = -EINVAL;
	else if (check)
		err = check(ctx, pfd, &s);
	if (err) {
		close(pfd);
		return err;
	}
	/* The same file, now for reading: /proc/self/fd/N names the descriptor's file, not the path,
	 * which may have been replaced meanwhile. */
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	int fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (err)
		return err;
	if (st)
		*st = s;
	return fd;
}
