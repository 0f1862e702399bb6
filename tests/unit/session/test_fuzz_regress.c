/* test_fuzz_regress.c - replays the inputs that once broke a parser of untrusted data
 * (fuzz/regress/TARGET/), the committed seeds, and real inputs of this machine through the checks
 * the fuzz targets make (fuzz/checks.c); run under check-asan, any memory error fails too. */
#include "testutil.h"
#include "checks.h"
#include "elf/buildid.h"
#include "base/decompress.h"
#include "elf/elffile.h"
#include "elf/minidebuginfo.h"
#include "output/folded.h"
#include "session/profile.h"
#include "elf/symtab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*check_fn)(const uint8_t *data, size_t len);

static uint8_t *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			free(buf);
			buf = NULL;
		} else if (r == 0) {
			break;
		} else {
			n += (size_t)r;
		}
	}
	close(fd);
	*len = n;
	return buf;
}

static void check_file(const char *path, check_fn fn)
{
	size_t len = 0;
	uint8_t *data = read_file(path, &len);
	if (!data)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	int err = fn(data, len);
	free(data);
	if (err)
		fail_msg("%s: a property of the parser's result broke (%d)", path, err);
}

/* Every regular file of dir through fn; the number replayed (0 for a missing directory). */
static size_t replay_dir(const char *dir, check_fn fn)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char path[1024];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		check_file(path, fn);
		n++;
	}
	closedir(d);
	return n;
}

static size_t replay_target(const char *target, check_fn fn)
{
	char dir[256];
	snprintf(dir, sizeof(dir), "fuzz/regress/%s", target);
	size_t n = replay_dir(dir, fn);
	snprintf(dir, sizeof(dir), "fuzz/seeds/%s", target);
	return n + replay_dir(dir, fn);
}

static void check_fixture(const char *name, check_fn fn)
{
	char path[512];
	check_file(bt_test_fixture(path, sizeof(path), name), fn);
}

/* ---- ELF files ---------------------------------------------------------------------------- */

static const char *const elf_fixtures[] = {
	"fx-sha1", "fx-mips64", "fx-mod.ko", "symsrc/libmini-mdi.so",
};

static void fuzz_regress__elf_inputs__hold_buildid_and_symtab_properties(void **state)
{
	replay_target("buildid", bt_check_buildid);
	replay_target("symtab", bt_check_symtab);
	replay_target("ehtable", bt_check_ehtable);
	/* The good files too: a check that fails on them would make the fuzzer report nonsense. */
	for (size_t i = 0; i < sizeof(elf_fixtures) / sizeof(elf_fixtures[0]); i++) {
		check_fixture(elf_fixtures[i], bt_check_buildid);
		check_fixture(elf_fixtures[i], bt_check_symtab);
		check_fixture(elf_fixtures[i], bt_check_ehtable);
	}
	check_fixture("fx-dbgframe", bt_check_ehtable);
}

static void fuzz_regress__buildid_hex__valid_strings_round_trip(void **state)
{
	static const char *const ok[] = { "00", "0123456789ABCDEFabcdef", "ffffffffffffffffffff" };
	static const char *const bad[] = { "", "0", "abc", "0g", "zz", " 00", "00 " };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct bt_build_id id;
		assert_int_equal(bt_buildid_parse_hex(ok[i], &id), 0);
		assert_int_equal(bt_check_buildid_hex((const uint8_t *)ok[i], strlen(ok[i])), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bt_build_id id;
		assert_int_equal(bt_buildid_parse_hex(bad[i], &id), -EINVAL);
		assert_int_equal(bt_check_buildid_hex((const uint8_t *)bad[i], strlen(bad[i])), 0);
	}
}

/* ---- Go's function table ------------------------------------------------------------------ */

/* The stripped Go program's table as the fuzz target takes it, and the program whole. */
static void fuzz_regress__go_tables__hold_properties(void **state)
{
	replay_target("gopclntab", bt_check_gopclntab);
	char path[512];
	struct bt_elf *e = NULL;
	assert_int_equal(bt_elf_open_path(bt_test_fixture(path, sizeof(path), "go/goprog-stripped"), &e), 0);
	const void *tab;
	size_t len;
	assert_int_equal(bt_elf_section(e, ".gopclntab", &tab, &len), 0);
	assert_int_equal(bt_check_gopclntab(tab, len), 0);
	bt_elf_close(e);
	check_fixture("go/goprog-stripped", bt_check_symtab);
	check_fixture("go/goprog-pie-stripped", bt_check_symtab);
}

/* ---- MiniDebugInfo ------------------------------------------------------------------------ */

static void fuzz_regress__minidebuginfo_inputs__hold_properties(void **state)
{
	assert_true(replay_target("minidebuginfo", bt_check_minidebuginfo) > 0);
	check_fixture("fx-sha1", bt_check_minidebuginfo);
	check_fixture("fx-mod.ko", bt_check_minidebuginfo);
}

