/* test_flamegraph.c - the SVG is well-formed XML and its boxes are exactly the stack prefixes, each as
 * wide as the samples under it. */
#include "testutil.h"
#include "output/flamegraph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *input =
	"app;main;a;x 5\n"
	"app;main;a 2\n"
	"app;main;b;x 3\n"
	"app;main;a;y 1\n"
	"app;main;b_[k] 4\n"
	"other;main 1\n"
	"app;main;a&<b>\"q\" 1\n";

static char *render(struct bt_folded *f)
{
	FILE *in = fmemopen((void *)input, strlen(input), "r");
	assert_int_equal(bt_folded_parse(in, f, NULL), 0);
	fclose(in);
	char *svg = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&svg, &len);
	assert_int_equal(bt_flamegraph_write(f, NULL, out), 0);
	fclose(out);
	return svg;
}

/* Samples under a prefix of `depth` frames, by brute force over the lines. */
static unsigned long long under(const struct bt_folded *f, const char *prefix)
{
	unsigned long long n = 0;
	size_t pl = strlen(prefix);
	for (size_t i = 0; i < f->n; i++)
		if (!strncmp(f->v[i].text, prefix, pl) && (f->v[i].text[pl] == ';' || !f->v[i].text[pl]))
			n += f->v[i].count;
	return n;
}

static void flamegraph__boxes__match_prefix_sums(void **state)
{
	struct bt_folded f;
	char *svg = render(&f);
	assert_int_equal(f.total, 17);
	/* distinct prefixes: app, app;main, app;main;a, a;x, a;y, a&.., b, b;x, b_[k], other, other;main */
	size_t boxes = 0;
	for (const char *p = svg; (p = strstr(p, "<g class=\"f\" data-s=\"")); p++) {
		unsigned long long s, n;
		unsigned d;
		assert_int_equal(sscanf(p, "<g class=\"f\" data-s=\"%llu\" data-n=\"%llu\" data-d=\"%u\"", &s, &n, &d), 3);
		assert_true(s + n <= f.total);
		boxes++;
	}
	assert_int_equal(boxes, 12);  /* 11 prefixes + the root */
	/* spot-check widths against the brute-force sums */
	static const struct { const char *name; const char *prefix; } checks[] = {
		{ "data-d=\"2\" data-name=\"main\"", "app;main" },
		{ "data-d=\"3\" data-name=\"a\"", "app;main;a" },
		{ "data-d=\"3\" data-name=\"b\"", "app;main;b" },
	};
	for (size_t i = 0; i < 3; i++) {
		const char *p = strstr(svg, checks[i].name);
		assert_non_null(p);
		while (p > svg && strncmp(p, "<g ", 3))
			p--;
		unsigned long long s, n;
		assert_int_equal(sscanf(p, "<g class=\"f\" data-s=\"%llu\" data-n=\"%llu\"", &s, &n), 2);
		assert_int_equal(n, under(&f, checks[i].prefix));
	}
	free(svg);
	bt_folded_free(&f);
}

static void flamegraph__output__well_formed_xml_with_escapes(void **state)
{
	struct bt_folded f;
	char *svg = render(&f);
	assert_non_null(strstr(svg, "a&amp;&lt;b&gt;&quot;q&quot;"));
	assert_null(strstr(svg, "a&<b>"));
	FILE *o = fopen("build/tests/flame-test.svg", "w");
	assert_non_null(o);
	fputs(svg, o);
	fclose(o);
	char out[512];
	int rc = bt_test_run(out, sizeof(out), "/usr/bin/python3 -c 'import xml.etree.ElementTree as E; "
			     "r=E.parse(\"build/tests/flame-test.svg\").getroot(); print(r.tag)' 2>&1");
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "svg"));
	free(svg);
	bt_folded_free(&f);
}

/* Names are bytes a program chose: invalid UTF-8 and characters XML forbids come out as U+FFFD (or
 * '?' for control characters), and labels shortened to fit their box end at a character boundary,
 * whatever the characters' lengths. An XML parser must read the result (svgnames.py checks each
 * label against its name). */
