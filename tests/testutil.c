/* testutil.c - see testutil.h. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/capability.h>

int bt_test_run(char *out, size_t len, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	size_t n = 0;
	if (out && len) {
		size_t r;
		while (n + 1 < len && (r = fread(out + n, 1, len - 1 - n, f)) > 0)
			n += r;
		out[n] = '\0';
	}
	char sink[4096];
	while (fread(sink, 1, sizeof(sink), f) > 0)
		;
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int bt_test_in_ci(void)
{
	const char *ci = getenv("CI");
	return ci && strcmp(ci, "true") == 0;
}

const char *bt_test_priv_missing(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		return "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
	cap_t caps = cap_get_proc();
	if (!caps)
		return "cannot read own capabilities";
	const cap_value_t need[] = { CAP_BPF, CAP_PERFMON };
	const char *why = NULL;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (cap_get_flag(caps, need[i], CAP_EFFECTIVE, &v) != 0 || v != CAP_SET) {
			why = i == 0 ? "CAP_BPF is missing (run as root)" : "CAP_PERFMON is missing (run as root)";
			break;
		}
	}
	cap_free(caps);
	return why;
}

const char *bt_test_fixture(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", BT_FIXTURE_DIR, name);
	return buf;
}
