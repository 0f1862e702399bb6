/* test_topview.c - the live view's table over a profile made by hand: shares, the library column
 * (a file's name, [kernel], [jit], [unknown]), each sort, the filter, one side, grouping by process
 * and lines of exactly the screen's width. */
#include "testutil.h"
#include "cmd/live/topview.h"

#include <stdlib.h>
#include <string.h>

enum { MAIN, WORK, MEMCPY, SYSCALL, BPFPROG, ANON, STRAY, NLOCS };
static const char *const names[NLOCS] = { "main", "work", "memcpy", "do_syscall_64", "bpf_prog_1234_x",
					  "jitted", "[unknown]" };

static const char *resolve(void *ctx, const struct bt_loc *l, bool *final, bool *unresolved)
{
	*final = true;
	*unresolved = false;
	return names[l->addr];
}

struct fixture {
	struct bt_session s;
	uint32_t ids[NLOCS];
};

/* Files 0: /opt/app/prog, 1: /usr/lib/libc.so.6, 2: //anon. Stacks (outermost first):
 * a: main;work x6, main;work;memcpy x2, main;do_syscall_64 [k] x1; b: main;bpf_prog [k] x1,
 * b: jitted;[unmapped] x1 with stray last. Eleven samples. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct bt_session *s = &f->s;
	bt_profile_init(&s->prof);
	bt_strtab_init(&s->dsos.paths);
	const char *paths[] = { "/opt/app/prog", "/usr/lib/libc.so.6", "//anon" };
	s->dsos.files = calloc(3, sizeof(*s->dsos.files));
	s->dsos.nfiles = 3;
	for (int i = 0; i < 3; i++)
		s->dsos.files[i].path_id = (uint32_t)bt_strtab_intern(&s->dsos.paths, paths[i], strlen(paths[i]));
	const struct { enum bt_loc_kind kind; uint32_t file; } where[NLOCS] = {
		{ BT_LOC_USER, 0 }, { BT_LOC_USER, 0 }, { BT_LOC_USER, 1 }, { BT_LOC_KERNEL, 0 },
		{ BT_LOC_KERNEL, 0 }, { BT_LOC_USER, 2 }, { BT_LOC_UNMAPPED, 0 },
	};
	for (int i = 0; i < NLOCS; i++)
		f->ids[i] = (uint32_t)bt_profile_loc(&s->prof, where[i].kind, where[i].file, (uint64_t)i, false);
	uint32_t a = (uint32_t)bt_strtab_intern(&s->prof.names, "a", 1);
	uint32_t b = (uint32_t)bt_strtab_intern(&s->prof.names, "b", 1);
	uint32_t *id = f->ids;
	uint32_t s1[] = { id[MAIN], id[WORK] }, s2[] = { id[MAIN], id[WORK], id[MEMCPY] },
		 s3[] = { id[MAIN], id[SYSCALL] }, s4[] = { id[MAIN], id[BPFPROG] }, s5[] = { id[ANON], id[STRAY] };
	assert_int_equal(bt_profile_add(&s->prof, a, 0, s1, 2, 6), 0);
	assert_int_equal(bt_profile_add(&s->prof, a, 0, s2, 3, 2), 0);
	assert_int_equal(bt_profile_add(&s->prof, a, 0, s3, 2, 1), 0);
	assert_int_equal(bt_profile_add(&s->prof, b, 0, s4, 2, 1), 0);
	assert_int_equal(bt_profile_add(&s->prof, b, 0, s5, 2, 1), 0);
	assert_int_equal(bt_profile_resolve(&s->prof, resolve, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	bt_profile_free(&f->s.prof);
	bt_strtab_free(&f->s.dsos.paths);
	free(f->s.dsos.files);
	free(f);
	return 0;
}

static const struct bt_top_row *row(const struct bt_session *s, const struct bt_top_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!t->rows[i].process && !strcmp(bt_strtab_get(&s->prof.names, t->rows[i].name_id), name))
			return &t->rows[i];
	return NULL;
}

static const char *name_at(const struct bt_session *s, const struct bt_top_table *t, size_t i)
{
	return bt_strtab_get(&s->prof.names, t->rows[i].name_id);
}

static void topview__shares_and_libraries(void **state)
{
	struct fixture *f = *state;
	struct bt_top_table t;
	struct bt_top_opts o = { .sort = BT_TOP_BY_SELF };
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	assert_int_equal(t.samples, 11);
	assert_int_equal(t.nfuncs, NLOCS);
	const struct bt_top_row *r = row(&f->s, &t, "work");
	assert_non_null(r);
	assert_int_equal(r->self, 6);
	assert_int_equal(r->total, 8);
	r = row(&f->s, &t, "main");
	assert_int_equal(r->self, 0);
	assert_int_equal(r->total, 10);
	char buf[64];
	assert_string_equal(bt_top_library(row(&f->s, &t, "work"), buf, sizeof(buf)), "prog");
	assert_string_equal(bt_top_library(row(&f->s, &t, "memcpy"), buf, sizeof(buf)), "libc.so.6");
	assert_string_equal(bt_top_library(row(&f->s, &t, "do_syscall_64"), buf, sizeof(buf)), "[kernel]");
	assert_string_equal(bt_top_library(row(&f->s, &t, "bpf_prog_1234_x"), buf, sizeof(buf)), "[jit]");
	assert_string_equal(bt_top_library(row(&f->s, &t, "jitted"), buf, sizeof(buf)), "[jit]");
	assert_string_equal(bt_top_library(row(&f->s, &t, "[unknown]"), buf, sizeof(buf)), "[unknown]");
	bt_top_free(&t);
}

static void topview__each_sort(void **state)
{
	struct fixture *f = *state;
	struct bt_top_table t;
	struct bt_top_opts o = { .sort = BT_TOP_BY_SELF };
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	assert_string_equal(name_at(&f->s, &t, 0), "work");
	assert_string_equal(name_at(&f->s, &t, 1), "memcpy");
	bt_top_free(&t);
	o.sort = bt_top_sort_next(o.sort, false);
	assert_string_equal(bt_top_sort_name(o.sort), "total");
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	assert_string_equal(name_at(&f->s, &t, 0), "main");
	assert_string_equal(name_at(&f->s, &t, 1), "work");
	bt_top_free(&t);
	o.sort = bt_top_sort_next(o.sort, false);
	assert_string_equal(bt_top_sort_name(o.sort), "name");
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	for (size_t i = 1; i < t.n; i++)
		assert_true(strcmp(name_at(&f->s, &t, i - 1), name_at(&f->s, &t, i)) <= 0);
	bt_top_free(&t);
	o.sort = bt_top_sort_next(o.sort, false);
	assert_string_equal(bt_top_sort_name(o.sort), "library");
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	char b1[64], b2[64];
	for (size_t i = 1; i < t.n; i++)
		assert_true(strcmp(bt_top_library(&t.rows[i - 1], b1, sizeof(b1)),
				   bt_top_library(&t.rows[i], b2, sizeof(b2))) <= 0);
	bt_top_free(&t);
	/* and round again */
	assert_int_equal(bt_top_sort_next(o.sort, false), BT_TOP_BY_SELF);
}