static void flamegraph__bad_utf8_and_long_multibyte_names__parse_as_xml(void **state)
{
	char mixed[1024] = "";
	for (int i = 0; i < 60; i++)
		strcat(mixed, "a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80");  /* a, e-acute, a CJK one, an emoji */
	char input[8192];
	int n = snprintf(input, sizeof(input),
			 "app;bad\xff\xfe" "end 1\n"
			 "app;cut\xc3 1\n"
			 "app;sur\xed\xa0\x80 1\n"
			 "app;nc\xef\xbf\xbe 1\n"
			 "app;over\xc0\xaf 1\n"
			 "app;ctl\x01x 1\n");
	/* boxes from about 5 to 60 characters wide: cut after each kind of character */
	static const unsigned counts[] = { 37, 41, 53, 58, 71, 97, 131, 200, 373 };
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		n += snprintf(input + n, sizeof(input) - n, "app;p%zu;%s %u\n", i, mixed, counts[i]);
	assert_true((size_t)n < sizeof(input));
	FILE *in = fmemopen(input, (size_t)n, "r");
	struct bt_folded f;
	assert_int_equal(bt_folded_parse(in, &f, NULL), 0);
	fclose(in);
	FILE *o = fopen("build/tests/flame-utf8.svg", "w");
	assert_non_null(o);
	assert_int_equal(bt_flamegraph_write(&f, NULL, o), 0);
	fclose(o);
	bt_folded_free(&f);
	static char out[65536];
	int rc = bt_test_run(out, sizeof(out), "/usr/bin/python3 tests/tools/svgnames.py "
			     "build/tests/flame-utf8.svg 2>&1");
	if (rc)
		fprintf(stderr, "%s\n", out);
	assert_int_equal(rc, 0);
	static const char *want[] = {
		"\nbad\\ufffd\\ufffdend\n", "\ncut\\ufffd\n", "\nsur\\ufffd\\ufffd\\ufffd\n",
		"\nnc\\ufffd\n", "\nover\\ufffd\\ufffd\n", "\nctl?x\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(out, want[i]))
			fprintf(stderr, "missing %s in:\n%s\n", want[i], out);
		assert_non_null(strstr(out, want[i]));
	}
	char one[64];
	snprintf(one, sizeof(one), "a\\xe9\\u65e5\\U0001f600");
	char all[64 * 60 + 2] = "\n";
	for (int i = 0; i < 60; i++)
		strcat(all, one);
	assert_non_null(strstr(out, all));
	/* every mixed name is too long for its box: each was cut */
	const char *cut = strstr(out, "cut ");
	assert_non_null(cut);
	assert_true(atoi(cut + 4) >= (int)(sizeof(counts) / sizeof(counts[0])));
}

static void flamegraph__kernel_frames__coloured_apart(void **state)
{
	struct bt_folded f;
	char *svg = render(&f);
	const char *k = strstr(svg, "data-name=\"b_[k]\"");
	const char *u = strstr(svg, "data-name=\"b\"");
	assert_non_null(k);
	assert_non_null(u);
	unsigned kr, kg, kb, ur, ug, ub;
	assert_int_equal(sscanf(strstr(k, "fill=\""), "fill=\"rgb(%u,%u,%u)", &kr, &kg, &kb), 3);
	assert_int_equal(sscanf(strstr(u, "fill=\""), "fill=\"rgb(%u,%u,%u)", &ur, &ug, &ub), 3);
	/* kernel: orange-brown (green well above blue); user: red-yellow */
	assert_true(kr >= 200 && kg >= 120);
	assert_true(ur >= 225);
	free(svg);
	bt_folded_free(&f);
}

static void folded__parse__rejects_malformed_lines(void **state)
{
	static const char *bad[] = { "a;b\n", "a;b x\n", "a;b 12x\n", " 5\n" };
	for (size_t i = 0; i < 4; i++) {
		FILE *in = fmemopen((void *)bad[i], strlen(bad[i]), "r");
		struct bt_folded f;
		size_t line = 0;
		assert_int_equal(bt_folded_parse(in, &f, &line), -EINVAL);
		assert_int_equal(line, 1);
		fclose(in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flamegraph__boxes__match_prefix_sums),
		cmocka_unit_test(flamegraph__output__well_formed_xml_with_escapes),
		cmocka_unit_test(flamegraph__bad_utf8_and_long_multibyte_names__parse_as_xml),
		cmocka_unit_test(flamegraph__kernel_frames__coloured_apart),
		cmocka_unit_test(folded__parse__rejects_malformed_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
