/* test_utf8.c - bt_utf8_len against Python's strict UTF-8 decoder, over every sequence of one to
 * three bytes that could be one character. */
#include "testutil.h"
#include "base/utf8.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void utf8__known_sequences__lengths(void **state)
{
	static const struct { const char *s; size_t n, want; } cases[] = {
		{ "a", 1, 1 }, { "\x7f", 1, 1 }, { "\xc3\xa9", 2, 2 }, { "\xe6\x97\xa5", 3, 3 },
		{ "\xf0\x9f\x98\x80", 4, 4 }, { "\xf4\x8f\xbf\xbf", 4, 4 },  /* U+10FFFF */
		{ "\xc3", 1, 0 },                    /* truncated */
		{ "\xe6\x97", 2, 0 }, { "\xf0\x9f\x98", 3, 0 },
		{ "\xc3\xa9", 1, 0 },                /* n cuts it */
		{ "\x80", 1, 0 }, { "\xbf", 1, 0 },  /* stray continuation */
		{ "\xc0\xaf", 2, 0 }, { "\xe0\x80\xaf", 3, 0 }, { "\xf0\x80\x80\xaf", 4, 0 },  /* overlong */
		{ "\xed\xa0\x80", 3, 0 }, { "\xed\xbf\xbf", 3, 0 },  /* surrogates */
		{ "\xf4\x90\x80\x80", 4, 0 },        /* past U+10FFFF */
		{ "\xf8\x88\x80\x80\x80", 5, 0 }, { "\xff", 1, 0 }, { "\xfe", 1, 0 },
		{ "\xc3(", 2, 0 },
		{ "", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (bt_utf8_len(cases[i].s, cases[i].n) != cases[i].want)
			fprintf(stderr, "case %zu\n", i);
		assert_int_equal(bt_utf8_len(cases[i].s, cases[i].n), cases[i].want);
	}
}

/* Every 1- and 2-byte string, and every 3-byte one led by 0xe0-0xef (no other lead byte starts a
 * 3-byte character): valid exactly when Python decodes it as one character. */
static void utf8__every_short_sequence__agrees_with_python(void **state)
{
	const char *path = "build/tests/utf8-valid.txt";
	assert_int_equal(bt_test_run(NULL, 0, "/usr/bin/python3 -c '\n"
				     "import sys\n"
				     "out = open(\"%s\", \"w\")\n"
				     "for n, lo, hi in ((1, 0, 256), (2, 0, 65536), (3, 0xe00000, 0xf00000)):\n"
				     "    for v in range(lo, hi):\n"
				     "        b = v.to_bytes(n, \"big\")\n"
				     "        try:\n"
				     "            if len(b.decode(\"utf-8\")) == 1: out.write(b.hex() + \"\\n\")\n"
				     "        except UnicodeDecodeError: pass\n'", path), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	/* the valid ones, as a set of (length, value) */
	unsigned char *valid = calloc(1 << 24, 1);
	assert_non_null(valid);
	char line[16];
	size_t nvalid = 0;
	while (fgets(line, sizeof(line), f)) {
		size_t n = (strlen(line) - 1) / 2;
		unsigned long v = strtoul(line, NULL, 16);
		valid[v] |= (unsigned char)(1u << n);
		nvalid++;
	}
	fclose(f);
	assert_true(nvalid > 60000);
	size_t agreed = 0;
	static const struct { size_t n; unsigned long lo, hi; } ranges[] = {
		{ 1, 0, 256 }, { 2, 0, 65536 }, { 3, 0xe00000, 0xf00000 },
	};
	for (size_t r = 0; r < 3; r++)
		for (unsigned long v = ranges[r].lo; v < ranges[r].hi; v++) {
			size_t n = ranges[r].n;
			unsigned char b[3];
			for (size_t k = 0; k < n; k++)
				b[k] = (unsigned char)(v >> (8 * (n - 1 - k)));
			bool want = valid[v] & (1u << n);
			bool got = bt_utf8_len(b, n) == n;
			if (want != got)
				fprintf(stderr, "%zu bytes %06lx: python %d, bt_utf8_len %d\n", n, v, want, got);
			assert_int_equal(want, got);
			agreed++;
		}
	assert_int_equal(agreed, 256 + 65536 + (1 << 20));
	free(valid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8__known_sequences__lengths),
		cmocka_unit_test(utf8__every_short_sequence__agrees_with_python),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
