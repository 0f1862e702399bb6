/* test_demangle.c - demangled names against c++filt: every C++ export of libstdc++ and the fixture
 * program, clone suffixes, invalid and truncated names, and Rust legacy names. */
#include "testutil.h"
#include "base/demangle.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* c++filt expands the standard abbreviations (std::string ...) and spaces closing brackets; the
 * demangler buildtrace uses does neither. Both sides go through the same rewriting. */
#define NORMALIZE "sed -e 's/std::basic_string<char, std::char_traits<char>, std::allocator<char> >/std::string/g' " \
		  "-e 's/std::basic_\\(i\\|o\\|io\\)stream<char, std::char_traits<char> >/std::\\1stream/g' -e 's/ >/>/g'"

struct names {
	char **v;
	size_t n, cap;
};

static void names_add(struct names *ns, const char *s)
{
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? ns->cap * 2 : 256;
		ns->v = realloc(ns->v, ns->cap * sizeof(*ns->v));
		assert_non_null(ns->v);
	}
	ns->v[ns->n] = strdup(s);
	assert_non_null(ns->v[ns->n]);
	ns->n++;
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	memset(ns, 0, sizeof(*ns));
}

/* Lines of a command's output. */
static void read_lines(struct names *out, const char *cmd)
{
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t cap = 0;
	char *line = NULL;
	ssize_t n;
	while ((n = getline(&line, &cap, p)) >= 0) {
		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		names_add(out, line);
	}
	free(line);
	assert_int_equal(pclose(p), 0);
}

static void write_lines(const char *path, char *const *v, size_t n)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", v[i]);
	assert_int_equal(fclose(f), 0);
}

/* Compares bt_demangle on every name with c++filt, after rewrite (a sed script applied to both).
 * A name bt_demangle leaves alone must be one c++filt leaves alone too. Returns how many demangled. */
static size_t compare_with_cxxfilt(const struct names *in, const char *rewrite)
{
	char dir[] = "/tmp/bt-dm-XXXXXX", names_p[64], ours_p[64], cmd[1024];
	assert_non_null(mkdtemp(dir));
	snprintf(names_p, sizeof(names_p), "%s/names", dir);
	snprintf(ours_p, sizeof(ours_p), "%s/ours", dir);
	write_lines(names_p, in->v, in->n);
	struct names ours = { 0 };
	size_t demangled = 0;
	for (size_t i = 0; i < in->n; i++) {
		char *d = bt_demangle(in->v[i]);
		names_add(&ours, d ? d : in->v[i]);
		demangled += d != NULL;
		free(d);
	}
	write_lines(ours_p, ours.v, ours.n);
	struct names want = { 0 }, got = { 0 };
	snprintf(cmd, sizeof(cmd), "c++filt < %s | %s", names_p, rewrite);
	read_lines(&want, cmd);
	snprintf(cmd, sizeof(cmd), "%s < %s", rewrite, ours_p);
	read_lines(&got, cmd);
	assert_int_equal(want.n, in->n);
	assert_int_equal(got.n, in->n);
	for (size_t i = 0; i < in->n; i++)
		if (strcmp(want.v[i], got.v[i]) != 0)
			fail_msg("%s:\n  c++filt: %s\n  ours:    %s", in->v[i], want.v[i], got.v[i]);
	names_free(&want);
	names_free(&got);
	names_free(&ours);
	unlink(names_p);
	unlink(ours_p);
	rmdir(dir);
	return demangled;
}

static void demangle__libstdcxx_exports__match_cxxfilt(void **state)
{
	struct names ns = { 0 };
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "lib=$(/sbin/ldconfig -p | sed -n 's,^.*libstdc++\\.so\\.6 .*=> ,,p' | head -n1); "
		 "nm -D --defined-only --without-symbol-versions \"$lib\" | awk '$3 ~ /^_Z/ {print $3}' | sort -u");
	read_lines(&ns, cmd);
	assert_true(ns.n > 1000);
	assert_int_equal(compare_with_cxxfilt(&ns, NORMALIZE), ns.n);
	names_free(&ns);
}

