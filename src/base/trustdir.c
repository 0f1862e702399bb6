/* trustdir.c - walks a directory's real path from the top down: every directory must belong to us
 * or root, and only sticky ones may be writable by others, except the last, which must not be. */
#include "base/trustdir.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The real path of the nearest existing directory at or above path, into real. */
static int nearest_existing(const char *path, char *real)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (;;) {
		if (realpath(tmp, real))
			return 0;
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		char *slash = strrchr(tmp, '/');
		if (!slash)
			return -ENOENT;
		if (slash == tmp) {
			tmp[1] = '\0';  /* "/" always exists */
			continue;
		}
		*slash = '\0';
	}
}

static int judge(const char *dir, bool last, char *why, size_t whylen)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
	bool ours = st.st_uid == geteuid() || st.st_uid == 0;
	if (ours && (!others_write || (!last && (st.st_mode & S_ISVTX))))
		return 0;
	if (why && !ours)
		snprintf(why, whylen, "%s belongs to uid %u", dir, (unsigned)st.st_uid);
	else if (why)
		snprintf(why, whylen, "%s may be written by others (mode %04o)", dir,
			 (unsigned)(st.st_mode & 07777));
	return -EPERM;
}

int bt_dir_trusted(const char *path, char *why, size_t whylen)
{
	if (!path || path[0] != '/')
		return -EINVAL;
	char real[PATH_MAX];
	int err = nearest_existing(path, real);
	if (err)
		return err;
	/* "/", then each longer prefix that ends at a '/', then the whole path */
	size_t n = strlen(real);
	err = judge("/", n == 1, why, whylen);
	for (size_t i = 1; !err && i <= n && n > 1; i++) {
		if (i < n && real[i] != '/')
			continue;
		char c = real[i];
		real[i] = '\0';
		err = judge(real, i == n, why, whylen);
		real[i] = c;
	}
	return err;
}

int bt_file_trusted(int fd, const char *path, bool secret, char *why, size_t whylen)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	mode_t bad = secret ? 077 : 022;
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		if (why)
			snprintf(why, whylen, "%s belongs to uid %u", path, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & bad) {
		if (why)
			snprintf(why, whylen, "%s may be %s by others (mode %04o)", path,
				 (st.st_mode & 022) ? "written" : "read", (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	/* the directory the file really is in */
	char self[64], real[PATH_MAX];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(self, real, sizeof(real) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	real[n] = '\0';
	char *slash = strrchr(real, '/');
	if (!slash || real[0] != '/')
		return -ENOENT;  /* deleted meanwhile, or not reachable from our root */
	slash[slash == real] = '\0';
	return bt_dir_trusted(real, why, whylen);
}
