/* plt.h - the entries of an x86_64 file's procedure linkage table (.plt, .plt.sec, .plt.got), each
 * named from the relocation of the GOT slot it jumps through, as perf and objdump name them. */
#ifndef BT_PLT_H
#define BT_PLT_H

#include <stddef.h>
#include <stdint.h>
#include "elf/elffile.h"

struct bt_plt_entry {
	uint64_t addr, size;
	/* The symbol the slot is relocated against (without a version), in e's string table: the
	 * entry is named NAME@plt. NULL when the slot is an ifunc's (R_X86_64_IRELATIVE): then ifunc
	 * is the address of the ifunc, whose name the caller knows. The lazy-binding header of .plt is
	 * named ".plt" (suffix 0). */
	const char *name;
	uint32_t namelen;
	uint8_t suffix;          /* 1: the name takes "@plt" */
	uint64_t ifunc;
};

/* The named entries of e's PLT sections; entries whose slot no relocation names
 * are left out. Names point into e, which must stay open while they are used. *out is NULL when
 * there are none (a file of another machine, no PLT, a debug file whose sections hold no bytes).
 * 0 or -ENOMEM. */
int bt_plt_entries(struct bt_elf *e, struct bt_plt_entry **out, size_t *n);

#endif
