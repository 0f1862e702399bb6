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

/* systemd's reading of a cgroup path: slices skipped, the first unit after them. */
static void cgroup__systemd_paths__unit(void **state)
{
	static const struct { const char *path, *unit; } cases[] = {
		{ "/system.slice/cron.service", "cron.service" },
		{ "/system.slice/cron.service/sub/group", "cron.service" },
		{ "/user.slice/user-1000.slice/session-2.scope", "session-2.scope" },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", "user@1000.service" },
		{ "/init.scope", "init.scope" },
		{ "/system.slice/docker-" ID ".scope", "docker-" ID ".scope" },
		{ "/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service" },
		{ "/bt-test.slice/svc-alpha.service", "svc-alpha.service" },
		{ "/", NULL }, { "", NULL }, { "/system.slice", NULL }, { "/docker/" ID, NULL },
		{ "/kubepods/burstable/pod1f2e/" ID, NULL }, { "/bt-test/svc-alpha", NULL },
		{ "/system.slice/.service", NULL }, { "/system.slice/x.slicey", NULL }, { "/a.slice/b c.service", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char unit[256];
		int rc = bt_cgroup_systemd_unit(cases[i].path, unit, sizeof(unit));
		if (cases[i].unit && (rc || strcmp(unit, cases[i].unit)))
			fail_msg("%s: %d '%s', want %s", cases[i].path, rc, rc ? "" : unit, cases[i].unit);
		if (!cases[i].unit && rc != -ENOENT)
			fail_msg("%s: read as unit '%s'", cases[i].path, unit);
	}
	char small[8];
	assert_int_equal(bt_cgroup_systemd_unit("/system.slice/cron.service", small, sizeof(small)), -ENAMETOOLONG);
}

/* The kubelet's cgroups, both drivers, each QoS class; the pod's UID as the API server writes it. */
static void cgroup__kubelet_paths__pod_uid_and_qos(void **state)
{
	static const char uid[] = "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9", uid_[] = "1f2e3d4c_5b6a_4978_8695_a4b3c2d1e0f9";
	char p[8][512];
	snprintf(p[0], 512, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-" ID ".scope", uid_);
	snprintf(p[1], 512, "/kubepods.slice/kubepods-pod%s.slice/crio-" ID ".scope", uid_);
	snprintf(p[2], 512, "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod%s.slice", uid_);
	snprintf(p[3], 512, "/kubepods/burstable/pod%s/" ID, uid);
	snprintf(p[4], 512, "/kubepods/pod%s/" ID, uid);
	snprintf(p[5], 512, "/kubepods/besteffort/pod%s", uid);
	snprintf(p[6], 512, "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
		 "kubelet-kubepods-burstable-pod%s.slice/cri-containerd-" ID ".scope", uid_);
	snprintf(p[7], 512, "/kubepods/pod8d3ae5c0a1b2c3d4e5f60718293a4b5c/" ID);  /* a static pod's hash */
	static const char *const qos[] = { "burstable", "guaranteed", "besteffort", "burstable", "guaranteed",
					   "besteffort", "burstable", "guaranteed" };
	for (int i = 0; i < 8; i++) {
		struct bt_kubepod k;
		if (bt_cgroup_kubepod(p[i], &k))
			fail_msg("%s: no pod", p[i]);
		assert_string_equal(k.uid, i == 7 ? "8d3ae5c0a1b2c3d4e5f60718293a4b5c" : uid);
		assert_string_equal(k.qos, qos[i]);
	}
	static const char *const none[] = {
		"/", "/system.slice/cron.service", "/docker/" ID, "/kubepods.slice", "/kubepods/burstable",
		"/kubepods.slice/kubepods-burstable.slice", "/other/pod1234", "/kubepods/other/pod1234",
		"/kubepods.slice/kubepods-podXYZ.slice", "/system.slice/notkubepods-pod12.slice",
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		struct bt_kubepod k;
		if (bt_cgroup_kubepod(none[i], &k) != -ENOENT)
			fail_msg("%s: read as pod %s", none[i], k.uid);
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
		cmocka_unit_test(cgroup__systemd_paths__unit),
		cmocka_unit_test(cgroup__kubelet_paths__pod_uid_and_qos),
		cmocka_unit_test(cgroup__mountinfo__cgroup2_mount_found),
		cmocka_unit_test(cgroup__own_id__path_read_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
