/* test_folded.c - folded text: written from a profile (kernel frames suffixed, separators escaped,
 * comm-PID per process), read back into lines, and read into a profile whose frames have their
 * kinds again; a round trip gives the same text. */
#include "testutil.h"
#include "output/folded.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names user locations "f<offset>" and kernel ones "k<addr>". */
static const char *resolve(void *ctx, const struct bt_loc *l, bool *final, bool *unresolved)
{
	static char buf[64];
	int *calls = ctx;
	(*calls)++;
	if (l->kind == BT_LOC_KERNEL)
		snprintf(buf, sizeof(buf), "k%llu", (unsigned long long)l->addr);
	else
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

/* text parsed into a profile */
static void read_profile(const char *text, struct bt_profile *p)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	struct bt_folded f;
	assert_int_equal(bt_folded_parse(in, &f, NULL), 0);
	fclose(in);
	bt_profile_init(p);
	assert_int_equal(bt_folded_to_profile(&f, p), 0);
	bt_folded_free(&f);
}

/* One name for a user and a kernel function: the model keeps it plain, the folded writer marks the
 * kernel frame, and the top list counts them apart. */
static const char *name_read(void *ctx, const struct bt_loc *l, bool *final, bool *unresolved)
{
	return "read";
}

/* Kept per process, one stack of one comm in two pids gives two lines, each saying whose it is as
 * stackcollapse-perf --pid does (comm-PID); read back, the file is known to be per process. */
static void folded__per_pid__comm_pid_lines_read_back(void **state)
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

static void folded__separator_in_name__escaped(void **state)
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

static void folded__kernel_frame__marked_only_in_folded_text(void **state)
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

/* Read into a profile, a suffixed frame is a kernel location of the plain name, the same name
 * without the suffix a user location; placeholders are unresolved; written again, the same text. */
static void folded__read_into_profile__kinds_back_and_same_text(void **state)
{
	const char *text = "app;main;read;read_[k];[libc.so.6+0x1f] 3\napp;main;[unknown] 1\nsh;_[k] 2\n";
	struct bt_profile p;
	read_profile(text, &p);
	assert_int_equal(p.total, 6);
	assert_int_equal(p.nstacks, 3);
	assert_false(p.per_pid);
	int kernel = 0, user = 0;
	for (size_t i = 0; i < p.nlocs; i++) {
		const char *name = bt_profile_loc_name(&p, (uint32_t)i);
		assert_int_equal(p.locs[i].file_id, BT_LOC_NAMED);
		assert_true(p.locs[i].resolved);
		assert_int_equal(p.locs[i].unresolved, name[0] == '[');
		if (p.locs[i].kind == BT_LOC_KERNEL) {
			kernel++;
			assert_string_equal(name, "read");
		} else {
			user++;
			assert_false(bt_folded_is_kernel(name, strlen(name)));
		}
	}
	assert_int_equal(kernel, 1);
	assert_int_equal(user, 5);  /* main, read, the two placeholders, and "_[k]" (a name, no suffix) */
	/* [libc.so.6+0x1f] 3 times, [unknown] once */
	assert_int_equal(bt_profile_unresolved_frames(&p), 4);
	char *out = folded(&p);
	assert_string_equal(out, "app;main;[unknown] 1\napp;main;read;read_[k];[libc.so.6+0x1f] 3\nsh;_[k] 2\n");
	free(out);
	bt_profile_free(&p);
}

static void folded__per_pid_lines__profile_keeps_pids(void **state)
{
	struct bt_profile p;
	read_profile("a-b-12;f 2\na-b-7;f 1\n", &p);
	assert_true(p.per_pid);
	assert_int_equal(p.nstacks, 2);
	for (size_t i = 0; i < p.nstacks; i++) {
		assert_string_equal(bt_strtab_get(&p.names, p.stacks[i].comm_id), "a-b");
		assert_int_equal(p.stacks[i].count, p.stacks[i].pid == 12 ? 2 : 1);
	}
	char *out = folded(&p);
	assert_string_equal(out, "a-b-12;f 2\na-b-7;f 1\n");
	free(out);
	bt_profile_free(&p);
}

/* Kept per thread (--per-thread): two threads of one process give two comm-PID/TID lines; read
 * back, each keeps its pid and tid, and a file mixing the forms is per process no more. */
