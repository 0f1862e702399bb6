/* test_symsrc.c - symbol sources per build-id under a temporary root: the file, MiniDebugInfo,
 * the debug directory, .gnu_debuglink (CRC checked), the build-id cache, their order, and the
 * refusal of files of another build-id; symbol tables are checked against nm, offsets against
 * readelf's program headers, and libc against its packaged debug file. */
#include "testutil.h"
#include "symsrc/bidcache.h"
#include "symsrc/symsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>

struct fx {
	char dir[64];
	char root[128];
	char cache[128];
	char inl[PATH_MAX], stripped[PATH_MAX], dbg[PATH_MAX], mini[PATH_MAX], mdi[PATH_MAX];
	struct bt_build_id inl_id, mini_id;
	struct bt_symsrc_opts o;
};

static void fixture_path(const char *name, char *out)
{
	char rel[256];
	bt_test_fixture(rel, sizeof(rel), name);
	assert_non_null(realpath(rel, out));
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bt-symsrc-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->root, sizeof(f->root), "%s/root", f->dir);
	snprintf(f->cache, sizeof(f->cache), "%s/cache", f->dir);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p '%s' '%s'", f->root, f->cache), 0);
	fixture_path("symsrc/inl", f->inl);
	fixture_path("symsrc/inl.stripped", f->stripped);
	fixture_path("symsrc/inl.debug", f->dbg);
	fixture_path("symsrc/libmini.so", f->mini);
	fixture_path("symsrc/libmini-mdi.so", f->mdi);
	assert_int_equal(bt_buildid_from_path(f->inl, &f->inl_id), 0);
	assert_int_equal(bt_buildid_from_path(f->mini, &f->mini_id), 0);
	f->o = (struct bt_symsrc_opts){ .root = f->root, .cache_dir = f->cache };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	bt_test_run(NULL, 0, "rm -rf '%s'", f->dir);
	free(f);
	return 0;
}

static const char *hex(const struct bt_build_id *id)
{
	static char buf[2 * BT_BUILD_ID_MAXLEN + 1];
	return bt_buildid_hex(id, buf, sizeof(buf));
}

/* Places src at ROOT/rel (directories created). */
static void place(struct fx *f, const char *src, const char *rel)
{
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p \"$(dirname '%s%s')\" && cp '%s' '%s%s'", f->root,
				     rel, src, f->root, rel), 0);
}

static void place_debug_dir(struct fx *f, const char *src, const struct bt_build_id *id)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex(id), hex(id) + 2);
	place(f, src, rel);
}

struct nmsym {
	uint64_t addr;
	char name[128];
};

/* The defined functions nm lists (text symbols; with dynamic, only .dynsym's), the oracle for a
 * symbol table. Each file is asked once per run: the fixtures do not change meanwhile. */
static size_t nm_funcs_of(const char *path, bool dynamic, struct nmsym *out, size_t max)
{
	static struct nm_memo {
		char path[PATH_MAX];
		bool dynamic;
		size_t n;
		struct nmsym syms[256];
	} memo[8];
	static size_t nmemo;
	for (size_t m = 0; m < nmemo; m++) {
		if (memo[m].dynamic != dynamic || strcmp(memo[m].path, path))
			continue;
		size_t n = memo[m].n < max ? memo[m].n : max;
		memcpy(out, memo[m].syms, n * sizeof(*out));
		return n;
	}
	static char buf[1 << 16];
	assert_int_equal(bt_test_run(buf, sizeof(buf), "nm %s --defined-only '%s' | awk '$2 ~ /^[Tti]$/ "
				     "{ print $1, $3 }'", dynamic ? "-D" : "", path), 0);
	size_t n = 0;
	char *save = NULL;
	for (char *l = strtok_r(buf, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save))
		if (sscanf(l, "%" SCNx64 " %127s", &out[n].addr, out[n].name) == 2)
			n++;
	assert_true(n >= 2);
	if (nmemo < 8 && n <= 256) {
		snprintf(memo[nmemo].path, sizeof(memo[nmemo].path), "%s", path);
		memo[nmemo].dynamic = dynamic;
		memo[nmemo].n = n;
		memcpy(memo[nmemo].syms, out, n * sizeof(*out));
		nmemo++;
	}
	return n;
}

static size_t nm_funcs(const char *path, struct nmsym *out, size_t max)
{
	return nm_funcs_of(path, false, out, max);
}

