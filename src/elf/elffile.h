/* elffile.h - an opened ELF file (from an fd, a path or a buffer, via libelf) and what buildtrace reads
 * from it besides symbols: build-id, .gnu_debuglink, sections, and the PT_LOAD layout that turns a
 * file offset into the address symbols are expressed in. */
#ifndef BT_ELFFILE_H
#define BT_ELFFILE_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "elf/buildid.h"

struct bt_elf;

/* All return 0 or -errno (-ENOEXEC: not ELF or malformed). A file is read with pread as parts of
 * it are asked for, never mapped (a file truncated meanwhile gives errors, not SIGBUS); the handle
 * reads through its own duplicate of fd. A buffer must outlive the handle. bt_elf_open_path opens
 * only a regular file (else -EINVAL, without opening it: base/safeopen.h), and decompresses
 * xz/zstd/gzip files. */
int bt_elf_open_fd(int fd, struct bt_elf **out);
int bt_elf_open_mem(const void *buf, size_t len, struct bt_elf **out);
int bt_elf_open_path(const char *path, struct bt_elf **out);
void bt_elf_close(struct bt_elf *e);

Elf *bt_elf_handle(struct bt_elf *e);

int bt_elf_build_id(struct bt_elf *e, struct bt_build_id *out);  /* -ENODATA when none */

/* .gnu_debuglink: file name and CRC32. -ENODATA when absent. */
int bt_elf_debuglink(struct bt_elf *e, char *name, size_t namelen, uint32_t *crc);
/* The CRC32 .gnu_debuglink uses (zlib's crc32) of a whole file of at most max bytes; 0, -EFBIG
 * once more than max bytes were read (a file that grew meanwhile), or -errno. */
int bt_elf_file_crc32(int fd, uint64_t max, uint32_t *crc);

/* Where the bytes an ELF file's headers claim end: the furthest of its program and section header
 * tables and the contents of its sections and segments (SHT_NOBITS excluded). A file much longer
 * than that holds something else. 0 or -ENOEXEC. */
int bt_elf_extent(struct bt_elf *e, uint64_t *end);

/* A section's bytes by name (e.g. ".gnu_debugdata"); -ENODATA when absent, empty or SHT_NOBITS.
 * The data belongs to the handle. */
int bt_elf_section(struct bt_elf *e, const char *name, const void **data, size_t *len);
/* The same, and the address the section is loaded at (may be NULL). */
int bt_elf_section_at(struct bt_elf *e, const char *name, const void **data, size_t *len, uint64_t *addr);

/* The value of the first .symtab symbol called name, whatever its type (a linker-script label such
 * as vmlinux's _text included). 0, -ENODATA when there is none, or -ENOEXEC. */
int bt_elf_symbol_value(struct bt_elf *e, const char *name, uint64_t *value);
/* The same in .dynsym, else .symtab, with the symbol's size: what a stripped program exports. */
int bt_elf_symbol_any(struct bt_elf *e, const char *name, uint64_t *value, uint64_t *size);

#define BT_ELF_MAX_LOADS 16
struct bt_elf_load {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags;  /* PF_X | PF_W | PF_R */
};
struct bt_elf_layout {
	uint16_t type;   /* ET_EXEC, ET_DYN, ET_REL ... */
	uint16_t nload;
	struct bt_elf_load load[BT_ELF_MAX_LOADS];
};
int bt_elf_layout(struct bt_elf *e, struct bt_elf_layout *out);
/* Bytes of the sections of a libelf handle whose names start with prefix: what libelf holds in
 * memory once they are read (ELF_C_READ). */
uint64_t bt_elf_raw_section_bytes(Elf *elf, const char *prefix);

/* The program interpreter a dynamically linked executable names (PT_INTERP), NUL-terminated.
 * 0, -ENODATA (none: static or a library), -ENAMETOOLONG, or -ENOEXEC. */
int bt_elf_interp(struct bt_elf *e, char *buf, size_t len);
/* The address (as in the symbol table) of a file offset: the PT_LOAD containing it decides, the
 * executable one first when segments overlap. 0 or -ERANGE. Works for PIE, shared objects and
 * non-PIE executables alike. */
int bt_elf_offset_to_vaddr(const struct bt_elf_layout *l, uint64_t offset, uint64_t *vaddr);
/* Its inverse: the file offset of an address, as uprobes take it; only bytes present in the file
 * count. 0 or -ERANGE. */
int bt_elf_vaddr_to_offset(const struct bt_elf_layout *l, uint64_t vaddr, uint64_t *offset);

#endif
