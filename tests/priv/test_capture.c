/* test_capture.c - the kernel side against real processes: build-ids read by BPF compared with
 * readelf, samples compared with /proc/PID/maps, nm and /proc/kallsyms, lifecycle records, ring
 * buffer overflow accounting, and `buildtrace buildid-list` as a user runs it. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "capture/capture.h"
#include "capture/mapsrc.h"
#include "kernel/kallsyms.h"
#include "session/session.h"

#define PROGS "build/tests/progs"
#define TMP "build/tests/tmp-capture"

/* ---- helpers ------------------------------------------------------------------------------ */

struct recs {
	struct bt_rec_hdr **v;
	size_t n, cap;
};

static int collect(void *ctx, const struct bt_rec_hdr *h)
{
	struct recs *r = ctx;
	if (r->n == r->cap) {
		size_t ncap = r->cap ? 2 * r->cap : 256;
		struct bt_rec_hdr **nv = realloc(r->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = ncap;
	}
	struct bt_rec_hdr *copy = malloc(h->size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, h, h->size);
	r->v[r->n++] = copy;
	return 0;
}

static void recs_free(struct recs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void need_file(const char *path)
{
	if (access(path, R_OK) != 0)
		fail_msg("%s is missing: build the fixtures first (make fixtures)", path);
}

/* The first line of a command's output, without the newline. */
static int run_line(char *out, size_t len, const char *cmd)
{
	int st = bt_test_run(out, len, "%s", cmd);
	out[strcspn(out, "\n")] = '\0';
	return st;
}

/* Oracle: the build-id readelf -n prints for a file ("" when none). */
static void readelf_buildid(const char *path, char *hex, size_t len)
{
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null | awk '/Build ID:/{print $3; exit}'", path);
	run_line(hex, len, cmd);
}

static void rec_hex(const struct bt_rec_mapping *m, char *hex)
{
	for (int i = 0; i < m->build_id_len && i < BT_BUILD_ID_MAX; i++)
		sprintf(hex + 2 * i, "%02x", m->build_id[i]);
	hex[2 * (m->build_id_len <= BT_BUILD_ID_MAX ? m->build_id_len : 0)] = '\0';
}

/* One line of /proc/PID/maps, parsed here independently of the code under test. */
struct mapline {
	unsigned long long start, end, off, ino;
	unsigned major, minor;
	char perms[8];
	char path[PATH_MAX];
};

static size_t read_maps(pid_t pid, struct mapline *out, size_t max)
{
	char path[64], line[PATH_MAX + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		struct mapline *m = &out[n];
		int pos = 0;
		m->path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &m->start, &m->end, m->perms, &m->off,
			   &m->major, &m->minor, &m->ino, &pos) < 7)
			continue;
		snprintf(m->path, sizeof(m->path), "%s", line + pos);
		m->path[strcspn(m->path, "\n")] = '\0';
		n++;
	}
	fclose(f);
	return n;
}

static bool maps_contain(pid_t pid, const char *needle)
{
	struct mapline *ml = calloc(512, sizeof(*ml));
	if (!ml)
		return false;
	size_t n = read_maps(pid, ml, 512);
	bool found = false;
	for (size_t i = 0; i < n && !found; i++)
		found = strstr(ml[i].path, needle) != NULL;
	free(ml);
	return found;
}

static void wait_maps(pid_t pid, const char *needle)
{
	double end = bt_test_now_s() + 3;
	while (!maps_contain(pid, needle)) {
		if (bt_test_now_s() > end)
			fail_msg("process %d never mapped %s", (int)pid, needle);
		usleep(20000);
	}
}

static struct bt_capture *open_capture(const int *pids, size_t npids, struct recs *r,
				       struct bt_capture_opts *extra)
{
	struct bt_capture_opts o = { 0 };
	if (extra)
		o = *extra;
	o.sz = sizeof(o);
	o.pids = pids;
	o.npids = npids;
	o.on_record = collect;
	o.ctx = r;
	struct bt_capture *c = NULL;
	char err[512];
	int e = bt_capture_open(&o, &c, err, sizeof(err));
	if (e)
		fail_msg("bt_capture_open: %d %s", e, err);
	return c;
}

typedef bool (*recs_pred)(const struct recs *r, const void *arg);

/* Polls until pred holds or seconds pass; returns whether it held. */
/* How long a record that must come is waited for: a bound for a test that would otherwise hang,
 * far above what a loaded machine takes (the wait ends as soon as the record is there). */
#define WAIT_S 30

static bool poll_until(struct bt_capture *c, struct recs *r, recs_pred pred, const void *arg,
		       double seconds)
{
	double end = bt_test_now_s() + seconds;
	for (;;) {
		if (pred && pred(r, arg))
			return true;
		if (bt_test_now_s() > end)
			return false;
		int n = bt_capture_poll(c, 50);
		assert_true(n >= 0 || n == -EINTR);
	}
}

static const struct bt_rec_mapping *find_mapping(const struct recs *r, int type, uint32_t pid,
						 const char *path_part, bool need_ok)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct bt_rec_mapping *m = (const void *)r->v[i];
		if (m->hdr.type != type || m->pid != pid || !strstr(m->path, path_part))
			continue;
		if (need_ok && m->build_id_status != BT_BID_OK)
			continue;
		return m;
	}
	return NULL;
}

struct want_map {
	uint32_t pid;
	const char *path_part;
};

static bool have_ok_vma(const struct recs *r, const void *arg)
{
	const struct want_map *w = arg;
	return find_mapping(r, BT_REC_VMA, w->pid, w->path_part, true) != NULL;
}

static bool have_ok_mapping(const struct recs *r, const void *arg)
{
	const struct want_map *w = arg;
	return find_mapping(r, BT_REC_VMA, w->pid, w->path_part, true) ||
	       find_mapping(r, BT_REC_MMAP, w->pid, w->path_part, true);
}

static size_t count_type(const struct recs *r, int type)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->v[i]->type == type;
	return n;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* Every executable file mapping of a running process, read by the iterator, against /proc/PID/maps
 * (addresses, offset, device, inode, path) and readelf (build-id). */
