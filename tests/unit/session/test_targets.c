/* test_targets.c - processes named by labels: the __meta_* labels of a process under a made-up
 * /proc (systemd, container and kubelet cgroups, environment), service_name filled in as Alloy's
 * pyroscope.ebpf fills it, "__" labels dropped and values made safe for a series name, one reading
 * of /proc per process until it exec's or moves to another cgroup, and the sample's own comm and
 * executable used when /proc has moved on past an exec. */
#include "testutil.h"
#include "session/targets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char root[] = "/tmp/bt-targets-XXXXXX";

static void put(int pid, const char *name, const char *data, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/proc/%d/%s", root, pid, name);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fwrite(data, 1, len, f);
	fclose(f);
}

/* Thread tid of process pid, named comm. */
static void thread(int pid, int tid, const char *comm)
{
	char name[64], buf[64];
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc/%d/task/%d", root, pid, tid), 0);
	snprintf(name, sizeof(name), "task/%d/comm", tid);
	snprintf(buf, sizeof(buf), "%s\n", comm);
	put(pid, name, buf, strlen(buf));
}

/* A process: comm, executable, command line (NUL-separated), cgroup, environment. */
static void proc(int pid, const char *comm, const char *exe, const char *cmd, size_t cmdlen, const char *cg,
		 const char *env, size_t envlen)
{
	char buf[512];
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc/%d && ln -sfn %s %s/proc/%d/exe", root, pid, exe, root, pid), 0);
	snprintf(buf, sizeof(buf), "Name:\t%s\nUid:\t1000\t%u\t%u\t%u\n", comm, (unsigned)geteuid(), (unsigned)geteuid(),
		 (unsigned)geteuid());
	put(pid, "status", buf, strlen(buf));
	snprintf(buf, sizeof(buf), "%s\n", comm);
	put(pid, "comm", buf, strlen(buf));
	thread(pid, pid, comm);
	put(pid, "cmdline", cmd, cmdlen);
	snprintf(buf, sizeof(buf), "1:name=systemd:/x\n0::%s\n", cg);
	put(pid, "cgroup", buf, strlen(buf));
	put(pid, "environ", env, envlen);
}

static int setup(void **state)
{
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	return bt_test_run(NULL, 0, "rm -rf %s", root) == 0 ? 0 : -1;
}

static const char *get(const struct bt_labels *l, const char *k)
{
	const char *v = bt_labels_get(l, k);
	return v ? v : "(none)";
}

static void targets__meta__every_label(void **state)
{
	static const char env[] = "OTEL_SERVICE_NAME=checkout\0TEAM=payments\0";
	proc(100, "web", "/usr/bin/web", "/usr/bin/web\0-p\0" "80\0", 19,
	     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_5b6a_4978_8695_a4b3c2d1e0f9.slice/"
	     "cri-containerd-" CID ".scope", env, sizeof(env) - 1);
	static const char *const names[] = { "OTEL_SERVICE_NAME", "ABSENT" };
	struct bt_procmeta m;
	assert_int_equal(bt_procmeta_read(root, 100, names, 2, &m), 0);
	struct bt_labels l;
	bt_labels_init(&l);
	assert_int_equal(bt_targets_meta(&m, names, 2, &l), 0);
	assert_string_equal(get(&l, "__meta_process_pid"), "100");
	assert_string_equal(get(&l, "__meta_process_comm"), "web");
	assert_string_equal(get(&l, "__meta_process_exe"), "/usr/bin/web");
	assert_string_equal(get(&l, "__meta_process_commandline"), "/usr/bin/web -p 80");
	assert_string_equal(get(&l, "__meta_process_uid"), "1000");
	assert_string_equal(get(&l, "__meta_process_env_OTEL_SERVICE_NAME"), "checkout");
	assert_string_equal(get(&l, "__meta_process_env_ABSENT"), "(none)");
	assert_string_equal(get(&l, "__meta_systemd_unit"), "cri-containerd-" CID ".scope");
	assert_string_equal(get(&l, "__meta_container_id"), CID);
	assert_string_equal(get(&l, "__meta_container_runtime"), "containerd");
	assert_string_equal(get(&l, "__meta_kubernetes_pod_uid"), "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9");
	assert_string_equal(get(&l, "__meta_kubernetes_pod_qos"), "burstable");
	assert_string_equal(get(&l, "__meta_kubernetes_pod_container_id"), "containerd://" CID);
	assert_null(bt_labels_get(&l, "TEAM"));
	assert_null(bt_labels_get(&l, "__meta_process_env_TEAM"));  /* only the names asked for */
	bt_labels_free(&l);
	bt_procmeta_free(&m);
}

