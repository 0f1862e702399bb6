/* test_kframe.c - the kernel-frame naming rule on a fake root: kallsyms names the kernel image and a
 * module's own symbols only, the module's .ko (the fx-mod.ko fixture) what kallsyms lacks, BPF
 * programs provisionally, and the rest gets the module's or the image's placeholder. */
#include "testutil.h"
#include "kernel/kframe.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REL "6.1.0-fake-amd64"
#define MOD_BASE 0xffffffffc0a01000ULL
/* kallsyms: the image, a BPF program, and a symbol of another module just below fx_mod's main,
 * as a module loaded after kallsyms was read would see it. */
static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffffc0001000 t bpf_prog_0123456789abcdef_on_exec\t[bpf]\n"
	"ffffffffc0a01000 t neighbour_func\t[other_mod]\n"
	"ffffffffc0b00000 t other_func\t[other_mod]\n";

struct fx {
	char root[128];
	struct bt_kallsyms *ks;
	struct bt_kmods mods;
	int64_t fx_mod, other_mod;
	uint64_t main_off;   /* nm's value of main in the .ko */
};

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p \"$(dirname %s)\"", path), 0);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* fx_mod loaded at MOD_BASE with the fixture's build-id and its .ko on disk; other_mod, without a
 * build-id, above it. */
static struct fx *setup(void)
{
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p build/tests/tmp-kframe"), 0);
	snprintf(x->root, sizeof(x->root), "build/tests/tmp-kframe/root-XXXXXX");
	assert_non_null(mkdtemp(x->root));
	write_file(x->root, "/proc/sys/kernel/osrelease", REL "\n");
	char base[64];
	snprintf(base, sizeof(base), "0x%llx\n", (unsigned long long)MOD_BASE);
	write_file(x->root, "/sys/module/fx_mod/sections/.text", base);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/lib/modules/" REL " && cp build/fixtures/fx-mod.ko "
				     "%s/lib/modules/" REL "/", x->root, x->root), 0);
	assert_int_equal(bt_kallsyms_parse(kallsyms, strlen(kallsyms), &x->ks), 0);
	/* no proc/modules: the modules come as load events do */
	assert_int_equal(bt_kmods_init(&x->mods, x->root), 0);
	char out[128];
	assert_int_equal(bt_test_run(out, sizeof(out), "readelf -n build/fixtures/fx-mod.ko | "
				     "awk '/Build ID/ { printf \"%%s\", $3 }'"), 0);
	struct bt_kmodule m = { .name = "fx_mod", .base = MOD_BASE, .size = 16384 };
	assert_int_equal(bt_buildid_parse_hex(out, &m.build_id), 0);
	x->fx_mod = bt_kmods_add(&x->mods, &m);
	struct bt_kmodule o = { .name = "other_mod", .base = 0xffffffffc0b00000ULL, .size = 8192,
				.build_id_err = -ENODATA };
	x->other_mod = bt_kmods_add(&x->mods, &o);
	assert_true(x->fx_mod >= 0 && x->other_mod >= 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "nm build/fixtures/fx-mod.ko | awk '$3 == \"main\" "
				     "{ print $1 }'"), 0);
	x->main_off = strtoull(out, NULL, 16);
	return x;
}

static void teardown(struct fx *x)
{
	bt_kallsyms_free(x->ks);
	bt_kmods_free(&x->mods);
	bt_test_run(NULL, 0, "rm -rf %s", x->root);
	free(x);
}

static void kframe__image_address__kallsyms_name(void **state)
{
	struct fx *x = setup();
	struct bt_kframe kf;
	assert_int_equal(bt_kframe_name(NULL, x->ks, &x->mods, -1, 0xffffffff81001010ULL, &kf), 0);
	assert_string_equal(kf.name, "do_syscall_64");
	assert_int_equal(kf.off, 0x10);
	assert_null(kf.mod);
	assert_non_null(kf.ksym);
	assert_null(kf.ksym->module);
	assert_false(kf.provisional);
	teardown(x);
}

static void kframe__bpf_program__named_provisionally(void **state)
{
	struct fx *x = setup();
	struct bt_kframe kf;
	assert_int_equal(bt_kframe_name(NULL, x->ks, &x->mods, -1, 0xffffffffc0001008ULL, &kf), 0);
	assert_string_equal(kf.name, "bpf_prog_0123456789abcdef_on_exec");
	assert_true(kf.provisional);
	teardown(x);
}

/* kallsyms' symbol below the address is another module's: the .ko names it, as nm does. */
static void kframe__module_address__own_ko_not_the_neighbour(void **state)
{
	struct fx *x = setup();
	struct bt_kframe kf;
	assert_int_equal(bt_kframe_name(NULL, x->ks, &x->mods, x->fx_mod, MOD_BASE + x->main_off + 4, &kf), 0);
	assert_string_equal(kf.name, "main");
	assert_int_equal(kf.off, 4);
	assert_non_null(kf.mod);
	assert_string_equal(kf.mod->mod.name, "fx_mod");
	assert_null(kf.ksym);
	/* the same address in no module known: kallsyms' neighbour it is */
	assert_int_equal(bt_kframe_name(NULL, x->ks, &x->mods, -1, MOD_BASE + x->main_off + 4, &kf), 0);
	assert_string_equal(kf.name, "neighbour_func");
	/* a module's own kallsyms symbol */
	assert_int_equal(bt_kframe_name(NULL, x->ks, &x->mods, x->other_mod, 0xffffffffc0b00010ULL, &kf), 0);
	assert_string_equal(kf.name, "other_func");
	assert_string_equal(kf.ksym->module, "other_mod");
	teardown(x);
}

static void kframe__unnamed__module_or_image_placeholder(void **state)
{
	struct fx *x = setup();
	struct bt_kframe kf;
	/* past the .ko's last function, and in a module without a .ko below its first symbol */
	assert_int_equal(bt_kframe_name(NULL, x->ks, &x->mods, x->fx_mod, MOD_BASE + 0x3000, &kf), -ENOENT);
	assert_null(kf.name);
	assert_string_equal(kf.placeholder, "[fx_mod]");
	/* no kallsyms at all (kptr_restrict) */
	assert_int_equal(bt_kframe_name(NULL, NULL, &x->mods, -1, 0xffffffff81001010ULL, &kf), -ENOENT);
	assert_string_equal(kf.placeholder, "[kernel.kallsyms]");
	assert_null(kf.mod);
	/* below every symbol */
	assert_int_equal(bt_kframe_name(NULL, x->ks, &x->mods, -1, 0xffffffff80000000ULL, &kf), -ENOENT);
	assert_string_equal(kf.placeholder, BT_KFRAME_IMAGE);
	teardown(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kframe__image_address__kallsyms_name),
		cmocka_unit_test(kframe__bpf_program__named_provisionally),
		cmocka_unit_test(kframe__module_address__own_ko_not_the_neighbour),
		cmocka_unit_test(kframe__unnamed__module_or_image_placeholder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