static void capture__snapshot__every_exec_mapping_matches_maps_and_readelf(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "10", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	struct want_map w = { pid, "/spin" };
	assert_true(poll_until(c, &r, have_ok_vma, &w, WAIT_S));
	poll_until(c, &r, NULL, NULL, 0.2);

	struct mapline *ml = calloc(512, sizeof(*ml));
	assert_non_null(ml);
	size_t n = read_maps(pid, ml, 512), checked = 0;
	bool exe = false, libc = false, ldso = false;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ml[i].perms, "r-xp") != 0 || ml[i].path[0] != '/')
			continue;
		const struct bt_rec_mapping *m = NULL;
		for (size_t j = 0; j < r.n && !m; j++) {
			const struct bt_rec_mapping *x = (const void *)r.v[j];
			if (x->hdr.type == BT_REC_VMA && x->pid == (uint32_t)pid && x->start == ml[i].start)
				m = x;
		}
		if (!m)
			fail_msg("no VMA record for %s at 0x%llx", ml[i].path, ml[i].start);
		char want[128], got[2 * BT_BUILD_ID_MAX + 1];
		readelf_buildid(ml[i].path, want, sizeof(want));
		rec_hex(m, got);
		assert_int_equal(m->build_id_status, BT_BID_OK);
		assert_string_equal(got, want);
		assert_string_equal(m->path, ml[i].path);
		assert_int_equal(m->path_len, strlen(m->path) + 1);
		assert_true(m->end == ml[i].end);
		assert_true(m->pgoff == ml[i].off);
		assert_true(m->ino == ml[i].ino);
		assert_int_equal(m->dev >> 20, ml[i].major);
		assert_int_equal(m->dev & 0xfffff, ml[i].minor);
		assert_true(m->flags & BT_MAP_F_SNAPSHOT);
		assert_false(m->flags & BT_MAP_F_DELETED);
		/* The file size and mtime the inode has, per stat(2). */
		struct stat st;
		assert_int_equal(stat(ml[i].path, &st), 0);
		assert_true(m->file_size == (uint64_t)st.st_size);
		assert_true(m->mtime_ns == (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec);
		exe |= strstr(ml[i].path, "/spin") != NULL;
		libc |= strstr(ml[i].path, "/libc.so") != NULL;
		ldso |= strstr(ml[i].path, "/ld-linux") != NULL;
		checked++;
	}
	free(ml);
	assert_true(exe && libc && ldso);
	assert_true(checked >= 3);
	struct bt_capture_stats st;
	assert_int_equal(bt_capture_stats(c, &st), 0);
	assert_true(st.iter_runs >= 1);
	assert_int_equal(bt_capture_watched_alive(c), 1);

	/* The process ends: an exit record, and nothing is watched any more. */
	reap(pid);
	poll_until(c, &r, NULL, NULL, 0.3);
	bool exited = false;
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i]->type == BT_REC_EXIT && ((struct bt_rec_exit *)r.v[i])->pid == (uint32_t)pid)
			exited = true;
	assert_true(exited);
	assert_int_equal(bt_capture_watched_alive(c), 0);
	bt_capture_close(c);
	recs_free(&r);
}

/* A library loaded after attach: the mmap tracepoint reports it (path from the dentry chain), the
 * iterator run it triggers reads its build-id, and dlclose() is reported as an unmap. */
static void capture__dlopen_after_attach__buildid_matches_readelf(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/dlopener");
	need_file(PROGS "/libbtdl.so");
	char lib[PATH_MAX];
	assert_non_null(realpath(PROGS "/libbtdl.so", lib));
	char *argv[] = { PROGS "/dlopener", lib, "signal", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	poll_until(c, &r, NULL, NULL, 0.2);
	assert_null(find_mapping(&r, BT_REC_VMA, pid, "libbtdl", false));
	assert_null(find_mapping(&r, BT_REC_MMAP, pid, "libbtdl", false));

	kill(pid, SIGUSR1);
	struct want_map w = { pid, "libbtdl.so" };
	assert_true(poll_until(c, &r, have_ok_mapping, &w, WAIT_S));
	char want[128], got[2 * BT_BUILD_ID_MAX + 1];
	readelf_buildid(lib, want, sizeof(want));
	assert_true(strlen(want) > 0);
	const struct bt_rec_mapping *m = find_mapping(&r, BT_REC_VMA, pid, "libbtdl.so", true);
	if (!m)
		m = find_mapping(&r, BT_REC_MMAP, pid, "libbtdl.so", true);
	rec_hex(m, got);
	assert_string_equal(got, want);

	/* The mmap record itself, at the address /proc/PID/maps shows executable. */
	const struct bt_rec_mapping *mm = find_mapping(&r, BT_REC_MMAP, pid, "libbtdl.so", false);
	assert_non_null(mm);
	assert_string_equal(mm->path, lib);
	struct mapline *ml = calloc(512, sizeof(*ml));
	assert_non_null(ml);
	size_t n = read_maps(pid, ml, 512);
	unsigned long long xstart = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ml[i].path, lib) && !strcmp(ml[i].perms, "r-xp"))
			xstart = ml[i].start;
	free(ml);
	assert_true(xstart != 0);
	assert_true(mm->start == xstart);
	assert_true(m->start == xstart);

	kill(pid, SIGUSR2);
	double end = bt_test_now_s() + 3;
	bool unmapped = false;
	while (!unmapped && bt_test_now_s() < end) {
		bt_capture_poll(c, 50);
		for (size_t i = 0; i < r.n; i++) {
			const struct bt_rec_munmap *u = (const void *)r.v[i];
			if (u->hdr.type == BT_REC_MUNMAP && u->pid == (uint32_t)pid && u->start <= xstart &&
			    xstart < u->end)
				unmapped = true;
		}
	}
	assert_true(unmapped);
	assert_false(maps_contain(pid, "libbtdl.so"));
	bt_capture_close(c);
	reap(pid);
	recs_free(&r);
}

/* Each way of learning of mappings the kernel allows reports a dlopen made after attach, with
 * readelf's build-id, and a dlclose; the one chosen by default is the best of them (mapsrc.h).
 * Under CI=true this machine's kernel must offer more than the syscall tracepoints, and
 * BT_EXPECT_MAPSRC names the one a kernel must choose (the second kernel's check sets it). */
