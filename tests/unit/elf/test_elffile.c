/* test_elffile.c - the PT_LOAD layout, offset translation, sections and .gnu_debuglink against
 * readelf, objcopy and python's zlib; compressed, truncated and hostile files. */
#include "testutil.h"
#include "elf/elffile.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fx(char *buf, const char *name)
{
	return bt_test_fixture(buf, 512, name);
}

static struct bt_elf *open_or_fail(const char *path)
{
	struct bt_elf *e = NULL;
	int err = bt_elf_open_path(path, &e);
	if (err)
		fail_msg("%s: %d", path, err);
	return e;
}

/* The C library mapped into this process: a real shared object of the system. */
static void libc_path(char *buf, size_t len)
{
	assert_int_equal(bt_test_run(buf, len, "sed -n 's,^.* \\(/.*/libc\\.so\\.6\\)$,\\1,p' /proc/%d/maps | head -n1",
				     (int)getpid()), 0);
	buf[strcspn(buf, "\n")] = '\0';
	assert_true(buf[0] == '/');
}

/* Test files: fixtures of every kind, and the system's C library. */
static size_t test_files(char paths[][512], size_t max)
{
	static const char *const names[] = { "fx-sha1", "fx-nopie", "libfx.so", "fx-i386", "fx-mips",
					     "fx-mips64", "fx-sha1.debug", "fx-cxx", "fx-mod.ko" };
	size_t n = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && n < max; i++)
		fx(paths[n++], names[i]);
	if (n < max)
		libc_path(paths[n++], 512);
	return n;
}

static void elffile__layout__matches_readelf_loads(void **state)
{
	char paths[16][512];
	size_t n = test_files(paths, 16);
	for (size_t f = 0; f < n; f++) {
		struct bt_elf *e = open_or_fail(paths[f]);
		struct bt_elf_layout l;
		assert_int_equal(bt_elf_layout(e, &l), 0);
		char out[8192], type[64];
		bt_test_run(type, sizeof(type), "LC_ALL=C readelf -hW '%s' 2>/dev/null | awk '$1==\"Type:\"{print $2}'", paths[f]);
		static const char *const names[] = { [ET_REL] = "REL", [ET_EXEC] = "EXEC", [ET_DYN] = "DYN" };
		assert_true(l.type <= ET_DYN);
		assert_int_equal(strncmp(type, names[l.type], strlen(names[l.type])), 0);
		bt_test_run(out, sizeof(out),
			    "LC_ALL=C readelf -lW '%s' 2>/dev/null | awk '$1==\"LOAD\"{f=\"\"; for(i=7;i<NF;i++) f=f $i; print $2, $3, $5, $6, f}'",
			    paths[f]);
		char *line = out;
		size_t i = 0;
		for (char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1, i++) {
			*nl = '\0';
			uint64_t off, vaddr, filesz, memsz;
			char flags[8] = "";
			assert_int_equal(sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %7s",
						&off, &vaddr, &filesz, &memsz, flags), 5);
			assert_true(i < l.nload);
			assert_int_equal(l.load[i].offset, off);
			assert_int_equal(l.load[i].vaddr, vaddr);
			assert_int_equal(l.load[i].filesz, filesz);
			assert_int_equal(l.load[i].memsz, memsz);
			assert_int_equal(!!(l.load[i].flags & PF_R), strchr(flags, 'R') != NULL);
			assert_int_equal(!!(l.load[i].flags & PF_W), strchr(flags, 'W') != NULL);
			assert_int_equal(!!(l.load[i].flags & PF_X), strchr(flags, 'E') != NULL);
		}
		assert_int_equal(i, l.nload);
		bt_elf_close(e);
	}
}

