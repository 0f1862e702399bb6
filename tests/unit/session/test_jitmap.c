/* test_jitmap.c - per-process perf maps and jitdumps under a fake /proc: a map found under the
 * namespaced pid inside the process's root, a jitdump through the process's mapping of it (asked
 * first), read again on a miss at most once a second and as the process goes, refused when not a
 * regular file, not the process's own by its credentials or reached through a link; pids reused. */
#include "testutil.h"
#include "session/jitmap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEC 1000000000ULL

struct fx {
	char root[64];       /* the fake /proc's prefix */
	char croot[PATH_MAX]; /* the process's root directory */
};

static int setup(void **state)
{
	static struct fx fx;
	snprintf(fx.root, sizeof(fx.root), "/tmp/bt-jitmap-XXXXXX");
	if (!mkdtemp(fx.root))
		return -1;
	snprintf(fx.croot, sizeof(fx.croot), "%s/container", fx.root);
	bt_test_run(NULL, 0, "mkdir -p %s/tmp %s/proc", fx.croot, fx.root);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	bt_test_run(NULL, 0, "rm -rf %s", fx->root);
	return 0;
}

/* A process pid whose own namespace calls it nspid, rooted at the container directory, running as
 * uid and gid (real, effective, saved and file system alike). */
static void add_proc_as(struct fx *fx, int pid, int nspid, unsigned uid, unsigned gid)
{
	bt_test_run(NULL, 0, "mkdir -p %s/proc/%d && ln -sfn %s %s/proc/%d/root && "
		    "printf 'Name:\\tnode\\nUid:\\t%u\\t%u\\t%u\\t%u\\nGid:\\t%u\\t%u\\t%u\\t%u\\nGroups:\\t\\n"
		    "NSpid:\\t%d\\t%d\\n' > %s/proc/%d/status", fx->root, pid, fx->croot, fx->root, pid,
		    uid, uid, uid, uid, gid, gid, gid, gid, pid, nspid, fx->root, pid);
}

/* The same, running as this test does: the files it makes are the process's own. */
static void add_proc(struct fx *fx, int pid, int nspid)
{
	add_proc_as(fx, pid, nspid, (unsigned)geteuid(), (unsigned)getegid());
}

static void write_map(struct fx *fx, int nspid, const char *mode, const char *text)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", fx->croot, nspid);
	FILE *f = fopen(path, mode);
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void jitmap__namespaced_pid__map_found_in_process_root(void **state)
{
	struct fx *fx = *state;
	add_proc(fx, 4242, 7);
	write_map(fx, 7, "w", "1000 100 JS:*hot /app/x.js:1:1\n");
	/* the host pid's name is another process's map: never read */
	write_map(fx, 4242, "w", "1000 100 wrong_process\n");
	struct bt_jitmaps j;
	bt_jitmaps_init(&j, fx->root);
	int64_t id = bt_jitmaps_proc(&j, 4242, 10 * SEC);
	assert_true(id >= 0);
	assert_int_equal(bt_jitmaps_pid(&j, (uint32_t)id), 4242);
	assert_int_equal(j.procs[id].nspid, 7);
	bool final = false;
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x1080, 10 * SEC, &final, NULL), "JS:*hot /app/x.js:1:1");
	assert_true(final);
	/* the same table for the next sample */
	assert_int_equal(bt_jitmaps_proc(&j, 4242, 10 * SEC + 1), id);
	bt_jitmaps_free(&j);
}