static void capture__mapping_sources__best_chosen_and_each_reports_dlopen(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/dlopener");
	char lib[PATH_MAX], want[128], got[2 * BT_BUILD_ID_MAX + 1];
	assert_non_null(realpath(PROGS "/libbtdl.so", lib));
	readelf_buildid(lib, want, sizeof(want));
	int first = 0;
	for (int src = BT_MAPSRC_FEXIT; src <= BT_MAPSRC_SYSCALLS; src++) {
		char *argv[] = { PROGS "/dlopener", lib, "signal", NULL };
		pid_t pid = spawn(argv);
		wait_maps(pid, "libc.so");
		struct recs r = { 0 };
		struct bt_capture_opts o = { .mapsrc = src };
		o.sz = sizeof(o);
		o.pids = (int[]){ pid };
		o.npids = 1;
		o.on_record = collect;
		o.ctx = &r;
		struct bt_capture *c = NULL;
		char err[512];
		int e = bt_capture_open(&o, &c, err, sizeof(err));
		print_message("%s: %s\n", bt_mapsrc_name(src), e ? err : "available");
		if (e == -EOPNOTSUPP) {
			reap(pid);
			continue;
		}
		assert_int_equal(e, 0);
		first = first ? first : src;
		struct bt_capture_stats st;
		assert_int_equal(bt_capture_stats(c, &st), 0);
		assert_int_equal(st.mapsrc, src);
		poll_until(c, &r, NULL, NULL, 0.2);
		kill(pid, SIGUSR1);
		struct want_map w = { pid, "libbtdl.so" };
		assert_true(poll_until(c, &r, have_ok_mapping, &w, WAIT_S));
		const struct bt_rec_mapping *m = find_mapping(&r, BT_REC_MMAP, pid, "libbtdl.so", true);
		if (!m)
			m = find_mapping(&r, BT_REC_VMA, pid, "libbtdl.so", true);
		rec_hex(m, got);
		assert_string_equal(got, want);
		assert_non_null(find_mapping(&r, BT_REC_MMAP, pid, "libbtdl.so", false));
		kill(pid, SIGUSR2);
		bool unmapped = false;
		double end = bt_test_now_s() + 3;
		while (!unmapped && bt_test_now_s() < end) {
			bt_capture_poll(c, 50);
			for (size_t i = 0; i < r.n; i++) {
				const struct bt_rec_munmap *u = (const void *)r.v[i];
				unmapped |= u->hdr.type == BT_REC_MUNMAP && u->pid == (uint32_t)pid &&
					    u->start <= m->start && m->start < u->end;
			}
		}
		assert_true(unmapped);
		bt_capture_close(c);
		reap(pid);
		recs_free(&r);
	}
	/* the default is the first that opened */
	struct recs r = { 0 };
	int self = getpid();
	struct bt_capture *c = open_capture(&self, 1, &r, NULL);
	struct bt_capture_stats st;
	assert_int_equal(bt_capture_stats(c, &st), 0);
	assert_int_equal(st.mapsrc, first);
	bt_capture_close(c);
	recs_free(&r);
	const char *expect = getenv("BT_EXPECT_MAPSRC");
	if (expect && *expect)
		assert_string_equal(expect, first == BT_MAPSRC_FEXIT ? "fexit" :
					    first == BT_MAPSRC_SIDEBAND ? "sideband" : "syscalls");
	if (bt_test_in_ci())
		assert_true(first != BT_MAPSRC_SYSCALLS);
}

/* The path the mmap tracepoint rebuilds from dentries crosses mount points (/dev/shm is a tmpfs
 * mounted on devtmpfs), as /proc/PID/maps shows it. */
static void capture__mmap_on_another_mount__path_crosses_mounts(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/dlopener");
	char out[256], lib[PATH_MAX];
	snprintf(lib, sizeof(lib), "/dev/shm/bt-capture-%d.so", (int)getpid());
	if (access("/dev/shm", W_OK) != 0)
		skip();
	assert_int_equal(bt_test_run(out, sizeof(out), "cp " PROGS "/libbtdl.so %s", lib), 0);
	char *argv[] = { PROGS "/dlopener", lib, "signal", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	kill(pid, SIGUSR1);
	struct want_map w = { pid, "bt-capture-" };
	assert_true(poll_until(c, &r, have_ok_mapping, &w, WAIT_S));
	poll_until(c, &r, NULL, NULL, 0.1);
	const struct bt_rec_mapping *mm = find_mapping(&r, BT_REC_MMAP, pid, "bt-capture-", false);
	assert_non_null(mm);
	assert_string_equal(mm->path, lib);
	assert_true(maps_contain(pid, lib));
	bt_capture_close(c);
	reap(pid);
	unlink(lib);
	recs_free(&r);
}

/* Snapshots of a process whose mmap lock is busy with writers complete: the vma walk holds that
 * lock, so build-ids are read in a pass that does not (reading under it deadlocks behind a queued
 * writer). The library the process keeps mapping is reported with readelf's build-id. */
static void capture__busy_mmap_lock__snapshots_complete(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/mapper");
	char lib[PATH_MAX], want[128], got[2 * BT_BUILD_ID_MAX + 1];
	assert_non_null(realpath(PROGS "/libbtdl.so", lib));
	readelf_buildid(lib, want, sizeof(want));
	char *argv[] = { PROGS "/mapper", lib, "10", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libbtdl.so");
	/* A deadlock kills the test binary (SIGALRM) instead of hanging the whole run. */
	alarm(30);
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	double end = bt_test_now_s() + 1.5;
	int snaps = 0;
	while (bt_test_now_s() < end) {
		assert_int_equal(bt_capture_snapshot(c, pid), 0);
		snaps++;
		int n = bt_capture_poll(c, 10);
		assert_true(n >= 0);
	}
	alarm(0);
	assert_true(snaps >= 5);
	assert_true(count_type(&r, BT_REC_MMAP) >= 1);
	const struct bt_rec_mapping *m = find_mapping(&r, BT_REC_VMA, pid, "libbtdl.so", true);
	assert_non_null(m);
	rec_hex(m, got);
	assert_string_equal(got, want);
	bt_capture_close(c);
	reap(pid);
	recs_free(&r);
}

static void on_alarm(int sig)
{
}

/* A signal during the wait ends bt_capture_poll with -EINTR instead of being swallowed. */
static void capture__signal_during_poll__returns_eintr(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "10", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	poll_until(c, &r, NULL, NULL, 0.3);  /* the snapshot is delivered; then nothing comes */
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	/* A signal every half second: one lands inside a poll whatever the machine's load, and a
	 * record that arrives meanwhile only ends one wait early. */
	struct itimerval every = { .it_interval = { 0, 500000 }, .it_value = { 0, 500000 } }, off = { 0 };
	setitimer(ITIMER_REAL, &every, NULL);
	int n = 0;
	for (int i = 0; i < 20 && n >= 0; i++)
		n = bt_capture_poll(c, 5000);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_int_equal(n, -EINTR);
	bt_capture_close(c);
	reap(pid);
	recs_free(&r);
}

/* A library deleted from disk before attach is still read, from the process's memory. */
static void capture__deleted_library__buildid_still_read(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/dlopener");
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "mkdir -p " TMP " && cp " PROGS "/libbtdl.so "
				     TMP "/libbtdl-deleted.so"), 0);
	char lib[PATH_MAX], want[128];
	assert_non_null(realpath(TMP "/libbtdl-deleted.so", lib));
	readelf_buildid(lib, want, sizeof(want));
	assert_true(strlen(want) > 0);
	char *argv[] = { PROGS "/dlopener", lib, "now", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libbtdl-deleted.so");
	assert_int_equal(unlink(lib), 0);

	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	struct want_map w = { pid, "libbtdl-deleted.so" };
	assert_true(poll_until(c, &r, have_ok_vma, &w, WAIT_S));
	const struct bt_rec_mapping *m = find_mapping(&r, BT_REC_VMA, pid, "libbtdl-deleted.so", true);
	char got[2 * BT_BUILD_ID_MAX + 1];
	rec_hex(m, got);
	assert_string_equal(got, want);
	assert_true(m->flags & BT_MAP_F_DELETED);
	/* d_path marks it the way /proc/PID/maps does. */
	assert_non_null(strstr(m->path, " (deleted)"));
	bt_capture_close(c);
	reap(pid);
	recs_free(&r);
}

/* Address ranges of the spin executable's functions, from nm, relocated by the load base. */
struct fn_range {
	const char *name;
	unsigned long long lo, hi;
};

static void nm_range(const char *exe, unsigned long long base, struct fn_range *f)
{
	char cmd[PATH_MAX + 128], out[128];
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s' | awk '$4 == \"%s\" {print $1, $2}'", exe,
		 f->name);
	run_line(out, sizeof(out), cmd);
	unsigned long long v = 0, sz = 0;
	if (sscanf(out, "%llx %llx", &v, &sz) != 2 || !sz)
		fail_msg("nm does not know %s in %s", f->name, exe);
	f->lo = base + v;
	f->hi = base + v + sz;
}

