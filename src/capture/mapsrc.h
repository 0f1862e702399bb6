/* mapsrc.h - how a session learns of new executable mappings, chosen when it starts, best first:
 * a BPF program on the mmap path (where the kernel allows BPF trampolines), else the kernel's own
 * mmap records (sideband.h), else the syscall tracepoints, which tax every system call of every
 * process. The helpers here decide and prepare; the loader (capture.c) attaches. */
#ifndef BT_MAPSRC_H
#define BT_MAPSRC_H

#include <stddef.h>
#include "bt_proto.h"
#include "capture/sideband.h"

enum bt_mapsrc {
	BT_MAPSRC_FEXIT = 1,     /* fexit on vm_mmap_pgoff */
	BT_MAPSRC_SIDEBAND,      /* PERF_RECORD_MMAP2 from a dummy perf event per CPU */
	BT_MAPSRC_SYSCALLS,      /* syscalls:sys_exit_mmap, or raw_syscalls without tracefs */
};

/* A short description of the source, for -v. */
const char *bt_mapsrc_name(enum bt_mapsrc s);

/* Whether the kernel loads and attaches an fexit program on the kernel function of BTF id
 * btf_id (< 0: none): tried with a program that does nothing. */
int bt_mapsrc_fexit_works(int btf_id);

/* Mounts tracefs at /sys/kernel/tracing when it is not mounted, as perf does: 0, or -errno. */
int bt_mapsrc_mount_tracefs(void);

/* The program interpreter (ld.so) of the executable at exe_path (e.g. /proc/PID/exe), as an
 * absolute path under root (e.g. /proc/PID/root, or "" for /), into buf. 0 or -errno. */
int bt_mapsrc_interp(const char *exe_path, const char *root, char *buf, size_t len);

/* A kernel mmap record as the ring buffer's records: a file mapping becomes BT_REC_MMAP (its
 * device, inode and path; the build-id BT_BID_PENDING, for the caller to find), anonymous
 * executable memory a BT_REC_MUNMAP of its range (what was mapped there before is gone). Returns
 * the record type written into *out. */
union bt_mapsrc_rec {
	struct bt_rec_hdr hdr;
	struct bt_rec_mapping map;
	struct bt_rec_munmap unmap;
};
int bt_mapsrc_from_sideband(const struct bt_sb_rec *m, union bt_mapsrc_rec *out);

#endif
