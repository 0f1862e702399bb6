/* test_dso.c - the registry of file versions and build-ids on fixture programs: versions keyed by
 * device, inode and mtime, one dso per build-id, a build-id the file does not carry refused, files
 * without one checked by device and inode, and symbol tables evicted then loaded again. */
#include "testutil.h"
#include "session/dso.h"
#include "capture/procmaps.h"
#include "elf/unwind.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "build/fixtures/fx-sha1"
#define OTHER "build/fixtures/fx-md5"
#define NOBID "build/fixtures/fx-none"
#define TMP "build/tests/tmp-dso"
/* No live mapping: the registry falls back to the path, checked by build-id. */
static const struct bt_dso_mapping nowhere = { .pid = -1 };

struct fx {
	struct bt_dso_registry r;
	char dir[128];            /* the build-id cache, empty: symbols come from the files */
	char prog[PATH_MAX];
};

static struct fx *setup(void)
{
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p " TMP), 0);
	snprintf(x->dir, sizeof(x->dir), TMP "/cache-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	assert_non_null(realpath(PROG, x->prog));
	struct bt_symsrc_opts so = { .cache_dir = x->dir };
	/* the proc root is the empty directory too: no process's map_files, so paths are used */
	bt_dso_registry_init(&x->r, x->dir, &so, false);
	return x;
}

static void teardown(struct fx *x)
{
	bt_dso_registry_free(&x->r);
	bt_test_run(NULL, 0, "rm -rf %s", x->dir);
	free(x);
}

/* The file version at path as a mapping record names it. */
static int64_t file_of(struct fx *x, const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return bt_dso_file(&x->r, st.st_dev, st.st_ino,
			   (uint64_t)st.st_mtim.tv_sec * 1000000000 + (uint64_t)st.st_mtim.tv_nsec, path);
}

static struct bt_build_id id_of(const char *path)
{
	struct bt_build_id id;
	assert_int_equal(bt_buildid_from_path(path, &id), 0);
	return id;
}

/* The symbol at nm's address of name, looked up by the file offset readelf gives it. */
static void assert_names(const struct bt_symtab *st, const char *file, const char *name)
{
	char out[64] = "";
	assert_int_equal(bt_test_run(out, sizeof(out),
				     "v=0x$(nm --defined-only %s | awk '$3 == \"%s\" { print $1; exit }'); "
				     "readelf -lW %s | while read t o a p fs rest; do [ \"$t\" = LOAD ] || continue; "
				     "if [ $((v)) -ge $((a)) ] && [ $((v)) -lt $((a + fs)) ]; then "
				     "echo $((v - a + o)); break; fi; done", file, name, file), 0);
	uint64_t off;
	const struct bt_sym *s = bt_symtab_lookup_offset(st, strtoull(out, NULL, 10) + 1, &off);
	assert_non_null(s);
	assert_string_equal(s->name, name);
	assert_int_equal(off, 1);
}

/* The vDSO of this process, copied, is a file of its own keyed by its build-id: a second copy of
 * the same image is the same file (its descriptor left to the caller), and the symbols are the
 * image's, by the name rule (__vdso_clock_gettime before the weak clock_gettime, as perf names it;
 * readelf of the copy is the oracle). */
static void dso__vdso_copies__one_file_named_from_the_image(void **state)
{
	struct fx *x = setup();
	uint64_t start, end;
	int fd = bt_procmaps_open_vdso("", getpid(), &start, &end);
	assert_true(fd >= 0);
	bool kept = false;
	int64_t fid = bt_dso_vdso(&x->r, fd, &kept);
	assert_true(fid >= 0 && kept);
	int fd2 = bt_procmaps_open_vdso("", getpid(), &start, &end);
	assert_true(fd2 >= 0);
	assert_int_equal(bt_dso_vdso(&x->r, fd2, &kept), fid);
	assert_false(kept);
	close(fd2);
	const struct bt_file *f = bt_dso_file_get(&x->r, (uint32_t)fid);
	assert_string_equal(bt_dso_file_basename(&x->r, (uint32_t)fid), "[vdso]");
	struct bt_dso *d = bt_dso_get(&x->r, f->dso_id);
	struct bt_build_id id;
	assert_int_equal(bt_buildid_from_mem((const void *)(uintptr_t)start, end - start, &id), 0);
	assert_true(bt_buildid_eq(&d->build_id, &id));
	const struct bt_symtab *st = bt_dso_symtab(&x->r, f->dso_id);
	assert_non_null(st);
	char out[256], path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/vdso.so", x->dir);
	FILE *w = fopen(path, "we");
	assert_non_null(w);
	assert_int_equal(fwrite((const void *)(uintptr_t)start, 1, end - start, w), end - start);
	assert_int_equal(fclose(w), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "readelf -Ws %s | awk '$8 ~ /^__vdso_clock_gettime@/ "
				     "{ print $2; exit }'", path), 0);
	uint64_t off, addr = strtoull(out, NULL, 16);
	assert_true(addr > 0);
	const struct bt_sym *s = bt_symtab_lookup_offset(st, addr + 2, &off);  /* offset = address: linked at 0 */
	assert_non_null(s);
	assert_string_equal(s->name, "__vdso_clock_gettime");
	assert_int_equal(off, 2);
	/* its call frame information is read from the copy too */
	assert_non_null(bt_dso_cfi(&x->r, f->dso_id));
	teardown(x);
}

