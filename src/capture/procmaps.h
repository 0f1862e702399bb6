/* procmaps.h - /proc/PID/maps lines parsed, the userspace fallback for build-ids of mappings
 * through /proc/PID/map_files (the exact mapped file, even if deleted or replaced), and files a
 * process names opened inside its own root (containers). */
#ifndef BT_PROCMAPS_H
#define BT_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "elf/buildid.h"

struct bt_procmap {
	uint64_t start, end, offset;
	uint32_t dev_major, dev_minor;
	uint64_t ino;
	char perms[5];   /* "r-xp" */
	bool deleted;    /* path ended in " (deleted)", which is stripped from path */
	char path[4096]; /* "" for anonymous mappings; [heap], [vdso] ... as they appear */
};

/* Parses one maps line (without or with its trailing newline). 0 or -EINVAL. */
int bt_procmap_parse_line(const char *line, struct bt_procmap *out);

typedef int (*bt_procmap_fn)(void *ctx, const struct bt_procmap *m);
/* Calls fn for each line of ROOT/proc/PID/maps (root "" for the real /proc); stops at fn's first
 * non-zero return and returns it. 0, or -errno (-ESRCH when the process is gone, -EINVAL at the
 * first malformed line, after fn has seen the lines before it). */
int bt_procmaps_foreach(const char *root, int pid, bt_procmap_fn fn, void *ctx);

/* Opens ROOT/proc/PID/map_files/START-END (O_RDONLY|O_NONBLOCK|O_CLOEXEC): the file exactly as
 * mapped; START-END must be the mapping's exact bounds (else -ENOENT). Only regular files are
 * opened (else -EINVAL, checked before opening, as opening a device can have side effects; see
 * base/safeopen.h). Returns an fd or -errno. */
int bt_procmaps_open_mapped(const char *root, int pid, uint64_t start, uint64_t end);

/* Build-id of the file mapped at [start,end) of pid, through map_files. 0 or -errno. */
int bt_procmaps_buildid(const char *root, int pid, uint64_t start, uint64_t end,
			struct bt_build_id *out);

/* Opens path (absolute, as pid names it) inside ROOT/proc/PID/root, the process's root directory:
 * symlinks and ".." never lead out of it, magic links are refused, and only a regular file is
 * opened for reading (O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOCTTY; checked before it is opened, else
 * -EINVAL). Without openat2 (kernels before 5.6) a process whose root differs from ours gives
 * -EXDEV. Returns an fd or -errno (-ESRCH when the process is gone). */
int bt_procmaps_open_in_root(const char *root, int pid, const char *path);

/* The largest vDSO image read (the kernel's is two or three pages). */
#define BT_VDSO_MAX ((size_t)1 << 20)

/* The vDSO pid maps: the bounds of its [vdso] line, and a copy of its image read from
 * ROOT/proc/PID/mem into a new memory file (close-on-exec, sealed against writes), whose descriptor
 * is returned. The copy is what the process maps, which it may have changed: hostile bytes, to be
 * parsed as any file is. fd, -ENOENT (no [vdso]), -ESRCH (the process is gone), -E2BIG (larger than
 * BT_VDSO_MAX), or -errno. */
int bt_procmaps_open_vdso(const char *root, int pid, uint64_t *start, uint64_t *end);

/* ROOT/proc/PID/root, the process's root directory, as an O_PATH descriptor for base/safeopen.h's
 * BT_OPEN_IN_ROOT. fd or -errno (-ESRCH when the process is gone). */
int bt_procmaps_root_fd(const char *root, int pid);

#endif
