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

/* DIR/PREFIX-YYYYmmddTHHMMSS.mmmZ.EXT for the time wall_ns (UTC): names sort by time.
 * 0 or -ENAMETOOLONG. */
int bt_profdir_name(char *buf, size_t len, const char *dir, const char *prefix, int64_t wall_ns,
		    const char *ext);

/* Removes the oldest DIR/PREFIX-TIME.EXT files until at most keep are left (files of a longer prefix
 * that begins with this one are not this one's); *removed (may be NULL) counts them. 0 or -errno. */
int bt_profdir_prune(const char *dir, const char *prefix, const char *ext, unsigned keep, unsigned *removed);

#endif