/* Every function nm shows is found at its address under one of its names. */
static void check_against_nm_of(const struct bt_symtab *st, const char *oracle_file, bool dynamic)
{
	static struct nmsym syms[4096];
	size_t n = nm_funcs_of(oracle_file, dynamic, syms, 4096);
	for (size_t i = 0; i < n; i++) {
		uint64_t off = 1;
		const struct bt_sym *s = bt_symtab_lookup(st, syms[i].addr, &off);
		if (!s)
			fail_msg("%s at 0x%" PRIx64 " not found", syms[i].name, syms[i].addr);
		assert_int_equal(s->addr, syms[i].addr);
		assert_int_equal(off, 0);
		bool named = false;
		for (size_t j = 0; j < n; j++)
			named |= syms[j].addr == syms[i].addr && !strcmp(syms[j].name, s->name);
		if (!named)
			fail_msg("0x%" PRIx64 ": got %s, nm has %s", syms[i].addr, s->name, syms[i].name);
	}
}

static void check_against_nm(const struct bt_symtab *st, const char *oracle_file)
{
	check_against_nm_of(st, oracle_file, false);
}

/* The executable PT_LOAD of a file, from readelf: the oracle for offset translation. */
static void exec_load(const char *path, uint64_t *offset, uint64_t *vaddr)
{
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "readelf -lW '%s' | awk '$1 == \"LOAD\" && / R?W?E / "
				     "{ print $2, $3; exit }'", path), 0);
	assert_int_equal(sscanf(out, "%" SCNx64 " %" SCNx64, offset, vaddr), 2);
}

/* A function found through its file offset as the binary maps it. */
static void check_offset_lookup(const struct bt_symtab *st, const char *binary, const char *func,
				const char *oracle_file)
{
	static struct nmsym syms[4096];
	size_t n = nm_funcs(oracle_file, syms, 4096);
	uint64_t off, vaddr, addr = 0;
	exec_load(binary, &off, &vaddr);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(syms[i].name, func))
			addr = syms[i].addr;
	assert_true(addr >= vaddr);
	uint64_t into = 99;
	const struct bt_sym *s = bt_symtab_lookup_offset(st, addr - vaddr + off + 2, &into);
	assert_non_null(s);
	assert_string_equal(s->name, func);
	assert_int_equal(into, 2);
}

/* The file a lookup is for: its build-id, mapped descriptor (-1: none) and path. */
#define REQ(id_, fd_, path_) (&(struct bt_symsrc_req){ .id = (id_), .mapped_fd = (fd_), .path = (path_) })

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* No source named a function of the stripped binary's own: what is left is the fallback to the
 * binary's dynamic symbols, which name only its PLT entries (FUNC@plt, and .plt). Frees the table. */
static void plt_only(int rc, struct bt_symtab **st, const char *origin)
{
	assert_int_equal(rc, 0);
	assert_string_equal(origin, "dynsym");
	assert_true(bt_symtab_count(*st) > 0);
	for (size_t i = 0; i < bt_symtab_count(*st); i++) {
		const char *name = bt_symtab_at(*st, i)->name;
		size_t l = strlen(name);
		assert_true(strcmp(name, ".plt") == 0 || (l > 4 && strcmp(name + l - 4, "@plt") == 0));
	}
	bt_symtab_free(*st);
	*st = NULL;
}

static int load(struct fx *f, const struct bt_build_id *id, const char *mapped, const char *path,
		struct bt_symtab **st, char *origin)
{
	int fd = mapped ? open_ro(mapped) : -1;
	int err = bt_symsrc_load(&f->o, REQ(id, fd, path), st, origin, BT_SYMSRC_ORIGIN_LEN);
	if (fd >= 0)
		close(fd);
	return err;
}

static void symsrc__unstripped_file__origin_file(void **state)
{
	struct fx *f = *state;
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	assert_int_equal(load(f, &f->inl_id, f->inl, f->inl, &st, origin), 0);
	assert_string_equal(origin, "file");
	check_against_nm(st, f->inl);
	check_offset_lookup(st, f->inl, "fx_outer", f->inl);
	bt_symtab_free(st);
}

static void symsrc__minidebuginfo__merged_with_dynsym(void **state)
{
	struct fx *f = *state;
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	char out[256];
	/* The recipe worked: the static functions are gone from the binary's own tables. */
	assert_int_equal(bt_test_run(out, sizeof(out), "nm -D '%s' | grep -c mini_hidden", f->mdi), 1);
	assert_int_equal(load(f, &f->mini_id, f->mdi, "/usr/lib/libmini.so", &st, origin), 0);
	assert_string_equal(origin, "minidebuginfo");
	/* The original unstripped library is the oracle: exported and static functions alike. */
	check_against_nm(st, f->mini);
	/* The embedded file's program headers describe nothing; the binary's are used. */
	check_offset_lookup(st, f->mdi, "mini_hidden_b", f->mini);
	check_offset_lookup(st, f->mdi, "mini_export_two", f->mini);
	bt_symtab_free(st);
}

