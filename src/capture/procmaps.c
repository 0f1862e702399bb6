/* procmaps.c - a strict parser for /proc/PID/maps lines, iteration over a process's maps, opening a
 * mapped file through /proc/PID/map_files to read its build-id, opening a path a process names
 * inside that process's root, and copying its vDSO. */
#include "capture/procmaps.h"
#include "base/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DELETED_SUFFIX " (deleted)"

/* Hex digits up to max_digits, at least one; advances *pp. */
static int parse_hex(const char **pp, unsigned max_digits, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned n = 0;
	for (;; p++, n++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (n == max_digits)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (!n)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

static int parse_dec(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*pp = p;
	*out = v;
	return 0;
}

static int expect(const char **pp, char c)
{
	if (**pp != c)
		return -EINVAL;
	(*pp)++;
	return 0;
}

static int parse_perms(const char **pp, char perms[5])
{
	static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };
	const char *p = *pp;
	for (int i = 0; i < 4; i++) {
		if (!p[i] || !strchr(allowed[i], p[i]))
			return -EINVAL;
		perms[i] = p[i];
	}
	perms[4] = '\0';
	*pp = p + 4;
	return 0;
}

int bt_procmap_parse_line(const char *line, struct bt_procmap *out)
{
	if (!line || !out)
		return -EINVAL;
	struct bt_procmap m;
	uint64_t major, minor;
	const char *p = line;
	memset(&m, 0, offsetof(struct bt_procmap, path));

	if (parse_hex(&p, 16, &m.start) || expect(&p, '-') || parse_hex(&p, 16, &m.end) ||
	    expect(&p, ' ') || parse_perms(&p, m.perms) || expect(&p, ' ') ||
	    parse_hex(&p, 16, &m.offset) || expect(&p, ' ') || parse_hex(&p, 8, &major) ||
	    expect(&p, ':') || parse_hex(&p, 8, &minor) || expect(&p, ' ') || parse_dec(&p, &m.ino))
		return -EINVAL;
	if (m.start >= m.end)
		return -EINVAL;
	m.dev_major = (uint32_t)major;
	m.dev_minor = (uint32_t)minor;

	/* The path is everything after the padding; it may itself contain spaces, so only the
	 * newline that ends the line is removed. */
	if (*p && *p != ' ' && *p != '\n')
		return -EINVAL;
	while (*p == ' ')
		p++;
	size_t n = strlen(p);
	if (n && p[n - 1] == '\n')
		n--;
	if (memchr(p, '\n', n) || n >= sizeof(m.path))
		return -EINVAL;
	const size_t sl = sizeof(DELETED_SUFFIX) - 1;
	if (n > sl && memcmp(p + n - sl, DELETED_SUFFIX, sl) == 0) {
		m.deleted = true;
		n -= sl;
	}
	memcpy(m.path, p, n);
	m.path[n] = '\0';
	memcpy(out, &m, offsetof(struct bt_procmap, path) + n + 1);
	return 0;
}

static int proc_path(char *buf, size_t len, const char *root, int pid, const char *rest)
{
	if (pid <= 0)
		return -EINVAL;
	int n = snprintf(buf, len, "%s/proc/%d/%s", root ? root : "", pid, rest);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int bt_procmaps_foreach(const char *root, int pid, bt_procmap_fn fn, void *ctx)
{
	char path[4096];
	if (!fn)
		return -EINVAL;
	int err = proc_path(path, sizeof(path), root, pid, "maps");
	if (err)
		return err;
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	/* heap-allocated: one bt_procmap carries a PATH_MAX buffer, too big to keep per frame */
	struct bt_procmap *m = malloc(sizeof(*m));
	char *line = NULL;
	size_t cap = 0;
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	ssize_t r;
	errno = 0;
	while ((r = getline(&line, &cap, f)) >= 0) {
		/* an embedded NUL would hide the rest of the line from the parser */
		if ((size_t)r != strlen(line) || bt_procmap_parse_line(line, m) != 0) {
			err = -EINVAL;
			break;
		}
		if ((err = fn(ctx, m)) != 0)
			break;
		errno = 0;
	}
	/* a process that exits while its maps are read makes the read fail with ESRCH */
	if (r < 0 && !feof(f))
		err = errno ? -errno : -EIO;
	free(line);
	free(m);
	fclose(f);
	return err;
}

int bt_procmaps_open_mapped(const char *root, int pid, uint64_t start, uint64_t end)
{
	char path[4096], name[48];
	snprintf(name, sizeof(name), "map_files/%" PRIx64 "-%" PRIx64, start, end);
	int err = proc_path(path, sizeof(path), root, pid, name);
	if (err)
		return err;
	/* map_files entries are magic links, followed here (O_NOFOLLOW would refuse every one); the
	 * target is pinned with O_PATH and checked to be a regular file before it is opened, as
	 * opening a device may have side effects. */
	return bt_open_regular(AT_FDCWD, path, 0, NULL);
}

int bt_procmaps_buildid(const char *root, int pid, uint64_t start, uint64_t end,
			struct bt_build_id *out)
{
	if (!out)
		return -EINVAL;
	int fd = bt_procmaps_open_mapped(root, pid, start, end);
	if (fd < 0)
		return fd;
	int err = bt_buildid_from_fd(fd, out);
	close(fd);
	return err;
}

int bt_procmaps_root_fd(const char *root, int pid)
{
	char rp[4096];
	int err = proc_path(rp, sizeof(rp), root, pid, "root");
	if (err)
		return err;
	int rootfd = open(rp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return rootfd < 0 ? (errno == ENOENT ? -ESRCH : -errno) : rootfd;
}

int bt_procmaps_open_in_root(const char *root, int pid, const char *path)
{
	if (!path || path[0] != '/')
		return -EINVAL;
	int rootfd = bt_procmaps_root_fd(root, pid);
	if (rootfd < 0)
		return rootfd;
	/* Resolved by the kernel as if ROOT/proc/PID/root were "/". */
	int fd = bt_open_regular(rootfd, path, BT_OPEN_IN_ROOT, NULL);
	close(rootfd);
	return fd;
}

struct vdso_range {
	uint64_t start, end;
};

static int find_vdso(void *ctx, const struct bt_procmap *m)
{
	struct vdso_range *r = ctx;
	if (strcmp(m->path, "[vdso]") != 0)
		return 0;
	r->start = m->start;
	r->end = m->end;
	return 1;
}

/* A memory file holding len bytes of data, sealed against writes. fd or -errno. */
static int memory_file(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, (const char *)data + done, len - done);
		if (w <= 0) {
			int err = w < 0 ? -errno : -EIO;
			close(fd);
			return err;
		}
		done += (size_t)w;
	}
	fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	return fd;
}

int bt_procmaps_open_vdso(const char *root, int pid, uint64_t *start, uint64_t *end)
{
	if (!start || !end)
		return -EINVAL;
	struct vdso_range r = { 0 };
	int err = bt_procmaps_foreach(root, pid, find_vdso, &r);
	if (err < 0)
		return err;
	if (err != 1 || r.end <= r.start)
		return -ENOENT;
	if (r.end - r.start > BT_VDSO_MAX)
		return -E2BIG;
	char path[4096];
	if ((err = proc_path(path, sizeof(path), root, pid, "mem")) != 0)
		return err;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	size_t n = (size_t)(r.end - r.start);
	void *buf = malloc(n);
	ssize_t got = buf ? pread(fd, buf, n, (off_t)r.start) : -1;
	err = !buf ? -ENOMEM : got < 0 ? (errno == ENOENT ? -ESRCH : -errno) : (size_t)got != n ? -EIO : 0;
	close(fd);
	int mfd = err ? err : memory_file("bt-vdso", buf, n);
	free(buf);
	if (mfd >= 0) {
		*start = r.start;
		*end = r.end;
	}
	return mfd;
}
