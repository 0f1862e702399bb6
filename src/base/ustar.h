/* ustar.h - a streaming tar writer (POSIX ustar, with pax extended headers for long names, long
 * link targets and large files), enough to archive build-id cache entries without libarchive. */
#ifndef BT_USTAR_H
#define BT_USTAR_H

#include <stdint.h>
#include <sys/types.h>

struct bt_ustar {
	int fd;          /* borrowed */
	int err;         /* the first error; every later call returns it */
	uint64_t written;
};

void bt_ustar_init(struct bt_ustar *t, int fd);
/* Each returns 0 or -errno; names are relative paths without "..". */
int bt_ustar_add_dir(struct bt_ustar *t, const char *name, mode_t mode, int64_t mtime);
int bt_ustar_add_symlink(struct bt_ustar *t, const char *name, const char *target, int64_t mtime);
/* Copies size bytes of fd from offset 0 (pread); -EIO when the file is shorter than size. */
int bt_ustar_add_file(struct bt_ustar *t, const char *name, mode_t mode, int64_t mtime, int fd,
		      uint64_t size);
/* Writes the end-of-archive blocks. */
int bt_ustar_finish(struct bt_ustar *t);

#endif
