/* pathfmt.h - formatting paths into fixed buffers, where truncation is an error, not a shorter path. */
#ifndef BT_PATHFMT_H
#define BT_PATHFMT_H

#include <stddef.h>

/* snprintf into buf; 0, -ENAMETOOLONG when it did not fit, -EINVAL on a formatting error. */
int bt_path_fmt(char *buf, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));

#endif
