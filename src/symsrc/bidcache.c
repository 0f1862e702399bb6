/* bidcache.c - the perf-compatible build-id cache: atomic, size-bounded and sparse-aware stores of
 * binaries and debug files, verified opens, listing, removal, pruning and archiving; everything
 * below the cache directory reached without following a link (base/beneath). */
#include "base/beneath.h"
#include "base/pathfmt.h"
#include "base/wfile.h"
#include "symsrc/bidcache.h"
#include "elf/elffile.h"
#include "base/ustar.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNKNOWN_PATH "[unknown]"
#define HEXLEN (2 * BT_BUILD_ID_MAXLEN + 1)

static const char *kind_name(enum bt_bidcache_kind k)
{
	return k == BT_BIDCACHE_DEBUG ? "debug" : "elf";
}


int bt_bidcache_default_dir(char *buf, size_t len)
{
	const char *home = getenv("HOME");
	if (!home || !*home) {
		struct passwd pw, *res = NULL;
		char tmp[4096];
		if (getpwuid_r(getuid(), &pw, tmp, sizeof(tmp), &res) != 0 || !res || !res->pw_dir)
			return -ENOENT;
		return bt_path_fmt(buf, len, "%s/.debug", res->pw_dir);
	}
	return bt_path_fmt(buf, len, "%s/.debug", home);
}

/* An absolute path without empty, "." or ".." components and not inside .build-id, so that
 * DIR/PATH stays inside DIR; " (deleted)" as /proc/PID/maps appends it is dropped. */
static int clean_path(const char *path, char *out, size_t len)
{
	if (!path || path[0] != '/')
		return bt_path_fmt(out, len, "/%s", UNKNOWN_PATH);
	int err = bt_path_fmt(out, len, "%s", path);
	if (err)
		return err;
	size_t n = strlen(out);
	static const char deleted[] = " (deleted)";
	if (n > sizeof(deleted) - 1 && !strcmp(out + n - (sizeof(deleted) - 1), deleted))
		out[n - (sizeof(deleted) - 1)] = '\0';
	n = strlen(out);
	bool ok = n > 1 && out[n - 1] != '/';
	for (const char *p = out + 1; ok && *p;) {
		const char *slash = strchr(p, '/');
		size_t c = slash ? (size_t)(slash - p) : strlen(p);
		if (c == 0 || (c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.') ||
		    (p == out + 1 && c == 9 && !strncmp(p, ".build-id", 9)))
			ok = false;
		p += c;
		if (*p)
			p++;
	}
	return ok ? 0 : bt_path_fmt(out, len, "/%s", UNKNOWN_PATH);
}

static int mkdir_p(char *path, mode_t mode)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int r = mkdir(path, mode);
		int e = errno;
		*p = '/';
		if (r && e != EEXIST)
			return -e;
	}
	if (mkdir(path, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Every byte a section or the section header table claims lies inside the file: catches a
 * truncated copy even when the build-id note near the start survived. */
static bool structure_ok(struct bt_elf *e, uint64_t fsize)
{
	Elf *elf = bt_elf_handle(e);
	GElf_Ehdr eh;
	size_t shnum;
	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &shnum) != 0)
		return false;
	if (eh.e_shoff > fsize || (uint64_t)shnum * eh.e_shentsize > fsize - eh.e_shoff)
		return false;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
			continue;
		if (sh.sh_offset > fsize || sh.sh_size > fsize - sh.sh_offset)
			return false;
	}
	return true;
}

/* 0 when fd is a complete ELF file with build-id id, -EBADMSG otherwise. */
static int verify_fd(int fd, const struct bt_build_id *id)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -EBADMSG;
	struct bt_elf *e = NULL;
	if (bt_elf_open_fd(fd, &e) != 0)
		return -EBADMSG;
	struct bt_build_id got;
	bool ok = bt_elf_build_id(e, &got) == 0 && bt_buildid_eq(&got, id) &&
		  structure_ok(e, (uint64_t)st.st_size);
	bt_elf_close(e);
	return ok ? 0 : -EBADMSG;
}