static bool in_fn(const struct fn_range *f, unsigned long long ip)
{
	/* A return address may point just past a call that ends the function. */
	return ip >= f->lo && ip <= f->hi;
}

/* Samples arrive only for the watched process, user stacks walk the spin_outer -> spin_middle ->
 * spin_inner chain nm describes, and kernel frames lie inside the kernel text of /proc/kallsyms. */
static void capture__samples__pids_and_stacks_match_maps_nm_kallsyms(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "10", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture_opts o = { .samples = true, .user_stacks = true, .kernel_stacks = true,
				     .freq_hz = 499 };
	struct bt_capture *c = open_capture(&p, 1, &r, &o);
	poll_until(c, &r, NULL, NULL, 1.5);

	struct mapline *ml = calloc(512, sizeof(*ml));
	assert_non_null(ml);
	size_t nml = read_maps(pid, ml, 512);
	char exe[PATH_MAX];
	assert_non_null(realpath(PROGS "/spin", exe));
	unsigned long long base = 0;
	for (size_t i = 0; i < nml; i++)
		if (!strcmp(ml[i].path, exe) && ml[i].off == 0 && !base)
			base = ml[i].start;
	assert_true(base != 0);
	struct fn_range inner = { "spin_inner" }, middle = { "spin_middle" }, outer = { "spin_outer" };
	nm_range(exe, base, &inner);
	nm_range(exe, base, &middle);
	nm_range(exe, base, &outer);
	char out[256];
	run_line(out, sizeof(out), "awk '$3 == \"_stext\" {print $1}' /proc/kallsyms");
	unsigned long long stext = strtoull(out, NULL, 16);
	run_line(out, sizeof(out), "awk '$3 == \"_etext\" {print $1}' /proc/kallsyms");
	unsigned long long etext = strtoull(out, NULL, 16);
	assert_true(stext != 0 && etext > stext);

	size_t samples = 0, user = 0, user_in_exec = 0, chains = 0, kern = 0, kern_frames = 0,
	       kern_in_text = 0;
	for (size_t i = 0; i < r.n; i++) {
		if (r.v[i]->type != BT_REC_SAMPLE)
			continue;
		const struct bt_rec_sample *s = (const void *)r.v[i];
		samples++;
		assert_int_equal(s->pid, pid);
		assert_true(s->kern_n + s->user_n <= 2 * BT_MAX_STACK);
		if (s->user_n) {
			user++;
			unsigned long long ip = s->ips[s->kern_n];
			for (size_t k = 0; k < nml; k++)
				if (ml[k].perms[2] == 'x' && ip >= ml[k].start && ip < ml[k].end) {
					user_in_exec++;
					break;
				}
			if (s->user_n >= 3 && in_fn(&inner, ip) && in_fn(&middle, s->ips[s->kern_n + 1]) &&
			    in_fn(&outer, s->ips[s->kern_n + 2]))
				chains++;
		}
		if (s->kern_n) {
			kern++;
			for (unsigned k = 0; k < s->kern_n; k++) {
				kern_frames++;
				kern_in_text += s->ips[k] >= stext && s->ips[k] < etext;
			}
		}
	}
	free(ml);
	struct bt_capture_stats st;
	assert_int_equal(bt_capture_stats(c, &st), 0);
	assert_true(st.cpus_attached >= 1);
	assert_true(samples >= 20);
	assert_true(user >= samples / 2);
	assert_true(user_in_exec * 100 >= user * 95);
	assert_true(chains >= 5);
	assert_true(kern >= 3);  /* the reader thread lives in read() */
	assert_true(kern_in_text * 100 >= kern_frames * 95);
	bt_capture_close(c);
	reap(pid);
	recs_free(&r);
}

/* A one-page ring buffer that is not read for a second overflows: every lost sample is counted,
 * delivered + lost equals the samples taken, and reading afterwards neither hangs nor fails. */
static void capture__ringbuf_overflow__drops_counted_and_no_hang(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "10", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture_opts o = { .samples = true, .user_stacks = true, .freq_hz = 2000,
				     .ringbuf_bytes = 4096 };
	struct bt_capture *c = open_capture(&p, 1, &r, &o);
	sleep(1);
	struct bt_capture_stats st;
	assert_int_equal(bt_capture_stats(c, &st), 0);
	assert_true(st.drops[BT_REC_SAMPLE] > 0);
	reap(pid);
	double t0 = bt_test_now_s();
	int n;
	while ((n = bt_capture_poll(c, 0)) > 0)
		assert_true(bt_test_now_s() - t0 < 2);
	assert_true(n == 0);
	assert_true(bt_test_now_s() - t0 < 2);
	assert_int_equal(bt_capture_stats(c, &st), 0);
	size_t delivered = count_type(&r, BT_REC_SAMPLE);
	assert_true(delivered >= 1);
	assert_true(delivered + st.drops[BT_REC_SAMPLE] == st.samples);
	bt_capture_close(c);
	recs_free(&r);
}

struct child_state {
	uint32_t parent;
	uint32_t child;  /* 0 until the fork record is seen */
};

static bool child_exited(const struct recs *r, const void *arg)
{
	const struct child_state *cs = arg;
	uint32_t child = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct bt_rec_fork *f = (const void *)r->v[i];
		if (f->hdr.type == BT_REC_FORK && f->parent_pid == cs->parent)
			child = f->child_pid;
		if (child && r->v[i]->type == BT_REC_EXIT && ((struct bt_rec_exit *)r->v[i])->pid == child)
			return true;
	}
	return false;
}

/* Fork, exec and exit of a followed child arrive in order; a multi-threaded exit is one process
 * exit, and a thread that exits is none; the exec triggers a snapshot of the new image. */
