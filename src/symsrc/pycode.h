/* pycode.h - the parts of CPython objects a profiler decodes, from bytes already read out of a
 * process: the line of an instruction from a code object's line table (3.8-3.9's co_lnotab, 3.10's
 * co_linetable, the location table of 3.11 on), and a string object's characters as UTF-8. */
#ifndef BT_PYCODE_H
#define BT_PYCODE_H

#include <stddef.h>
#include <stdint.h>
#include "symsrc/pyoffsets.h"

/* The source line of the code unit at byte offset addrq of a code object's instructions, from its
 * line table tab[0..len) of format fmt (enum bt_py_lines) and co_firstlineno, as that version's
 * PyCode_Addr2Line gives it: the first line for an offset before the first instruction, 0 when the
 * table gives that instruction no line, does not reach it, or is malformed. */
unsigned bt_pycode_line(unsigned fmt, const uint8_t *tab, size_t len, int firstlineno, int64_t addrq);

/* Where a string object's characters are, from its first bytes hdr[0..hlen) (at least o->compact_data
 * of them): *data_off from the object's start, *nchars characters of *kind bytes each (1, 2 or 4).
 * Only compact strings (as the compiler makes them) are read: -ENOTSUP for others, -EINVAL when
 * hdr is not a string of sane length. */
int bt_pystr_layout(const uint8_t *hdr, size_t hlen, const struct bt_py_offsets *o, uint64_t *data_off,
		    size_t *nchars, unsigned *kind);

/* The characters data[0 .. nchars * kind) as NUL-terminated UTF-8 in out (at least 8 bytes), cut
 * at a whole character when out is too small; a surrogate or out-of-range code point becomes
 * U+FFFD. Returns the bytes written, NUL excluded. */
size_t bt_pystr_utf8(const uint8_t *data, size_t nchars, unsigned kind, char *out, size_t outlen);

#endif