/* Independent of the program headers: every allocated section's file bytes sit at its address. */
static void elffile__offset_to_vaddr__section_bytes_map_to_section_addresses(void **state)
{
	char paths[16][512];
	size_t n = test_files(paths, 16);
	for (size_t f = 0; f < n; f++) {
		struct bt_elf *e = open_or_fail(paths[f]);
		struct bt_elf_layout l;
		assert_int_equal(bt_elf_layout(e, &l), 0);
		char out[16384];
		bt_test_run(out, sizeof(out),
			    "LC_ALL=C readelf -SW '%s' 2>/dev/null | sed 's/\\[ */[/' | awk '$3!=\"NOBITS\" && $8 ~ /A/ && $6 != \"000000\" {print $4, $5, $6}'",
			    paths[f]);
		size_t checked = 0;
		char *line = out;
		for (char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
			*nl = '\0';
			uint64_t addr, off, size, va;
			assert_int_equal(sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64, &addr, &off, &size), 3);
			if (l.type == ET_REL || (l.type != ET_REL && strstr(paths[f], ".debug")))
				continue;  /* no segments, or sections no longer where the segments say */
			uint64_t probes[] = { off, off + size / 2, off + size - 1 };
			for (size_t k = 0; k < 3; k++) {
				int err = bt_elf_offset_to_vaddr(&l, probes[k], &va);
				if (err)
					fail_msg("%s: offset %#" PRIx64 ": %d", paths[f], probes[k], err);
				assert_int_equal(va, addr + (probes[k] - off));
				/* and back: the offset of that address, as uprobes take it */
				uint64_t back;
				assert_int_equal(bt_elf_vaddr_to_offset(&l, va, &back), 0);
				assert_int_equal(back, probes[k]);
			}
			checked++;
		}
		if (l.type != ET_REL && !strstr(paths[f], ".debug"))
			assert_true(checked >= 3);
		bt_elf_close(e);
	}
}

static void elffile__offset_to_vaddr__outside_loads__erange(void **state)
{
	char paths[16][512];
	size_t n = test_files(paths, 16);
	for (size_t f = 0; f < n; f++) {
		struct bt_elf *e = open_or_fail(paths[f]);
		struct bt_elf_layout l;
		assert_int_equal(bt_elf_layout(e, &l), 0);
		uint64_t va;
		for (size_t i = 0; i < l.nload; i++) {
			/* just past a segment's file bytes: only another segment can claim it */
			uint64_t past = l.load[i].offset + l.load[i].filesz;
			bool other = false;
			for (size_t j = 0; j < l.nload; j++)
				other |= past >= l.load[j].offset && past < l.load[j].offset + l.load[j].filesz;
			if (!other)
				assert_int_equal(bt_elf_offset_to_vaddr(&l, past, &va), -ERANGE);
		}
		assert_int_equal(bt_elf_offset_to_vaddr(&l, UINT64_MAX, &va), -ERANGE);
		bt_elf_close(e);
	}
}

/* Where segments overlap in the file, the executable one decides, whatever their order. */
static void elffile__offset_to_vaddr__overlap__executable_segment_wins(void **state)
{
	struct bt_elf_layout l = { .type = ET_DYN, .nload = 3 };
	l.load[0] = (struct bt_elf_load){ .vaddr = 0x0, .offset = 0, .filesz = 0x3000, .flags = PF_R };
	l.load[1] = (struct bt_elf_load){ .vaddr = 0x11000, .offset = 0x1000, .filesz = 0x1000, .flags = PF_R | PF_X };
	l.load[2] = (struct bt_elf_load){ .vaddr = 0x22000, .offset = 0x2000, .filesz = 0x2000, .flags = PF_R | PF_W };
	uint64_t va;
	assert_int_equal(bt_elf_offset_to_vaddr(&l, 0x1800, &va), 0);
	assert_int_equal(va, 0x11800);
	assert_int_equal(bt_elf_offset_to_vaddr(&l, 0x800, &va), 0);
	assert_int_equal(va, 0x800);
	/* not executable either way: the first one listed */
	assert_int_equal(bt_elf_offset_to_vaddr(&l, 0x2800, &va), 0);
	assert_int_equal(va, 0x2800);
	assert_int_equal(bt_elf_offset_to_vaddr(&l, 0x3800, &va), 0);
	assert_int_equal(va, 0x23800);
	assert_int_equal(bt_elf_offset_to_vaddr(&l, 0x4000, &va), -ERANGE);
	/* a segment whose end would wrap around 2^64 */
	struct bt_elf_layout w = { .nload = 1 };
	w.load[0] = (struct bt_elf_load){ .vaddr = 0, .offset = UINT64_MAX - 10, .filesz = 100, .flags = PF_X };
	assert_int_equal(bt_elf_offset_to_vaddr(&w, 5, &va), -ERANGE);
	assert_int_equal(bt_elf_offset_to_vaddr(&w, UINT64_MAX - 1, &va), 0);
	assert_int_equal(va, 9);
}