static void capture__fork_exec_exit__records_for_followed_child(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/forker");
	need_file(PROGS "/threads");
	char *argv[] = { PROGS "/forker", PROGS "/threads", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture_opts o = { .follow_forks = true };
	struct bt_capture *c = open_capture(&p, 1, &r, &o);
	kill(pid, SIGUSR1);
	struct child_state cs = { .parent = pid };
	assert_true(poll_until(c, &r, child_exited, &cs, WAIT_S));
	poll_until(c, &r, NULL, NULL, 0.2);

	uint32_t child = 0;
	size_t forks = 0, execs = 0, child_exits = 0, parent_exits = 0;
	size_t i_fork = 0, i_exec = 0, i_exit = 0;
	for (size_t i = 0; i < r.n; i++) {
		const struct bt_rec_hdr *h = r.v[i];
		if (h->type == BT_REC_FORK && ((struct bt_rec_fork *)h)->parent_pid == (uint32_t)pid) {
			child = ((struct bt_rec_fork *)h)->child_pid;
			forks++;
			i_fork = i;
			assert_string_equal(((struct bt_rec_fork *)h)->comm, "forker");
		}
	}
	assert_int_equal(forks, 1);
	assert_true(child > 0 && child != (uint32_t)pid);
	const struct bt_rec_mapping *img = NULL;
	for (size_t i = 0; i < r.n; i++) {
		const struct bt_rec_hdr *h = r.v[i];
		if (h->type == BT_REC_EXEC && ((struct bt_rec_exec *)h)->pid == child) {
			execs++;
			i_exec = i;
			assert_string_equal(((struct bt_rec_exec *)h)->filename, PROGS "/threads");
			assert_string_equal(((struct bt_rec_exec *)h)->comm, "threads");
		}
		if (h->type == BT_REC_EXIT && ((struct bt_rec_exit *)h)->pid == child) {
			child_exits++;
			i_exit = i;
		}
		if (h->type == BT_REC_EXIT && ((struct bt_rec_exit *)h)->pid == (uint32_t)pid)
			parent_exits++;
		if (h->type == BT_REC_VMA && !img)
			img = find_mapping(&r, BT_REC_VMA, child, "/threads", true);
	}
	assert_int_equal(execs, 1);
	assert_int_equal(child_exits, 1);
	assert_int_equal(parent_exits, 0);
	assert_true(i_fork < i_exec && i_exec < i_exit);
	assert_true(r.v[i_fork]->time_ns <= r.v[i_exec]->time_ns);
	assert_true(r.v[i_exec]->time_ns <= r.v[i_exit]->time_ns);
	/* The snapshot the exec triggered saw the new image, with readelf's build-id. */
	assert_non_null(img);
	char want[128], got[2 * BT_BUILD_ID_MAX + 1];
	readelf_buildid(PROGS "/threads", want, sizeof(want));
	rec_hex(img, got);
	assert_string_equal(got, want);
	/* The child left the watched set when it exited; the parent is still there. */
	assert_int_equal(bt_capture_watched_alive(c), 1);
	bt_capture_close(c);
	reap(pid);
	recs_free(&r);
}

/* Without follow_forks the fork is reported, but the child is not watched. */
static void capture__fork_not_followed__child_not_watched(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/forker");
	char *argv[] = { PROGS "/forker", PROGS "/threads", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	kill(pid, SIGUSR1);
	/* The child runs for about 300 ms. */
	poll_until(c, &r, NULL, NULL, 1.0);
	assert_int_equal(count_type(&r, BT_REC_FORK), 1);
	assert_int_equal(count_type(&r, BT_REC_EXEC), 0);
	assert_int_equal(count_type(&r, BT_REC_EXIT), 0);
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i]->type == BT_REC_VMA || r.v[i]->type == BT_REC_MMAP)
			assert_int_equal(((struct bt_rec_mapping *)r.v[i])->pid, pid);
	bt_capture_close(c);
	reap(pid);
	recs_free(&r);
}

static bool proc_state_is(pid_t pid, char state)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == state;
}

/* A process that exited before attach (a zombie not yet reaped) is not alive. */
static void capture__zombie__not_counted_alive(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "0.05", NULL };
	pid_t pid = spawn(argv);
	double end = bt_test_now_s() + 3;
	while (!proc_state_is(pid, 'Z') && bt_test_now_s() < end)
		usleep(10000);
	assert_true(proc_state_is(pid, 'Z'));
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	assert_int_equal(bt_capture_watched_alive(c), 0);
	poll_until(c, &r, NULL, NULL, 0.1);
	assert_int_equal(count_type(&r, BT_REC_VMA), 0);  /* its memory is gone */
	bt_capture_close(c);
	waitpid(pid, NULL, 0);
	recs_free(&r);
}

/* A process added after open is snapshot at once; -a sees this very process. */
static void capture__watch_after_open_and_all__snapshots(void **state)
{
	bt_test_require_priv();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "10", NULL };
	pid_t a = spawn(argv), b = spawn(argv);
	wait_maps(a, "libc.so");
	wait_maps(b, "libc.so");
	struct recs r = { 0 };
	int p = a;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	struct want_map wa = { a, "/spin" }, wb = { b, "/spin" };
	assert_true(poll_until(c, &r, have_ok_vma, &wa, WAIT_S));
	assert_null(find_mapping(&r, BT_REC_VMA, b, "/spin", false));
	assert_int_equal(bt_capture_watch(c, b), 0);
	assert_true(poll_until(c, &r, have_ok_vma, &wb, WAIT_S));
	assert_int_equal(bt_capture_watched_alive(c), 2);
	bt_capture_close(c);
	recs_free(&r);

	struct bt_capture_opts o = { .all = true };
	c = open_capture(NULL, 0, &r, &o);
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	struct want_map ws = { getpid(), self };
	assert_true(poll_until(c, &r, have_ok_vma, &ws, WAIT_S));
	assert_true(poll_until(c, &r, have_ok_vma, &wa, WAIT_S));
	assert_int_equal(bt_capture_watched_alive(c), -1);
	bt_capture_close(c);
	recs_free(&r);
	reap(a);
	reap(b);
}

static void capture__bad_options__einval_with_message(void **state)
{
	bt_test_require_priv();
	struct recs r = { 0 };
	struct bt_capture *c = (void *)&r;
	char err[256];
	struct bt_capture_opts o = { .sz = sizeof(o), .on_record = collect, .ctx = &r };
	assert_int_equal(bt_capture_open(&o, &c, err, sizeof(err)), -EINVAL);
	assert_null(c);
	assert_true(strlen(err) > 0);
	int dead = 0x3fffff0;  /* above any pid_max */
	o.pids = &dead;
	o.npids = 1;
	assert_int_equal(bt_capture_open(&o, &c, err, sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "process"));
	assert_int_equal(bt_capture_poll(NULL, 0), -EINVAL);
	bt_capture_close(NULL);
}

/* ---- buildtrace buildid-list ----------------------------------------------------------------- */

