/* test_procmaps.c - maps line parsing from literal lines, and this very process's maps checked against
 * what the kernel reports through /proc/self/map_files, fstat and readelf. */
#include "testutil.h"
#include "capture/procmaps.h"

#include <errno.h>
#include <sys/auxv.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static struct bt_procmap *parse_ok(const char *line)
{
	static struct bt_procmap m;
	memset(&m, 0x55, sizeof(m));
	int err = bt_procmap_parse_line(line, &m);
	if (err)
		fail_msg("\"%s\": %d", line, err);
	return &m;
}

static void procmap__file_line__all_fields(void **state)
{
	const struct bt_procmap *m = parse_ok("7f3572d0f000-7f3572e65000 r-xp 00026000 fe:01 332835"
					      "                     /usr/lib/x86_64-linux-gnu/libc.so.6\n");
	assert_int_equal(m->start, 0x7f3572d0f000ULL);
	assert_int_equal(m->end, 0x7f3572e65000ULL);
	assert_int_equal(m->offset, 0x26000);
	assert_int_equal(m->dev_major, 0xfe);
	assert_int_equal(m->dev_minor, 0x01);
	assert_int_equal(m->ino, 332835);
	assert_string_equal(m->perms, "r-xp");
	assert_false(m->deleted);
	assert_string_equal(m->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

static void procmap__path_with_spaces__kept_whole(void **state)
{
	const struct bt_procmap *m = parse_ok("00400000-00401000 r--s 00000000 08:02 17 "
					      "   /opt/My App/lib  two  spaces.so \n");
	assert_string_equal(m->path, "/opt/My App/lib  two  spaces.so ");
	assert_string_equal(m->perms, "r--s");
}

static void procmap__deleted_suffix__stripped_and_flagged(void **state)
{
	const struct bt_procmap *m = parse_ok("7f0000000000-7f0000001000 r-xp 00001000 00:01 2048"
					      "       /memfd:jit code (deleted)\n");
	assert_true(m->deleted);
	assert_string_equal(m->path, "/memfd:jit code");
	m = parse_ok("1000-2000 r-xp 00000000 08:01 9 /tmp/lib.so (deleted)");
	assert_true(m->deleted);
	assert_string_equal(m->path, "/tmp/lib.so");
	/* the suffix counts only at the very end */
	m = parse_ok("1000-2000 r-xp 00000000 08:01 9 /tmp/a (deleted)/b.so\n");
	assert_false(m->deleted);
	assert_string_equal(m->path, "/tmp/a (deleted)/b.so");
}

static void procmap__pseudo_paths__kept_as_shown(void **state)
{
	static const char *names[] = { "[heap]", "[stack]", "[vdso]", "[vvar]", "[anon:glibc malloc]" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char line[256];
		snprintf(line, sizeof(line), "7ffd1000-7ffd3000 rw-p 00000000 00:00 0   %s\n", names[i]);
		const struct bt_procmap *m = parse_ok(line);
		assert_string_equal(m->path, names[i]);
		assert_int_equal(m->ino, 0);
		assert_false(m->deleted);
	}
}

static void procmap__anonymous__empty_path(void **state)
{
	static const char *lines[] = {
		"7f00aa000000-7f00aa021000 rw-p 00000000 00:00 0 \n",
		"7f00aa000000-7f00aa021000 rw-p 00000000 00:00 0\n",
		"7f00aa000000-7f00aa021000 rw-p 00000000 00:00 0",
		"7f00aa000000-7f00aa021000 rw-p 00000000 00:00 0                          \n",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		const struct bt_procmap *m = parse_ok(lines[i]);
		assert_string_equal(m->path, "");
		assert_int_equal(m->end - m->start, 0x21000);
	}
}

static void procmap__garbage_lines__einval(void **state)
{
	static const char *bad[] = {
		"",
		"\n",
		"hello world\n",
		"1000 r-xp 00000000 08:01 9 /x\n",
		"1000-2000\n",
		"1000-2000 r-xp\n",
		"1000-2000 r-xp 00000000 08:01\n",
		"1000-2000 r-xp 00000000 0801 9 /x\n",
		"1000-2000 rwxq 00000000 08:01 9 /x\n",
		"1000-2000 xr-p 00000000 08:01 9 /x\n",
		"1000-2000 r-x 00000000 08:01 9 /x\n",
		"2000-1000 r-xp 00000000 08:01 9 /x\n",
		"1000-1000 r-xp 00000000 08:01 9 /x\n",
		"10000000000000000-20000000000000000 r-xp 00000000 08:01 9 /x\n",
		"1000-2000 r-xp 0000zz00 08:01 9 /x\n",
		"1000-2000 r-xp 00000000 08:01 99999999999999999999999 /x\n",
		"1000-2000 r-xp 00000000 08:01 -9 /x\n",
		"1000-2000 r-xp 00000000 08:01 9x /x\n",
		"1000-2000 r-xp 00000000 123456789:01 9 /x\n",
		"1000-2000 r-xp 00000000 08:01 9 /x\nsecond line\n",
		" 1000-2000 r-xp 00000000 08:01 9 /x\n",
		"1000-2000  r-xp 00000000 08:01 9 /x\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bt_procmap m;
		int err = bt_procmap_parse_line(bad[i], &m);
		if (err != -EINVAL)
			fail_msg("\"%s\": %d", bad[i], err);
	}
	struct bt_procmap m;
	assert_int_equal(bt_procmap_parse_line(NULL, &m), -EINVAL);
}

static void procmap__path_length__limit_is_the_buffer(void **state)
{
	struct bt_procmap *m = malloc(sizeof(*m));
	const size_t cap = sizeof(m->path);
	const char *head = "1000-2000 r--p 00000000 08:01 9 ";
	char *line = malloc(strlen(head) + cap + 2);
	assert_non_null(m);
	assert_non_null(line);
	strcpy(line, head);
	char *p = line + strlen(head);
	p[0] = '/';
	memset(p + 1, 'a', cap - 2);
	strcpy(p + cap - 1, "\n");  /* a path of cap - 1 bytes fits with its NUL */
	assert_int_equal(bt_procmap_parse_line(line, m), 0);
	assert_int_equal(strlen(m->path), cap - 1);
	strcpy(p + cap - 1, "a\n");
	assert_int_equal(bt_procmap_parse_line(line, m), -EINVAL);
	free(line);
	free(m);
}

/* ---- this process's own maps ------------------------------------------------------------------ */

struct collected {
	size_t n, cap;
	struct bt_procmap *maps;
};

static int collect(void *ctx, const struct bt_procmap *m)
{
	struct collected *c = ctx;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		struct bt_procmap *nm = realloc(c->maps, ncap * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		c->maps = nm;
		c->cap = ncap;
	}
	c->maps[c->n++] = *m;
	return 0;
}

static void collect_self(struct collected *c)
{
	memset(c, 0, sizeof(*c));
	assert_int_equal(bt_procmaps_foreach("", getpid(), collect, c), 0);
	assert_true(c->n > 5);
}

static void procmaps__self__paths_match_map_files_readlink(void **state)
{
	struct collected c;
	collect_self(&c);
	size_t linked = 0;
	for (size_t i = 0; i < c.n; i++) {
		const struct bt_procmap *m = &c.maps[i];
		char link[128], target[PATH_MAX + 16];
		snprintf(link, sizeof(link), "/proc/self/map_files/%" PRIx64 "-%" PRIx64, m->start, m->end);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (m->ino == 0 && m->path[0] != '/') {
			assert_true(n < 0);  /* no file behind [heap], [stack] or anonymous memory */
			continue;
		}
		assert_true(n > 0);
		target[n] = '\0';
		char want[PATH_MAX + 16];
		snprintf(want, sizeof(want), "%s%s", m->path, m->deleted ? " (deleted)" : "");
		assert_string_equal(target, want);
		linked++;
	}
	assert_true(linked > 3);
	free(c.maps);
}

static void procmaps__self__file_backed_fields_match_kernel_text(void **state)
{
	struct collected c;
	collect_self(&c);
	/* the kernel's own formatting, through awk, of the mappings that are backed by files: those do
	 * not move while the test runs, unlike the heap */
	char *oracle = malloc(1 << 16);
	assert_non_null(oracle);
	assert_int_equal(bt_test_run(oracle, 1 << 16,
				     "awk '$5 != 0 { print $1, $2, $3, $4, $5 }' /proc/%d/maps", (int)getpid()),
			 0);
	char *mine = malloc(1 << 16);
	assert_non_null(mine);
	size_t used = 0;
	for (size_t i = 0; i < c.n; i++) {
		const struct bt_procmap *m = &c.maps[i];
		if (!m->ino)
			continue;
		used += (size_t)snprintf(mine + used, (1 << 16) - used,
					 "%" PRIx64 "-%" PRIx64 " %s %08" PRIx64 " %02x:%02x %" PRIu64 "\n",
					 m->start, m->end, m->perms, m->offset, m->dev_major, m->dev_minor,
					 m->ino);
		assert_true(used < (1 << 16));
	}
	assert_true(used > 0);
	assert_string_equal(mine, oracle);
	free(mine);
	free(oracle);
	free(c.maps);
}

static void procmaps__open_mapped__fd_is_the_file_by_dev_and_inode(void **state)
{
	struct collected c;
	collect_self(&c);
	size_t checked = 0;
	for (size_t i = 0; i < c.n; i++) {
		const struct bt_procmap *m = &c.maps[i];
		if (m->path[0] != '/')
			continue;
		int fd = bt_procmaps_open_mapped("", getpid(), m->start, m->end);
		assert_true(fd >= 0);
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_ino, m->ino);
		assert_int_equal(major(st.st_dev), m->dev_major);
		assert_int_equal(minor(st.st_dev), m->dev_minor);
		int fl = fcntl(fd, F_GETFD);
		assert_true(fl >= 0 && (fl & FD_CLOEXEC));
		close(fd);
		checked++;
	}
	assert_true(checked > 3);
	free(c.maps);
}

static void procmaps__open_mapped__not_a_mapping_boundary__enoent(void **state)
{
	struct collected c;
	collect_self(&c);
	for (size_t i = 0; i < c.n; i++) {
		const struct bt_procmap *m = &c.maps[i];
		if (m->path[0] != '/' || m->end - m->start < 0x2000)
			continue;
		assert_int_equal(bt_procmaps_open_mapped("", getpid(), m->start, m->end - 0x1000), -ENOENT);
		assert_int_equal(bt_procmaps_open_mapped("", getpid(), m->start + 0x1000, m->end), -ENOENT);
		free(c.maps);
		return;
	}
	fail_msg("no file mapping of two pages or more");
}

struct stopper {
	int seen, stop_at;
};

static int stop_early(void *ctx, const struct bt_procmap *m)
{
	struct stopper *s = ctx;
	return ++s->seen == s->stop_at ? 4242 : 0;
}

static void procmaps__callback_nonzero__stops_and_is_returned(void **state)
{
	struct stopper s = { 0, 3 };
	assert_int_equal(bt_procmaps_foreach("", getpid(), stop_early, &s), 4242);
	assert_int_equal(s.seen, 3);
}

static void procmaps__reaped_process__esrch(void **state)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	struct collected c = { 0 };
	assert_int_equal(bt_procmaps_foreach("", pid, collect, &c), -ESRCH);
	assert_int_equal(c.n, 0);
	assert_int_equal(bt_procmaps_foreach("", -1, collect, &c), -EINVAL);
}

