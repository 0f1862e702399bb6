/* beneath.c - openat2-confined opens and directory creation under a directory fd. */
#include "base/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int bt_beneath_open(int root, const char *rel, int flags)
{
	if (!rel || !*rel || rel[0] == '/')
		return -EINVAL;
	/* openat2 refuses O_PATH with any flag O_PATH ignores. */
	if (!(flags & O_PATH))
		flags |= O_NOCTTY;
	struct open_how how = {
		.flags = (unsigned)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

int bt_beneath_open_reg(int root, const char *rel)
{
	int pfd = bt_beneath_open(root, rel, O_PATH);
	if (pfd < 0)
		return pfd;
	struct stat st;
	if (fstat(pfd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	/* The file just checked, reopened through our own descriptor for reading. */
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	int fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	int err = fd < 0 ? -errno : 0;
	close(pfd);
	return err ? err : fd;
}

int bt_beneath_parent(int root, const char *rel, const char **base)
{
	const char *slash = rel ? strrchr(rel, '/') : NULL;
	if (!rel || !*rel || rel[0] == '/' || (slash && !slash[1]))
		return -EINVAL;
	*base = slash ? slash + 1 : rel;
	if (!strcmp(*base, ".") || !strcmp(*base, ".."))
		return -EINVAL;
	if (!slash)
		return bt_beneath_open(root, ".", O_RDONLY | O_DIRECTORY);
	char dir[PATH_MAX];
	if ((size_t)(slash - rel) >= sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	return bt_beneath_open(root, dir, O_RDONLY | O_DIRECTORY);
}

int bt_beneath_mkdirs(int root, const char *rel, mode_t mode)
{
	if (!rel || !*rel || rel[0] == '/')
		return -EINVAL;
	int cur = bt_beneath_open(root, ".", O_RDONLY | O_DIRECTORY);
	char comp[NAME_MAX + 1];
	for (const char *p = rel; cur >= 0 && *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || n > NAME_MAX) {
			close(cur);
			return n ? -ENAMETOOLONG : -EINVAL;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		p += *p == '/';
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			close(cur);
			return -EINVAL;
		}
		if (mkdirat(cur, comp, mode) != 0 && errno != EEXIST) {
			int e = -errno;
			close(cur);
			return e;
		}
		int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = next < 0 ? -errno : 0;
		struct stat st;
		/* O_DIRECTORY|O_NOFOLLOW says ENOTDIR for a link: say what it is. */
		if (e == -ENOTDIR && fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			e = -ELOOP;
		close(cur);
		if (next < 0)
			return e;
		cur = next;
	}
	return cur;
}
