/* bt_elf.h - finds the GNU build-id note of an ELF image mapped in a task's memory. Only for
 * sleepable programs: bpf_copy_from_user_task may have to fault the pages in. */
#ifndef BT_ELF_H
#define BT_ELF_H

#include "bt_maps.h"

#define BT_ELF_MAX_PHDRS 24  /* program headers looked at */
#define BT_ELF_MAX_NOTES 8   /* notes walked per PT_NOTE segment */
#define BT_PT_NOTE 4
#define BT_NT_GNU_BUILD_ID 3

/* One PT_NOTE segment's walk, [off, end) relative to base: a note per bpf_loop round. found: 1 the
 * GNU build-id note was found (out filled), -1 the memory could not be read. */
struct bt_note_walk {
	struct task_struct *task;
	__u64 base, off, end, align;
	struct bt_bid *out;
	int found;
};

static long bt_elf_note(__u64 i, void *ctx)
{
	struct bt_note_walk *w = ctx;
	__u32 nh[4];  /* namesz, descsz, type, and the first 4 name bytes */
	if (w->off + sizeof(nh) > w->end)
		return 1;
	if (bpf_copy_from_user_task(nh, sizeof(nh), (void *)(w->base + w->off), w->task, 0)) {
		w->found = -1;
		return 1;
	}
	__u64 namesz = nh[0], descsz = nh[1];
	/* "GNU\0" as a little-endian word */
	if (nh[2] == BT_NT_GNU_BUILD_ID && namesz == 4 && nh[3] == 0x00554e47) {
		__u32 n = descsz;
		w->found = 1;
		if (n == 0 || n > BT_BUILD_ID_MAX || w->off + 16 + n > w->end) {
			w->out->status = BT_BID_NONE;  /* a build-id this record cannot carry */
			return 1;
		}
		if (bpf_copy_from_user_task(w->out->id, n, (void *)(w->base + w->off + 16), w->task, 0)) {
			w->found = -1;
			return 1;
		}
		w->out->len = n;
		w->out->status = BT_BID_OK;
		return 1;
	}
	w->off += 12 + ((namesz + w->align - 1) & ~(w->align - 1)) + ((descsz + w->align - 1) & ~(w->align - 1));
	return 0;
}

/* Searches one PT_NOTE segment, [off, end) relative to base, for the GNU build-id note.
 * Returns 1 found (out filled), 0 not there, -1 unreadable. */
static __always_inline int bt_elf_scan_notes(struct task_struct *task, __u64 base, __u64 off,
					     __u64 end, __u64 align, struct bt_bid *out)
{
	struct bt_note_walk w = { .task = task, .base = base, .off = off, .end = end, .align = align,
				  .out = out };
	bpf_loop(BT_ELF_MAX_NOTES, bt_elf_note, &w, 0);
	return w.found;
}

/* The program header walk, one header per bpf_loop round. It only notes where the PT_NOTE
 * segments are; their notes are walked after it, each by a loop of its own. A note walk nested in
 * this one made the verifier check it again in every state of the outer round (21,600
 * instructions and 40 ms at each start). The first three PT_NOTE segments are kept. */
struct bt_phdr_walk {
	struct task_struct *task;
	__u64 base, limit, phoff;
	__u32 phentsize, phnum;
	bool is64;
	int fault;
	__u32 nseg;
	__u64 off0, end0, align0, off1, end1, align1, off2, end2, align2;
};

/* bpf_loop callback for program header i: 1 ends the walk. */
static long bt_elf_phdr(__u64 i, void *ctx)
{
	struct bt_phdr_walk *w = ctx;
	if (i >= w->phnum)
		return 1;
	__u64 at = w->phoff + i * w->phentsize;
	__u64 type, offset, filesz, align;
	if (w->is64) {
		__u64 ph[7];
		if (at + sizeof(ph) > w->limit)
			return 1;
		if (bpf_copy_from_user_task(ph, sizeof(ph), (void *)(w->base + at), w->task, 0)) {
			w->fault = 1;
			return 1;
		}
		type = (__u32)ph[0];
		offset = ph[1];
		filesz = ph[4];
		align = ph[6];
	} else {
		__u32 ph[8];
		if (at + sizeof(ph) > w->limit)
			return 1;
		if (bpf_copy_from_user_task(ph, sizeof(ph), (void *)(w->base + at), w->task, 0)) {
			w->fault = 1;
			return 1;
		}
		type = ph[0];
		offset = ph[1];
		filesz = ph[4];
		align = ph[7];
	}
	if (type != BT_PT_NOTE || offset >= w->limit)
		return 0;
	__u64 end = offset + filesz;
	if (end > w->limit || end < offset)
		end = w->limit;
	align = align == 8 ? 8 : 4;
	if (w->nseg == 0) {
		w->off0 = offset, w->end0 = end, w->align0 = align;
	} else if (w->nseg == 1) {
		w->off1 = offset, w->end1 = end, w->align1 = align;
	} else {
		w->off2 = offset, w->end2 = end, w->align2 = align;
		return 1;  /* no room for more */
	}
	w->nseg++;
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
	struct bt_phdr_walk w = { .task = task, .base = base, .limit = limit, .phoff = phoff,
				  .phentsize = phentsize, .phnum = phnum, .is64 = is64 };
	bpf_loop(BT_ELF_MAX_PHDRS, bt_elf_phdr, &w, 0);
	int r = 0;
	if (w.nseg > 0)
		r = bt_elf_scan_notes(task, base, w.off0, w.end0, w.align0, out);
	if (r == 0 && w.nseg > 1)
		r = bt_elf_scan_notes(task, base, w.off1, w.end1, w.align1, out);
	if (r == 0 && w.nseg > 2)
		r = bt_elf_scan_notes(task, base, w.off2, w.end2, w.align2, out);
	/* A header that could not be read leaves NONE unproven, unless the build-id was found. */
	if (r < 0 || (r == 0 && w.fault))
		out->status = BT_BID_FAULT;
}

#endif
