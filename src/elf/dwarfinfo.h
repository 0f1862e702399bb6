/* dwarfinfo.h - source locations from DWARF (libdw): for an address, the chain of functions it is
 * in, inlined ones included, each with a file and line, innermost first. Opened lazily, only for
 * the build-ids whose locations are wanted. */
#ifndef BT_DWARFINFO_H
#define BT_DWARFINFO_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

struct bt_dwarf;

struct bt_dwarf_frame {
	/* The function: its linkage (mangled) name when DWARF has one, else its plain name; NULL
	 * when the address has line information but no enclosing function. */
	const char *function;
	/* The innermost frame's file:line is the address's line; an outer frame's is the call site
	 * of the function inlined into it. NULL and 0 when unknown. */
	const char *file;
	unsigned line;
};

/* Opens the DWARF of the ELF file open as fd (duplicated; the caller keeps its fd). Compressed
 * debug sections are handled. 0, -ENODATA (no DWARF), -ENOEXEC (not ELF), -EBADMSG (a string
 * section fails bt_dwarf_check_strings: no lines from this file), or -errno. */
int bt_dwarf_open_fd(int fd, struct bt_dwarf **out);

/* Whether the DWARF string sections of e (.debug_str, .debug_line_str, compressed or not) end with
 * a NUL, as every string read from them must: libdw reads a string past the section's end when the
 * last one is unterminated. 0, or -EBADMSG with *bad (if bad is not NULL) naming the first section
 * that does not (or cannot be decompressed), or -ENOEXEC. */
int bt_dwarf_check_strings(Elf *e, const char **bad);

/* Supplies the file a .gnu_debugaltlink (dwz) refers to; fd is duplicated. 0 or -errno. */
int bt_dwarf_set_alt_fd(struct bt_dwarf *d, int fd);

/* The frames of vaddr (an address as the ELF file's symbols express it), innermost first, at
 * most max of them (the innermost ones). Returns how many were written: 0 when DWARF does not
 * cover vaddr, or -errno. Strings belong to d and live until bt_dwarf_close. */
int bt_dwarf_lookup(struct bt_dwarf *d, uint64_t vaddr, struct bt_dwarf_frame *frames, size_t max);

void bt_dwarf_close(struct bt_dwarf *d);
/* The memory it holds, in bytes, about: its indexes, and the DWARF sections libdw reads. */
size_t bt_dwarf_bytes(const struct bt_dwarf *d);

#endif
