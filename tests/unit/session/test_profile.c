/* test_profile.c - aggregation of stacks and the folded format flame graph tools read. */
#include "testutil.h"
#include "session/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names user locations "f<offset>" and kernel ones "k<addr>" (the folded writer marks them);
 * offsets >= 1000 stay pending. */
static const char *resolve(void *ctx, const struct bt_loc *l, bool *final, bool *unresolved)
{
	static char buf[64];
	int *calls = ctx;
	(*calls)++;
	if (l->kind == BT_LOC_KERNEL)
		snprintf(buf, sizeof(buf), "k%llu", (unsigned long long)l->addr);
	else if (l->addr >= 1000) {
		*final = false;
		*unresolved = true;
		snprintf(buf, sizeof(buf), "[lib+0x%llx]", (unsigned long long)l->addr);
	} else
		snprintf(buf, sizeof(buf), "f%llu", (unsigned long long)l->addr);
	return buf;
}

static char *folded(struct bt_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(bt_profile_write_folded(p, f), 0);
	fclose(f);
	return buf;
}

static uint32_t loc(struct bt_profile *p, enum bt_loc_kind k, uint64_t addr)
{
	int64_t id = bt_profile_loc(p, k, 1, addr, false);
	assert_true(id >= 0);
	return (uint32_t)id;
}

static void profile__same_stack__counted_once(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "app");
	uint32_t s[] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_USER, 2), loc(&p, BT_LOC_KERNEL, 9) };
	for (int i = 0; i < 5; i++)
		assert_int_equal(bt_profile_add(&p, comm, 1, s, 3, 1), 0);
	assert_int_equal(bt_profile_add(&p, comm, 1, s, 2, 1), 0);
	assert_int_equal(p.nstacks, 2);
	assert_int_equal(p.total, 6);
	int calls = 0;
	assert_int_equal(bt_profile_resolve(&p, resolve, &calls), 0);
	assert_int_equal(calls, 3);  /* each location named once */
	char *out = folded(&p);
	assert_string_equal(out, "app;f1;f2 1\napp;f1;f2;k9_[k] 5\n");
	free(out);
	bt_profile_free(&p);
}

static void profile__different_addresses_same_name__merged_in_output(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "app");
	uint32_t a[] = { loc(&p, BT_LOC_KERNEL, 7) };
	uint32_t b[] = { loc(&p, BT_LOC_KERNEL, 7) };
	assert_int_equal(a[0], b[0]);
	uint32_t c[] = { loc(&p, BT_LOC_USER, 3) };
	bt_profile_add(&p, comm, 1, a, 1, 2);
	bt_profile_add(&p, comm, 2, c, 1, 1);
	int calls = 0;
	bt_profile_resolve(&p, resolve, &calls);
	char *out = folded(&p);
	assert_string_equal(out, "app;f3 1\napp;k7_[k] 2\n");
	free(out);
	bt_profile_free(&p);
}

/* Kept per process, one stack of one comm in two pids gives two lines, each saying whose it is as
 * stackcollapse-perf --pid does (comm-PID); read back, the file is known to be per process. */
static void profile__per_pid__comm_pid_lines_read_back(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	p.per_pid = true;
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "app-2");
	uint32_t s[] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_USER, 2) };
	bt_profile_add(&p, comm, 41, s, 2, 3);
	bt_profile_add(&p, comm, 7, s, 2, 1);
	bt_profile_add(&p, comm, 41, s, 1, 2);
	int calls = 0;
	bt_profile_resolve(&p, resolve, &calls);
	char *out = folded(&p);
	assert_string_equal(out, "app-2-41;f1 2\napp-2-41;f1;f2 3\napp-2-7;f1;f2 1\n");
	FILE *in = fmemopen(out, strlen(out), "r");
	struct bt_folded f;
	assert_int_equal(bt_folded_parse(in, &f, NULL), 0);
	fclose(in);
	assert_true(f.per_pid);
	assert_int_equal(f.n, 3);
	size_t cl;
	uint32_t pid;
	assert_true(bt_folded_comm_pid(f.v[2].text, &cl, &pid));
	assert_int_equal(cl, 5);  /* "app-2": the pid is after the last '-' */
	assert_int_equal(pid, 7);
	bt_folded_free(&f);
	free(out);
	/* the same profile not kept per process: one line, no pid */
	p.per_pid = false;
	bt_profile_free(&p);
	bt_profile_init(&p);
	comm = (uint32_t)bt_strtab_add(&p.names, "app");
	uint32_t t[] = { loc(&p, BT_LOC_USER, 1) };
	bt_profile_add(&p, comm, 41, t, 1, 3);
	bt_profile_add(&p, comm, 7, t, 1, 1);
	bt_profile_resolve(&p, resolve, &calls);
	out = folded(&p);
	assert_string_equal(out, "app;f1 4\n");
	free(out);
	bt_profile_free(&p);
	/* a file is per process only when every line begins with comm-PID */
	static const char *const mixed[] = { "a-1;f 1\nb;f 2\n", "-1;f 1\n", "a-;f 1\n", "a-99999999999;f 1\n",
					     "a-1x;f 1\n" };
	for (size_t i = 0; i < sizeof(mixed) / sizeof(mixed[0]); i++) {
		in = fmemopen((void *)mixed[i], strlen(mixed[i]), "r");
		assert_int_equal(bt_folded_parse(in, &f, NULL), 0);
		fclose(in);
		if (f.per_pid)
			fail_msg("%s: taken as per process", mixed[i]);
		bt_folded_free(&f);
	}
}