static uint32_t python_crc32(const char *path)
{
	char out[64];
	assert_int_equal(bt_test_run(out, sizeof(out),
				     "/usr/bin/python3 -c 'import sys,zlib; print(zlib.crc32(open(sys.argv[1],\"rb\").read()))' '%s'",
				     path), 0);
	return (uint32_t)strtoul(out, NULL, 10);
}

static void elffile__debuglink__matches_readelf_and_debug_file_crc(void **state)
{
	char p[512], dbg[512], out[1024];
	struct bt_elf *e = open_or_fail(fx(p, "fx-linked"));
	char name[256];
	uint32_t crc = 0;
	assert_int_equal(bt_elf_debuglink(e, name, sizeof(name), &crc), 0);
	bt_test_run(out, sizeof(out), "LC_ALL=C readelf -wk '%s' 2>/dev/null | sed -n "
				      "'/gnu_debuglink/,$ s/.*Separate debug info file: \\(.*\\)/\\1/p; s/.*CRC value: 0x\\([0-9a-f]*\\).*/\\1/p'",
		    p);
	char want_name[256];
	unsigned long want_crc;
	assert_int_equal(sscanf(out, "%255s %lx", want_name, &want_crc), 2);
	assert_string_equal(name, want_name);
	assert_int_equal(crc, (uint32_t)want_crc);
	/* the CRC is that of the debug file, by our reader and by python's zlib */
	int fd = open(fx(dbg, "fx-sha1.debug"), O_RDONLY);
	assert_true(fd >= 0);
	uint32_t file_crc;
	assert_int_equal(bt_elf_file_crc32(fd, UINT64_MAX, &file_crc), 0);
	assert_int_equal(file_crc, crc);
	assert_int_equal(python_crc32(dbg), crc);
	close(fd);
	bt_elf_close(e);
}

static void elffile__debuglink__absent_or_short_buffer__errors(void **state)
{
	char p[512], name[256];
	uint32_t crc;
	struct bt_elf *e = open_or_fail(fx(p, "fx-sha1"));
	assert_int_equal(bt_elf_debuglink(e, name, sizeof(name), &crc), -ENODATA);
	bt_elf_close(e);
	e = open_or_fail(fx(p, "fx-linked"));
	/* "fx-sha1.debug" needs 14 bytes with its NUL */
	assert_int_equal(bt_elf_debuglink(e, name, 13, &crc), -ENAMETOOLONG);
	assert_int_equal(bt_elf_debuglink(e, name, 14, &crc), 0);
	assert_string_equal(name, "fx-sha1.debug");
	assert_int_equal(bt_elf_debuglink(e, name, 0, &crc), -EINVAL);
	bt_elf_close(e);
}

/* CRC32 of whole files, including the empty file and one larger than the read buffer, and the
 * caller's file position is left alone. */
static void elffile__file_crc32__matches_python_zlib(void **state)
{
	char paths[3][512];
	libc_path(paths[0], sizeof(paths[0]));
	fx(paths[1], "fx-cxx");
	snprintf(paths[2], sizeof(paths[2]), "/tmp/bt-crc-empty-%d", (int)getpid());
	assert_int_equal(bt_test_run(NULL, 0, ": > %s", paths[2]), 0);
	for (size_t i = 0; i < 3; i++) {
		int fd = open(paths[i], O_RDONLY);
		assert_true(fd >= 0);
		lseek(fd, 7, SEEK_SET);
		uint32_t crc;
		assert_int_equal(bt_elf_file_crc32(fd, UINT64_MAX, &crc), 0);
		assert_int_equal(crc, python_crc32(paths[i]));
		assert_int_equal(lseek(fd, 0, SEEK_CUR), 7);
		close(fd);
	}
	unlink(paths[2]);
	uint32_t crc;
	assert_int_equal(bt_elf_file_crc32(-1, UINT64_MAX, &crc), -EINVAL);
	/* no more than max bytes are read: a file that grew past it is not taken */
	int fd = open(paths[1], O_RDONLY);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(bt_elf_file_crc32(fd, (uint64_t)st.st_size - 1, &crc), -EFBIG);
	assert_int_equal(bt_elf_file_crc32(fd, (uint64_t)st.st_size, &crc), 0);
	close(fd);
}

