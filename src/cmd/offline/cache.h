/* cache.h - what the commands that read the build-id cache share with `buildtrace cache`: which
 * cache directory a --cache-dir option names. */
#ifndef BT_CMD_CACHE_H
#define BT_CMD_CACHE_H

#include <stddef.h>

/* The cache given (NULL: the default, ~/.debug) into buf. 0, else the exit code after printing
 * why there is none. */
int bt_cache_dir_arg(const char *given, char *buf, size_t len);

#endif
