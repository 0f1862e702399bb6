/* test_buildid.c - build-ids of the fixtures and system files against `readelf -n`, compressed
 * modules against readelf of the tool-decompressed file, hostile and truncated files, hex forms. */
#include "testutil.h"
#include "elf/buildid.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* readelf's build-id of path as lowercase hex, "" when it shows none. */
static void readelf_id(const char *path, char *hex, size_t len)
{
	bt_test_run(hex, len,
		    "LC_ALL=C readelf -nW '%s' 2>/dev/null | sed -n 's/.*Build ID: \\([0-9a-f]*\\).*/\\1/p' | head -n1",
		    path);
	hex[strcspn(hex, "\n")] = '\0';
}

/* Asserts that our build-id of path (by path, fd and buffer) is readelf's. */
static void expect_readelf_id(const char *path)
{
	char want[256], got[2 * BT_BUILD_ID_MAXLEN + 1];
	readelf_id(path, want, sizeof(want));
	if (!want[0])
		fail_msg("readelf shows no build-id in %s", path);
	struct bt_build_id id;
	int err = bt_buildid_from_path(path, &id);
	if (err)
		fail_msg("%s: %d", path, err);
	assert_string_equal(bt_buildid_hex(&id, got, sizeof(got)), want);

	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	struct bt_build_id id2;
	assert_int_equal(bt_buildid_from_fd(fd, &id2), 0);
	assert_true(bt_buildid_eq(&id, &id2));
	close(fd);

	size_t len;
	void *buf = bt_test_read_file(path, &len);
	assert_int_equal(bt_buildid_from_mem(buf, len, &id2), 0);
	assert_true(bt_buildid_eq(&id, &id2));
	free(buf);
}

static const char *fx(char *buf, const char *name)
{
	return bt_test_fixture(buf, 512, name);
}

static void buildid__fixtures__match_readelf(void **state)
{
	static const char *const names[] = {
		"fx-sha1", "fx-md5", "fx-hexid", "fx-nopie", "fx-stripped", "fx-sha1.debug", "fx-linked",
		"libfx.so", "fx-cxx", "fx-mod.ko",
	};
	char p[512];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		expect_readelf_id(fx(p, names[i]));
}

/* The length is whatever the linker wrote: sha1 20 bytes, md5 16, an explicit hex id its own. */
static void buildid__flavours__lengths_follow_linker(void **state)
{
	static const struct { const char *name; unsigned len; } want[] = {
		{ "fx-sha1", 20 }, { "fx-md5", 16 }, { "fx-hexid", 32 }, { "fx-mips64", 16 },
	};
	char p[512], hex[256];
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct bt_build_id id;
		assert_int_equal(bt_buildid_from_path(fx(p, want[i].name), &id), 0);
		assert_int_equal(id.len, want[i].len);
		readelf_id(p, hex, sizeof(hex));
		assert_int_equal(strlen(hex), 2 * want[i].len);
	}
}

static void buildid__without_note__enodata(void **state)
{
	char p[512], hex[256];
	readelf_id(fx(p, "fx-none"), hex, sizeof(hex));
	assert_string_equal(hex, "");  /* the oracle agrees there is none */
	struct bt_build_id id;
	assert_int_equal(bt_buildid_from_path(p, &id), -ENODATA);
	assert_int_equal(id.len, 0);
}

/* The note sits after a foreign note whose padding differs between 4- and 8-byte alignment. */
static void buildid__eight_byte_aligned_notes__match_readelf(void **state)
{
	char p[512];
	expect_readelf_id(fx(p, "fx-note8"));
}

static void buildid__32bit_and_big_endian__match_readelf(void **state)
{
	char p[512], hex[256];
	static const char *const names[] = { "fx-i386", "fx-mips", "fx-mips64" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		expect_readelf_id(fx(p, names[i]));
		/* and the oracle confirms what kind of file this was */
		bt_test_run(hex, sizeof(hex), "LC_ALL=C readelf -h '%s' | grep -E 'Class|Data:' | tr -s ' '", p);
		if (i == 0)
			assert_non_null(strstr(hex, "ELF32"));
		else
			assert_non_null(strstr(hex, "big endian"));
	}
}

