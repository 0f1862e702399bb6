/* test_md5.c - bt_md5 against RFC 1321's test suite and Python's hashlib over lengths around the
 * block and padding boundaries. */
#include "testutil.h"
#include "base/md5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const uint8_t d[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void md5__rfc1321_suite__digests(void **state)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ "a", "0cc175b9c0f1b6a831c399e269772661" },
		{ "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
		{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		  "d174ab98d277d9f5a5611c2c9f419d9f" },
		{ "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		  "57edf4a22be3c955ac49da2e2107b67a" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t d[16];
		char h[33];
		bt_md5(cases[i].in, strlen(cases[i].in), d);
		hex(d, h);
		assert_string_equal(h, cases[i].want);
	}
}

/* Lengths 0..200 of a byte pattern, compared with hashlib: every tail length and both padding
 * forms (one block or two). */
static void md5__every_length_to_200__agrees_with_python(void **state)
{
	char *out = malloc(1 << 16);
	assert_non_null(out);
	assert_int_equal(bt_test_run(out, 1 << 16, "/usr/bin/python3 -c '\n"
				     "import hashlib\n"
				     "for n in range(201):\n"
				     "    print(hashlib.md5(bytes((i * 7 + 3) & 255 for i in range(n))).hexdigest())\n'"), 0);
	uint8_t buf[200];
	for (int i = 0; i < 200; i++)
		buf[i] = (uint8_t)((i * 7 + 3) & 255);
	const char *line = out;
	for (int n = 0; n <= 200; n++) {
		uint8_t d[16];
		char h[33];
		bt_md5(buf, (size_t)n, d);
		hex(d, h);
		if (strncmp(line, h, 32) != 0)
			fail_msg("length %d: %s, python %.32s", n, h, line);
		line = strchr(line, '\n');
		assert_non_null(line);
		line++;
	}
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(md5__rfc1321_suite__digests),
		cmocka_unit_test(md5__every_length_to_200__agrees_with_python),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
