/* test_kident.c - kernel and module identity against real oracles (perf buildid-list -k, readelf -n,
 * /proc/modules read by the shell) and against fake ROOT trees built in a temporary directory. */
#include "testutil.h"
#include "kernel/kident.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
	char dir[64];            /* scratch directory */
	char self[4096];         /* this test binary: an ELF with a GNU build-id */
	char self_hex[160];
	char other[4096];        /* another ELF, different build-id */
	char other_hex[160];
	char nobid[4096];        /* an ELF without build-id */
};

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* readelf is the oracle for what a file's build-id is. */
static void readelf_bid(const char *path, char *hex, size_t len)
{
	assert_int_equal(bt_test_run(hex, len,
				     "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -n1",
				     path), 0);
	trim(hex);
	assert_true(strlen(hex) >= 2);
}

static void hex_of(const struct bt_build_id *id, char *buf, size_t len)
{
	bt_buildid_hex(id, buf, len);
}

static void sh(const char *cmd)
{
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "%s 2>&1", cmd);
	if (rc != 0)
		fail_msg("command failed (%d): %s\n%s", rc, cmd, out);
}

static void put(const char *root, const char *rel, const void *data, size_t len)
{
	char path[4096], cmd[8192];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	sh(cmd);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void put_str(const char *root, const char *rel, const char *s)
{
	put(root, rel, s, strlen(s));
}

/* The raw .note.gnu.build-id section of an ELF file: exactly what sysfs note files hold. */
static void put_raw_note(const char *root, const char *rel, const char *elf)
{
	char cmd[16384];
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p \"$(dirname '%s/%s')\" && objcopy -O binary --only-section=.note.gnu.build-id '%s' '%s/%s'",
		 root, rel, elf, root, rel);
	sh(cmd);
}

static size_t read_all(const char *path, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, len);
	close(fd);
	assert_true(n >= 0);
	return (size_t)n;
}

static void new_root(const struct fx *f, const char *name, char *root, size_t len)
{
	snprintf(root, len, "%s/%s", f->dir, name);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", root, root);
	sh(cmd);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bt-kident-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	ssize_t n = readlink("/proc/self/exe", f->self, sizeof(f->self) - 1);
	if (n <= 0)
		return -1;
	f->self[n] = '\0';
	snprintf(f->other, sizeof(f->other), "%s/other", f->dir);
	snprintf(f->nobid, sizeof(f->nobid), "%s/nobid", f->dir);
	char out[4096];
	if (bt_test_run(out, sizeof(out),
			"printf 'int main(void){return 7;}\\n' | cc -x c - -o '%s' -Wl,--build-id=sha1 2>&1 && "
			"printf 'int main(void){return 8;}\\n' | cc -x c - -o '%s' -Wl,--build-id=none 2>&1",
			f->other, f->nobid) != 0)
		return -1;
	*state = f;
	readelf_bid(f->self, f->self_hex, sizeof(f->self_hex));
	readelf_bid(f->other, f->other_hex, sizeof(f->other_hex));
	return strcmp(f->self_hex, f->other_hex) ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	bt_test_run(NULL, 0, "%s", cmd);
	free(f);
	return 0;
}

/* ---- notes ---- */

/* One note, padded to align. */
static size_t note(uint8_t *p, uint32_t type, const char *name, const void *desc, uint32_t descsz,
		   size_t align)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	memcpy(p, &namesz, 4);
	memcpy(p + 4, &descsz, 4);
	memcpy(p + 8, &type, 4);
	memcpy(p + 12, name, namesz);
	size_t off = (12 + namesz + align - 1) & ~(align - 1);
	memset(p + 12 + namesz, 0, off - 12 - namesz);
	memcpy(p + off, desc, descsz);
	size_t end = (off + descsz + align - 1) & ~(align - 1);
	memset(p + off + descsz, 0, end - off - descsz);
	return end;
}

