/* test_dwarfinfo.c - DWARF frames (inlined ones included) against llvm-symbolizer and
 * eu-addr2line -i as oracles, on a fixture with inlining and on libc's packaged debug file, plus
 * files without DWARF, truncated lists and corrupted debug sections. */
#include "testutil.h"
#include "elf/dwarfinfo.h"

#include <errno.h>
#include <libelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXF 32
#define OUT_LEN (1 << 20)

struct oframe {
	char func[256];
	char file[600];
	unsigned line;
};

struct oaddr {
	uint64_t addr;
	int n;
	struct oframe f[MAXF];
};

static char *fixture(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;
	i = (i + 1) % 4;
	char rel[256];
	bt_test_fixture(rel, sizeof(rel), name);
	assert_non_null(realpath(rel, buf[i]));
	return buf[i];
}

/* "FILE:LINE:COL" or "FILE:LINE" into file and line; "??" files become "". */
static void split_location(const char *loc, struct oframe *f)
{
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s", loc);
	char *c = strrchr(tmp, ':');
	assert_non_null(c);
	*c = '\0';
	char *l = strrchr(tmp, ':');
	if (l) {
		*l = '\0';
		f->line = (unsigned)strtoul(l + 1, NULL, 10);
	} else {
		f->line = (unsigned)strtoul(c + 1, NULL, 10);
	}
	snprintf(f->file, sizeof(f->file), "%s", strcmp(tmp, "??") ? tmp : "");
}

/* Writes the addresses one per line to a temporary file for the oracle's standard input. */
static void write_addrs(char *path, const uint64_t *a, size_t n)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "0x%" PRIx64 "\n", a[i]);
	fclose(f);
}

/* llvm-symbolizer: per address, NAME and FILE:LINE:COL line pairs, then an empty line. */
static void llvm_oracle(const char *elf, const uint64_t *a, size_t n, struct oaddr *out)
{
	for (size_t i = 0; i < n; i++) {
		out[i].addr = a[i];
		out[i].n = 0;
	}
	char *buf = malloc(OUT_LEN);
	assert_non_null(buf);
	char tmp[] = "/tmp/bt-dwarf-addrs-XXXXXX";
	write_addrs(tmp, a, n);
	assert_int_equal(bt_test_run(buf, OUT_LEN, "llvm-symbolizer --obj='%s' < %s", elf, tmp), 0);
	unlink(tmp);
	size_t i = 0;
	char *p = buf;
	while (*p && i < n) {
		char *nl = strchr(p, '\n');
		assert_non_null(nl);
		*nl = '\0';
		if (!*p) {
			i++;
			p = nl + 1;
			continue;
		}
		char *loc = nl + 1;
		char *nl2 = strchr(loc, '\n');
		assert_non_null(nl2);
		*nl2 = '\0';
		assert_true(out[i].n < MAXF);
		struct oframe *f = &out[i].f[out[i].n++];
		snprintf(f->func, sizeof(f->func), "%s", p);
		split_location(loc, f);
		p = nl2 + 1;
	}
	assert_int_equal(i, n);
	free(buf);
}

/* eu-addr2line -a -i -f: per address, "0x..." then name / location line pairs; an inlined
 * frame's name line reads "NAME inlined at ... in OUTER". */
static void eu_oracle(const char *elf, const uint64_t *a, size_t n, struct oaddr *out)
{
	char *buf = malloc(OUT_LEN);
	assert_non_null(buf);
	char tmp[] = "/tmp/bt-dwarf-addrs-XXXXXX";
	write_addrs(tmp, a, n);
	assert_int_equal(bt_test_run(buf, OUT_LEN, "eu-addr2line -a -i -f -e '%s' < %s", elf, tmp), 0);
	unlink(tmp);
	long i = -1;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "0x", 2)) {
			i++;
			assert_true(i < (long)n);
			out[i].addr = strtoull(line, NULL, 16);
			assert_true(out[i].addr == a[i]);
			out[i].n = 0;
			continue;
		}
		char *loc = strtok_r(NULL, "\n", &save);
		assert_non_null(loc);
		assert_true(i >= 0 && out[i].n < MAXF);
		struct oframe *f = &out[i].f[out[i].n++];
		size_t nl = strcspn(line, " ");
		snprintf(f->func, sizeof(f->func), "%.*s", (int)nl, line);
		split_location(loc, f);
	}
	assert_int_equal(i + 1, (long)n);
	free(buf);
}

static void print_frames(uint64_t addr, const struct bt_dwarf_frame *fr, int n, const struct oaddr *o)
{
	fprintf(stderr, "address 0x%" PRIx64 ": buildtrace", addr);
	for (int i = 0; i < n; i++)
		fprintf(stderr, " | %s %s:%u", fr[i].function ? fr[i].function : "(null)",
			fr[i].file ? fr[i].file : "", fr[i].line);
	fprintf(stderr, "\n  oracle");
	for (int i = 0; i < o->n; i++)
		fprintf(stderr, " | %s %s:%u", o->f[i].func, o->f[i].file, o->f[i].line);
	fprintf(stderr, "\n");
}

