/* cli.h - command-line helpers shared by the subcommands: strict number, size and pid-list parsing,
 * and the one error printer ("buildtrace: ..." on stderr). */
#ifndef BT_CLI_H
#define BT_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* Prints "buildtrace: MESSAGE" on stderr and returns code. */
int bt_cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "123,456": a malloc'ed array of positive pids. 0, -EINVAL, -ERANGE or -ENOMEM. */
int bt_cli_parse_pids(const char *s, int **pids, size_t *n);
/* A decimal integer in [min, max]. 0 or -EINVAL. */
int bt_cli_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned *out);
/* Seconds, possibly fractional, > 0 and at most ten years. 0 or -EINVAL. */
int bt_cli_parse_seconds(const char *s, double *out);
/* Bytes with an optional K, M or G suffix. 0 or -EINVAL. */
int bt_cli_parse_size(const char *s, size_t *out);
/* kernel.perf_event_max_sample_rate, or 100000 when unreadable. */
unsigned long bt_cli_max_sample_rate(void);
bool bt_cli_pid_exists(int pid);
/* Why an output file could not be written, for -errno from bt_wfile: what -EPERM means there,
 * else strerror. */
const char *bt_cli_write_error(int err);

#endif