static void folded__per_thread__comm_pid_tid_lines_read_back(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	p.per_pid = p.per_tid = true;
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "w-1");
	uint32_t s[] = { loc(&p, BT_LOC_USER, 1) };
	struct bt_sample_key a = { .comm_id = comm, .pid = 40, .tid = 41, .exe_file = BT_NAME_UNSET,
				    .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET };
	struct bt_sample_key b = { .comm_id = comm, .pid = 40, .tid = 42, .exe_file = BT_NAME_UNSET,
				    .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET };
	assert_int_equal(bt_profile_add_key(&p, &a, s, 1, 1), 0);
	assert_int_equal(p.last_stack, 0);
	assert_int_equal(bt_profile_add_key(&p, &b, s, 1, 1), 0);
	assert_int_equal(p.last_stack, 1);
	assert_int_equal(bt_profile_add_key(&p, &a, s, 1, 1), 0);
	assert_int_equal(p.last_stack, 0);
	int calls = 0;
	assert_int_equal(bt_profile_resolve(&p, resolve, &calls), 0);
	char *out = folded(&p);
	assert_string_equal(out, "w-1-40/41;f1 2\nw-1-40/42;f1 1\n");
	bt_profile_free(&p);
	read_profile(out, &p);
	free(out);
	assert_true(p.per_tid && p.per_pid);
	assert_int_equal(p.nstacks, 2);
	assert_string_equal(bt_strtab_get(&p.names, p.stacks[0].comm_id), "w-1");
	assert_int_equal(p.stacks[0].pid, 40);
	out = folded(&p);
	assert_string_equal(out, "w-1-40/41;f1 2\nw-1-40/42;f1 1\n");
	free(out);
	bt_profile_free(&p);
	read_profile("w-40/41;f 2\nw-40;f 1\n", &p);
	assert_false(p.per_tid);
	assert_false(p.per_pid);
	bt_profile_free(&p);
}

/* Lines of time: off-CPU nanoseconds in microseconds (rounded, a line under half a microsecond
 * left out), with wall the samples as their period too; the samples alone otherwise. */
static void folded__time__microseconds_rounded_with_wall_samples(void **state)
{
	struct bt_profile p;
	bt_profile_init(&p);
	uint32_t comm = (uint32_t)bt_strtab_add(&p.names, "app");
	uint32_t a[] = { loc(&p, BT_LOC_USER, 1), loc(&p, BT_LOC_KERNEL, 2) };
	uint32_t b[] = { loc(&p, BT_LOC_USER, 3) };
	struct bt_sample_key off = { .comm_id = comm, .pid = 0, .tid = 0, .exe_file = BT_NAME_UNSET,
				    .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET, .kind = BT_VALUE_OFFCPU };
	struct bt_sample_key cpu = off;
	cpu.kind = BT_VALUE_SAMPLES;
	assert_int_equal(bt_profile_add_key(&p, &off, a, 2, 2499), 0);   /* 2 us */
	assert_int_equal(bt_profile_add_key(&p, &off, b, 1, 499), 0);    /* under half: gone */
	assert_int_equal(bt_profile_add_key(&p, &cpu, b, 1, 3), 0);
	int calls = 0;
	bt_profile_resolve(&p, resolve, &calls);
	struct bt_fold_time t = { .wall = false, .period_ns = 10000, .unit_ns = 1000 };
	struct bt_folded f;
	assert_int_equal(bt_folded_time_from_profile(&p, &t, &f), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.v[0].text, "app;f1;k2_[k]");
	assert_int_equal(f.v[0].count, 2);
	assert_int_equal(f.total, 2);
	bt_folded_free(&f);
	t.wall = true;   /* the 3 samples are 30 us, the 499 ns with them make 30.499: 30 */
	assert_int_equal(bt_folded_time_from_profile(&p, &t, &f), 0);
	assert_int_equal(f.n, 2);
	assert_string_equal(f.v[1].text, "app;f3");
	assert_int_equal(f.v[1].count, 30);
	assert_int_equal(f.total, 32);
	bt_folded_free(&f);
	t.unit_ns = 1;
	assert_int_equal(bt_folded_time_from_profile(&p, &t, &f), 0);
	assert_int_equal(f.v[1].count, 30499);
	bt_folded_free(&f);
	char *out = folded(&p);
	assert_string_equal(out, "app;f3 3\n");
	free(out);
	bt_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folded__per_pid__comm_pid_lines_read_back),
		cmocka_unit_test(folded__separator_in_name__escaped),
		cmocka_unit_test(folded__kernel_frame__marked_only_in_folded_text),
		cmocka_unit_test(folded__read_into_profile__kinds_back_and_same_text),
		cmocka_unit_test(folded__per_pid_lines__profile_keeps_pids),
		cmocka_unit_test(folded__per_thread__comm_pid_tid_lines_read_back),
		cmocka_unit_test(folded__time__microseconds_rounded_with_wall_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