static void topview__filter_and_sides(void **state)
{
	struct fixture *f = *state;
	struct bt_top_table t;
	struct bt_top_opts o = { .sort = BT_TOP_BY_SELF, .filter = "WORK" };
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(name_at(&f->s, &t, 0), "work");
	assert_int_equal(t.samples, 11);  /* shares stay shares of everything */
	bt_top_free(&t);
	o.filter = NULL;
	o.side = BT_TOP_KERNEL;
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	assert_int_equal(t.n, 2);
	for (size_t i = 0; i < t.n; i++)
		assert_true(t.rows[i].kernel);
	bt_top_free(&t);
	o.side = BT_TOP_USER;
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	assert_int_equal(t.n, NLOCS - 2);
	for (size_t i = 0; i < t.n; i++)
		assert_false(t.rows[i].kernel);
	bt_top_free(&t);
}

static void topview__per_process__headings_then_their_functions(void **state)
{
	struct fixture *f = *state;
	struct bt_top_table t;
	struct bt_top_opts o = { .sort = BT_TOP_BY_SELF, .per_process = true };
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	assert_true(t.rows[0].process);
	assert_string_equal(name_at(&f->s, &t, 0), "a");
	assert_int_equal(t.rows[0].total, 9);
	assert_string_equal(name_at(&f->s, &t, 1), "work");
	size_t b = 0;
	for (size_t i = 1; i < t.n; i++)
		if (t.rows[i].process)
			b = i;
	assert_true(b > 1);
	assert_string_equal(name_at(&f->s, &t, b), "b");
	assert_int_equal(t.rows[b].total, 2);
	/* main is in both: once under each */
	int mains = 0;
	for (size_t i = 0; i < t.n; i++)
		mains += !t.rows[i].process && !strcmp(name_at(&f->s, &t, i), "main");
	assert_int_equal(mains, 2);
	bt_top_free(&t);
	/* a filter drops the processes left without functions */
	o.filter = "memcpy";
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(name_at(&f->s, &t, 0), "a");
	bt_top_free(&t);
}

