/* caps.h - the capabilities buildtrace needs to load and attach BPF programs, checked before
 * anything is loaded, and dropped once everything is attached. */
#ifndef BT_CAPS_H
#define BT_CAPS_H

#include <stddef.h>

/* 0 when the process can load and attach BPF programs (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN
 * on kernels older than 5.8), else -EPERM with the missing capabilities named in msg, e.g.
 * "missing capabilities: CAP_BPF, CAP_PERFMON". */
int bt_caps_check(char *msg, size_t len);

/* The decision bt_caps_check makes, for a capability set in libcap's text form (as cap_to_text
 * prints it, e.g. "cap_bpf,cap_perfmon=ep"; only the effective set counts) on a kernel whose
 * highest capability number is last_cap (/proc/sys/kernel/cap_last_cap). CAP_SYS_ADMIN stands in
 * for both CAP_BPF and CAP_PERFMON, which kernels before 5.8 (last_cap < 39) lack. Same returns,
 * and -EINVAL when caps does not parse. */
int bt_caps_check_text(const char *caps, int last_cap, char *msg, size_t len);

/* The capabilities a session needs, in setcap's form, for the message that names the missing ones:
 * those bt_caps_check asks for and those kept after attaching, CAP_SYSLOG included (without it
 * /proc/kallsyms shows zero addresses and kernel frames stay unnamed). */
#define BT_CAPS_SETCAP "cap_bpf,cap_perfmon,cap_sys_ptrace,cap_dac_read_search,cap_checkpoint_restore,cap_syslog+ep"

/* The capabilities a session keeps once its BPF programs are attached, as a list for bt_caps_drop:
 * reading other processes' mappings (/proc/PID/maps: CAP_SYS_PTRACE; /proc/PID/map_files:
 * CAP_CHECKPOINT_RESTORE, else CAP_SYS_ADMIN), their files (CAP_DAC_READ_SEARCH), kernel symbol
 * addresses (CAP_SYSLOG), and the bpf() calls it still makes (snapshot iterators, map updates:
 * CAP_BPF, else CAP_SYS_ADMIN, while unprivileged BPF is off). CAP_SYS_ADMIN is kept only when the
 * process lacks CAP_BPF or CAP_CHECKPOINT_RESTORE (kernels before 5.9 have no such capability, or
 * the process was given CAP_SYS_ADMIN alone). CAP_PERFMON goes: the perf events are open. */
const char *bt_caps_keep_after_attach(void);
/* The same decision for a capability set in libcap's text form on a kernel whose highest
 * capability is last_cap; NULL when caps does not parse. */
const char *bt_caps_keep_after_attach_text(const char *caps, int last_cap);

/* Runs fn(ctx) with only the capabilities of keep (as for bt_caps_drop) effective, the others
 * still permitted and made effective again afterwards: what the process will be allowed once it
 * has dropped them, asked before it does (can a file created now be renamed into place at the
 * end?). Only the calling thread's set changes, for the call. fn's result, or -errno when the
 * effective set could not be changed. */
int bt_caps_with_only(const char *keep, int (*fn)(void *ctx), void *ctx);

/* Drops every capability from the effective, permitted, inheritable and bounding sets except those
 * in keep (a comma-separated list such as "cap_sys_ptrace,cap_dac_read_search", may be NULL or ""),
 * clears the ambient set and sets no_new_privs: nothing dropped can come back, not even through a
 * set-uid program. The bounding set needs CAP_SETPCAP (permitted is enough): without it, it stays
 * as it was given. 0 or -errno. */
int bt_caps_drop(const char *keep);

#endif
