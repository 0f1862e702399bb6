/* pycode.c - CPython's line tables (Objects/lnotab_notes.txt of 3.8-3.10, Objects/locations.md of
 * 3.11 on, in its source tree) and PEP 393 strings, decoded from copies of their bytes: nothing here
 * reads a process. */
#include "symsrc/pycode.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* An unsigned varint of the location table: 6 bits per byte, 0x40 when another byte follows. */
static uint32_t varint(const uint8_t *tab, size_t len, size_t *i)
{
	uint32_t v = 0;
	for (unsigned shift = 0; *i < len && shift < 32; shift += 6) {
		uint8_t b = tab[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		if (!(b & 64))
			break;
	}
	return v;
}

static int32_t svarint(const uint8_t *tab, size_t len, size_t *i)
{
	uint32_t u = varint(tab, len, i);
	return u & 1 ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
}

enum { LOC_ONE_LINE0 = 10, LOC_ONE_LINE2 = 12, LOC_NO_COLUMNS = 13, LOC_LONG = 14, LOC_NONE = 15 };

static unsigned line_of(int64_t line)
{
	return line <= 0 || line > UINT32_MAX ? 0 : (unsigned)line;
}

/* 3.8-3.9: (bytes, signed line delta) pairs; an offset has the line of the last pair starting at
 * or before it, those past the table the last line. */
static unsigned lnotab_line(const uint8_t *tab, size_t len, int firstlineno, int64_t addrq)
{
	int64_t line = firstlineno, addr = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > addrq)
			break;
		line += (int8_t)tab[i + 1];
	}
	return line_of(line);
}

/* 3.10: (bytes, signed line delta) pairs each ending a range of instructions; a delta of -128
 * gives its range no line. */
static unsigned linetable310_line(const uint8_t *tab, size_t len, int firstlineno, int64_t addrq)
{
	int64_t line = firstlineno, addr = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)tab[i + 1];
		bool none = delta == -128;
		if (!none)
			line += delta;
		addr += tab[i];
		if (addrq < addr)
			return none ? 0 : line_of(line);
	}
	return 0;
}

static unsigned locations_line(const uint8_t *tab, size_t len, int firstlineno, int64_t addrq)
{
	int64_t line = firstlineno;
	uint64_t addr = 0;
	size_t i = 0;
	/* Each entry: a first byte with bit 7 set, the entry's kind in bits 3-6 and its length in code
	 * units (2 bytes) less one in bits 0-2; then bytes with bit 7 clear. */
	while (i < len) {
		uint8_t b = tab[i++];
		if (!(b & 0x80))
			return 0;
		unsigned kind = (b >> 3) & 15, units = (b & 7) + 1u;
		int32_t delta = 0;
		if (kind == LOC_NO_COLUMNS || kind == LOC_LONG)
			delta = svarint(tab, len, &i);
		else if (kind >= LOC_ONE_LINE0 && kind <= LOC_ONE_LINE2)
			delta = (int32_t)(kind - LOC_ONE_LINE0);
		while (i < len && !(tab[i] & 0x80))  /* columns and end line: not needed */
			i++;
		line += delta;
		addr += 2 * units;
		if ((uint64_t)addrq < addr)
			return kind == LOC_NONE ? 0 : line_of(line);
	}
	return 0;
}

unsigned bt_pycode_line(unsigned fmt, const uint8_t *tab, size_t len, int firstlineno, int64_t addrq)
{
	if (addrq < 0)
		return firstlineno > 0 ? (unsigned)firstlineno : 0;
	switch (fmt) {
	case BT_PY_LINES_LNOTAB:
		return lnotab_line(tab, len, firstlineno, addrq);
	case BT_PY_LINES_310:
		return linetable310_line(tab, len, firstlineno, addrq);
	default:
		return locations_line(tab, len, firstlineno, addrq);
	}
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* Longer names are not source names: read no more of them. */
#define PYSTR_MAX_CHARS 4096

int bt_pystr_layout(const uint8_t *hdr, size_t hlen, const struct bt_py_offsets *o, uint64_t *data_off,
		    size_t *nchars, unsigned *kind)
{
	if (hlen < o->compact_data || o->str_length + 8u > hlen || o->str_state + 4u > hlen)
		return -EINVAL;
	uint64_t n = get_u64(hdr + o->str_length);
	uint32_t st = get_u32(hdr + o->str_state);
	unsigned k = (st >> o->state_kind) & 7;
	bool compact = (st >> o->state_compact) & 1, ascii = (st >> o->state_ascii) & 1;
	if (n > PYSTR_MAX_CHARS)
		return -EINVAL;
	if (!compact)
		return -ENOTSUP;
	if (k != 1 && k != 2 && k != 4)
		return -EINVAL;
	if (ascii && k != 1)
		return -EINVAL;
	*data_off = ascii ? o->ascii_data : o->compact_data;
	*nchars = (size_t)n;
	*kind = k;
	return 0;
}

/* Writes code point c as UTF-8 into out at *pos when it fits before outlen - 1. */
static bool put_utf8(char *out, size_t outlen, size_t *pos, uint32_t c)
{
	char b[4];
	size_t n;
	if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 63));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 63));
		b[2] = (char)(0x80 | (c & 63));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | ((c >> 12) & 63));
		b[2] = (char)(0x80 | ((c >> 6) & 63));
		b[3] = (char)(0x80 | (c & 63));
		n = 4;
	}
	if (*pos + n >= outlen)
		return false;
	memcpy(out + *pos, b, n);
	*pos += n;
	return true;
}

size_t bt_pystr_utf8(const uint8_t *data, size_t nchars, unsigned kind, char *out, size_t outlen)
{
	size_t pos = 0;
	if (!outlen)
		return 0;
	for (size_t i = 0; i < nchars; i++) {
		uint32_t c;
		if (kind == 1) {
			c = data[i];
		} else if (kind == 2) {
			uint16_t v;
			memcpy(&v, data + 2 * i, 2);
			c = v;
		} else {
			c = get_u32(data + 4 * i);
		}
		if (!put_utf8(out, outlen, &pos, c))
			break;
	}
	out[pos] = '\0';
	return pos;
}
