/* probes.h - what `buildtrace trace` and `buildtrace probe` place: probe specs parsed, the files they
 * go into found (a process's mapping through /proc/PID/map_files, or a path) with their build-ids,
 * and each resolved against the symbols of that build-id (every symbol source) or its SDT notes. A
 * probe resolved for one build is never placed in another: the build-ids are compared first. */
#ifndef BT_PROBES_H
#define BT_PROBES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/buildid.h"
#include "symsrc/symsrc.h"

enum bt_probe_kind {
	BT_PROBE_FUNC = 1,    /* FILE:FUNCTION or BUILDID:FUNCTION */
	BT_PROBE_ADDR = 2,    /* FILE:0xADDR (an address as nm and objdump show it) */
	BT_PROBE_SDT = 3,     /* sdt:FILE:PROVIDER:NAME, or sdt:PROVIDER:NAME in whichever file has it */
	BT_PROBE_CACHED = 4,  /* cache:GROUP:EVENT, a probe of the probe cache (probecache.h) */
};

struct bt_probe_spec {
	enum bt_probe_kind kind;
	char text[PATH_MAX + 512];  /* as given */
	char file[PATH_MAX];        /* "" when given by build-id */
	struct bt_build_id id;      /* given by build-id (len 0: by path) */
	char name[256];             /* the function, the marker, the cached event */
	char provider[128];         /* the marker's provider, the cached probe's group */
	uint64_t addr;              /* BT_PROBE_ADDR */
};

/* Parses a probe spec. A FILE may not hold ':'; a 16 to 128 hex digit file part is a build-id
 * (./FILE names a file of that name). 0 or -EINVAL. */
int bt_probe_spec_parse(const char *s, struct bt_probe_spec *out);

/* A file a probe goes into, open for the kernel to place the probe by, with its build-id. */
struct bt_probe_file {
	int fd;
	int pid;                 /* the process it is mapped in (through map_files); 0: opened by path */
	char path[PATH_MAX];     /* as the process (or the spec) names it */
	struct bt_build_id id;   /* len 0: the file has none */
};

/* Where a resolved probe goes in its file. */
struct bt_probe_site {
	uint64_t vaddr;          /* as the file's symbols express it */
	uint64_t off;            /* the file offset uprobes take */
	uint64_t ref_ctr_off;    /* the file offset of the marker's semaphore; 0: none */
	char what[256];          /* FUNCTION, PROVIDER:NAME, or 0xADDR */
	char section[32];        /* the code section it lies in */
	char args[512];          /* a marker's argument spec */
	char origin[BT_SYMSRC_ORIGIN_LEN];  /* where the symbol came from */
	bool insn_unchecked;     /* an address not known to begin an instruction (see bt_probe_resolve) */
};

/* Resolves spec in f (a function in the symbols of f's build-id from every source, or f's own when
 * it has no build-id; a marker in f's notes; an address checked to be in a code section, and marked
 * insn_unchecked unless a function or a DWARF line row begins there: only then is it known to be
 * an instruction's first byte, which a uprobe must be). 0, or
 * -ENOENT (no such function or marker), -ERANGE (an address outside code), -errno, with msg saying
 * which. */
int bt_probe_resolve(const struct bt_probe_spec *spec, const struct bt_probe_file *f,
		     const struct bt_symsrc_opts *so, struct bt_probe_site *out, char *msg, size_t len);

/* Calls fn for each file process pid maps executable that spec names: by build-id, or by path (the
 * path itself, where it leads, the same file, or a bare name as the file's base name), or for a
 * marker named without its file each file whose notes have it; opened
 * through ROOT/proc/PID/map_files, so a file replaced on disk since is not mistaken for it. fn
 * owns f->fd. A non-zero return from fn stops the walk and is returned; -ESRCH when the process is
 * gone, or -errno. */
int bt_probe_find_mapped(const char *root, int pid, const struct bt_probe_spec *spec,
			 int (*fn)(void *ctx, struct bt_probe_file *f), void *ctx);

/* Opens the file spec names for a probe in every process that maps it: its path, or for a build-id
 * the path the build-id cache recorded for it. A file of another build than the spec names is
 * refused (-ESTALE), both build-ids in msg. 0 or -errno with msg. */
int bt_probe_open_path(const struct bt_probe_spec *spec, const char *cache_dir, struct bt_probe_file *f,
		       char *msg, size_t len);

/* A file's build-id in hex, or "none". */
const char *bt_probe_id_hex(const struct bt_build_id *id, char *buf, size_t len);

#endif