/* libelf must only read the buffer: a read-only mapping of a byte-swapped file proves it. */
static void buildid__readonly_big_endian_buffer__not_written(void **state)
{
	char p[512], want[256], got[256];
	static const char *const names[] = { "fx-mips", "fx-mips64", "fx-sha1" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int fd = open(fx(p, names[i]), O_RDONLY);
		assert_true(fd >= 0);
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		assert_true(m != MAP_FAILED);
		struct bt_build_id id;
		assert_int_equal(bt_buildid_from_mem(m, (size_t)st.st_size, &id), 0);
		readelf_id(p, want, sizeof(want));
		assert_string_equal(bt_buildid_hex(&id, got, sizeof(got)), want);
		munmap(m, (size_t)st.st_size);
		close(fd);
	}
}

/* Compressed modules: the oracle is readelf on what each tool itself decompresses. */
static void buildid__compressed_modules__match_tool_decompressed(void **state)
{
	static const struct { const char *name, *tool; } cases[] = {
		{ "fx-mod.ko.xz", "xz -dc" }, { "fx-mod.ko.zst", "zstd -q -dc" },
		{ "fx-mod.ko.gz", "gzip -dc" }, { "fx-sha1.xz", "xz -dc" },
	};
	char p[512], tmp[] = "/tmp/bt-bid-XXXXXX", want[256], got[256];
	int tfd = mkstemp(tmp);
	assert_true(tfd >= 0);
	close(tfd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(bt_test_run(NULL, 0, "%s < '%s' > %s", cases[i].tool, fx(p, cases[i].name), tmp), 0);
		readelf_id(tmp, want, sizeof(want));
		assert_true(want[0] != '\0');
		struct bt_build_id id;
		assert_int_equal(bt_buildid_from_path(p, &id), 0);
		assert_string_equal(bt_buildid_hex(&id, got, sizeof(got)), want);
		/* by fd and buffer the bytes are taken as they are: compressed is not ELF */
		int fd = open(p, O_RDONLY);
		assert_int_equal(bt_buildid_from_fd(fd, &id), -ENOEXEC);
		close(fd);
	}
	unlink(tmp);
}

static void buildid__system_libraries__match_readelf(void **state)
{
	char path[512];
	/* the C library this test runs on and the test program itself */
	assert_int_equal(bt_test_run(path, sizeof(path),
				     "sed -n 's,^.* \\(/.*/libc\\.so\\.6\\)$,\\1,p' /proc/%d/maps | head -n1", (int)getpid()),
			 0);
	path[strcspn(path, "\n")] = '\0';
	assert_true(path[0] == '/');
	expect_readelf_id(path);
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	assert_true(n > 0);
	path[n] = '\0';
	expect_readelf_id(path);
}

static void buildid__from_fd__keeps_file_position(void **state)
{
	char p[512];
	int fd = open(fx(p, "fx-sha1"), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 123, SEEK_SET), 123);
	struct bt_build_id id;
	assert_int_equal(bt_buildid_from_fd(fd, &id), 0);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 123);
	close(fd);
}

static void buildid__not_elf_or_missing__errors(void **state)
{
	struct bt_build_id id;
	char dir[] = "/tmp/bt-bid-XXXXXX", p[600];
	assert_non_null(mkdtemp(dir));
	/* a script, an empty file, a short file with the ELF magic only */
	snprintf(p, sizeof(p), "%s/script", dir);
	assert_int_equal(bt_test_run(NULL, 0, "printf '#!/bin/sh\\necho hi\\n' > %s", p), 0);
	assert_int_equal(bt_buildid_from_path(p, &id), -ENOEXEC);
	unlink(p);
	snprintf(p, sizeof(p), "%s/empty", dir);
	assert_int_equal(bt_test_run(NULL, 0, ": > %s", p), 0);
	assert_int_equal(bt_buildid_from_path(p, &id), -ENOEXEC);
	unlink(p);
	snprintf(p, sizeof(p), "%s/magic", dir);
	assert_int_equal(bt_test_run(NULL, 0, "printf '\\177ELF' > %s", p), 0);
	assert_int_equal(bt_buildid_from_path(p, &id), -ENOEXEC);
	unlink(p);
	snprintf(p, sizeof(p), "%s/absent", dir);
	assert_int_equal(bt_buildid_from_path(p, &id), -ENOENT);
	assert_int_equal(bt_buildid_from_mem("\177ELF", 4, &id), -ENOEXEC);
	assert_int_equal(bt_buildid_from_mem(NULL, 100, &id), -EINVAL);
	assert_int_equal(bt_buildid_from_fd(-1, &id), -EINVAL);
	rmdir(dir);
}