/* The extent an ELF file's headers claim is the file's own length for files as the toolchain
 * writes them (section headers last), program and debug files alike. */
static void elffile__extent__the_whole_file(void **state)
{
	char p[512];
	static const char *const names[] = { "fx-sha1", "fx-sha1.debug", "fx-cxx" };
	for (size_t i = 0; i < 3; i++) {
		struct bt_elf *e = open_or_fail(fx(p, names[i]));
		struct stat st;
		assert_int_equal(stat(p, &st), 0);
		uint64_t end = 0;
		assert_int_equal(bt_elf_extent(e, &end), 0);
		assert_int_equal(end, (uint64_t)st.st_size);
		bt_elf_close(e);
	}
}

/* Section bytes equal the file's bytes at the offset and size readelf gives, in both byte orders. */
static void elffile__section__bytes_match_readelf_offsets(void **state)
{
	static const struct { const char *file, *sec; } cases[] = {
		{ "fx-sha1", ".comment" }, { "fx-sha1", ".text" }, { "fx-linked", ".gnu_debuglink" },
		{ "fx-mips", ".text" }, { "fx-mips64", ".text" }, { "fx-mod.ko", ".note.gnu.build-id" },
	};
	char p[512], tmp[] = "/tmp/bt-sec-XXXXXX";
	int tfd = mkstemp(tmp);
	assert_true(tfd >= 0);
	close(tfd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(bt_test_run(NULL, 0,
					     "LC_ALL=C readelf -SW '%s' 2>/dev/null | sed 's/\\[ */[/' | awk '$2==\"%s\"{print $5, $6}' | "
					     "{ read off size; tail -c +$((0x$off + 1)) '%s' | head -c $((0x$size)); } > %s",
					     fx(p, cases[i].file), cases[i].sec, p, tmp), 0);
		size_t wlen;
		void *want = bt_test_read_file(tmp, &wlen);
		struct bt_elf *e = open_or_fail(p);
		const void *data;
		size_t len;
		assert_int_equal(bt_elf_section(e, cases[i].sec, &data, &len), 0);
		assert_true(len > 0);
		assert_int_equal(len, wlen);
		assert_memory_equal(data, want, len);
		bt_elf_close(e);
		free(want);
	}
	unlink(tmp);
}

/* After libelf has converted every section (as the note and symbol readers make it), a section's
 * bytes are still the stored ones, in the file's byte order. */
static void elffile__section__raw_bytes_after_other_readers(void **state)
{
	char p[512];
	struct bt_elf *e = open_or_fail(fx(p, "fx-mips64"));
	struct bt_build_id id;
	assert_int_equal(bt_elf_build_id(e, &id), 0);
	/* libelf's converted view of every section, as the symbol table loader takes it */
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(bt_elf_handle(e), scn)) != NULL)
		elf_getdata(scn, NULL);
	const void *d;
	size_t len;
	assert_int_equal(bt_elf_section(e, ".note.gnu.build-id", &d, &len), 0);
	/* big-endian raw note: namesz 4, descsz 16 (md5), type 3, "GNU", then the id */
	static const unsigned char head[] = { 0, 0, 0, 4, 0, 0, 0, 16, 0, 0, 0, 3, 'G', 'N', 'U', 0 };
	assert_int_equal(len, sizeof(head) + 16);
	assert_memory_equal(d, head, sizeof(head));
	assert_memory_equal((const unsigned char *)d + sizeof(head), id.data, 16);
	assert_int_equal(bt_elf_section(e, ".symtab", &d, &len), 0);
	char out[64];
	bt_test_run(out, sizeof(out), "LC_ALL=C readelf -SW '%s' | sed 's/\\[ */[/' | awk '$2==\".symtab\"{print $6}'", p);
	assert_int_equal(len, strtoul(out, NULL, 16));
	bt_elf_close(e);
}

