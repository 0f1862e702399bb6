/* test_sideband.c - the kernel's own mmap records, read from a dummy perf event per CPU: a mapping
 * made on either CPU arrives with its address, offset, path, device and inode (stat's), anonymous
 * executable memory is marked anonymous, and records from several CPUs come out in time order,
 * however many drains came before. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "capture/sideband.h"

#define LIB "build/fixtures/libfx.so"

struct got {
	struct bt_sb_rec m[64];
	char path[64][256];
	size_t n;
};

static int keep(void *ctx, const struct bt_sb_rec *m)
{
	struct got *g = ctx;
	if (m->kind != BT_SB_REC_MMAP || m->pid != (uint32_t)getpid() || g->n == 64)
		return 0;
	g->m[g->n] = *m;
	snprintf(g->path[g->n], sizeof(g->path[0]), "%s", m->path);
	g->n++;
	return 0;
}

static void on_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
}

static int ncpus(int *cpus)
{
	int n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(c, &set);
		if (sched_setaffinity(0, sizeof(set), &set) == 0)
			cpus[n++] = c;
	}
	return n;
}

static void sideband__mappings_on_each_cpu__in_time_order_with_inodes(void **state)
{
	bt_test_require_priv();
	int cpus[2];
	int n = ncpus(cpus);
	struct bt_sideband *sb;
	assert_int_equal(bt_sideband_open(cpus, (size_t)n, 8, BT_SB_MMAP, &sb), 0);
	struct stat st;
	assert_int_equal(stat(LIB, &st), 0);
	int fd = open(LIB, O_RDONLY);
	assert_true(fd >= 0);
	struct got *g = calloc(1, sizeof(*g));
	/* Rounds of three file mappings, alternating between the CPUs, and one anonymous executable
	 * one; each round drained and delivered in full, so the queue empties in between. */
	for (int round = 0; round < 3; round++) {
		g->n = 0;
		void *maps[3];
		for (int i = 0; i < 3; i++) {
			on_cpu(cpus[(i + round) % n]);
			maps[i] = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
			assert_true(maps[i] != MAP_FAILED);
		}
		void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(bt_sideband_drain(sb) >= 4);
		assert_true(bt_sideband_deliver(sb, UINT64_MAX, keep, g) >= 4);
		assert_int_equal(g->n, 4);
		for (size_t i = 0; i < g->n; i++) {
			if (i)
				assert_true(g->m[i - 1].time_ns <= g->m[i].time_ns);
			if (i < 3) {
				assert_int_equal(g->m[i].start, (uintptr_t)maps[i]);
				assert_int_equal(g->m[i].len, 4096);
				assert_int_equal(g->m[i].pgoff, 0);
				assert_false(g->m[i].anon);
				assert_non_null(strstr(g->path[i], "libfx.so"));
				assert_int_equal(g->m[i].ino, st.st_ino);
				assert_int_equal(g->m[i].dev, major(st.st_dev) << 20 | minor(st.st_dev));
			} else {
				assert_int_equal(g->m[i].start, (uintptr_t)anon);
				assert_true(g->m[i].anon);
			}
		}
		for (int i = 0; i < 3; i++)
			munmap(maps[i], 4096);
		munmap(anon, 4096);
	}
	/* delivery up to a time leaves what came after queued */
	g->n = 0;
	void *a = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	void *b = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(bt_sideband_drain(sb) >= 2);
	uint64_t first = bt_sideband_next_time(sb);
	assert_int_equal(bt_sideband_deliver(sb, first, keep, g), 1);
	assert_int_equal(g->m[0].start, (uintptr_t)a);
	assert_true(bt_sideband_next_time(sb) >= first);
	assert_true(bt_sideband_deliver(sb, UINT64_MAX, keep, g) >= 1);
	assert_int_equal(g->m[1].start, (uintptr_t)b);
	assert_int_equal(bt_sideband_lost(sb), 0);
	munmap(a, 4096);
	munmap(b, 4096);
	close(fd);
	free(g);
	bt_sideband_close(sb);
}

static void sideband__bad_arguments__einval(void **state)
{
	struct bt_sideband *sb;
	int cpu = 0;
	assert_int_equal(bt_sideband_open(&cpu, 1, 3, BT_SB_MMAP, &sb), -EINVAL);  /* not a power of two */
	assert_int_equal(bt_sideband_open(NULL, 1, 8, BT_SB_MMAP, &sb), -EINVAL);
	assert_int_equal(bt_sideband_drain(NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sideband__mappings_on_each_cpu__in_time_order_with_inodes),
		cmocka_unit_test(sideband__bad_arguments__einval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
