/* test_regex.c - relabeling regexes against Go's regexp package (RE2, what Prometheus runs them
 * with; tests/tools/re2oracle.go): for each pattern, text and template, whether it compiles, whether
 * the whole text matches, every group's span and the expanded template agree; the RE2 forms POSIX
 * cannot express are refused with a message, never run with another meaning. */
#include "testutil.h"
#include "base/regex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum want {
	AGREE,    /* compiled, matched, grouped and expanded as Go does */
	REFUSED,  /* Go runs it; buildtrace refuses it with a message */
	WHOLE,    /* the same match or not; submatches may differ (POSIX: leftmost-longest) */
};

static const struct tcase {
	const char *pat, *text, *tmpl;
	enum want want;
} cases[] = {
	/* anchoring: the whole text or nothing */
	{ "foo", "foo", "$0", AGREE }, { "foo", "xfoo", "", AGREE }, { "foo", "foox", "", AGREE },
	{ "f|o", "foo", "", AGREE }, { "", "", "x", AGREE }, { "", "a", "", AGREE },
	{ "(.*)", "", "[$1]", AGREE }, { "(.*)", "anything at all", "$1", AGREE },
	{ "a|ab", "ab", "", AGREE }, { "(a|ab)(c|bcd)", "abcd", "$1/$2", WHOLE },
	{ "(a|ab)(b*)", "ab", "$1/$2", WHOLE },  /* RE2 gives a/b, POSIX ab/ */
	/* groups and templates, as Go's Expand reads them */
	{ "f(.*)", "foo", "ch${1}-ch${1}", AGREE }, { "f(.*);(.*)r", "foo;bar", "b${1}${2}m", AGREE },
	{ "(b).*b(.*)ba(.*)", "baz;boobam", "$1$2$2$3", AGREE },
	{ "(a)(b)", "ab", "$1x $10 ${1}x $$1 $ ${ ${} $-", AGREE },
	{ "(a)(b)", "ab", "$01 ${2} $3 ${3} $name", AGREE },
	{ "(?P<svc>[a-z]+)-(?P<n>[0-9]+)", "web-12", "$svc:$n ${svc}_${n} $2", AGREE },
	{ "(?:x|y)(z)", "yz", "$1", AGREE }, { "(?:(a)|b)c", "bc", "[$1]", AGREE },
	{ "some-([^-]+)-([^,]+)", "some-name-value", "${2}@${1}", AGREE },
	{ "(?:.+,|^)path:(/[^,]+).*", "path:/secret,job:some-job", "${1}", AGREE },
	{ "(?:.+,|^)label:([^=]+)=([^,]+).*", "path:/x,label:foo=bar", "$1=$2", AGREE },
	{ ".*/(svc-[a-z]+)", "/bt.slice/svc-alpha", "$1", AGREE },
	{ ".*/(svc-[a-z]+)", "/bt.slice/svc-alpha/x", "$1", AGREE },
	{ "(.+)\\.service", "cron.service", "$1", AGREE }, { "(.+)\\.service", "cronxservice", "$1", AGREE },
	/* '.' is not a newline; brackets are */
	{ ".*", "foo\nbar", "", AGREE }, { "[^a]*", "foo\nbar", "", AGREE }, { "(?s:.*)", "a\nb", "", REFUSED },
	{ "a.c", "a\nc", "", AGREE }, { "a\\nc", "a\nc", "", AGREE },
	/* Perl classes and escapes, outside and inside brackets */
	{ "\\d+", "2024", "", AGREE }, { "\\d+", "20a4", "", AGREE }, { "\\D+", "abc", "", AGREE },
	{ "\\w+", "a_Z9", "", AGREE }, { "\\w+", "a-b", "", AGREE }, { "\\W", "-", "", AGREE },
	{ "\\s\\S", " x", "", AGREE }, { "\\s", "\x0b", "", AGREE }, { "[\\d\\s]+", "1 2\t3", "", AGREE },
	{ "[\\w.-]+", "a.b-c_d", "", AGREE }, { "[\\w.-]+", "a/b", "", AGREE },
	{ "\\.", ".", "", AGREE }, { "\\.", "x", "", AGREE }, { "[\\.]", "\\", "", AGREE },
	{ "[\\]]", "]", "", AGREE }, { "[]a]+", "a]a", "", AGREE }, { "[^]a]", "b", "", AGREE },
	{ "[\\^a]+", "^a", "", AGREE }, { "[\\^]", "^", "", AGREE }, { "[^^]", "^", "", AGREE },
	{ "[a\\-z]+", "a-z", "", AGREE }, { "[a\\-z]", "m", "", AGREE }, { "[-a]+", "-a", "", AGREE },
	{ "[a-]+", "-a", "", AGREE }, { "[\\^\\-]+", "-^", "", AGREE }, { "[\\[a]+", "[a", "", AGREE },
	{ "[\\[:]+", "[:", "", AGREE }, { "[\\\\]", "\\", "", AGREE }, { "[[:digit:]x]+", "1x2", "", AGREE },
	{ "[[:alpha:]]+", "abC", "", AGREE }, { "[a-c\\x41-\\x43]+", "aBCb", "", AGREE },
	{ "\\x41\\x{42}", "AB", "", AGREE }, { "[^\\x00-\\x1f]+", "ok text", "", AGREE },
	{ "[^\\x00-\\x1f]+", "bad\ttext", "", AGREE }, { "a\\tb", "a\tb", "", AGREE },
	{ "\\(x\\)\\*\\+\\?\\{\\}\\|\\^\\$", "(x)*+?{}|^$", "", AGREE },
	{ "a/b:c@d", "a/b:c@d", "", AGREE }, { "\\/\\-", "/-", "", AGREE },
	/* repetition, braces that are not one */
	{ "a{2}", "aa", "", AGREE }, { "a{2,}", "aaaa", "", AGREE }, { "a{1,2}", "aaa", "", AGREE },
	{ "a{,2}", "a{,2}", "", AGREE }, { "a{x}", "a{x}", "", AGREE }, { "x}", "x}", "", AGREE },
	{ "ab?c+d*", "acccd", "", AGREE },
	/* case: a leading (?i) only */
	{ "(?i)web", "WeB", "", AGREE }, { "(?i)(web)-(\\d)", "WEB-1", "$1", AGREE },
	/* anchors inside */
	{ "^foo$", "foo", "", AGREE }, { "\\Afoo\\z", "foo", "", AGREE },
	/* what POSIX cannot do: refused, with a message */
	{ "a*?", "aaa", "", REFUSED }, { "a+?b", "ab", "", REFUSED }, { "a??", "", "", REFUSED },
	{ "a{1,2}?", "a", "", REFUSED }, { "x(?i)y", "xY", "", REFUSED }, { "(?m)^a$", "a", "", REFUSED },
	{ "\\pL+", "abc", "", REFUSED }, { "\\p{Greek}", "x", "", REFUSED }, { "\\QA.B\\E", "A.B", "", REFUSED },
	{ "[\\D]", "a", "", REFUSED }, { "\\x00", "", "", REFUSED },
};