static void jitmap__miss__map_read_again_at_most_once_a_second(void **state)
{
	struct fx *fx = *state;
	add_proc(fx, 4300, 8);
	write_map(fx, 8, "w", "1000 10 first\n");
	struct bt_jitmaps j;
	bt_jitmaps_init(&j, fx->root);
	int64_t id = bt_jitmaps_proc(&j, 4300, 10 * SEC);
	assert_true(id >= 0);
	uint64_t reads = j.reads;
	write_map(fx, 8, "a", "2000 10 compiled_later\n");
	bool final = true;
	/* within the second of the last read: the miss waits, and says a later look may find it */
	assert_null(bt_jitmaps_name(&j, (uint32_t)id, 0x2000, 10 * SEC + SEC / 2, &final, NULL));
	assert_false(final);
	assert_int_equal(j.reads, reads);
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x2000, 11 * SEC, &final, NULL), "compiled_later");
	assert_int_equal(j.reads, reads + 1);
	/* a hit reads nothing */
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x1000, 30 * SEC, &final, NULL), "first");
	assert_int_equal(j.reads, reads + 1);
	/* a miss that stays one: read once a second at most, however often asked */
	for (uint64_t t = 0; t < 10; t++)
		assert_null(bt_jitmaps_name(&j, (uint32_t)id, 0x9000, 31 * SEC + t * (SEC / 10), &final, NULL));
	assert_int_equal(j.reads, reads + 2);
	/* what the process wrote as it exited is read once more when it is gone */
	write_map(fx, 8, "a", "9000 10 flushed_at_exit\n");
	bt_jitmaps_gone(&j, 4300, 40 * SEC);
	assert_int_equal(j.reads, reads + 3);
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x9000, 50 * SEC, &final, NULL), "flushed_at_exit");
	/* and after that, a miss is final and nothing is read */
	assert_null(bt_jitmaps_name(&j, (uint32_t)id, 0xa000, 50 * SEC, &final, NULL));
	assert_true(final);
	assert_int_equal(j.reads, reads + 3);
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x1000, 50 * SEC, &final, NULL), "first");
	/* freed after the grace period: the id stays valid and names nothing */
	bt_jitmaps_reap(&j, 60 * SEC, 5 * SEC);
	assert_null(bt_jitmaps_name(&j, (uint32_t)id, 0x1000, 61 * SEC, &final, NULL));
	assert_true(final);
	bt_jitmaps_free(&j);
}

static void jitmap__no_map__looked_for_again_later_and_later(void **state)
{
	struct fx *fx = *state;
	add_proc(fx, 4400, 9);
	struct bt_jitmaps j;
	bt_jitmaps_init(&j, fx->root);
	/* in vain at 10 s, then after 1 s (11 s) and 2 s (13 s): the next look is 4 s later */
	assert_int_equal(bt_jitmaps_proc(&j, 4400, 10 * SEC), -ENOENT);
	assert_int_equal(bt_jitmaps_proc(&j, 4400, 11 * SEC), -ENOENT);
	assert_int_equal(bt_jitmaps_proc(&j, 4400, 13 * SEC), -ENOENT);
	write_map(fx, 9, "w", "1000 10 late_map\n");
	assert_int_equal(bt_jitmaps_proc(&j, 4400, 16 * SEC), -ENOENT);
	int64_t id = bt_jitmaps_proc(&j, 4400, 17 * SEC);
	assert_true(id >= 0);
	bool final;
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x1000, 17 * SEC, &final, NULL), "late_map");
	/* a process without a map that exits leaves its entry for another */
	add_proc(fx, 4401, 10);
	assert_int_equal(bt_jitmaps_proc(&j, 4401, 12 * SEC), -ENOENT);
	size_t n = j.n;
	bt_jitmaps_gone(&j, 4401, 13 * SEC);
	add_proc(fx, 4402, 11);
	assert_int_equal(bt_jitmaps_proc(&j, 4402, 14 * SEC), -ENOENT);
	assert_int_equal(j.n, n);
	bt_jitmaps_free(&j);
}

static void jitmap__pid_reused_after_exit__new_table(void **state)
{
	struct fx *fx = *state;
	add_proc(fx, 4500, 12);
	write_map(fx, 12, "w", "1000 10 old_process\n");
	struct bt_jitmaps j;
	bt_jitmaps_init(&j, fx->root);
	int64_t old = bt_jitmaps_proc(&j, 4500, 10 * SEC);
	assert_true(old >= 0);
	bt_jitmaps_gone(&j, 4500, 11 * SEC);
	write_map(fx, 12, "w", "1000 10 new_process\n");
	int64_t id = bt_jitmaps_proc(&j, 4500, 12 * SEC);
	assert_true(id >= 0 && id != old);
	bool final;
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)old, 0x1000, 13 * SEC, &final, NULL), "old_process");
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x1000, 13 * SEC, &final, NULL), "new_process");
	bt_jitmaps_free(&j);
}

/* A jitdump at path with one code load of name at addr (size 0x100), then a move of it to moved. */
static void write_dump(const char *path, unsigned long long addr, unsigned long long moved, const char *name)
{
	assert_int_equal(bt_test_run(NULL, 0, "/usr/bin/python3 -c '"
		"import struct, sys\n"
		"a, m, n = int(sys.argv[2], 16), int(sys.argv[3], 16), sys.argv[4].encode() + b\"\\0\"\n"
		"h = struct.pack(\"<IIIIIIQQ\", 0x4A695444, 1, 40, 62, 0, 7, 0, 0)\n"
		"body = struct.pack(\"<IIQQQQ\", 7, 7, a, a, 0x100, 1) + n\n"
		"load = struct.pack(\"<IIQ\", 0, 16 + len(body), 1) + body\n"
		"mv = struct.pack(\"<IIQ\", 1, 64, 2) + struct.pack(\"<IIQQQQQ\", 7, 7, m, a, m, 0x100, 1)\n"
		"open(sys.argv[1], \"wb\").write(h + load + mv)' %s %llx %llx '%s'", path, addr, moved, name), 0);
}