/* bt_minidebuginfo_load of the binary bt_check_mdi_binary wraps elf in. */
static int load_embedded(const uint8_t *elf, size_t len, struct bt_symtab **st)
{
	size_t olen = 0;
	uint8_t *outer = bt_check_mdi_binary(elf, len, &olen);
	assert_non_null(outer);
	struct bt_elf *e = NULL;
	assert_int_equal(bt_elf_open_mem(outer, olen, &e), 0);
	int err = bt_minidebuginfo_load(e, st);
	bt_elf_close(e);
	free(outer);
	return err;
}

/* The embedded ELF is rewritten with libelf to merge .dynsym into it. A section aligned to 16 GiB
 * made that layout 16 GiB long, written into a memory file (RAM) before anything was read. */
static void minidebuginfo__huge_section_alignment__refused_as_too_big(void **state)
{
	/* The control: the fixture's own embedded file, merged with the wrapper's exports. */
	char path[512];
	struct bt_elf *bin = NULL;
	assert_int_equal(bt_elf_open_path(bt_test_fixture(path, sizeof(path), "symsrc/libmini-mdi.so"),
					  &bin), 0);
	const void *xz;
	size_t xzlen, mlen = 0;
	void *mini = NULL;
	assert_int_equal(bt_elf_section(bin, ".gnu_debugdata", &xz, &xzlen), 0);
	assert_int_equal(bt_decompress(xz, xzlen, BT_MINIDEBUGINFO_MAX, &mini, &mlen), 0);
	bt_elf_close(bin);
	struct bt_symtab *st = NULL;
	assert_int_equal(load_embedded(mini, mlen, &st), 0);
	const struct bt_sym *s = bt_symtab_lookup(st, 0x1000, NULL);
	assert_non_null(s);
	assert_string_equal(s->name, "exported_fn");
	bt_symtab_free(st);
	free(mini);

	size_t len = 0;
	uint8_t *bad = read_file("fuzz/regress/minidebuginfo/strtab-aligned-16g", &len);
	assert_non_null(bad);
	st = NULL;
	assert_int_equal(load_embedded(bad, len, &st), -EFBIG);
	assert_null(st);
	free(bad);
}

/* ---- compressed data ---------------------------------------------------------------------- */

static void fuzz_regress__compressed_modules__decompress_to_the_module(void **state)
{
	replay_target("decompress", bt_check_decompress);
	char path[512];
	size_t want_len = 0;
	uint8_t *want = read_file(bt_test_fixture(path, sizeof(path), "fx-mod.ko"), &want_len);
	assert_non_null(want);
	static const char *const packed[] = { "fx-mod.ko.xz", "fx-mod.ko.zst", "fx-mod.ko.gz" };
	for (size_t i = 0; i < sizeof(packed) / sizeof(packed[0]); i++) {
		size_t len = 0, olen = 0;
		void *out = NULL;
		uint8_t *data = read_file(bt_test_fixture(path, sizeof(path), packed[i]), &len);
		assert_non_null(data);
		assert_int_equal(bt_check_decompress(data, len), 0);
		assert_int_equal(bt_decompress(data, len, want_len, &out, &olen), 0);
		assert_int_equal(olen, want_len);
		assert_memory_equal(out, want, want_len);
		free(out);
		free(data);
	}
	free(want);
}

/* ---- text formats ------------------------------------------------------------------------- */

/* HTTP request heads and cgroup paths: the seeds (what go tool pprof sends, the runtimes' paths). */
static void fuzz_regress__http_heads_and_cgroup_paths__seeds(void **state)
{
	assert_true(replay_target("httpreq", bt_check_httpreq) >= 4);
	assert_true(replay_target("cgroup", bt_check_cgroup) >= 3);
}

static void fuzz_regress__maps_lines__this_process_and_seeds(void **state)
{
	assert_true(replay_target("procmaps", bt_check_procmap) > 0);
	FILE *f = fopen("/proc/self/maps", "re");
	assert_non_null(f);
	char *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		assert_int_equal(bt_check_procmap((const uint8_t *)line, (size_t)len), 0);
		n++;
	}
	free(line);
	fclose(f);
	assert_true(n > 0);
}

static void fuzz_regress__kallsyms__this_kernel_and_seeds(void **state)
{
	assert_true(replay_target("kallsyms", bt_check_kallsyms) > 0);
	size_t len = 0;
	uint8_t *data = read_file("/proc/kallsyms", &len);
	if (!data)
		skip();
	assert_int_equal(bt_check_kallsyms(data, len), 0);
	free(data);
}

static void fuzz_regress__perfmap_and_jitdump__seeds(void **state)
{
	assert_true(replay_target("perfmap", bt_check_perfmap) > 0);
	assert_true(replay_target("jitdump", bt_check_jitdump) > 0);
}