/* Compares frame by frame; the oracles' "??" names and files stand for unknown. */
static int compare(struct bt_dwarf *d, const struct oaddr *o)
{
	struct bt_dwarf_frame fr[MAXF];
	int n = bt_dwarf_lookup(d, o->addr, fr, MAXF);
	assert_true(n >= 0);
	bool ok = n == o->n;
	for (int i = 0; ok && i < n; i++) {
		const char *fn = fr[i].function ? fr[i].function : "??";
		ok = !strcmp(fn, o->f[i].func) && !strcmp(fr[i].file ? fr[i].file : "", o->f[i].file) &&
		     fr[i].line == o->f[i].line;
	}
	if (!ok)
		print_frames(o->addr, fr, n, o);
	return ok ? 0 : 1;
}

static struct bt_dwarf *open_path(const char *path)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	struct bt_dwarf *d = NULL;
	assert_int_equal(bt_dwarf_open_fd(fd, &d), 0);
	close(fd);  /* the handle keeps its own */
	return d;
}

/* Every byte address of the fixture's functions that have code from inl.h inlined. */
static size_t fixture_addrs(const char *elf, uint64_t *a, size_t max)
{
	char out[4096];
	assert_int_equal(bt_test_run(out, sizeof(out), "nm -S '%s' | awk '$4 ~ /^(fx_outer|fx_caller|"
				     "fx_local|main)$/ { print $1, $2 }'", elf), 0);
	size_t n = 0;
	char *save = NULL;
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		uint64_t start, size;
		assert_int_equal(sscanf(l, "%" SCNx64 " %" SCNx64, &start, &size), 2);
		for (uint64_t x = start; x < start + size && n < max; x++)
			a[n++] = x;
	}
	assert_true(n > 100);
	return n;
}

/* Opens path and compares every oracle answer: the number of addresses that differ. */
static int mismatches(const char *path, const struct oaddr *o, size_t n)
{
	struct bt_dwarf *d = open_path(path);
	int bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += compare(d, &o[i]);
	bt_dwarf_close(d);
	return bad;
}

static void dwarf__fixture_every_address__matches_llvm_symbolizer(void **state)
{
	const char *elf = fixture("symsrc/inl");
	static uint64_t a[512];
	static struct oaddr o[512];
	size_t n = fixture_addrs(elf, a, 512);
	llvm_oracle(elf, a, n, o);
	int inlined = 0;
	for (size_t i = 0; i < n; i++)
		inlined += o[i].n > 1;
	assert_int_equal(mismatches(elf, o, n), 0);
	assert_true(inlined > 10);  /* the fixture did exercise inlined frames */
}

static void dwarf__compressed_debug_sections__match_llvm_symbolizer(void **state)
{
	const char *elf = fixture("symsrc/inl");
	char tmp[] = "/tmp/bt-zdebug-XXXXXX", out[256];
	int tfd = mkstemp(tmp);
	assert_true(tfd >= 0);
	close(tfd);
	assert_int_equal(bt_test_run(out, sizeof(out), "objcopy --compress-debug-sections=zlib '%s' '%s' "
				     "&& readelf -SW '%s' | grep -c ' .debug_info .* C '", elf, tmp, tmp), 0);
	assert_true(atoi(out) >= 1);  /* the copy's .debug_info is SHF_COMPRESSED */
	static uint64_t a[512];
	static struct oaddr o[512];
	size_t n = fixture_addrs(elf, a, 512);
	llvm_oracle(elf, a, n, o);
	int bad = mismatches(tmp, o, n);
	unlink(tmp);
	assert_int_equal(bad, 0);
}

static void dwarf__fixture_debug_file__matches_eu_addr2line(void **state)
{
	const char *elf = fixture("symsrc/inl"), *dbg = fixture("symsrc/inl.debug");
	static uint64_t a[512];
	static struct oaddr o[512];
	size_t n = fixture_addrs(elf, a, 512);
	eu_oracle(dbg, a, n, o);
	/* The separate debug file (NOBITS code) answers exactly like the oracle on it. */
	assert_int_equal(mismatches(dbg, o, n), 0);
}

