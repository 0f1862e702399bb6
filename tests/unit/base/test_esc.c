/* test_esc.c - escaping hostile text, against Python: random byte strings (controls, C1, stray and
 * truncated UTF-8, valid multibyte characters) escaped hold no character of Unicode category Cc and
 * are valid UTF-8, and Python's escape decoder, as bt_unesc, gives the original bytes back. */
#include "testutil.h"
#include "base/esc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void esc__known_strings__escaped_or_kept(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain_name", "plain_name" },
		{ "JS:*fib /srv/app.js:1:13", "JS:*fib /srv/app.js:1:13" },
		{ "\x1b]0;owned\x07", "\\x1b]0;owned\\x07" },
		{ "a\nb\r\tc", "a\\x0ab\\x0d\\x09c" },
		{ "del\x7f", "del\\x7f" },
		{ "csi\xc2\x9b" "2J", "csi\\xc2\\x9b2J" },       /* U+009B, the C1 CSI */
		{ "nbsp\xc2\xa0ok", "nbsp\xc2\xa0ok" },           /* U+00A0 is not a control */
		{ "caf\xc3\xa9 \xe6\x97\xa5", "caf\xc3\xa9 \xe6\x97\xa5" },
		{ "bad\x9b" "2J", "bad\\x9b2J" },                 /* a lone C1 byte, not UTF-8 */
		{ "cut\xe6\x97", "cut\\xe6\\x97" },
		{ "back\\slash", "back\\\\slash" },
		{ "\\x1b", "\\\\x1b" },                             /* a literal \x1b stays one */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256];
		assert_string_equal(bt_esc_str(buf, sizeof(buf), cases[i].in), cases[i].out);
		assert_int_equal(bt_esc_len(cases[i].in, strlen(cases[i].in)), strlen(cases[i].out));
		assert_int_equal(bt_esc_needed(cases[i].in, strlen(cases[i].in)), strcmp(cases[i].in, cases[i].out) != 0);
		char *d = bt_esc_dup(cases[i].in);
		assert_non_null(d);
		assert_string_equal(d, cases[i].out);
		free(d);
		char *mem = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&mem, &len);
		bt_esc_write(f, cases[i].in, strlen(cases[i].in));
		fclose(f);
		assert_string_equal(mem, cases[i].out);
		free(mem);
		char back[256];
		snprintf(back, sizeof(back), "%s", cases[i].out);
		assert_int_equal(bt_unesc(back), strlen(cases[i].in));
		assert_string_equal(back, cases[i].in);
	}
	/* what the escaping never writes is left alone */
	char odd[] = "\\n \\x0 \\x00 \\xzz \\";
	assert_int_equal(bt_unesc(odd), strlen("\\n \\x0 \\x00 \\xzz \\"));
	/* a short buffer cuts between characters and escapes, never inside one */
	char small[8];
	assert_string_equal(bt_esc_str(small, sizeof(small), "ab\x1b" "cd"), "ab\\x1bc");
	assert_string_equal(bt_esc_str(small, 7, "ab\x1b" "cd"), "ab\\x1b");
	assert_string_equal(bt_esc_str(small, 6, "ab\x1b" "cd"), "ab");
	assert_string_equal(bt_esc_str(small, 4, "\xc3\xa9\xc3\xa9"), "\xc3\xa9");
}

static void esc__random_bytes__python_decodes_them_back(void **state)
{
	char path[] = "/tmp/bt-esc-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	srand(34);
	static const unsigned char pool[] = { 0x00, 0x01, 0x07, 0x0a, 0x0d, 0x1b, 0x1f, 0x20, 'a', ';', 0x7e,
					      0x7f, 0x80, 0x9b, 0x9f, 0xa0, 0xbf, 0xc2, 0xc3, 0xe6, 0x97, 0xf0,
					      0x9f, 0x98, 0x80, 0xed, 0xa0, 0xf4, 0x90, 0xff };
	for (int n = 0; n < 3000; n++) {
		char s[33];
		size_t len = (size_t)(rand() % 32);
		for (size_t i = 0; i < len; i++)
			s[i] = (char)(rand() % 4 ? pool[rand() % sizeof(pool)] : 0x20 + rand() % 0x5f);
		s[len] = '\0';
		for (size_t i = 0; i < len; i++)  /* NUL ends the C string, '\' would be read as an escape */
			if (!s[i] || s[i] == '\\')
				s[i] = 'z';
		char out[33 * 4 + 1], back[33 * 4 + 1];
		bt_esc_str(out, sizeof(out), s);
		memcpy(back, out, sizeof(out));
		assert_int_equal(bt_unesc(back), len);
		assert_memory_equal(back, s, len);
		for (size_t i = 0; i < len; i++)
			fprintf(f, "%02x", (unsigned char)s[i]);
		fputc(' ', f);
		for (size_t i = 0; out[i]; i++)
			fprintf(f, "%02x", (unsigned char)out[i]);
		fputc('\n', f);
	}
	fclose(f);
	char res[4096];
	int rc = bt_test_run(res, sizeof(res), "/usr/bin/python3 -c '\n"
			     "import codecs, sys, unicodedata\n"
			     "bad = 0\n"
			     "for line in open(sys.argv[1]):\n"
			     "    a, _, b = line.rstrip(\"\\n\").partition(\" \")\n"
			     "    orig, esc = bytes.fromhex(a), bytes.fromhex(b)\n"
			     "    text = esc.decode(\"utf-8\")\n"
			     "    if any(unicodedata.category(c) == \"Cc\" for c in text): bad += 1; print(\"control\", b)\n"
			     "    if codecs.escape_decode(esc)[0] != orig: bad += 1; print(\"differs\", a, b)\n"
			     "print(bad)\n' %s 2>&1", path);
	unlink(path);
	print_message("%s", res);
	assert_int_equal(rc, 0);
	assert_string_equal(res, "0\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(esc__known_strings__escaped_or_kept),
		cmocka_unit_test(esc__random_bytes__python_decodes_them_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