static void dso__file_versions__keyed_by_dev_ino_mtime(void **state)
{
	struct fx *x = setup();
	int64_t a = file_of(x, x->prog);
	assert_true(a >= 0);
	/* the same version under another path (a hard link, a bind mount): one file, its first path */
	struct stat st;
	assert_int_equal(stat(x->prog, &st), 0);
	uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000 + (uint64_t)st.st_mtim.tv_nsec;
	assert_int_equal(bt_dso_file(&x->r, st.st_dev, st.st_ino, mtime, "/elsewhere/fx"), a);
	assert_string_equal(bt_dso_file_basename(&x->r, (uint32_t)a), "fx-sha1");
	/* rewritten in place (another mtime), another inode, another device: new versions */
	int64_t b = bt_dso_file(&x->r, st.st_dev, st.st_ino, mtime + 1, x->prog);
	int64_t c = bt_dso_file(&x->r, st.st_dev, st.st_ino + 1, mtime, x->prog);
	int64_t d = bt_dso_file(&x->r, st.st_dev + 1, st.st_ino, mtime, x->prog);
	assert_true(b >= 0 && c >= 0 && d >= 0);
	assert_true(b != a && c != a && d != a && b != c && c != d && b != d);
	assert_int_equal(x->r.nfiles, 4);
	assert_int_equal(bt_dso_file_get(&x->r, (uint32_t)b)->dso_id, BT_NO_ID);
	assert_null(bt_dso_file_get(&x->r, 4));
	assert_string_equal(bt_dso_file_basename(&x->r, 99), "unknown");
	teardown(x);
}

