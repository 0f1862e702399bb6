/* test_kbtf.c - type ids from BTF files: the kernel's own against libbpf's full parse as the
 * oracle, a file libbpf writes with names the walk must not confuse, and files that are not BTF
 * or are cut short. */
#include "testutil.h"
#include "capture/kbtf.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VMLINUX "/sys/kernel/btf/vmlinux"

static void expect_as_libbpf(const struct btf *btf, struct bt_kbtf_query *q, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int want = btf__find_by_name_kind(btf, q[i].name, q[i].kind);
		print_message("%s kind %d: %d (libbpf %d)\n", q[i].name, q[i].kind, q[i].id, want);
		assert_int_equal(q[i].id, want < 0 ? -ENOENT : want);
	}
}

static void kbtf__kernel_types__same_ids_as_libbpf(void **state)
{
	if (access(VMLINUX, R_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg(VMLINUX " is not readable under CI");
		skip();
	}
	struct bt_kbtf_query q[] = {
		{ .name = "vm_mmap_pgoff", .kind = BTF_KIND_FUNC },
		{ .name = "btf_trace_sched_process_exec", .kind = BTF_KIND_TYPEDEF },
		{ .name = "btf_trace_module_load", .kind = BTF_KIND_TYPEDEF },
		{ .name = "task_struct", .kind = BTF_KIND_STRUCT },
		{ .name = "task_struct", .kind = BTF_KIND_FUNC },       /* a name of another kind */
		{ .name = "no_such_function_anywhere", .kind = BTF_KIND_FUNC },
		{ .name = "pid_t", .kind = BTF_KIND_TYPEDEF },
	};
	assert_int_equal(bt_kbtf_find(VMLINUX, q, sizeof(q) / sizeof(q[0])), 0);
	struct btf *btf = btf__parse(VMLINUX, NULL);
	assert_non_null(btf);
	expect_as_libbpf(btf, q, sizeof(q) / sizeof(q[0]));
	assert_true(q[0].id > 0 && q[1].id > 0 && q[3].id > 0);
	assert_int_equal(q[4].id, -ENOENT);
	assert_int_equal(q[5].id, -ENOENT);
	btf__free(btf);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* A file libbpf builds: a name that is another's suffix and a prefix of a third, the same name
 * under two kinds, types of every size class before the ones asked for, and an enum longer than
 * the reader's window (its values are skipped by the size its header gives). */
static void kbtf__built_file__ids_by_name_and_kind(void **state)
{
	struct btf *b = btf__new_empty();
	assert_non_null(b);
	int i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	assert_true(i32 > 0);
	assert_true(btf__add_enum(b, "big", 4) > 0);
	char v[32];
	for (int k = 0; k < 40000; k++) {   /* 320 KB of enum values */
		snprintf(v, sizeof(v), "V%d", k);
		assert_int_equal(btf__add_enum_value(b, v, k), 0);
	}
	int st = btf__add_struct(b, "s", 8);
	assert_true(st > 0);
	assert_int_equal(btf__add_field(b, "a", i32, 0, 0), 0);
	assert_int_equal(btf__add_field(b, "b", i32, 32, 0), 0);
	int proto = btf__add_func_proto(b, i32);
	assert_true(proto > 0);
	assert_int_equal(btf__add_func_param(b, "x", i32), 0);
	int f_long = btf__add_func(b, "do_vm_mmap_pgoff", BTF_FUNC_GLOBAL, proto);
	int td = btf__add_typedef(b, "vm_mmap_pgoff", i32);
	int f = btf__add_func(b, "vm_mmap_pgoff", BTF_FUNC_GLOBAL, proto);
	int f_pre = btf__add_func(b, "vm_mmap_pgoff_x", BTF_FUNC_GLOBAL, proto);
	assert_true(f_long > 0 && td > 0 && f > 0 && f_pre > 0);
	uint32_t len;
	const void *raw = btf__raw_data(b, &len);
	assert_non_null(raw);
	assert_true(len > (256u << 10));
	char dir[] = "/tmp/bt_kbtf_XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/btf", dir);
	write_file(path, raw, len);
	struct bt_kbtf_query q[] = {
		{ .name = "vm_mmap_pgoff", .kind = BTF_KIND_FUNC },
		{ .name = "vm_mmap_pgoff", .kind = BTF_KIND_TYPEDEF },
		{ .name = "do_vm_mmap_pgoff", .kind = BTF_KIND_FUNC },
		{ .name = "s", .kind = BTF_KIND_STRUCT },
		{ .name = "mmap_pgoff", .kind = BTF_KIND_FUNC },  /* only ever a suffix */
	};
	assert_int_equal(bt_kbtf_find(path, q, 5), 0);
	assert_int_equal(q[0].id, f);
	assert_int_equal(q[1].id, td);
	assert_int_equal(q[2].id, f_long);
	assert_int_equal(q[3].id, st);
	assert_int_equal(q[4].id, -ENOENT);
	expect_as_libbpf(b, q, 4);
	/* cut short inside the types: the walk cannot finish */
	write_file(path, raw, 200u << 10);
	assert_int_equal(bt_kbtf_find(path, q, 1), -EPROTO);
	/* not BTF at all */
	write_file(path, "ELF and more bytes than a header", 32);
	assert_int_equal(bt_kbtf_find(path, q, 1), -EPROTO);
	write_file(path, "", 0);
	assert_int_equal(bt_kbtf_find(path, q, 1), -EPROTO);
	assert_int_equal(bt_kbtf_find(dir, q, 1), -EISDIR);
	unlink(path);
	rmdir(dir);
	assert_int_equal(bt_kbtf_find(path, q, 1), -ENOENT);
	struct bt_kbtf_query bad = { .name = "", .kind = BTF_KIND_FUNC };
	assert_int_equal(bt_kbtf_find(VMLINUX, &bad, 1), -EINVAL);
	btf__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kbtf__kernel_types__same_ids_as_libbpf),
		cmocka_unit_test(kbtf__built_file__ids_by_name_and_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