/* Damaged .gnu_debugdata (bad xz, xz of non-ELF bytes, cut short): the exported functions are still
 * served, from .dynsym, and nothing crashes. */
static void symsrc__corrupt_minidebuginfo__dynsym_fallback(void **state)
{
	struct fx *f = *state;
	char off[128];
	assert_int_equal(bt_test_run(off, sizeof(off), "readelf -SW '%s' | awk '/\\.gnu_debugdata/ "
				     "{ for (i = 1; i <= NF; i++) if ($i == \".gnu_debugdata\") "
				     "{ print $(i+3), $(i+4) } }'", f->mdi), 0);
	uint64_t at, size;
	assert_int_equal(sscanf(off, "%" SCNx64 " %" SCNx64, &at, &size), 2);
	static const char *const damage[] = {
		/* garbage in the middle of the xz stream */
		"printf 'garbage!' | dd of=%s bs=1 seek=%" PRIu64 " conv=notrunc status=none",
		/* a valid xz stream of bytes that are not ELF, as long as the section */
		"head -c 4000 /dev/zero | xz -c | head -c %2$" PRIu64 " > %1$s.x && "
		"dd if=%1$s.x of=%1$s bs=1 seek=%3$" PRIu64 " conv=notrunc status=none",
	};
	for (size_t i = 0; i < 3; i++) {
		char copy[128], cmd[1024];
		snprintf(copy, sizeof(copy), "%s/mdi-%zu.so", f->dir, i);
		assert_int_equal(bt_test_run(NULL, 0, "cp '%s' '%s'", f->mdi, copy), 0);
		if (i == 0)
			snprintf(cmd, sizeof(cmd), damage[0], copy, at + size / 2);
		else if (i == 1)
			snprintf(cmd, sizeof(cmd), damage[1], copy, size, at);
		else  /* the stream's last 16 bytes zeroed: truncated, as xz sees it */
			snprintf(cmd, sizeof(cmd), "head -c 16 /dev/zero | dd of=%s bs=1 seek=%" PRIu64
				 " conv=notrunc status=none", copy, at + size - 16);
		assert_int_equal(bt_test_run(NULL, 0, "%s", cmd), 0);
		struct bt_symtab *st = NULL;
		char origin[BT_SYMSRC_ORIGIN_LEN];
		assert_int_equal(load(f, &f->mini_id, copy, "/usr/lib/libmini.so", &st, origin), 0);
		assert_string_equal(origin, "dynsym");
		check_against_nm_of(st, f->mini, true);
		bt_symtab_free(st);
	}
}

static void symsrc__debug_dir__stripped_binary(void **state)
{
	struct fx *f = *state;
	place_debug_dir(f, f->dbg, &f->inl_id);
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	assert_int_equal(load(f, &f->inl_id, f->stripped, "/usr/bin/inl", &st, origin), 0);
	assert_string_equal(origin, "debug-dir");
	check_against_nm(st, f->inl);
	/* The debug file's PT_LOADs have no file bytes: offsets go through the binary's. */
	check_offset_lookup(st, f->stripped, "fx_caller", f->inl);
	bt_symtab_free(st);
}

static void symsrc__debuglink__each_location_crc_checked(void **state)
{
	struct fx *f = *state;
	static const char *const where[] = { "/opt/app/inl.debug", "/opt/app/.debug/inl.debug",
					     "/usr/lib/debug/opt/app/inl.debug" };
	place(f, f->stripped, "/opt/app/inl");
	char bin[PATH_MAX + 64];
	snprintf(bin, sizeof(bin), "%s/opt/app/inl", f->root);
	for (size_t i = 0; i < 3; i++) {
		place(f, f->dbg, where[i]);
		struct bt_symtab *st = NULL;
		char origin[BT_SYMSRC_ORIGIN_LEN];
		assert_int_equal(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), 0);
		assert_string_equal(origin, "debuglink");
		check_against_nm(st, f->inl);
		bt_symtab_free(st);
		/* One byte more: same build-id, other CRC, so not the file the link names. */
		assert_int_equal(bt_test_run(NULL, 0, "printf x >> '%s%s'", f->root, where[i]), 0);
		st = NULL;
		plt_only(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), &st, origin);
		assert_null(st);
		struct bt_dwarf *d = NULL;
		int fd = open_ro(bin);
		assert_int_equal(bt_symsrc_open_dwarf(&f->o, REQ(&f->inl_id, fd, "/opt/app/inl"), &d, origin,
						      sizeof(origin)), -ENODATA);
		close(fd);
		assert_int_equal(bt_test_run(NULL, 0, "rm '%s%s'", f->root, where[i]), 0);
	}
}