/* Two versions (a copy elsewhere) with one build-id share one dso and its symbols. */
static void dso__same_build_id__one_dso(void **state)
{
	struct fx *x = setup();
	char copy[256];
	snprintf(copy, sizeof(copy), "%s/fx-copy", x->dir);
	assert_int_equal(bt_test_run(NULL, 0, "cp %s %s", x->prog, copy), 0);
	char copy_abs[PATH_MAX];
	assert_non_null(realpath(copy, copy_abs));
	int64_t a = file_of(x, x->prog), b = file_of(x, copy_abs);
	assert_true(a >= 0 && b >= 0 && a != b);
	struct bt_build_id id = id_of(x->prog);
	int64_t da = bt_dso_set_build_id(&x->r, (uint32_t)a, &id, BT_ORIGIN_BPF, &nowhere);
	int64_t db = bt_dso_set_build_id(&x->r, (uint32_t)b, &id, BT_ORIGIN_USERSPACE, &nowhere);
	assert_true(da >= 0);
	assert_int_equal(db, da);
	assert_int_equal(x->r.ndsos, 1);
	assert_int_equal(bt_dso_get(&x->r, (uint32_t)da)->origin, BT_ORIGIN_BPF);
	const struct bt_symtab *st = bt_dso_symtab(&x->r, (uint32_t)da);
	assert_non_null(st);
	assert_string_equal(bt_dso_get(&x->r, (uint32_t)da)->sym_origin, "file");
	assert_names(st, x->prog, "main");
	assert_int_equal(x->r.symtabs_loaded, 1);
	/* no build-id, or an unknown file: refused */
	struct bt_build_id none = { 0 };
	assert_int_equal(bt_dso_set_build_id(&x->r, (uint32_t)a, &none, BT_ORIGIN_BPF, &nowhere), -EINVAL);
	assert_int_equal(bt_dso_set_build_id(&x->r, 99, &id, BT_ORIGIN_BPF, &nowhere), -EINVAL);
	teardown(x);
}

/* The path now holds a file with another build-id than the one mapped: its bytes are not used. */
static void dso__build_id_mismatch__refused(void **state)
{
	struct fx *x = setup();
	int64_t f = file_of(x, x->prog);
	struct bt_build_id other = id_of(OTHER);
	int64_t d = bt_dso_set_build_id(&x->r, (uint32_t)f, &other, BT_ORIGIN_BPF, &nowhere);
	assert_true(d >= 0);
	assert_true(x->r.mismatches >= 1);
	assert_int_equal(bt_dso_get(&x->r, (uint32_t)d)->fd, -1);
	assert_null(bt_dso_symtab(&x->r, (uint32_t)d));
	assert_int_equal(bt_dso_get(&x->r, (uint32_t)d)->sym_state, BT_SYMS_FAILED);
	assert_int_equal(x->r.symtabs_loaded, 0);
	teardown(x);
}

/* Without a build-id the dso is the file itself, used only when its device and inode are those
 * mapped. */
static void dso__no_build_id__checked_by_inode(void **state)
{
	struct fx *x = setup();
	char path[PATH_MAX];
	assert_non_null(realpath(NOBID, path));
	int64_t f = file_of(x, path);
	int64_t d = bt_dso_set_no_build_id(&x->r, (uint32_t)f, &nowhere);
	assert_true(d >= 0);
	assert_int_equal(bt_dso_set_no_build_id(&x->r, (uint32_t)f, &nowhere), d);
	assert_true(bt_dso_file_get(&x->r, (uint32_t)f)->no_build_id);
	const struct bt_symtab *st = bt_dso_symtab(&x->r, (uint32_t)d);
	assert_non_null(st);
	assert_names(st, path, "main");
	/* a version whose inode is not the path's any more */
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	int64_t g = bt_dso_file(&x->r, sb.st_dev, sb.st_ino + 1, 0, path);
	int64_t e = bt_dso_set_no_build_id(&x->r, (uint32_t)g, &nowhere);
	assert_true(e >= 0 && e != d);
	assert_null(bt_dso_symtab(&x->r, (uint32_t)e));
	assert_true(x->r.mismatches >= 1);
	teardown(x);
}