static void need_buildtrace(void)
{
	if (access("./buildtrace", X_OK) != 0)
		fail_msg("./buildtrace is missing: run make buildtrace");
}

static void buildid_list__json__matches_maps_and_readelf(void **state)
{
	bt_test_require_priv();
	need_buildtrace();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "10", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	char *out = malloc(1 << 16);
	assert_non_null(out);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "./buildtrace buildid-list -p %d -d 2 --json 2>/dev/null", (int)pid);
	assert_int_equal(bt_test_run(out, 1 << 16, "%s", cmd), 0);

	struct mapline *ml = calloc(512, sizeof(*ml));
	assert_non_null(ml);
	size_t n = read_maps(pid, ml, 512), checked = 0;
	char pidkey[32];
	snprintf(pidkey, sizeof(pidkey), "{\"pid\":%d,", (int)pid);
	size_t lines = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		lines++;
		/* Never a process it was not asked about. */
		assert_true(strncmp(l, pidkey, strlen(pidkey)) == 0);
		char start[40], bid[80], path[PATH_MAX];
		const char *s = strstr(l, "\"start\":\"0x"), *b = strstr(l, "\"build_id\":\""),
			   *pa = strstr(l, "\"path\":\"");
		assert_true(s && b && pa);
		assert_non_null(strstr(l, "\"source\":\"bpf\""));
		sscanf(s + 9, "%39[^\"]", start);
		sscanf(b + 12, "%79[^\"]", bid);
		sscanf(pa + 8, "%4095[^\"]", path);
		unsigned long long st = strtoull(start, NULL, 16);
		bool found = false;
		for (size_t i = 0; i < n; i++) {
			if (ml[i].start != st)
				continue;
			found = true;
			assert_string_equal(path, ml[i].path);
			char want[128];
			readelf_buildid(ml[i].path, want, sizeof(want));
			assert_string_equal(bid, want);
			checked++;
		}
		assert_true(found);
	}
	/* And every executable file mapping is listed. */
	size_t xfiles = 0;
	for (size_t i = 0; i < n; i++)
		xfiles += !strcmp(ml[i].perms, "r-xp") && ml[i].path[0] == '/';
	free(ml);
	free(out);
	assert_true(lines >= 3);
	assert_int_equal(checked, lines);
	assert_int_equal(lines, xfiles);
	reap(pid);
}

static size_t count_substr(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Two processes running one executable: the text list names the file once, perf-style; the
 * JSON list has it once per process. */
static void buildid_list__two_processes__text_once_json_per_process(void **state)
{
	bt_test_require_priv();
	need_buildtrace();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "10", NULL };
	pid_t a = spawn(argv), b = spawn(argv);
	wait_maps(a, "libc.so");
	wait_maps(b, "libc.so");
	char exe[PATH_MAX], want[128], line[PATH_MAX + 160], cmd[256];
	assert_non_null(realpath(PROGS "/spin", exe));
	readelf_buildid(exe, want, sizeof(want));
	char *out = malloc(1 << 16);
	assert_non_null(out);
	snprintf(cmd, sizeof(cmd), "./buildtrace buildid-list -p %d,%d -d 1 2>/dev/null", (int)a, (int)b);
	assert_int_equal(bt_test_run(out, 1 << 16, "%s", cmd), 0);
	snprintf(line, sizeof(line), "%s %s\n", want, exe);
	assert_int_equal(count_substr(out, line), 1);
	assert_int_equal(count_substr(out, "/spin"), 1);
	snprintf(cmd, sizeof(cmd), "./buildtrace buildid-list -p %d,%d -d 1 --json 2>/dev/null", (int)a,
		 (int)b);
	assert_int_equal(bt_test_run(out, 1 << 16, "%s", cmd), 0);
	snprintf(line, sizeof(line), "\"build_id\":\"%s\",\"path\":\"%s\"", want, exe);
	assert_int_equal(count_substr(out, line), 2);
	char pa[32], pb[32];
	snprintf(pa, sizeof(pa), "{\"pid\":%d,", (int)a);
	snprintf(pb, sizeof(pb), "{\"pid\":%d,", (int)b);
	assert_true(count_substr(out, pa) >= 3 && count_substr(out, pb) >= 3);
	free(out);
	reap(a);
	reap(b);
}