static void elffile__section__nobits_or_absent__enodata(void **state)
{
	char p[512];
	struct bt_elf *e = open_or_fail(fx(p, "fx-sha1"));
	const void *data;
	size_t len;
	assert_int_equal(bt_elf_section(e, ".bss", &data, &len), -ENODATA);
	assert_int_equal(bt_elf_section(e, ".no-such-section", &data, &len), -ENODATA);
	bt_elf_close(e);
	/* in a debug file the code sections keep their headers but not their bytes */
	char out[256];
	bt_test_run(out, sizeof(out), "LC_ALL=C readelf -SW '%s' 2>/dev/null | awk '$2==\".text\"{print $3}'", fx(p, "fx-sha1.debug"));
	assert_string_equal(out, "NOBITS\n");
	e = open_or_fail(p);
	assert_int_equal(bt_elf_section(e, ".text", &data, &len), -ENODATA);
	bt_elf_close(e);
}

/* A compressed file opens as its contents: same layout, same sections. */
static void elffile__open_path__compressed_equals_plain(void **state)
{
	static const struct { const char *packed, *plain, *sec; } cases[] = {
		{ "fx-sha1.xz", "fx-sha1", ".text" }, { "fx-mod.ko.xz", "fx-mod.ko", ".text" },
		{ "fx-mod.ko.zst", "fx-mod.ko", ".symtab" }, { "fx-mod.ko.gz", "fx-mod.ko", ".strtab" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char a[512], b[512];
		struct bt_elf *pe = open_or_fail(fx(a, cases[i].packed)), *qe = open_or_fail(fx(b, cases[i].plain));
		struct bt_elf_layout la, lb;
		assert_int_equal(bt_elf_layout(pe, &la), 0);
		assert_int_equal(bt_elf_layout(qe, &lb), 0);
		assert_memory_equal(&la, &lb, sizeof(la));
		const void *da, *db;
		size_t na, nb;
		assert_int_equal(bt_elf_section(pe, cases[i].sec, &da, &na), 0);
		assert_int_equal(bt_elf_section(qe, cases[i].sec, &db, &nb), 0);
		assert_int_equal(na, nb);
		assert_memory_equal(da, db, na);
		bt_elf_close(pe);
		bt_elf_close(qe);
		/* by fd, compressed bytes are not ELF */
		int fd = open(a, O_RDONLY);
		struct bt_elf *e;
		assert_int_equal(bt_elf_open_fd(fd, &e), -ENOEXEC);
		close(fd);
	}
}

static void elffile__open__non_regular_or_not_elf__errors(void **state)
{
	struct bt_elf *e = NULL;
	assert_int_equal(bt_elf_open_path("/dev/null", &e), -EINVAL);
	assert_int_equal(bt_elf_open_path("/tmp", &e), -EINVAL);
	assert_int_equal(bt_elf_open_path("/nonexistent/elf", &e), -ENOENT);
	int fd = open("/dev/zero", O_RDONLY);
	assert_int_equal(bt_elf_open_fd(fd, &e), -EINVAL);
	close(fd);
	char p[512];
	fd = open(fx(p, "fx-mod.ko.gz"), O_RDONLY);
	assert_int_equal(bt_elf_open_fd(fd, &e), -ENOEXEC);
	close(fd);
	static const char junk[64] = "not an ELF file at all, just text";
	assert_int_equal(bt_elf_open_mem(junk, sizeof(junk), &e), -ENOEXEC);
	/* the magic followed by garbage that libelf cannot classify */
	char bad[64];
	memset(bad, 0xee, sizeof(bad));
	memcpy(bad, ELFMAG, SELFMAG);
	assert_int_equal(bt_elf_open_mem(bad, sizeof(bad), &e), -ENOEXEC);
	assert_int_equal(bt_elf_open_mem(NULL, 10, &e), -EINVAL);
	assert_null(bt_elf_handle(NULL));
}

/* The libelf handle is usable for what buildtrace does not wrap: class and byte order as readelf. */
static void elffile__handle__class_and_data_match_readelf(void **state)
{
	char paths[16][512];
	size_t n = test_files(paths, 16);
	for (size_t f = 0; f < n; f++) {
		struct bt_elf *e = open_or_fail(paths[f]);
		Elf *elf = bt_elf_handle(e);
		assert_non_null(elf);
		char out[256];
		bt_test_run(out, sizeof(out), "LC_ALL=C readelf -hW '%s' 2>/dev/null | grep -E 'Class:|Data:' | tr -s ' '", paths[f]);
		assert_int_equal(gelf_getclass(elf) == ELFCLASS32, strstr(out, "ELF32") != NULL);
		const char *ident = elf_getident(elf, NULL);
		assert_non_null(ident);
		assert_int_equal(ident[EI_DATA] == ELFDATA2MSB, strstr(out, "big endian") != NULL);
		bt_elf_close(e);
	}
}

/* Exactly sized prefixes: each either fails to open or answers every query without crashing,
 * with the same program headers as the whole file once they are in. */
static void elffile__truncations__error_or_consistent(void **state)
{
	static const char *const names[] = { "fx-linked", "fx-mips64", "libfx.so", "fx-mod.ko" };
	char p[512];
	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		size_t len;
		unsigned char *full = bt_test_read_file(fx(p, names[f]), &len);
		struct bt_elf *e;
		struct bt_elf_layout want, got;
		assert_int_equal(bt_elf_open_mem(full, len, &e), 0);
		assert_int_equal(bt_elf_layout(e, &want), 0);
		bt_elf_close(e);
		size_t opened = 0;
		for (size_t cut = 0; cut < len; cut += cut < 4096 ? 1 : 31) {
			unsigned char *copy = malloc(cut ? cut : 1);
			assert_non_null(copy);
			memcpy(copy, full, cut);
			int err = bt_elf_open_mem(copy, cut, &e);
			if (err) {
				assert_int_equal(err, -ENOEXEC);
			} else {
				opened++;
				err = bt_elf_layout(e, &got);
				assert_true(err == 0 || err == -ENOEXEC);
				if (err == 0 && got.nload == want.nload)
					assert_memory_equal(&got, &want, sizeof(got));
				char name[256];
				uint32_t crc;
				err = bt_elf_debuglink(e, name, sizeof(name), &crc);
				assert_true(err == 0 || err == -ENODATA || err == -ENOEXEC);
				const void *d;
				size_t dl;
				err = bt_elf_section(e, ".text", &d, &dl);
				assert_true(err == 0 || err == -ENODATA || err == -ENOEXEC);
				if (err == 0)
					assert_true((const unsigned char *)d >= copy && (const unsigned char *)d + dl <= copy + cut);
				struct bt_build_id id;
				err = bt_elf_build_id(e, &id);
				assert_true(err == 0 || err == -ENODATA);
				bt_elf_close(e);
			}
			free(copy);
		}
		assert_true(opened > 0);
		free(full);
	}
}

