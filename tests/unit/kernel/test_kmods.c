/* test_kmods.c - a session's kernel modules on a fake root: the modules loaded at start, module-load
 * events replacing versions, address lookups, and function names from a .ko file at its sections'
 * load addresses, against nm on the same file; a .ko of another build refused. */
#include "testutil.h"
#include "kernel/kmods.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REL "6.1.0-fake-amd64"
#define TEXT_BASE 0xffffffffc0a01000ULL

struct fx {
	char root[128];
	char bid[64];   /* fx-mod.ko's build-id, readelf's */
};

static void write_file(const char *root, const char *rel, const void *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p \"$(dirname %s)\"", path), 0);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* A GNU build-id note as /sys/module/NAME/notes/.note.gnu.build-id holds it. */
static void write_note(const char *root, const char *mod, const char *hex)
{
	struct bt_build_id id;
	assert_int_equal(bt_buildid_parse_hex(hex, &id), 0);
	unsigned char note[16 + BT_BUILD_ID_MAXLEN] = { 4, 0, 0, 0, id.len, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0 };
	memcpy(note + 16, id.data, id.len);
	char rel[256];
	snprintf(rel, sizeof(rel), "/sys/module/%s/notes/.note.gnu.build-id", mod);
	write_file(root, rel, note, 16 + id.len);
}

/* Two modules loaded: fx_mod (the fixture, its .ko under lib/modules) and other_mod. */
static struct fx *setup_root(void)
{
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p build/tests/tmp-kmods"), 0);
	snprintf(x->root, sizeof(x->root), "build/tests/tmp-kmods/root-XXXXXX");
	assert_non_null(mkdtemp(x->root));
	assert_int_equal(bt_test_run(x->bid, sizeof(x->bid), "readelf -n build/fixtures/fx-mod.ko | "
				     "awk '/Build ID/ { printf \"%%s\", $3 }'"), 0);
	char modules[512];
	int n = snprintf(modules, sizeof(modules),
			 "fx_mod 16384 0 - Live 0x%llx\nother_mod 8192 1 fx_mod, Live 0xffffffffc0b00000\n",
			 (unsigned long long)TEXT_BASE);
	write_file(x->root, "/proc/modules", modules, (size_t)n);
	write_file(x->root, "/proc/sys/kernel/osrelease", REL "\n", strlen(REL) + 1);
	write_note(x->root, "fx_mod", x->bid);
	write_note(x->root, "other_mod", "00112233445566778899aabbccddeeff00112233");
	char base[64];
	n = snprintf(base, sizeof(base), "0x%llx\n", (unsigned long long)TEXT_BASE);
	write_file(x->root, "/sys/module/fx_mod/sections/.text", base, (size_t)n);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/lib/modules/" REL "/kernel/drivers && "
				     "cp build/fixtures/fx-mod.ko %s/lib/modules/" REL "/kernel/drivers/",
				     x->root, x->root), 0);
	return x;
}

static void teardown_root(struct fx *x)
{
	bt_test_run(NULL, 0, "rm -rf %s", x->root);
	free(x);
}

static void kmods__loaded_at_start__found_by_address(void **state)
{
	struct fx *x = setup_root();
	struct bt_kmods k;
	assert_int_equal(bt_kmods_init(&k, x->root), 0);
	assert_int_equal(k.n, 2);
	assert_string_equal(k.release, REL);
	int64_t a = bt_kmods_at(&k, TEXT_BASE + 0x10);
	assert_true(a >= 0);
	assert_string_equal(bt_kmods_get(&k, (uint32_t)a)->mod.name, "fx_mod");
	char hex[64];
	assert_string_equal(bt_buildid_hex(&bt_kmods_get(&k, (uint32_t)a)->mod.build_id, hex, sizeof(hex)), x->bid);
	int64_t b = bt_kmods_at(&k, 0xffffffffc0b00000ULL + 8191);
	assert_true(b >= 0 && b != a);
	/* the byte past each module, below the first, and between them */
	assert_int_equal(bt_kmods_at(&k, 0xffffffffc0b00000ULL + 8192), -ENOENT);
	assert_int_equal(bt_kmods_at(&k, TEXT_BASE - 1), -ENOENT);
	assert_int_equal(bt_kmods_at(&k, TEXT_BASE + 16384), -ENOENT);
	bt_kmods_free(&k);
	teardown_root(x);
}

