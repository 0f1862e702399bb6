/* test_perfmap.c - perf map parsing: the lines runtimes write, garbage skipped and counted,
 * overlapping lines (the later wins, checked against a brute-force search), lines appended to a file
 * between reads, and unfinished or over-long lines. */
#include "testutil.h"
#include "symsrc/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void parse_all(struct bt_perfmap *m, const char *s)
{
	size_t used = 0;
	assert_int_equal(bt_perfmap_parse(m, s, strlen(s), true, &used), 0);
	assert_int_equal(used, strlen(s));
}

static const char *name_at(struct bt_perfmap *m, uint64_t addr)
{
	const struct bt_perfmap_entry *e = bt_perfmap_lookup(m, addr);
	return e ? bt_perfmap_name(m, e) : NULL;
}

static void perfmap__node_lines__named_over_their_ranges(void **state)
{
	struct bt_perfmap m;
	bt_perfmap_init(&m);
	/* as node --perf-basic-prof writes them, and with 0x prefixes as other runtimes do */
	parse_all(&m, "3b1f5c843c0 3c JS:*fib /tmp/w.js:1:13\n"
		      "3b1f5c84440 1a0 JS:~work [eval]:1:62\n"
		      "0x7f0000001000 0x20 java.lang.String::hashCode\r\n");
	assert_int_equal(m.nraw, 3);
	assert_int_equal(m.bad_lines, 0);
	assert_string_equal(name_at(&m, 0x3b1f5c843c0), "JS:*fib /tmp/w.js:1:13");
	assert_string_equal(name_at(&m, 0x3b1f5c843c0 + 0x3b), "JS:*fib /tmp/w.js:1:13");
	assert_null(name_at(&m, 0x3b1f5c843c0 + 0x3c));  /* the gap before the next entry */
	assert_string_equal(name_at(&m, 0x3b1f5c84440 + 0x19f), "JS:~work [eval]:1:62");
	assert_null(name_at(&m, 0x3b1f5c84440 + 0x1a0));
	assert_null(name_at(&m, 0x3b1f5c843bf));
	assert_string_equal(name_at(&m, 0x7f0000001010), "java.lang.String::hashCode");
	assert_null(name_at(&m, 0));
	bt_perfmap_free(&m);
}

static void perfmap__garbage_lines__skipped_and_counted(void **state)
{
	struct bt_perfmap m;
	bt_perfmap_init(&m);
	char longname[BT_PERFMAP_LINE_MAX + 16];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	char buf[sizeof(longname) + 1024];
	snprintf(buf, sizeof(buf),
		 "1000 10 good_one\n"
		 "zz 10 not_hex\n"
		 "2000 10\n"                       /* no name */
		 "2000 10   \n"                    /* a name of blanks */
		 "3000 0 empty\n"                  /* no size */
		 "ffffffffffffff00 200 wraps\n"    /* past the end of the address space */
		 "10000000000000000 10 too_many_digits\n"
		 "4000-10 dash\n"
		 "\n"
		 "5000 10 %s\n"                    /* longer than a line may be */
		 "6000 10 good_two\n", longname);
	parse_all(&m, buf);
	assert_int_equal(m.nraw, 2);
	assert_int_equal(m.lines, 11);
	assert_int_equal(m.bad_lines, 9);
	assert_string_equal(name_at(&m, 0x1000), "good_one");
	assert_string_equal(name_at(&m, 0x600f), "good_two");
	assert_null(name_at(&m, 0x5000));
	assert_null(name_at(&m, 0xffffffffffffff00));
	/* a NUL byte inside a line */
	const char nul[] = "7000 10 has\0nul\n8000 10 after\n";
	assert_int_equal(bt_perfmap_parse(&m, nul, sizeof(nul) - 1, true, NULL), 0);
	assert_int_equal(m.bad_lines, 10);
	assert_null(name_at(&m, 0x7000));
	assert_string_equal(name_at(&m, 0x8000), "after");
	bt_perfmap_free(&m);
}

