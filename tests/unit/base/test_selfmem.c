/* test_selfmem.c - malloc's bytes in use follow what is allocated and freed; the resident sizes are
 * read from a status and an smaps file (a fake /proc here, the real one too). */
#include "testutil.h"
#include "base/selfmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void selfmem__heap_in_use__follows_malloc_and_free(void **state)
{
	struct bt_selfmem a, b, c;
	/* the first read leaves stdio's and the C library's one-time allocations behind */
	assert_int_equal(bt_selfmem_read(NULL, &a), 0);
	assert_int_equal(bt_selfmem_read(NULL, &a), 0);
	enum { N = 1000, SZ = 200 };
	void **p = malloc(N * sizeof(*p));
	for (int i = 0; i < N; i++)
		p[i] = malloc(SZ);
	assert_int_equal(bt_selfmem_read(NULL, &b), 0);
	for (int i = 0; i < N; i++)
		free(p[i]);
	free(p);
	assert_int_equal(bt_selfmem_read(NULL, &c), 0);
	/* each small chunk costs its size plus a header word, rounded to 16 bytes */
	assert_true(b.heap_in_use >= a.heap_in_use + (uint64_t)N * SZ);
	assert_true(b.heap_in_use <= a.heap_in_use + (uint64_t)N * (SZ + 32) + 8192);
	/* malloc counts the chunks its per-thread cache keeps (7 of a size) as in use */
	assert_true(c.heap_in_use <= a.heap_in_use + 7 * (SZ + 16) + 1024);
	assert_true(a.rss > 0 && a.rss_anon > 0 && a.rss_anon <= a.rss);
}

static void selfmem__fake_proc__bpf_map_pages_summed(void **state)
{
	char dir[] = "/tmp/bt-selfmem-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/self", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/self/status", dir);
	FILE *f = fopen(path, "w");
	fputs("Name:\tbuildtrace\nVmRSS:\t   50000 kB\nRssAnon:\t   20000 kB\nRssFile:\t   30000 kB\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/self/smaps", dir);
	f = fopen(path, "w");
	fputs("55d0c0a00000-55d0c0b00000 rw-p 00000000 00:00 0                          [heap]\n"
	      "Size:               1024 kB\nRss:                 900 kB\nVmFlags: rd wr mr mw me ac\n"
	      "7f0000000000-7f0001000000 r--s 00000000 00:0e 1234                       anon_inode:bpf-map\n"
	      "Size:              16384 kB\nRss:                8208 kB\nVmFlags: rd sh mr mw me ms\n"
	      "7f0002000000-7f0002001000 rw-s 00000000 00:0e 1235                       anon_inode:bpf-map\n"
	      "Size:                  4 kB\nRss:                   4 kB\n"
	      "7f0003000000-7f0003001000 r--p 00000000 08:01 77  /usr/lib/anon_inode:bpf-map.so\n"
	      "Rss:                 100 kB\n", f);
	fclose(f);
	struct bt_selfmem m;
	assert_int_equal(bt_selfmem_read(dir, &m), 0);
	assert_int_equal(m.rss, 50000ULL * 1024);
	assert_int_equal(m.rss_anon, 20000ULL * 1024);
	assert_int_equal(m.bpf_maps_rss, (8208ULL + 4) * 1024);
	bt_test_run(path, sizeof(path), "rm -rf %s", dir);
}

static void selfmem__missing_proc__error(void **state)
{
	struct bt_selfmem m;
	assert_true(bt_selfmem_read("/nonexistent-proc", &m) < 0);
	assert_true(m.heap_in_use > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(selfmem__heap_in_use__follows_malloc_and_free),
		cmocka_unit_test(selfmem__fake_proc__bpf_map_pages_summed),
		cmocka_unit_test(selfmem__missing_proc__error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