static void kident__real_sys_kernel_notes__equals_perf_buildid_list(void **state)
{
	if (access("/sys/kernel/notes", R_OK) != 0)
		skip();
	char want[256];
	/* perf reads the same file with its own parser; without perf (or privileges) there is no oracle. */
	if (bt_test_run(want, sizeof(want), "perf buildid-list -k 2>/dev/null") != 0)
		skip();
	trim(want);
	if (strlen(want) < 2)
		skip();
	struct bt_build_id id;
	assert_int_equal(bt_kident_kernel_build_id("", &id), 0);
	char hex[160];
	hex_of(&id, hex, sizeof(hex));
	assert_string_equal(hex, want);
}

static void kident__objcopy_raw_note__equals_readelf(void **state)
{
	struct fx *f = *state;
	char root[256], path[4400];
	new_root(f, "raw", root, sizeof(root));
	put_raw_note(root, "note", f->self);
	snprintf(path, sizeof(path), "%s/note", root);
	uint8_t buf[512];
	size_t n = read_all(path, buf, sizeof(buf));
	struct bt_build_id id;
	assert_int_equal(bt_kident_parse_notes(buf, n, &id), 0);
	char hex[160];
	hex_of(&id, hex, sizeof(hex));
	assert_string_equal(hex, f->self_hex);
}

/* A kernel's notes file: Xen and Linux notes around the GNU one, as /sys/kernel/notes has them. */
static void kident__fake_kernel_notes__gnu_note_found_among_others(void **state)
{
	struct fx *f = *state;
	char root[256], path[4400];
	new_root(f, "knotes", root, sizeof(root));
	put_raw_note(root, "gnu", f->self);
	snprintf(path, sizeof(path), "%s/gnu", root);
	uint8_t gnu[512];
	size_t gn = read_all(path, gnu, sizeof(gnu));

	uint8_t blob[2048];
	size_t n = 0;
	const uint32_t xen[3] = { 0, 1, 0x3fffffff };
	n += note(blob + n, 0x13, "Xen", xen, sizeof(xen), 4);
	n += note(blob + n, 0x100, "Linux", "6.1.0-test", 11, 4);
	memcpy(blob + n, gnu, gn);
	n += gn;
	n += note(blob + n, 0x12, "Xen", xen, 8, 4);
	put(root, "sys/kernel/notes", blob, n);

	struct bt_build_id id;
	assert_int_equal(bt_kident_kernel_build_id(root, &id), 0);
	char hex[160];
	hex_of(&id, hex, sizeof(hex));
	assert_string_equal(hex, f->self_hex);
}

