/* mapsrc.c - feature probes and record translation for the mapping sources (see mapsrc.h). */
#include "capture/mapsrc.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elffile.h"

const char *bt_mapsrc_name(enum bt_mapsrc s)
{
	switch (s) {
	case BT_MAPSRC_FEXIT:
		return "a BPF program on the mmap path (fexit/vm_mmap_pgoff)";
	case BT_MAPSRC_SIDEBAND:
		return "the kernel's mmap records (a dummy perf event per CPU; build-ids read by BPF)";
	case BT_MAPSRC_SYSCALLS:
		return "the mmap and munmap system call tracepoints";
	}
	return "none";
}

int bt_mapsrc_fexit_works(int id)
{
	if (id < 0)
		return 0;
	/* r0 = 0; exit */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FEXIT,
		    .attach_btf_id = (__u32)id);
	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "bt_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return 0;
	int link = bpf_link_create(fd, 0, BPF_TRACE_FEXIT, NULL);
	close(fd);
	if (link < 0)
		return 0;
	close(link);
	return 1;
}

int bt_mapsrc_mount_tracefs(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0)
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
		return -errno;
	return 0;
}

int bt_mapsrc_interp(const char *exe_path, const char *root, char *buf, size_t len)
{
	struct bt_elf *e;
	char interp[512];
	int err = bt_elf_open_path(exe_path, &e);
	if (err)
		return err;
	err = bt_elf_interp(e, interp, sizeof(interp));
	bt_elf_close(e);
	if (err)
		return err;
	if (interp[0] != '/')
		return -ENOEXEC;
	if ((size_t)snprintf(buf, len, "%s%s", root ? root : "", interp) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int bt_mapsrc_from_sideband(const struct bt_sb_rec *m, union bt_mapsrc_rec *out)
{
	memset(out, 0, sizeof(*out));
	out->hdr.version = BT_PROTO_VERSION;
	out->hdr.time_ns = m->time_ns;
	if (m->anon) {
		out->hdr.type = BT_REC_MUNMAP;
		out->hdr.size = sizeof(out->unmap);
		out->unmap.pid = m->pid;
		out->unmap.start = m->start;
		out->unmap.end = m->start + m->len;
		return BT_REC_MUNMAP;
	}
	struct bt_rec_mapping *r = &out->map;
	r->hdr.type = BT_REC_MMAP;
	r->hdr.size = sizeof(*r);
	r->pid = m->pid;
	r->start = m->start;
	r->end = m->start + m->len;
	r->pgoff = m->pgoff;
	size_t plen = strlen(m->path);
	static const char deleted[] = " (deleted)";
	if (plen >= sizeof(deleted) && !strcmp(m->path + plen - (sizeof(deleted) - 1), deleted)) {
		plen -= sizeof(deleted) - 1;
		r->flags |= BT_MAP_F_DELETED;
	}
	if (plen >= BT_PATH_MAX)
		plen = BT_PATH_MAX - 1;
	memcpy(r->path, m->path, plen);
	r->path[plen] = '\0';
	r->path_len = (uint16_t)(plen + 1);
	r->build_id_status = BT_BID_PENDING;
	r->dev = m->dev;
	r->ino = m->ino;
	return BT_REC_MMAP;
}
