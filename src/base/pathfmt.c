/* pathfmt.c - see pathfmt.h. */
#include "base/pathfmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int bt_path_fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	return n < 0 ? -EINVAL : (size_t)n >= len ? -ENAMETOOLONG : 0;
}
