/* dso.h - the registry of mapped files seen in a session: each file version (device, inode, mtime)
 * resolves to a dso named by its build-id, whose symbol table is loaded once, from the exact bytes
 * that were mapped, and shared by every process mapping it. */
#ifndef BT_DSO_H
#define BT_DSO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "elf/buildid.h"
#include "symsrc/debuginfod_client.h"
#include "base/htab.h"
#include "base/strtab.h"
#include "symsrc/bidcache.h"
#include "symsrc/symsrc.h"
#include "elf/symtab.h"

#define BT_NO_ID UINT32_MAX

enum bt_bid_origin { BT_ORIGIN_NONE = 0, BT_ORIGIN_BPF, BT_ORIGIN_USERSPACE };

/* One version of one file, as the kernel identified it when it was mapped. */
struct bt_file {
	dev_t dev;
	uint64_t ino;
	uint64_t mtime_ns;
	uint32_t path_id;     /* in the registry's strings */
	uint32_t dso_id;      /* BT_NO_ID while the build-id is not known */
	bool no_build_id;     /* the file is ELF but carries no build-id: the dso is keyed by the file */
};

enum bt_sym_state { BT_SYMS_UNTRIED = 0, BT_SYMS_LOADED, BT_SYMS_FAILED };

/* Symbols of one build-id. */
struct bt_dso {
	struct bt_build_id build_id;   /* len 0 for files without one */
	enum bt_bid_origin origin;
	uint32_t path_id;              /* the first path it was seen under */
	int fd;                        /* the exact file version, or -1 */
	bool image;                    /* fd is a copy made in memory (the vDSO's), kept open */
	enum bt_sym_state sym_state;
	int sym_err;                   /* -errno when sym_state is FAILED */
	struct bt_symtab *symtab;
	char sym_origin[BT_SYMSRC_ORIGIN_LEN];  /* where the symbols came from: "file", "debug-dir" ... */
	bool debuginfod_pending;       /* a debuginfod lookup for a fuller table is in flight */
	uint64_t last_use;             /* the registry's epoch when its table was last asked for */
	struct bt_cfi *cfi;            /* call frame information, opened on first use */
	int cfi_err;                   /* why there is none (-errno) once tried; 0 untried or open */
	struct bt_dwarf *dwarf;        /* DWARF for source lines, opened on first use */
	int dwarf_err;                 /* as cfi_err */
	bool go;                       /* a Go program without a build-id: fd is kept for its lines */
	struct bt_golines *golines;    /* a Go program's lines from its .gopclntab, opened on first use */
	int golines_err;               /* as cfi_err */
	bool tops_done;                /* tops was filled (see bt_dso_outermost) */
	uint8_t ntops;
	struct {                       /* file offsets of the functions that begin its stacks */
		uint64_t lo, hi;
		uint8_t kind;          /* BT_OUTERMOST_*: when a frame there is the outermost */
	} tops[16];
};

struct bt_dso_registry {
	struct bt_file *files;
	size_t nfiles, files_cap;
	struct bt_dso *dsos;
	size_t ndsos, dsos_cap;
	struct bt_htab file_index;    /* (dev, ino, mtime) -> file id */
	struct bt_htab bid_index;     /* build-id -> dso id */
	struct bt_strtab paths;
	const char *proc_root;        /* "" for the real /proc */
	struct bt_symsrc_opts symsrc; /* where symbols of a build-id are looked for */
	bool cache_store;             /* store binaries with samples in the build-id cache */
	uint64_t mismatches;          /* candidate files refused because their build-id differed */
	uint64_t symtabs_loaded;
	uint64_t cache_stored, cache_errors;  /* stores done, and failed other than for the budget */
	int cache_last_err;                   /* -errno of the last failed store */
	struct bt_bidcache_budget cache_budget;  /* the stores' limits and what they refused */
	struct bt_debuginfod *debuginfod;  /* NULL: never asked */
	uint64_t debuginfod_adopted;
	uint64_t epoch;               /* advanced by its user (the agent: once per interval) */
	uint64_t symtabs_evicted;
	uint64_t dwarf_refused;       /* build-ids whose DWARF was refused as corrupt: no lines for them */
};

/* symsrc may be NULL (defaults); cache_store: keep each build-id's binary that gets samples in the
 * build-id cache, so later sessions symbolize it after the file changed or went. */
void bt_dso_registry_init(struct bt_dso_registry *r, const char *proc_root,
			  const struct bt_symsrc_opts *symsrc, bool cache_store);
void bt_dso_registry_free(struct bt_dso_registry *r);

/* The id of a file version, added if new (dso unknown). Returns the id or -ENOMEM. */
int64_t bt_dso_file(struct bt_dso_registry *r, dev_t dev, uint64_t ino, uint64_t mtime_ns,
		    const char *path);
static inline struct bt_file *bt_dso_file_get(struct bt_dso_registry *r, uint32_t id)
{
	return id < r->nfiles ? &r->files[id] : NULL;
}
static inline struct bt_dso *bt_dso_get(struct bt_dso_registry *r, uint32_t id)
{
	return id < r->ndsos ? &r->dsos[id] : NULL;
}

/* Where a file was seen mapped: by process pid (<= 0: none known, e.g. it is gone), at [start, end)
 * (empty: the range is not known). */
struct bt_dso_mapping {
	int pid;
	uint64_t start, end;
};