static void topview__lines__exactly_the_width(void **state)
{
	struct fixture *f = *state;
	struct bt_top_table t;
	struct bt_top_opts o = { .sort = BT_TOP_BY_SELF };
	char buf[512];
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	bt_top_heading(80, false, buf);
	assert_int_equal(strlen(buf), 80);
	assert_true(!strncmp(buf, "  self%  total% function", 24));
	assert_non_null(strstr(buf, "library"));
	bt_top_format(&f->s, &t, 0, 80, buf);
	assert_int_equal(strlen(buf), 80);
	assert_true(!strncmp(buf, "  54.5%   72.7% work ", 21));
	/* the library in the last column, where the heading has it */
	char head[512];
	bt_top_heading(80, false, head);
	assert_true(!strncmp(buf + (strstr(head, "library") - head), "prog", 4));
	/* a kernel function: its plain name, and where it is in the library column */
	size_t k = 0;
	while (k < t.n && !t.rows[k].kernel)
		k++;
	assert_true(k < t.n);
	bt_top_format(&f->s, &t, k, 120, buf);
	assert_int_equal(strlen(buf), 120);
	assert_null(strstr(buf, "_[k]"));
	bt_top_heading(120, false, head);
	char lib[64];
	const char *want = bt_top_library(&t.rows[k], lib, sizeof(lib));
	assert_true(want[0] == '[');  /* [kernel], a [module] or [jit] for a BPF program */
	assert_true(!strncmp(buf + (strstr(head, "library") - head), want, strlen(want)));
	/* narrow: still exactly the width, names cut */
	for (size_t w = 1; w < 70; w += 7) {
		bt_top_format(&f->s, &t, 0, w, buf);
		assert_int_equal(strlen(buf), w);
		bt_top_heading(w, false, buf);
		assert_int_equal(strlen(buf), w);
	}
	bt_top_free(&t);
}

/* With off-CPU time: its column, each function's share of it (state frames in "[off-CPU]"), a sort
 * by it, and the CPU shares left as they were; without the option the time is left out. */
