/* gopclntab.h - Go's function table (.gopclntab), which every Go program keeps, stripped or not, for
 * its own tracebacks: function names, and by pc the file, line and inlined calls. Layouts of Go 1.16
 * to current (header magics 0xfffffffa: 1.16 and 1.17, 0xfffffff0: 1.18 and 1.19, 0xfffffff1: 1.20
 * on), little-endian, 4- or 8-byte pointers. A parser of untrusted bytes: every offset is checked
 * against the region of the table it points into, and every walk is bounded. */
#ifndef BT_GOPCLNTAB_H
#define BT_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>
#include "elf/dwarfinfo.h"

/* Reads len bytes at address vaddr of the program: the inline trees, which lie outside the table.
 * 0 or -errno. */
typedef int (*bt_gopcln_read_fn)(void *ctx, uint64_t vaddr, void *buf, size_t len);

struct bt_gopcln_src {
	const void *tab;         /* the table's bytes (must outlive the handle) */
	size_t len;
	uint64_t addr;           /* the address it is loaded at */
	uint64_t text;           /* where Go's code starts, when the header says 0 (a relocated field of
				  * a position-independent build); 0: unknown */
	bt_gopcln_read_fn read;  /* NULL: no inline trees */
	void *ctx;
	uint64_t gofunc;         /* Go 1.18 on: moduledata.gofunc, the base of funcdata offsets (see
				  * bt_gopcln_find_gofunc); 0: unknown, no inline trees */
};

struct bt_gopcln;

/* Parses the header and checks the regions it names. 0, -ENODATA (not a table of a version known
 * here), -EINVAL (corrupt), or -ENOMEM. */
int bt_gopcln_open(const struct bt_gopcln_src *src, struct bt_gopcln **out);
void bt_gopcln_free(struct bt_gopcln *g);

/* The header's version: 116, 118 or 120 (the first Go release of its layout). */
unsigned bt_gopcln_version(const struct bt_gopcln *g);
/* The functions the table lists (some may prove unreadable). */
size_t bt_gopcln_count(const struct bt_gopcln *g);
/* Function i: [*entry, *end) and its name (NUL-terminated, in the table). 0, or -EINVAL when its
 * entry is out of order or its name cannot be read. */
int bt_gopcln_func(const struct bt_gopcln *g, size_t i, uint64_t *entry, uint64_t *end, const char **name);

/* The frames of pc, innermost first as bt_dwarf_lookup gives them: the functions inlined there
 * (from the inline tree, when it can be read), then the function pc is in; each with the file and
 * line of its instruction at that level (the innermost: pc's own; an outer one: its call of the
 * function inlined into it). At most max frames, the innermost ones. Returns how many were written:
 * 0 when no function holds pc. Strings belong to the table. */
int bt_gopcln_lookup(const struct bt_gopcln *g, uint64_t pc, struct bt_dwarf_frame *out, size_t max);

/* Go 1.18 on: the moduledata in data (a data section's bytes, at address addr) that points at this
 * table, and so its gofunc. words: how to read a pointer-sized field at an address of data (the
 * bytes themselves when NULL; a position-independent build's relocations otherwise), 0 when unknown.
 * Returns gofunc, or 0 when no moduledata was found or it does not check out. */
typedef uint64_t (*bt_gopcln_word_fn)(void *ctx, uint64_t vaddr);
uint64_t bt_gopcln_find_gofunc(const struct bt_gopcln *g, const void *data, size_t len, uint64_t addr,
			       bt_gopcln_word_fn words, void *ctx);

#endif
