/* test_procmeta.c - what /proc says of a process: under a made-up root (every field, the command
 * line's NULs, the cgroup2 line among v1 ones, the environment read only when its file belongs to the
 * process's effective uid, a process gone) and for a real child against its own /proc files. */
#include "testutil.h"
#include "kernel/procmeta.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void put_file(const char *dir, const char *name, const char *data, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void make_proc(const char *root, int pid, unsigned euid)
{
	char dir[512], status[256];
	snprintf(dir, sizeof(dir), "%s/proc/%d", root, pid);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s && ln -sf /usr/bin/made-up %s/exe", dir, dir), 0);
	snprintf(status, sizeof(status), "Name:\tweb\nUmask:\t0022\nState:\tR\nUid:\t%u\t%u\t%u\t%u\n", 1234u, euid, euid, euid);
	put_file(dir, "status", status, strlen(status));
	put_file(dir, "comm", "web-worker\n", 11);
	put_file(dir, "cmdline", "/usr/bin/web\0--port\0\08080\0", 26);
	const char cg[] = "12:cpu,cpuacct:/v1/path\n1:name=systemd:/system.slice/web.service\n0::/system.slice/web.service\n";
	put_file(dir, "cgroup", cg, strlen(cg));
	const char env[] = "HOME=/root\0OTEL_SERVICE_NAME=checkout\0NOT_OTEL_SERVICE_NAME=x\0SECRET=hunter2\0EMPTY=\0";
	put_file(dir, "environ", env, sizeof(env) - 1);
}

static void procmeta__fake_root__fields(void **state)
{
	char root[] = "/tmp/bt-procmeta-XXXXXX";
	assert_non_null(mkdtemp(root));
	make_proc(root, 42, (unsigned)geteuid());
	make_proc(root, 43, (unsigned)geteuid() + 1);
	static const char *const names[] = { "OTEL_SERVICE_NAME", "EMPTY", "MISSING" };
	struct bt_procmeta m;
	assert_int_equal(bt_procmeta_read(root, 42, names, 3, &m), 0);
	assert_int_equal(m.pid, 42);
	assert_string_equal(m.comm, "web-worker");
	assert_string_equal(m.exe, "/usr/bin/made-up");
	assert_string_equal(m.cmdline, "/usr/bin/web --port  8080");
	assert_string_equal(m.cgroup, "/system.slice/web.service");
	assert_int_equal(m.uid, 1234);
	assert_true(m.env_read);
	assert_string_equal(m.env[0], "checkout");
	assert_string_equal(m.env[1], "");
	assert_null(m.env[2]);
	bt_procmeta_free(&m);
	/* its /proc files belong to another uid than the one it runs as: not dumpable, no environment */
	assert_int_equal(bt_procmeta_read(root, 43, names, 3, &m), 0);
	assert_false(m.env_read);
	assert_null(m.env[0]);
	assert_string_equal(m.comm, "web-worker");
	bt_procmeta_free(&m);
	assert_int_equal(bt_procmeta_read(root, 44, names, 3, &m), -ENOENT);
	bt_test_run(NULL, 0, "rm -rf %s", root);
}

/* A child of ours, read from the real /proc: what its files say, its environment variable. */
static void procmeta__real_child__matches_proc(void **state)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = { "sleep", "30", NULL }, *envp[] = { "OTEL_SERVICE_NAME=svc-real", "X=1", NULL };
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	static const char *const names[] = { "OTEL_SERVICE_NAME" };
	struct bt_procmeta m = { 0 };
	char comm[64] = "";
	for (int i = 0; i < 200 && strcmp(comm, "sleep\n"); i++) {
		usleep(10000);
		bt_test_run(comm, sizeof(comm), "cat /proc/%d/comm", (int)pid);
	}
	assert_int_equal(bt_procmeta_read("", pid, names, 1, &m), 0);
	char exe[4096], cg[4096];
	assert_int_equal(bt_test_run(exe, sizeof(exe), "readlink /proc/%d/exe | tr -d '\\n'", (int)pid), 0);
	assert_int_equal(bt_test_run(cg, sizeof(cg), "sed -n 's/^0:://p' /proc/%d/cgroup | tr -d '\\n'", (int)pid), 0);
	assert_string_equal(m.comm, "sleep");
	assert_string_equal(m.exe, exe);
	assert_string_equal(m.cmdline, "sleep 30");
	assert_string_equal(m.cgroup, cg);
	assert_int_equal(m.uid, getuid());
	assert_true(m.env_read);
	assert_string_equal(m.env[0], "svc-real");
	bt_procmeta_free(&m);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* gone: said so */
	assert_int_equal(bt_procmeta_read("", pid, names, 1, &m), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(procmeta__fake_root__fields),
		cmocka_unit_test(procmeta__real_child__matches_proc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
