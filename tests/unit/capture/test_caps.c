/* test_caps.c - the capability check on sets given as text and on the process itself, and dropping
 * capabilities in forked children, with the kernel's own /proc/self/status as the oracle. */
#include "testutil.h"
#include "capture/caps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a child reports back: the return codes it saw, the check's message, and its effective set as
 * the kernel shows it in /proc/self/status. */
struct child_report {
	int drop_rc, check_rc;
	char msg[256];
	uint64_t cap_eff, cap_bnd, cap_amb;
	int status_ok, no_new_privs;
};

/* The bounding and ambient sets and no_new_privs, as /proc/self/status shows them. */
static void read_locks(struct child_report *c)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return;
	char line[256];
	c->no_new_privs = -1;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "CapBnd: %" SCNx64, &c->cap_bnd);
		sscanf(line, "CapAmb: %" SCNx64, &c->cap_amb);
		sscanf(line, "NoNewPrivs: %d", &c->no_new_privs);
	}
	fclose(f);
}

static uint64_t read_cap_eff(int *ok)
{
	*ok = 0;
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return 0;
	char line[256];
	uint64_t v = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %" SCNx64, &v) == 1) {
			*ok = 1;
			break;
		}
	fclose(f);
	return v;
}

/* Forks, runs before (if any) in the child, drops all capabilities but keep, checks, and returns
 * what the child saw. */