/* Bytes this process has read so far (/proc/self/io rchar): what a CRC of a whole file would cost. */
static unsigned long long bytes_read(void)
{
	char out[64];
	assert_int_equal(bt_test_run(out, sizeof(out), "sed -n 's/^rchar: //p' /proc/%d/io", (int)getpid()), 0);
	return strtoull(out, NULL, 10);
}

/* A debuglink name's file with 20 GiB of hole after it, or 2 MiB of zeros: not a debug file as its
 * headers describe it, refused without reading it (its CRC would read it all); the build-id
 * cache's entries and the debug directory are still asked. */
static void symsrc__debuglink_sparse_or_padded__refused_unread(void **state)
{
	struct fx *f = *state;
	static const char *const grow[] = { "truncate -s 20G '%s/opt/app/inl.debug'",
					    "head -c 2097152 /dev/zero >> '%s/opt/app/inl.debug'" };
	place(f, f->stripped, "/opt/app/inl");
	char bin[PATH_MAX + 64], origin[BT_SYMSRC_ORIGIN_LEN];
	snprintf(bin, sizeof(bin), "%s/opt/app/inl", f->root);
	for (size_t i = 0; i < 2; i++) {
		place(f, f->dbg, "/opt/app/inl.debug");
		assert_int_equal(bt_test_run(NULL, 0, grow[i], f->root), 0);
		unsigned long long before = bytes_read();
		struct bt_symtab *st = NULL;
		plt_only(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), &st, origin);
		assert_null(st);
		/* the binary and the candidate's headers at most, never the candidate whole */
		assert_true(bytes_read() - before < (64ULL << 20));
		assert_int_equal(bt_test_run(NULL, 0, "rm '%s/opt/app/inl.debug'", f->root), 0);
	}
}

/* A .gnu_debuglink name is the binary's choice, and its directory may be anyone's: the name must be
 * the debug file itself, a symlink there is refused even to the right file. The debug directory's
 * build-id links (a distribution's layout) are followed. */
static void symsrc__debuglink_symlink__refused_build_id_link_followed(void **state)
{
	struct fx *f = *state;
	static const char *const where[] = { "/opt/app/inl.debug", "/opt/app/.debug/inl.debug",
					     "/usr/lib/debug/opt/app/inl.debug" };
	place(f, f->stripped, "/opt/app/inl");
	place(f, f->dbg, "/srv/inl.debug");
	char bin[PATH_MAX + 64], origin[BT_SYMSRC_ORIGIN_LEN];
	snprintf(bin, sizeof(bin), "%s/opt/app/inl", f->root);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(bt_test_run(NULL, 0, "mkdir -p \"$(dirname '%s%s')\" && ln -s %s/srv/inl.debug "
					     "'%s%s'", f->root, where[i], f->root, f->root, where[i]), 0);
		struct bt_symtab *st = NULL;
		plt_only(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), &st, origin);
		assert_null(st);
		assert_int_equal(bt_test_run(NULL, 0, "rm '%s%s'", f->root, where[i]), 0);
	}
	assert_int_equal(bt_test_run(NULL, 0, "d=%s/usr/lib/debug/.build-id/%.2s && mkdir -p $d && "
				     "ln -s ../../../../../srv/inl.debug $d/%s.debug", f->root, hex(&f->inl_id),
				     hex(&f->inl_id) + 2), 0);
	struct bt_symtab *st = NULL;
	assert_int_equal(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), 0);
	assert_string_equal(origin, "debug-dir");
	check_against_nm(st, f->inl);
	bt_symtab_free(st);
}

/* The system call a process is blocked in (/proc/PID/syscall), or -1. */
static long blocked_in(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	FILE *fp = fopen(path, "re");
	if (!fp)
		return -1;
	long nr = fgets(buf, sizeof(buf), fp) && buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
	fclose(fp);
	return nr;
}

/* An absolute .gnu_debugaltlink names a FIFO with a writer blocked on it: never opened. A regular
 * file there is opened (inotify sees it) and checked, so the name was looked at. */