static void jitmap__mapped_jitdump__found_through_map_files(void **state)
{
	struct fx *fx = *state;
	add_proc(fx, 4700, 30);
	char dump[PATH_MAX + 32];
	snprintf(dump, sizeof(dump), "%s/jit-30.dump", fx->croot);
	write_dump(dump, 0x7f0000100000, 0x7f0000200000, "JS:*fromDump x.js:1:1");
	/* the process maps it, as runtimes do so that profilers find it; map_files leads to the file */
	bt_test_run(NULL, 0, "mkdir -p %s/proc/4700/map_files && "
		    "printf '7f0000000000-7f0000001000 r-xp 00000000 fe:00 123 /app/jit-30.dump\\n' > %s/proc/4700/maps && "
		    "ln -s %s %s/proc/4700/map_files/7f0000000000-7f0000001000", fx->root, fx->root, dump, fx->root);
	/* and a perf map naming the same code otherwise: the jitdump is asked first */
	write_map(fx, 30, "w", "7f0000100000 100 from_the_map\n7f0000300000 10 only_in_map\n");
	struct bt_jitmaps j;
	bt_jitmaps_init(&j, fx->root);
	int64_t id = bt_jitmaps_proc(&j, 4700, 10 * SEC);
	assert_true(id >= 0);
	bool final;
	uint64_t off = 0;
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x7f0000100010, 10 * SEC, &final, &off),
			    "JS:*fromDump x.js:1:1");
	assert_int_equal(off, 0x10);
	assert_string_equal(bt_jitmaps_source(&j, (uint32_t)id, 0x7f0000100010), "jitdump");
	/* moved code keeps its name at its new address */
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x7f00002000ff, 10 * SEC, &final, &off),
			    "JS:*fromDump x.js:1:1");
	assert_int_equal(off, 0xff);
	assert_string_equal(bt_jitmaps_name(&j, (uint32_t)id, 0x7f0000300000, 10 * SEC, &final, NULL), "only_in_map");
	assert_string_equal(bt_jitmaps_source(&j, (uint32_t)id, 0x7f0000300000), "perf-map");
	assert_null(bt_jitmaps_source(&j, (uint32_t)id, 0x7f0000400000));
	bt_jitmaps_free(&j);
	/* a jitdump that is a FIFO is never opened */
	add_proc(fx, 4701, 31);
	char fifo[PATH_MAX + 32];
	snprintf(fifo, sizeof(fifo), "%s/jit-31.dump", fx->croot);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	bt_test_run(NULL, 0, "mkdir -p %s/proc/4701/map_files && "
		    "printf '7f0000000000-7f0000001000 r-xp 00000000 fe:00 124 /app/jit-31.dump\\n' > %s/proc/4701/maps && "
		    "ln -s %s %s/proc/4701/map_files/7f0000000000-7f0000001000", fx->root, fx->root, fifo, fx->root);
	bt_jitmaps_init(&j, fx->root);
	assert_int_equal(bt_jitmaps_proc(&j, 4701, 10 * SEC), -ENOENT);
	assert_int_equal(j.refused, 1);
	bt_jitmaps_free(&j);
}

static void jitmap__map_older_than_process__left_by_another(void **state)
{
	struct fx *fx = *state;
	/* booted at 2000000000 s, the process started 5 s later: a map last written now (before
	 * that) was left by an earlier process of the same pid */
	add_proc(fx, 4800, 40);
	long hz = sysconf(_SC_CLK_TCK);
	bt_test_run(NULL, 0, "printf 'cpu 1 2 3\\nbtime 2000000000\\n' > %s/proc/stat && "
		    "printf '4800 (a) b) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %ld 0 0\\n' > %s/proc/4800/stat",
		    fx->root, 5 * hz, fx->root);
	write_map(fx, 40, "w", "1000 10 stale\n");
	struct bt_jitmaps j;
	bt_jitmaps_init(&j, fx->root);
	assert_int_equal(bt_jitmaps_proc(&j, 4800, 10 * SEC), -ENOENT);
	/* written again since the process started: its own */
	bt_test_run(NULL, 0, "touch -d @2000000006 %s/tmp/perf-40.map", fx->croot);
	assert_true(bt_jitmaps_proc(&j, 4800, 12 * SEC) >= 0);
	bt_jitmaps_free(&j);
	bt_test_run(NULL, 0, "rm -f %s/proc/stat", fx->root);
}

