/* symtab.h - function symbols of one ELF file (.symtab and .dynsym merged), sorted, looked up by
 * address in O(log n). Immutable once loaded, so one table serves every process mapping the file. */
#ifndef BT_SYMTAB_H
#define BT_SYMTAB_H

#include <stddef.h>
#include <stdint.h>
#include "elf/elffile.h"

struct bt_sym {
	uint64_t addr;
	uint64_t size;      /* 0: extends to the next symbol (within its section) */
	const char *name;   /* as in the file (mangled); demangle with bt_demangle */
};

struct bt_symtab;

/* Loads the function symbols (STT_FUNC, STT_GNU_IFUNC) of e, and its PT_LOAD layout; undefined
 * and zero-address symbols are left out. Untyped labels (STT_NOTYPE) in code sections count as
 * zero-size functions, as perf and addr2line take them (assembly entry points such as ld.so's
 * _start), except inside a sized function and the assembler's .L and $ labels. The table copies
 * what it keeps: e may be closed after. A symbol version is not part of a name (memcpy@@GLIBC_2.14
 * is memcpy). Aliases at one address keep one name, chosen as perf chooses: sized before unsized, a
 * function before a label, non-weak before weak, global before local, fewer leading underscores,
 * the longer name (version included, as perf compares them), then the first in the file (.symtab
 * before .dynsym). 0, -ENODATA (no function symbols), or -errno. */
int bt_symtab_load(struct bt_elf *e, struct bt_symtab **out);
/* PLT entries get symbols too (elf/plt.h): FUNC@plt, and ".plt" for the lazy-binding header, as
 * perf names them; an ifunc's entry (IRELATIVE) takes the name this table gives the ifunc.
 * bt_symtab_load reads them from e itself; bt_symtab_load_with_plt from code, the file that was
 * mapped, when e is its separate debug file (whose PLT holds no bytes), or not at all when code
 * is NULL. */
int bt_symtab_load_with_plt(struct bt_elf *e, struct bt_elf *code, struct bt_symtab **out);
/* As bt_symtab_load, with n more functions found elsewhere (Go's .gopclntab: goelf.h) beside the
 * file's own symbols: each a sized global function, named as given (copied), which the name rule
 * puts after the file's own symbols of the same rank at one address. Entries with a zero address or
 * size, or no name, are left out. */
int bt_symtab_load_more(struct bt_elf *e, const struct bt_sym *more, size_t n, struct bt_symtab **out);
int bt_symtab_load_path(const char *path, struct bt_symtab **out);
void bt_symtab_free(struct bt_symtab *st);

size_t bt_symtab_count(const struct bt_symtab *st);
/* The memory the table holds, in bytes. */
size_t bt_symtab_bytes(const struct bt_symtab *st);
const struct bt_sym *bt_symtab_at(const struct bt_symtab *st, size_t i);
const struct bt_elf_layout *bt_symtab_layout(const struct bt_symtab *st);

/* The version sym is defined with (GLIBC_2.14: from name@@VER in .symtab, or .gnu.version for a
 * dynamic symbol; that of the same name in the other table when the chosen alias has none), or
 * NULL when it has none. sym must come from st. */
const char *bt_symtab_version(const struct bt_symtab *st, const struct bt_sym *sym);

/* The symbol containing vaddr, and vaddr's offset into it; NULL when none does (before the first
 * symbol, past a sized symbol's end, or past a zero-size symbol's section). */
const struct bt_sym *bt_symtab_lookup(const struct bt_symtab *st, uint64_t vaddr, uint64_t *off);
/* The same for a file offset, translated through the PT_LOAD layout. */
const struct bt_sym *bt_symtab_lookup_offset(const struct bt_symtab *st, uint64_t file_off,
					     uint64_t *off);

#endif