static void hexs(FILE *f, const char *s)
{
	for (; *s; s++)
		fprintf(f, "%02x", (unsigned char)*s);
}

static char *unhex(const char *h, size_t n)
{
	char *o = calloc(n / 2 + 1, 1);
	for (size_t i = 0; i + 1 < n; i += 2) {
		unsigned v;
		sscanf(h + i, "%2x", &v);
		o[i / 2] = (char)v;
	}
	return o;
}

/* One case against Go's line for it. */
static void check(size_t i, const struct tcase *c, char *line)
{
	struct bt_regex re;
	char err[256] = "";
	int e = bt_regex_compile(&re, c->pat, err, sizeof(err));
	if (line[0] == 'E') {
		if (!e)
			fail_msg("case %zu /%s/: Go refuses it, buildtrace compiled it", i, c->pat);
		return;
	}
	if (c->want == REFUSED) {
		if (!e)
			fail_msg("case %zu /%s/: compiled, but POSIX cannot run it as RE2 does", i, c->pat);
		if (!err[0])
			fail_msg("case %zu /%s/: refused without a message", i, c->pat);
		print_message("refused /%s/: %s\n", c->pat, err);
		return;
	}
	if (e)
		fail_msg("case %zu /%s/: %s", i, c->pat, err);
	struct bt_regex_match m;
	bool ok = bt_regex_match(&re, c->text, &m);
	if (ok != (line[0] == 'M'))
		fail_msg("case %zu /%s/ on '%s': buildtrace %s, Go %s", i, c->pat, c->text, ok ? "matches" : "does not",
			 ok ? "does not" : "does");
	if (ok && c->want == AGREE) {
		char *p = line + 1;
		for (unsigned g = 0; g <= re.ngroups; g++) {
			long s = strtol(p, &p, 10), en = strtol(p, &p, 10);
			if (s != m.start[g] || en != m.end[g])
				fail_msg("case %zu /%s/ on '%s': group %u at %d..%d, Go %ld..%ld", i, c->pat, c->text, g,
					 m.start[g], m.end[g], s, en);
		}
		char *h = strrchr(line, ' ') + 1;
		char *want = unhex(h, strlen(h)), *got = bt_regex_expand(&re, c->tmpl, c->text, &m);
		assert_non_null(got);
		if (strcmp(got, want))
			fail_msg("case %zu /%s/: '%s' expands to '%s', Go '%s'", i, c->pat, c->tmpl, got, want);
		free(want);
		free(got);
	}
	bt_regex_free(&re);
}