static void fuzz_regress__folded_inputs__refused_or_round_trip(void **state)
{
	assert_true(replay_target("folded", bt_check_folded) > 0);
}

/* An empty profile has no lines to sort: neither the parser nor the folder may hand qsort the
 * NULL array (undefined behaviour even for zero elements; UBSan reports it). */
static void fuzz_regress__empty_folded__empty_result(void **state)
{
	struct bt_folded f;
	FILE *in = fopen("/dev/null", "re");
	assert_non_null(in);
	size_t bad = 7;
	assert_int_equal(bt_folded_parse(in, &f, &bad), 0);
	fclose(in);
	assert_int_equal(f.n, 0);
	assert_int_equal(f.total, 0);
	assert_int_equal(bad, 0);
	bt_folded_free(&f);

	struct bt_profile p;
	bt_profile_init(&p);
	assert_int_equal(bt_folded_from_profile(&p, &f), 0);
	assert_int_equal(f.n, 0);
	bt_folded_free(&f);
	bt_profile_free(&p);
}

/* ---- symbol names ------------------------------------------------------------------------- */

static void fuzz_regress__symbol_names__demangle_properties(void **state)
{
	assert_true(replay_target("demangle", bt_check_demangle) > 0);
	/* Every name of the C++ fixture, as nm lists it. */
	char path[512], names[16384];
	assert_int_equal(bt_test_run(names, sizeof(names), "nm '%s' | awk '{ print $NF }'",
				     bt_test_fixture(path, sizeof(path), "fx-cxx")), 0);
	size_t n = 0;
	for (char *line = strtok(names, "\n"); line; line = strtok(NULL, "\n"), n++)
		assert_int_equal(bt_check_demangle((const uint8_t *)line, strlen(line)), 0);
	assert_true(n > 0);
}

/* ---- build-id cache entries --------------------------------------------------------------- */

/* The harness's input for a well-formed entry: the link target tail perf writes, then the file. */
static uint8_t *cache_input(const char *fixture, size_t *len)
{
	char path[512], hex[256];
	bt_test_fixture(path, sizeof(path), fixture);
	/* readelf is the oracle for the build-id the link must be named after. */
	if (bt_test_run(hex, sizeof(hex), "readelf -n '%s' | awk '/Build ID:/ { print $3; exit }'",
			path) != 0)
		return NULL;
	hex[strcspn(hex, "\n")] = '\0';
	size_t flen = 0;
	uint8_t *file = read_file(path, &flen);
	if (!file)
		return NULL;
	char tail[512];
	int tl = snprintf(tail, sizeof(tail), "usr/lib/%s/%s", fixture, hex);
	uint8_t *in = malloc((size_t)tl + 1 + flen);
	if (in) {
		memcpy(in, tail, (size_t)tl + 1);
		memcpy(in + tl + 1, file, flen);
		*len = (size_t)tl + 1 + flen;
	}
	free(file);
	return in;
}

static void fuzz_regress__cache_entries__hold_properties(void **state)
{
	replay_target("bidcache", bt_check_bidcache);
	static const char *const fixtures[] = { "fx-sha1", "fx-mod.ko", "fx-mips64" };
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		size_t len = 0;
		uint8_t *in = cache_input(fixtures[i], &len);
		assert_non_null(in);
		assert_int_equal(bt_check_bidcache(in, len), 0);
		/* Cut short, the stored copy no longer passes verification: still no broken property. */
		assert_int_equal(bt_check_bidcache(in, len / 2), 0);
		free(in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fuzz_regress__elf_inputs__hold_buildid_and_symtab_properties),
		cmocka_unit_test(fuzz_regress__buildid_hex__valid_strings_round_trip),
		cmocka_unit_test(fuzz_regress__go_tables__hold_properties),
		cmocka_unit_test(fuzz_regress__minidebuginfo_inputs__hold_properties),
		cmocka_unit_test(minidebuginfo__huge_section_alignment__refused_as_too_big),
		cmocka_unit_test(fuzz_regress__compressed_modules__decompress_to_the_module),
		cmocka_unit_test(fuzz_regress__maps_lines__this_process_and_seeds),
		cmocka_unit_test(fuzz_regress__http_heads_and_cgroup_paths__seeds),
		cmocka_unit_test(fuzz_regress__kallsyms__this_kernel_and_seeds),
		cmocka_unit_test(fuzz_regress__perfmap_and_jitdump__seeds),
		cmocka_unit_test(fuzz_regress__folded_inputs__refused_or_round_trip),
		cmocka_unit_test(fuzz_regress__empty_folded__empty_result),
		cmocka_unit_test(fuzz_regress__symbol_names__demangle_properties),
		cmocka_unit_test(fuzz_regress__cache_entries__hold_properties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
