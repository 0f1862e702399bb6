/* caps.c - capability checks and dropping through libcap; the decision itself works on any cap_t so
 * that it can be exercised on sets the running process does not have. */
#include "capture/caps.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

static bool effective(cap_t caps, cap_value_t c)
{
	cap_flag_value_t v = CAP_CLEAR;
	return cap_get_flag(caps, c, CAP_EFFECTIVE, &v) == 0 && v == CAP_SET;
}

static int check_set(cap_t caps, int last_cap, char *msg, size_t len)
{
	const char *missing[3];
	size_t n = 0;
	bool admin = effective(caps, CAP_SYS_ADMIN);

	if (last_cap >= CAP_BPF) {
		/* CAP_SYS_ADMIN still grants what the two narrower capabilities grant */
		if (!admin && !effective(caps, CAP_BPF))
			missing[n++] = "CAP_BPF";
		if (!admin && !effective(caps, CAP_PERFMON))
			missing[n++] = "CAP_PERFMON";
	} else if (!admin) {
		missing[n++] = "CAP_SYS_ADMIN";
	}
	if (msg && len) {
		msg[0] = '\0';
		size_t used = 0;
		for (size_t i = 0; i < n && used < len; i++) {
			int w = snprintf(msg + used, len - used, "%s%s", i ? ", " : "missing capabilities: ",
					 missing[i]);
			if (w < 0)
				break;
			used += (size_t)w;
		}
	}
	return n ? -EPERM : 0;
}

int bt_caps_check_text(const char *text, int last_cap, char *msg, size_t len)
{
	if (!text)
		return -EINVAL;
	cap_t caps = cap_from_text(text);
	if (!caps)
		return -EINVAL;
	int err = check_set(caps, last_cap, msg, len);
	cap_free(caps);
	return err;
}

int bt_caps_check(char *msg, size_t len)
{
	cap_t caps = cap_get_proc();
	if (!caps)
		return -errno;
	/* libcap probes the running kernel for its highest capability when it is loaded */
	int err = check_set(caps, (int)cap_max_bits() - 1, msg, len);
	cap_free(caps);
	return err;
}

#define KEEP_COMMON "cap_sys_ptrace,cap_dac_read_search,cap_syslog"

/* Permitted counts: after a change of user with PR_SET_KEEPCAPS only the permitted set is left. */
static bool held(cap_t caps, cap_value_t c)
{
	cap_flag_value_t v = CAP_CLEAR;
	return effective(caps, c) || (cap_get_flag(caps, c, CAP_PERMITTED, &v) == 0 && v == CAP_SET);
}

static const char *keep_for(cap_t caps, int last_cap)
{
	/* CAP_CHECKPOINT_RESTORE (40) came in 5.9, CAP_BPF (39) in 5.8 */
	if (last_cap >= CAP_CHECKPOINT_RESTORE && held(caps, CAP_BPF) && held(caps, CAP_CHECKPOINT_RESTORE))
		return "cap_bpf,cap_checkpoint_restore," KEEP_COMMON;
	return "cap_sys_admin,cap_bpf,cap_checkpoint_restore," KEEP_COMMON;
}

const char *bt_caps_keep_after_attach_text(const char *text, int last_cap)
{
	cap_t caps = text ? cap_from_text(text) : NULL;
	if (!caps)
		return NULL;
	const char *keep = keep_for(caps, last_cap);
	cap_free(caps);
	return keep;
}

const char *bt_caps_keep_after_attach(void)
{
	cap_t caps = cap_get_proc();
	const char *keep = keep_for(caps, (int)cap_max_bits() - 1);
	if (caps)
		cap_free(caps);
	return keep;
}

/* Reads the comma-separated names of keep into the set kept (one flag per capability). */
static int parse_keep(const char *keep, bool *kept, size_t nkept)
{
	if (!keep || !*keep)
		return 0;
	char *copy = strdup(keep);
	if (!copy)
		return -ENOMEM;
	int err = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		char *end = tok + strlen(tok);
		while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!*tok)
			continue;
		cap_value_t c;
		if (cap_from_name(tok, &c) != 0 || c < 0 || (size_t)c >= nkept) {
			err = -EINVAL;
			break;
		}
		kept[c] = true;
	}
	free(copy);
	return err;
}