/* Section headers rewritten with offsets, sizes, names and links far out of range. */
static void elffile__hostile_section_headers__no_crash(void **state)
{
	char p[512];
	size_t len;
	unsigned char *orig = bt_test_read_file(fx(p, "fx-linked"), &len);
	const Elf64_Ehdr *oeh = (const Elf64_Ehdr *)orig;
	assert_int_equal(oeh->e_ident[EI_CLASS], ELFCLASS64);
	srand(77);
	static const uint64_t nasty[] = { 0, 1, 0x7fffffff, 0xffffffff, UINT64_MAX, UINT64_MAX - 7, 1ull << 40 };
	size_t nn = sizeof(nasty) / sizeof(nasty[0]);
	int ok = 0;
	for (int round = 0; round < 4000; round++) {
		unsigned char *b = malloc(len);
		assert_non_null(b);
		memcpy(b, orig, len);
		Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
		Elf64_Shdr *sh = (Elf64_Shdr *)(b + eh->e_shoff);
		Elf64_Shdr *s = &sh[(size_t)rand() % eh->e_shnum];
		switch (rand() % 8) {
		case 0: s->sh_offset = nasty[(size_t)rand() % nn]; break;
		case 1: s->sh_size = nasty[(size_t)rand() % nn]; break;
		case 2: s->sh_name = (uint32_t)nasty[(size_t)rand() % nn]; break;
		case 3: s->sh_link = (uint32_t)nasty[(size_t)rand() % nn]; break;
		case 4: s->sh_type = (uint32_t)(rand() % 20); break;
		case 5: s->sh_addralign = nasty[(size_t)rand() % nn]; break;
		case 6: eh->e_shstrndx = (uint16_t)rand(); break;
		default: eh->e_shnum = (uint16_t)rand(); break;
		}
		struct bt_elf *e;
		if (bt_elf_open_mem(b, len, &e) == 0) {
			char name[256];
			uint32_t crc;
			int err = bt_elf_debuglink(e, name, sizeof(name), &crc);
			assert_true(err == 0 || err == -ENODATA || err == -ENOEXEC);
			if (err == 0) {
				ok++;
				assert_true(strlen(name) < sizeof(name));
			}
			const void *d;
			size_t dl;
			if (bt_elf_section(e, ".comment", &d, &dl) == 0 &&
			    !((const unsigned char *)d >= b && (const unsigned char *)d + dl <= b + len))
				fail_msg("round %d: %p+%zu outside %p+%zu", round, d, dl, (void *)b, len);
			struct bt_build_id id;
			err = bt_elf_build_id(e, &id);
			assert_true(err == 0 || err == -ENODATA);
			bt_elf_close(e);
		}
		free(b);
	}
	assert_true(ok > 0);
	free(orig);
}