static void make_fake_root(char *dir, const char *maps);

/* This process's vDSO, copied: its bounds as /proc/self/maps shows them, and the very bytes mapped
 * there (the image getauxval(AT_SYSINFO_EHDR) points at). */
static void procmaps__vdso__copy_of_the_mapped_image(void **state)
{
	uint64_t start = 0, end = 0;
	int fd = bt_procmaps_open_vdso("", getpid(), &start, &end);
	assert_true(fd >= 0);
	assert_int_equal(start, getauxval(AT_SYSINFO_EHDR));
	assert_true(end > start && end - start <= BT_VDSO_MAX);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal((uint64_t)st.st_size, end - start);
	char *copy = malloc(end - start);
	assert_non_null(copy);
	assert_int_equal(pread(fd, copy, end - start, 0), (ssize_t)(end - start));
	assert_memory_equal(copy, (const void *)(uintptr_t)start, end - start);
	/* sealed: the copy cannot be changed through the descriptor */
	assert_true(pwrite(fd, "x", 1, 0) < 0);
	free(copy);
	close(fd);
}

/* No [vdso] line: -ENOENT; a process that is gone: -ESRCH. */
static void procmaps__vdso__absent_or_gone(void **state)
{
	char dir[] = "/tmp/bt_procmaps_XXXXXX";
	uint64_t start, end;
	make_fake_root(dir, "1000-2000 r-xp 00000000 08:01 7 /bin/x\n");
	assert_int_equal(bt_procmaps_open_vdso(dir, 4242, &start, &end), -ENOENT);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(bt_procmaps_open_vdso("", pid, &start, &end), -ESRCH);
}

