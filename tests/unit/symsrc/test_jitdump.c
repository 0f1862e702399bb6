/* test_jitdump.c - jitdump parsing from records built here in both byte orders: code loads and
 * moves named, other records skipped, broken records counted, a file that is no jitdump or whose
 * record sizes are impossible refused, and a file read as it is appended to. */
#include "testutil.h"
#include "symsrc/jitdump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct wbuf {
	uint8_t b[1 << 16];
	size_t n;
	bool swap;
};

static void put32(struct wbuf *w, uint32_t v)
{
	if (w->swap)
		v = __builtin_bswap32(v);
	memcpy(w->b + w->n, &v, 4);
	w->n += 4;
}

static void put64(struct wbuf *w, uint64_t v)
{
	if (w->swap)
		v = __builtin_bswap64(v);
	memcpy(w->b + w->n, &v, 8);
	w->n += 8;
}

static void header(struct wbuf *w)
{
	put32(w, BT_JITDUMP_MAGIC);
	put32(w, 1);
	put32(w, 40);
	put32(w, 62);
	put32(w, 0);
	put32(w, 1234);
	put64(w, 1);
	put64(w, 0);
}

static void load(struct wbuf *w, uint64_t addr, uint64_t size, uint64_t index, const char *name, size_t code)
{
	size_t nlen = strlen(name) + 1;
	put32(w, BT_JITDUMP_CODE_LOAD);
	put32(w, (uint32_t)(16 + 40 + nlen + code));
	put64(w, 2);
	put32(w, 1234);
	put32(w, 1235);
	put64(w, addr);
	put64(w, addr);
	put64(w, size);
	put64(w, index);
	memcpy(w->b + w->n, name, nlen);
	w->n += nlen;
	memset(w->b + w->n, 0xcc, code);  /* the code itself */
	w->n += code;
}

static void move(struct wbuf *w, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	put32(w, BT_JITDUMP_CODE_MOVE);
	put32(w, 16 + 48);
	put64(w, 3);
	put32(w, 1234);
	put32(w, 1235);
	put64(w, to);
	put64(w, from);
	put64(w, to);
	put64(w, size);
	put64(w, index);
}

static void other(struct wbuf *w, uint32_t id, size_t body)
{
	put32(w, id);
	put32(w, (uint32_t)(16 + body));
	put64(w, 4);
	memset(w->b + w->n, 0x5a, body);
	w->n += body;
}

static const char *name_at(struct bt_perfmap *m, uint64_t addr)
{
	const struct bt_perfmap_entry *e = bt_perfmap_lookup(m, addr);
	return e ? bt_perfmap_name(m, e) : NULL;
}

static void sample_file(struct wbuf *w)
{
	header(w);
	other(w, BT_JITDUMP_CODE_UNWINDING_INFO, 40);
	load(w, 0x7f0000001000, 0x200, 7, "JS:*fib /srv/app.js:1:13", 0x200);
	other(w, BT_JITDUMP_CODE_DEBUG_INFO, 64);
	load(w, 0x7f0000002000, 0x100, 8, "LazyCompile:~work", 16);
	move(w, 0x7f0000002000, 0x7f0000009000, 0x100, 8);
	other(w, 99, 8);   /* a record type of a later version */
}

static void jitdump__loads_and_moves__named_in_either_byte_order(void **state)
{
	for (int swap = 0; swap < 2; swap++) {
		static struct wbuf w;
		memset(&w, 0, sizeof(w));
		w.swap = swap;
		sample_file(&w);
		struct bt_jitdump d;
		struct bt_perfmap m;
		bt_jitdump_init(&d);
		bt_perfmap_init(&m);
		size_t used = 0;
		assert_int_equal(bt_jitdump_parse(&d, w.b, w.n, w.n, &m, &used), 0);
		assert_int_equal(used, w.n);
		assert_int_equal(d.swapped, swap);
		assert_int_equal(d.loads, 2);
		assert_int_equal(d.moves, 1);
		assert_int_equal(d.others, 3);
		assert_int_equal(d.bad_records, 0);
		assert_string_equal(name_at(&m, 0x7f0000001000), "JS:*fib /srv/app.js:1:13");
		assert_string_equal(name_at(&m, 0x7f00000011ff), "JS:*fib /srv/app.js:1:13");
		assert_null(name_at(&m, 0x7f0000001200));
		assert_string_equal(name_at(&m, 0x7f0000009080), "LazyCompile:~work");
		bt_jitdump_free(&d);
		bt_perfmap_free(&m);
	}
}