/* Offset of a section's bytes, from readelf. */
static size_t readelf_section_offset(const char *path, const char *sec)
{
	char out[64];
	bt_test_run(out, sizeof(out), "LC_ALL=C readelf -SW '%s' 2>/dev/null | sed 's/\\[ */[/' | awk '$2==\"%s\"{print $5}'", path, sec);
	return (size_t)strtoul(out, NULL, 16);
}

/* .gnu_debuglink contents without a NUL, or too short for the CRC after the name. */
static void elffile__debuglink__malformed_contents__enoexec(void **state)
{
	char p[512];
	size_t len;
	unsigned char *orig = bt_test_read_file(fx(p, "fx-linked"), &len);
	size_t at = readelf_section_offset(p, ".gnu_debuglink");
	assert_true(at > 0 && at < len);
	assert_memory_equal(orig + at, "fx-sha1.debug", 14);
	/* the section is 20 bytes: 14 of name, 2 of padding, 4 of CRC */
	struct { size_t pos; const char *bytes; size_t n; } muts[] = {
		{ 0, "xxxxxxxxxxxxxxxxxxxx", 20 },         /* no NUL anywhere */
		{ 0, "fx-sha1.debugXXXX\0", 18 },          /* NUL leaves no room for the CRC */
		{ 0, "\0", 1 },                             /* empty name */
	};
	for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		unsigned char *b = malloc(len);
		assert_non_null(b);
		memcpy(b, orig, len);
		memcpy(b + at + muts[i].pos, muts[i].bytes, muts[i].n);
		struct bt_elf *e;
		assert_int_equal(bt_elf_open_mem(b, len, &e), 0);
		char name[256];
		uint32_t crc;
		assert_int_equal(bt_elf_debuglink(e, name, sizeof(name), &crc), -ENOEXEC);
		bt_elf_close(e);
		free(b);
	}
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(elffile__layout__matches_readelf_loads),
		cmocka_unit_test(elffile__offset_to_vaddr__section_bytes_map_to_section_addresses),
		cmocka_unit_test(elffile__offset_to_vaddr__outside_loads__erange),
		cmocka_unit_test(elffile__offset_to_vaddr__overlap__executable_segment_wins),
		cmocka_unit_test(elffile__debuglink__matches_readelf_and_debug_file_crc),
		cmocka_unit_test(elffile__debuglink__absent_or_short_buffer__errors),
		cmocka_unit_test(elffile__file_crc32__matches_python_zlib),
		cmocka_unit_test(elffile__extent__the_whole_file),
		cmocka_unit_test(elffile__section__bytes_match_readelf_offsets),
		cmocka_unit_test(elffile__section__raw_bytes_after_other_readers),
		cmocka_unit_test(elffile__section__nobits_or_absent__enodata),
		cmocka_unit_test(elffile__open_path__compressed_equals_plain),
		cmocka_unit_test(elffile__open__non_regular_or_not_elf__errors),
		cmocka_unit_test(elffile__handle__class_and_data_match_readelf),
		cmocka_unit_test(elffile__truncations__error_or_consistent),
		cmocka_unit_test(elffile__hostile_section_headers__no_crash),
		cmocka_unit_test(elffile__debuglink__malformed_contents__enoexec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