static void jitmap__hostile_maps__refused(void **state)
{
	struct fx *fx = *state;
	struct bt_jitmaps j;
	bt_jitmaps_init(&j, fx->root);
	char path[PATH_MAX + 32];
	/* a FIFO: never opened (a blocked writer would stay blocked; opening it would hang) */
	add_proc(fx, 4600, 20);
	snprintf(path, sizeof(path), "%s/tmp/perf-20.map", fx->croot);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(bt_jitmaps_proc(&j, 4600, 10 * SEC), -ENOENT);
	/* a link to a file outside the root: resolved inside it, where there is none */
	add_proc(fx, 4601, 21);
	bt_test_run(NULL, 0, "printf '1000 10 outside\\n' > %s/outside.map && ln -s %s/outside.map %s/tmp/perf-21.map",
		    fx->root, fx->root, fx->croot);
	assert_int_equal(bt_jitmaps_proc(&j, 4601, 10 * SEC), -ENOENT);
	/* a directory */
	add_proc(fx, 4602, 22);
	snprintf(path, sizeof(path), "%s/tmp/perf-22.map", fx->croot);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(bt_jitmaps_proc(&j, 4602, 10 * SEC), -ENOENT);
	assert_true(j.refused >= 2);
	/* a file another user planted for a process of root */
	if (geteuid() == 0) {
		add_proc(fx, 4603, 23);
		write_map(fx, 23, "w", "1000 10 planted\n");
		snprintf(path, sizeof(path), "%s/tmp/perf-23.map", fx->croot);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(bt_jitmaps_proc(&j, 4603, 10 * SEC), -ENOENT);
		/* and taken once it is the process's user's */
		assert_int_equal(chown(path, 0, 0), 0);
		assert_true(bt_jitmaps_proc(&j, 4603, 12 * SEC) >= 0);
	}
	/* a link inside the root, to a file that is the process's own: no link is followed at all */
	add_proc(fx, 4604, 24);
	bt_test_run(NULL, 0, "printf '1000 10 linked\\n' > %s/tmp/real.map && ln -s real.map %s/tmp/perf-24.map",
		    fx->croot, fx->croot);
	uint64_t refused = j.refused;
	assert_int_equal(bt_jitmaps_proc(&j, 4604, 10 * SEC), -ENOENT);
	assert_int_equal(j.refused, refused + 1);
	/* a process of another user (nobody) and a map that is not its own (this test's, root's when
	 * run as root): refused, as a bind mount of a root-only file in its own mount namespace is */
	add_proc_as(fx, 4605, 25, 65534, 65534);
	write_map(fx, 25, "w", "1000 10 not_yours\n");
	assert_int_equal(bt_jitmaps_proc(&j, 4605, 10 * SEC), -ENOENT);
	assert_int_equal(j.refused, refused + 2);
	/* its own but unreadable to it (mode 0200): it could not read it either */
	if (geteuid() != 0) {
		add_proc(fx, 4606, 26);
		write_map(fx, 26, "w", "1000 10 unreadable\n");
		snprintf(path, sizeof(path), "%s/tmp/perf-26.map", fx->croot);
		assert_int_equal(chmod(path, 0200), 0);
		assert_int_equal(bt_jitmaps_proc(&j, 4606, 10 * SEC), -ENOENT);
	}
	/* no process */
	assert_int_equal(bt_jitmaps_proc(&j, 4999, 10 * SEC), -ENOENT);
	bt_jitmaps_free(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jitmap__namespaced_pid__map_found_in_process_root),
		cmocka_unit_test(jitmap__miss__map_read_again_at_most_once_a_second),
		cmocka_unit_test(jitmap__no_map__looked_for_again_later_and_later),
		cmocka_unit_test(jitmap__pid_reused_after_exit__new_table),
		cmocka_unit_test(jitmap__mapped_jitdump__found_through_map_files),
		cmocka_unit_test(jitmap__map_older_than_process__left_by_another),
		cmocka_unit_test(jitmap__hostile_maps__refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