static void kident__eight_byte_padded_notes__still_found(void **state)
{
	uint8_t blob[512];
	size_t n = 0;
	/* a 12-byte descriptor: 4-byte padding would put the next note 4 bytes early */
	n += note(blob + n, 0x100, "Linux", "abcdefghijk", 12, 8);
	const uint8_t want[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	n += note(blob + n, 3, "GNU", want, sizeof(want), 8);
	struct bt_build_id id;
	assert_int_equal(bt_kident_parse_notes(blob, n, &id), 0);
	assert_int_equal(id.len, sizeof(want));
	assert_memory_equal(id.data, want, sizeof(want));
}

static void kident__notes_without_gnu_note__enodata(void **state)
{
	uint8_t blob[256];
	size_t n = 0;
	const uint32_t xen[2] = { 1, 2 };
	n += note(blob + n, 0x12, "Xen", xen, sizeof(xen), 4);
	n += note(blob + n, 3, "GNX", "0123456789abcdef0123", 20, 4);   /* right type, wrong owner */
	n += note(blob + n, 4, "GNU", "0123456789abcdef0123", 20, 4);   /* right owner, wrong type */
	struct bt_build_id id;
	assert_int_equal(bt_kident_parse_notes(blob, n, &id), -ENODATA);
	assert_int_equal(id.len, 0);
	assert_int_equal(bt_kident_parse_notes(blob, 0, &id), -ENODATA);
	/* trailing zero padding shorter than a header is not an error */
	memset(blob + n, 0, 8);
	assert_int_equal(bt_kident_parse_notes(blob, n + 8, &id), -ENODATA);
}

static void kident__malformed_notes__rejected(void **state)
{
	uint8_t blob[256];
	struct bt_build_id id;
	/* name size running past the end */
	uint32_t hdr[3] = { 0xfffffff0u, 20, 3 };
	memcpy(blob, hdr, sizeof(hdr));
	assert_int_equal(bt_kident_parse_notes(blob, 64, &id), -EINVAL);
	/* descriptor size running past the end */
	size_t n = note(blob, 3, "GNU", "0123456789abcdef0123", 20, 4);
	uint32_t big = 0x7fffffff;
	memcpy(blob + 4, &big, 4);
	assert_int_equal(bt_kident_parse_notes(blob, n, &id), -EINVAL);
	/* an empty build-id and one longer than any hash */
	n = note(blob, 3, "GNU", "", 0, 4);
	assert_int_equal(bt_kident_parse_notes(blob, n, &id), -EINVAL);
	uint8_t long_id[BT_BUILD_ID_MAXLEN + 4] = { 0 };
	n = note(blob, 3, "GNU", long_id, sizeof(long_id), 4);
	assert_int_equal(bt_kident_parse_notes(blob, n, &id), -EINVAL);
	/* non-zero bytes too short for a header */
	n = note(blob, 0x12, "Xen", "abcd", 4, 4);
	memcpy(blob + n, "\1\2\3", 3);
	assert_int_equal(bt_kident_parse_notes(blob, n + 3, &id), -EINVAL);
	assert_int_equal(bt_kident_parse_notes(NULL, 4, &id), -EINVAL);
}

static void kident__truncated_notes__never_a_wrong_id(void **state)
{
	uint8_t blob[256];
	size_t n = 0;
	n += note(blob + n, 0x100, "Linux", "6.1", 4, 4);
	size_t gnu_at = n;
	const uint8_t want[20] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	n += note(blob + n, 3, "GNU", want, sizeof(want), 4);
	for (size_t len = 0; len <= n; len++) {
		uint8_t *copy = malloc(len ? len : 1);   /* exact size: reads past len show up under ASan */
		assert_non_null(copy);
		memcpy(copy, blob, len);
		struct bt_build_id id;
		int err = bt_kident_parse_notes(copy, len, &id);
		if (len >= gnu_at + 16 + sizeof(want)) {
			assert_int_equal(err, 0);
			assert_memory_equal(id.data, want, sizeof(want));
		} else {
			assert_true(err == -EINVAL || err == -ENODATA);
		}
		free(copy);
	}
}

static void kident__random_notes__no_crash(void **state)
{
	srand(1234);
	uint8_t buf[256];
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(rand() % (int)sizeof(buf));
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)(rand() % 4 == 0 ? rand() : rand() % 24);
		struct bt_build_id id;
		int err = bt_kident_parse_notes(buf, len, &id);
		assert_true(err == 0 || err == -EINVAL || err == -ENODATA);
		if (err == 0)
			assert_true(id.len > 0 && id.len <= BT_BUILD_ID_MAXLEN);
	}
}

/* ---- modules ---- */

static const char fake_modules[] =
	"nls_ascii 16384 0 - Live 0xffffffffc0260000\n"
	"crc7 12288 0 - Live 0xffffffffc0200000 (E)\n"
	"vbox_thing 65536 1 crc7, Loading 0xffffffffc0300000 (OE)\n";

static void fake_module_root(const struct fx *f, const char *name, char *root, size_t len)
{
	new_root(f, name, root, len);
	put_str(root, "proc/modules", fake_modules);
	put_raw_note(root, "sys/module/crc7/notes/.note.gnu.build-id", f->self);
	put_raw_note(root, "sys/module/nls_ascii/notes/.note.gnu.build-id", f->other);
	/* vbox_thing: its sysfs directory exists but without notes */
	put_str(root, "sys/module/vbox_thing/refcnt", "1\n");
}