static void perfmap__overlapping_lines__later_one_wins(void **state)
{
	struct bt_perfmap m;
	bt_perfmap_init(&m);
	parse_all(&m, "1000 100 old_big\n"
		      "1040 20 new_inside\n"
		      "1000 10 same_start_newer\n"
		      "10f0 40 newer_past_the_end\n");
	assert_string_equal(name_at(&m, 0x1000), "same_start_newer");
	assert_string_equal(name_at(&m, 0x1010), "old_big");
	assert_string_equal(name_at(&m, 0x1040), "new_inside");
	assert_string_equal(name_at(&m, 0x105f), "new_inside");
	assert_string_equal(name_at(&m, 0x1060), "old_big");  /* the old code's tail is still there */
	assert_string_equal(name_at(&m, 0x10ef), "old_big");
	assert_string_equal(name_at(&m, 0x10f0), "newer_past_the_end");
	assert_string_equal(name_at(&m, 0x112f), "newer_past_the_end");
	assert_null(name_at(&m, 0x1130));
	bt_perfmap_free(&m);
}

/* The newest line holding addr, by looking at every line. */
static const char *brute(const char *const *names, const uint64_t *st, const uint64_t *sz, size_t n,
			 uint64_t addr)
{
	const char *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (addr >= st[i] && addr - st[i] < sz[i])
			best = names[i];
	return best;
}

static void perfmap__random_overlaps__match_brute_force(void **state)
{
	enum { N = 600 };
	static uint64_t st[N], sz[N];
	static char namebuf[N][16];
	const char *names[N];
	srand(20);
	for (int round = 0; round < 5; round++) {
		struct bt_perfmap m;
		bt_perfmap_init(&m);
		char line[64];
		for (size_t i = 0; i < N; i++) {
			st[i] = 0x10000 + (uint64_t)(rand() % 4000) * 4;
			sz[i] = 1 + (uint64_t)(rand() % (i % 7 ? 64 : 2000));
			snprintf(namebuf[i], sizeof(namebuf[i]), "f%zu", i);
			names[i] = namebuf[i];
			snprintf(line, sizeof(line), "%llx %llx %s\n", (unsigned long long)st[i],
				 (unsigned long long)sz[i], names[i]);
			assert_int_equal(bt_perfmap_parse(&m, line, strlen(line), false, NULL), 0);
			/* looked up while lines still arrive, as a session does */
			if (i % 97 == 0)
				(void)bt_perfmap_lookup(&m, st[i]);
		}
		for (uint64_t a = 0x10000 - 8; a < 0x10000 + 4000 * 4 + 2100; a++) {
			const char *want = brute(names, st, sz, N, a), *got = name_at(&m, a);
			if (!want)
				assert_null(got);
			else
				assert_string_equal(got ? got : "(none)", want);
		}
		bt_perfmap_free(&m);
	}
}

static void perfmap__unfinished_line__waits_for_its_newline(void **state)
{
	struct bt_perfmap m;
	bt_perfmap_init(&m);
	size_t used = 0;
	const char *s = "1000 10 done\n2000 10 half";
	assert_int_equal(bt_perfmap_parse(&m, s, strlen(s), false, &used), 0);
	assert_int_equal(used, strlen("1000 10 done\n"));
	assert_int_equal(m.nraw, 1);
	assert_int_equal(m.bytes, used);
	/* at the end of a buffer that is all there is, the last line counts */
	assert_int_equal(bt_perfmap_parse(&m, s + used, strlen(s + used), true, &used), 0);
	assert_int_equal(m.nraw, 2);
	assert_string_equal(name_at(&m, 0x2000), "half");
	bt_perfmap_free(&m);
}

