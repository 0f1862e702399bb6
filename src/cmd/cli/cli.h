/* cli.h - command-line helpers shared by the subcommands: strict number, size and pid-list parsing,
 * and the one error printer ("buildtrace: ..." on stderr). */
#ifndef BT_CLI_H
#define BT_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* Prints "buildtrace: MESSAGE" on stderr, escaped (base/esc.h: a message may hold a path or a name
 * a profiled program chose), and returns code. */
int bt_cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a message already made: "buildtrace: MSG" escaped, on stderr. */
void bt_cli_say(const char *msg);

/* "123,456": a malloc'ed array of positive pids. 0, -EINVAL, -ERANGE or -ENOMEM. */
int bt_cli_parse_pids(const char *s, int **pids, size_t *n);
/* A decimal integer in [min, max]. 0 or -EINVAL. */
int bt_cli_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned *out);
/* Seconds, possibly fractional, > 0 and at most ten years. 0 or -EINVAL. */
int bt_cli_parse_seconds(const char *s, double *out);
/* A duration: a number (fractions allowed) with a unit, us, ms, s, m or h, seconds without one; more
 * than 0 and at most ten years. In seconds. 0 or -EINVAL. */
int bt_cli_parse_duration(const char *s, double *out);
/* A CPU list as the kernel prints them, "0-3,6": set[cpu] = true for each, which must be below
 * max; everything else is left as it was. How many were not set before, or -EINVAL (-ERANGE: a
 * CPU too high), and then nothing is set. */
int bt_cli_parse_cpus(const char *s, bool *set, size_t max);
/* The process (thread group) a thread belongs to, from PROC_ROOT/proc/TID/status ("" is the real
 * /proc). The tgid, or -ESRCH when there is no such thread, -errno otherwise. */
int bt_cli_tid_tgid(const char *proc_root, int tid);
/* Bytes with an optional K, M or G suffix. 0 or -EINVAL. */
int bt_cli_parse_size(const char *s, size_t *out);
/* kernel.perf_event_max_sample_rate, or 100000 when unreadable. */
unsigned long bt_cli_max_sample_rate(void);
bool bt_cli_pid_exists(int pid);
/* Why an output file could not be written, for -errno from bt_wfile: what -EPERM means there,
 * else strerror. */
const char *bt_cli_write_error(int err);

#endif
