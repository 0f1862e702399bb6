/* targets.h - the agent's targets, as Grafana Alloy and the Parca agent make theirs: each process
 * described by __meta_* labels (read once from /proc and kept), relabeled by the configured rules,
 * service_name filled in as Alloy's pyroscope.ebpf fills it, the labels starting with "__" dropped.
 * What a process is left with names its series; a process the rules drop is not profiled. */
#ifndef BT_TARGETS_H
#define BT_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/htab.h"
#include "kernel/procmeta.h"
#include "session/relabel.h"

#define BT_TARGETS_VALUE_MAX 512     /* bytes of a series label's value kept */
#define BT_TARGETS_KEPT 65536        /* processes remembered; beyond, all are read again */
#define BT_TARGETS_OTHER "other"     /* service_name of the series the ones beyond the cap fold into */

struct bt_targets_conf {
	const struct bt_relabel *rules;   /* may be NULL or empty */
	const char *const *env;           /* environment variables to read: __meta_process_env_NAME */
	size_t nenv;
	const struct bt_labels *labels;   /* labels every target starts with (configured); may be NULL */
	const char *fallback_service;     /* service_name when neither rules nor inference give one;
					   * NULL or "": "unspecified", as Alloy */
	const char *proc_root;            /* "" the real /proc */
};

/* The __meta_* labels of what m says of a process into out (emptied first): pid, comm, exe,
 * command line, uid, cgroup path, systemd unit, container id and runtime, Kubernetes pod UID, QoS
 * class and container id, the named environment variables (env[i] as __meta_process_env_NAME).
 * 0 or -ENOMEM. */
int bt_targets_meta(const struct bt_procmeta *m, const char *const *env, size_t nenv, struct bt_labels *out);

/* What a target's labels l (configured labels and metadata) become: relabeled; service_name, when
 * unset, inferred as Alloy does (the pyroscope.io/service_name pod annotation, "ebpf/NAMESPACE/
 * CONTAINER", the docker container's name) or else the fallback; labels starting with "__" and
 * names Pyroscope would refuse dropped, values made safe for a series name (',', '=', braces,
 * quotes, backslashes, blanks, control and non-ASCII bytes become '_'; at most
 * BT_TARGETS_VALUE_MAX bytes). 1 kept, 0 dropped (by rule *by), -ENOMEM. */
int bt_targets_finish(const struct bt_targets_conf *c, struct bt_labels *l, size_t *by);

/* The series text of a finished label set: "name=value,..." in name order; malloc'ed or NULL. */
char *bt_targets_series_text(const struct bt_labels *l);

/* What the session knows of a sampled process, to ask for its target. /proc says what the process
 * is now, which may already be after an exec the sample came before (a shell's child running a
 * script, on the same executable): when the sampled thread's comm in /proc is not the sample's, the
 * sample's own comm and executable are used (and no command line or environment). A known process
 * sampled with a comm not seen with it before is read again (up to BT_TARGET_COMMS comms, the names
 * of its threads): an exec whose record was lost is caught so. */
#define BT_TARGET_COMMS 8
struct bt_target_hint {
	int pid, tid;
	uint64_t cgroup_id;     /* the sample's cgroup; a process moved to another one is a new target
				 * (0: not known, as of off-CPU time without a stack: the target it has) */
	const char *cgroup;     /* its path; NULL: /proc's */
	const char *comm;       /* the sample's comm (its thread's); NULL unknown */
	const char *exe;        /* the process's executable as the session has it; NULL unknown */
};

struct bt_targets_stats {
	uint64_t targets;        /* processes given labels (each once, again after an exec) */
	uint64_t dropped;        /* of those, dropped by a rule */
	uint64_t from_sample;    /* read from the sample, /proc having moved on or the process gone */
};

struct bt_targets {
	struct bt_targets_conf conf;
	struct bt_htab index;     /* pid -> struct target * */
	size_t n;
	char *constant;           /* the series of every process, when no rule can tell them apart */
	char *other;              /* the series of those beyond the cap */
	struct bt_targets_stats st;
};

/* c's pointers are kept: what they point to must outlive t. 0 or -ENOMEM. */
int bt_targets_init(struct bt_targets *t, const struct bt_targets_conf *c);
void bt_targets_free(struct bt_targets *t);

/* The series of process h->pid: 1 with its text in *series (valid until t changes), 0 when the
 * rules drop it, -ENOMEM. Read from /proc and relabeled the first time, remembered after. */
int bt_targets_lookup(struct bt_targets *t, const struct bt_target_hint *h, const char **series);

/* Process pid exec'd or exited: its target is made again when it is next sampled. */
void bt_targets_forget(struct bt_targets *t, int pid);

/* The series text the ones beyond a cap fold into: the configured labels and service_name "other". */
const char *bt_targets_other(const struct bt_targets *t);

#endif
