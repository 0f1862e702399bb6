/* cgroup.c - cgroup ids to paths through kernfs file handles, and container ids out of paths. */
#include "kernel/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The handle kernfs gives to name_to_handle_at for a cgroup: its 64-bit id (FILEID_KERNFS). */
#define KERNFS_HANDLE_TYPE 0xfe

/* A mountinfo field in place: octal escapes (\040 for a space) undone. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

int bt_cgroup_mount(const char *root, char *buf, size_t len)
{
	char path[4096], line[8192];
	root = root ? root : "";
	if (snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int err = -ENOENT;
	while (err == -ENOENT && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
		char *dash = strstr(line, " - ");
		if (!dash || strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		char *save = NULL, *mp = NULL;
		char *t = strtok_r(line, " ", &save);
		for (int i = 0; t && i < 4; i++)
			mp = t = strtok_r(NULL, " ", &save);
		if (!mp)
			continue;
		unescape(mp);
		err = snprintf(buf, len, "%s%s", root, mp) >= (int)len ? -ENAMETOOLONG : 0;
	}
	fclose(f);
	return err;
}

int bt_cgroup_path(const char *mount, uint64_t id, char *buf, size_t len)
{
	int mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (mfd < 0)
		return -errno;
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = KERNFS_HANDLE_TYPE }, .id = id };
	int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC | O_PATH);
	int err = fd < 0 ? (errno == ESTALE ? -ENOENT : -errno) : 0;
	char full[4096], self[4096];
	ssize_t n = 0, m = 0;
	if (!err) {
		/* the mount's own name, as the kernel spells it, then the cgroup's under it */
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", mfd);
		m = readlink(link, self, sizeof(self) - 1);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, full, sizeof(full) - 1);
		if (n < 0 || m < 0)
			err = -errno;
		close(fd);
	}
	close(mfd);
	if (err)
		return err;
	full[n] = self[m] = '\0';
	const char *rel = full;
	if (!strncmp(full, self, (size_t)m) && (full[m] == '/' || full[m] == '\0'))
		rel = full + m;
	if (!*rel)
		rel = "/";
	if (strlen(rel) >= len)
		return -ENAMETOOLONG;
	memcpy(buf, rel, strlen(rel) + 1);
	return 0;
}

static bool hex64(const char *s, size_t n)
{
	if (n != BT_CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The id in one path component c[0..n), or NULL. */
static const char *component_id(const char *c, size_t n, const char **runtime)
{
	static const struct { const char *prefix, *runtime; } forms[] = {
		{ "docker-", "docker" },
		{ "cri-containerd-", "containerd" },
		{ "crio-", "crio" },
		{ "libpod-", "podman" },
	};
	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	if (hex64(c, n)) {
		*runtime = "";
		return c;
	}
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		size_t pl = strlen(forms[i].prefix);
		if (n > pl && !memcmp(c, forms[i].prefix, pl) && hex64(c + pl, n - pl)) {
			*runtime = forms[i].runtime;
			return c + pl;
		}
	}
	return NULL;
}

int bt_cgroup_container_id(const char *path, char out[BT_CONTAINER_ID_LEN + 1], const char **runtime)
{
	const char *rt = "", *found = NULL;
	const char *end = path + strlen(path);
	while (end > path && !found) {
		const char *start = end;
		while (start > path && start[-1] != '/')
			start--;
		found = component_id(start, (size_t)(end - start), &rt);
		end = start > path ? start - 1 : path;
	}
	if (!found)
		return -ENOENT;
	memcpy(out, found, BT_CONTAINER_ID_LEN);
	out[BT_CONTAINER_ID_LEN] = '\0';
	if (runtime)
		*runtime = rt;
	return 0;
}

static bool unit_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == ':' || c == '-' || c == '_' || c == '.' || c == '\\' || c == '@';
}

/* Whether c[0..n) is a unit name that can hold processes: a name of unit characters, a dot, one of
 * systemd's unit types other than slice. */
static bool unit_name(const char *c, size_t n)
{
	static const char *const types[] = { "service", "scope", "socket", "mount", "swap", "device",
					     "automount", "target", "path", "timer" };
	const char *dot = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!unit_char(c[i]))
			return false;
		if (c[i] == '.')
			dot = c + i;
	}
	if (!dot || dot == c || (c[0] == '@'))
		return false;
	size_t tl = (size_t)(c + n - dot - 1);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i]) == tl && !memcmp(dot + 1, types[i], tl))
			return true;
	return false;
}

int bt_cgroup_systemd_unit(const char *path, char *buf, size_t len)
{
	const char *p = path;
	for (;;) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 0)
			return -ENOENT;
		if (n > 6 && !memcmp(e - 6, ".slice", 6)) {
			p = e;
			continue;
		}
		if (!unit_name(p, n))
			return -ENOENT;
		if (n >= len)
			return -ENAMETOOLONG;
		memcpy(buf, p, n);
		buf[n] = '\0';
		return 0;
	}
}

/* A pod UID as a cgroup holds it (hex digits and sep) into out, sep turned into '-'. */
static bool pod_uid(const char *s, size_t n, char sep, struct bt_kubepod *out)
{
	if (n == 0 || n >= sizeof(out->uid))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == sep))
			return false;
		out->uid[i] = c == sep ? '-' : c;
	}
	out->uid[n] = '\0';
	return true;
}

/* The systemd driver's pod slice: [PREFIX-]kubepods[-QOS]-pod<UID>.slice. */
static bool kube_systemd(const char *c, size_t n, struct bt_kubepod *out)
{
	if (n < 6 || memcmp(c + n - 6, ".slice", 6))
		return false;
	n -= 6;
	const char *k = memmem(c, n, "kubepods-", 9);
	if (!k || (k != c && k[-1] != '-'))
		return false;
	const char *rest = k + 9;
	size_t rn = (size_t)(c + n - rest);
	out->qos = "guaranteed";
	if (rn > 10 && !memcmp(rest, "burstable-", 10)) {
		out->qos = "burstable";
		rest += 10;
	} else if (rn > 11 && !memcmp(rest, "besteffort-", 11)) {
		out->qos = "besteffort";
		rest += 11;
	}
	rn = (size_t)(c + n - rest);
	return rn > 3 && !memcmp(rest, "pod", 3) && pod_uid(rest + 3, rn - 3, '_', out);
}

int bt_cgroup_kubepod(const char *path, struct bt_kubepod *out)
{
	/* the components, each with the one before it (cgroupfs: kubepods[/QOS]/podUID) */
	const char *prev = NULL, *pprev = NULL;
	size_t prevn = 0, pprevn = 0;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (!n)
			break;
		if (kube_systemd(p, n, out))
			return 0;
		bool kube_prev = prev && prevn == 8 && !memcmp(prev, "kubepods", 8);
		bool qos_prev = prev && pprev && pprevn == 8 && !memcmp(pprev, "kubepods", 8) &&
				((prevn == 9 && !memcmp(prev, "burstable", 9)) || (prevn == 10 && !memcmp(prev, "besteffort", 10)));
		if ((kube_prev || qos_prev) && n > 3 && !memcmp(p, "pod", 3) && pod_uid(p + 3, n - 3, '-', out)) {
			out->qos = kube_prev ? "guaranteed" : prevn == 9 ? "burstable" : "besteffort";
			return 0;
		}
		pprev = prev;
		pprevn = prevn;
		prev = p;
		prevn = n;
		p = e;
	}
	return -ENOENT;
}
