/* procmeta.c - small /proc/PID files read whole (regular files only, never through a link), the
 * environment scanned entry by entry for the names asked for. */
#include "kernel/procmeta.h"
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENVIRON_MAX (1 << 20)  /* bytes of environment looked through */

static int proc_path(char *buf, size_t len, const char *root, int pid, const char *rest)
{
	return snprintf(buf, len, "%s/proc/%d/%s", root ? root : "", pid, rest) >= (int)len ? -ENAMETOOLONG : 0;
}

/* Up to cap - 1 bytes of file rest of process pid into buf (NUL-terminated): the length, or -errno. */
static ssize_t read_small(const char *root, int pid, const char *rest, char *buf, size_t cap, struct stat *st)
{
	char path[512];
	int e = proc_path(path, sizeof(path), root, pid, rest);
	if (e)
		return e;
	int fd = bt_open_regular(AT_FDCWD, path, BT_OPEN_NOFOLLOW, st);
	if (fd < 0)
		return fd;
	size_t got = 0;
	while (got < cap - 1) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && !got)
				got = (size_t)-errno;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if ((ssize_t)got < 0)
		return (ssize_t)got;
	buf[got] = '\0';
	return (ssize_t)got;
}

/* Real and effective uid from /proc/PID/status: 0 or -errno. */
static int read_uids(const char *root, int pid, uid_t *ruid, uid_t *euid)
{
	char buf[4096];
	ssize_t n = read_small(root, pid, "status", buf, sizeof(buf), NULL);
	if (n < 0)
		return (int)n;
	const char *u = strstr(buf, "\nUid:");
	unsigned long r, e;
	if (!u || sscanf(u + 5, "%lu %lu", &r, &e) != 2)
		return -EINVAL;
	*ruid = (uid_t)r;
	*euid = (uid_t)e;
	return 0;
}

static void read_cmdline(const char *root, int pid, struct bt_procmeta *m)
{
	ssize_t n = read_small(root, pid, "cmdline", m->cmdline, BT_PROCMETA_CMDLINE_MAX + 1, NULL);
	if (n <= 0) {
		m->cmdline[0] = '\0';
		return;
	}
	while (n > 0 && m->cmdline[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (m->cmdline[i] == '\0')
			m->cmdline[i] = ' ';
	m->cmdline[n] = '\0';
}

static void read_cgroup(const char *root, int pid, struct bt_procmeta *m)
{
	char buf[8192];
	if (read_small(root, pid, "cgroup", buf, sizeof(buf), NULL) <= 0)
		return;
	const char *l = buf;
	while (l && strncmp(l, "0::", 3) != 0) {
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	if (!l)
		return;
	size_t n = strcspn(l + 3, "\n");
	if (n < sizeof(m->cgroup)) {
		memcpy(m->cgroup, l + 3, n);
		m->cgroup[n] = '\0';
	}
}

/* The values of the names asked for, from the NUL-separated NAME=VALUE entries of environ. */
static int scan_env(const char *env, size_t len, const char *const *names, size_t nenv, struct bt_procmeta *m)
{
	for (const char *e = env; e < env + len; e += strlen(e) + 1) {
		const char *eq = strchr(e, '=');
		for (size_t i = 0; eq && i < nenv && i < BT_PROCMETA_MAX_ENV; i++) {
			size_t nl = strlen(names[i]);
			if ((size_t)(eq - e) != nl || memcmp(e, names[i], nl) || m->env[i])
				continue;
			if (!(m->env[i] = strdup(eq + 1)))
				return -ENOMEM;
		}
	}
	return 0;
}

/* The environment, when the process's own owner could read it: its /proc files belong to its
 * effective uid only while it is dumpable (else to root). */
static int read_env(const char *root, int pid, uid_t euid, const char *const *names, size_t nenv,
		    struct bt_procmeta *m)
{
	char path[512];
	if (!nenv || proc_path(path, sizeof(path), root, pid, "environ"))
		return 0;
	struct stat st;
	int fd = bt_open_regular(AT_FDCWD, path, BT_OPEN_NOFOLLOW, &st);
	if (fd < 0)
		return 0;
	char *buf = st.st_uid == euid ? malloc(ENVIRON_MAX + 1) : NULL;
	size_t got = 0;
	while (buf && got < ENVIRON_MAX) {
		ssize_t n = read(fd, buf + got, ENVIRON_MAX - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf)
		return st.st_uid == euid ? -ENOMEM : 0;
	buf[got] = '\0';
	m->env_read = true;
	int e = scan_env(buf, got, names, nenv, m);
	free(buf);
	return e;
}

int bt_procmeta_read(const char *root, int pid, const char *const *env_names, size_t nenv,
		     struct bt_procmeta *m)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->uid = (uid_t)-1;
	uid_t euid = (uid_t)-1;
	int e = read_uids(root, pid, &m->uid, &euid);
	if (e == -ENOENT || e == -ESRCH)
		return -ENOENT;
	if (!(m->cmdline = malloc(BT_PROCMETA_CMDLINE_MAX + 1)))
		return -ENOMEM;
	ssize_t n = read_small(root, pid, "comm", m->comm, sizeof(m->comm), NULL);
	if (n > 0 && m->comm[n - 1] == '\n')
		m->comm[n - 1] = '\0';
	char path[512];
	if (!proc_path(path, sizeof(path), root, pid, "exe")) {
		ssize_t l = readlink(path, m->exe, sizeof(m->exe) - 1);
		m->exe[l > 0 ? l : 0] = '\0';
	}
	read_cmdline(root, pid, m);
	read_cgroup(root, pid, m);
	if (euid != (uid_t)-1 && (e = read_env(root, pid, euid, env_names, nenv, m)) != 0) {
		bt_procmeta_free(m);
		return e;
	}
	/* gone meanwhile: what was read may be half of it */
	if (read_uids(root, pid, &euid, &euid) == -ENOENT) {
		bt_procmeta_free(m);
		return -ENOENT;
	}
	return 0;
}

void bt_procmeta_free(struct bt_procmeta *m)
{
	free(m->cmdline);
	for (size_t i = 0; i < BT_PROCMETA_MAX_ENV; i++)
		free(m->env[i]);
	memset(m, 0, sizeof(*m));
}

int bt_procmeta_thread_comm(const char *root, int pid, int tid, char *buf, size_t len)
{
	char rest[64];
	snprintf(rest, sizeof(rest), "task/%d/comm", tid);
	ssize_t n = read_small(root, pid, rest, buf, len, NULL);
	if (n < 0)
		return (int)n;
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}