/* A directory standing in for a root, with proc/4242/maps and proc/4242/map_files entries. */
static void make_fake_root(char *dir, const char *maps)
{
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/proc/4242/map_files", dir);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s", path), 0);
	snprintf(path, sizeof(path), "%s/proc/4242/maps", dir);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs(maps, f);
	assert_int_equal(fclose(f), 0);
}

static void procmaps__fake_root__lines_parsed_in_order(void **state)
{
	char dir[] = "/tmp/bt_procmaps_XXXXXX";
	make_fake_root(dir, "1000-2000 r-xp 00000000 08:01 7 /bin/with space\n"
			    "3000-4000 rw-p 00000000 00:00 0 \n"
			    "5000-6000 r--p 00001000 08:01 8 /lib/x.so (deleted)");
	struct collected c = { 0 };
	assert_int_equal(bt_procmaps_foreach(dir, 4242, collect, &c), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.maps[0].path, "/bin/with space");
	assert_string_equal(c.maps[1].path, "");
	assert_string_equal(c.maps[2].path, "/lib/x.so");
	assert_true(c.maps[2].deleted);
	assert_int_equal(c.maps[2].offset, 0x1000);
	free(c.maps);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

static void procmaps__fake_root_garbage__einval_after_good_lines(void **state)
{
	char dir[] = "/tmp/bt_procmaps_XXXXXX";
	make_fake_root(dir, "1000-2000 r-xp 00000000 08:01 7 /bin/ok\nthis is not a maps line\n"
			    "3000-4000 rw-p 00000000 00:00 0\n");
	struct collected c = { 0 };
	assert_int_equal(bt_procmaps_foreach(dir, 4242, collect, &c), -EINVAL);
	assert_int_equal(c.n, 1);
	free(c.maps);
	/* an embedded NUL must not let the rest of a line pass unseen */
	char path[256];
	snprintf(path, sizeof(path), "%s/proc/4242/maps", dir);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fwrite("1000-2000 r-xp 00000000 08:01 7 /bin/ok\0junk\n", 1, 46, f);
	fclose(f);
	memset(&c, 0, sizeof(c));
	assert_int_equal(bt_procmaps_foreach(dir, 4242, collect, &c), -EINVAL);
	free(c.maps);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

static void procmaps__open_mapped__non_regular_targets_refused(void **state)
{
	char dir[] = "/tmp/bt_procmaps_XXXXXX";
	make_fake_root(dir, "");
	assert_int_equal(bt_test_run(NULL, 0,
				     "cd %s && mkfifo fifo && mkdir adir && echo data > file && "
				     "ln -s %s/fifo proc/4242/map_files/1000-2000 && "
				     "ln -s %s/adir proc/4242/map_files/3000-4000 && "
				     "ln -s %s/file proc/4242/map_files/5000-6000 && "
				     "ln -s /dev/null proc/4242/map_files/7000-8000",
				     dir, dir, dir, dir),
			 0);
	assert_int_equal(bt_procmaps_open_mapped(dir, 4242, 0x1000, 0x2000), -EINVAL);
	assert_int_equal(bt_procmaps_open_mapped(dir, 4242, 0x3000, 0x4000), -EINVAL);
	assert_int_equal(bt_procmaps_open_mapped(dir, 4242, 0x7000, 0x8000), -EINVAL);
	assert_int_equal(bt_procmaps_open_mapped(dir, 4242, 0x9000, 0xa000), -ENOENT);
	int fd = bt_procmaps_open_mapped(dir, 4242, 0x5000, 0x6000);
	assert_true(fd >= 0);
	char buf[8] = { 0 };
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 5);
	assert_string_equal(buf, "data\n");
	close(fd);
	bt_test_run(NULL, 0, "rm -rf %s", dir);
}

/* ---- build-ids through map_files ---------------------------------------------------------------- */

static int find_libc(void *ctx, const struct bt_procmap *m)
{
	const char *base = strrchr(m->path, '/');
	if (base && strncmp(base + 1, "libc", 4) == 0 && strstr(base, ".so") &&
	    (base[5] == '.' || base[5] == '-')) {
		*(struct bt_procmap *)ctx = *m;
		return 1;
	}
	return 0;
}

static void oracle_build_id(const char *path, char *hex, size_t len)
{
	assert_int_equal(bt_test_run(hex, len, "readelf -n '%s' | awk '/Build ID:/ { print $3; exit }'",
				     path),
			 0);
	hex[strcspn(hex, "\n")] = '\0';
	assert_true(strlen(hex) >= 16);
}

static void procmaps__buildid_of_libc_mapping__matches_readelf(void **state)
{
	static struct bt_procmap libc;
	assert_int_equal(bt_procmaps_foreach("", getpid(), find_libc, &libc), 1);
	char want[160], got[2 * BT_BUILD_ID_MAXLEN + 1];
	oracle_build_id(libc.path, want, sizeof(want));
	struct bt_build_id id;
	assert_int_equal(bt_procmaps_buildid("", getpid(), libc.start, libc.end, &id), 0);
	assert_string_equal(bt_buildid_hex(&id, got, sizeof(got)), want);
}

struct find_range {
	uint64_t start;
	struct bt_procmap found;
	int hit;
};

static int find_start(void *ctx, const struct bt_procmap *m)
{
	struct find_range *f = ctx;
	if (m->start == f->start) {
		f->found = *m;
		f->hit = 1;
		return 1;
	}
	return 0;
}

static void procmaps__deleted_mapped_copy__still_has_its_buildid(void **state)
{
	static struct bt_procmap libc;
	assert_int_equal(bt_procmaps_foreach("", getpid(), find_libc, &libc), 1);
	char want[160], got[2 * BT_BUILD_ID_MAXLEN + 1];
	oracle_build_id(libc.path, want, sizeof(want));

	char copy[] = "/tmp/bt_procmaps_lib_XXXXXX";
	int fd = mkstemp(copy);
	assert_true(fd >= 0);
	assert_int_equal(bt_test_run(NULL, 0, "cp '%s' %s", libc.path, copy), 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);
	assert_int_equal(unlink(copy), 0);

	static struct find_range f;
	f.start = (uint64_t)(uintptr_t)p;
	assert_int_equal(bt_procmaps_foreach("", getpid(), find_start, &f), 1);
	assert_true(f.found.deleted);
	assert_string_equal(f.found.path, copy);
	struct bt_build_id id;
	assert_int_equal(bt_procmaps_buildid("", getpid(), f.found.start, f.found.end, &id), 0);
	assert_string_equal(bt_buildid_hex(&id, got, sizeof(got)), want);
	munmap(p, (size_t)st.st_size);
}

/* A process's root stood in for by ROOT/proc/4242/root: a library inside it, an absolute symlink
 * and a ".." path that would lead to the host's files if followed from our root, a FIFO and a
 * directory. */
static void procmaps__open_in_root__stays_inside_the_process_root(void **state)
{
	char dir[] = "/tmp/bt_procroot_XXXXXX";
	make_fake_root(dir, "");
	char r[256], path[512];
	snprintf(r, sizeof(r), "%s/proc/4242/root", dir);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/usr/lib %s/etc && printf inside > %s/usr/lib/libx.so "
				     "&& printf container > %s/etc/hostname && ln -s /etc/hostname %s/usr/lib/abs "
				     "&& ln -s ../../../../../../../../etc/hostname %s/usr/lib/rel && mkfifo %s/usr/lib/fifo",
				     r, r, r, r, r, r, r), 0);
	char buf[64];
	int fd = bt_procmaps_open_in_root(dir, 4242, "/usr/lib/libx.so");
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	assert_int_equal(n, 6);
	close(fd);
	/* absolute and relative symlinks, and "..", all resolve inside the root */
	static const char *const escapes[] = { "/usr/lib/abs", "/usr/lib/rel", "/../../../../etc/hostname" };
	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		fd = bt_procmaps_open_in_root(dir, 4242, escapes[i]);
		assert_true(fd >= 0);
		n = read(fd, buf, sizeof(buf) - 1);
		assert_true(n >= 0);
		buf[n] = '\0';
		assert_string_equal(buf, "container");
		close(fd);
	}
	/* not regular files; a relative path; no such process */
	assert_int_equal(bt_procmaps_open_in_root(dir, 4242, "/usr/lib/fifo"), -EINVAL);
	assert_int_equal(bt_procmaps_open_in_root(dir, 4242, "/usr/lib"), -EINVAL);
	assert_int_equal(bt_procmaps_open_in_root(dir, 4242, "usr/lib/libx.so"), -EINVAL);
	assert_int_equal(bt_procmaps_open_in_root(dir, 4242, "/usr/lib/none.so"), -ENOENT);
	assert_int_equal(bt_procmaps_open_in_root(dir, 4243, "/usr/lib/libx.so"), -ESRCH);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(bt_test_run(NULL, 0, "%s", path), 0);
}