static void profile__pending_names__retried_and_counted(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "x");
	uint32_t s[] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_USER, 4096) };
	bt_profile_add(&p, comm, 1, s, 2, 3);
	int calls = 0;
	bt_profile_resolve(&p, resolve, &calls);
	assert_int_equal(bt_profile_unresolved_frames(&p), 3);
	bt_profile_resolve(&p, resolve, &calls);
	assert_int_equal(calls, 3);  /* the final one is not asked again, the pending one is */
	bt_profile_free(&p);
}

static void profile__separator_in_name__escaped(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "a;b");
	uint32_t s[] = { loc(&p, BT_LOC_USER, 1) };
	bt_profile_add(&p, comm, 1, s, 1, 1);
	int calls = 0;
	bt_profile_resolve(&p, resolve, &calls);
	char *out = folded(&p);
	assert_string_equal(out, "a:b;f1 1\n");
	free(out);
	bt_profile_free(&p);
}

static void profile__set_lines__kept_once_strings_interned(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t a = loc(&p, BT_LOC_USER, 1), b = loc(&p, BT_LOC_USER, 2);
	const struct bt_srcline_text t[] = { { "inner", "x.h", 7 }, { "outer", "x.c", 42 }, { NULL, NULL, 0 } };
	assert_int_equal(bt_profile_set_lines(&p, a, t, 3), 0);
	assert_int_equal(p.locs[a].nlines, 3);
	assert_true(p.locs[a].lines_tried);
	const struct bt_srcline *l = &p.srclines[p.locs[a].lines_first];
	assert_string_equal(bt_strtab_get(&p.names, l[0].func_id), "inner");
	assert_string_equal(bt_strtab_get(&p.names, l[0].file_id), "x.h");
	assert_int_equal(l[0].line, 7);
	assert_string_equal(bt_strtab_get(&p.names, l[1].func_id), "outer");
	assert_int_equal(l[1].line, 42);
	assert_int_equal(l[2].func_id, BT_NAME_UNSET);
	assert_int_equal(l[2].file_id, BT_NAME_UNSET);
	/* a location keeps the lines it was first given; none is an answer too */
	assert_int_equal(bt_profile_set_lines(&p, a, t + 1, 1), 0);
	assert_int_equal(p.locs[a].nlines, 3);
	assert_int_equal(bt_profile_set_lines(&p, b, NULL, 0), 0);
	assert_int_equal(p.locs[b].nlines, 0);
	assert_true(p.locs[b].lines_tried);
	assert_int_equal(p.nsrclines, 3);
	/* an unknown location is refused */
	assert_int_equal(bt_profile_set_lines(&p, 99, t, 1), -EINVAL);
	bt_profile_free(&p);
}

static void profile__top__self_and_total(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "app");
	uint32_t main_ = loc(&p, BT_LOC_USER, 1), work = loc(&p, BT_LOC_USER, 2), rec = loc(&p, BT_LOC_USER, 3);
	uint32_t s1[] = { main_, work };
	uint32_t s2[] = { main_, rec, rec };  /* recursion counts once in total */
	bt_profile_add(&p, comm, 1, s1, 2, 6);
	bt_profile_add(&p, comm, 1, s2, 3, 4);
	int calls = 0;
	bt_profile_resolve(&p, resolve, &calls);
	struct bt_top_entry top[8];
	size_t n = bt_profile_top(&p, top, 8);
	assert_int_equal(n, 3);
	assert_string_equal(bt_strtab_get(&p.names, top[0].name_id), "f2");
	assert_int_equal(top[0].self, 6);
	assert_string_equal(bt_strtab_get(&p.names, top[1].name_id), "f3");
	assert_int_equal(top[1].self, 4);
	assert_int_equal(top[1].total, 4);
	assert_string_equal(bt_strtab_get(&p.names, top[2].name_id), "f1");
	assert_int_equal(top[2].total, 10);
	assert_int_equal(top[2].self, 0);
	bt_profile_free(&p);
}

/* One name for a user and a kernel function: the model keeps it plain, the folded writer marks the
 * kernel frame, and the top list counts them apart. */
static const char *name_read(void *ctx, const struct bt_loc *l, bool *final, bool *unresolved)
{
	return "read";
}

static void profile__kernel_frame__marked_only_in_folded_text(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "app");
	uint32_t s[] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_KERNEL, 2) };
	bt_profile_add(&p, comm, 1, s, 2, 3);
	assert_int_equal(bt_profile_resolve(&p, name_read, NULL), 0);
	assert_string_equal(bt_profile_loc_name(&p, s[1]), "read");
	char *out = folded(&p);
	assert_string_equal(out, "app;read;read_[k] 3\n");
	free(out);
	struct bt_top_entry top[4];
	assert_int_equal(bt_profile_top(&p, top, 4), 2);
	assert_true(top[0].kernel);
	assert_int_equal(top[0].self, 3);
	assert_false(top[1].kernel);
	assert_int_equal(top[1].self, 0);
	assert_int_equal(top[0].name_id, top[1].name_id);
	/* reading folded text: a kernel frame is a name and the suffix */
	assert_true(bt_folded_is_kernel("read_[k]", 8));
	assert_false(bt_folded_is_kernel("_[k]", 4));
	assert_false(bt_folded_is_kernel("read_[k]", 7));
	bt_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profile__same_stack__counted_once),
		cmocka_unit_test(profile__different_addresses_same_name__merged_in_output),
		cmocka_unit_test(profile__per_pid__comm_pid_lines_read_back),
		cmocka_unit_test(profile__pending_names__retried_and_counted),
		cmocka_unit_test(profile__separator_in_name__escaped),
		cmocka_unit_test(profile__set_lines__kept_once_strings_interned),
		cmocka_unit_test(profile__top__self_and_total),
		cmocka_unit_test(profile__kernel_frame__marked_only_in_folded_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
