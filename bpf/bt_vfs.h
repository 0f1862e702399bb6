/* bt_vfs.h - what the BPF programs learn about a mapped file without sleeping: its identity
 * (device, inode, mtime, size, link count) and a best-effort path rebuilt from the dentry chain. */
#ifndef BT_VFS_H
#define BT_VFS_H

#include "bt_maps.h"

/* i_mtime moved twice: a timespec64 before 6.6, __i_mtime in 6.6..6.10, split into
 * i_mtime_sec/i_mtime_nsec since 6.11 (the layout vmlinux.h has). */
struct inode___mtime_ts {
	struct timespec64 i_mtime;
} __attribute__((preserve_access_index));

struct inode___mtime_priv {
	struct timespec64 __i_mtime;
} __attribute__((preserve_access_index));

static __always_inline __u64 bt_inode_mtime_ns(struct inode *inode)
{
	if (bpf_core_field_exists(inode->i_mtime_sec))
		return (__u64)BPF_CORE_READ(inode, i_mtime_sec) * 1000000000ULL +
		       BPF_CORE_READ(inode, i_mtime_nsec);
	struct inode___mtime_priv *p = (void *)inode;
	if (bpf_core_field_exists(p->__i_mtime))
		return (__u64)BPF_CORE_READ(p, __i_mtime.tv_sec) * 1000000000ULL +
		       BPF_CORE_READ(p, __i_mtime.tv_nsec);
	struct inode___mtime_ts *o = (void *)inode;
	if (bpf_core_field_exists(o->i_mtime))
		return (__u64)BPF_CORE_READ(o, i_mtime.tv_sec) * 1000000000ULL +
		       BPF_CORE_READ(o, i_mtime.tv_nsec);
	return 0;
}

/* Fills the identity fields of a mapping record and the cache key from the mapped file. */
static __always_inline void bt_file_identity(struct file *file, struct bt_rec_mapping *rec,
					     struct bt_file_key *key)
{
	struct inode *inode = BPF_CORE_READ(file, f_inode);
	rec->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	rec->ino = BPF_CORE_READ(inode, i_ino);
	rec->mtime_ns = bt_inode_mtime_ns(inode);
	rec->file_size = BPF_CORE_READ(inode, i_size);
	if (BPF_CORE_READ(inode, i_nlink) == 0)
		rec->flags |= BT_MAP_F_DELETED;
	key->ino = rec->ino;
	key->mtime_ns = rec->mtime_ns;
	key->dev = rec->dev;
	key->pad = 0;
}

/* Components walked at most (mount crossings included): deep enough for ordinary library paths,
 * small enough for the verifier. */
#define BT_PATH_WALK 24
#define BT_PATH_MASK (BT_PATH_MAX - 1)
_Static_assert((BT_PATH_MAX & BT_PATH_MASK) == 0, "BT_PATH_MAX must be a power of two");

/* The walk from a dentry up to the root, one component per bpf_loop round; the write position
 * lives in map memory (*pos), not in a register, so the verifier sees an unknown bounded value
 * each round instead of following every combination of name lengths. */
struct bt_path_walk {
	struct dentry *d;
	struct mount *mnt;
	char *tmp;
	__u32 *pos;
	bool complete;
};

static long bt_path_step(__u64 i, void *ctx)
{
	struct bt_path_walk *w = ctx;
	volatile __u32 *vpos = w->pos;
	struct dentry *d = w->d;
	struct mount *mnt = w->mnt;
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	struct dentry *mroot = BPF_CORE_READ(mnt, mnt.mnt_root);
	if (d == mroot || d == parent) {
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);
		/* A filesystem root that is not its mount's root is a disconnected dentry. */
		if (d != mroot || up == mnt || !up) {
			w->complete = d == mroot;
			return 1;
		}
		w->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = up;
		return 0;
	}
	__u32 len = BPF_CORE_READ(d, d_name.len);
	const unsigned char *name = BPF_CORE_READ(d, d_name.name);
	__u32 pos = *vpos;
	if (len == 0 || len >= BT_PATH_MAX || pos > BT_PATH_MASK || len + 1 > pos)
		return 1;
	pos -= len;
	bpf_probe_read_kernel(&w->tmp[pos & BT_PATH_MASK], len & BT_PATH_MASK, name);
	pos--;
	w->tmp[pos & BT_PATH_MASK] = '/';
	*vpos = pos;
	w->d = parent;
	return 0;
}

/* Rebuilds the path of file into out (BT_PATH_MAX bytes) using tmp (2 * BT_PATH_MAX bytes) as the
 * place where components are prepended. Mount points are crossed like d_path does. When the walk
 * stops early (too deep, too long, disconnected) the result is the known suffix without a leading
 * '/', so it never looks like a complete absolute path. Returns bytes in out, NUL included, or 0. */
static __always_inline __u16 bt_file_path(struct file *file, char *tmp, __u32 *posp, char *out)
{
	struct vfsmount *vmnt = BPF_CORE_READ(file, f_path.mnt);
	struct bt_path_walk w = {
		.d = BPF_CORE_READ(file, f_path.dentry),
		.mnt = (void *)((char *)vmnt - bpf_core_field_offset(struct mount, mnt)),
		.tmp = tmp,
		.pos = posp,
	};
	*posp = BT_PATH_MASK;
	tmp[BT_PATH_MASK] = '\0';
	bpf_loop(BT_PATH_WALK, bt_path_step, &w, 0);
	__u32 pos = *(volatile __u32 *)posp;
	if (pos >= BT_PATH_MASK) {
		/* Nothing gathered: the file is its mount's root, or the walk failed at once. */
		if (!w.complete)
			return 0;
		pos = BT_PATH_MASK - 1;
		tmp[pos] = '/';
	} else if (!w.complete) {
		pos++;
	}
	long n = bpf_probe_read_kernel_str(out, BT_PATH_MAX, &tmp[pos & BT_PATH_MASK]);
	return n > 0 ? (__u16)n : 0;
}

#endif