static void dwarf__libc_debug_file__matches_eu_addr2line(void **state)
{
	char out[512];
	assert_int_equal(bt_test_run(out, sizeof(out), "f=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 "
				     "2>/dev/null) && b=$(readelf -n \"$f\" | awk '/Build ID/ { print $3 }') "
				     "&& printf /usr/lib/debug/.build-id/%%.2s/%%s.debug \"$b\" \"${b#??}\""), 0);
	if (access(out, R_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg("%s is missing: install libc6-dbg (tools/deps.sh)", out);
		skip();
	}
	/* A spread of functions: each one's middle byte. */
	static uint64_t a[400];
	static struct oaddr o[400];
	static char list[1 << 16];
	assert_int_equal(bt_test_run(list, sizeof(list), "nm -S --defined-only '%s' | awk '$3 ~ /^[Tt]$/ "
				     "&& $2 != \"\" { print $1, $2 }' | sort -u | awk 'NR %% 7 == 0' | "
				     "head -n 400", out), 0);
	size_t n = 0;
	char *save = NULL;
	for (char *l = strtok_r(list, "\n", &save); l && n < 400; l = strtok_r(NULL, "\n", &save)) {
		uint64_t start, size;
		if (sscanf(l, "%" SCNx64 " %" SCNx64, &start, &size) == 2 && size)
			a[n++] = start + size / 2;
	}
	assert_true(n > 100);
	eu_oracle(out, a, n, o);
	struct bt_dwarf *d = open_path(out);
	int bad = 0, known = 0;
	for (size_t i = 0; i < n; i++) {
		if (o[i].n == 1 && !o[i].f[0].file[0])
			continue;  /* no DWARF for it (assembly); the oracle falls back to symbols */
		known++;
		bad += compare(d, &o[i]);
	}
	bt_dwarf_close(d);
	assert_true(known > (int)(n / 2));
	assert_int_equal(bad, 0);
}

static void dwarf__max_frames__keeps_innermost(void **state)
{
	const char *elf = fixture("symsrc/inl");
	static uint64_t a[512];
	static struct oaddr o[512];
	size_t n = fixture_addrs(elf, a, 512);
	llvm_oracle(elf, a, n, o);
	size_t deepest = 0;
	for (size_t i = 0; i < n; i++)
		if (o[i].n > o[deepest].n)
			deepest = i;
	assert_true(o[deepest].n >= 3);
	struct bt_dwarf *d = open_path(elf);
	struct bt_dwarf_frame fr[2];
	assert_int_equal(bt_dwarf_lookup(d, a[deepest], fr, 2), 2);
	assert_string_equal(fr[0].function, o[deepest].f[0].func);
	assert_string_equal(fr[1].function, o[deepest].f[1].func);
	assert_int_equal(bt_dwarf_lookup(d, a[deepest], fr, 0), 0);
	bt_dwarf_close(d);
}

static void dwarf__addresses_outside__no_frames(void **state)
{
	struct bt_dwarf *d = open_path(fixture("symsrc/inl"));
	struct bt_dwarf_frame fr[4];
	assert_int_equal(bt_dwarf_lookup(d, 0, fr, 4), 0);
	assert_int_equal(bt_dwarf_lookup(d, UINT64_MAX, fr, 4), 0);
	assert_int_equal(bt_dwarf_lookup(d, 0x1000000, fr, 4), 0);
	assert_int_equal(bt_dwarf_lookup(NULL, 0x1000, fr, 4), -EINVAL);
	bt_dwarf_close(d);
}

static void dwarf__no_dwarf_or_not_elf__refused(void **state)
{
	struct bt_dwarf *d = NULL;
	int fd = open(fixture("symsrc/inl.stripped"), O_RDONLY);
	assert_int_equal(bt_dwarf_open_fd(fd, &d), -ENODATA);
	close(fd);
	fd = open("/etc/hostname", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(bt_dwarf_open_fd(fd, &d), -ENOEXEC);
	close(fd);
	assert_int_equal(bt_dwarf_open_fd(-1, &d), -EINVAL);
	assert_null(d);
}

/* Byte flips all over .debug_info, .debug_line and .debug_abbrev: lookups may fail, never crash
 * or hang. */
static void dwarf__corrupted_sections__no_crash(void **state)
{
	const char *src = fixture("symsrc/inl");
	char off[256];
	static uint64_t a[512];
	size_t n = fixture_addrs(src, a, 512);
	assert_int_equal(bt_test_run(off, sizeof(off), "readelf -SW '%s' | awk '/\\.debug_(info|line|abbrev) / "
				     "{ for (i = 1; i <= NF; i++) if ($i ~ /^\\.debug/) "
				     "{ printf \"%%s %%s \", $(i+3), $(i+4) } }'", src), 0);
	uint64_t ranges[3][2];
	assert_int_equal(sscanf(off, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
				" %" SCNx64, &ranges[0][0], &ranges[0][1], &ranges[1][0], &ranges[1][1],
				&ranges[2][0], &ranges[2][1]), 6);
	unsigned seed = 12345;
	for (int round = 0; round < 40; round++) {
		char path[] = "/tmp/bt-dwarf-corrupt-XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		unlink(path);
		assert_int_equal(bt_test_run(NULL, 0, "cat '%s' > /proc/%d/fd/%d", src, (int)getpid(), fd), 0);
		for (int k = 0; k < 1 + round % 8; k++) {
			seed = seed * 1103515245u + 12345u;
			const uint64_t *r = ranges[(seed >> 8) % 3];
			seed = seed * 1103515245u + 12345u;
			off_t at = (off_t)(r[0] + (seed >> 4) % r[1]);
			unsigned char b = (unsigned char)(seed >> 20);
			assert_int_equal(pwrite(fd, &b, 1, at), 1);
		}
		struct bt_dwarf *d = NULL;
		if (bt_dwarf_open_fd(fd, &d) == 0) {
			struct bt_dwarf_frame fr[MAXF];
			for (size_t i = 0; i < n; i += 3)
				assert_true(bt_dwarf_lookup(d, a[i], fr, MAXF) >= -ENOMEM);
			bt_dwarf_close(d);
		}
		close(fd);
	}
}

/* A copy of the fixture with the last byte of one section changed; the copy's path in path. */
static int copy_with_last_byte(const char *src, const char *section, unsigned char to, char *path)
{
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "readelf -SW '%s' | awk '{ for (i = 1; i < NF; i++) "
				     "if ($i == \"%s\") { print $(i+3), $(i+4) } }'", src, section), 0);
	uint64_t off, size;
	assert_int_equal(sscanf(out, "%" SCNx64 " %" SCNx64, &off, &size), 2);
	assert_true(size > 0);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(bt_test_run(NULL, 0, "cat '%s' > '%s'", src, path), 0);
	unsigned char was;
	assert_int_equal(pread(fd, &was, 1, (off_t)(off + size - 1)), 1);
	assert_int_equal(was, 0);  /* a well-formed string section ends with a NUL */
	assert_int_equal(pwrite(fd, &to, 1, (off_t)(off + size - 1)), 1);
	return fd;
}