static void buildid_list__ends_when_the_process_exits(void **state)
{
	bt_test_require_priv();
	need_buildtrace();
	need_file(PROGS "/spin");
	char *argv[] = { PROGS "/spin", "2.5", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libc.so");
	char cmd[256], err[4096], out[4096];
	snprintf(cmd, sizeof(cmd), "timeout 10 ./buildtrace buildid-list -p %d 2>&1 >" TMP "/list.out",
		 (int)pid);
	assert_int_equal(bt_test_run(out, sizeof(out), "mkdir -p " TMP), 0);
	double t0 = bt_test_now_s();
	/* The process is not reaped meanwhile: a zombie counts as exited. */
	assert_int_equal(bt_test_run(err, sizeof(err), "%s", cmd), 0);
	assert_true(bt_test_now_s() - t0 < 5);
	/* The summary on stderr counts the listed mappings and the userspace fallbacks. */
	assert_non_null(strstr(err, "3 mappings listed, 0 build-ids read by the userspace fallback"));
	char exe[PATH_MAX], want[128], line[PATH_MAX + 160];
	assert_non_null(realpath(PROGS "/spin", exe));
	readelf_buildid(exe, want, sizeof(want));
	snprintf(line, sizeof(line), "%s %s\n", want, exe);
	assert_int_equal(bt_test_run(out, sizeof(out), "cat " TMP "/list.out"), 0);
	assert_non_null(strstr(out, line));
	waitpid(pid, NULL, 0);
}

/* When the kernel cannot read a build-id (the ELF header is not mapped), the record says FAULT and
 * buildid-list reads the file through /proc/PID/map_files instead. */
static void buildid_list__kernel_cannot_read__userspace_fallback(void **state)
{
	bt_test_require_priv();
	need_buildtrace();
	need_file(PROGS "/dlopener");
	char out[256], lib[PATH_MAX], want[128];
	assert_int_equal(bt_test_run(out, sizeof(out), "mkdir -p " TMP " && cp " PROGS "/libbtdl.so "
				     TMP "/libbtdl-segment.so"), 0);
	assert_non_null(realpath(TMP "/libbtdl-segment.so", lib));
	readelf_buildid(lib, want, sizeof(want));
	char *argv[] = { PROGS "/dlopener", lib, "segment", NULL };
	pid_t pid = spawn(argv);
	wait_maps(pid, "libbtdl-segment.so");

	/* The kernel side alone: a FAULT, counted. */
	struct recs r = { 0 };
	int p = pid;
	struct bt_capture *c = open_capture(&p, 1, &r, NULL);
	poll_until(c, &r, NULL, NULL, 0.3);
	const struct bt_rec_mapping *m = find_mapping(&r, BT_REC_VMA, pid, "libbtdl-segment.so", false);
	assert_non_null(m);
	assert_int_equal(m->build_id_status, BT_BID_FAULT);
	struct bt_capture_stats st;
	assert_int_equal(bt_capture_stats(c, &st), 0);
	assert_true(st.bid_faults >= 1);
	bt_capture_close(c);
	recs_free(&r);

	char cmd[256], *list = malloc(1 << 16);
	assert_non_null(list);
	snprintf(cmd, sizeof(cmd), "./buildtrace buildid-list -p %d -d 1 --json 2>" TMP "/fallback.err",
		 (int)pid);
	assert_int_equal(bt_test_run(list, 1 << 16, "%s", cmd), 0);
	char *line = strstr(list, "libbtdl-segment.so");
	assert_non_null(line);
	while (line > list && line[-1] != '\n')
		line--;
	line[strcspn(line, "\n")] = '\0';
	char expect[256];
	snprintf(expect, sizeof(expect), "\"build_id\":\"%s\"", want);
	assert_non_null(strstr(line, expect));
	assert_non_null(strstr(line, "\"source\":\"userspace\""));
	free(list);
	assert_int_equal(bt_test_run(out, sizeof(out), "cat " TMP "/fallback.err"), 0);
	assert_non_null(strstr(out, " 1 build-ids read by the userspace fallback"));
	reap(pid);
	unlink(lib);
}

static void buildid_list__kernel__matches_perf(void **state)
{
	bt_test_require_priv();
	need_buildtrace();
	char want[128], out[4096];
	if (run_line(want, sizeof(want), "perf buildid-list -k 2>/dev/null") != 0 || !want[0])
		skip();
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace buildid-list --kernel"), 0);
	char line[256];
	snprintf(line, sizeof(line), "%s [kernel.kallsyms]\n", want);
	assert_true(strncmp(out, line, strlen(line)) == 0);
}

static void buildid_list__bad_arguments__exit_2(void **state)
{
	bt_test_require_priv();
	need_buildtrace();
	char out[1024];
	const char *bad[] = {
		"", "-p", "-p abc", "-p 1 -a", "-a -d -1", "-a -d x", "--nope", "-p 1 extra",
		"-p 2147483647",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int st = bt_test_run(out, sizeof(out), "./buildtrace buildid-list %s 2>&1", bad[i]);
		if (st != 2)
			fail_msg("buildid-list %s: exit %d, expected 2", bad[i], st);
		assert_non_null(strstr(out, "buildtrace: "));
	}
}

/* The ids of the BPF programs loaded now, ascending; how many (at most max). */
static size_t prog_ids(uint32_t *ids, size_t max)
{
	size_t n = 0;
	uint32_t id = 0;
	while (n < max && bpf_prog_get_next_id(id, &id) == 0)
		ids[n++] = id;
	return n;
}

/* The sampler program a capture loaded (new since the ids in before[0..nb), named "sample"): its
 * JIT image address, and its kallsyms name into want. 0 when there is none. */
static uint64_t new_sampler(const uint32_t *before, size_t nb, char *want, size_t wlen)
{
	static uint32_t after[4096];
	size_t na = prog_ids(after, 4096);
	uint64_t addr = 0;
	for (size_t i = 0; i < na && !addr; i++) {
		bool old = false;
		for (size_t j = 0; j < nb && !old; j++)
			old = before[j] == after[i];
		int fd = old ? -1 : bpf_prog_get_fd_by_id(after[i]);
		if (fd < 0)
			continue;
		uint64_t ksym = 0;
		struct bpf_prog_info info;
		memset(&info, 0, sizeof(info));
		info.nr_jited_ksyms = 1;
		info.jited_ksyms = (uint64_t)(uintptr_t)&ksym;
		uint32_t len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && !strcmp(info.name, "sample") && ksym) {
			addr = ksym;
			int w = snprintf(want, wlen, "bpf_prog_");
			for (int k = 0; k < BPF_TAG_SIZE; k++)
				w += snprintf(want + w, wlen - (size_t)w, "%02x", info.tag[k]);
			snprintf(want + w, wlen - (size_t)w, "_sample");
		}
		close(fd);
	}
	return addr;
}

/* BPF programs appear in kallsyms as bpf_prog_TAG_NAME when they are loaded: a frame in one loaded
 * after the session read kallsyms has no name of its own until kallsyms is read again (which a
 * miss asks for); then it has the program's. The program is told apart from others of the same
 * name and tag (an earlier case's, on its way out) by id, and located by its JIT image address. */
static void capture__bpf_programs_loaded_later__named_after_reload(void **state)
{
	bt_test_require_priv();
	/* programs the session's kallsyms will know, just below where the next ones are placed */
	struct recs r0 = { 0 }, r = { 0 };
	int self = getpid();
	struct bt_capture_opts extra = { .samples = true, .user_stacks = true, .kernel_stacks = true,
					 .freq_hz = 99 };
	struct bt_capture *c0 = open_capture(&self, 1, &r0, &extra);
	struct bt_session *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	struct bt_session_opts so = { .proc_root = "", .kernel = true };
	assert_int_equal(bt_session_init(s, &so), 0);
	assert_int_equal(s->ksyms_err, 0);
	static uint32_t before[4096];
	size_t nb = prog_ids(before, 4096);
	struct bt_capture *c = open_capture(&self, 1, &r, &extra);
	/* the sampler program this capture loaded: new since, and named "sample" */
	char want[128] = "";
	uint64_t addr = new_sampler(before, nb, want, sizeof(want));
	print_message("the capture's sampler: %s at 0x%llx\n", want, (unsigned long long)addr);
	assert_true(addr != 0);
	/* the session's kallsyms predates it: whatever it finds there is not this program (often the
	 * program below it, whose name the frame must not keep) */
	uint64_t off = 0;
	const struct bt_ksym *k = bt_kallsyms_lookup(s->ksyms, addr + 4, &off);
	assert_true(!k || k->addr != addr);
	print_message("before reading kallsyms again: %s\n", k ? k->name : "no symbol");
	int64_t id = bt_profile_loc(&s->prof, BT_LOC_KERNEL, 0, addr + 4, false);
	assert_true(id >= 0);
	uint32_t ids[1] = { (uint32_t)id };
	assert_int_equal(bt_profile_add(&s->prof, 0, 1, ids, 1, 1), 0);
	assert_int_equal(bt_session_resolve(s), 0);
	/* no name, or a neighbour's: either way the session asks to read kallsyms again */
	assert_true(s->ksyms_misses > 0);
	/* read again: the program's own symbol, at its address, names the frame */
	assert_int_equal(bt_session_reload_kallsyms(s), 0);
	k = bt_kallsyms_lookup(s->ksyms, addr + 4, &off);
	assert_non_null(k);
	assert_int_equal(k->addr, addr);
	assert_int_equal(off, 4);
	assert_string_equal(k->name, want);
	assert_int_equal(bt_session_resolve(s), 0);
	assert_string_equal(bt_strtab_get(&s->prof.names, s->prof.locs[id].name_id), want);
	bt_capture_close(c);
	bt_capture_close(c0);
	recs_free(&r);
	recs_free(&r0);
	bt_session_free(s);
	free(s);
}

