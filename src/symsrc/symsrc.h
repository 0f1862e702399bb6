/* symsrc.h - where the symbols and the DWARF of a build-id come from. Sources, in order: the mapped
 * file itself, its MiniDebugInfo, the system debug directory (/usr/lib/debug/.build-id), the
 * .gnu_debuglink file (CRC checked), and the build-id cache; debuginfod results are adopted into the
 * cache. A candidate is used only when its build-id matches. Every system path is built under a root
 * prefix so tests can use a temporary directory. */
#ifndef BT_SYMSRC_H
#define BT_SYMSRC_H

#include <stdbool.h>
#include <stddef.h>
#include "elf/buildid.h"
#include "elf/dwarfinfo.h"
#include "elf/goelf.h"
#include "elf/symtab.h"

struct bt_symsrc_opts {
	const char *root;       /* prefix for system paths and the file's path; NULL or "" for / */
	const char *cache_dir;  /* build-id cache; NULL: $HOME/.debug */
	bool debuginfod;        /* may ask DEBUGINFOD_URLS servers (the caller does, see debuginfod_client.h) */
};

/* A .gnu_debuglink candidate is read whole for its CRC only when it looks like a debug file: at
 * most this large, without holes, an ELF file no longer than what its headers claim (plus a
 * little), and of the build-id wanted when it has one. */
#define BT_DEBUGLINK_MAX_BYTES (4ULL << 30)
#define BT_DEBUGLINK_SLACK (1ULL << 20)

/* Longest origin name plus its NUL. */
#define BT_SYMSRC_ORIGIN_LEN 16

/* The file whose symbols or DWARF are wanted. */
struct bt_symsrc_req {
	const struct bt_build_id *id;
	int mapped_fd;           /* the exact mapped file, e.g. from /proc/PID/map_files; -1 if none
				  * (0 is a valid descriptor) */
	const char *path;        /* the file's path (may be NULL): looked up under the root when there
				  * is no usable mapped_fd, and used to find its .gnu_debuglink */
};

/* The symbols of build-id req->id. The binary itself comes from req->mapped_fd, req->path or the
 * cache's elf entry, whichever matches first.
 * The first source with a full symbol table wins: the binary's .symtab ("file", or "cache" when the
 * binary came from the cache), its MiniDebugInfo merged with its .dynsym ("minidebuginfo"), then
 * separate debug files: "debug-dir", "debuglink", "cache", then a Go program's .gopclntab merged with
 * its .dynsym ("gopclntab": elf/goelf.h). When none has one, the binary's exported functions alone
 * are returned with origin "dynsym" (a debug file, e.g. from debuginfod, would give more). File offsets are translated with the binary's PT_LOAD layout whenever the binary is known,
 * as a debug file's program headers may not describe its contents.
 * 0, -ENOENT (no file with this build-id), -ENODATA (no function symbols), or -errno. debuginfod is
 * not asked. */
int bt_symsrc_load(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
		   struct bt_symtab **out, char *origin, size_t originlen);

/* The symbols of a file no build-id identifies, whose own bytes are all there is: its symbol tables
 * ("file"), or when it has no .symtab and is a Go program, its .gopclntab's functions with its
 * .dynsym ("gopclntab"). 0, -ENODATA, or -errno. */
int bt_symsrc_load_elf(struct bt_elf *e, struct bt_symtab **out, char *origin, size_t originlen);

/* Adopts a debug file obtained for id elsewhere (debuginfod): checks its build-id (-EINVAL when it
 * differs), stores it in the build-id cache as the entry's debug file (best effort: a cache that
 * cannot be written does not fail the call), and loads its symbols, translated with the binary's
 * layout when mapped_fd or path gives the binary. 0 or -errno. */
int bt_symsrc_adopt_debug_fd(const struct bt_symsrc_opts *o, const struct bt_build_id *id,
			     int debug_fd, int mapped_fd, const char *path, struct bt_symtab **out);

/* A separate debug file of req->id (debug directory, debuglink, cache), opened read-only and
 * checked. Returns the fd, -ENOENT when none exists, or -errno. origin as for bt_symsrc_load. */
int bt_symsrc_open_debug(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
			 char *origin, size_t originlen);

/* The DWARF of req->id: the binary's own, else a separate debug file's (same order as symbols),
 * with a dwz .gnu_debugaltlink file resolved under the root. 0, -ENODATA (none), -EBADMSG (the
 * DWARF found was refused as corrupt: bt_dwarf_check_strings), or -errno. */
int bt_symsrc_open_dwarf(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
			 struct bt_dwarf **out, char *origin, size_t originlen);

/* The lines of a Go program of build-id req->id from its .gopclntab (the binary as for
 * bt_symsrc_load): what stands in for DWARF when a Go program was built without it. 0, -ENODATA
 * (not a Go program, or no binary of that build-id), or -errno. */
int bt_symsrc_open_golines(const struct bt_symsrc_opts *o, const struct bt_symsrc_req *req,
			   struct bt_golines **out);

/* Writes to out the path of a file whose build-id is id, trying hint_path (may be NULL, not
 * prefixed) first, then the debug directory and the build-id cache (debug, then elf).
 * 0, -ENOENT when no candidate matches, -ENAMETOOLONG, or -errno. */
int bt_symsrc_find_path(const struct bt_symsrc_opts *o, const struct bt_build_id *id,
			const char *hint_path, char *out, size_t outlen);

/* The cache directory o names (its cache_dir, else the default). 0 or -errno. */
int bt_symsrc_cache_dir(const struct bt_symsrc_opts *o, char *buf, size_t len);

#endif