static void symsrc__debugaltlink_fifo__not_opened(void **state)
{
	struct fx *f = *state;
	char bin[256], alt[256], origin[BT_SYMSRC_ORIGIN_LEN], cmd[512], id[4 * BT_BUILD_ID_MAXLEN + 1];
	snprintf(bin, sizeof(bin), "%s/inl-alt", f->dir);
	snprintf(alt, sizeof(alt), "%s/opt/alt.debug", f->root);
	/* the section: the name, its NUL, then the alt file's build-id (libmini's), in octal escapes */
	for (size_t i = 0; i < f->mini_id.len; i++)
		snprintf(id + 4 * i, 5, "\\%03o", f->mini_id.data[i]);
	assert_int_equal(bt_test_run(NULL, 0, "cd %s && printf '/opt/alt.debug\\000%s' > sec && "
				     "objcopy --add-section .gnu_debugaltlink=sec %s %s && mkdir -p %s/opt && "
				     "mkfifo %s", f->dir, id, f->inl, bin, f->root, alt), 0);
	assert_int_equal(bt_test_run(cmd, sizeof(cmd), "readelf -x .gnu_debugaltlink %s | grep -c 0x", bin), 0);
	assert_true(atoi(cmd) >= 2);  /* 15 + 20 bytes */
	snprintf(cmd, sizeof(cmd), "exec 3> %s", alt);
	pid_t w = bt_test_spawn(cmd);
	while (blocked_in(w) != SYS_openat)
		assert_int_equal(waitpid(w, NULL, WNOHANG), 0);
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0 && inotify_add_watch(in, alt, IN_OPEN) >= 0);
	struct bt_dwarf *d = NULL;
	int fd = open_ro(bin);
	assert_int_equal(bt_symsrc_open_dwarf(&f->o, REQ(&f->inl_id, fd, "/usr/bin/inl"), &d, origin,
					      sizeof(origin)), 0);
	assert_string_equal(origin, "file");
	bt_dwarf_close(d);
	char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	assert_int_equal(read(in, ev, sizeof(ev)), -1);  /* no IN_OPEN */
	assert_int_equal(blocked_in(w), SYS_openat);
	assert_int_equal(waitpid(w, NULL, WNOHANG), 0);
	int rfd = open(alt, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(waitpid(w, NULL, 0), w);
	close(rfd);
	close(in);
	/* the control: a regular file under that name is opened */
	assert_int_equal(bt_test_run(NULL, 0, "rm %s && cp %s %s", alt, f->mini, alt), 0);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0 && inotify_add_watch(in, alt, IN_OPEN) >= 0);
	assert_int_equal(bt_symsrc_open_dwarf(&f->o, REQ(&f->inl_id, fd, "/usr/bin/inl"), &d, origin,
					      sizeof(origin)), 0);
	bt_dwarf_close(d);
	assert_true(read(in, ev, sizeof(ev)) > 0);
	close(in);
	close(fd);
}

static void symsrc__other_build_id__never_used(void **state)
{
	struct fx *f = *state;
	/* Files of another build-id in every place a debug file could be. */
	place_debug_dir(f, f->mini, &f->inl_id);
	place(f, f->stripped, "/opt/app/inl");
	place(f, f->mini, "/opt/app/inl.debug");
	char bin[PATH_MAX + 64];
	snprintf(bin, sizeof(bin), "%s/opt/app/inl", f->root);
	int mfd = open_ro(f->mini);
	assert_int_equal(bt_bidcache_add_fd(f->cache, &f->mini_id, "/opt/app/inl", mfd), 0);
	close(mfd);
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	plt_only(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), &st, origin);
	/* A mapped fd of another file is not the binary either: the path is tried instead. */
	assert_int_equal(load(f, &f->inl_id, f->mini, "/opt/app/nothing", &st, origin), -ENOENT);
	plt_only(load(f, &f->inl_id, f->mini, "/opt/app/inl", &st, origin), &st, origin);
	assert_null(st);
}