static void jitdump__broken_records__counted_and_skipped(void **state)
{
	static struct wbuf w;
	memset(&w, 0, sizeof(w));
	header(&w);
	load(&w, 0x1000, 0, 1, "no_size", 0);
	load(&w, 0x2000, 0x10, 2, "", 0);
	move(&w, 0x3000, 0x4000, 0x10, 99);     /* a code index never loaded */
	/* a load whose name runs to the end of its record */
	put32(&w, BT_JITDUMP_CODE_LOAD);
	put32(&w, 16 + 40 + 4);
	put64(&w, 2);
	for (int i = 0; i < 5; i++)
		put64(&w, 0x5000);
	memcpy(w.b + w.n, "abcd", 4);
	w.n += 4;
	load(&w, 0x6000, 0x10, 3, "survivor", 0);
	struct bt_jitdump d;
	struct bt_perfmap m;
	bt_jitdump_init(&d);
	bt_perfmap_init(&m);
	assert_int_equal(bt_jitdump_parse(&d, w.b, w.n, w.n, &m, NULL), 0);
	assert_int_equal(d.bad_records, 4);
	assert_int_equal(m.nraw, 1);
	assert_string_equal(name_at(&m, 0x6000), "survivor");
	/* a record size smaller than its header: nothing after it can be found */
	size_t at = w.n;
	put32(&w, BT_JITDUMP_CODE_LOAD);
	put32(&w, 8);
	put64(&w, 0);
	load(&w, 0x7000, 0x10, 4, "after_corruption", 0);
	size_t used = 0;
	assert_int_equal(bt_jitdump_parse(&d, w.b + at, w.n - at, w.n - at, &m, &used), -EBADMSG);
	assert_int_equal(used, 0);
	assert_null(name_at(&m, 0x7000));
	bt_jitdump_free(&d);
	bt_perfmap_free(&m);
}

static void jitdump__not_a_jitdump__einval(void **state)
{
	static const char text[] = "7f0000001000 10 a perf map, not a jitdump\n......................";
	struct bt_jitdump d;
	struct bt_perfmap m;
	bt_jitdump_init(&d);
	bt_perfmap_init(&m);
	assert_int_equal(bt_jitdump_parse(&d, (const uint8_t *)text, sizeof(text), sizeof(text), &m, NULL), -EINVAL);
	assert_int_equal(m.nraw, 0);
	bt_jitdump_free(&d);
	/* a header that says it is larger than headers may be */
	static struct wbuf w;
	memset(&w, 0, sizeof(w));
	header(&w);
	uint32_t big = BT_JITDUMP_HEADER_MAX + 1;
	memcpy(w.b + 8, &big, 4);
	bt_jitdump_init(&d);
	assert_int_equal(bt_jitdump_parse(&d, w.b, w.n, w.n, &m, NULL), -EINVAL);
	bt_jitdump_free(&d);
	bt_perfmap_free(&m);
}

static void jitdump__file_appended_between_reads__records_taken_when_complete(void **state)
{
	char path[] = "/tmp/bt-jitdump-XXXXXX";
	int wfd = mkstemp(path);
	assert_true(wfd >= 0);
	int rfd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(rfd >= 0);
	unlink(path);
	static struct wbuf w;
	memset(&w, 0, sizeof(w));
	sample_file(&w);
	struct bt_jitdump d;
	struct bt_perfmap m;
	bt_jitdump_init(&d);
	bt_perfmap_init(&m);
	/* byte by byte in a few steps: half a header, then the rest a piece at a time */
	size_t cuts[] = { 20, 100, 101, 700, w.n };
	size_t done = 0;
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		assert_int_equal(write(wfd, w.b + done, cuts[i] - done), (ssize_t)(cuts[i] - done));
		done = cuts[i];
		assert_int_equal(bt_jitdump_read_fd(&d, rfd, &m), 0);
		assert_true(d.bytes <= done);
	}
	assert_int_equal(d.bytes, w.n);
	assert_int_equal(d.loads, 2);
	assert_string_equal(name_at(&m, 0x7f0000009000), "LazyCompile:~work");
	/* a record larger than one read: taken once all of it is there */
	static struct wbuf big;
	memset(&big, 0, sizeof(big));
	load(&big, 0x7f000000a000, 0x8000, 9, "JS:*big", 0x8000);
	assert_int_equal(write(wfd, big.b, 100), 100);
	assert_int_equal(bt_jitdump_read_fd(&d, rfd, &m), 0);
	assert_null(name_at(&m, 0x7f000000a000));
	assert_int_equal(write(wfd, big.b + 100, big.n - 100), (ssize_t)(big.n - 100));
	assert_int_equal(bt_jitdump_read_fd(&d, rfd, &m), 0);
	assert_string_equal(name_at(&m, 0x7f000000a000), "JS:*big");
	bt_jitdump_free(&d);
	bt_perfmap_free(&m);
	close(wfd);
	close(rfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jitdump__loads_and_moves__named_in_either_byte_order),
		cmocka_unit_test(jitdump__broken_records__counted_and_skipped),
		cmocka_unit_test(jitdump__not_a_jitdump__einval),
		cmocka_unit_test(jitdump__file_appended_between_reads__records_taken_when_complete),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