/* A table not asked for since an epoch is freed, and loaded again from the same source when asked. */
static void dso__evicted__loaded_again(void **state)
{
	struct fx *x = setup();
	int64_t f = file_of(x, x->prog);
	struct bt_build_id id = id_of(x->prog);
	uint32_t d = (uint32_t)bt_dso_set_build_id(&x->r, (uint32_t)f, &id, BT_ORIGIN_BPF, &nowhere);
	assert_non_null(bt_dso_symtab(&x->r, d));
	x->r.epoch = 1;
	assert_int_equal(bt_dso_evict(&x->r, 0), 0);   /* asked for at epoch 0: not before it */
	assert_int_equal(bt_dso_evict(&x->r, 1), 1);
	assert_null(bt_dso_get(&x->r, d)->symtab);
	assert_int_equal(bt_dso_get(&x->r, d)->sym_state, BT_SYMS_UNTRIED);
	assert_int_equal(x->r.symtabs_evicted, 1);
	const struct bt_symtab *st = bt_dso_symtab(&x->r, d);
	assert_non_null(st);
	assert_names(st, x->prog, "fx_static_helper");
	assert_int_equal(x->r.symtabs_loaded, 2);
	/* used at this epoch: kept */
	assert_int_equal(bt_dso_evict(&x->r, 1), 0);
	teardown(x);
}

/* A copy whose .debug_line_str lost its final NUL: symbols still, no DWARF (libdw would read the
 * last string past the section's end), counted once, and still refused after an eviction. */
static void dso__dwarf_strings_without_nul__refused_and_counted(void **state)
{
	struct fx *x = setup();
	char copy[256], rel[256], out[128];
	snprintf(rel, sizeof(rel), "%s/fx-nonul", x->dir);
	assert_int_equal(bt_test_run(out, sizeof(out), "cp %s %s && readelf -SW %s | awk '{ for (i = 1; i < NF; "
				     "i++) if ($i == \".debug_line_str\") print $(i+3), $(i+4) }'", x->prog, rel,
				     rel), 0);
	unsigned long long off, size;
	assert_int_equal(sscanf(out, "%llx %llx", &off, &size), 2);
	assert_int_equal(bt_test_run(NULL, 0, "printf A | dd of=%s bs=1 seek=%llu conv=notrunc 2>/dev/null",
				     rel, off + size - 1), 0);
	assert_non_null(realpath(rel, copy));
	int64_t f = file_of(x, copy);
	struct bt_build_id id = id_of(copy);
	uint32_t d = (uint32_t)bt_dso_set_build_id(&x->r, (uint32_t)f, &id, BT_ORIGIN_BPF, &nowhere);
	assert_non_null(bt_dso_symtab(&x->r, d));
	assert_null(bt_dso_dwarf(&x->r, d));
	assert_null(bt_dso_dwarf(&x->r, d));
	assert_int_equal(x->r.dwarf_refused, 1);
	x->r.epoch = 1;
	assert_int_equal(bt_dso_evict(&x->r, 1), 1);
	assert_non_null(bt_dso_symtab(&x->r, d));
	assert_null(bt_dso_dwarf(&x->r, d));
	assert_int_equal(x->r.dwarf_refused, 1);
	/* an intact file (another build-id: one dso per build-id) has its DWARF */
	char other[PATH_MAX];
	assert_non_null(realpath(OTHER, other));
	int64_t g = file_of(x, other);
	struct bt_build_id good = id_of(other);
	uint32_t e = (uint32_t)bt_dso_set_build_id(&x->r, (uint32_t)g, &good, BT_ORIGIN_BPF, &nowhere);
	assert_non_null(bt_dso_symtab(&x->r, e));
	assert_non_null(bt_dso_dwarf(&x->r, e));
	assert_int_equal(x->r.dwarf_refused, 1);
	teardown(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dso__file_versions__keyed_by_dev_ino_mtime),
		cmocka_unit_test(dso__vdso_copies__one_file_named_from_the_image),
		cmocka_unit_test(dso__same_build_id__one_dso),
		cmocka_unit_test(dso__build_id_mismatch__refused),
		cmocka_unit_test(dso__no_build_id__checked_by_inode),
		cmocka_unit_test(dso__evicted__loaded_again),
		cmocka_unit_test(dso__dwarf_strings_without_nul__refused_and_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