static void symsrc__cache__binary_and_debug_without_the_file(void **state)
{
	struct fx *f = *state;
	int fd = open_ro(f->stripped);
	assert_int_equal(bt_bidcache_add_fd(f->cache, &f->inl_id, "/usr/bin/inl", fd), 0);
	close(fd);
	fd = open_ro(f->dbg);
	assert_int_equal(bt_bidcache_add_debug_fd(f->cache, &f->inl_id, "/usr/bin/inl", fd), 0);
	close(fd);
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	assert_int_equal(load(f, &f->inl_id, NULL, "/usr/bin/inl", &st, origin), 0);
	assert_string_equal(origin, "cache");
	check_against_nm(st, f->inl);
	check_offset_lookup(st, f->stripped, "fx_outer", f->inl);
	bt_symtab_free(st);
	struct bt_dwarf *d = NULL;
	assert_int_equal(bt_symsrc_open_dwarf(&f->o, REQ(&f->inl_id, -1, NULL), &d, origin, sizeof(origin)), 0);
	assert_string_equal(origin, "cache");
	bt_dwarf_close(d);
	/* A damaged debug entry is not trusted: only the stripped binary is left. */
	char dbgpath[PATH_MAX];
	fd = bt_bidcache_open(f->cache, &f->inl_id, BT_BIDCACHE_DEBUG, dbgpath, sizeof(dbgpath));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bt_test_run(NULL, 0, "truncate -s 3000 '%s'", dbgpath), 0);
	st = NULL;
	plt_only(load(f, &f->inl_id, NULL, "/usr/bin/inl", &st, origin), &st, origin);
	assert_null(st);
}

static void symsrc__order__first_source_wins(void **state)
{
	struct fx *f = *state;
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	char bin[PATH_MAX + 64];
	snprintf(bin, sizeof(bin), "%s/opt/app/inl", f->root);
	place(f, f->stripped, "/opt/app/inl");
	int fd = open_ro(f->dbg);
	assert_int_equal(bt_bidcache_add_debug_fd(f->cache, &f->inl_id, "/opt/app/inl", fd), 0);
	close(fd);
	assert_int_equal(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), 0);
	assert_string_equal(origin, "cache");
	bt_symtab_free(st);
	place(f, f->dbg, "/opt/app/inl.debug");
	assert_int_equal(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), 0);
	assert_string_equal(origin, "debuglink");
	bt_symtab_free(st);
	place_debug_dir(f, f->dbg, &f->inl_id);
	assert_int_equal(load(f, &f->inl_id, bin, "/opt/app/inl", &st, origin), 0);
	assert_string_equal(origin, "debug-dir");
	bt_symtab_free(st);
	/* The unstripped file, mapped, has its own .symtab and needs nothing else. */
	assert_int_equal(load(f, &f->inl_id, f->inl, "/opt/app/inl", &st, origin), 0);
	assert_string_equal(origin, "file");
	bt_symtab_free(st);
}

static void symsrc__dynsym_only__fallback(void **state)
{
	struct fx *f = *state;
	char plain[PATH_MAX + 64];
	snprintf(plain, sizeof(plain), "%s/libmini-plain.so", f->dir);
	assert_int_equal(bt_test_run(NULL, 0, "strip --strip-all -o '%s' '%s'", plain, f->mini), 0);
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	assert_int_equal(load(f, &f->mini_id, plain, "/usr/lib/libmini.so", &st, origin), 0);
	assert_string_equal(origin, "dynsym");
	/* Exported functions only, as nm -D shows them, and the PLT entries. */
	check_against_nm_of(st, f->mini, true);
	size_t own = 0;
	for (size_t i = 0; i < bt_symtab_count(st); i++)
		own += !strstr(bt_symtab_at(st, i)->name, "@plt") && strcmp(bt_symtab_at(st, i)->name, ".plt");
	assert_int_equal(own, nm_funcs_of(f->mini, true, (struct nmsym[16]){ 0 }, 16));
	bt_symtab_free(st);
}

static void symsrc__adopted_debug_file__cached_for_next_time(void **state)
{
	struct fx *f = *state;
	int dfd = open_ro(f->dbg), bfd = open_ro(f->stripped), mfd = open_ro(f->mini);
	struct bt_symtab *st = NULL;
	assert_int_equal(bt_symsrc_adopt_debug_fd(&f->o, &f->inl_id, mfd, bfd, "/usr/bin/inl", &st),
			 -EINVAL);
	assert_int_equal(bt_symsrc_adopt_debug_fd(&f->o, &f->inl_id, dfd, bfd, "/usr/bin/inl", &st), 0);
	check_against_nm(st, f->inl);
	check_offset_lookup(st, f->stripped, "fx_local", f->inl);
	bt_symtab_free(st);
	close(dfd);
	close(mfd);
	char origin[BT_SYMSRC_ORIGIN_LEN];
	st = NULL;
	assert_int_equal(bt_symsrc_load(&f->o, REQ(&f->inl_id, bfd, "/usr/bin/inl"), &st, origin,
					sizeof(origin)), 0);
	assert_string_equal(origin, "cache");
	check_offset_lookup(st, f->stripped, "fx_local", f->inl);
	bt_symtab_free(st);
	close(bfd);
}