static void demangle__fixture_program__matches_cxxfilt(void **state)
{
	struct names ns = { 0 };
	char p[512], cmd[1024];
	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 ~ /^_Z/ {print $3}' | sort -u",
		 bt_test_fixture(p, sizeof(p), "fx-cxx"));
	read_lines(&ns, cmd);
	assert_true(ns.n >= 8);
	assert_int_equal(compare_with_cxxfilt(&ns, NORMALIZE), ns.n);
	/* and one we know the shape of */
	char *d = bt_demangle("_ZN2fx8overloadEPKcm");
	assert_non_null(d);
	assert_string_equal(d, "fx::overload(char const*, unsigned long)");
	free(d);
	names_free(&ns);
}

static void demangle__clone_suffixes__match_cxxfilt(void **state)
{
	static const char *const v[] = {
		"_Z3fooi.cold", "_Z3fooi.isra.0", "_Z3fooi.constprop.0.cold", "_Z3fooi.part.0",
		"_ZN2fx5twiceIiEET_S1_.lto_priv.0",
	};
	struct names ns = { 0 };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		names_add(&ns, v[i]);
	assert_int_equal(compare_with_cxxfilt(&ns, NORMALIZE), ns.n);
	names_free(&ns);
}

static void demangle__plain_names__null(void **state)
{
	static const char *const v[] = { "main", "printf", "i", "v", "_start", "", "_", "__libc_start_main", "Z3fooi" };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_null(bt_demangle(v[i]));
	assert_null(bt_demangle(NULL));
	/* c++filt leaves them alone as well ("i" alone is a type to it, not a symbol) */
	struct names ns = { 0 };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (strcmp(v[i], "i") && strcmp(v[i], "v") && v[i][0])
			names_add(&ns, v[i]);
	assert_int_equal(compare_with_cxxfilt(&ns, NORMALIZE), 0);
	names_free(&ns);
}

/* Invalid manglings give NULL exactly when c++filt gives the name back unchanged. */
static void demangle__invalid_names__null_like_cxxfilt(void **state)
{
	static const char *const v[] = { "_Z", "_ZZ", "_Zxyz", "_ZN3foo", "_ZN3fooE", "_Z3foo", "_Z9foo",
					 "_ZN999999999999999999999fooE", "_Z1fIiEvT_T0_T1_" };
	struct names ns = { 0 };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		names_add(&ns, v[i]);
	size_t n = compare_with_cxxfilt(&ns, "cat");
	assert_true(n < ns.n);
	names_free(&ns);
}

/* Every prefix of real names: the same verdicts as c++filt. */
static void demangle__truncated_names__match_cxxfilt(void **state)
{
	static const char *const seeds[] = {
		"_ZNSt6vectorINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESaIS5_EE17_M_realloc_insertIJS5_EEEvN9__gnu_cxx17__normal_iteratorIPS5_S7_EEDpOT_",
		"_ZN2fx5inner6WidgetplERKS1_",
		"_ZNKSt8functionIFvRKiEEclES1_",
	};
	struct names ns = { 0 };
	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		size_t len = strlen(seeds[s]);
		char buf[512];
		for (size_t cut = 2; cut <= len; cut++) {
			memcpy(buf, seeds[s], cut);
			buf[cut] = '\0';
			names_add(&ns, buf);
		}
	}
	size_t n = compare_with_cxxfilt(&ns, NORMALIZE);
	assert_true(n > 0 && n < ns.n);
	names_free(&ns);
}

/* Random byte changes: c++filt's copy of the demangler and libstdc++'s differ in what odd input they
 * accept, so the check here is that every answer is a proper string or NULL, and no crash. */
