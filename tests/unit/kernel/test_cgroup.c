/* test_cgroup.c - container ids out of the cgroup paths of each runtime and driver (and paths that
 * only look like one), and a cgroup id read back as this process's own cgroup path. */
#include "testutil.h"
#include "kernel/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void cgroup__container_paths__id_and_runtime(void **state)
{
	static const struct { const char *path, *runtime; } good[] = {
		{ "/system.slice/docker-" ID ".scope", "docker" },
		{ "/docker/" ID, "" },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e.slice/cri-containerd-" ID
		  ".scope", "containerd" },
		{ "/kubepods/burstable/pod1f2e-33/" ID, "" },
		{ "/kubepods.slice/kubepods-pod9.slice/crio-" ID ".scope", "crio" },
		{ "/machine.slice/libpod-" ID ".scope", "podman" },
		{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope/container", "podman" },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char id[BT_CONTAINER_ID_LEN + 1];
		const char *rt = NULL;
		if (bt_cgroup_container_id(good[i].path, id, &rt) != 0)
			fail_msg("%s: no container id", good[i].path);
		assert_string_equal(id, ID);
		assert_string_equal(rt, good[i].runtime);
	}
	static const char *const none[] = {
		"/", "", "/system.slice/cron.service", "/machine.slice/libpod-conmon-" ID ".scope",
		"/system.slice/crio-conmon-" ID ".scope", "/docker/" "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		"/docker/" ID "0", "/system.slice/docker-" ID ".scopes", "/docker-" ID ".slice",
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		char id[BT_CONTAINER_ID_LEN + 1];
		if (bt_cgroup_container_id(none[i], id, NULL) != -ENOENT)
			fail_msg("%s: read as container %s", none[i], id);
	}
}

/* This process's cgroup from /proc/self/cgroup ("0::PATH"), its id from the handle of its directory;
 * the id read back gives the same path (with CAP_DAC_READ_SEARCH; -EPERM without). */
/* mountinfo under a root: the cgroup2 line found among others, its escapes undone. */
static void cgroup__mountinfo__cgroup2_mount_found(void **state)
{
	char root[] = "/tmp/bt-cgroup-XXXXXX", buf[512];
	assert_non_null(mkdtemp(root));
	char mi[600];
	snprintf(mi, sizeof(mi), "%s/proc/self/mountinfo", root);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc/self", root), 0);
	FILE *f = fopen(mi, "we");
	assert_non_null(f);
	fputs("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
	      "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n"
	      "41 31 0:38 / /sys/fs/cgroup/uni\\040fied rw shared:9 - cgroup2 cgroup2 rw\n", f);
	fclose(f);
	assert_int_equal(bt_cgroup_mount(root, buf, sizeof(buf)), 0);
	char want[512];
	snprintf(want, sizeof(want), "%s/sys/fs/cgroup/uni fied", root);
	assert_string_equal(buf, want);
	f = fopen(mi, "we");
	assert_non_null(f);
	fputs("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", f);
	fclose(f);
	assert_int_equal(bt_cgroup_mount(root, buf, sizeof(buf)), -ENOENT);
	bt_test_run(NULL, 0, "rm -rf %s", root);
}

static void cgroup__own_id__path_read_back(void **state)
{
	size_t len;
	char *s = bt_test_read_file("/proc/self/cgroup", &len);
	char *p = strstr(s, "0::");
	if (!p) {
		free(s);
		skip();
	}
	p += 3;
	p[strcspn(p, "\n")] = '\0';
	char dir[8192], mnt[4096];
	assert_int_equal(bt_cgroup_mount("", mnt, sizeof(mnt)), 0);
	snprintf(dir, sizeof(dir), "%s%s", mnt, p);
	struct {
		struct file_handle fh;
		unsigned char b[64];
	} h = { .fh = { .handle_bytes = 64 } };
	int mount_id;
	assert_int_equal(name_to_handle_at(AT_FDCWD, dir, &h.fh, &mount_id, 0), 0);
	assert_int_equal(h.fh.handle_bytes, 8);
	uint64_t id;
	memcpy(&id, h.fh.f_handle, 8);
	char got[4096];
	int rc = bt_cgroup_path(mnt, id, got, sizeof(got));
	if (geteuid() != 0) {
		assert_int_equal(rc, -EPERM);
	} else {
		assert_int_equal(rc, 0);
		assert_string_equal(got, p);
		/* an id no cgroup has */
		assert_int_equal(bt_cgroup_path(mnt, 0x7fffffffffffULL, got, sizeof(got)), -ENOENT);
	}
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cgroup__container_paths__id_and_runtime),
		cmocka_unit_test(cgroup__mountinfo__cgroup2_mount_found),
		cmocka_unit_test(cgroup__own_id__path_read_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
