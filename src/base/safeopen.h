/* safeopen.h - the one way to open for reading a file whose path someone else may have chosen (a
 * profiled process, a debug link, another user's directory): nothing but a regular file is ever
 * opened, so a FIFO's blocked writer is not released and no device driver's open runs. */
#ifndef BT_SAFEOPEN_H
#define BT_SAFEOPEN_H

#include <sys/stat.h>

enum bt_open_flags {
	/* A symbolic link as the last component is refused (-ELOOP), whatever it points to. */
	BT_OPEN_NOFOLLOW = 1u << 0,
	/* dirfd is a root directory (a process's /proc/PID/root): the path is resolved as if dirfd
	 * were "/", so absolute symlinks and ".." never lead out of it, and magic links (/proc/PID/fd
	 * entries) are refused. Needs openat2 (Linux 5.6); without it, only a dirfd that is our own
	 * root is served, else -EXDEV. */
	BT_OPEN_IN_ROOT = 1u << 1,
	/* No symbolic link anywhere on the way, the last component included (RESOLVE_NO_SYMLINKS with
	 * BT_OPEN_IN_ROOT; else only the last component, as BT_OPEN_NOFOLLOW): -ELOOP. */
	BT_OPEN_NO_SYMLINKS = 1u << 2,
};

/* Opens path (absolute, or relative to dirfd; AT_FDCWD for the working directory) with
 * O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOCTTY. The path is first resolved with O_PATH, which opens
 * nothing; fstat checks that it is a regular file; only then is that very file (not the path again)
 * reopened for reading, through /proc/self/fd. st, when not NULL, receives its status.
 * Returns the fd, or -errno: -EINVAL when the path names something other than a regular file (a
 * FIFO, a device, a socket, a directory), -ELOOP for a symlink refused by BT_OPEN_NOFOLLOW,
 * -EXDEV (see BT_OPEN_IN_ROOT), or what resolving the path gave (-ENOENT, -EACCES ...). */
int bt_open_regular(int dirfd, const char *path, unsigned flags, struct stat *st);

/* bt_open_regular with one more test before the file is opened for reading: check(ctx, pfd, st)
 * gets the O_PATH descriptor of what path names (a regular file) and its status, and a non-zero
 * return refuses it (and is returned): nothing the check refuses is ever opened. */
int bt_open_regular_checked(int dirfd, const char *path, unsigned flags, struct stat *st,
			    int (*check)(void *ctx, int pfd, const struct stat *st), void *ctx);

#endif