static void kident__fake_proc_modules__names_bases_sizes_build_ids(void **state)
{
	struct fx *f = *state;
	char root[256];
	fake_module_root(f, "mods", root, sizeof(root));
	struct bt_kmodules m;
	assert_int_equal(bt_kident_modules_load(root, &m), 0);
	assert_int_equal(m.n, 3);
	assert_false(m.addrs_hidden);
	/* sorted by base */
	assert_string_equal(m.mods[0].name, "crc7");
	assert_string_equal(m.mods[1].name, "nls_ascii");
	assert_string_equal(m.mods[2].name, "vbox_thing");
	assert_int_equal(m.mods[0].base, 0xffffffffc0200000ull);
	assert_int_equal(m.mods[0].size, 12288);
	assert_int_equal(m.mods[2].size, 65536);

	char hex[160];
	assert_int_equal(m.mods[0].build_id_err, 0);
	hex_of(&m.mods[0].build_id, hex, sizeof(hex));
	assert_string_equal(hex, f->self_hex);
	assert_int_equal(m.mods[1].build_id_err, 0);
	hex_of(&m.mods[1].build_id, hex, sizeof(hex));
	assert_string_equal(hex, f->other_hex);
	assert_int_equal(m.mods[2].build_id_err, -ENOENT);
	assert_int_equal(m.mods[2].build_id.len, 0);

	const struct bt_kmodule *k = bt_kident_module_by_name(&m, "nls_ascii");
	assert_non_null(k);
	assert_int_equal(k->base, 0xffffffffc0260000ull);
	assert_null(bt_kident_module_by_name(&m, "nls"));
	bt_kident_modules_free(&m);
	assert_int_equal(m.n, 0);
}

static void kident__module_at__half_open_ranges(void **state)
{
	struct bt_kmodules m;
	assert_int_equal(bt_kident_modules_parse(fake_modules, strlen(fake_modules), NULL, &m), 0);
	const uint64_t crc7 = 0xffffffffc0200000ull, nls = 0xffffffffc0260000ull;
	assert_string_equal(bt_kident_module_at(&m, crc7)->name, "crc7");
	assert_string_equal(bt_kident_module_at(&m, crc7 + 12287)->name, "crc7");
	errno = 0;
	assert_null(bt_kident_module_at(&m, crc7 + 12288));   /* the gap before nls_ascii */
	assert_int_equal(errno, ENOENT);
	assert_null(bt_kident_module_at(&m, crc7 - 1));
	assert_string_equal(bt_kident_module_at(&m, nls + 100)->name, "nls_ascii");
	assert_string_equal(bt_kident_module_at(&m, 0xffffffffc0300000ull + 65535)->name, "vbox_thing");
	assert_null(bt_kident_module_at(&m, 0xffffffffc0300000ull + 65536));
	assert_null(bt_kident_module_at(&m, UINT64_MAX));
	assert_null(bt_kident_module_at(&m, 0));
	bt_kident_modules_free(&m);
}

static void kident__zero_bases__addresses_hidden(void **state)
{
	const char hidden[] =
		"crc7 12288 0 - Live 0x0000000000000000\n"
		"nls_ascii 16384 0 - Live 0x0000000000000000 (E)\n";
	struct bt_kmodules m;
	assert_int_equal(bt_kident_modules_parse(hidden, strlen(hidden), NULL, &m), 0);
	assert_int_equal(m.n, 2);
	assert_true(m.addrs_hidden);
	errno = 0;
	assert_null(bt_kident_module_at(&m, 0));
	assert_int_equal(errno, EACCES);
	assert_non_null(bt_kident_module_by_name(&m, "nls_ascii"));
	bt_kident_modules_free(&m);

	/* an empty list hides nothing */
	assert_int_equal(bt_kident_modules_parse("", 0, NULL, &m), 0);
	assert_int_equal(m.n, 0);
	assert_false(m.addrs_hidden);
	bt_kident_modules_free(&m);
}

