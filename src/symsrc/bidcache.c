/* bidcache.c - the perf-compatible build-id cache: atomic stores (temporary name, then rename) of
 * binaries and debug files, verified opens, listing, removal, size-bounded pruning and archiving. */
#include "base/pathfmt.h"
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

static int link_path(const char *cache, const char *hex, char *out, size_t len)
{
	return bt_path_fmt(out, len, "%s/.build-id/%.2s/%s", cache, hex, hex + 2);
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

static int open_verified(const char *path, const struct bt_build_id *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	int err = verify_fd(fd, id);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The directory an existing link names (resolved against the link's own directory), when it
 * stays inside the cache. -ENOENT when there is no link, -EINVAL for a foreign one. */
static int link_target_dir(const char *cache, const char *hex, char *dir, size_t len, char *target,
			   size_t tlen)
{
	char lp[PATH_MAX];
	int err = link_path(cache, hex, lp, sizeof(lp));
	if (err)
		return err;
	ssize_t n = readlink(lp, target, tlen - 1);
	if (n < 0)
		return errno == EINVAL ? -EINVAL : -errno;
	target[n] = '\0';
	/* perf writes "../.." followed by the absolute original path. */
	if (strncmp(target, "../../", 6) != 0)
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
	return bt_path_fmt(dir, len, "%s/%s", cache, target + 6);
}

static int copy_fd(int from, int to)
{
	char *buf = malloc(1 << 16);
	if (!buf)
		return -ENOMEM;
	int err = 0;
	for (off_t off = 0;;) {
		ssize_t n = pread(from, buf, 1 << 16, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(to, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				err = -errno;
				goto out;
			}
			done += w;
		}
		off += n;
	}
out:
	free(buf);
	return err;
}

/* Copies fd to DIR/NAME through a temporary file in DIR and rename, so readers see the whole file
 * or nothing. */
static int store_file(const char *dir, const char *name, int fd, mode_t mode)
{
	char tmp[PATH_MAX], final[PATH_MAX];
	int err = bt_path_fmt(tmp, sizeof(tmp), "%s/.%s.tmpXXXXXX", dir, name);
	if (!err)
		err = bt_path_fmt(final, sizeof(final), "%s/%s", dir, name);
	if (err)
		return err;
	int out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0)
		return -errno;
	err = copy_fd(fd, out);
	if (!err && fchmod(out, mode) != 0)
		err = -errno;
	if (close(out) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, final) != 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* Points DIR/.build-id/xx/rest at target, replacing any other link atomically. */
static int store_link(const char *cache, const char *hex, const char *target)
{
	char lp[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX], cur[PATH_MAX];
	int err = link_path(cache, hex, lp, sizeof(lp));
	if (!err)
		err = bt_path_fmt(dir, sizeof(dir), "%s/.build-id/%.2s", cache, hex);
	if (err)
		return err;
	ssize_t n = readlink(lp, cur, sizeof(cur) - 1);
	if (n >= 0) {
		cur[n] = '\0';
		if (!strcmp(cur, target))
			return 0;
	}
	err = mkdir_p(dir, 0755);
	if (err)
		return err;
	for (unsigned attempt = 0;; attempt++) {
		err = bt_path_fmt(tmp, sizeof(tmp), "%s/.tmp.%s.%d.%u", dir, hex + 2, (int)getpid(), attempt);
		if (err)
			return err;
		if (symlink(target, tmp) == 0)
			break;
		if (errno != EEXIST || attempt > 100)
			return -errno;
	}
	if (rename(tmp, lp) != 0) {
		err = -errno;
		unlink(tmp);
	}
	return err;
}

static int add(const char *cache, const struct bt_build_id *id, const char *path, int fd,
	       enum bt_bidcache_kind kind)
{
	if (!cache || !id || !id->len || fd < 0)
		return -EINVAL;
	struct bt_build_id got;
	if (bt_buildid_from_fd(fd, &got) != 0 || !bt_buildid_eq(&got, id))
		return -EINVAL;
	char hex[HEXLEN], dir[PATH_MAX], target[PATH_MAX], file[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	mode_t mode = 0644;
	struct stat st;
	if (kind == BT_BIDCACHE_ELF && fstat(fd, &st) == 0)
		mode = (st.st_mode & 0755) | 0644;

	/* An entry already linked (by perf or an earlier run) receives the file in its own
	 * directory; a valid file of this kind there means there is nothing to do. */
	int err = link_target_dir(cache, hex, dir, sizeof(dir), target, sizeof(target));
	struct stat dst;
	if (!err && stat(dir, &dst) == 0 && S_ISDIR(dst.st_mode)) {
		err = bt_path_fmt(file, sizeof(file), "%s/%s", dir, kind_name(kind));
		if (err)
			return err;
		int have = open_verified(file, id);
		if (have >= 0) {
			close(have);
			return 0;
		}
		return store_file(dir, kind_name(kind), fd, mode);
	}

	char orig[PATH_MAX];
	err = clean_path(path, orig, sizeof(orig));
	if (!err)
		err = bt_path_fmt(dir, sizeof(dir), "%s%s/%s", cache, orig, hex);
	if (!err)
		err = bt_path_fmt(target, sizeof(target), "../..%s/%s", orig, hex);
	if (!err)
		err = mkdir_p(dir, 0755);
	if (!err)
		err = bt_path_fmt(file, sizeof(file), "%s/%s", dir, kind_name(kind));
	if (err)
		return err;
	int have = open_verified(file, id);
	if (have >= 0)
		close(have);
	else
		err = store_file(dir, kind_name(kind), fd, mode);
	return err ? err : store_link(cache, hex, target);
}

int bt_bidcache_add_fd(const char *cache_dir, const struct bt_build_id *id, const char *path, int fd)
{
	return add(cache_dir, id, path, fd, BT_BIDCACHE_ELF);
}

int bt_bidcache_add_debug_fd(const char *cache_dir, const struct bt_build_id *id, const char *path,
			     int fd)
{
	return add(cache_dir, id, path, fd, BT_BIDCACHE_DEBUG);
}

int bt_bidcache_open(const char *cache_dir, const struct bt_build_id *id, enum bt_bidcache_kind kind,
		     char *pathbuf, size_t pathlen)
{
	if (!cache_dir || !id || !id->len)
		return -EINVAL;
	char hex[HEXLEN], lp[PATH_MAX], file[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	int err = link_path(cache_dir, hex, lp, sizeof(lp));
	if (err)
		return err;
	struct stat st;
	if (lstat(lp, &st) != 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		/* perf's old layout: the link itself is the binary. */
		if (kind != BT_BIDCACHE_ELF)
			return -ENOENT;
		err = bt_path_fmt(file, sizeof(file), "%s", lp);
	} else {
		char dir[PATH_MAX], target[PATH_MAX];
		err = link_target_dir(cache_dir, hex, dir, sizeof(dir), target, sizeof(target));
		if (!err)
			err = bt_path_fmt(file, sizeof(file), "%s/%s", dir, kind_name(kind));
	}
	if (err)
		return err == -EINVAL ? -EBADMSG : err;
	int fd = open_verified(file, id);
	if (fd < 0)
		return fd;
	if (pathbuf && bt_path_fmt(pathbuf, pathlen, "%s", file) != 0) {
		close(fd);
		return -ENAMETOOLONG;
	}
	/* The link's mtime records the last use for prune; a read-only cache simply keeps it. */
	utimensat(AT_FDCWD, lp, NULL, AT_SYMLINK_NOFOLLOW);
	return fd;
}

/* Sums the regular files of an entry's directory and notes which kinds it holds. */
static void scan_entry_dir(const char *dir, struct bt_bidcache_entry *e)
{
	DIR *d = opendir(dir);
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

static int visit_link(const char *cache, int xxfd, const char *xx, const char *rest,
		      int (*fn)(void *, const struct bt_bidcache_entry *), void *ctx)
{
	char hex[HEXLEN], dir[PATH_MAX], target[PATH_MAX];
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
		if (bt_path_fmt(dir, sizeof(dir), "%s/.build-id/%s", cache, xx) != 0)
			return 0;
		e.dir = dir;
		e.has_elf = true;
		e.size = (uint64_t)st.st_size;
		return fn(ctx, &e);
	}
	if (!S_ISLNK(st.st_mode) || link_target_dir(cache, hex, dir, sizeof(dir), target,
						      sizeof(target)) != 0)
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
	scan_entry_dir(dir, &e);
	return fn(ctx, &e);
}

int bt_bidcache_foreach(const char *cache_dir,
			int (*fn)(void *ctx, const struct bt_bidcache_entry *e), void *ctx)
{
	if (!cache_dir || !fn)
		return -EINVAL;
	char top[PATH_MAX];
	int err = bt_path_fmt(top, sizeof(top), "%s/.build-id", cache_dir);
	if (err)
		return err;
	DIR *d = opendir(top);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *de;
	while (!err && (de = readdir(d)) != NULL) {
		if (strlen(de->d_name) != 2 || !all_hex(de->d_name, 2, 2))
			continue;
		int xxfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *sub = xxfd >= 0 ? fdopendir(xxfd) : NULL;
		if (!sub) {
			if (xxfd >= 0)
				close(xxfd);
			continue;
		}
		struct dirent *le;
		while (!err && (le = readdir(sub)) != NULL)
			if (all_hex(le->d_name, 2, 2 * BT_BUILD_ID_MAXLEN - 2))
				err = visit_link(cache_dir, dirfd(sub), de->d_name, le->d_name, fn, ctx);
		closedir(sub);
	}
	closedir(d);
	return err;
}

/* Removes the now empty directories from dir up to (not including) the cache directory. */
static void rmdir_up(const char *cache, char *dir)
{
	size_t clen = strlen(cache);
	while (strlen(dir) > clen && !strncmp(dir, cache, clen) && dir[clen] == '/') {
		if (rmdir(dir) != 0)
			return;
		char *slash = strrchr(dir, '/');
		if (!slash)
			return;
		*slash = '\0';
	}
}

int bt_bidcache_remove(const char *cache_dir, const struct bt_build_id *id)
{
	if (!cache_dir || !id || !id->len)
		return -EINVAL;
	char hex[HEXLEN], lp[PATH_MAX], dir[PATH_MAX], target[PATH_MAX];
	bt_buildid_hex(id, hex, sizeof(hex));
	int err = link_path(cache_dir, hex, lp, sizeof(lp));
	if (err)
		return err;
	struct stat st;
	if (lstat(lp, &st) != 0)
		return -errno;
	if (S_ISLNK(st.st_mode) &&
	    link_target_dir(cache_dir, hex, dir, sizeof(dir), target, sizeof(target)) == 0) {
		DIR *d = opendir(dir);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d)) != NULL) {
				struct stat fs;
				if (fstatat(dirfd(d), de->d_name, &fs, AT_SYMLINK_NOFOLLOW) == 0 &&
				    !S_ISDIR(fs.st_mode))
					unlinkat(dirfd(d), de->d_name, 0);
			}
			closedir(d);
			rmdir_up(cache_dir, dir);
		}
	}
	if (unlink(lp) != 0)
		return -errno;
	char *slash = strrchr(lp, '/');
	*slash = '\0';
	rmdir(lp);  /* .build-id/xx, when it was the last entry */
	return 0;
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
	const struct bt_build_id *ids;
	size_t n, count;
};

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
	char hex[HEXLEN], lp[PATH_MAX], name[PATH_MAX], target[PATH_MAX];
	bt_buildid_hex(&e->id, hex, sizeof(hex));
	int err = link_path(a->cache, hex, lp, sizeof(lp));
	if (err)
		return err;
	struct stat st;
	if (lstat(lp, &st) != 0)
		return 0;
	size_t clen = strlen(a->cache);
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(lp, target, sizeof(target) - 1);
		if (n < 0)
			return 0;
		target[n] = '\0';
		err = bt_ustar_add_symlink(&a->tar, lp + clen + 1, target, st.st_mtim.tv_sec);
		/* The entry's files, named relative to the cache directory. */
		static const char *const files[] = { "elf", "debug" };
		for (size_t i = 0; !err && i < 2; i++) {
			char path[PATH_MAX];
			if (bt_path_fmt(path, sizeof(path), "%s/%s", e->dir, files[i]) != 0)
				continue;
			int fd = open_verified(path, &e->id);
			if (fd < 0)
				continue;
			struct stat fs;
			if (fstat(fd, &fs) == 0 && strlen(path) > clen + 1 &&
			    bt_path_fmt(name, sizeof(name), "%s", path + clen + 1) == 0)
				err = bt_ustar_add_file(&a->tar, name, fs.st_mode, fs.st_mtim.tv_sec, fd,
							(uint64_t)fs.st_size);
			close(fd);
		}
	} else {
		int fd = open_verified(lp, &e->id);
		if (fd < 0)
			return 0;
		err = bt_ustar_add_file(&a->tar, lp + clen + 1, st.st_mode, st.st_mtim.tv_sec, fd,
					(uint64_t)st.st_size);
		close(fd);
	}
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
	bt_ustar_init(&a.tar, out_fd);
	int err = bt_bidcache_foreach(cache_dir, archive_entry, &a);
	if (!err)
		err = bt_ustar_finish(&a.tar);
	if (count)
		*count = a.count;
	return err;
}
