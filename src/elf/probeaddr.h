/* probeaddr.h - where a probe goes in an ELF file: whether an address lies in code and begins an
 * instruction (the file offset uprobes take: bt_elf_vaddr_to_offset in elffile.h). */
#ifndef BT_PROBEADDR_H
#define BT_PROBEADDR_H

#include <stdbool.h>
#include <stdint.h>

#include "elf/elffile.h"

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
