/* bt_elf.h - finds the GNU build-id note of an ELF image mapped in a task's memory. Only for
 * sleepable programs: bpf_copy_from_user_task may have to fault the pages in. */
#ifndef BT_ELF_H
#define BT_ELF_H

#include "bt_maps.h"

#define BT_ELF_MAX_PHDRS 24  /* program headers looked at */
#define BT_ELF_MAX_NOTES 8   /* notes walked per PT_NOTE segment */
#define BT_PT_NOTE 4
#define BT_NT_GNU_BUILD_ID 3

/* Searches one PT_NOTE segment, [off, end) relative to base, for the GNU build-id note.
 * Returns 1 found (out filled), 0 not there, -1 unreadable. */
static __always_inline int bt_elf_scan_notes(struct task_struct *task, __u64 base, __u64 off,
					     __u64 end, __u64 align, struct bt_bid *out)
{
	for (int j = 0; j < BT_ELF_MAX_NOTES; j++) {
		__u32 nh[4];  /* namesz, descsz, type, and the first 4 name bytes */
		if (off + sizeof(nh) > end)
			return 0;
		if (bpf_copy_from_user_task(nh, sizeof(nh), (void *)(base + off), task, 0))
			return -1;
		__u64 namesz = nh[0], descsz = nh[1];
		/* "GNU\0" as a little-endian word */
		if (nh[2] == BT_NT_GNU_BUILD_ID && namesz == 4 && nh[3] == 0x00554e47) {
			__u32 n = descsz;
			if (n == 0 || n > BT_BUILD_ID_MAX || off + 16 + n > end) {
				out->status = BT_BID_NONE;  /* a build-id this record cannot carry */
				return 1;
			}
			if (bpf_copy_from_user_task(out->id, n, (void *)(base + off + 16), task, 0))
				return -1;
			out->len = n;
			out->status = BT_BID_OK;
			return 1;
		}
		off += 12 + ((namesz + align - 1) & ~(align - 1)) + ((descsz + align - 1) & ~(align - 1));
	}
	return 0;
}

/* Reads the build-id of the ELF image whose first byte is mapped at base in task; limit is how many
 * bytes from base are known to belong to the image. Sets out->status to OK, NONE, NOT_ELF or FAULT. */
static __always_inline void bt_elf_build_id(struct task_struct *task, __u64 base, __u64 limit,
					    struct bt_bid *out)
{
	unsigned char eh[64];
	out->len = 0;
	if (limit < 64 || bpf_copy_from_user_task(eh, sizeof(eh), (void *)base, task, 0)) {
		out->status = limit < 64 ? BT_BID_NOT_ELF : BT_BID_FAULT;
		return;
	}
	if (eh[0] != 0x7f || eh[1] != 'E' || eh[2] != 'L' || eh[3] != 'F') {
		out->status = BT_BID_NOT_ELF;
		return;
	}
	bool is64 = eh[4] == 2;
	/* Only little-endian images occur in an x86 process. */
	if ((eh[4] != 1 && eh[4] != 2) || eh[5] != 1) {
		out->status = BT_BID_NOT_ELF;
		return;
	}
	__u64 phoff;
	__u32 phentsize, phnum;
	if (is64) {
		phoff = *(__u64 *)&eh[32];
		phentsize = *(__u16 *)&eh[54];
		phnum = *(__u16 *)&eh[56];
	} else {
		phoff = *(__u32 *)&eh[28];
		phentsize = *(__u16 *)&eh[42];
		phnum = *(__u16 *)&eh[44];
	}
	out->status = BT_BID_NONE;
	if (phentsize < (is64 ? 56 : 32) || phoff >= limit)
		return;
	for (int i = 0; i < BT_ELF_MAX_PHDRS; i++) {
		if (i >= phnum)
			break;
		__u64 at = phoff + (__u64)i * phentsize;
		__u64 type, offset, filesz, align;
		if (is64) {
			__u64 ph[7];
			if (at + sizeof(ph) > limit)
				break;
			if (bpf_copy_from_user_task(ph, sizeof(ph), (void *)(base + at), task, 0)) {
				out->status = BT_BID_FAULT;
				return;
			}
			type = (__u32)ph[0];
			offset = ph[1];
			filesz = ph[4];
			align = ph[6];
		} else {
			__u32 ph[8];
			if (at + sizeof(ph) > limit)
				break;
			if (bpf_copy_from_user_task(ph, sizeof(ph), (void *)(base + at), task, 0)) {
				out->status = BT_BID_FAULT;
				return;
			}
			type = ph[0];
			offset = ph[1];
			filesz = ph[4];
			align = ph[7];
		}
		if (type != BT_PT_NOTE || offset >= limit)
			continue;
		__u64 end = offset + filesz;
		if (end > limit || end < offset)
			end = limit;
		int r = bt_elf_scan_notes(task, base, offset, end, align == 8 ? 8 : 4, out);
		if (r > 0)
			return;
		if (r < 0) {
			out->status = BT_BID_FAULT;
			return;
		}
	}
}

#endif
