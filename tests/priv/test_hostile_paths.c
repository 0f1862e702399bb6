/* test_hostile_paths.c - files planted by another user (nobody) where buildtrace, as root, looks
 * for debug files and for a process's libraries: a debuglink that is a symlink to a FIFO whose
 * writer is blocked, a FIFO itself, a directory symlink leading to a device node, symlinks leading
 * out of a process's root. Nothing but a regular file in the intended place is ever opened: the
 * FIFO's writer stays blocked in its open, inotify sees no open of the FIFO or the device. And a
 * profiled program whose DWARF string section lost its final NUL: no lines for it, counted. */
#include "testutil.h"
#include "elf/buildid.h"
#include "session/dso.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define AS_NOBODY "setpriv --reuid=nobody --regid=nogroup --clear-groups "

/* A directory under /tmp that nobody owns (root may still read it). */
static void nobody_dir(char *dir)
{
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bt_test_run(NULL, 0, "chmod 0755 %s && chown nobody:nogroup %s", dir, dir), 0);
}

/* Runs sh -c cmd as nobody in dir: the shell's status. cmd holds no single quote. */
static int as_nobody(const char *dir, const char *cmd)
{
	return bt_test_run(NULL, 0, AS_NOBODY "sh -c 'cd %s && %s'", dir, cmd);
}

/* The system call a process is blocked in (/proc/PID/syscall), or -1. */
static long blocked_in(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long nr = fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
	fclose(f);
	return nr;
}

/* A process of nobody's opening fifo for writing: it blocks in open() until someone opens the FIFO
 * for reading. Returns once it is blocked there. */
static pid_t blocked_writer(const char *fifo)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "exec " AS_NOBODY "sh -c 'exec 3> %s'", fifo);
	pid_t w = bt_test_spawn(cmd);
	assert_true(w > 0);
	while (blocked_in(w) != SYS_openat)
		assert_int_equal(waitpid(w, NULL, WNOHANG), 0);
	return w;
}

/* The writer is still in its open(): nothing opened the FIFO for reading. Then released (by our
 * own open, which shows the oracle sees a real one) and reaped. */
static void assert_still_blocked_then_release(pid_t w, const char *fifo)
{
	assert_int_equal(waitpid(w, NULL, WNOHANG), 0);
	assert_int_equal(blocked_in(w), SYS_openat);
	int fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd >= 0);
	int status;
	assert_int_equal(waitpid(w, &status, 0), w);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
}

static int watch_opens(const char *path)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(inotify_add_watch(fd, path, IN_OPEN) >= 0);
	return fd;
}

/* IN_OPEN events queued so far: the kernel queues them within the open call itself. */
static int opens_seen(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int n = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + r; p += sizeof(struct inotify_event) +
							 ((struct inotify_event *)(void *)p)->len)
			n += (((struct inotify_event *)(void *)p)->mask & IN_OPEN) != 0;
	assert_true(r < 0 && errno == EAGAIN);
	return n;
}

/* symbolize -v of fx_caller's address in dir/prog, a stripped program: 1 when it is named (its
 * debug file was used), else 0 (the program's own PLT names at most); err receives standard error. */
static int symbolize_prog(const char *dir, char *err, size_t errlen)
{
	char fx[256], addr[64], out[256];
	bt_test_fixture(fx, sizeof(fx), "symsrc/inl");
	assert_int_equal(bt_test_run(addr, sizeof(addr), "nm %s | awk '$3 == \"fx_caller\" { printf $1 }'", fx), 0);
	assert_int_equal(bt_test_run(err, errlen, "./buildtrace symbolize -v --no-debuginfod --cache-dir "
				     "/nonexistent --elf %s/prog %s 2>&1 >%s/sym.out", dir, addr, dir), 0);
	bt_test_run(out, sizeof(out), "cat %s/sym.out", dir);
	return strstr(out, "fx_caller") != NULL;
}

/* nobody's program names its debug file "hostile" (.gnu_debuglink, CRC of the real one), then
 * plants under that name next to it a symlink to a FIFO, then the FIFO itself, each with a writer
 * blocked on it, and makes its .debug/ a symlink to a directory with a device node called "hostile".
 * Then, as controls, a symlink to the real debug file (refused: not a link) and the file itself. */
