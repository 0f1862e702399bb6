/* bidcache.h - the build-id cache, in perf's layout so that perf and buildtrace share it:
 * DIR/ORIGPATH/BUILDID/elf (the binary) and .../debug (its debug file), found through the symlink
 * DIR/.build-id/xx/rest -> ../../ORIGPATH/BUILDID. Entries are written atomically and re-verified
 * (build-id and file structure) on every use, so a corrupt or truncated entry is never trusted.
 * The cache may be writable by others: below the cache directory no link is followed (other than
 * the .build-id links, read and resolved inside the cache), and only regular files are opened. */
#ifndef BT_BIDCACHE_H
#define BT_BIDCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "elf/buildid.h"

enum bt_bidcache_kind { BT_BIDCACHE_ELF = 0, BT_BIDCACHE_DEBUG };

/* $HOME/.debug (the passwd entry's home when HOME is unset). 0, -ENAMETOOLONG or -ENOENT. */

/* Whether the cache directory may be used at all: a symbolic link there is followed only when it
 * is the effective user's own, and the directory must belong to root, the effective user, or (when
 * root was started through sudo) the user SUDO_UID names. Every function below refuses another
 * (-ELOOP, -EPERM), and why (may be NULL) says which directory and whose. 0, also when it does not
 * exist yet. */
int bt_bidcache_check_root(const char *cache_dir, char *why, size_t len);

/* The cache directory opened as bt_bidcache_check_root allows (create: made first, with its
 * parents, when missing). fd or -errno. */
int bt_bidcache_open_root(const char *cache_dir, bool create);
int bt_bidcache_default_dir(char *buf, size_t len);

/* Stores are bounded: a file larger than max_file is not stored, nor one that would take the
 * cache's total (apparent sizes of its entries) beyond max_total. Holes of sparse files stay holes. */
#define BT_BIDCACHE_MAX_FILE (512ULL << 20)
#define BT_BIDCACHE_MAX_TOTAL (8ULL << 30)

struct bt_bidcache_budget {
	uint64_t max_file;       /* 0: BT_BIDCACHE_MAX_FILE */
	uint64_t max_total;      /* 0: BT_BIDCACHE_MAX_TOTAL */
	bool known;              /* used was measured (once, at the first store that needs it) */
	uint64_t used;           /* the cache's total as this budget knows it */
	uint64_t too_large;      /* stores refused for max_file */
	uint64_t full;           /* stores refused for max_total */
};

/* Stores the file open as fd (read with pread from offset 0, so a /proc/PID/map_files fd gives the
 * exact mapped version) as the build-id's binary (elf) or debug file, with a mode that grants no
 * one more than the original's does. path is the file's original
 * absolute path, used to name the entry as perf does; NULL or an unusable path stores it under
 * "[unknown]". Idempotent: an entry that is already present and valid is kept.
 * 0, -EINVAL (fd's build-id is not id), -ENAMETOOLONG, or -errno. */
int bt_bidcache_add_fd(const char *cache_dir, const struct bt_build_id *id, const char *path, int fd);
int bt_bidcache_add_debug_fd(const char *cache_dir, const struct bt_build_id *id, const char *path,
			     int fd);

/* As above, within budget (zeroed, or with limits set, and kept across stores): -EFBIG for a file
 * over max_file, -ENOSPC when the cache would exceed max_total; both counted in budget. The
 * _add_ forms measure the cache anew at each store, with the default limits. */
int bt_bidcache_store(const char *cache_dir, struct bt_bidcache_budget *budget,
		      enum bt_bidcache_kind kind, const struct bt_build_id *id, const char *path, int fd);

/* A file derived from the build-id's binary (name: "unwtable", the compiled unwind table), kept in
 * its entry beside the binary, made when there is none yet (named after path as a store would).
 * write fills the new file (fd, a 0600 file of its own) and returns 0 or -errno; it replaces the
 * file only when complete. Counted in budget. 0 or -errno. */
int bt_bidcache_store_derived(const char *cache_dir, struct bt_bidcache_budget *budget,
			      const struct bt_build_id *id, const char *path, const char *name,
			      int (*write)(void *ctx, int fd), void *ctx);
/* Opens that file read-only (a regular file, reached through no link): the caller checks what it
 * holds. fd, -ENOENT, or -errno. */
int bt_bidcache_open_derived(const char *cache_dir, const struct bt_build_id *id, const char *name);

/* Opens the stored file of one kind read-only after checking it; its path goes to pathbuf (may be
 * NULL). Returns the fd, -ENOENT when absent, -EBADMSG when present but corrupt or of another
 * build-id, or -errno. Marks the entry as used for pruning. */
int bt_bidcache_open(const char *cache_dir, const struct bt_build_id *id, enum bt_bidcache_kind kind,
		     char *pathbuf, size_t pathlen);

struct bt_bidcache_entry {
	struct bt_build_id id;
	const char *orig_path;  /* as named in the link: "/usr/lib/..." or "[unknown]" */
	const char *dir;        /* the entry's directory */
	bool has_elf, has_debug;
	uint64_t size;          /* bytes of the regular files in dir */
	struct timespec used;   /* last use (the link's mtime) */
};

/* Calls fn for every entry of the cache, in directory order; a non-zero return from fn stops the
 * walk and is returned. 0 for a missing cache. Strings are valid during the call only. */
int bt_bidcache_foreach(const char *cache_dir,
			int (*fn)(void *ctx, const struct bt_bidcache_entry *e), void *ctx);

/* Removes an entry: its link and its directory's files. 0, -ENOENT, or -errno. */
int bt_bidcache_remove(const char *cache_dir, const struct bt_build_id *id);

/* Removes the least recently used entries until the cache holds at most max_bytes.
 * *removed and *freed (may be NULL) count what went. 0 or -errno. */
int bt_bidcache_prune(const char *cache_dir, uint64_t max_bytes, size_t *removed, uint64_t *freed);

/* Writes a tar archive (ustar with pax extensions) of the given entries, or of every entry when n
 * is 0, with names relative to the cache directory, so that extracting it into another machine's
 * cache directory reproduces them. *count (may be NULL) receives the entries written; ids absent
 * from the cache are skipped. 0 or -errno. */
int bt_bidcache_archive(const char *cache_dir, const struct bt_build_id *ids, size_t n, int out_fd,
			size_t *count);

#endif