static void append(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void perfmap__file_appended_between_reads__new_lines_taken(void **state)
{
	char path[] = "/tmp/bt-perfmap-XXXXXX";
	int wfd = mkstemp(path);
	assert_true(wfd >= 0);
	int rfd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(rfd >= 0);
	unlink(path);
	struct bt_perfmap m;
	bt_perfmap_init(&m);
	append(wfd, "1000 10 first\n2000 10 sec");
	assert_int_equal(bt_perfmap_read_fd(&m, rfd), 0);
	assert_string_equal(name_at(&m, 0x1000), "first");
	assert_null(name_at(&m, 0x2000));   /* its line is still being written */
	append(wfd, "ond\n3000 10 third\n");
	assert_int_equal(bt_perfmap_read_fd(&m, rfd), 0);
	assert_string_equal(name_at(&m, 0x2000), "second");
	assert_string_equal(name_at(&m, 0x300f), "third");
	assert_int_equal(m.nraw, 3);
	/* an over-long line written across reads is skipped once, the line after it taken */
	char big[3 * BT_PERFMAP_LINE_MAX];
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	append(wfd, "4000 10 ");
	append(wfd, big);
	assert_int_equal(bt_perfmap_read_fd(&m, rfd), 0);
	append(wfd, big);
	assert_int_equal(bt_perfmap_read_fd(&m, rfd), 0);
	append(wfd, "\n5000 10 fifth\n");
	assert_int_equal(bt_perfmap_read_fd(&m, rfd), 0);
	assert_null(name_at(&m, 0x4000));
	assert_string_equal(name_at(&m, 0x5000), "fifth");
	assert_int_equal(m.bad_lines, 1);
	assert_int_equal(m.lines, 5);
	assert_int_equal(m.bytes, (uint64_t)lseek(wfd, 0, SEEK_CUR));
	bt_perfmap_free(&m);
	close(wfd);
	close(rfd);
}

static void perfmap__empty_map__every_lookup_misses(void **state)
{
	struct bt_perfmap m;
	bt_perfmap_init(&m);
	assert_null(bt_perfmap_lookup(&m, 0x1000));
	assert_int_equal(errno, ENOENT);
	parse_all(&m, "garbage only\n");
	assert_null(bt_perfmap_lookup(&m, 0));
	assert_int_equal(m.bad_lines, 1);
	bt_perfmap_free(&m);
}

/* Maps that share a budget: what one holds, another cannot; the map that reaches it stops there
 * (truncated, counted) and still names what it took; freed, a map gives its share back. */
static void perfmap__shared_budget__bounded_in_all_given_back(void **state)
{
	struct bt_membudget b = { .max = 10 * (BT_PERFMAP_LINE_COST + 2 * 6) };
	struct bt_perfmap a, c;
	bt_perfmap_init(&a);
	bt_perfmap_init(&c);
	a.budget = c.budget = &b;
	char line[64];
	for (int i = 0; i < 6; i++) {
		snprintf(line, sizeof(line), "%x 10 fn_%02d\n", 0x1000 + 0x10 * i, i);
		parse_all(&a, line);
	}
	assert_int_equal(a.nraw, 6);
	for (int i = 0; i < 6; i++) {
		snprintf(line, sizeof(line), "%x 10 gn_%02d\n", 0x1000 + 0x10 * i, i);
		/* once cut short, a map reads nothing more */
		assert_int_equal(bt_perfmap_parse(&c, line, strlen(line), true, NULL), 0);
	}
	assert_int_equal(c.nraw, 4);
	assert_true(c.truncated);
	assert_int_equal(c.over_budget, 1);
	assert_int_equal(b.used, b.max);
	assert_int_equal(b.refused, 1);
	assert_string_equal(bt_perfmap_name(&c, bt_perfmap_lookup(&c, 0x1035)), "gn_03");
	assert_null(bt_perfmap_lookup(&c, 0x1045));
	bt_perfmap_free(&a);
	assert_int_equal(b.used, 4 * (BT_PERFMAP_LINE_COST + 2 * 6));
	assert_true(a.budget == &b);
	bt_perfmap_free(&c);
	assert_int_equal(b.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perfmap__node_lines__named_over_their_ranges),
		cmocka_unit_test(perfmap__garbage_lines__skipped_and_counted),
		cmocka_unit_test(perfmap__overlapping_lines__later_one_wins),
		cmocka_unit_test(perfmap__random_overlaps__match_brute_force),
		cmocka_unit_test(perfmap__unfinished_line__waits_for_its_newline),
		cmocka_unit_test(perfmap__file_appended_between_reads__new_lines_taken),
		cmocka_unit_test(perfmap__empty_map__every_lookup_misses),
		cmocka_unit_test(perfmap__shared_budget__bounded_in_all_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