static void topview__offcpu__own_column_and_sort(void **state)
{
	struct fixture *f = *state;
	struct bt_session *s = &f->s;
	int64_t st = bt_profile_named_loc(&s->prof, BT_LOC_OFFCPU, "off-CPU: sleeping (S)", 21);
	assert_true(st >= 0);
	uint32_t a = (uint32_t)bt_strtab_intern(&s->prof.names, "a", 1);
	uint32_t off[] = { f->ids[MAIN], f->ids[SYSCALL], (uint32_t)st };
	struct bt_sample_key k = { .comm_id = a, .exe_file = BT_NAME_UNSET, .cgroup_id = BT_NAME_UNSET,
				   .series_id = BT_NAME_UNSET, .kind = BT_VALUE_OFFCPU };
	assert_int_equal(bt_profile_add_key(&s->prof, &k, off, 3, 3000000000ULL), 0);
	assert_int_equal(bt_profile_add_key(&s->prof, &k, off, 1, 1000000000ULL), 0);
	struct bt_top_table t;
	struct bt_top_opts o = { .sort = BT_TOP_BY_OFFCPU, .offcpu = true };
	assert_int_equal(bt_top_build(s, &o, &t), 0);
	assert_int_equal(t.samples, 11);
	assert_int_equal(t.offcpu_ns, 4000000000ULL);
	assert_string_equal(name_at(s, &t, 0), "main");
	const struct bt_top_row *r = row(s, &t, "main");
	assert_int_equal(r->total, 10);
	assert_int_equal(r->off, 4000000000ULL);
	r = row(s, &t, "off-CPU: sleeping (S)");
	assert_non_null(r);
	assert_int_equal(r->self, 0);
	char buf[512], head[512];
	assert_string_equal(bt_top_library(r, buf, sizeof(buf)), "[off-CPU]");
	bt_top_heading(90, true, head);
	assert_int_equal(strlen(head), 90);
	assert_true(!strncmp(head, "  self%  total% off-cpu% function", 33));
	bt_top_format(s, &t, 0, 90, buf);
	assert_int_equal(strlen(buf), 90);
	assert_true(!strncmp(buf, "   0.0%   90.9%   100.0% main ", 30));
	bt_top_format(s, &t, 1, 90, buf);
	assert_true(!strncmp(buf, "   9.1%    9.1%    75.0% do_syscall_64 ", 39));
	assert_int_equal(bt_top_sort_next(BT_TOP_BY_LIBRARY, true), BT_TOP_BY_OFFCPU);
	assert_int_equal(bt_top_sort_next(BT_TOP_BY_OFFCPU, true), BT_TOP_BY_SELF);
	bt_top_free(&t);
	/* without the column: the CPU table as before */
	o = (struct bt_top_opts){ .sort = BT_TOP_BY_SELF };
	assert_int_equal(bt_top_build(s, &o, &t), 0);
	assert_null(row(s, &t, "off-CPU: sleeping (S)"));
	assert_int_equal(row(s, &t, "main")->total, 10);
	bt_top_free(&t);
}

/* A name a program chose to be terminal escape sequences is written escaped, the line still exactly
 * the width. */
static void topview__hostile_name__escaped(void **state)
{
	struct fixture *f = *state;
	struct bt_top_table t;
	struct bt_top_opts o = { .sort = BT_TOP_BY_SELF };
	char buf[512];
	assert_int_equal(bt_top_build(&f->s, &o, &t), 0);
	static const char evil[] = "x\x1b[2J\x1b]0;pwned\x07\xc2\x9b" "1m";
	t.rows[0].name_id = (uint32_t)bt_strtab_intern(&f->s.prof.names, evil, strlen(evil));
	bt_top_format(&f->s, &t, 0, 120, buf);
	assert_int_equal(strlen(buf), 120);
	assert_null(strchr(buf, '\x1b'));
	assert_null(strchr(buf, '\x07'));
	assert_null(strstr(buf, "\xc2\x9b"));
	assert_non_null(strstr(buf, "x\\x1b[2J\\x1b]0;pwned\\x07\\xc2\\x9b1m "));
	bt_top_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(topview__shares_and_libraries, setup, teardown),
		cmocka_unit_test_setup_teardown(topview__each_sort, setup, teardown),
		cmocka_unit_test_setup_teardown(topview__filter_and_sides, setup, teardown),
		cmocka_unit_test_setup_teardown(topview__per_process__headings_then_their_functions, setup, teardown),
		cmocka_unit_test_setup_teardown(topview__lines__exactly_the_width, setup, teardown),
		cmocka_unit_test_setup_teardown(topview__offcpu__own_column_and_sort, setup, teardown),
		cmocka_unit_test_setup_teardown(topview__hostile_name__escaped, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