static void symsrc__debuglink_dwarf__matches_unstripped(void **state)
{
	struct fx *f = *state;
	place(f, f->stripped, "/opt/app/inl");
	place(f, f->dbg, "/opt/app/.debug/inl.debug");
	char bin[PATH_MAX + 64], origin[BT_SYMSRC_ORIGIN_LEN];
	snprintf(bin, sizeof(bin), "%s/opt/app/inl", f->root);
	int fd = open_ro(bin);
	struct bt_dwarf *d = NULL, *ref = NULL;
	assert_int_equal(bt_symsrc_open_dwarf(&f->o, REQ(&f->inl_id, fd, "/opt/app/inl"), &d, origin,
					      sizeof(origin)), 0);
	assert_string_equal(origin, "debuglink");
	close(fd);
	fd = open_ro(f->inl);
	assert_int_equal(bt_symsrc_open_dwarf(&f->o, REQ(&f->inl_id, fd, f->inl), &ref, origin, sizeof(origin)), 0);
	assert_string_equal(origin, "file");
	close(fd);
	static struct nmsym syms[64];
	size_t n = nm_funcs(f->inl, syms, 64);
	for (size_t i = 0; i < n; i++) {
		for (uint64_t k = 0; k < 16; k++) {
			struct bt_dwarf_frame a[8], b[8];
			int na = bt_dwarf_lookup(d, syms[i].addr + k, a, 8);
			int nb = bt_dwarf_lookup(ref, syms[i].addr + k, b, 8);
			assert_int_equal(na, nb);
			for (int j = 0; j < na; j++) {
				assert_int_equal(a[j].line, b[j].line);
				assert_true((!a[j].file && !b[j].file) || !strcmp(a[j].file, b[j].file));
			}
		}
	}
	bt_dwarf_close(d);
	bt_dwarf_close(ref);
}

static void symsrc__libc__debug_dir_symbols_and_lines(void **state)
{
	struct fx *f = *state;
	char libc[PATH_MAX], dbg[512], out[4096];
	assert_non_null(realpath("/lib/x86_64-linux-gnu/libc.so.6", libc));
	struct bt_build_id id;
	assert_int_equal(bt_buildid_from_path(libc, &id), 0);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex(&id), hex(&id) + 2);
	if (access(dbg, R_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg("%s is missing: install libc6-dbg (tools/deps.sh)", dbg);
		skip();
	}
	struct bt_symsrc_opts sys = { .root = "", .cache_dir = f->cache };
	int fd = open_ro(libc);
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	assert_int_equal(bt_symsrc_load(&sys, REQ(&id, fd, libc), &st, origin, sizeof(origin)), 0);
	assert_string_equal(origin, "debug-dir");
	struct bt_dwarf *d = NULL;
	assert_int_equal(bt_symsrc_open_dwarf(&sys, REQ(&id, fd, libc), &d, origin, sizeof(origin)), 0);
	assert_string_equal(origin, "debug-dir");
	close(fd);
	/* Internal (static) functions, absent from libc's .dynsym, named and located. */
	static const char *const funcs[] = { "msort_with_tmp.part.0", "qsort_r", "__libc_malloc",
					     "_IO_cookie_read" };
	enum { NF = sizeof(funcs) / sizeof(funcs[0]) };
	uint64_t addr[NF];
	char *save = NULL, *line;
	assert_int_equal(bt_test_run(out, sizeof(out), "nm '%s' | awk '$3 == \"%s\" || $3 == \"%s\" || "
				     "$3 == \"%s\" || $3 == \"%s\" { print $3, $1 }'", dbg, funcs[0],
				     funcs[1], funcs[2], funcs[3]), 0);
	for (size_t i = 0; i < NF; i++) {
		addr[i] = 0;
		char key[64];
		snprintf(key, sizeof(key), "%s ", funcs[i]);
		const char *at = strstr(out, key);
		assert_non_null(at);
		addr[i] = strtoull(at + strlen(key), NULL, 16) + 1;
	}
	assert_int_equal(bt_test_run(out, sizeof(out), "eu-addr2line -e '%s' 0x%" PRIx64 " 0x%" PRIx64
				     " 0x%" PRIx64 " 0x%" PRIx64, dbg, addr[0], addr[1], addr[2], addr[3]), 0);
	line = strtok_r(out, "\n", &save);
	for (size_t i = 0; i < NF; i++, line = strtok_r(NULL, "\n", &save)) {
		assert_non_null(line);
		uint64_t off;
		const struct bt_sym *s = bt_symtab_lookup(st, addr[i], &off);
		assert_non_null(s);
		assert_int_equal(off, 1);
		struct bt_dwarf_frame fr[16];
		int n = bt_dwarf_lookup(d, addr[i], fr, 16);
		assert_true(n >= 1);
		char want[1024];
		snprintf(want, sizeof(want), "%s:%u:", fr[0].file, fr[0].line);
		if (strncmp(line, want, strlen(want)) != 0)
			fail_msg("%s: buildtrace says %s, eu-addr2line %s", funcs[i], want, line);
	}
	bt_dwarf_close(d);
	bt_symtab_free(st);
}