static void hostile__debuglink_fifo_device_symlink__never_opened(void **state)
{
	bt_test_require_priv();  /* setpriv, mknod */
	char dir[] = "/tmp/bt-hostile-XXXXXX", devdir[] = "/tmp/bt-hostile-dev-XXXXXX";
	char stripped[256], debug[256], fifo[128], node[128], err[4096];
	nobody_dir(dir);
	assert_non_null(mkdtemp(devdir));
	assert_int_equal(chmod(devdir, 0755), 0);
	snprintf(node, sizeof(node), "%s/hostile", devdir);
	assert_int_equal(mknod(node, S_IFCHR | 0600, makedev(1, 3)), 0);
	bt_test_fixture(stripped, sizeof(stripped), "symsrc/inl.stripped");
	bt_test_fixture(debug, sizeof(debug), "symsrc/inl.debug");
	assert_int_equal(bt_test_run(NULL, 0, "cp %s %s/stripped && cp %s %s/real.debug && chown nobody "
				     "%s/stripped %s/real.debug", stripped, dir, debug, dir, dir, dir), 0);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section=.gnu_debuglink stripped nolink && "
		 "cp real.debug hostile && objcopy --add-gnu-debuglink=hostile nolink prog && rm hostile nolink "
		 "&& mkfifo fifo && ln -s fifo hostile && ln -s %s .debug", devdir);
	assert_int_equal(as_nobody(dir, cmd), 0);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	int in_fifo = watch_opens(fifo), in_node = watch_opens(node);

	/* a symlink to the FIFO, and .debug/hostile a device */
	pid_t w = blocked_writer(fifo);
	assert_int_equal(symbolize_prog(dir, err, sizeof(err)), 0);
	assert_non_null(strstr(err, ": dynsym\n"));
	assert_int_equal(opens_seen(in_fifo), 0);
	assert_int_equal(opens_seen(in_node), 0);
	assert_still_blocked_then_release(w, fifo);
	assert_int_equal(opens_seen(in_fifo), 1);

	/* the FIFO itself under the debuglink's name */
	assert_int_equal(as_nobody(dir, "rm hostile && mv fifo hostile && ln -s hostile fifo"), 0);
	w = blocked_writer(fifo);
	assert_int_equal(symbolize_prog(dir, err, sizeof(err)), 0);
	assert_int_equal(opens_seen(in_fifo), 0);
	assert_int_equal(opens_seen(in_node), 0);
	assert_still_blocked_then_release(w, fifo);

	/* a symlink to the right debug file: still a link, refused */
	assert_int_equal(as_nobody(dir, "rm hostile fifo .debug && ln -s real.debug hostile"), 0);
	assert_int_equal(symbolize_prog(dir, err, sizeof(err)), 0);
	assert_null(strstr(err, ": debuglink"));
	/* the file itself: used, so the lookups above did reach these names */
	assert_int_equal(as_nobody(dir, "rm hostile && cp real.debug hostile"), 0);
	assert_int_equal(symbolize_prog(dir, err, sizeof(err)), 1);
	assert_non_null(strstr(err, ": debuglink\n"));
	close(in_fifo);
	close(in_node);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s %s", dir, devdir), 0);
}

/* nobody's program names as its debug file a copy of the real one with 20 GiB of hole after it:
 * symbolize gives up on it from its size and headers, having read a few megabytes at most
 * (every read system call counted by strace), not the 20 GiB its CRC would take; the program's
 * own names are still given. */
