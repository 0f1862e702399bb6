/* profdir.c - timestamped profile files, written atomically and pruned oldest first. */
#include "output/profdir.h"
#include "base/wfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int bt_atomic_write(const char *path, int (*fn)(void *ctx, FILE *f), void *ctx)
{
	struct bt_wfile w;
	int fd = bt_wfile_create(&w, path, BT_WFILE_MODE);
	if (fd < 0)
		return fd;
	FILE *f = bt_wfile_stream(&w);
	if (!f) {
		int e = -errno;
		bt_wfile_abort(&w);
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
		bt_wfile_abort(&w);
		return err;
	}
	return bt_wfile_commit(&w);
}

int bt_profdir_name(char *buf, size_t len, const char *dir, const char *prefix, int64_t wall_ns,
		    const char *ext)
{
	time_t t = (time_t)(wall_ns / 1000000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char ts[32];
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%S", &tm);
	int n = snprintf(buf, len, "%s/%s-%s.%03dZ.%s", dir, prefix, ts, (int)(wall_ns / 1000000 % 1000), ext);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bt_profdir_prune(const char *dir, const char *prefix, const char *ext, unsigned keep, unsigned *removed)
{
	if (removed)
		*removed = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	char **names = NULL;
	size_t n = 0, cap = 0;
	size_t plen = strlen(prefix), elen = strlen(ext);
	int err = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		/* PREFIX-...EXT, and not a temporary file being written */
		if (l <= plen + elen + 2 || strncmp(de->d_name, prefix, plen) || de->d_name[plen] != '-' ||
		    strcmp(de->d_name + l - elen, ext) || de->d_name[l - elen - 1] != '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			char **nn = realloc(names, ncap * sizeof(*nn));
			if (!nn) {
				err = -ENOMEM;
				break;
			}
			names = nn;
			cap = ncap;
		}
		if (!(names[n] = strdup(de->d_name))) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (!err && n > keep) {
		qsort(names, n, sizeof(*names), name_cmp);
		for (size_t i = 0; i < n - keep; i++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			if (unlink(path) == 0 && removed)
				(*removed)++;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err;
}