static void demangle__mutated_names__string_or_null(void **state)
{
	static const char seed[] = "_ZNSt6vectorINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESaIS5_EE17_M_realloc_"
				   "insertIJS5_EEEvN9__gnu_cxx17__normal_iteratorIPS5_S7_EEDpOT_";
	static const char alphabet[] = "0123456789_ESIJNKRPZabcdefgilmnostvxDTL$.";
	srand(31337);
	size_t demangled = 0;
	for (int k = 0; k < 20000; k++) {
		char buf[sizeof(seed)];
		memcpy(buf, seed, sizeof(seed));
		for (int m = 0; m < 1 + rand() % 3; m++)
			buf[2 + (size_t)rand() % (sizeof(seed) - 3)] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
		char *d = bt_demangle(buf);
		if (d) {
			assert_true(strlen(d) > 0);
			demangled++;
		}
		free(d);
	}
	assert_true(demangled > 0 && demangled < 20000);
}

/* Pathologically deep or long names fail cleanly, as they do for c++filt. */
static void demangle__deep_or_huge_names__null_without_crash(void **state)
{
	size_t n = 200000;
	char *s = malloc(n + 8);
	assert_non_null(s);
	memcpy(s, "_Z1f", 4);
	memset(s + 4, 'P', n);
	memcpy(s + 4 + n, "i", 2);
	assert_null(bt_demangle(s));
	for (size_t i = 0; i + 3 <= n; i += 3)
		memcpy(s + 4 + i, "A1_", 3);
	assert_null(bt_demangle(s));
	free(s);
	/* deep but within reason still works */
	char ok[200] = "_Z1f";
	memset(ok + 4, 'P', 100);
	strcpy(ok + 104, "i");
	char *d = bt_demangle(ok);
	assert_non_null(d);
	assert_non_null(strstr(d, "int*"));
	free(d);
}

/* _Z1f std::pair<int,int> then k more pairs, each of the previous pair twice, by back-reference:
 * the demangled name doubles with each pair while the mangled one grows by ~16 bytes. */
static void doubling_name(char *out, size_t len, int k)
{
	size_t w = (size_t)snprintf(out, len, "_Z1fSt4pairIiiE");
	for (int i = 0; i < k; i++) {
		/* substitution S<seq-id>_ of the previous pair: seq-ids 0, 2, 4 ... in base 36 */
		char id[8], tmp[8];
		int v = 2 * i, l = 0;
		do {
			tmp[l++] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[v % 36];
			v /= 36;
		} while (v);
		for (int j = 0; j < l; j++)
			id[j] = tmp[l - 1 - j];
		id[l] = '\0';
		w += (size_t)snprintf(out + w, len - w, "St4pairIS%s_S%s_E", id, id);
	}
}

/* A few pairs demangle as c++filt says; past BT_DEMANGLE_MAX_OUT the name stays mangled. */
static void demangle__doubling_backreferences__bounded(void **state)
{
	char buf[8192];
	struct names ns = { 0 };
	for (int k = 0; k <= 9; k++) {
		doubling_name(buf, sizeof(buf), k);
		names_add(&ns, buf);
	}
	assert_int_equal(compare_with_cxxfilt(&ns, NORMALIZE), ns.n);
	names_free(&ns);
	/* from k = 10 on, the full name is over 64 KiB (k = 9: 33 KiB, demangled above) */
	for (int k = 10; k <= 400; k += 13) {
		doubling_name(buf, sizeof(buf), k);
		char *d = bt_demangle(buf);
		if (d)
			fail_msg("k=%d: %zu bytes demangled, over the bound", k, strlen(d));
	}
}

/* The same names in a child limited to 256 MiB of address space: an unbounded demangler needs
 * gigabytes (and minutes) for them and dies there; the alarm catches a demangler that loops. */
static void demangle__doubling_backreferences__bounded_memory(void **state)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* AddressSanitizer reserves terabytes of shadow address space: there, only the alarm */
#if !defined(__SANITIZE_ADDRESS__)
		struct rlimit rl = { 256u << 20, 256u << 20 };
		setrlimit(RLIMIT_AS, &rl);
#endif
		alarm(60);
		char buf[8192];
		int bad = 0;
		for (int k = 20; k <= 400; k++) {
			doubling_name(buf, sizeof(buf), k);
			char *d = bt_demangle(buf);
			bad += d != NULL;
			free(d);
		}
		_exit(bad ? 1 : 0);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("the demangler was killed by signal %d", WTERMSIG(st));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Builds a legacy Rust symbol: _ZN, each segment with its length, the hash, E. */
