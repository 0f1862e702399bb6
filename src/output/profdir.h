/* profdir.h - a directory of profiles written one per interval: each file written atomically
 * (temporary name, then rename) under a timestamped name, and the oldest of a kind removed beyond
 * a count. */
#ifndef BT_PROFDIR_H
#define BT_PROFDIR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes what fn writes into path, atomically (bt_wfile: a random temporary name in path's
 * directory, 0600, renamed over path, never following a link there): a reader sees the old file or
 * the whole new one. On any error only the temporary file is removed. 0 or -errno. */
int bt_atomic_write(const char *path, int (*fn)(void *ctx, FILE *f), void *ctx);

/* The same for name (no '/') in the directory open as dirfd: a directory held open is written
 * however its path changes meanwhile. */
int bt_atomic_write_at(int dirfd, const char *name, int (*fn)(void *ctx, FILE *f), void *ctx);

/* DIR/PREFIX-YYYYmmddTHHMMSS.mmmZ.EXT for the time wall_ns (UTC), or the name alone when dir is
 * NULL: names sort by time. 0 or -ENAMETOOLONG. */
int bt_profdir_name(char *buf, size_t len, const char *dir, const char *prefix, int64_t wall_ns,
		    const char *ext);

/* Removes the oldest of the files this process's user wrote in the directory open as dirfd under
 * names bt_profdir_name makes (PREFIX-YYYYmmddTHHMMSS.mmmZ.EXT exactly, regular files owned by the
 * effective uid) until at most keep are left; nothing else is counted or removed, whatever its name
 * (a file another user planted there cannot push ours out). *removed (may be NULL) counts what
 * went. 0 or -errno. */
int bt_profdir_prune(int dirfd, const char *prefix, const char *ext, unsigned keep, unsigned *removed);

#endif