/* Records that file_id has build-id id (from origin); the dso of that build-id is created on first
 * sight. When where names a live mapping of it, the exact mapped bytes are opened through
 * /proc/PID/map_files and kept for symbol loading; otherwise the file at its path (inside the
 * process's root while it lives) is used only if its build-id matches. Returns the dso id or -errno. */
int64_t bt_dso_set_build_id(struct bt_dso_registry *r, uint32_t file_id, const struct bt_build_id *id,
			    enum bt_bid_origin origin, const struct bt_dso_mapping *where);

/* The vDSO is no file: a copy of a process's image (bt_procmaps_open_vdso), open as fd, is a file
 * version of its own, "[vdso]" on device 0 keyed by the image's build-id, whose dso reads its
 * symbols and call frame information from the copy, kept open. The same image in many processes is
 * one file. fd is the registry's when it is kept (*kept), else the caller still closes it. Returns
 * the file id, -ENODATA (the image has no build-id), -ENOEXEC (not ELF), or -errno. */
int64_t bt_dso_vdso(struct bt_dso_registry *r, int fd, bool *kept);

/* For a file with no build-id: a dso keyed by the file itself. */
int64_t bt_dso_set_no_build_id(struct bt_dso_registry *r, uint32_t file_id,
			       const struct bt_dso_mapping *where);

/* The dso's symbol table, loaded on first use from the first source that has one (see symsrc.h);
 * NULL when none could be loaded. */
const struct bt_symtab *bt_dso_symtab(struct bt_dso_registry *r, uint32_t dso_id);

/* Lets the registry ask debuginfod (c is borrowed) for build-ids whose local sources give no symbols
 * or only the exported ones. */
void bt_dso_set_debuginfod(struct bt_dso_registry *r, struct bt_debuginfod *c);

/* Adopts finished debuginfod lookups (waiting up to timeout_ms, a negative value: until none is
 * pending); fn is called with each dso whose symbol table was replaced. Returns how many were. */
int bt_dso_poll_debuginfod(struct bt_dso_registry *r, int timeout_ms,
			   void (*fn)(void *ctx, uint32_t dso_id), void *ctx);

/* Frees the symbol tables of dsos not asked for since epoch `before` (they are loaded again, from
 * the same sources, if asked for later). Returns how many were freed. */
size_t bt_dso_evict(struct bt_dso_registry *r, uint64_t before);

/* The dso's call frame information (from its exact file), opened on first use; NULL when it has
 * none or its file is not open. */
struct bt_cfi *bt_dso_cfi(struct bt_dso_registry *r, uint32_t dso_id);
/* The DWARF of a build-id (its own file's, else a debug file's: bt_symsrc_open_dwarf), opened on
 * first use and kept; NULL when there is none or the dso has no build-id (lines are only given for
 * an exactly known version). */
struct bt_dwarf *bt_dso_dwarf(struct bt_dso_registry *r, uint32_t dso_id);

/* A Go program's lines from its .gopclntab (goelf.h), for one without DWARF, opened on first use and
 * kept; NULL when it is not a Go program or its bytes cannot be had any more. */
struct bt_golines *bt_dso_golines(struct bt_dso_registry *r, uint32_t dso_id);

/* The Go runtime's outermost functions: runtime.goexit under each goroutine, runtime.mstart under
 * each thread's system stack, runtime.rt0_go under the first (BT_OUTERMOST_ALWAYS); the functions
 * that call on another stack (runtime.systemstack, mcall, morestack: BT_OUTERMOST_SWITCH), whose
 * frames beyond are words left there by earlier calls, for a caller (a return address), and in a
 * stack unwound with call frame information, which does not follow their switch, for the
 * innermost frame too; for a caller in such a stack, the functions that switch stacks around a
 * call of the vDSO or of C (runtime.nanotime1, time.now, runtime.walltime, asmcgocall...:
 * BT_OUTERMOST_CFI_CALLER; their frame pointers follow the switch, so a frame-pointer walk goes on
 * through them); and in such a stack, the signal handler's return (runtime.sigreturn: no call frame
 * information describes the signal frame it returns through: BT_OUTERMOST_CFI). */
enum { BT_OUTERMOST_ALWAYS = 1, BT_OUTERMOST_SWITCH, BT_OUTERMOST_CFI_CALLER, BT_OUTERMOST_CFI };

/* Whether a frame at file offset off of a dso is the outermost of its stack (see the kinds above),
 * whatever a walk found beyond it: caller, it is a return address; cfi, its stack was unwound with
 * call frame information. Known from the dso's symbols, loaded for a Go program only, and found
 * once. */
bool bt_dso_outermost(struct bt_dso_registry *r, uint32_t dso_id, uint64_t off, bool caller, bool cfi);

/* Basename of a file's path, for unresolved frames. */
const char *bt_dso_file_basename(struct bt_dso_registry *r, uint32_t file_id);

/* The memory the registry itself holds, in bytes: an entry per file version and per build-id ever
 * seen, and their paths. It grows with the distinct files a machine maps (a build machine's new
 * binaries), not with the processes that map them. */
size_t bt_dso_registry_bytes(const struct bt_dso_registry *r);

/* The memory the loaded symbol tables, call frame information and DWARF hold, in bytes: what
 * grows and shrinks with the programs that run, apart from what a leak would add. */
size_t bt_dso_tables_bytes(const struct bt_dso_registry *r);

#endif
