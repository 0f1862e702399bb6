/* profdir.c - timestamped profile files, written atomically and pruned oldest first. */
#include "output/profdir.h"
#include "base/grow.h"
#include "base/wfile.h"

#include <ctype.h>
#include <stdbool.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* fn's output into w, then renamed into place (or removed on any error). */
static int write_into(struct bt_wfile *w, int (*fn)(void *ctx, FILE *f), void *ctx)
{
	FILE *f = bt_wfile_stream(w);
	if (!f) {
		int e = -errno;
		bt_wfile_abort(w);
		return e;
	}
	int err = fn(ctx, f);
	if (fflush(f) != 0 && !err)
		err = -errno;
	if (!err && fsync(fileno(f)) != 0)
		err = -errno;
	if (fclose(f) != 0 && !err)
		err = -errno;
	if (err) {
		bt_wfile_abort(w);
		return err;
	}
	return bt_wfile_commit(w);
}

int bt_atomic_write(const char *path, int (*fn)(void *ctx, FILE *f), void *ctx)
{
	struct bt_wfile w;
	int fd = bt_wfile_create(&w, path, BT_WFILE_MODE);
	return fd < 0 ? fd : write_into(&w, fn, ctx);
}

int bt_atomic_write_at(int dirfd, const char *name, int (*fn)(void *ctx, FILE *f), void *ctx)
{
	struct bt_wfile w;
	int fd = bt_wfile_open(&w, dirfd, name, BT_WFILE_MODE);
	return fd < 0 ? fd : write_into(&w, fn, ctx);
}

int bt_profdir_name(char *buf, size_t len, const char *dir, const char *prefix, int64_t wall_ns,
		    const char *ext)
{
	time_t t = (time_t)(wall_ns / 1000000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char ts[32];
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%S", &tm);
	int n = snprintf(buf, len, "%s%s%s-%s.%03dZ.%s", dir ? dir : "", dir ? "/" : "", prefix, ts,
			 (int)(wall_ns / 1000000 % 1000), ext);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name is PREFIX-YYYYmmddTHHMMSS.mmmZ.EXT exactly, as bt_profdir_name makes them. */
static bool our_name(const char *name, const char *prefix, const char *ext)
{
	static const char pattern[] = "-DDDDDDDDTDDDDDD.DDDZ.";
	size_t pl = strlen(prefix), n = strlen(name);
	if (strncmp(name, prefix, pl) || n != pl + sizeof(pattern) - 1 + strlen(ext) || strcmp(name + n - strlen(ext), ext))
		return false;
	for (size_t i = 0; pattern[i]; i++) {
		char c = name[pl + i];
		if (pattern[i] == 'D' ? !isdigit((unsigned char)c) : c != pattern[i])
			return false;
	}
	return true;
}

int bt_profdir_prune(int dirfd, const char *prefix, const char *ext, unsigned keep, unsigned *removed)
{
	if (removed)
		*removed = 0;
	int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		int e = -errno;
		if (dfd >= 0)
			close(dfd);
		return e;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		/* ours: a regular file of our user's under a name we make (never a link, never a file
		 * someone else put there, nor a temporary file being written) */
		if (!our_name(de->d_name, prefix, ext) || fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (bt_grow((void **)&names, &cap, n + 1, sizeof(*names), 64) || !(names[n] = strdup(de->d_name))) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (!err && n > keep) {
		qsort(names, n, sizeof(*names), name_cmp);
		for (size_t i = 0; i < n - keep; i++)
			if (unlinkat(dirfd, names[i], 0) == 0 && removed)
				(*removed)++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err;
}