static void kmods__reload_and_overlap__new_versions_old_ids_kept(void **state)
{
	struct fx *x = setup_root();
	struct bt_kmods k;
	assert_int_equal(bt_kmods_init(&k, x->root), 0);
	int64_t old = bt_kmods_at(&k, TEXT_BASE);
	/* fx_mod unloaded and loaded again elsewhere */
	struct bt_kmodule m = { .name = "fx_mod", .base = 0xffffffffc0c00000ULL, .size = 4096 };
	int64_t nv = bt_kmods_add(&k, &m);
	assert_true(nv >= 0 && nv != old);
	assert_int_equal(bt_kmods_at(&k, TEXT_BASE), -ENOENT);
	assert_int_equal(bt_kmods_at(&k, 0xffffffffc0c00000ULL + 4), nv);
	assert_string_equal(bt_kmods_get(&k, (uint32_t)old)->mod.name, "fx_mod");  /* still there */
	/* a new module over other_mod's addresses replaces it */
	struct bt_kmodule o = { .name = "third", .base = 0xffffffffc0b01000ULL, .size = 4096 };
	int64_t t = bt_kmods_add(&k, &o);
	assert_int_equal(bt_kmods_at(&k, 0xffffffffc0b00000ULL), -ENOENT);
	assert_int_equal(bt_kmods_at(&k, 0xffffffffc0b01000ULL), t);
	struct bt_kmodule bad = { .name = "" };
	assert_int_equal(bt_kmods_add(&k, &bad), -EINVAL);
	bt_kmods_free(&k);
	teardown_root(x);
}

/* Every function of the .ko, at .text's load address plus its value as nm prints it. */
static void kmods__ko_symbols__at_section_base_like_nm(void **state)
{
	struct fx *x = setup_root();
	struct bt_kmods k;
	assert_int_equal(bt_kmods_init(&k, x->root), 0);
	uint32_t id = (uint32_t)bt_kmods_at(&k, TEXT_BASE);
	char list[2048];
	assert_int_equal(bt_test_run(list, sizeof(list), "nm build/fixtures/fx-mod.ko | awk '$2 ~ /^[tT]$/ "
				     "{ print $1, $3 }'"), 0);
	size_t n = 0;
	char *save = NULL;
	for (char *l = strtok_r(list, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		uint64_t v;
		char name[128];
		assert_int_equal(sscanf(l, "%" SCNx64 " %127s", &v, name), 2);
		uint64_t off = 99;
		const char *got = bt_kmods_symbolize(&k, id, TEXT_BASE + v, &off);
		assert_non_null(got);
		assert_int_equal(off, 0);
		/* aliases at one address: any of them, as long as it is one at this value */
		char chk[256];
		assert_int_equal(bt_test_run(chk, sizeof(chk), "nm build/fixtures/fx-mod.ko | awk '$1 == \"%016" PRIx64
					     "\" && $3 == \"%s\"' | wc -l", v, got), 0);
		assert_int_equal(atoi(chk), 1);
		n++;
	}
	assert_true(n >= 3);
	assert_int_equal(k.ko_loaded, 1);
	/* other_mod has no .ko, and an address past fx_mod's end names nothing */
	uint64_t off;
	assert_null(bt_kmods_symbolize(&k, (uint32_t)bt_kmods_at(&k, 0xffffffffc0b00000ULL), 0xffffffffc0b00000ULL, &off));
	assert_null(bt_kmods_symbolize(&k, id, TEXT_BASE + 16384, &off));
	bt_kmods_free(&k);
	teardown_root(x);
}

/* The loaded module says another build-id than the .ko on disk (rebuilt since): refused. */
static void kmods__ko_of_another_build__refused(void **state)
{
	struct fx *x = setup_root();
	write_note(x->root, "fx_mod", "ffeeddccbbaa99887766554433221100ffeeddcc");
	struct bt_kmods k;
	assert_int_equal(bt_kmods_init(&k, x->root), 0);
	uint32_t id = (uint32_t)bt_kmods_at(&k, TEXT_BASE);
	uint64_t off;
	assert_null(bt_kmods_symbolize(&k, id, TEXT_BASE + 0x1a, &off));
	assert_int_equal(k.ko_refused, 1);
	assert_int_equal(k.ko_loaded, 0);
	assert_int_equal(bt_kmods_get(&k, id)->ko_state, -ESTALE);
	bt_kmods_free(&k);
	teardown_root(x);
}

/* No /proc/modules (a kernel without modules): an empty table. */
static void kmods__no_module_support__empty(void **state)
{
	struct fx *x = setup_root();
	char p[256];
	snprintf(p, sizeof(p), "%s/proc/modules", x->root);
	assert_int_equal(unlink(p), 0);
	struct bt_kmods k;
	assert_int_equal(bt_kmods_init(&k, x->root), 0);
	assert_int_equal(k.n, 0);
	assert_int_equal(bt_kmods_at(&k, TEXT_BASE), -ENOENT);
	bt_kmods_free(&k);
	teardown_root(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kmods__loaded_at_start__found_by_address),
		cmocka_unit_test(kmods__reload_and_overlap__new_versions_old_ids_kept),
		cmocka_unit_test(kmods__ko_symbols__at_section_base_like_nm),
		cmocka_unit_test(kmods__ko_of_another_build__refused),
		cmocka_unit_test(kmods__no_module_support__empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
