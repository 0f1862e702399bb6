/* ehtfile.h - a compiled unwind table (ehtable.h) and the load layout of its file as a file of its
 * own, kept so that the next session loads it instead of compiling it again: written whole, and read
 * back only after every field is checked (its build-id, sizes, a checksum, rows in order naming
 * rules that exist, rule kinds the walker knows), since a table is derived data a file may spoil. */
#ifndef BT_EHTFILE_H
#define BT_EHTFILE_H

#include <stddef.h>
#include <stdint.h>

#include "elf/ehtable.h"
#include "elf/elffile.h"

/* Writes t and lay as the table of build-id bid (len bytes) to fd, from offset 0. 0 or -errno. */
int bt_ehtfile_write(int fd, const uint8_t *bid, size_t len, const struct bt_ehtable *t,
		     const struct bt_elf_layout *lay);

/* Reads the table of build-id bid from fd into t (free with bt_ehtable_free) and lay. 0, -EBADMSG
 * (not a table, another build-id's, truncated, or failing a check), -ENOMEM or -errno. */
int bt_ehtfile_read(int fd, const uint8_t *bid, size_t len, struct bt_ehtable *t, struct bt_elf_layout *lay);

/* The same from bytes in memory (what the fuzzer feeds it). */
int bt_ehtfile_parse(const void *buf, size_t n, const uint8_t *bid, size_t len, struct bt_ehtable *t,
		     struct bt_elf_layout *lay);

#endif