/* A FIFO must neither block the open nor be read; directories and devices are refused too. */
static void buildid__non_regular_paths__einval_without_blocking(void **state)
{
	char dir[] = "/tmp/bt-bid-XXXXXX", fifo[600], link[600];
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(fifo, link), 0);
	struct bt_build_id id;
	time_t t0 = time(NULL);
	assert_int_equal(bt_buildid_from_path(fifo, &id), -EINVAL);
	assert_int_equal(bt_buildid_from_path(link, &id), -EINVAL);
	assert_true(time(NULL) - t0 < 5);
	assert_int_equal(bt_buildid_from_path(dir, &id), -EINVAL);
	assert_int_equal(bt_buildid_from_path("/dev/null", &id), -EINVAL);
	unlink(link);
	unlink(fifo);
	rmdir(dir);
	/* a symlink to a regular file is followed */
	char p[512];
	snprintf(link, sizeof(link), "/tmp/bt-bid-link-%d", (int)getpid());
	char *target = realpath(fx(p, "fx-sha1"), NULL);
	assert_non_null(target);
	assert_int_equal(symlink(target, link), 0);
	free(target);
	assert_int_equal(bt_buildid_from_path(link, &id), 0);
	unlink(link);
}

/* Every prefix of a real file: an error, or (once the note is in) the full file's id. Each prefix
 * is an exactly sized heap copy, so a sanitizer build catches reads past it. */
static void buildid__truncations__error_or_same_id(void **state)
{
	static const char *const names[] = { "fx-sha1", "fx-mips", "fx-i386", "fx-note8", "fx-mod.ko" };
	char p[512];
	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		/* A relocatable file (the module) has only sections, whose table is at the very end. */
		bool has_segments = strcmp(names[f], "fx-mod.ko") != 0;
		size_t len;
		unsigned char *full = bt_test_read_file(fx(p, names[f]), &len);
		struct bt_build_id want, got;
		assert_int_equal(bt_buildid_from_mem(full, len, &want), 0);
		size_t ok = 0;
		for (size_t cut = 0; cut < len; cut += cut < 8192 ? 1 : 97) {
			unsigned char *copy = malloc(cut ? cut : 1);
			assert_non_null(copy);
			memcpy(copy, full, cut);
			int err = bt_buildid_from_mem(copy, cut, &got);
			if (err == 0) {
				assert_true(bt_buildid_eq(&want, &got));
				ok++;
			} else if (err != -ENOEXEC && err != -ENODATA) {
				fail_msg("%s cut at %zu: %d", names[f], cut, err);
			}
			free(copy);
		}
		/* PT_NOTE comes early: with segments, many prefixes still have the id */
		assert_true(has_segments ? ok > 0 : ok == 0);
		free(full);
	}
}

/* Offset of the GNU build-id note header (namesz 4, type 3, "GNU") in a file image. */
static size_t find_note(const unsigned char *b, size_t len)
{
	for (size_t i = 0; i + 16 <= len; i += 4) {
		uint32_t namesz, type;
		memcpy(&namesz, b + i, 4);
		memcpy(&type, b + i + 8, 4);
		if (namesz == 4 && type == NT_GNU_BUILD_ID && memcmp(b + i + 12, "GNU", 4) == 0)
			return i;
	}
	fail_msg("no build-id note");
	return 0;
}

static int mutated_id(const unsigned char *orig, size_t len, void (*mut)(unsigned char *, size_t),
		      struct bt_build_id *id)
{
	unsigned char *copy = malloc(len);
	assert_non_null(copy);
	memcpy(copy, orig, len);
	mut(copy, len);
	int err = bt_buildid_from_mem(copy, len, id);
	free(copy);
	return err;
}