/* service_name: the rules', else Alloy's inference in its order, else the fallback, else
 * "unspecified"; "__" labels gone, values safe. */
static void targets__finish__service_name_and_cleaning(void **state)
{
	struct bt_relabel r;
	bt_relabel_init(&r);
	char err[256];
	assert_int_equal(bt_relabel_add(&r, "source_labels=__meta_process_comm target_label=comm", err, sizeof(err)), 0);
	struct bt_targets_conf c = { .rules = &r };
	static const struct { const char *kv[10]; const char *fallback, *want; } cases[] = {
		{ { "service_name", "mine", "__meta_docker_container_name", "d" }, NULL, "mine" },
		{ { "__meta_kubernetes_pod_annotation_pyroscope_io_service_name", "ann", "__meta_kubernetes_namespace", "ns",
		    "__meta_kubernetes_pod_container_name", "ct", "__meta_docker_container_name", "d" }, NULL, "ann" },
		{ { "__meta_kubernetes_namespace", "ns", "__meta_kubernetes_pod_container_name", "ct",
		    "__meta_docker_container_name", "d" }, NULL, "ebpf/ns/ct" },
		{ { "__meta_kubernetes_namespace", "ns", "__meta_docker_container_name", "d" }, NULL, "d" },
		{ { "__meta_process_comm", "x" }, "fleet", "fleet" },
		{ { "__meta_process_comm", "x" }, NULL, "unspecified" },
		{ { "__meta_process_comm", "x" }, "", "unspecified" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bt_labels l;
		bt_labels_init(&l);
		for (int k = 0; k < 10 && cases[i].kv[k]; k += 2)
			bt_labels_set(&l, cases[i].kv[k], cases[i].kv[k + 1]);
		c.fallback_service = cases[i].fallback;
		assert_int_equal(bt_targets_finish(&c, &l, NULL), 1);
		assert_string_equal(get(&l, "service_name"), cases[i].want);
		for (size_t k = 0; k < l.n; k++)
			assert_true(strncmp(l.v[k].name, "__", 2) != 0);
		bt_labels_free(&l);
	}
	/* hostile text: a series name keeps none of its syntax */
	struct bt_labels l;
	bt_labels_init(&l);
	bt_labels_set(&l, "__meta_process_comm", "a,b=c{d}\"e\\f g\x01\xc3\xa9");
	assert_int_equal(bt_targets_finish(&c, &l, NULL), 1);
	assert_string_equal(get(&l, "comm"), "a_b_c_d__e_f_g___");
	char *text = bt_targets_series_text(&l);
	assert_string_equal(text, "comm=a_b_c_d__e_f_g___,service_name=unspecified");
	free(text);
	char big[2000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	bt_labels_set(&l, "__meta_process_comm", big);
	assert_int_equal(bt_targets_finish(&c, &l, NULL), 1);
	assert_int_equal(strlen(get(&l, "comm")), BT_TARGETS_VALUE_MAX);
	bt_labels_free(&l);
	bt_relabel_free(&r);
}

static struct bt_targets_conf conf_with(struct bt_relabel *r, const char *const *rules, struct bt_labels *fixed)
{
	bt_relabel_init(r);
	char err[256];
	for (size_t i = 0; rules[i]; i++)
		if (bt_relabel_add(r, rules[i], err, sizeof(err)))
			fail_msg("%s: %s", rules[i], err);
	return (struct bt_targets_conf){ .rules = r, .labels = fixed, .proc_root = root };
}

/* One reading per process: a changed /proc is not read again until the process exec's (forget) or
 * is sampled in another cgroup (not when asked without one); a dropped process stays dropped. */
static void targets__lookup__cached_until_exec_or_move(void **state)
{
	static const char *const rules[] = {
		"action=drop source_labels=__meta_process_comm regex=sh|bash",
		"source_labels=__meta_systemd_unit regex=(.+)\\.service target_label=service_name",
		NULL,
	};
	proc(200, "spin", "/opt/spin", "spin\0", 5, "/bt.slice/alpha.service", "", 0);
	proc(201, "sh", "/usr/bin/dash", "sh\0-c\0x\0", 9, "/bt.slice/alpha.service", "", 0);
	struct bt_relabel r;
	struct bt_labels fixed;
	bt_labels_init(&fixed);
	bt_labels_set(&fixed, "env", "ci");
	struct bt_targets_conf c = conf_with(&r, rules, &fixed);
	struct bt_targets t;
	assert_int_equal(bt_targets_init(&t, &c), 0);
	const char *s;
	struct bt_target_hint h = { .pid = 200, .cgroup_id = 7, .comm = "spin", .exe = "/opt/spin" };
	assert_int_equal(bt_targets_lookup(&t, &h, &s), 1);
	assert_string_equal(s, "env=ci,service_name=alpha");
	/* the process's files change: the target is remembered, not read again */
	proc(200, "spin", "/opt/spin", "spin\0", 5, "/bt.slice/beta.service", "", 0);
	assert_int_equal(bt_targets_lookup(&t, &h, &s), 1);
	assert_string_equal(s, "env=ci,service_name=alpha");
	assert_int_equal(t.st.targets, 1);
	/* sampled in another cgroup: made again */
	h.cgroup_id = 8;
	assert_int_equal(bt_targets_lookup(&t, &h, &s), 1);
	assert_string_equal(s, "env=ci,service_name=beta");
	/* asked without a cgroup (off-CPU time without a stack): the target it has, not made again */
	proc(200, "spin", "/opt/spin", "spin\0", 5, "/bt.slice/delta.service", "", 0);
	struct bt_target_hint nocg = { .pid = 200, .tid = 200, .comm = "spin" };
	assert_int_equal(bt_targets_lookup(&t, &nocg, &s), 1);
	assert_string_equal(s, "env=ci,service_name=beta");
	assert_int_equal(t.st.targets, 2);
	proc(200, "spin", "/opt/spin", "spin\0", 5, "/bt.slice/beta.service", "", 0);
	/* the sample's cgroup path wins over /proc's */
	bt_targets_forget(&t, 200);
	h.cgroup = "/bt.slice/gamma.service";
	assert_int_equal(bt_targets_lookup(&t, &h, &s), 1);
	assert_string_equal(s, "env=ci,service_name=gamma");
	struct bt_target_hint sh = { .pid = 201, .cgroup_id = 7, .comm = "sh", .exe = "/usr/bin/dash" };
	assert_int_equal(bt_targets_lookup(&t, &sh, &s), 0);
	assert_int_equal(bt_targets_lookup(&t, &sh, &s), 0);
	assert_int_equal(t.st.dropped, 1);
	/* the shell exec'd a workload: /proc says so, and after forget the target follows */
	proc(201, "work", "/opt/work", "work\0", 5, "/bt.slice/alpha.service", "", 0);
	bt_targets_forget(&t, 201);
	sh.comm = "work";
	sh.exe = "/opt/work";
	assert_int_equal(bt_targets_lookup(&t, &sh, &s), 1);
	assert_string_equal(s, "env=ci,service_name=alpha");
	/* a sample from before an exec, read after it: /proc's comm and executable both differ from
	 * the sample's, which are used */
	proc(202, "work", "/opt/work", "work\0", 5, "/bt.slice/alpha.service", "", 0);
	struct bt_target_hint early = { .pid = 202, .cgroup_id = 7, .comm = "sh", .exe = "/usr/bin/dash" };
	assert_int_equal(bt_targets_lookup(&t, &early, &s), 0);
	assert_int_equal(t.st.from_sample, 1);
	/* a shell's child runs a script on the same executable: a sample of it from before the exec
	 * is the shell's, though /proc's executable is the same */
	proc(203, "run.sh", "/usr/bin/dash", "/bin/sh\0./run.sh\0", 17, "/bt.slice/alpha.service", "", 0);
	struct bt_target_hint script = { .pid = 203, .cgroup_id = 7, .comm = "sh", .exe = "/usr/bin/dash" };
	assert_int_equal(bt_targets_lookup(&t, &script, &s), 0);
	assert_int_equal(t.st.from_sample, 2);
	/* a thread named apart from its process: its own comm in /proc agrees, /proc is read, and the
	 * process keeps its labels (the name noted, not read again) */
	thread(200, 2001, "worker-3");
	struct bt_target_hint thr = { .pid = 200, .tid = 2001, .cgroup_id = 9, .comm = "worker-3", .exe = "/opt/spin" };
	assert_int_equal(bt_targets_lookup(&t, &thr, &s), 1);
	assert_string_equal(s, "env=ci,service_name=beta");
	struct bt_target_hint main_thr = { .pid = 200, .tid = 200, .cgroup_id = 9, .comm = "spin", .exe = "/opt/spin" };
	assert_int_equal(bt_targets_lookup(&t, &main_thr, &s), 1);
	uint64_t made = t.st.targets;
	assert_int_equal(bt_targets_lookup(&t, &thr, &s), 1);
	assert_int_equal(bt_targets_lookup(&t, &main_thr, &s), 1);
	assert_int_equal(t.st.targets, made);
	assert_int_equal(t.st.from_sample, 2);
	/* an exec whose record was lost: the new comm makes it read again */
	proc(204, "work", "/opt/work", "work\0", 5, "/bt.slice/alpha.service", "", 0);
	struct bt_target_hint w = { .pid = 204, .cgroup_id = 7, .comm = "work", .exe = "/opt/work" };
	assert_int_equal(bt_targets_lookup(&t, &w, &s), 1);
	proc(204, "bash", "/usr/bin/bash", "bash\0", 5, "/bt.slice/alpha.service", "", 0);
	w.comm = "bash";
	assert_int_equal(bt_targets_lookup(&t, &w, &s), 0);
	/* gone before it was read: the sample's comm decides */
	struct bt_target_hint gone = { .pid = 99999, .cgroup_id = 7, .comm = "bash", .exe = "/usr/bin/bash" };
	assert_int_equal(bt_targets_lookup(&t, &gone, &s), 0);
	assert_string_equal(bt_targets_other(&t), "env=ci,service_name=other");
	bt_targets_free(&t);
	bt_relabel_free(&r);
	bt_labels_free(&fixed);
}

/* Without rules every process has the same series: /proc is never read. */
static void targets__no_rules__one_series_without_reading(void **state)
{
	static const char *const none[] = { NULL };
	struct bt_relabel r;
	struct bt_targets_conf c = conf_with(&r, none, NULL);
	c.fallback_service = "web";
	c.proc_root = "/nonexistent";
	struct bt_targets t;
	assert_int_equal(bt_targets_init(&t, &c), 0);
	const char *s;
	struct bt_target_hint h = { .pid = 1 };
	assert_int_equal(bt_targets_lookup(&t, &h, &s), 1);
	assert_string_equal(s, "service_name=web");
	assert_int_equal(t.st.targets, 0);
	bt_targets_free(&t);
	bt_relabel_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(targets__meta__every_label),
		cmocka_unit_test(targets__finish__service_name_and_cleaning),
		cmocka_unit_test(targets__lookup__cached_until_exec_or_move),
		cmocka_unit_test(targets__no_rules__one_series_without_reading),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