/* Where the kernel announces the BPF programs it loads (PERF_RECORD_KSYMBOL), a session names a
 * frame in a program loaded after it started at once, as kallsyms names it, without reading
 * kallsyms again. */
static void capture__bpf_program_loaded_later__named_from_the_announcement(void **state)
{
	bt_test_require_priv();
	struct bt_session *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	struct bt_session_opts so = { .proc_root = "", .kernel = true };
	assert_int_equal(bt_session_init(s, &so), 0);
	int self = getpid();
	struct bt_capture_opts o = { .sz = sizeof(o), .pids = &self, .npids = 1, .on_record = bt_session_record,
				     .ctx = s };
	struct bt_capture *c0 = NULL;
	char err[512];
	assert_int_equal(bt_capture_open(&o, &c0, err, sizeof(err)), 0);
	struct bt_capture_stats st;
	assert_int_equal(bt_capture_stats(c0, &st), 0);
	if (!st.ksym_records && bt_test_in_ci())
		fail_msg("this kernel does not announce BPF programs (PERF_RECORD_KSYMBOL)");
	if (!st.ksym_records) {
		bt_capture_close(c0);
		bt_session_free(s);
		free(s);
		skip();
	}
	static uint32_t before[4096];
	size_t nb = prog_ids(before, 4096);
	struct recs r = { 0 };
	struct bt_capture_opts extra = { .samples = true, .user_stacks = true, .kernel_stacks = true,
					 .freq_hz = 99 };
	struct bt_capture *c = open_capture(&self, 1, &r, &extra);
	char want[128] = "";
	uint64_t addr = new_sampler(before, nb, want, sizeof(want));
	assert_true(addr != 0);
	uint64_t off = 0;
	double end = bt_test_now_s() + 5;
	while (!bt_kdyn_lookup(&s->kdyn, addr + 4, &off) && bt_test_now_s() < end)
		bt_capture_poll(c0, 50);
	int64_t id = bt_profile_loc(&s->prof, BT_LOC_KERNEL, 0, addr + 4, false);
	assert_true(id >= 0);
	uint32_t ids[1] = { (uint32_t)id };
	assert_int_equal(bt_profile_add(&s->prof, 0, 1, ids, 1, 1), 0);
	assert_int_equal(bt_session_resolve(s), 0);
	print_message("announced: %s at 0x%llx, named %s\n", want, (unsigned long long)addr,
		      bt_strtab_get(&s->prof.names, s->prof.locs[id].name_id));
	assert_string_equal(bt_strtab_get(&s->prof.names, s->prof.locs[id].name_id), want);
	assert_int_equal(s->ksyms_misses, 0);
	assert_int_equal(s->stats.kallsyms_reloads, 0);
	bt_capture_close(c);
	bt_capture_close(c0);
	recs_free(&r);
	bt_session_free(s);
	free(s);
}

/* Another perf user on the machine (perf record, say) gets its mmap records as it asked for them:
 * a listener asking for build-ids would make the kernel mark later listeners' records as carrying
 * build-ids too, which perf 6.1 aborts on. */
static void capture__beside_another_perf_listener__its_records_unmarked(void **state)
{
	bt_test_require_priv();
	struct recs r = { 0 };
	int self = getpid();
	struct bt_capture *c = open_capture(&self, 1, &r, NULL);
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.mmap = 1;
	a.mmap2 = 1;
	a.exclude_kernel = 1;
	int pfd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	assert_true(pfd >= 0);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *meta = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	assert_true(meta != MAP_FAILED);
	int fd = open("/proc/self/exe", O_RDONLY);
	void *m = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	const unsigned char *data = (const unsigned char *)meta + page;
	int mmap2 = 0, marked = 0;
	for (uint64_t t = 0; t < meta->data_head && t < page;) {
		const struct perf_event_header *h = (const void *)(data + t);
		if (!h->size)
			break;
		if (h->type == PERF_RECORD_MMAP2) {
			mmap2++;
			marked += !!(h->misc & (1 << 14));  /* PERF_RECORD_MISC_MMAP_BUILD_ID */
		}
		t += h->size;
	}
	munmap(m, page);
	close(fd);
	munmap(meta, 2 * page);
	close(pfd);
	bt_capture_close(c);
	recs_free(&r);
	assert_int_equal(mmap2, 1);
	assert_int_equal(marked, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(capture__bpf_programs_loaded_later__named_after_reload),
		cmocka_unit_test(capture__bpf_program_loaded_later__named_from_the_announcement),
		cmocka_unit_test(capture__snapshot__every_exec_mapping_matches_maps_and_readelf),
		cmocka_unit_test(capture__dlopen_after_attach__buildid_matches_readelf),
		cmocka_unit_test(capture__mapping_sources__best_chosen_and_each_reports_dlopen),
		cmocka_unit_test(capture__beside_another_perf_listener__its_records_unmarked),
		cmocka_unit_test(capture__mmap_on_another_mount__path_crosses_mounts),
		cmocka_unit_test(capture__deleted_library__buildid_still_read),
		cmocka_unit_test(capture__signal_during_poll__returns_eintr),
		cmocka_unit_test(capture__busy_mmap_lock__snapshots_complete),
		cmocka_unit_test(capture__samples__pids_and_stacks_match_maps_nm_kallsyms),
		cmocka_unit_test(capture__ringbuf_overflow__drops_counted_and_no_hang),
		cmocka_unit_test(capture__fork_exec_exit__records_for_followed_child),
		cmocka_unit_test(capture__fork_not_followed__child_not_watched),
		cmocka_unit_test(capture__zombie__not_counted_alive),
		cmocka_unit_test(capture__watch_after_open_and_all__snapshots),
		cmocka_unit_test(capture__bad_options__einval_with_message),
		cmocka_unit_test(buildid_list__json__matches_maps_and_readelf),
		cmocka_unit_test(buildid_list__two_processes__text_once_json_per_process),
		cmocka_unit_test(buildid_list__ends_when_the_process_exits),
		cmocka_unit_test(buildid_list__kernel_cannot_read__userspace_fallback),
		cmocka_unit_test(buildid_list__kernel__matches_perf),
		cmocka_unit_test(buildid_list__bad_arguments__exit_2),
	};
	/* BT_TEST_FILTER=PATTERN runs the matching tests only (* and ? as wildcards). */
	if (getenv("BT_TEST_FILTER"))
		cmocka_set_test_filter(getenv("BT_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