static void kident__malformed_proc_modules__einval(void **state)
{
	static const char *const bad[] = {
		"crc7 12288 0 - Live\n",                             /* no address */
		"crc7 12288 0 - Live ffffffffc0200000\n",            /* no 0x */
		"crc7 12288 0 - Live 0x\n",
		"crc7 12288 0 - Live 0xfffffffgc0200000\n",
		"crc7 -12288 0 - Live 0xffffffffc0200000\n",
		"crc7 12k 0 - Live 0xffffffffc0200000\n",
		"crc/7 12288 0 - Live 0xffffffffc0200000\n",
		"crc7 4096 0 - Live 0xfffffffffffff000\n",           /* wraps around */
		"crc7 12288 0 - Live 0x1ffffffffffffffff\n",         /* overflows */
		"a_module_name_that_is_far_too_long_for_the_kernel_to_allow 1 0 - Live 0x1000\n",
		"good 1 0 - Live 0x1000\nbad line\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bt_kmodules m;
		int err = bt_kident_modules_parse(bad[i], strlen(bad[i]), NULL, &m);
		if (err != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(m.n, 0);
		assert_null(m.mods);
	}
	struct bt_kmodules m;
	assert_int_equal(bt_kident_modules_parse("a 1 0 - Live 0x1\0b", 18, NULL, &m), -EINVAL);
}

static void kident__no_proc_modules__enoent_and_empty(void **state)
{
	struct fx *f = *state;
	char root[256];
	new_root(f, "nomods", root, sizeof(root));
	struct bt_kmodules m = { .n = 99 };
	assert_int_equal(bt_kident_modules_load(root, &m), -ENOENT);
	assert_int_equal(m.n, 0);
	assert_null(m.mods);
}

static void kident__bad_module_names__einval(void **state)
{
	struct fx *f = *state;
	char root[256];
	fake_module_root(f, "badnames", root, sizeof(root));
	struct bt_build_id id;
	assert_int_equal(bt_kident_module_build_id(root, "crc7", &id), 0);
	assert_int_equal(bt_kident_module_build_id(root, "../module/crc7", &id), -EINVAL);
	assert_int_equal(bt_kident_module_build_id(root, "", &id), -EINVAL);
	assert_int_equal(bt_kident_module_build_id(root, "..", &id), -EINVAL);
	assert_int_equal(bt_kident_module_build_id(root, NULL, &id), -EINVAL);
	assert_int_equal(bt_kident_module_build_id(root, "nosuchmod", &id), -ENOENT);
}

/* What bt_kident_module_notes reported: "NAME=HEX" per module, in call order. */
struct seen_notes {
	char lines[8][256];
	size_t n;
	size_t stop_after;   /* 0: never stop */
};

static int collect_note(void *ctx, const char *name, const struct bt_build_id *id)
{
	struct seen_notes *s = ctx;
	char hex[160];
	hex_of(id, hex, sizeof(hex));
	assert_true(s->n < 8);
	snprintf(s->lines[s->n++], sizeof(s->lines[0]), "%s=%s", name, hex);
	return s->stop_after && s->n == s->stop_after ? 42 : 0;
}

static bool saw_note(const struct seen_notes *s, const char *line)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->lines[i], line))
			return true;
	return false;
}

/* The sysfs walk, with no /proc/modules: modules with notes (8-byte padded ones too) are reported,
 * a built-in module's directory without notes and entries that are not module names are not. */
