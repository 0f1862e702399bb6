/* probecache.h - perf's probe cache, read and written in perf's layout: a file `probes` in each
 * build-id cache entry (DIR/ORIGPATH/BUILDID/probes), so `perf probe --cache --list` lists what
 * buildtrace added and buildtrace uses what perf cached. The file is a list of entries, each a
 * header line (`#PERF-PROBE-COMMAND`, or `%sdt_PROVIDER:NAME=NAME` for a marker) followed by the
 * probe definitions it resolved to, one per line: `p:GROUP/EVENT PATH:0xOFFSET[(0xSEMAPHORE)]
 * [ARGS]` (`r:` for a return probe), offsets in the file of the entry's build-id. Like the rest of
 * the cache, it is read and written without following links below the cache directory. */
#ifndef BT_PROBECACHE_H
#define BT_PROBECACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/buildid.h"

struct bt_pcache_probe {
	struct bt_build_id id;   /* the build the offsets belong to: the entry's */
	char header[512];        /* the entry's header line without its # or % */
	bool sdt;                /* a % entry: an SDT marker */
	bool ret;                /* r: a return probe */
	char group[64];
	char event[128];
	char path[PATH_MAX];     /* the file as it was named when the probe was resolved */
	uint64_t off;            /* file offset */
	uint64_t ref_ctr_off;    /* the semaphore's file offset; 0: none */
	char args[512];          /* what follows, in perf's form ("arg1=%bp:u64 ..."); "" when none */
};

/* One definition line into p (id and header are left alone). 0 or -EINVAL. */
int bt_pcache_parse_line(const char *line, struct bt_pcache_probe *p);

/* Calls fn for every probe definition of every entry of the cache (in directory order); a
 * non-zero return stops the walk and is returned. Malformed files are skipped. 0 for a missing
 * cache, or -errno. */
int bt_pcache_foreach(const char *cache_dir, int (*fn)(void *ctx, const struct bt_pcache_probe *p),
		      void *ctx);

/* Adds an entry (replacing one with the same header) to the probes of build-id id, creating the
 * build-id cache entry from fd (the file itself, path its name) when it is missing. The lines are
 * the probe definitions (p: ... or r: ...). 0 or -errno (-EINVAL: fd is not of build-id id;
 * -EILSEQ: what perf's format cannot hold, a path with white space or a control character, a header
 * or line with a control character: nothing is written). */
int bt_pcache_add(const char *cache_dir, const struct bt_build_id *id, const char *path, int fd, bool sdt,
		  const char *header, const char *const *lines, size_t nlines);

/* Removes the entries holding the probe GROUP:EVENT from every probes file. How many were removed,
 * or -errno. */
int bt_pcache_remove(const char *cache_dir, const char *group, const char *event);

/* The group perf gives the probes of a file: probe_ and its base name up to the first '.' or '-'
 * (probe_libc for libc.so.6), other characters not allowed in an event name made '_'. */
void bt_pcache_group(const char *path, char *out, size_t len);

#endif