/* Whose cache directory may be used: root's, ours, or (run through sudo) the calling user's. The
 * environment names that user, as it names HOME. */
static bool owner_ok(uid_t uid)
{
	if (uid == 0 || uid == geteuid())
		return true;
	const char *s = geteuid() == 0 ? getenv("SUDO_UID") : NULL;
	char *end;
	if (!s || *s < '0' || *s > '9')
		return false;
	unsigned long v = strtoul(s, &end, 10);
	return !*end && v == (unsigned long)uid;
}

/* The cache directory, not followed when it is a link someone else made (~/.debug -> anywhere,
 * made by the user root was asked to run for), and refused when it is not root's, ours or the
 * calling user's; why (may be NULL) says which. fd, or -ENOENT, -ELOOP, -EPERM, -errno. */
static int open_checked(const char *cache, char *why, size_t len)
{
	int fd = open(cache, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && (errno == ENOTDIR || errno == ELOOP) && lstat(cache, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (st.st_uid != geteuid()) {
			if (why)
				snprintf(why, len, "%s is a symbolic link of uid %u's", cache, (unsigned)st.st_uid);
			return -ELOOP;
		}
		fd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);  /* our own link */
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (!owner_ok(st.st_uid)) {
		if (why)
			snprintf(why, len, "%s belongs to uid %u", cache, (unsigned)st.st_uid);
		close(fd);
		return -EPERM;
	}
	return fd;
}

int bt_bidcache_check_root(const char *cache, char *why, size_t len)
{
	if (why && len)
		why[0] = '\0';
	int fd = open_checked(cache, why, len);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* The cache directory itself (see open_checked); create makes it and its parents. Everything
 * below it is reached through it, following no link. */
int bt_bidcache_open_root(const char *cache, bool create)
{
	int fd = open_checked(cache, NULL, 0);
	if (fd == -ENOENT && create) {
		char buf[PATH_MAX];
		int err = bt_path_fmt(buf, sizeof(buf), "%s", cache);
		if (!err)
			err = mkdir_p(buf, 0755);
		if (err)
			return err;
		fd = open_checked(cache, NULL, 0);
	}
	return fd;
}

static int link_rel(const char *hex, char *out, size_t len)
{
	return bt_path_fmt(out, len, ".build-id/%.2s/%s", hex, hex + 2);
}

/* A regular file under root (no link, FIFO or device) with build-id id. fd, -ENOENT, -EBADMSG
 * (present but not a valid file of id) or -errno. */
static int open_verified(int root, const char *rel, const struct bt_build_id *id)
{
	int fd = bt_beneath_open_reg(root, rel);
	if (fd < 0)
		return fd == -EINVAL || fd == -ELOOP || fd == -EXDEV ? -EBADMSG : fd;
	int err = verify_fd(fd, id);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The directory an existing link names, relative to the cache (resolved against the link's own
 * directory), when it stays inside the cache. -ENOENT when there is no link, -EINVAL for a
 * foreign one, -ELOOP when the way to it is a link. */
static int link_target_dir(int root, const char *hex, char *dir, size_t len, char *target,
			   size_t tlen)
{
	char lr[PATH_MAX];
	const char *base;
	int err = link_rel(hex, lr, sizeof(lr));
	if (err)
		return err;
	int pfd = bt_beneath_parent(root, lr, &base);
	if (pfd < 0)
		return pfd;
	ssize_t n = readlinkat(pfd, base, target, tlen - 1);
	int e = errno;
	close(pfd);
	if (n < 0)
		return e == EINVAL ? -EINVAL : -e;
	target[n] = '\0';
	/* perf writes "../.." followed by the absolute original path. */
	if (strncmp(target, "../../", 6) != 0 || !target[6])
		return -EINVAL;
	for (const char *p = target + 6; *p;) {
		const char *slash = strchr(p, '/');
		size_t c = slash ? (size_t)(slash - p) : strlen(p);
		if (c == 2 && p[0] == '.' && p[1] == '.')
			return -EINVAL;
		p += c;
		if (*p)
			p++;
	}
	return bt_path_fmt(dir, len, "%s", target + 6);
}

/* Copies the first size bytes of from into to, data extents only: a hole stays a hole, so a sparse
 * file costs what it holds. from's file offset is restored (its owner may use it). */
static int copy_data(int from, int to, off_t size)
{
	char *buf = malloc(1 << 16);
	if (!buf)
		return -ENOMEM;
	off_t saved = lseek(from, 0, SEEK_CUR);
	int err = 0;
	for (off_t off = 0; !err && off < size;) {
		off_t data = lseek(from, off, SEEK_DATA), hole;
		if (data < 0 && errno == ENXIO)
			break;  /* only a hole is left */
		if (data < 0) {
			data = off;  /* no SEEK_DATA here: all of it is data */
			hole = size;
		} else {
			hole = lseek(from, data, SEEK_HOLE);
			if (hole < 0 || hole > size)
				hole = size;
		}
		for (off = data; !err && off < hole;) {
			size_t want = (size_t)(hole - off < (1 << 16) ? hole - off : (1 << 16));
			ssize_t n = pread(from, buf, want, off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				err = n < 0 ? -errno : -EIO;  /* shorter than it said */
				break;
			}
			for (ssize_t done = 0; !err && done < n;) {
				ssize_t w = pwrite(to, buf + done, (size_t)(n - done), off + done);
				if (w < 0 && errno != EINTR)
					err = -errno;
				else if (w > 0)
					done += w;
			}
			off += n;
		}
	}
	if (!err && ftruncate(to, size) != 0)
		err = -errno;
	if (saved >= 0)
		lseek(from, saved, SEEK_SET);
	free(buf);
	return err;
}

/* Copies fd to NAME in dirfd through a temporary file there and rename (bt_wfile), so readers see
 * the whole file or nothing. */
static int store_file(int dirfd, const char *name, int fd, off_t size, mode_t mode)
{
	struct bt_wfile w;
	int out = bt_wfile_open(&w, dirfd, name, mode);
	if (out < 0)
		return out;
	int err = copy_data(fd, out, size);
	if (!err && fchmod(out, mode) != 0)
		err = -errno;
	if (err) {
		bt_wfile_abort(&w);
		return err;
	}
	return bt_wfile_commit(&w);
}

/* Points .build-id/xx/rest at target, replacing any other link atomically. */
static int store_link(int root, const char *hex, const char *target)
{
	char xx[16], cur[PATH_MAX], tmp[64];
	snprintf(xx, sizeof(xx), ".build-id/%.2s", hex);
	const char *rest = hex + 2;
	int xfd = bt_beneath_mkdirs(root, xx, 0755);
	if (xfd < 0)
		return xfd;
	ssize_t n = readlinkat(xfd, rest, cur, sizeof(cur) - 1);
	if (n >= 0) {
		cur[n] = '\0';
		if (!strcmp(cur, target)) {
			close(xfd);
			return 0;
		}
	}
	int err = 0;
	for (unsigned attempt = 0;; attempt++) {
		snprintf(tmp, sizeof(tmp), ".tmp.%d.%u", (int)getpid(), attempt);
		if (symlinkat(target, xfd, tmp) == 0)
			break;
		if (errno != EEXIST || attempt > 100) {
			err = -errno;
			close(xfd);
			return err;
		}
	}
	if (renameat(xfd, tmp, xfd, rest) != 0) {
		err = -errno;
		unlinkat(xfd, tmp, 0);
	}
	close(xfd);
	return err;
}

static int sum_entry(void *ctx, const struct bt_bidcache_entry *e)
{
	*(uint64_t *)ctx += e->size;
	return 0;
}

/* Room for size more bytes under b's limit; the cache is measured once, at the first store. */
static int budget_take(const char *cache, struct bt_bidcache_budget *b, uint64_t size)
{
	uint64_t max = b->max_total ? b->max_total : BT_BIDCACHE_MAX_TOTAL;
	if (!b->known) {
		b->used = 0;
		int err = bt_bidcache_foreach(cache, sum_entry, &b->used);
		if (err)
			return err;
		b->known = true;
	}
	if (b->used > max || size > max - b->used) {
		b->full++;
		return -ENOSPC;
	}
	return 0;
}

/* Stores fd as the kind's file in the entry directory dfd, unless a valid one is there. */
static int store_in(const char *cache, struct bt_bidcache_budget *b, int dfd,
		    const struct bt_build_id *id, enum bt_bidcache_kind kind, int fd,
		    const struct stat *st, mode_t mode)
{
	int have = open_verified(dfd, kind_name(kind), id);
	if (have >= 0) {
		close(have);
		return 0;
	}
	int err = budget_take(cache, b, (uint64_t)st->st_size);
	if (!err)
		err = store_file(dfd, kind_name(kind), fd, st->st_size, mode);
	if (!err)
		b->used += (uint64_t)st->st_size;
	return err;
}

/* The entry directory of id under root: the one its link names (by perf or an earlier run), else
 * DIR/ORIGPATH/BUILDID made for it (*made set; its link is then for the caller to write once the
 * directory holds a file, into target). dfd or -errno. */
static int entry_dir(int root, const struct bt_build_id *id, const char *hex, const char *path,
		     char *target, size_t tlen, bool *made)
{
	char dir[PATH_MAX];
	*made = false;
	int err = link_target_dir(root, hex, dir, sizeof(dir), target, tlen);
	int dfd = err ? -1 : bt_beneath_open(root, dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0)
		return dfd;
	char orig[PATH_MAX];
	err = clean_path(path, orig, sizeof(orig));
	if (!err)
		err = bt_path_fmt(dir, sizeof(dir), "%s/%s", orig + 1, hex);
	if (!err)
		err = bt_path_fmt(target, tlen, "../..%s/%s", orig, hex);
	if (err)
		return err;
	*made = true;
	return bt_beneath_mkdirs(root, dir, 0755);
}

static int add(const char *cache, struct bt_bidcache_budget *b, const struct bt_build_id *id,
	       const char *path, int fd, enum bt_bidcache_kind kind)
{
	if (!cache || !b || !id || !id->len || fd < 0)
		return -EINVAL;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > (b->max_file ? b->max_file : BT_BIDCACHE_MAX_FILE)) {
		b->too_large++;
		return -EFBIG;
	}
	struct bt_build_id got;
	if (bt_buildid_from_fd(fd, &got) != 0 || !bt_buildid_eq(&got, id))
		return -EINVAL;
	char hex[HEXLEN], target[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	/* Never more than the original grants: others get what it gives others, the copy's group
	 * (ours) no more than both its group and others had; we may read and replace it. */
	mode_t mode = (st.st_mode & 0705) | (st.st_mode & (st.st_mode << 3) & 0050) | 0600;
	int root = bt_bidcache_open_root(cache, true);
	if (root < 0)
		return root;
	bool made;
	int dfd = entry_dir(root, id, hex, path, target, sizeof(target), &made);
	if (dfd < 0) {
		close(root);
		return dfd;
	}
	int err = store_in(cache, b, dfd, id, kind, fd, &st, mode);
	close(dfd);
	if (!err && made)
		err = store_link(root, hex, target);
	close(root);
	return err;
}

int bt_bidcache_store_derived(const char *cache_dir, struct bt_bidcache_budget *budget,
			      const struct bt_build_id *id, const char *path, const char *name,
			      int (*write)(void *ctx, int fd), void *ctx)
{
	if (!cache_dir || !budget || !id || !id->len || !name || !write || !strcmp(name, "elf") ||
	    !strcmp(name, "debug"))
		return -EINVAL;
	char hex[HEXLEN], target[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	int root = bt_bidcache_open_root(cache_dir, true);
	if (root < 0)
		return root;
	bool made;
	int dfd = entry_dir(root, id, hex, path, target, sizeof(target), &made);
	if (dfd < 0) {
		close(root);
		return dfd;
	}
	struct bt_wfile w;
	int fd = bt_wfile_open(&w, dfd, name, BT_WFILE_MODE);
	int err = fd < 0 ? fd : write(ctx, fd);
	struct stat st;
	if (!err && fstat(fd, &st) != 0)
		err = -errno;
	if (!err)
		err = budget_take(cache_dir, budget, (uint64_t)st.st_size);
	if (fd >= 0 && err)
		bt_wfile_abort(&w);
	else if (fd >= 0)
		err = bt_wfile_commit(&w);
	if (!err)
		budget->used += (uint64_t)st.st_size;
	close(dfd);
	if (!err && made)
		err = store_link(root, hex, target);
	close(root);
	return err;
}

int bt_bidcache_open_derived(const char *cache_dir, const struct bt_build_id *id, const char *name)
{
	if (!cache_dir || !id || !id->len || !name || strchr(name, '/'))
		return -EINVAL;
	char hex[HEXLEN], dir[PATH_MAX], target[PATH_MAX], rel[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	int root = bt_bidcache_open_root(cache_dir, false);
	if (root < 0)
		return root;
	int err = link_target_dir(root, hex, dir, sizeof(dir), target, sizeof(target));
	if (!err)
		err = bt_path_fmt(rel, sizeof(rel), "%s/%s", dir, name);
	int fd = err ? (err == -EINVAL || err == -ELOOP ? -ENOENT : err) : bt_beneath_open_reg(root, rel);
	close(root);
	return fd == -ELOOP || fd == -EXDEV ? -EBADMSG : fd;
}

int bt_bidcache_store(const char *cache_dir, struct bt_bidcache_budget *budget,
		      enum bt_bidcache_kind kind, const struct bt_build_id *id, const char *path, int fd)
{
	return add(cache_dir, budget, id, path, fd, kind);
}

int bt_bidcache_add_fd(const char *cache_dir, const struct bt_build_id *id, const char *path, int fd)
{
	struct bt_bidcache_budget b = { 0 };
	return add(cache_dir, &b, id, path, fd, BT_BIDCACHE_ELF);
}

int bt_bidcache_add_debug_fd(const char *cache_dir, const struct bt_build_id *id, const char *path,
			     int fd)
{
	struct bt_bidcache_budget b = { 0 };
	return add(cache_dir, &b, id, path, fd, BT_BIDCACHE_DEBUG);
}

static int open_entry(int root, int xxfd, const char *rest, const char *hex,
		      const struct bt_build_id *id, enum bt_bidcache_kind kind, char *rel, size_t rlen)
{
	struct stat st;
	if (fstatat(xxfd, rest, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		/* perf's old layout: the link itself is the binary. */
		if (kind != BT_BIDCACHE_ELF)
			return -ENOENT;
		int err = link_rel(hex, rel, rlen);
		return err ? err : open_verified(xxfd, rest, id);
	}
	char dir[PATH_MAX], target[PATH_MAX];
	int err = link_target_dir(root, hex, dir, sizeof(dir), target, sizeof(target));
	if (!err)
		err = bt_path_fmt(rel, rlen, "%s/%s", dir, kind_name(kind));
	if (err)
		return err == -EINVAL || err == -ELOOP ? -EBADMSG : err;
	return open_verified(root, rel, id);
}

int bt_bidcache_open(const char *cache_dir, const struct bt_build_id *id, enum bt_bidcache_kind kind,
		     char *pathbuf, size_t pathlen)
{
	if (!cache_dir || !id || !id->len)
		return -EINVAL;
	char hex[HEXLEN], lr[PATH_MAX], rel[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	int err = link_rel(hex, lr, sizeof(lr));
	if (err)
		return err;
	int root = bt_bidcache_open_root(cache_dir, false);
	if (root < 0)
		return root;
	const char *rest;
	int xxfd = bt_beneath_parent(root, lr, &rest);
	if (xxfd < 0) {
		close(root);
		return xxfd == -ELOOP ? -EBADMSG : xxfd;
	}
	int fd = open_entry(root, xxfd, rest, hex, id, kind, rel, sizeof(rel));
	if (fd >= 0 && pathbuf && bt_path_fmt(pathbuf, pathlen, "%s/%s", cache_dir, rel) != 0) {
		close(fd);
		fd = -ENAMETOOLONG;
	}
	/* The link's mtime records the last use for prune; a read-only cache simply keeps it. */
	if (fd >= 0)
		utimensat(xxfd, rest, NULL, AT_SYMLINK_NOFOLLOW);
	close(xxfd);
	close(root);
	return fd;
}

/* The directory rel below root as a stream, no link followed on the way; NULL when it cannot be. */
static DIR *open_dir_beneath(int root, const char *rel)
{
	int dfd = bt_beneath_open(root, rel, O_RDONLY | O_DIRECTORY);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d && dfd >= 0)
		close(dfd);
	return d;
}

/* Sums the regular files of an entry's directory and notes which kinds it holds. */
static void scan_entry_dir(int root, const char *rel, struct bt_bidcache_entry *e)
{
	DIR *d = open_dir_beneath(root, rel);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		e->size += (uint64_t)st.st_size;
		if (!strcmp(de->d_name, "elf"))
			e->has_elf = true;
		else if (!strcmp(de->d_name, "debug"))
			e->has_debug = true;
	}
	closedir(d);
}

static bool all_hex(const char *s, size_t min, size_t max)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')) || n >= max)
			return false;
	return n >= min;
}

struct walk {
	const char *cache;
	int root;
	int (*fn)(void *, const struct bt_bidcache_entry *);
	void *ctx;
};

static int visit_link(const struct walk *w, int xxfd, const char *xx, const char *rest)
{
	char hex[HEXLEN], dir[PATH_MAX], rel[PATH_MAX], target[PATH_MAX];
	if (bt_path_fmt(hex, sizeof(hex), "%s%s", xx, rest) != 0)
		return 0;
	struct bt_bidcache_entry e = { 0 };
	if (bt_buildid_parse_hex(hex, &e.id) != 0)
		return 0;
	struct stat st;
	if (fstatat(xxfd, rest, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	e.used = st.st_mtim;
	if (S_ISREG(st.st_mode)) {
		e.orig_path = UNKNOWN_PATH;
		if (bt_path_fmt(dir, sizeof(dir), "%s/.build-id/%s", w->cache, xx) != 0)
			return 0;
		e.dir = dir;
		e.has_elf = true;
		e.size = (uint64_t)st.st_size;
		return w->fn(w->ctx, &e);
	}
	if (!S_ISLNK(st.st_mode) ||
	    link_target_dir(w->root, hex, rel, sizeof(rel), target, sizeof(target)) != 0 ||
	    bt_path_fmt(dir, sizeof(dir), "%s/%s", w->cache, rel) != 0)
		return 0;
	/* "../../ORIG/HEX": ORIG is between the "../.." and the last slash; perf's names of
	 * special files ("[kernel.kallsyms]") lose their leading slash. */
	char *last = strrchr(target, '/');
	if (!last || last < target + 5)
		return 0;
	*last = '\0';
	e.orig_path = target + 5;
	if (e.orig_path[0] == '/' && e.orig_path[1] == '[')
		e.orig_path++;
	e.dir = dir;
	scan_entry_dir(w->root, rel, &e);
	return w->fn(w->ctx, &e);
}

static int walk_xx(const struct walk *w, int bfd, const char *xx)
{
	int xxfd = openat(bfd, xx, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *sub = xxfd >= 0 ? fdopendir(xxfd) : NULL;
	if (!sub) {
		if (xxfd >= 0)
			close(xxfd);
		return 0;
	}
	int err = 0;
	struct dirent *le;
	while (!err && (le = readdir(sub)) != NULL)
		if (all_hex(le->d_name, 2, 2 * BT_BUILD_ID_MAXLEN - 2))
			err = visit_link(w, dirfd(sub), xx, le->d_name);
	closedir(sub);
	return err;
}

int bt_bidcache_foreach(const char *cache_dir,
			int (*fn)(void *ctx, const struct bt_bidcache_entry *e), void *ctx)
{
	if (!cache_dir || !fn)
		return -EINVAL;
	struct walk w = { .cache = cache_dir, .fn = fn, .ctx = ctx };
	w.root = bt_bidcache_open_root(cache_dir, false);
	if (w.root < 0)
		return w.root == -ENOENT ? 0 : w.root;
	int bfd = bt_beneath_open(w.root, ".build-id", O_RDONLY | O_DIRECTORY);
	DIR *d = bfd >= 0 ? fdopendir(bfd) : NULL;
	if (!d) {
		int err = bfd < 0 ? bfd : -errno;
		if (bfd >= 0)
			close(bfd);
		close(w.root);
		return err == -ENOENT ? 0 : err;
	}
	int err = 0;
	struct dirent *de;
	while (!err && (de = readdir(d)) != NULL)
		if (strlen(de->d_name) == 2 && all_hex(de->d_name, 2, 2))
			err = walk_xx(&w, dirfd(d), de->d_name);
	closedir(d);
	close(w.root);
	return err;
}

/* Removes the now empty directories from rel up to (not including) the cache directory. */
static void rmdir_up(int root, const char *rel)
{
	char buf[PATH_MAX];
	if (bt_path_fmt(buf, sizeof(buf), "%s", rel) != 0)
		return;
	for (;;) {
		const char *base;
		int pfd = bt_beneath_parent(root, buf, &base);
		if (pfd < 0)
			return;
		int r = unlinkat(pfd, base, AT_REMOVEDIR);
		close(pfd);
		char *slash = strrchr(buf, '/');
		if (r != 0 || !slash)
			return;
		*slash = '\0';
	}
}

/* The files of an entry directory (not what links there point at), then the directory and its
 * parents while empty. */
static void remove_entry_dir(int root, const char *rel)
{
	DIR *d = open_dir_beneath(root, rel);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct stat fs;
		if (fstatat(dirfd(d), de->d_name, &fs, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(fs.st_mode))
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	rmdir_up(root, rel);
}

int bt_bidcache_remove(const char *cache_dir, const struct bt_build_id *id)
{
	if (!cache_dir || !id || !id->len)
		return -EINVAL;
	char hex[HEXLEN], lr[PATH_MAX], dir[PATH_MAX], target[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	int err = link_rel(hex, lr, sizeof(lr));
	if (err)
		return err;
	int root = bt_bidcache_open_root(cache_dir, false);
	if (root < 0)
		return root;
	const char *rest;
	int xxfd = bt_beneath_parent(root, lr, &rest);
	struct stat st;
	if (xxfd < 0 || fstatat(xxfd, rest, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		err = xxfd < 0 ? xxfd : -errno;
		if (xxfd >= 0)
			close(xxfd);
		close(root);
		return err;
	}
	if (S_ISLNK(st.st_mode) && link_target_dir(root, hex, dir, sizeof(dir), target, sizeof(target)) == 0)
		remove_entry_dir(root, dir);
	err = unlinkat(xxfd, rest, 0) != 0 ? -errno : 0;
	close(xxfd);
	int bfd = err ? -1 : bt_beneath_open(root, ".build-id", O_RDONLY | O_DIRECTORY);
	if (bfd >= 0) {
		char xx[3] = { hex[0], hex[1], '\0' };
		unlinkat(bfd, xx, AT_REMOVEDIR);  /* when it was the last entry */
		close(bfd);
	}
	close(root);
	return err;
}

struct prune_item {
	struct bt_build_id id;
	uint64_t size;
	struct timespec used;
};

struct prune_list {
	struct prune_item *v;
	size_t n, cap;
	uint64_t total;
};

static int collect(void *ctx, const struct bt_bidcache_entry *e)
{
	struct prune_list *l = ctx;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? 2 * l->cap : 64;
		struct prune_item *nv = realloc(l->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n++] = (struct prune_item){ .id = e->id, .size = e->size, .used = e->used };
	l->total += e->size;
	return 0;
}

static int older_first(const void *pa, const void *pb)
{
	const struct prune_item *a = pa, *b = pb;
	if (a->used.tv_sec != b->used.tv_sec)
		return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
	if (a->used.tv_nsec != b->used.tv_nsec)
		return a->used.tv_nsec < b->used.tv_nsec ? -1 : 1;
	return 0;
}

int bt_bidcache_prune(const char *cache_dir, uint64_t max_bytes, size_t *removed, uint64_t *freed)
{
	struct prune_list l = { 0 };
	size_t nrm = 0;
	uint64_t nfree = 0;
	int err = bt_bidcache_foreach(cache_dir, collect, &l);
	if (!err && l.n) {
		qsort(l.v, l.n, sizeof(*l.v), older_first);
		for (size_t i = 0; i < l.n && l.total > max_bytes; i++) {
			int r = bt_bidcache_remove(cache_dir, &l.v[i].id);
			if (r && r != -ENOENT) {
				err = r;
				break;
			}
			l.total -= l.v[i].size;
			nfree += l.v[i].size;
			nrm++;
		}
	}
	free(l.v);
	if (removed)
		*removed = nrm;
	if (freed)
		*freed = nfree;
	return err;
}

struct archive_ctx {
	struct bt_ustar tar;
	const char *cache;
	int root;
	const struct bt_build_id *ids;
	size_t n, count;
};

/* The entry's files (a link entry's elf and debug), named relative to the cache directory. */
static int archive_files(struct archive_ctx *a, const struct bt_bidcache_entry *e)
{
	static const char *const files[] = { "elf", "debug" };
	const char *dir = e->dir + strlen(a->cache) + 1;
	int err = 0;
	for (size_t i = 0; !err && i < 2; i++) {
		char rel[PATH_MAX];
		if (bt_path_fmt(rel, sizeof(rel), "%s/%s", dir, files[i]) != 0)
			continue;
		int fd = open_verified(a->root, rel, &e->id);
		if (fd < 0)
			continue;
		struct stat fs;
		if (fstat(fd, &fs) == 0)
			err = bt_ustar_add_file(&a->tar, rel, fs.st_mode, fs.st_mtim.tv_sec, fd,
						(uint64_t)fs.st_size);
		close(fd);
	}
	return err;
}

static int archive_entry(void *ctx, const struct bt_bidcache_entry *e)
{
	struct archive_ctx *a = ctx;
	if (a->n) {
		size_t i = 0;
		while (i < a->n && !bt_buildid_eq(&a->ids[i], &e->id))
			i++;
		if (i == a->n)
			return 0;
	}
	char hex[HEXLEN], lr[PATH_MAX], target[PATH_MAX];
	bt_buildid_hex(&e->id, hex, sizeof(hex));
	int err = link_rel(hex, lr, sizeof(lr));
	if (err)
		return err;
	const char *rest;
	int xxfd = bt_beneath_parent(a->root, lr, &rest);
	struct stat st;
	if (xxfd < 0 || fstatat(xxfd, rest, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (xxfd >= 0)
			close(xxfd);
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(xxfd, rest, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = '\0';
			err = bt_ustar_add_symlink(&a->tar, lr, target, st.st_mtim.tv_sec);
			if (!err)
				err = archive_files(a, e);
		}
	} else {
		int fd = open_verified(xxfd, rest, &e->id);
		if (fd >= 0) {
			err = bt_ustar_add_file(&a->tar, lr, st.st_mode, st.st_mtim.tv_sec, fd,
						(uint64_t)st.st_size);
			close(fd);
		}
	}
	close(xxfd);
	if (!err)
		a->count++;
	return err;
}

int bt_bidcache_archive(const char *cache_dir, const struct bt_build_id *ids, size_t n, int out_fd,
			size_t *count)
{
	if (!cache_dir || out_fd < 0 || (n && !ids))
		return -EINVAL;
	struct archive_ctx a = { .cache = cache_dir, .ids = ids, .n = n };
	a.root = bt_bidcache_open_root(cache_dir, false);
	if (a.root < 0 && a.root != -ENOENT)
		return a.root;
	bt_ustar_init(&a.tar, out_fd);
	int err = bt_bidcache_foreach(cache_dir, archive_entry, &a);
	if (!err)
		err = bt_ustar_finish(&a.tar);
	if (a.root >= 0)
		close(a.root);
	if (count)
		*count = a.count;
	return err;
}