static void hostile__debuglink_to_sparse_20g__not_read(void **state)
{
	bt_test_require_priv();  /* setpriv */
	char dir[] = "/tmp/bt-hostile-XXXXXX", stripped[256], debug[256], err[4096], out[256];
	nobody_dir(dir);
	bt_test_fixture(stripped, sizeof(stripped), "symsrc/inl.stripped");
	bt_test_fixture(debug, sizeof(debug), "symsrc/inl.debug");
	assert_int_equal(bt_test_run(NULL, 0, "cp %s %s/stripped && cp %s %s/real.debug && chown nobody %s/stripped "
				     "%s/real.debug", stripped, dir, debug, dir, dir, dir), 0);
	assert_int_equal(as_nobody(dir, "objcopy --remove-section=.gnu_debuglink stripped nolink && cp real.debug "
				   "big.debug && objcopy --add-gnu-debuglink=big.debug nolink prog && rm nolink && "
				   "truncate -s 20G big.debug"), 0);
	char fx[256], addr[64];
	bt_test_fixture(fx, sizeof(fx), "symsrc/inl");
	assert_int_equal(bt_test_run(addr, sizeof(addr), "nm %s | awk '$3 == \"fx_caller\" { printf $1 }'", fx), 0);
	assert_int_equal(bt_test_run(err, sizeof(err), "strace -f -qq -e trace=read,pread64 -o %s/reads ./buildtrace "
				     "symbolize -v --no-debuginfod --cache-dir /nonexistent --elf %s/prog %s 2>&1 "
				     ">%s/sym.out", dir, dir, addr, dir), 0);
	print_message("%s", err);
	assert_non_null(strstr(err, ": dynsym\n"));
	assert_int_equal(bt_test_run(out, sizeof(out), "awk -F' = ' '$2 ~ /^[0-9]+$/ { n += $2 } END { printf \"%%d\", n }' "
				     "%s/reads", dir), 0);
	print_message("bytes read: %s\n", out);
	assert_true(atoll(out) > 0);
	assert_true(atoll(out) < (64LL << 20));
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s", dir), 0);
}

/* What `symbolize --pid` names 0x1010 of nobody's process started by cmd (a shell as nobody, which
 * writes or plants its map at /tmp/perf-$$.map and then execs sleep) from a perf map, once the map
 * is in place; its map removed afterwards. */
static void symbolize_nobody_map(const char *cmd, char *out, size_t len)
{
	char full[1024], map[64];
	snprintf(full, sizeof(full), "exec " AS_NOBODY "%s", cmd);
	pid_t p = bt_test_spawn_group(full);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)p);
	/* sleep is running once its name is the process's */
	char comm[64] = "";
	while (strcmp(comm, "sleep\n") != 0) {
		assert_int_equal(waitpid(p, NULL, WNOHANG), 0);
		bt_test_run(comm, sizeof(comm), "cat /proc/%d/comm 2>/dev/null", (int)p);
	}
	assert_int_equal(bt_test_run(out, len, "./buildtrace symbolize --pid %d 0x1010 2>&1", (int)p), 0);
	kill(-p, SIGKILL);
	waitpid(p, NULL, 0);
	unlink(map);
}

/* nobody's process names its perf map, and makes it a link to a root-only map, or (in a user and
 * mount namespace of its own) bind-mounts that root-only file over its map: its names are not read,
 * the root-only file is never opened. Its own map is read (the control). */
static void hostile__perf_map_link_or_bind_mount_to_root_file__not_read(void **state)
{
	bt_test_require_priv();  /* setpriv */
	char dir[] = "/tmp/bt-hostile-map-XXXXXX", secret[128], cmd[512], out[1024];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(secret, sizeof(secret), "%s/secret.map", dir);
	assert_int_equal(bt_test_run(NULL, 0, "printf '1000 100 root_secret_name\\n' > %s && chmod 0600 %s", secret,
				     secret), 0);
	int in_secret = watch_opens(secret);

	symbolize_nobody_map("sh -c 'printf \"1000 100 own_name\\n\" > /tmp/perf-$$.map; exec sleep 60'", out,
			     sizeof(out));
	assert_non_null(strstr(out, "own_name+0x10"));

	snprintf(cmd, sizeof(cmd), "sh -c 'ln -s %s /tmp/perf-$$.map; exec sleep 60'", secret);
	symbolize_nobody_map(cmd, out, sizeof(out));
	print_message("link: %s", out);
	assert_null(strstr(out, "root_secret_name"));

	snprintf(cmd, sizeof(cmd), "unshare -Urm sh -c 'touch /tmp/perf-$$.map && mount --bind %s /tmp/perf-$$.map "
		 "&& exec sleep 60'", secret);
	symbolize_nobody_map(cmd, out, sizeof(out));
	print_message("bind mount: %s", out);
	assert_null(strstr(out, "root_secret_name"));
	assert_int_equal(opens_seen(in_secret), 0);
	close(in_secret);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s", dir), 0);
}

/* A process in a root of its own, which nobody fills: its library path is a symlink (absolute, or
 * relative with enough "..") to a root-only file outside that root with the very build-id wanted,
 * or a FIFO with a blocked writer. Opened inside the root, none of them gives a file. */
