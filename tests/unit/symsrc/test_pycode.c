/* test_pycode.c - CPython's line tables decoded to lines, with each Python itself as the oracle
 * (co_lines() from 3.10 on, dis.findlinestarts() before, over every code object of a few standard
 * modules): Debian's 3.11 and pyenv's 3.8 to 3.13 (3.8-3.9's co_lnotab, 3.10's co_linetable, the
 * location tables of 3.11-3.13); and string objects' characters in each of their kinds decoded to
 * UTF-8. */
#include "testutil.h"
#include "symsrc/pycode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* For each code object: "C firstlineno hex-linetable", then "R start end line" per range of
 * instructions of one line (line 0 for None). */
static const char dump_py[] =
	"import sys, types, dis\n"
	"def ranges(co):\n"
	"    if hasattr(co, 'co_lines'):\n"
	"        yield from co.co_lines()\n"
	"        return\n"
	"    starts = list(dis.findlinestarts(co))\n"
	"    for i, (s, l) in enumerate(starts):\n"
	"        yield s, starts[i + 1][0] if i + 1 < len(starts) else len(co.co_code), l\n"
	"def walk(co):\n"
	"    tab = co.co_linetable if sys.version_info >= (3, 10) else co.co_lnotab\n"
	"    print('C', co.co_firstlineno, tab.hex() or '-')\n"
	"    for s, e, l in ranges(co):\n"
	"        print('R', s, e, l or 0)\n"
	"    for c in co.co_consts:\n"
	"        if isinstance(c, types.CodeType):\n"
	"            walk(c)\n"
	"import json.decoder, argparse, threading\n"
	"for m in (json.decoder, argparse, threading):\n"
	"    walk(compile(open(m.__file__).read(), m.__file__, 'exec'))\n";

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	if (!strcmp(s, "-"))
		return 0;
	for (; s[0] && s[1] && n < max; s += 2) {
		unsigned v;
		assert_int_equal(sscanf(s, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
	}
	return n;
}

/* Every instruction of the dump of python's run of dump_py decoded with fmt, against its lines. */
static void check_python(const char *python, unsigned fmt)
{
	char path[] = "/tmp/bt-pycode-XXXXXX", py[64];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	snprintf(py, sizeof(py), "%s.py", path);
	FILE *f = fopen(py, "w");
	assert_non_null(f);
	fputs(dump_py, f);
	fclose(f);
	char out[64];
	assert_int_equal(bt_test_run(out, sizeof(out), "%s %s > %s", python, py, path), 0);
	size_t len;
	char *text = bt_test_read_file(path, &len);
	unlink(path);
	unlink(py);
	static uint8_t tab[1 << 20];
	static char hex[2 << 20];
	size_t tlen = 0, codes = 0, ranges = 0, lined = 0;
	int first = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == 'C') {
			assert_int_equal(sscanf(line, "C %d %s", &first, hex), 2);
			tlen = unhex(hex, tab, sizeof(tab));
			codes++;
			/* before the first instruction (a frame not started yet): the first line */
			assert_int_equal(bt_pycode_line(fmt, tab, tlen, first, -2), (unsigned)first);
			continue;
		}
		long s, e, l;
		assert_int_equal(sscanf(line, "R %ld %ld %ld", &s, &e, &l), 3);
		for (long a = s; a < e; a += 2) {
			unsigned got = bt_pycode_line(fmt, tab, tlen, first, a);
			if (got != (unsigned)l)
				fail_msg("%s: code at line %d, offset %ld: line %u, Python says %ld", python, first,
					 a, got, l);
		}
		ranges++;
		lined += l != 0;
	}
	free(text);
	print_message("%s: %zu code objects, %zu ranges\n", python, codes, ranges);
	assert_true(codes > 300);
	assert_true(ranges > 2000);
	assert_true(lined > ranges / 2);
}