/* The bounding set cut down to kept: nothing this process or a program it ran could gain, even
 * through a set-uid or file-capability binary. Needs CAP_SETPCAP, raised for the purpose when only
 * permitted (after a change of user); without it the bounding set is left as it was given, by
 * whoever started buildtrace without CAP_SETPCAP (systemd's CapabilityBoundingSet). */
static int drop_bounding(cap_t cur, const bool *kept, size_t nkept)
{
	cap_flag_value_t perm = CAP_CLEAR, eff = CAP_CLEAR;
	cap_value_t setpcap = CAP_SETPCAP;
	if (cap_get_flag(cur, CAP_SETPCAP, CAP_PERMITTED, &perm) != 0 || perm != CAP_SET)
		return 0;
	if (cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &eff) == 0 && eff != CAP_SET) {
		cap_t raised = cap_dup(cur);
		if (!raised)
			return -errno;
		int rc = cap_set_flag(raised, CAP_EFFECTIVE, 1, &setpcap, CAP_SET) ? -errno
			 : cap_set_proc(raised) ? -errno : 0;
		cap_free(raised);
		if (rc)
			return rc;
	}
	for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++) {
		if ((size_t)c < nkept && kept[c])
			continue;
		if (prctl(PR_CAPBSET_READ, (unsigned long)c, 0L, 0L, 0L) == 1 &&
		    prctl(PR_CAPBSET_DROP, (unsigned long)c, 0L, 0L, 0L) != 0)
			return -errno;
	}
	return 0;
}

int bt_caps_with_only(const char *keep, int (*fn)(void *ctx), void *ctx)
{
	bool kept[64] = { false };
	int err = parse_keep(keep, kept, sizeof(kept) / sizeof(kept[0]));
	if (err)
		return err;
	cap_t cur = cap_get_proc();
	cap_t less = cur ? cap_dup(cur) : NULL;
	if (!less) {
		err = -errno;
		if (cur)
			cap_free(cur);
		return err;
	}
	for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++)
		if ((size_t)c >= sizeof(kept) / sizeof(kept[0]) || !kept[c])
			cap_set_flag(less, CAP_EFFECTIVE, 1, &c, CAP_CLEAR);
	if (cap_set_proc(less) != 0) {
		err = -errno;
	} else {
		err = fn(ctx);
		/* back as it was: nothing was taken from the permitted set */
		if (cap_set_proc(cur) != 0 && !err)
			err = -errno;
	}
	cap_free(less);
	cap_free(cur);
	return err;
}

int bt_caps_drop(const char *keep)
{
	bool kept[64] = { false };
	int err = parse_keep(keep, kept, sizeof(kept) / sizeof(kept[0]));
	if (err)
		return err;
	cap_t cur = cap_get_proc();
	if (!cur)
		return -errno;
	/* no way back: no program run from here gains privileges, no capability stays ambient */
	if ((err = drop_bounding(cur, kept, sizeof(kept) / sizeof(kept[0]))) ||
	    (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L) != 0 && errno != EINVAL) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
		err = err ? err : -errno;
		cap_free(cur);
		return err;
	}
	cap_t next = cap_init();
	if (!next) {
		err = -errno;
		cap_free(cur);
		return err;
	}
	static const cap_flag_t flags[] = { CAP_EFFECTIVE, CAP_PERMITTED, CAP_INHERITABLE };
	for (cap_value_t c = 0; c < (cap_value_t)(sizeof(kept) / sizeof(kept[0])); c++) {
		if (!kept[c])
			continue;
		/* a kept capability stays in the sets that hold it now, and is effective when permitted
		 * (after a change of user with PR_SET_KEEPCAPS, only the permitted set survives) */
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
			cap_flag_value_t v = CAP_CLEAR, perm = CAP_CLEAR;
			cap_get_flag(cur, c, CAP_PERMITTED, &perm);
			bool set = (cap_get_flag(cur, c, flags[f], &v) == 0 && v == CAP_SET) ||
				   (flags[f] == CAP_EFFECTIVE && perm == CAP_SET);
			if (set && cap_set_flag(next, flags[f], 1, &c, CAP_SET) != 0) {
				err = -errno;
				goto out;
			}
		}
	}
	if (cap_set_proc(next) != 0)
		err = -errno;
out:
	cap_free(next);
	cap_free(cur);
	return err;
}