static void kident__module_notes__sysfs_modules_with_build_ids(void **state)
{
	struct fx *f = *state;
	char root[256], line[256];
	fake_module_root(f, "notes", root, sizeof(root));
	uint8_t blob[256];
	size_t n = note(blob, 0x100, "Linux", "abcdefghijk", 12, 8);
	const uint8_t pad8[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	n += note(blob + n, 3, "GNU", pad8, sizeof(pad8), 8);
	put(root, "sys/module/pad8_mod/notes/.note.gnu.build-id", blob, n);
	put_raw_note(root, "sys/module/bad.name/notes/.note.gnu.build-id", f->self);

	struct seen_notes s = { .n = 0 };
	assert_int_equal(bt_kident_module_notes(root, collect_note, &s), 0);
	assert_int_equal(s.n, 3);
	snprintf(line, sizeof(line), "crc7=%s", f->self_hex);
	assert_true(saw_note(&s, line));
	snprintf(line, sizeof(line), "nls_ascii=%s", f->other_hex);
	assert_true(saw_note(&s, line));
	assert_true(saw_note(&s, "pad8_mod=deadbeef0102030405060708090a0b0c0d0e0f10"));

	/* the callback's non-zero return ends the walk and is returned */
	struct seen_notes one = { .stop_after = 1 };
	assert_int_equal(bt_kident_module_notes(root, collect_note, &one), 42);
	assert_int_equal(one.n, 1);

	new_root(f, "nosysmod", root, sizeof(root));
	assert_int_equal(bt_kident_module_notes(root, collect_note, &s), -ENOENT);
	assert_int_equal(bt_kident_module_notes(root, NULL, &s), -EINVAL);
}

/* On a kernel with modules, every line of /proc/modules is one module, and each build-id equals the
 * descriptor of the sysfs note as the shell reads it (header 12 bytes + "GNU\0", then descsz bytes). */
static void kident__real_proc_modules__match_shell_reading(void **state)
{
	struct bt_kmodules m;
	int err = bt_kident_modules_load("", &m);
	if (access("/proc/modules", F_OK) != 0) {
		assert_int_equal(err, -ENOENT);
		assert_int_equal(m.n, 0);
		return;
	}
	assert_int_equal(err, 0);
	char out[64];
	assert_int_equal(bt_test_run(out, sizeof(out), "wc -l < /proc/modules"), 0);
	assert_int_equal(m.n, strtoul(out, NULL, 10));
	assert_int_equal(bt_test_run(out, sizeof(out),
				     "awk '$6 !~ /^0x0+$/' /proc/modules | wc -l"), 0);
	assert_int_equal(m.addrs_hidden, m.n > 0 && strtoul(out, NULL, 10) == 0);
	for (size_t i = 0; i < m.n; i++) {
		char want[256], hex[160];
		int rc = bt_test_run(want, sizeof(want),
			"f=/sys/module/%s/notes/.note.gnu.build-id; [ -r $f ] || exit 3; "
			"n=$(od -An -tu4 -j4 -N4 $f | tr -d ' '); od -An -tx1 -j16 -N$n $f | tr -d ' \\n'",
			m.mods[i].name);
		if (rc == 3) {
			assert_int_not_equal(m.mods[i].build_id_err, 0);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(m.mods[i].build_id_err, 0);
		hex_of(&m.mods[i].build_id, hex, sizeof(hex));
		assert_string_equal(hex, want);
	}
	bt_kident_modules_free(&m);
}

/* ---- vmlinux and module files ---- */

static void kident__release__equals_uname_r(void **state)
{
	char want[256], rel[256];
	assert_int_equal(bt_test_run(want, sizeof(want), "uname -r"), 0);
	trim(want);
	assert_int_equal(bt_kident_release("", rel, sizeof(rel)), 0);
	assert_string_equal(rel, want);
	assert_int_equal(bt_kident_release("", rel, 2), -ENAMETOOLONG);
}

static void kident__vmlinux_matches__only_the_running_build_id(void **state)
{
	struct fx *f = *state;
	struct bt_build_id running;
	assert_int_equal(bt_buildid_parse_hex(f->self_hex, &running), 0);
	assert_int_equal(bt_kident_vmlinux_matches(f->self, &running), 0);
	assert_int_equal(bt_kident_vmlinux_matches(f->other, &running), -ESTALE);
	assert_int_equal(bt_kident_vmlinux_matches(f->nobid, &running), -ENODATA);
	char path[4400];
	snprintf(path, sizeof(path), "%s/nope", f->dir);
	assert_int_equal(bt_kident_vmlinux_matches(path, &running), -ENOENT);
	/* a boot image is not ELF, so it can never give line info */
	char root[256];
	new_root(f, "vmlinuz", root, sizeof(root));
	put_str(root, "vmlinuz", "MZ\x00\x00 not an ELF file, a bzImage stand-in");
	snprintf(path, sizeof(path), "%s/vmlinuz", root);
	assert_int_equal(bt_kident_vmlinux_matches(path, &running), -ENOEXEC);
	struct bt_build_id none = { 0 };
	assert_int_equal(bt_kident_vmlinux_matches(f->self, &none), -ENODATA);
}

static void kident__vmlinux_candidates__documented_order(void **state)
{
	char buf[256];
	static const char *const want[] = {
		"/r/usr/lib/debug/boot/vmlinux-6.1.0-9-amd64",
		"/r/usr/lib/debug/lib/modules/6.1.0-9-amd64/vmlinux",
		"/r/boot/vmlinux-6.1.0-9-amd64",
		"/r/lib/modules/6.1.0-9-amd64/build/vmlinux",
	};
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(bt_kident_vmlinux_candidate("/r", "6.1.0-9-amd64", i, buf, sizeof(buf)), 0);
		assert_string_equal(buf, want[i]);
	}
	assert_int_equal(bt_kident_vmlinux_candidate("/r", "6.1.0-9-amd64", 4, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(bt_kident_vmlinux_candidate("/r", "../x", 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(bt_kident_vmlinux_candidate("/r", "6.1.0-9-amd64", 0, buf, 10), -ENAMETOOLONG);
}

static void copy_file(const char *from, const char *root, const char *rel)
{
	char cmd[16384];
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s/%s')\" && cp '%s' '%s/%s'", root, rel, from,
		 root, rel);
	sh(cmd);
}

static void kident__find_vmlinux__first_matching_candidate(void **state)
{
	struct fx *f = *state;
	char root[256], got[4096], want[4400];
	new_root(f, "vml", root, sizeof(root));
	/* the "running kernel" carries the build-id of this test binary */
	put_raw_note(root, "sys/kernel/notes", f->self);
	put_str(root, "proc/sys/kernel/osrelease", "6.1.0-9-amd64\n");

	assert_int_equal(bt_kident_find_vmlinux(root, NULL, got, sizeof(got)), -ENOENT);

	copy_file(f->other, root, "usr/lib/debug/boot/vmlinux-6.1.0-9-amd64");
	copy_file(f->self, root, "boot/vmlinux-6.1.0-9-amd64");
	assert_int_equal(bt_kident_find_vmlinux(root, NULL, got, sizeof(got)), 0);
	snprintf(want, sizeof(want), "%s/boot/vmlinux-6.1.0-9-amd64", root);
	assert_string_equal(got, want);

	/* a matching debug vmlinux comes first */
	copy_file(f->self, root, "usr/lib/debug/lib/modules/6.1.0-9-amd64/vmlinux");
	assert_int_equal(bt_kident_find_vmlinux(root, NULL, got, sizeof(got)), 0);
	snprintf(want, sizeof(want), "%s/usr/lib/debug/lib/modules/6.1.0-9-amd64/vmlinux", root);
	assert_string_equal(got, want);

	/* an explicit --vmlinux is checked, never replaced by a search */
	snprintf(want, sizeof(want), "%s/usr/lib/debug/boot/vmlinux-6.1.0-9-amd64", root);
	assert_int_equal(bt_kident_find_vmlinux(root, want, got, sizeof(got)), -ESTALE);
	assert_int_equal(bt_kident_find_vmlinux(root, f->self, got, sizeof(got)), 0);
	assert_string_equal(got, f->self);

	/* only stale candidates left */
	snprintf(want, sizeof(want), "rm '%s/boot/vmlinux-6.1.0-9-amd64' '%s/usr/lib/debug/lib/modules/6.1.0-9-amd64/vmlinux'",
		 root, root);
	sh(want);
	assert_int_equal(bt_kident_find_vmlinux(root, NULL, got, sizeof(got)), -ESTALE);
}

/* Module files as distributions ship them: plain or compressed, any of which must match by content. */
static void kident__module_file__compressed_variants_match(void **state)
{
	struct fx *f = *state;
	char root[256], cmd[8192], path[4400];
	new_root(f, "ko", root, sizeof(root));
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && cp '%s' m.ko && xz -k -c m.ko > m.ko.xz && zstd -q -c m.ko > m.ko.zst && "
		 "gzip -c m.ko > m.ko.gz", root, f->self);
	sh(cmd);
	struct bt_build_id loaded, other;
	assert_int_equal(bt_buildid_parse_hex(f->self_hex, &loaded), 0);
	assert_int_equal(bt_buildid_parse_hex(f->other_hex, &other), 0);
	static const char *const names[] = { "m.ko", "m.ko.xz", "m.ko.zst", "m.ko.gz" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, names[i]);
		if (bt_kident_module_file_matches(path, &loaded) != 0)
			fail_msg("%s does not match", names[i]);
		assert_int_equal(bt_kident_module_file_matches(path, &other), -ESTALE);
	}
}

static void kident__find_module_file__debug_first_dash_underscore(void **state)
{
	struct fx *f = *state;
	char root[256], got[4096], want[4400], cmd[8192];
	new_root(f, "modfiles", root, sizeof(root));
	const char *rel = "6.1.0-9-amd64";
	struct bt_build_id loaded;
	assert_int_equal(bt_buildid_parse_hex(f->self_hex, &loaded), 0);

	assert_int_equal(bt_kident_find_module_file(root, rel, "crc_itu_t", &loaded, got, sizeof(got)), -ENOENT);

	/* a stale file of the right name, then the matching one compressed, in a deep directory */
	copy_file(f->other, root, "lib/modules/6.1.0-9-amd64/kernel/lib/crc-itu-t.ko");
	assert_int_equal(bt_kident_find_module_file(root, rel, "crc_itu_t", &loaded, got, sizeof(got)), -ESTALE);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/lib/modules/%s/updates/a/b' && xz -c '%s' > '%s/lib/modules/%s/updates/a/b/crc_itu-t.ko.xz'",
		 root, rel, f->self, root, rel);
	sh(cmd);
	/* build/ is a symlink into a kernel tree: here a loop that must not be followed */
	snprintf(cmd, sizeof(cmd), "ln -s .. '%s/lib/modules/%s/build'", root, rel);
	sh(cmd);
	assert_int_equal(bt_kident_find_module_file(root, rel, "crc_itu_t", &loaded, got, sizeof(got)), 0);
	snprintf(want, sizeof(want), "%s/lib/modules/%s/updates/a/b/crc_itu-t.ko.xz", root, rel);
	assert_string_equal(got, want);

	copy_file(f->self, root, "usr/lib/debug/lib/modules/6.1.0-9-amd64/kernel/lib/crc-itu-t.ko");
	assert_int_equal(bt_kident_find_module_file(root, rel, "crc_itu_t", &loaded, got, sizeof(got)), 0);
	snprintf(want, sizeof(want), "%s/usr/lib/debug/lib/modules/%s/kernel/lib/crc-itu-t.ko", root, rel);
	assert_string_equal(got, want);

	/* prefixes and other names do not count */
	assert_int_equal(bt_kident_find_module_file(root, rel, "crc_itu", &loaded, got, sizeof(got)), -ENOENT);
	assert_int_equal(bt_kident_find_module_file(root, rel, "../crc", &loaded, got, sizeof(got)), -EINVAL);
	assert_int_equal(bt_kident_find_module_file(root, "..", "crc_itu_t", &loaded, got, sizeof(got)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kident__real_sys_kernel_notes__equals_perf_buildid_list),
		cmocka_unit_test(kident__objcopy_raw_note__equals_readelf),
		cmocka_unit_test(kident__fake_kernel_notes__gnu_note_found_among_others),
		cmocka_unit_test(kident__eight_byte_padded_notes__still_found),
		cmocka_unit_test(kident__notes_without_gnu_note__enodata),
		cmocka_unit_test(kident__malformed_notes__rejected),
		cmocka_unit_test(kident__truncated_notes__never_a_wrong_id),
		cmocka_unit_test(kident__random_notes__no_crash),
		cmocka_unit_test(kident__fake_proc_modules__names_bases_sizes_build_ids),
		cmocka_unit_test(kident__module_at__half_open_ranges),
		cmocka_unit_test(kident__zero_bases__addresses_hidden),
		cmocka_unit_test(kident__malformed_proc_modules__einval),
		cmocka_unit_test(kident__no_proc_modules__enoent_and_empty),
		cmocka_unit_test(kident__bad_module_names__einval),
		cmocka_unit_test(kident__module_notes__sysfs_modules_with_build_ids),
		cmocka_unit_test(kident__real_proc_modules__match_shell_reading),
		cmocka_unit_test(kident__release__equals_uname_r),
		cmocka_unit_test(kident__vmlinux_matches__only_the_running_build_id),
		cmocka_unit_test(kident__vmlinux_candidates__documented_order),
		cmocka_unit_test(kident__find_vmlinux__first_matching_candidate),
		cmocka_unit_test(kident__module_file__compressed_variants_match),
		cmocka_unit_test(kident__find_module_file__debug_first_dash_underscore),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
