/* goelf.h - a Go program's .gopclntab read from its ELF file: the functions a stripped Go program
 * still names (one symbol table with its .dynsym), and by address its files, lines and inlined calls
 * (the inline trees, found through its moduledata). */
#ifndef BT_GOELF_H
#define BT_GOELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "elf/dwarfinfo.h"
#include "elf/elffile.h"
#include "elf/symtab.h"

/* Whether e is a Go program: it has a .gopclntab section. */
bool bt_goelf_is_go(struct bt_elf *e);

/* The functions of e's .gopclntab with e's own symbols (.dynsym, PLT), as bt_symtab_load_more puts
 * them together. 0, -ENODATA (no .gopclntab of a known version), -EINVAL (corrupt), or -errno. */
int bt_goelf_symtab(struct bt_elf *e, struct bt_symtab **out);

/* A Go program's table opened for lines: it keeps the file (its own duplicate of fd) and the table's
 * bytes. 0, -ENODATA (not a Go program, or a table of an unknown version), or -errno. */
struct bt_golines;
int bt_golines_open(int fd, struct bt_golines **out);
/* The frames of vaddr (an address as the file's symbols express it), innermost first, as
 * bt_dwarf_lookup gives them; see bt_gopcln_lookup. Strings live until bt_golines_close. */
int bt_golines_lookup(struct bt_golines *g, uint64_t vaddr, struct bt_dwarf_frame *out, size_t max);
/* Whether inlined calls can be told (the inline trees were found). */
bool bt_golines_inlines(const struct bt_golines *g);
size_t bt_golines_bytes(const struct bt_golines *g);
void bt_golines_close(struct bt_golines *g);

#endif