static void hostile__symlinks_out_of_the_process_root__not_followed(void **state)
{
	bt_test_require_priv();  /* chroot, setpriv */
	char root[] = "/tmp/bt-hostile-root-XXXXXX", host[] = "/tmp/bt-hostile-host-XXXXXX";
	char fx[256], secret[128], fifo[160], cmd[1024];
	nobody_dir(root);
	assert_non_null(mkdtemp(host));  /* 0700, root's */
	bt_test_fixture(fx, sizeof(fx), "libfx.so");
	snprintf(secret, sizeof(secret), "%s/secret.so", host);
	assert_int_equal(bt_test_run(NULL, 0, "cp %s %s && chmod 0600 %s", fx, secret, secret), 0);
	struct bt_build_id want;
	assert_int_equal(bt_buildid_from_path(secret, &want), 0);
	snprintf(cmd, sizeof(cmd), "mkdir lib && ln -s %s lib/abs.so && ln -s ../../../../../../../..%s "
		 "lib/rel.so && mkfifo lib/fifo.so && cat > lib/good.so", secret, secret);
	assert_int_equal(bt_test_run(NULL, 0, AS_NOBODY "sh -c 'cd %s && %s' < %s", root, cmd, fx), 0);
	snprintf(fifo, sizeof(fifo), "%s/lib/fifo.so", root);
	int in_fifo = watch_opens(fifo), in_secret = watch_opens(secret);
	pid_t w = blocked_writer(fifo);

	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		if (chroot(root) != 0 || chdir("/") != 0 || setresgid(65534, 65534, 65534) != 0 ||
		    setresuid(65534, 65534, 65534) != 0 || write(pfd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	char c;
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);

	struct bt_symsrc_opts so = { .cache_dir = "/nonexistent" };
	struct bt_dso_registry r;
	bt_dso_registry_init(&r, "", &so, false);
	/* the last, a copy of the library inside the root, is the control: it is opened */
	static const char *const paths[] = { "/lib/abs.so", "/lib/rel.so", "/lib/fifo.so", "/lib/good.so" };
	bool opened[4];
	for (size_t i = 0; i < 4; i++) {
		int64_t fid = bt_dso_file(&r, makedev(0, 99), 1000 + i, 0, paths[i]);
		assert_true(fid >= 0);
		int64_t did = bt_dso_set_build_id(&r, (uint32_t)fid, &want, BT_ORIGIN_BPF,
						  &(struct bt_dso_mapping){ .pid = pid });
		assert_true(did >= 0);
		opened[i] = bt_dso_get(&r, (uint32_t)did)->fd >= 0;
	}
	bt_dso_registry_free(&r);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_false(opened[0] || opened[1] || opened[2]);
	assert_true(opened[3]);
	assert_int_equal(opens_seen(in_secret), 0);
	assert_int_equal(opens_seen(in_fifo), 0);
	assert_still_blocked_then_release(w, fifo);
	close(in_fifo);
	close(in_secret);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s %s", root, host), 0);
}

/* Root whose HOME is another user's (sudo -E, an agent's environment): libdebuginfod would open,
 * create and delete files in that user's ~/.cache by path. It is not used, a message says why, and
 * nothing is created there. */
static void hostile__debuginfod_cache_in_another_users_home__not_used(void **state)
{
	bt_test_require_priv();  /* chown */
	char home[] = "/tmp/bt-hostile-home-XXXXXX", bin[] = "/tmp/bt-hostile-bin-XXXXXX";
	char fx[256], addr[64], out[4096], want[256];
	nobody_dir(home);
	assert_non_null(mkdtemp(bin));
	bt_test_fixture(fx, sizeof(fx), "symsrc/inl");
	assert_int_equal(bt_test_run(addr, sizeof(addr), "nm %s | awk '$3 == \"fx_caller\" { printf $1 }'", fx), 0);
	bt_test_fixture(fx, sizeof(fx), "symsrc/inl.stripped");
	/* a stripped file whose debug file is nowhere: only debuginfod could name its functions */
	assert_int_equal(bt_test_run(NULL, 0, "cp %s %s/prog", fx, bin), 0);
	int rc = bt_test_run(out, sizeof(out), "env -u DEBUGINFOD_CACHE_PATH -u XDG_CACHE_HOME HOME=%s "
			     "DEBUGINFOD_URLS=http://127.0.0.1:1 ./buildtrace symbolize --cache-dir /nonexistent "
			     "--elf %s/prog %s 2>&1 >%s/sym.out", home, bin, addr, bin);
	assert_int_equal(rc, 0);
	/* not named: only a debug file, which debuginfod alone could give, has the function */
	assert_int_equal(bt_test_run(NULL, 0, "grep -qF '?""?' %s/sym.out && ! grep -q fx_caller %s/sym.out", bin,
				     bin), 0);
	snprintf(want, sizeof(want), "buildtrace: debuginfod not used: its cache is not safe, %s belongs to uid "
		 "65534 (set DEBUGINFOD_CACHE_PATH to a directory only you can change)\n", home);
	assert_non_null(strstr(out, want));
	assert_int_equal(bt_test_run(out, sizeof(out), "find %s -mindepth 1", home), 0);
	assert_string_equal(out, "");
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s %s", home, bin), 0);
}

/* CPU seconds process pid has used; it must still be there. */
static double proc_cpu_secs(pid_t pid)
{
	double s = bt_test_proc_cpu(pid);
	assert_true(s >= 0);
	return s;
}

/* record --lines of a program whose .debug_line_str lost its final NUL: its functions are named,
 * it gets no lines, and the summary counts it. */
static void hostile__dwarf_strings_without_nul__record_counts_no_lines(void **state)
{
	bt_test_require_priv();
	char dir[] = "/tmp/bt-hostile-dwarf-XXXXXX", fx[256], out[4096], cmd[1024], err[128];
	assert_non_null(mkdtemp(dir));
	bt_test_fixture(fx, sizeof(fx), "symsrc/inl");
	assert_int_equal(bt_test_run(out, sizeof(out), "cp %s %s/prog && readelf -SW %s/prog | awk '{ for (i = 1; "
				     "i < NF; i++) if ($i == \".debug_line_str\") print $(i+3), $(i+4) }'", fx, dir,
				     dir), 0);
	unsigned long long off, size;
	assert_int_equal(sscanf(out, "%llx %llx", &off, &size), 2);
	assert_int_equal(bt_test_run(NULL, 0, "printf A | dd of=%s/prog bs=1 seek=%llu conv=notrunc 2>/dev/null",
				     dir, off + size - 1), 0);
	snprintf(cmd, sizeof(cmd), "exec %s/prog 1 3600 > /dev/null", dir);
	pid_t w = bt_test_spawn(cmd);
	snprintf(err, sizeof(err), "%s/err", dir);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace -p %d -v -F 199 --lines --no-cache --no-debuginfod -f json "
		 "-o %s/out.json 2> %s", (int)w, dir, err);
	pid_t bt = bt_test_spawn(cmd);
	assert_true(bt_test_wait_for_text(err, "sampling at", bt));
	/* a quarter second of the program's CPU time sampled, however long that takes */
	double until = proc_cpu_secs(w) + 0.25;
	while (proc_cpu_secs(w) < until)
		usleep(20000);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	int st;
	assert_int_equal(waitpid(bt, &st, 0), bt);
	bt_test_run(out, sizeof(out), "cat %s", err);
	print_message("%s", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_non_null(strstr(out, ", 1 files without lines: their DWARF strings lack a final NUL (corrupt)"));
	/* named from the symbol table; no frame of prog has a line */
	assert_int_equal(bt_test_run(out, sizeof(out), "/usr/bin/python3 -c \"import json; d = json.load(open('%s/"
				     "out.json')); fs = [f for f in d['frames'] if f.get('name', '').startswith('fx_')]; "
				     "print(len(fs), sum(1 for f in fs if f.get('lines')))\"", dir), 0);
	int named, with_lines;
	assert_int_equal(sscanf(out, "%d %d", &named, &with_lines), 2);
	assert_true(named >= 1);
	assert_int_equal(with_lines, 0);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s", dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostile__debuglink_fifo_device_symlink__never_opened),
		cmocka_unit_test(hostile__debuglink_to_sparse_20g__not_read),
		cmocka_unit_test(hostile__perf_map_link_or_bind_mount_to_root_file__not_read),
		cmocka_unit_test(hostile__symlinks_out_of_the_process_root__not_followed),
		cmocka_unit_test(hostile__debuginfod_cache_in_another_users_home__not_used),
		cmocka_unit_test(hostile__dwarf_strings_without_nul__record_counts_no_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