static void regex__cases__as_go_regexp(void **state)
{
	const char *in = "build/tests/regex-cases.txt", *out = "build/tests/regex-go.txt";
	FILE *f = fopen(in, "w");
	assert_non_null(f);
	size_t n = sizeof(cases) / sizeof(cases[0]);
	for (size_t i = 0; i < n; i++) {
		hexs(f, cases[i].pat);
		fputc('\t', f);
		hexs(f, cases[i].text);
		fputc('\t', f);
		hexs(f, cases[i].tmpl);
		fputc('\n', f);
	}
	fclose(f);
	char msg[4096];
	int rc = bt_test_run(msg, sizeof(msg), "go run tests/tools/re2oracle.go < %s > %s 2>&1; echo $?", in, out);
	assert_int_equal(rc, 0);
	if (atoi(msg) != 0)
		fail_msg("go run failed: %s", msg);
	size_t len;
	char *text = bt_test_read_file(out, &len);
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	for (size_t i = 0; i < n; i++, line = strtok_r(NULL, "\n", &save)) {
		assert_non_null(line);
		check(i, &cases[i], line);
	}
	free(text);
}

/* Refusals name what is not supported; the C library's own complaints come through. */
static void regex__bad_patterns__messages(void **state)
{
	static const struct { const char *pat, *says; } bad[] = {
		{ "a*?", "lazy" }, { "(?s)a", "flags" }, { "\\1", "back-reference" }, { "\\pL", "\\p" },
		{ "[a", "']'" }, { "(a", "" }, { "a\\", "trailing backslash" }, { "(?P<>a)", "group name" },
		{ "\\xZZ", "\\x" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bt_regex re;
		char err[256] = "";
		assert_int_equal(bt_regex_compile(&re, bad[i].pat, err, sizeof(err)), -EINVAL);
		if (!err[0] || !strstr(err, bad[i].says))
			fail_msg("/%s/: '%s' lacks '%s'", bad[i].pat, err, bad[i].says);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(regex__cases__as_go_regexp),
		cmocka_unit_test(regex__bad_patterns__messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