static void rust_name(char *out, size_t len, const char *const *segs, size_t n, const char *suffix)
{
	size_t w = (size_t)snprintf(out, len, "_ZN");
	for (size_t i = 0; i < n; i++)
		w += (size_t)snprintf(out + w, len - w, "%zu%s", strlen(segs[i]), segs[i]);
	snprintf(out + w, len - w, "17h0123456789abcdefE%s", suffix);
}

/* Rust legacy names read as the Rust tools print them: c++filt's reading without the hash. */
static void demangle__rust_legacy__match_cxxfilt_without_hash(void **state)
{
	static const char *const a[] = { "core", "fmt", "Formatter", "pad" };
	static const char *const b[] = { "_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$", "drop" };
	static const char *const c[] = { "std", "rt", "lang_start", "_$u7b$$u7b$closure$u7d$$u7d$" };
	static const char *const d[] = { "$RF$str", "len" };
	static const char *const e[] = { "$SP$$BP$$LP$$RP$$C$", "x" };
	static const char *const f[] = { "a.b", "c" };
	struct names ns = { 0 };
	char buf[512];
	rust_name(buf, sizeof(buf), a, 4, "");
	names_add(&ns, buf);
	rust_name(buf, sizeof(buf), a, 4, ".llvm.1234567890");
	names_add(&ns, buf);
	rust_name(buf, sizeof(buf), b, 2, "");
	names_add(&ns, buf);
	rust_name(buf, sizeof(buf), c, 4, "");
	names_add(&ns, buf);
	rust_name(buf, sizeof(buf), d, 2, "");
	names_add(&ns, buf);
	rust_name(buf, sizeof(buf), e, 2, "");
	names_add(&ns, buf);
	rust_name(buf, sizeof(buf), f, 2, "");
	names_add(&ns, buf);
	assert_int_equal(compare_with_cxxfilt(&ns, "sed 's/::h[0-9a-f]\\{16\\}$//'"), ns.n);
	char *s = bt_demangle(ns.v[2]);
	assert_string_equal(s, "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop");
	free(s);
	names_free(&ns);
}

/* Names that end like a Rust hash but are not Rust stay C++, with the last component kept. */
static void demangle__rust_lookalikes__stay_cxx(void **state)
{
	static const char *const v[] = {
		"_ZN3foo3bar17h0000000000000000E",   /* too few distinct digits for a real hash */
		"_ZN3foo3bar17hxxxxxxxxxxxxxxxxE",   /* not hex */
		"_ZN3foo17h0123456789abcdef3barE",   /* the hash is not last */
	};
	struct names ns = { 0 };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		names_add(&ns, v[i]);
	assert_int_equal(compare_with_cxxfilt(&ns, "cat"), ns.n);
	char *s = bt_demangle(v[0]);
	assert_string_equal(s, "foo::bar::h0000000000000000");
	free(s);
	names_free(&ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(demangle__libstdcxx_exports__match_cxxfilt),
		cmocka_unit_test(demangle__fixture_program__matches_cxxfilt),
		cmocka_unit_test(demangle__clone_suffixes__match_cxxfilt),
		cmocka_unit_test(demangle__plain_names__null),
		cmocka_unit_test(demangle__invalid_names__null_like_cxxfilt),
		cmocka_unit_test(demangle__truncated_names__match_cxxfilt),
		cmocka_unit_test(demangle__mutated_names__string_or_null),
		cmocka_unit_test(demangle__deep_or_huge_names__null_without_crash),
		cmocka_unit_test(demangle__doubling_backreferences__bounded),
		cmocka_unit_test(demangle__doubling_backreferences__bounded_memory),
		cmocka_unit_test(demangle__rust_legacy__match_cxxfilt_without_hash),
		cmocka_unit_test(demangle__rust_lookalikes__stay_cxx),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