static void pycode__debian_python311__lines_match_co_lines(void **state)
{
	if (access("/usr/bin/python3.11", X_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg("/usr/bin/python3.11 is missing");
		skip();
	}
	check_python("/usr/bin/python3.11", BT_PY_LINES_LOCATIONS);
}

static void pycode__pyenv_pythons__lines_match_their_own(void **state)
{
	static const unsigned fmts[] = { [8] = BT_PY_LINES_LNOTAB, [9] = BT_PY_LINES_LNOTAB,
					 [10] = BT_PY_LINES_310, [11] = BT_PY_LINES_LOCATIONS,
					 [12] = BT_PY_LINES_LOCATIONS, [13] = BT_PY_LINES_LOCATIONS };
	for (unsigned minor = 8; minor <= 13; minor++) {
		char prefix[512], py[600];
		if (!bt_test_pyenv(minor, prefix, sizeof(prefix))) {
			if (bt_test_in_ci())
				fail_msg("pyenv's CPython 3.%u is missing", minor);
			print_message("pyenv's CPython 3.%u is missing: not checked\n", minor);
			continue;
		}
		snprintf(py, sizeof(py), "%s/bin/python3.%u", prefix, minor);
		check_python(py, fmts[minor]);
	}
}

static void pycode__truncated_or_bad_table__no_line(void **state)
{
	/* kind 13 (no columns), 1 code unit, line +3 (svarint 6); then a byte without bit 7 */
	const uint8_t tab[] = { 0x80 | 13 << 3 | 0, 6, 0x05 };
	const unsigned loc = BT_PY_LINES_LOCATIONS;
	assert_int_equal(bt_pycode_line(loc, tab, 2, 10, 0), 13);
	assert_int_equal(bt_pycode_line(loc, tab, 2, 10, 2), 0);   /* past the table */
	assert_int_equal(bt_pycode_line(loc, tab, 3, 10, 2), 0);   /* malformed */
	/* kind 15: no location */
	const uint8_t none[] = { 0x80 | 15 << 3 | 1 };
	assert_int_equal(bt_pycode_line(loc, none, 1, 10, 2), 0);
	assert_int_equal(bt_pycode_line(loc, NULL, 0, 10, 0), 0);
	/* 3.10: 4 bytes at +1, 2 bytes of no line, 2 at -1; an odd byte at the end is no pair */
	const uint8_t t310[] = { 4, 1, 2, 0x80, 2, 0xff, 9 };
	const unsigned l310 = BT_PY_LINES_310;
	assert_int_equal(bt_pycode_line(l310, t310, sizeof(t310), 10, 2), 11);
	assert_int_equal(bt_pycode_line(l310, t310, sizeof(t310), 10, 4), 0);
	assert_int_equal(bt_pycode_line(l310, t310, sizeof(t310), 10, 6), 10);
	assert_int_equal(bt_pycode_line(l310, t310, sizeof(t310), 10, 8), 0);   /* past the table */
	/* 3.8-3.9: the line of the last pair at or before the offset, lines going back too */
	const uint8_t lno[] = { 0, 2, 6, 1, 4, 0xfd };
	const unsigned l38 = BT_PY_LINES_LNOTAB;
	assert_int_equal(bt_pycode_line(l38, lno, sizeof(lno), 10, 0), 12);
	assert_int_equal(bt_pycode_line(l38, lno, sizeof(lno), 10, 4), 12);
	assert_int_equal(bt_pycode_line(l38, lno, sizeof(lno), 10, 6), 13);
	assert_int_equal(bt_pycode_line(l38, lno, sizeof(lno), 10, 12), 10);
	assert_int_equal(bt_pycode_line(l38, lno, 1, 10, 12), 10);   /* half a pair: none */
}

/* A compact string object as 3.11 lays it out: its header, then its characters. */
static size_t make_str(uint8_t *buf, const struct bt_py_offsets *o, bool ascii, unsigned kind,
		       const void *chars, size_t n)
{
	memset(buf, 0, o->compact_data);
	uint64_t len = n;
	uint32_t st = (kind << o->state_kind) | (1u << o->state_compact) | (ascii ? 1u << o->state_ascii : 0);
	memcpy(buf + o->str_length, &len, 8);
	memcpy(buf + o->str_state, &st, 4);
	size_t off = ascii ? o->ascii_data : o->compact_data;
	memcpy(buf + off, chars, n * kind);
	return off;
}

static void pystr__each_kind__utf8(void **state)
{
	const struct bt_py_offsets *o = bt_pyoffsets_get(3, 11);
	uint8_t buf[512];
	uint64_t off;
	size_t n;
	unsigned kind;
	char out[64];

	size_t want = make_str(buf, o, true, 1, "is_prime", 8);
	assert_int_equal(bt_pystr_layout(buf, sizeof(buf), o, &off, &n, &kind), 0);
	assert_int_equal(off, want);
	assert_int_equal(n, 8);
	assert_int_equal(bt_pystr_utf8(buf + off, n, kind, out, sizeof(out)), 8);
	assert_string_equal(out, "is_prime");

	make_str(buf, o, false, 1, "caf\xe9", 4);   /* latin-1 */
	assert_int_equal(bt_pystr_layout(buf, sizeof(buf), o, &off, &n, &kind), 0);
	assert_int_equal(off, o->compact_data);
	bt_pystr_utf8(buf + off, n, kind, out, sizeof(out));
	assert_string_equal(out, "caf\xc3\xa9");

	const uint16_t ucs2[] = { 0x3b1, 0x3b2 };    /* alpha beta */
	make_str(buf, o, false, 2, ucs2, 2);
	assert_int_equal(bt_pystr_layout(buf, sizeof(buf), o, &off, &n, &kind), 0);
	bt_pystr_utf8(buf + off, n, kind, out, sizeof(out));
	assert_string_equal(out, "\xce\xb1\xce\xb2");

	const uint32_t ucs4[] = { 0x1f40d, 0xd800 };  /* a snake, a lone surrogate */
	make_str(buf, o, false, 4, ucs4, 2);
	assert_int_equal(bt_pystr_layout(buf, sizeof(buf), o, &off, &n, &kind), 0);
	bt_pystr_utf8(buf + off, n, kind, out, sizeof(out));
	assert_string_equal(out, "\xf0\x9f\x90\x8d\xef\xbf\xbd");

	/* cut at a whole character */
	make_str(buf, o, false, 2, ucs2, 2);
	assert_int_equal(bt_pystr_utf8(buf + o->compact_data, 2, 2, out, 4), 2);
	assert_string_equal(out, "\xce\xb1");
}

static void pystr__not_a_sane_string__refused(void **state)
{
	const struct bt_py_offsets *o = bt_pyoffsets_get(3, 11);
	uint8_t buf[512];
	uint64_t off;
	size_t n;
	unsigned kind;
	make_str(buf, o, true, 1, "x", 1);
	assert_int_equal(bt_pystr_layout(buf, o->compact_data - 1, o, &off, &n, &kind), -EINVAL);
	uint64_t huge = 1 << 20;
	memcpy(buf + o->str_length, &huge, 8);
	assert_int_equal(bt_pystr_layout(buf, sizeof(buf), o, &off, &n, &kind), -EINVAL);
	make_str(buf, o, false, 3, "xyz", 1);           /* no such kind */
	assert_int_equal(bt_pystr_layout(buf, sizeof(buf), o, &off, &n, &kind), -EINVAL);
	make_str(buf, o, true, 1, "x", 1);
	uint32_t st = 1u << o->state_kind;              /* not compact */
	memcpy(buf + o->str_state, &st, 4);
	assert_int_equal(bt_pystr_layout(buf, sizeof(buf), o, &off, &n, &kind), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pycode__debian_python311__lines_match_co_lines),
		cmocka_unit_test(pycode__pyenv_pythons__lines_match_their_own),
		cmocka_unit_test(pycode__truncated_or_bad_table__no_line),
		cmocka_unit_test(pystr__each_kind__utf8),
		cmocka_unit_test(pystr__not_a_sane_string__refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
