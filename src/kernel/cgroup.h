/* cgroup.h - control groups (v2) as samples name them: the path of a cgroup id (what BPF's
 * bpf_get_current_cgroup_id gives), and what a cgroup path says in the forms systemd, container
 * runtimes and the kubelet name their cgroups: the unit, the container id, the pod. */
#ifndef BT_CGROUP_H
#define BT_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* Where the cgroup2 hierarchy is mounted, from ROOT/proc/self/mountinfo (the first cgroup2 mount:
 * /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid systems), into buf. 0, -ENOENT or -errno. */
int bt_cgroup_mount(const char *root, char *buf, size_t len);

/* The path of cgroup id, relative to the cgroup2 mount at mount (from bt_cgroup_mount): "/" for
 * the root, "/system.slice/cron.service" ..., into buf. Opens the cgroup by its id (a kernfs file handle),
 * which needs CAP_DAC_READ_SEARCH, and never follows a path given by anyone else. 0, -ENOENT (no such
 * cgroup: it went away), -ENAMETOOLONG or -errno. */
int bt_cgroup_path(const char *mount, uint64_t id, char *buf, size_t len);

#define BT_CONTAINER_ID_LEN 64

/* The container id in a cgroup path: the last path component that is 64 hex digits alone (the
 * cgroupfs drivers: /docker/ID, /kubepods/burstable/podUID/ID) or after docker-, cri-containerd-,
 * crio- or libpod- with an optional .scope (the systemd drivers: docker-ID.scope, crio-ID.scope,
 * libpod-ID.scope, cri-containerd-ID.scope); a runtime's monitor (crio-conmon-ID, libpod-conmon-ID)
 * is not its container. The id (lowercase hex, NUL-terminated) into out, which holds
 * BT_CONTAINER_ID_LEN + 1 bytes; the runtime ("docker", "containerd", "crio", "podman", or "" for a
 * bare id) into *runtime when it is not NULL. 0, or -ENOENT when the path names no container. */
int bt_cgroup_container_id(const char *path, char out[BT_CONTAINER_ID_LEN + 1], const char **runtime);

/* The systemd unit a cgroup path names, as systemd itself reads one: the first component after the
 * slices (components ending in .slice) when it is a unit name ("cron.service", "session-2.scope",
 * "user@1000.service"), into buf. 0, -ENOENT (no unit: a slice, "/", a path systemd did not make) or
 * -ENAMETOOLONG. */
int bt_cgroup_systemd_unit(const char *path, char *buf, size_t len);

/* A Kubernetes pod as the kubelet names its cgroup: with the systemd driver
 * kubepods[-QOS]-pod<UID, '-' as '_'>.slice, with the cgroupfs driver /kubepods[/QOS]/pod<UID>
 * (QOS burstable or besteffort; none: guaranteed); the kubelet's own prefix before "kubepods" is
 * allowed (kubelet-kubepods-...). */
struct bt_kubepod {
	char uid[65];        /* the pod's UID as the API server writes it (with '-') */
	const char *qos;     /* "guaranteed", "burstable" or "besteffort" */
};
/* The pod whose cgroup path is at or above path into out: 0 or -ENOENT. */
int bt_cgroup_kubepod(const char *path, struct bt_kubepod *out);

#endif
