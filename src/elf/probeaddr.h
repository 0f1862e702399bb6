/* probeaddr.h - where a probe goes in an ELF file: an address as its symbols express it turned into
 * the file offset uprobes take, and whether it lies in code. */
#ifndef BT_PROBEADDR_H
#define BT_PROBEADDR_H

#include <stdbool.h>
#include <stdint.h>

#include "elf/elffile.h"

/* The file offset of vaddr through the PT_LOAD layout (the executable segment first, where
 * segments overlap); only bytes present in the file count. 0 or -ERANGE. */
int bt_elf_vaddr_to_offset(const struct bt_elf_layout *l, uint64_t vaddr, uint64_t *offset);

/* Whether vaddr lies in a section of e holding instructions (SHF_EXECINSTR: .text, .plt, .init ...);
 * its name goes to sect (may be NULL). Without section headers (a file stripped of them), an
 * executable PT_LOAD segment stands in. 0 when it does, -ERANGE when not, or -errno. */
int bt_elf_code_at(struct bt_elf *e, uint64_t vaddr, char *sect, size_t len);

/* Whether vaddr is known to begin an instruction of the ELF file open as fd: the address of a row
 * of the DWARF line table covering it (every function's entry and each line's first instruction).
 * 1 known, 0 not known (no DWARF there, or an address between rows, which may still begin one), or
 * -errno. */
int bt_elf_line_row_at(int fd, uint64_t vaddr);

#endif