static void run_child_after(const char *keep, int (*before)(void), struct child_report *r)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct child_report c = { 0 };
		close(fds[0]);
		if (before && before() != 0)
			_exit(2);
		c.drop_rc = bt_caps_drop(keep);
		c.check_rc = bt_caps_check(c.msg, sizeof(c.msg));
		c.cap_eff = read_cap_eff(&c.status_ok);
		read_locks(&c);
		_exit(write(fds[1], &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 1);
	}
	close(fds[1]);
	memset(r, 0, sizeof(*r));
	ssize_t n = read(fds[0], r, sizeof(*r));
	close(fds[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(n, sizeof(*r));
	assert_true(r->status_ok);
}

static void run_child(const char *keep, struct child_report *r)
{
	run_child_after(keep, NULL, r);
}

static void require_root_caps(void)
{
	int ok;
	uint64_t eff = read_cap_eff(&ok);
	assert_true(ok);
	/* the tests below need to start from a set that passes the check */
	if (!(eff & (1ULL << CAP_SYS_ADMIN)) &&
	    !((eff & (1ULL << CAP_BPF)) && (eff & (1ULL << CAP_PERFMON))))
		bt_test_require_priv();
}

static int kernel_last_cap(void)
{
	char out[32];
	assert_int_equal(bt_test_run(out, sizeof(out), "cat /proc/sys/kernel/cap_last_cap"), 0);
	return atoi(out);
}

static void caps__privileged_process__check_passes(void **state)
{
	require_root_caps();
	char msg[128] = "untouched";
	assert_int_equal(bt_caps_check(msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
}

static void caps__child_drops_everything__check_names_both(void **state)
{
	require_root_caps();
	struct child_report r;
	run_child("", &r);
	assert_int_equal(r.drop_rc, 0);
	assert_int_equal(r.cap_eff, 0);
	assert_int_equal(r.check_rc, -EPERM);
	if (kernel_last_cap() >= CAP_BPF) {
		assert_non_null(strstr(r.msg, "CAP_BPF"));
		assert_non_null(strstr(r.msg, "CAP_PERFMON"));
	} else {
		assert_non_null(strstr(r.msg, "CAP_SYS_ADMIN"));
	}
}

static void caps__child_drops_with_null_keep__same_as_empty(void **state)
{
	require_root_caps();
	struct child_report r;
	run_child(NULL, &r);
	assert_int_equal(r.drop_rc, 0);
	assert_int_equal(r.cap_eff, 0);
	assert_int_equal(r.check_rc, -EPERM);
}

static void caps__child_keeps_bpf_and_perfmon__only_those_remain(void **state)
{
	require_root_caps();
	if (kernel_last_cap() < CAP_BPF)
		skip();
	int ok;
	uint64_t before = read_cap_eff(&ok);
	const uint64_t want = ((1ULL << CAP_BPF) | (1ULL << CAP_PERFMON)) & before;
	struct child_report r;
	run_child(" cap_bpf , CAP_PERFMON", &r);
	assert_int_equal(r.drop_rc, 0);
	assert_int_equal(r.cap_eff, want);
	assert_int_equal(r.check_rc, want == ((1ULL << CAP_BPF) | (1ULL << CAP_PERFMON)) ? 0 : -EPERM);
}

static void caps__child_keeps_sys_admin__check_passes(void **state)
{
	require_root_caps();
	int ok;
	if (!(read_cap_eff(&ok) & (1ULL << CAP_SYS_ADMIN)))
		skip();
	struct child_report r;
	run_child("cap_sys_admin", &r);
	assert_int_equal(r.drop_rc, 0);
	assert_int_equal(r.cap_eff, 1ULL << CAP_SYS_ADMIN);
	assert_int_equal(r.check_rc, 0);
}

static void caps__child_keeps_only_perfmon__message_names_bpf_alone(void **state)
{
	require_root_caps();
	if (kernel_last_cap() < CAP_BPF)
		skip();
	struct child_report r;
	run_child("cap_perfmon", &r);
	assert_int_equal(r.drop_rc, 0);
	assert_int_equal(r.check_rc, -EPERM);
	assert_string_equal(r.msg, "missing capabilities: CAP_BPF");
}

static void caps__unknown_name__einval_and_nothing_dropped(void **state)
{
	require_root_caps();
	int ok;
	uint64_t before = read_cap_eff(&ok);
	struct child_report r;
	run_child("cap_bpf,cap_no_such_thing", &r);
	assert_int_equal(r.drop_rc, -EINVAL);
	assert_int_equal(r.cap_eff, before);
	assert_int_equal(r.check_rc, 0);
}

#define BIT(c) (1ULL << (c))

/* What is dropped is dropped from the bounding set too, the ambient set is emptied and
 * no_new_privs set: no set-uid or file-capability program could hand anything back. */
static void caps__drop__bounding_set_cut_and_no_new_privs(void **state)
{
	require_root_caps();
	struct child_report r;
	run_child("cap_sys_ptrace,cap_dac_read_search", &r);
	assert_int_equal(r.drop_rc, 0);
	assert_int_equal(r.cap_eff, BIT(CAP_SYS_PTRACE) | BIT(CAP_DAC_READ_SEARCH));
	assert_int_equal(r.cap_bnd, BIT(CAP_SYS_PTRACE) | BIT(CAP_DAC_READ_SEARCH));
	assert_int_equal(r.cap_amb, 0);
	assert_int_equal(r.no_new_privs, 1);
}

static int become_nobody(void)
{
	if (prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) != 0 || setresgid(65534, 65534, 65534) != 0 ||
	    setresuid(65534, 65534, 65534) != 0)
		return -1;
	return 0;
}

/* After a change of user (the agent's `user =`), CAP_SETPCAP is only permitted: the bounding set is
 * cut all the same. */
static void caps__drop_after_user_change__bounding_set_cut(void **state)
{
	require_root_caps();
	struct child_report r;
	run_child_after("cap_sys_ptrace", become_nobody, &r);
	assert_int_equal(r.drop_rc, 0);
	assert_int_equal(r.cap_eff, BIT(CAP_SYS_PTRACE));
	assert_int_equal(r.cap_bnd, BIT(CAP_SYS_PTRACE));
	assert_int_equal(r.no_new_privs, 1);
}

static int lose_setpcap(void)
{
	cap_t c = cap_get_proc();
	cap_value_t v = CAP_SETPCAP;
	int rc = c && !cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_CLEAR) &&
		 !cap_set_flag(c, CAP_PERMITTED, 1, &v, CAP_CLEAR) && !cap_set_proc(c) ? 0 : -1;
	cap_free(c);
	return rc;
}

/* Started without CAP_SETPCAP (systemd's CapabilityBoundingSet leaves it out): the bounding set is
 * left as given, the rest is dropped, and that is no error. */
static void caps__without_setpcap__bounding_set_left_as_given(void **state)
{
	require_root_caps();
	struct child_report before = { 0 };
	read_locks(&before);
	struct child_report r;
	run_child_after("cap_sys_ptrace", lose_setpcap, &r);
	assert_int_equal(r.drop_rc, 0);
	assert_int_equal(r.cap_eff, BIT(CAP_SYS_PTRACE));
	assert_int_equal(r.cap_bnd, before.cap_bnd);
	assert_int_equal(r.no_new_privs, 1);
}

static void caps__text_sets__decision_per_kernel_generation(void **state)
{
	char msg[128];
	/* a kernel with CAP_BPF (5.8 and later) */
	assert_int_equal(bt_caps_check_text("cap_bpf,cap_perfmon=ep", 40, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	assert_int_equal(bt_caps_check_text("cap_sys_admin=ep", 40, msg, sizeof(msg)), 0);
	assert_int_equal(bt_caps_check_text("cap_sys_admin,cap_bpf=ep", 39, msg, sizeof(msg)), 0);
	assert_int_equal(bt_caps_check_text("=", 40, msg, sizeof(msg)), -EPERM);
	assert_string_equal(msg, "missing capabilities: CAP_BPF, CAP_PERFMON");
	assert_int_equal(bt_caps_check_text("cap_bpf=ep", 40, msg, sizeof(msg)), -EPERM);
	assert_string_equal(msg, "missing capabilities: CAP_PERFMON");
	/* an older kernel: only CAP_SYS_ADMIN lets a process load BPF programs */
	assert_int_equal(bt_caps_check_text("cap_bpf,cap_perfmon=ep", 37, msg, sizeof(msg)), -EPERM);
	assert_string_equal(msg, "missing capabilities: CAP_SYS_ADMIN");
	assert_int_equal(bt_caps_check_text("cap_sys_admin=ep", 37, msg, sizeof(msg)), 0);
}

static void caps__keep_after_attach__sys_admin_only_when_needed(void **state)
{
	const char *k;
	/* root on a 5.9+ kernel: the narrow capabilities replace CAP_SYS_ADMIN */
	k = bt_caps_keep_after_attach_text("=ep", 40);
	assert_non_null(k);
	assert_null(strstr(k, "cap_sys_admin"));
	assert_null(strstr(k, "cap_perfmon"));
	assert_non_null(strstr(k, "cap_bpf"));
	assert_non_null(strstr(k, "cap_checkpoint_restore"));
	assert_non_null(strstr(k, "cap_sys_ptrace"));
	/* after a change of user only the permitted set is left: it counts */
	k = bt_caps_keep_after_attach_text("cap_bpf,cap_checkpoint_restore,cap_sys_ptrace=p", 40);
	assert_null(strstr(k, "cap_sys_admin"));
	/* a kernel before 5.9, or a process given CAP_SYS_ADMIN without the narrower ones: it stays */
	assert_non_null(strstr(bt_caps_keep_after_attach_text("=ep", 39), "cap_sys_admin"));
	assert_non_null(strstr(bt_caps_keep_after_attach_text("cap_sys_admin,cap_sys_ptrace=ep", 40), "cap_sys_admin"));
	assert_non_null(strstr(bt_caps_keep_after_attach_text("cap_sys_admin,cap_bpf=ep", 40), "cap_sys_admin"));
	assert_null(bt_caps_keep_after_attach_text("not a capability set", 40));
	/* every name in the list is one bt_caps_drop accepts: a child keeping it keeps CAP_SYS_PTRACE */
	require_root_caps();
	struct child_report r;
	run_child(bt_caps_keep_after_attach(), &r);
	assert_int_equal(r.drop_rc, 0);
	assert_true(r.cap_eff & (1ULL << 19));   /* CAP_SYS_PTRACE */
	assert_false(r.cap_eff & (1ULL << 38));  /* CAP_PERFMON */
	if (kernel_last_cap() >= 40)
		assert_false(r.cap_eff & (1ULL << 21));  /* CAP_SYS_ADMIN */
}

static void caps__permitted_but_not_effective__missing(void **state)
{
	char msg[128];
	assert_int_equal(bt_caps_check_text("cap_bpf,cap_perfmon,cap_sys_admin=p", 40, msg, sizeof(msg)),
			 -EPERM);
	assert_string_equal(msg, "missing capabilities: CAP_BPF, CAP_PERFMON");
	assert_int_equal(bt_caps_check_text("cap_bpf,cap_perfmon=ip cap_bpf,cap_perfmon+e", 40, msg,
					    sizeof(msg)),
			 0);
}

static void caps__text_from_this_process__agrees_with_check(void **state)
{
	cap_t self = cap_get_proc();
	assert_non_null(self);
	char *text = cap_to_text(self, NULL);
	assert_non_null(text);
	char a[128], b[128];
	int via_text = bt_caps_check_text(text, kernel_last_cap(), a, sizeof(a));
	int direct = bt_caps_check(b, sizeof(b));
	assert_int_equal(via_text, direct);
	assert_string_equal(a, b);
	cap_free(text);
	cap_free(self);
}

static void caps__bad_text__einval(void **state)
{
	char msg[64];
	assert_int_equal(bt_caps_check_text("cap_nonsense=ep", 40, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(bt_caps_check_text("cap_bpf=q", 40, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(bt_caps_check_text(NULL, 40, msg, sizeof(msg)), -EINVAL);
}

static void caps__small_message_buffer__truncated_and_terminated(void **state)
{
	char msg[16];
	memset(msg, 'Z', sizeof(msg));
	assert_int_equal(bt_caps_check_text("=", 40, msg, 10), -EPERM);
	assert_int_equal(strlen(msg), 9);
	assert_memory_equal(msg, "missing c", 9);
	assert_int_equal(msg[10], 'Z');
	assert_int_equal(bt_caps_check_text("=", 40, NULL, 0), -EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(caps__privileged_process__check_passes),
		cmocka_unit_test(caps__child_drops_everything__check_names_both),
		cmocka_unit_test(caps__child_drops_with_null_keep__same_as_empty),
		cmocka_unit_test(caps__child_keeps_bpf_and_perfmon__only_those_remain),
		cmocka_unit_test(caps__child_keeps_sys_admin__check_passes),
		cmocka_unit_test(caps__child_keeps_only_perfmon__message_names_bpf_alone),
		cmocka_unit_test(caps__unknown_name__einval_and_nothing_dropped),
		cmocka_unit_test(caps__drop__bounding_set_cut_and_no_new_privs),
		cmocka_unit_test(caps__drop_after_user_change__bounding_set_cut),
		cmocka_unit_test(caps__without_setpcap__bounding_set_left_as_given),
		cmocka_unit_test(caps__text_sets__decision_per_kernel_generation),
		cmocka_unit_test(caps__keep_after_attach__sys_admin_only_when_needed),
		cmocka_unit_test(caps__permitted_but_not_effective__missing),
		cmocka_unit_test(caps__text_from_this_process__agrees_with_check),
		cmocka_unit_test(caps__bad_text__einval),
		cmocka_unit_test(caps__small_message_buffer__truncated_and_terminated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