static const char *bad_section_of(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	const char *bad = NULL;
	int err = bt_dwarf_check_strings(e, &bad);
	elf_end(e);
	return err == -EBADMSG ? bad : err ? "error" : NULL;
}

/* libdw reads a string of .debug_line_str or .debug_str up to its NUL, past the section's end when
 * the last one has none: such a file is refused before libdw sees it, compressed or not. */
static void dwarf__string_section_without_final_nul__refused(void **state)
{
	const char *src = fixture("symsrc/inl");
	elf_version(EV_CURRENT);
	int fd = open(src, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_null(bad_section_of(fd));
	close(fd);
	static const char *const sections[] = { ".debug_line_str", ".debug_str" };
	for (size_t i = 0; i < 2; i++) {
		char path[] = "/tmp/bt-dwarf-nonul-XXXXXX", z[64];
		fd = copy_with_last_byte(src, sections[i], 'A', path);
		struct bt_dwarf *d = NULL;
		assert_int_equal(bt_dwarf_open_fd(fd, &d), -EBADMSG);
		assert_null(d);
		assert_string_equal(bad_section_of(fd), sections[i]);
		close(fd);
		/* the same, compressed: checked once decompressed */
		snprintf(z, sizeof(z), "%s.z", path);
		assert_int_equal(bt_test_run(NULL, 0, "objcopy --compress-debug-sections=zlib '%s' '%s' && "
					     "readelf -SW '%s' | grep -Eq ' %s +PROGBITS .* [A-Z]*C[A-Z]* '", path, z, z,
					     sections[i]), 0);
		fd = open(z, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(bt_dwarf_open_fd(fd, &d), -EBADMSG);
		assert_string_equal(bad_section_of(fd), sections[i]);
		close(fd);
		unlink(z);
		unlink(path);
		/* the last byte a NUL again: accepted */
		snprintf(path, sizeof(path), "/tmp/bt-dwarf-nonul-XXXXXX");
		fd = copy_with_last_byte(src, sections[i], 0, path);
		assert_int_equal(bt_dwarf_open_fd(fd, &d), 0);
		bt_dwarf_close(d);
		close(fd);
		unlink(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dwarf__fixture_every_address__matches_llvm_symbolizer),
		cmocka_unit_test(dwarf__fixture_debug_file__matches_eu_addr2line),
		cmocka_unit_test(dwarf__compressed_debug_sections__match_llvm_symbolizer),
		cmocka_unit_test(dwarf__libc_debug_file__matches_eu_addr2line),
		cmocka_unit_test(dwarf__max_frames__keeps_innermost),
		cmocka_unit_test(dwarf__addresses_outside__no_frames),
		cmocka_unit_test(dwarf__no_dwarf_or_not_elf__refused),
		cmocka_unit_test(dwarf__corrupted_sections__no_crash),
		cmocka_unit_test(dwarf__string_section_without_final_nul__refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