static void mut_descsz_huge(unsigned char *b, size_t len)
{
	uint32_t v = 0xfffffff0u;
	memcpy(b + find_note(b, len) + 4, &v, 4);
}
static void mut_namesz_huge(unsigned char *b, size_t len)
{
	size_t at = find_note(b, len);
	uint32_t v = 0x7fffffffu;
	memcpy(b + at, &v, 4);
}
static void mut_phdrs_past_end(unsigned char *b, size_t len)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	eh->e_phoff = len - 8;
	eh->e_phnum = 0xffff;
}
static void mut_shdrs_past_end(unsigned char *b, size_t len)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	eh->e_shoff = (uint64_t)1 << 62;
	eh->e_shnum = 0xfffe;
	eh->e_shstrndx = 0xfffd;
}
/* Every PT_NOTE points far past the end of the file. */
static void mut_pt_note_huge(unsigned char *b, size_t len)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff + (size_t)i * eh->e_phentsize);
		if (ph->p_type == PT_NOTE) {
			ph->p_offset = UINT64_MAX - 16;
			ph->p_filesz = UINT64_MAX / 2;
		}
	}
}
static void mut_bad_class(unsigned char *b, size_t len)
{
	b[EI_CLASS] = 7;
}
/* Every SHT_NOTE section claims to run past the end of the file. */
static void mut_sh_note_huge(unsigned char *b, size_t len)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(b + eh->e_shoff + (size_t)i * eh->e_shentsize);
		if (sh->sh_type == SHT_NOTE)
			sh->sh_size = len;
	}
}

static void buildid__hostile_headers__error_not_crash(void **state)
{
	char p[512];
	size_t len;
	unsigned char *orig = bt_test_read_file(fx(p, "fx-sha1"), &len);
	struct bt_build_id want, id;
	assert_int_equal(bt_buildid_from_mem(orig, len, &want), 0);
	int err;
	/* a note whose lengths run past its block is skipped; there is no other build-id */
	assert_int_equal(mutated_id(orig, len, mut_descsz_huge, &id), -ENODATA);
	assert_int_equal(mutated_id(orig, len, mut_namesz_huge, &id), -ENODATA);
	/* broken program headers: the SHT_NOTE section still has it, or the file is refused */
	err = mutated_id(orig, len, mut_phdrs_past_end, &id);
	assert_true(err == -ENOEXEC || (err == 0 && bt_buildid_eq(&id, &want)));
	assert_int_equal(mutated_id(orig, len, mut_pt_note_huge, &id), 0);
	assert_true(bt_buildid_eq(&id, &want));
	/* broken section headers: the PT_NOTE segment still has it */
	err = mutated_id(orig, len, mut_shdrs_past_end, &id);
	assert_true(err == -ENOEXEC || (err == 0 && bt_buildid_eq(&id, &want)));
	err = mutated_id(orig, len, mut_sh_note_huge, &id);
	assert_true(err == 0 && bt_buildid_eq(&id, &want));
	assert_int_equal(mutated_id(orig, len, mut_bad_class, &id), -ENOEXEC);
	free(orig);
}

/* Random damage to the headers and notes at the front of several files. */
static void buildid__random_header_damage__error_or_valid(void **state)
{
	static const char *const names[] = { "fx-sha1", "fx-mips64", "fx-i386", "fx-note8" };
	char p[512];
	srand(1234);
	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		size_t len;
		unsigned char *orig = bt_test_read_file(fx(p, names[f]), &len);
		size_t span = len < 1024 ? len : 1024;
		for (int round = 0; round < 3000; round++) {
			unsigned char *copy = malloc(len);
			assert_non_null(copy);
			memcpy(copy, orig, len);
			for (int k = 0; k < 1 + rand() % 4; k++)
				copy[(size_t)rand() % span] = (unsigned char)rand();
			struct bt_build_id id;
			int err = bt_buildid_from_mem(copy, len, &id);
			if (err == 0)
				assert_true(id.len > 0 && id.len <= BT_BUILD_ID_MAXLEN);
			else if (err != -ENOEXEC && err != -ENODATA)
				fail_msg("%s round %d: %d", names[f], round, err);
			free(copy);
		}
		free(orig);
	}
}