/* Through the real /proc: our own root is "/", so a path opens our file. */
static void procmaps__open_in_root__self_is_our_root(void **state)
{
	int fd = bt_procmaps_open_in_root("", getpid(), "/proc/self/exe");
	/* a magic link is refused under RESOLVE_NO_MAGICLINKS */
	assert_true(fd < 0);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	fd = bt_procmaps_open_in_root("", getpid(), exe);
	assert_true(fd >= 0);
	struct stat a, b;
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(exe, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(procmaps__vdso__copy_of_the_mapped_image),
		cmocka_unit_test(procmaps__vdso__absent_or_gone),
		cmocka_unit_test(procmap__file_line__all_fields),
		cmocka_unit_test(procmap__path_with_spaces__kept_whole),
		cmocka_unit_test(procmap__deleted_suffix__stripped_and_flagged),
		cmocka_unit_test(procmap__pseudo_paths__kept_as_shown),
		cmocka_unit_test(procmap__anonymous__empty_path),
		cmocka_unit_test(procmap__garbage_lines__einval),
		cmocka_unit_test(procmap__path_length__limit_is_the_buffer),
		cmocka_unit_test(procmaps__self__paths_match_map_files_readlink),
		cmocka_unit_test(procmaps__self__file_backed_fields_match_kernel_text),
		cmocka_unit_test(procmaps__open_mapped__fd_is_the_file_by_dev_and_inode),
		cmocka_unit_test(procmaps__open_mapped__not_a_mapping_boundary__enoent),
		cmocka_unit_test(procmaps__callback_nonzero__stops_and_is_returned),
		cmocka_unit_test(procmaps__reaped_process__esrch),
		cmocka_unit_test(procmaps__open_in_root__stays_inside_the_process_root),
		cmocka_unit_test(procmaps__open_in_root__self_is_our_root),
		cmocka_unit_test(procmaps__fake_root__lines_parsed_in_order),
		cmocka_unit_test(procmaps__fake_root_garbage__einval_after_good_lines),
		cmocka_unit_test(procmaps__open_mapped__non_regular_targets_refused),
		cmocka_unit_test(procmaps__buildid_of_libc_mapping__matches_readelf),
		cmocka_unit_test(procmaps__deleted_mapped_copy__still_has_its_buildid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