static void symsrc__find_path__debug_dir_then_cache(void **state)
{
	struct fx *f = *state;
	char out[PATH_MAX], want[PATH_MAX + 128];
	assert_int_equal(bt_symsrc_find_path(&f->o, &f->inl_id, NULL, out, sizeof(out)), -ENOENT);
	int fd = open_ro(f->stripped);
	assert_int_equal(bt_bidcache_add_fd(f->cache, &f->inl_id, "/usr/bin/inl", fd), 0);
	close(fd);
	assert_int_equal(bt_symsrc_find_path(&f->o, &f->inl_id, NULL, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/usr/bin/inl/%s/elf", f->cache, hex(&f->inl_id));
	assert_string_equal(out, want);
	place_debug_dir(f, f->dbg, &f->inl_id);
	assert_int_equal(bt_symsrc_find_path(&f->o, &f->inl_id, NULL, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", f->root,
		 hex(&f->inl_id), hex(&f->inl_id) + 2);
	assert_string_equal(out, want);
	assert_int_equal(bt_symsrc_find_path(&f->o, &f->inl_id, f->inl, out, sizeof(out)), 0);
	assert_string_equal(out, f->inl);
	assert_int_equal(bt_symsrc_find_path(&f->o, &f->inl_id, f->inl, out, 5), -ENAMETOOLONG);
}

static void symsrc__bad_arguments__errors(void **state)
{
	struct fx *f = *state;
	struct bt_build_id none = { 0 };
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN], out[64];
	assert_int_equal(bt_symsrc_load(&f->o, REQ(&none, -1, NULL), &st, origin, sizeof(origin)), -EINVAL);
	assert_int_equal(bt_symsrc_load(&f->o, REQ(&f->inl_id, -1, NULL), NULL, origin, sizeof(origin)), -EINVAL);
	assert_int_equal(bt_symsrc_load(&f->o, REQ(&f->inl_id, -1, NULL), &st, NULL, 0), -ENOENT);
	assert_int_equal(bt_symsrc_find_path(&f->o, &none, NULL, out, sizeof(out)), -EINVAL);
	/* A directory or a device where a file is expected. */
	assert_int_equal(bt_symsrc_load(&f->o, REQ(&f->inl_id, -1, "/"), &st, origin, sizeof(origin)), -ENOENT);
	int dev = open("/dev/null", O_RDONLY);
	assert_int_equal(bt_symsrc_load(&f->o, REQ(&f->inl_id, dev, "/dev/null"), &st, origin, sizeof(origin)),
			 -ENOENT);
	close(dev);
	assert_null(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(symsrc__unstripped_file__origin_file),
		T(symsrc__minidebuginfo__merged_with_dynsym),
		T(symsrc__corrupt_minidebuginfo__dynsym_fallback),
		T(symsrc__debug_dir__stripped_binary),
		T(symsrc__debuglink__each_location_crc_checked),
		T(symsrc__debuglink_sparse_or_padded__refused_unread),
		T(symsrc__other_build_id__never_used),
		T(symsrc__cache__binary_and_debug_without_the_file),
		T(symsrc__order__first_source_wins),
		T(symsrc__dynsym_only__fallback),
		T(symsrc__adopted_debug_file__cached_for_next_time),
		T(symsrc__debuglink_dwarf__matches_unstripped),
		T(symsrc__libc__debug_dir_symbols_and_lines),
		T(symsrc__find_path__debug_dir_then_cache),
		T(symsrc__bad_arguments__errors),
		T(symsrc__debuglink_symlink__refused_build_id_link_followed),
		T(symsrc__debugaltlink_fifo__not_opened),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