static void buildid__hex__roundtrip_and_rejects(void **state)
{
	struct bt_build_id id, id2;
	char buf[2 * BT_BUILD_ID_MAXLEN + 1];
	assert_int_equal(bt_buildid_parse_hex("00fFa5", &id), 0);
	assert_int_equal(id.len, 3);
	assert_int_equal(id.data[0], 0x00);
	assert_int_equal(id.data[1], 0xff);
	assert_int_equal(id.data[2], 0xa5);
	assert_string_equal(bt_buildid_hex(&id, buf, sizeof(buf)), "00ffa5");
	/* the longest allowed, and one byte more */
	char longest[2 * BT_BUILD_ID_MAXLEN + 3];
	memset(longest, 'e', 2 * BT_BUILD_ID_MAXLEN);
	longest[2 * BT_BUILD_ID_MAXLEN] = '\0';
	assert_int_equal(bt_buildid_parse_hex(longest, &id2), 0);
	assert_int_equal(id2.len, BT_BUILD_ID_MAXLEN);
	assert_string_equal(bt_buildid_hex(&id2, buf, sizeof(buf)), longest);
	strcat(longest, "ee");
	assert_int_equal(bt_buildid_parse_hex(longest, &id2), -EINVAL);
	static const char *const bad[] = { "", "a", "abc", "zz", "0x12", "12 3", "12\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(bt_buildid_parse_hex(bad[i], &id2), -EINVAL);
	assert_int_equal(bt_buildid_parse_hex(NULL, &id2), -EINVAL);
	/* a buffer one byte short gives "" rather than a cut id */
	char small[6];
	assert_string_equal(bt_buildid_hex(&id, small, sizeof(small)), "");
	struct bt_build_id none = { 0 };
	assert_string_equal(bt_buildid_hex(&none, buf, sizeof(buf)), "");
}

/* The hex form of a real id is readelf's, and parsing it back gives an equal id. */
static void buildid__hex_of_real_ids__parses_back_equal(void **state)
{
	static const char *const names[] = { "fx-sha1", "fx-md5", "fx-hexid" };
	char p[512], hex[256], want[256];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct bt_build_id id, back;
		assert_int_equal(bt_buildid_from_path(fx(p, names[i]), &id), 0);
		readelf_id(p, want, sizeof(want));
		assert_string_equal(bt_buildid_hex(&id, hex, sizeof(hex)), want);
		assert_int_equal(bt_buildid_parse_hex(hex, &back), 0);
		assert_true(bt_buildid_eq(&id, &back));
	}
	struct bt_build_id a, b;
	assert_int_equal(bt_buildid_from_path(fx(p, "fx-sha1"), &a), 0);
	assert_int_equal(bt_buildid_from_path(fx(p, "fx-md5"), &b), 0);
	assert_false(bt_buildid_eq(&a, &b));
	b = a;
	b.data[b.len - 1] ^= 1;
	assert_false(bt_buildid_eq(&a, &b));
	b = a;
	b.len--;  /* a prefix is a different id */
	assert_false(bt_buildid_eq(&a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buildid__fixtures__match_readelf),
		cmocka_unit_test(buildid__flavours__lengths_follow_linker),
		cmocka_unit_test(buildid__without_note__enodata),
		cmocka_unit_test(buildid__eight_byte_aligned_notes__match_readelf),
		cmocka_unit_test(buildid__32bit_and_big_endian__match_readelf),
		cmocka_unit_test(buildid__readonly_big_endian_buffer__not_written),
		cmocka_unit_test(buildid__compressed_modules__match_tool_decompressed),
		cmocka_unit_test(buildid__system_libraries__match_readelf),
		cmocka_unit_test(buildid__from_fd__keeps_file_position),
		cmocka_unit_test(buildid__not_elf_or_missing__errors),
		cmocka_unit_test(buildid__non_regular_paths__einval_without_blocking),
		cmocka_unit_test(buildid__truncations__error_or_same_id),
		cmocka_unit_test(buildid__hostile_headers__error_not_crash),
		cmocka_unit_test(buildid__random_header_damage__error_or_valid),
		cmocka_unit_test(buildid__hex__roundtrip_and_rejects),
		cmocka_unit_test(buildid__hex_of_real_ids__parses_back_equal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
