/* test_profile.c - aggregation of stacks: locations interned once, named once, counted; seen through
 * the folded writer. */
#include "testutil.h"
#include "session/profile.h"
#include "output/folded.h"

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

/* Adds count samples of the stack ids[0..n) to series text of p (through the cap). */
static void add_series(struct bt_profile *p, const char *text, const uint32_t *ids, size_t n, uint64_t count)
{
	int64_t id = bt_profile_series(p, text, "service_name=other");
	assert_true(id >= 0);
	struct bt_sample_key k = { .comm_id = (uint32_t)bt_strtab_add(&p->names, "c"), .pid = 1,
				   .exe_file = BT_NAME_UNSET, .cgroup_id = BT_NAME_UNSET, .series_id = (uint32_t)id };
	assert_int_equal(bt_profile_add_key(p, &k, ids, n, count), 0);
}

/* Series: the same stack kept apart per series; beyond the bound, new label sets fold into the
 * other series, counted (samples, and each label set once); known ones still go to their own. */
static void profile__series__kept_apart_and_capped(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	p.series_max = 2;
	uint32_t ids[2] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_USER, 2) };
	add_series(&p, "service_name=a", ids, 2, 1);
	add_series(&p, "service_name=b", ids, 2, 1);
	add_series(&p, "service_name=a", ids, 2, 1);
	assert_int_equal(p.nstacks, 2);
	assert_int_equal(p.nseries, 2);
	add_series(&p, "service_name=c", ids, 2, 1);
	add_series(&p, "service_name=d", ids, 1, 1);
	add_series(&p, "service_name=c", ids, 2, 1);
	add_series(&p, "service_name=b", ids, 2, 1);
	assert_int_equal(p.nseries, 3);
	assert_string_equal(bt_strtab_get(&p.names, p.series[2]), "service_name=other");
	assert_int_equal(p.series_folded, 2);
	assert_int_equal(p.series_folded_samples, 3);
	assert_int_equal(p.nstacks, 4);  /* a, b, other x2 (two stacks) */
	assert_int_equal(p.total, 7);
	bt_profile_free(&p);
}

static bool keep_one(void *ctx, const char *series)
{
	return series && !strcmp(series, ctx);
}

/* A series extracted: only its stacks, and only the locations they use, named, with their lines. */
static void profile__extract__one_series_alone(void **state)
{
	struct bt_profile p, b;
	bt_profile_init(&p);
	bt_profile_init(&b);
	uint32_t ia[2] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_USER, 2) };
	uint32_t ib[2] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_USER, 3) };
	add_series(&p, "service_name=a", ia, 2, 5);
	add_series(&p, "service_name=b", ib, 2, 7);
	add_series(&p, "service_name=b", ia, 1, 2);
	int calls = 0;
	assert_int_equal(bt_profile_resolve(&p, resolve, &calls), 0);
	struct bt_srcline_text t = { "inl", "x.c", 12 };
	assert_int_equal(bt_profile_set_lines(&p, ib[1], &t, 1), 0);
	assert_int_equal(bt_profile_extract(&p, keep_one, "service_name=b", &b), 0);
	assert_int_equal(b.total, 9);
	assert_int_equal(b.nstacks, 2);
	assert_int_equal(b.nlocs, 2);  /* f1 and f3; not f2 */
	assert_int_equal(b.nseries, 1);
	char *text = folded(&b);
	assert_string_equal(text, "c;f1 2\nc;f1;f3 7\n");
	free(text);
	for (size_t i = 0; i < b.nlocs; i++)
		if (b.locs[i].addr == 3) {
			assert_int_equal(b.locs[i].nlines, 1);
			assert_string_equal(bt_strtab_get(&b.names, b.srclines[b.locs[i].lines_first].func_id), "inl");
		}
	assert_string_equal(bt_strtab_get(&b.names, b.stacks[0].series_id), "service_name=b");
	bt_profile_free(&b);
	bt_profile_free(&p);
}

/* One stack's frames counted as samples and as off-CPU time are two stacks, each total its kind's;
 * what counts samples (unresolved frames, the top list) leaves the time out, and the reverse. */
static void profile__value_kinds__kept_apart(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "app");
	uint32_t s[] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_USER, 2000) };  /* 2000: unnamed */
	struct bt_sample_key cpu = { .comm_id = comm, .pid = 1, .tid = 1, .exe_file = BT_NAME_UNSET,
				    .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET, .kind = BT_VALUE_SAMPLES };
	struct bt_sample_key off = cpu;
	off.kind = BT_VALUE_OFFCPU;
	assert_int_equal(bt_profile_add_key(&p, &cpu, s, 2, 3), 0);
	assert_int_equal(bt_profile_add_key(&p, &off, s, 2, 5000000), 0);
	assert_int_equal(bt_profile_add_key(&p, &off, s, 2, 1000000), 0);
	assert_int_equal(p.nstacks, 2);
	assert_int_equal(p.total, 3);
	assert_int_equal(p.offcpu_ns, 6000000);
	assert_int_equal(p.stacks[1].kind, BT_VALUE_OFFCPU);
	assert_int_equal(p.stacks[1].count, 6000000);
	int calls = 0;
	assert_int_equal(bt_profile_resolve(&p, resolve, &calls), 0);
	assert_int_equal(bt_profile_unresolved_frames(&p), 3);
	assert_int_equal(bt_profile_unresolved_ns(&p), 6000000);
	struct bt_top_entry top[4];
	assert_int_equal(bt_profile_top(&p, top, 4), 2);
	assert_int_equal(top[0].self + top[1].self, 3);
	/* the folded text of samples has the CPU stack only */
	char *out = folded(&p);
	assert_string_equal(out, "app;f1;[lib+0x7d0] 3\n");
	free(out);
	bt_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profile__value_kinds__kept_apart),
		cmocka_unit_test(profile__same_stack__counted_once),
		cmocka_unit_test(profile__different_addresses_same_name__merged_in_output),
		cmocka_unit_test(profile__pending_names__retried_and_counted),
		cmocka_unit_test(profile__set_lines__kept_once_strings_interned),
		cmocka_unit_test(profile__top__self_and_total),
		cmocka_unit_test(profile__series__kept_apart_and_capped),
		cmocka_unit_test(profile__extract__one_series_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
