/* cli.c - see cli.h. */
#include "cmd/cli/cli.h"

#include "base/esc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bt_cli_error(int code, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	bt_cli_say(n < 0 ? "out of memory" : msg);
	free(msg);
	return code;
}

void bt_cli_say(const char *msg)
{
	/* a message may name what a profiled program chose (a path, a name): escaped */
	fputs("buildtrace: ", stderr);
	bt_esc_write(stderr, msg, strlen(msg));
	fputc('\n', stderr);
}

int bt_cli_parse_pids(const char *s, int **pids, size_t *n)
{
	*pids = NULL;
	*n = 0;
	if (!s || !*s)
		return -EINVAL;
	size_t cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == ',';
	int *v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	const char *p = s;
	for (;;) {
		if (*p < '0' || *p > '9') {
			free(v);
			return -EINVAL;
		}
		char *end;
		errno = 0;
		long x = strtol(p, &end, 10);
		if (errno || x <= 0 || x > INT_MAX) {
			free(v);
			return -ERANGE;
		}
		v[k++] = (int)x;
		if (*end == '\0')
			break;
		if (*end != ',') {
			free(v);
			return -EINVAL;
		}
		p = end + 1;
	}
	*pids = v;
	*n = k;
	return 0;
}

int bt_cli_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned *out)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long x = strtoul(s, &end, 10);
	if (errno || *end || x < min || x > max || x > UINT_MAX)
		return -EINVAL;
	*out = (unsigned)x;
	return 0;
}

int bt_cli_parse_seconds(const char *s, double *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (errno || *end || !isfinite(x) || x <= 0 || x > 10.0 * 365 * 86400)
		return -EINVAL;
	*out = x;
	return 0;
}

int bt_cli_parse_duration(const char *s, double *out)
{
	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (errno || end == s || !isfinite(x))
		return -EINVAL;
	static const struct { const char *unit; double seconds; } units[] = {
		{ "", 1 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 }, { "m", 60 }, { "h", 3600 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		x *= units[i].seconds;
		if (x <= 0 || x > 10.0 * 365 * 86400)
			return -EINVAL;
		*out = x;
		return 0;
	}
	return -EINVAL;
}

/* One decimal number at *p, advancing it; -1 when there is none or it is too long. */
static long cpu_number(const char **p)
{
	if (**p < '0' || **p > '9')
		return -1;
	char *end;
	errno = 0;
	long v = strtol(*p, &end, 10);
	if (errno || v > INT_MAX)
		return -1;
	*p = end;
	return v;
}

int bt_cli_parse_cpus(const char *s, bool *set, size_t max)
{
	if (!s || !*s)
		return -EINVAL;
	/* Checked whole before anything is set. */
	for (int pass = 0; pass < 2; pass++) {
		int n = 0;
		const char *p = s;
		for (;;) {
			long a = cpu_number(&p), b = a;
			if (a < 0)
				return -EINVAL;
			if (*p == '-') {
				p++;
				b = cpu_number(&p);
				if (b < a)
					return -EINVAL;
			}
			if ((size_t)b >= max)
				return -ERANGE;
			for (long c = a; c <= b; c++) {
				n += pass == 0 || !set[c];
				if (pass)
					set[c] = true;
			}
			if (*p == '\0')
				break;
			if (*p++ != ',' || !*p)
				return -EINVAL;
		}
		if (pass)
			return n;
	}
	return -EINVAL;
}

int bt_cli_tid_tgid(const char *proc_root, int tid)
{
	char path[4096], line[256];
	if (tid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "%s/proc/%d/status", proc_root ? proc_root : "", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	int tgid = -EINVAL;
	while (fgets(line, sizeof(line), f)) {
		int v;
		if (sscanf(line, "Tgid: %d", &v) == 1 && v > 0) {
			tgid = v;
			break;
		}
	}
	fclose(f);
	return tgid;
}

int bt_cli_parse_size(const char *s, size_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || x > (SIZE_MAX >> shift))
		return -EINVAL;
	*out = (size_t)(x << shift);
	return 0;
}

unsigned long bt_cli_max_sample_rate(void)
{
	unsigned long v = 100000;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	if (f) {
		if (fscanf(f, "%lu", &v) != 1 || v == 0)
			v = 100000;
		fclose(f);
	}
	return v;
}

bool bt_cli_pid_exists(int pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

const char *bt_cli_write_error(int err)
{
	if (err == -EPERM)
		return "a symbolic link, FIFO or device owned by another user: not written through";
	return strerror(-err);
}
