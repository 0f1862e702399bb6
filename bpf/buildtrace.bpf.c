// SPDX-License-Identifier: GPL-2.0
/* buildtrace.bpf.c - the kernel side: cpu-clock stack samples, process lifecycle and executable
 * file mappings of the watched processes, written in order into one ring buffer (bt_proto.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bt_proto.h"
#include "bt_maps.h"
#include "bt_vfs.h"
#include "bt_elf.h"

char LICENSE[] SEC("license") = "GPL";

#define BT_PAGE_SHIFT 12   /* x86 */
#define BT_VM_EXEC 0x4
#define BT_PF_KTHREAD 0x00200000
#define BT_MAX_ERRNO 4095
#define BT_EEXIST 17
/* cs in the perf_event context's registers: the uapi struct pt_regs (15 general registers, orig_ax,
 * ip, then cs), fixed by the ABI. Not read through CO-RE: kernels since 6.9 (FRED) made the
 * kernel's own field a 16-bit union member, which a relocation from that BTF cannot map onto the
 * older kernels' 64-bit one; and the context allows whole-word loads only. */
#define BT_UAPI_REGS_CS (17 * 8)

/* BT_CFG_* bits, set by the loader before load so the verifier drops what is not wanted. */
const volatile __u32 cfg_flags = 0;
/* Bytes of user stack per BT_REC_USTACK record (BT_USTACK_MIN..BT_USTACK_MAX, a multiple of 8). */
const volatile __u32 ustack_bytes = BT_USTACK_BYTES;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);  /* the loader sets the real size */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Thread group ids being watched; the value is unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} watched SEC(".maps");

/* Processes not to sample (BT_CFG_SKIP), written by userspace; and when each last exec'd, so that a
 * process that exec'd after the sample that decided its skipping is sampled again. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct bt_skip);
} skipped SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} exec_at SEC(".maps");

/* Build-ids the iterator read, for the mmap tracepoint, which cannot fault pages in. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct bt_file_key);
	__type(value, struct bt_bid);
} bid_cache SEC(".maps");

/* A mapping record is too big for the stack. Slot 0 serves the tracepoints, slot 1 the vma
 * iterator, which can be preempted by a task that then runs a tracepoint on the same CPU. */
struct bt_scratch {
	struct bt_rec_mapping rec;
	char tmp[2 * BT_PATH_MAX];
	__u32 pos;  /* bt_file_path's write position */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct bt_scratch);
} scratch SEC(".maps");

/* A sample is assembled here, then only its used part is copied into the ring buffer. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_rec_sample);
} sample_buf SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline bool is_watched(__u32 tgid)
{
	if (cfg_flags & BT_CFG_ALL)
		return true;
	return bpf_map_lookup_elem(&watched, &tgid) != NULL;
}

/* A process userspace drops, still in the cgroup and the program it was dropped in. */
static __always_inline bool skip_sample(__u32 tgid)
{
	struct bt_skip *s = bpf_map_lookup_elem(&skipped, &tgid);
	if (!s || s->cgroup_id != bpf_get_current_cgroup_id())
		return false;
	__u64 *exec = bpf_map_lookup_elem(&exec_at, &tgid);
	return !exec || *exec < s->since_ns;
}

static __always_inline void fill_hdr(struct bt_rec_hdr *h, __u16 type, __u32 size)
{
	h->type = type;
	h->version = BT_PROTO_VERSION;
	h->tag = 0;
	h->size = size;
	h->time_ns = bpf_ktime_get_ns();
}

/* Reserves a record of the given type, counting the drop when the ring buffer is full. */
#define RESERVE(ptr, rtype)                                                          \
	({                                                                            \
		ptr = bpf_ringbuf_reserve(&events, sizeof(*(ptr)), 0);               \
		if (ptr)                                                              \
			fill_hdr(&(ptr)->hdr, rtype, sizeof(*(ptr)));                 \
		else                                                                  \
			count(BT_CNT_DROP_BASE + rtype);                              \
		ptr;                                                                  \
	})

#include "bt_python.h"
#include "bt_unwind.h"

/* ---- samples ---------------------------------------------------------------------------- */

struct stack_top {
	__u64 end;
};

static long stack_vma_end(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct stack_top *)data)->end = vma->vm_end;
	return 0;
}

/* The user registers (as they were on entry to the kernel, or at the interrupt) and the top of the
 * user stack, for the unwinder in userspace: ustack_bytes of it, or less near the stack's end,
 * where a read crossing it fails whole. Kernel threads have no user stack. A global function: its
 * locals stay out of the sampler's frame, which with the walk's calls below it must fit, all frames
 * together, in the 512 bytes 6.1's verifier allows. */
__noinline int copy_user_stack(__u32 tgid, __u32 tid, __u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	if (!task->mm)
		return 0;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	/* ustack_bytes is read-only data, a constant for the verifier */
	__u32 size = sizeof(struct bt_rec_ustack) + ustack_bytes;
	struct bt_rec_ustack *u = bpf_ringbuf_reserve(&events, size, 0);
	if (!u) {
		count(BT_CNT_DROP_BASE + BT_REC_USTACK);
		return 0;
	}
	fill_hdr(&u->hdr, BT_REC_USTACK, size);
	u->hdr.time_ns = now;
	u->pid = tgid;
	u->tid = tid;
	u->ip = BPF_CORE_READ(regs, ip);
	u->sp = BPF_CORE_READ(regs, sp);
	u->bp = BPF_CORE_READ(regs, bp);
	u->bx = BPF_CORE_READ(regs, bx);
	u->r12 = BPF_CORE_READ(regs, r12);
	u->r13 = BPF_CORE_READ(regs, r13);
	u->r14 = BPF_CORE_READ(regs, r14);
	u->r15 = BPF_CORE_READ(regs, r15);
	u->pad = 0;
	const void *sp = (const void *)u->sp;
	__u32 len = 0;
	if (bpf_probe_read_user(u->data, ustack_bytes, sp) == 0)
		len = ustack_bytes;
	/* Past the default size, halves would waste most of a large copy: the mapping's end says how
	 * much there is (a lookup costing microseconds in this context, so not for the default). */
	struct stack_top top = { 0 };
	if (!len && ustack_bytes > BT_USTACK_BYTES &&
	    bpf_find_vma(task, u->sp, stack_vma_end, &top, 0) == 0 && top.end > u->sp) {
		__u64 avail = top.end - u->sp;
		__u32 want = avail < ustack_bytes ? (__u32)avail : ustack_bytes;
		if (want <= ustack_bytes && bpf_probe_read_user(u->data, want, sp) == 0)
			len = want;
	}
	if (!len) {
		__u32 failed = ustack_bytes;
#pragma unroll
		for (int i = 1; i < 9; i++) {
			__u32 l = ustack_bytes >> i;
			if (l < BT_USTACK_MIN)
				break;
			if (bpf_probe_read_user(u->data, l, sp) == 0) {
				len = l;
				break;
			}
			failed = l;
		}
		/* Above the default, no lookup: a half loses too much; close in on what there is
		 * between the size that worked and the one that failed, to a sixteenth of it. A failed
		 * read zeroes what it was given, so the size found is read once more at the end. */
		bool zeroed = false;
#pragma unroll
		for (int i = 0; i < 4; i++) {
			if (ustack_bytes <= BT_USTACK_BYTES || !len)
				break;
			__u32 step = (failed - len) / 2;
			__u32 l = len + step;
			if (step < BT_USTACK_MIN / 2 || l > ustack_bytes)
				break;
			if (bpf_probe_read_user(u->data, l, sp) == 0) {
				len = l;
				zeroed = false;
			} else {
				failed = l;
				zeroed = true;
			}
		}
		if (zeroed && (len > ustack_bytes || bpf_probe_read_user(u->data, len, sp) != 0))
			len = 0;
	}
	u->len = len;
	bpf_ringbuf_submit(u, BPF_RB_NO_WAKEUP);
	return 0;
}

/* The current task's stack into rec: its ids, comm and cgroup, its kernel frames (when it is in the
 * kernel, and they are wanted) and its user frames after them, as the configuration asks; the
 * record's length, its header but its time left to the caller. Shared by the sampler and the
 * off-CPU stacks; only the sampler's (cont) leave a BPF walk that stops to userspace (an off-CPU
 * stack is taken at every switch of a new key's thread: it does not copy the stack each time). */
static __always_inline __u32 take_stack(void *ctx, struct bt_rec_sample *rec, __u32 tgid, __u32 tid,
					bool in_kernel, __u64 now, bool cont)
{
	rec->pid = tgid;
	rec->tid = tid;
	rec->hdr.time_ns = now;  /* the time of the records that go with it (stack copies) */
	rec->cpu = bpf_get_smp_processor_id();
	rec->kern_err = 0;
	rec->user_err = 0;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	rec->cgroup_id = bpf_get_current_cgroup_id();
	__u32 kn = 0, un = 0;
	if ((cfg_flags & BT_CFG_KERNEL) && in_kernel) {
		long r = bpf_get_stack(ctx, rec->ips, BT_MAX_STACK * sizeof(__u64), 0);
		if (r < 0)
			rec->kern_err = r;
		else
			kn = r / sizeof(__u64);
	}
	if (cfg_flags & BT_CFG_USER) {
		if (kn > BT_MAX_STACK)
			kn = BT_MAX_STACK;
		barrier_var(kn);
		if (kn <= BT_MAX_STACK) {
			if (cfg_flags & BT_CFG_UNWIND) {
				un = bt_unw_walk(rec, kn, cont);
			} else {
				long r = bpf_get_stack(ctx, &rec->ips[kn], BT_MAX_STACK * sizeof(__u64),
						       BPF_F_USER_STACK);
				if (r < 0)
					rec->user_err = r;
				else
					un = r / sizeof(__u64);
			}
		}
	}
	if (kn > BT_MAX_STACK)
		kn = BT_MAX_STACK;
	/* the BPF walk may use the room the kernel frames left */
	__u64 total = (__u64)kn + un;   /* 64 bits: the bound below holds for the register used */
	if (total > 2 * BT_MAX_STACK)
		total = 2 * BT_MAX_STACK;
	rec->kern_n = kn;
	rec->user_n = total - kn;
	/* Only the frames taken go into the ring: a few hundred bytes instead of the whole array. */
	return offsetof(struct bt_rec_sample, ips) + total * sizeof(__u64);
}

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	/* The idle task is nobody's work, unless idle time is asked for (as perf's swapper). */
	if (tid == 0 ? !((cfg_flags & BT_CFG_IDLE) && (cfg_flags & BT_CFG_ALL)) : !is_watched(tgid))
		return 0;
	if ((cfg_flags & BT_CFG_SKIP) && tid && skip_sample(tgid)) {
		count(BT_CNT_SKIPPED);
		return 0;
	}
	count(BT_CNT_SAMPLES);
	__u64 now = bpf_ktime_get_ns();
	if ((cfg_flags & BT_CFG_DWARF) && tid)
		copy_user_stack(tgid, tid, now);
	if ((cfg_flags & BT_CFG_PYTHON) && tid)
		bt_py_sample(tgid, tid, now);
	__u32 zero = 0;
	struct bt_rec_sample *rec = bpf_map_lookup_elem(&sample_buf, &zero);
	if (!rec)
		return 0;
	/* Interrupted in user mode: there is no kernel stack to walk. */
	__u64 cs = *(volatile __u64 *)((void *)ctx + BT_UAPI_REGS_CS);
	__u32 len = take_stack(ctx, rec, tgid, tid, (cs & 3) == 0, now, true);
	fill_hdr(&rec->hdr, BT_REC_SAMPLE, len);
	rec->hdr.time_ns = now;  /* the time of its user stack record too */
	/* Waking the reader per sample costs a context switch each time on a busy machine; the
	 * reader polls on a timeout instead, and is woken only once the buffer is half full. */
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	if (bpf_ringbuf_output(&events, rec, len,
			       avail > size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		count(BT_CNT_DROP_BASE + BT_REC_SAMPLE);
	return 0;
}

#include "bt_offcpu.h"

/* ---- process lifecycle -------------------------------------------------------------------- */

__noinline int emit_exec_vma_at(__u32 tgid, __u64 addr);

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (cfg_flags & BT_CFG_SKIP) {
		__u64 now = bpf_ktime_get_ns();
		bpf_map_update_elem(&exec_at, &tgid, &now, BPF_ANY);
	}
	if (!is_watched(tgid))
		return 0;
	if (cfg_flags & BT_CFG_PYTHON)
		bt_py_exec(tgid);
	/* The walker's entry describes the old image: until userspace writes the new one, samples
	 * of the process are walked on in userspace. */
	if (cfg_flags & BT_CFG_UNWIND)
		bpf_map_delete_elem(&unw_procs, &tgid);
	struct bt_rec_exec *rec;
	if (!RESERVE(rec, BT_REC_EXEC))
		return 0;
	rec->pid = tgid;
	rec->old_tid = old_pid;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	const char *fn = BPF_CORE_READ(bprm, filename);
	if (bpf_probe_read_kernel_str(rec->filename, sizeof(rec->filename), fn) < 0)
		rec->filename[0] = '\0';
	bpf_ringbuf_submit(rec, 0);
	/* The kernel mapped the program and its interpreter itself, without mmap calls: report their
	 * text now, so that a process gone before its snapshot still has them (with the build-id when
	 * the file was seen before). The interpreter's text holds the entry point exec set up. */
	struct task_struct *cur = bpf_get_current_task_btf();
	unsigned long code = BPF_CORE_READ(cur, mm, start_code);
	if (code)
		emit_exec_vma_at(tgid, code);
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	unsigned long entry = regs ? BPF_CORE_READ(regs, ip) : 0;
	if (entry && (entry < code || entry >= BPF_CORE_READ(cur, mm, end_code)))
		emit_exec_vma_at(tgid, entry);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	/* A new thread is not a new process. */
	if (BPF_CORE_READ(child, pid) != ctgid)
		return 0;
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	if (!is_watched(ptgid))
		return 0;
	if ((cfg_flags & BT_CFG_FOLLOW_FORK) && !(cfg_flags & BT_CFG_ALL)) {
		__u8 one = 1;
		bpf_map_update_elem(&watched, &ctgid, &one, BPF_ANY);
	}
	if (cfg_flags & BT_CFG_PYTHON)
		bt_py_fork(ptgid, ctgid);
	/* A child maps what its parent maps: it is walked with its parent's entry from its first
	 * sample, not only once userspace has read its fork. */
	if (cfg_flags & BT_CFG_UNWIND) {
		struct bt_unw_proc *pp = bpf_map_lookup_elem(&unw_procs, &ptgid);
		if (pp)
			bpf_map_update_elem(&unw_procs, &ctgid, pp, BPF_ANY);
	}
	struct bt_rec_fork *rec;
	if (!RESERVE(rec, BT_REC_FORK))
		return 0;
	rec->parent_pid = ptgid;
	rec->child_pid = ctgid;
	if (bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), parent->comm) < 0)
		rec->comm[0] = '\0';
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

/* Fires for every exiting thread; do_exit has already decremented signal->live, so the thread
 * that sees 0 is the last of its group. Each one's off-CPU entry goes with it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	if (cfg_flags & BT_CFG_OFFCPU)
		bt_offcpu_exit(p);
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (cfg_flags & BT_CFG_SKIP) {  /* the pid may come back as another process */
		bpf_map_delete_elem(&skipped, &tgid);
		bpf_map_delete_elem(&exec_at, &tgid);
	}
	if (!is_watched(tgid))
		return 0;
	if (!(cfg_flags & BT_CFG_ALL))
		bpf_map_delete_elem(&watched, &tgid);
	/* gone with the process, not when userspace reads its exit: the pid may come back */
	if (cfg_flags & BT_CFG_UNWIND)
		bpf_map_delete_elem(&unw_procs, &tgid);
	struct bt_rec_exit *rec;
	if (!RESERVE(rec, BT_REC_EXIT))
		return 0;
	rec->pid = tgid;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

/* ---- mappings ----------------------------------------------------------------------------- */

struct vma_found {
	__u32 found;
};

/* bpf_find_vma callback for a new mapping: fills scratch slot 0 with everything but the header
 * when the vma is an executable file mapping. */
static long mmap_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_found *vf = data;
	__u32 zero = 0;
	struct bt_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct file *file = vma->vm_file;
	if (!s || !file || !(vma->vm_flags & BT_VM_EXEC))
		return 0;
	struct bt_rec_mapping *rec = &s->rec;
	struct bt_file_key key;
	rec->flags = 0;
	rec->start = vma->vm_start;
	rec->end = vma->vm_end;
	rec->pgoff = (__u64)vma->vm_pgoff << BT_PAGE_SHIFT;
	bt_file_identity(file, rec, &key);
	struct bt_bid *b = bpf_map_lookup_elem(&bid_cache, &key);
	if (b && b->status == BT_BID_OK) {
		rec->build_id_status = BT_BID_OK;
		rec->build_id_len = b->len;
		__builtin_memcpy(rec->build_id, b->id, BT_BUILD_ID_MAX);
	} else {
		rec->build_id_status = b ? b->status : BT_BID_PENDING;
		rec->build_id_len = 0;
		__builtin_memset(rec->build_id, 0, BT_BUILD_ID_MAX);
	}
	rec->path_len = bt_file_path(file, s->tmp, &s->pos, rec->path);
	if (!rec->path_len)
		rec->path[0] = '\0';
	vf->found = 1;
	return 0;
}

/* Reports the executable file mapping of the current task containing addr, if there is one. A
 * global function: the verifier checks the vma callback and the path walk nested in it once per
 * program, not once per call site (on_exec has two) and state. */
__noinline int emit_exec_vma_at(__u32 tgid, __u64 addr)
{
	struct vma_found vf = { 0 };
	if (bpf_find_vma(bpf_get_current_task_btf(), addr, mmap_vma_cb, &vf, 0) || !vf.found)
		return 0;
	__u32 zero = 0;
	struct bt_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	fill_hdr(&s->rec.hdr, BT_REC_MMAP, sizeof(s->rec));
	s->rec.pid = tgid;
	s->rec.pad = 0;
	if (bpf_ringbuf_output(&events, &s->rec, sizeof(s->rec), 0))
		count(BT_CNT_DROP_BASE + BT_REC_MMAP);
	return 0;
}

static __always_inline int handle_mmap(unsigned long addr)
{
	if (addr >= (unsigned long)-BT_MAX_ERRNO)
		return 0;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (!is_watched(tgid))
		return 0;
	emit_exec_vma_at(tgid, addr);
	return 0;
}

SEC("tp/syscalls/sys_exit_mmap")
int on_mmap(struct trace_event_raw_sys_exit *ctx)
{
	return handle_mmap(ctx->ret);
}

static long munmap_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_found *vf = data;
	vf->found = vma->vm_file != NULL;
	return 0;
}

static __always_inline int handle_munmap(__u64 addr, __u64 len)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (!is_watched(tgid))
		return 0;
	struct vma_found vf = { 0 };
	struct task_struct *task = bpf_get_current_task_btf();
	if (bpf_find_vma(task, addr, munmap_vma_cb, &vf, 0) || !vf.found)
		return 0;
	struct bt_rec_munmap *rec;
	if (!RESERVE(rec, BT_REC_MUNMAP))
		return 0;
	rec->pid = tgid;
	rec->pad = 0;
	rec->start = addr;
	rec->end = addr + ((len + (1 << BT_PAGE_SHIFT) - 1) & ~((1ULL << BT_PAGE_SHIFT) - 1));
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

SEC("tp/syscalls/sys_enter_munmap")
int on_munmap(struct trace_event_raw_sys_enter *ctx)
{
	return handle_munmap(ctx->args[0], ctx->args[1]);
}

/* The mmap path itself, where the kernel allows BPF trampolines: it runs for mappings made by
 * mmap(2) and by the kernel's own ELF loader, and costs nothing to any other system call. Only
 * executable file mappings are looked at. */
#define BT_PROT_EXEC 0x4

SEC("fexit/vm_mmap_pgoff")
int BPF_PROG(on_vm_mmap, struct file *file, unsigned long addr, unsigned long len, unsigned long prot,
	     unsigned long flag, unsigned long pgoff, unsigned long ret)
{
	if (!file || !(prot & BT_PROT_EXEC))
		return 0;
	return handle_mmap(ret);
}

/* ld.so calls _dl_debug_state around every change of its list of loaded objects (dlopen,
 * dlclose), so that debuggers look again: so does buildtrace, for the libraries a dlclose
 * unmapped, without hooking munmap. */
SEC("uprobe")
int on_dl_state(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (!is_watched(tgid))
		return 0;
	struct bt_rec_exit *rec;
	if (!RESERVE(rec, BT_REC_DLSTATE))
		return 0;
	rec->pid = tgid;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

/* Without tracefs the per-syscall tracepoints cannot be attached; the raw syscall tracepoints,
 * attached by BTF id, can. They fire for every syscall, so the number is checked first, and
 * 32-bit syscalls (other numbers) are left out, as the per-syscall tracepoints leave them out. */
#define BT_NR_MMAP 9
#define BT_NR_MUNMAP 11
#define BT_TS_COMPAT 0x0002

static __always_inline bool native_syscall(struct pt_regs *regs, long nr)
{
	if (BPF_CORE_READ(regs, orig_ax) != nr)
		return false;
	struct task_struct *t = bpf_get_current_task_btf();
	if (bpf_core_field_exists(t->thread_info.status) &&
	    (BPF_CORE_READ(t, thread_info.status) & BT_TS_COMPAT))
		return false;
	return true;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	if (!native_syscall(regs, BT_NR_MMAP))
		return 0;
	return handle_mmap(ret);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	if (id != BT_NR_MUNMAP || !native_syscall(regs, BT_NR_MUNMAP))
		return 0;
	return handle_munmap(BPF_CORE_READ(regs, di), BPF_CORE_READ(regs, si));
}

/* ---- snapshot iterators ------------------------------------------------------------------- */

/* The task_vma iterator holds the target's mmap lock while it runs, and reading the target's
 * memory takes that lock again: with a writer queued in between (an mprotect in another thread)
 * that deadlocks. So a snapshot runs in passes, driven by the loader:
 *   1. vma_snap (snap_pass 0) reports the mappings whose build-id is cached, and queues in
 *      snap_jobs one read per file that is not, with where its ELF header is mapped in which
 *      process;
 *   2. elf_read, a sleepable task iterator holding no mmap lock, does one queued read (elf_req)
 *      per run and leaves the result in bid_cache and snap_fresh;
 *   3. vma_snap (snap_pass 1) reports the mappings read in this round (snap_round), and queues
 *      the files whose chosen process was gone for another round, through another process.
 * Records go into the same ring buffer as the events, so they stay ordered with them. */

/* Set by the loader before each vma_snap run. */
__u32 snap_pass = 0;
__u32 snap_round = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bt_file_key);
	__type(value, struct bt_elf_job);
} snap_jobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bt_file_key);
	__type(value, struct bt_fresh);
} snap_fresh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_elf_req);
} elf_req SEC(".maps");

/* Each record is also announced by one byte of the iterator's output: a read() of it returns after
 * as many records as it has room for, and the loader drains the ring buffer between reads, so a
 * snapshot of many processes needs no ring buffer as large as all of it. */
static __always_inline void emit_vma(struct seq_file *seq, struct bt_rec_mapping *rec,
				     struct vm_area_struct *vma, struct file *file, __u32 tgid,
				     const struct bt_bid *bid)
{
	rec->start = vma->vm_start;
	rec->end = vma->vm_end;
	rec->pgoff = (__u64)vma->vm_pgoff << BT_PAGE_SHIFT;
	rec->build_id_status = bid->status;
	rec->build_id_len = bid->status == BT_BID_OK ? bid->len : 0;
	__builtin_memcpy(rec->build_id, bid->id, BT_BUILD_ID_MAX);
	/* f_path is const in newer kernels; the helper only reads it. */
	long n = bpf_d_path((struct path *)&file->f_path, rec->path, sizeof(rec->path));
	rec->path_len = n > 0 ? n : 0;
	if (n <= 0)
		rec->path[0] = '\0';
	fill_hdr(&rec->hdr, BT_REC_VMA, sizeof(*rec));
	rec->pid = tgid;
	rec->pad = 0;
	if (bpf_ringbuf_output(&events, rec, sizeof(*rec), 0))
		count(BT_CNT_DROP_BASE + BT_REC_VMA);
	else
		bpf_seq_write(seq, "", 1);
}

/* Queues a read of the file's build-id through this vma; false when the vma cannot locate the ELF
 * header or the queue is full. The image starts at the start of a pgoff-0 mapping; for a later
 * segment, where the file would begin if mapped contiguously, the bytes before it belonging to
 * the file. The first job queued for a file wins, and vmas come in address order: the pgoff-0
 * mapping first. */
static __always_inline bool queue_read(struct bt_file_key *key, __u32 tgid, __u64 start, __u64 end,
				       __u64 pgoff, bool exec)
{
	struct bt_elf_job job = { .tgid = tgid };
	if (pgoff == 0) {
		job.base = start;
		job.limit = end - start;
	} else if (exec && pgoff <= start) {
		job.base = start - pgoff;
		job.limit = pgoff;
	} else {
		return false;
	}
	/* Map operations returned int before 6.4, leaving the upper half of the result undefined:
	 * compare 32 bits only. */
	int err = (int)bpf_map_update_elem(&snap_jobs, key, &job, BPF_NOEXIST);
	return !err || err == -BT_EEXIST;
}

SEC("iter/task_vma")
int vma_snap(struct bpf_iter__task_vma *ctx)
{
	struct task_struct *task = ctx->task;
	struct vm_area_struct *vma = ctx->vma;
	if (!task || !vma || (task->flags & BT_PF_KTHREAD))
		return 0;
	__u32 tgid = task->tgid;
	if (!is_watched(tgid))
		return 0;
	struct file *file = vma->vm_file;
	if (!file)
		return 0;
	__u64 start = vma->vm_start, end = vma->vm_end;
	__u64 pgoff = (__u64)vma->vm_pgoff << BT_PAGE_SHIFT;
	bool exec = vma->vm_flags & BT_VM_EXEC;
	__u32 one = 1;
	struct bt_scratch *s = bpf_map_lookup_elem(&scratch, &one);
	if (!s)
		return 0;
	struct bt_rec_mapping *rec = &s->rec;
	struct bt_file_key key;
	rec->flags = BT_MAP_F_SNAPSHOT;
	bt_file_identity(file, rec, &key);

	struct bt_bid bid = { .status = BT_BID_FAULT };
	if (snap_pass == 1) {
		struct bt_fresh *fresh = bpf_map_lookup_elem(&snap_fresh, &key);
		if (!fresh || fresh->round != snap_round)
			return 0;
		if (fresh->bid.status == BT_BID_PENDING) {
			queue_read(&key, tgid, start, end, pgoff, exec);
			return 0;
		}
		if (exec) {
			bid = fresh->bid;
			emit_vma(ctx->meta->seq, rec, vma, file, tgid, &bid);
		}
		return 0;
	}
	struct bt_bid *cached = bpf_map_lookup_elem(&bid_cache, &key);
	if (cached) {
		if (exec) {
			bid = *cached;
			emit_vma(ctx->meta->seq, rec, vma, file, tgid, &bid);
		}
		return 0;
	}
	if (queue_read(&key, tgid, start, end, pgoff, exec) || !exec)
		return 0;  /* pass 3 reports it */
	count(BT_CNT_BID_FAULT);
	emit_vma(ctx->meta->seq, rec, vma, file, tgid, &bid);
	return 0;
}

/* Pass 2: reads the build-id elf_req asks for, from the first thread of the process that still
 * has its memory. */
SEC("iter.s/task")
int elf_read(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 zero = 0;
	struct bt_elf_req *req = bpf_map_lookup_elem(&elf_req, &zero);
	if (!task || !req || req->done || task->tgid != req->job.tgid || !task->mm)
		return 0;
	req->done = 1;
	struct bt_file_key key = req->key;
	struct bt_fresh fresh = { .round = req->round };
	bt_elf_build_id(task, req->job.base, req->job.limit, &fresh.bid);
	if (fresh.bid.status == BT_BID_FAULT)
		count(BT_CNT_BID_FAULT);
	else
		bpf_map_update_elem(&bid_cache, &key, &fresh.bid, BPF_ANY);
	bpf_map_update_elem(&snap_fresh, &key, &fresh, BPF_ANY);
	return 0;
}

/* ---- kernel modules ----------------------------------------------------------------------- */

/* Before 6.4 a module's core image was described by core_layout instead of mem[]. */
struct module_layout___bt {
	void *base;
	unsigned int size;
} __attribute__((preserve_access_index));

struct module___old {
	struct module_layout___bt core_layout;
} __attribute__((preserve_access_index));

/* The sysfs notes directory of a module (kernel/module/sysfs.c) keeps each note section's address
 * in its bin_attribute's private pointer; newer kernels changed this layout, then the build-id is
 * left to userspace (/sys/module/NAME/notes). */
struct module_notes_attrs___bt {
	unsigned int notes;
	struct bin_attribute attrs[];
} __attribute__((preserve_access_index));

#define BT_MOD_MAX_NOTES 4

static __always_inline void module_build_id(struct module *mod, struct bt_rec_module *rec)
{
	struct module_notes_attrs___bt *na = (void *)BPF_CORE_READ(mod, notes_attrs);
	rec->build_id_status = BT_BID_PENDING;
	rec->build_id_len = 0;
	if (!na || !bpf_core_field_exists(na->notes) || !bpf_core_field_exists(na->attrs))
		return;
	__u32 notes = BPF_CORE_READ(na, notes);
	__u64 esz = bpf_core_type_size(struct bin_attribute);
	__u64 first = (__u64)na + bpf_core_field_offset(struct module_notes_attrs___bt, attrs);
	__u64 off_priv = bpf_core_field_offset(struct bin_attribute, private);
	__u64 off_size = bpf_core_field_offset(struct bin_attribute, size);
	for (int i = 0; i < BT_MOD_MAX_NOTES; i++) {
		if (i >= notes)
			break;
		__u64 attr = first + i * esz;
		void *note = NULL;
		__u64 size = 0;
		__u32 nh[4];
		bpf_probe_read_kernel(&note, sizeof(note), (void *)(attr + off_priv));
		bpf_probe_read_kernel(&size, sizeof(size), (void *)(attr + off_size));
		if (!note || size < sizeof(nh) || bpf_probe_read_kernel(nh, sizeof(nh), note))
			continue;
		if (nh[2] != BT_NT_GNU_BUILD_ID || nh[0] != 4 || nh[3] != 0x00554e47)
			continue;
		__u32 n = nh[1];
		if (n == 0 || n > BT_BUILD_ID_MAX || 16 + n > size) {
			rec->build_id_status = BT_BID_NONE;
			return;
		}
		if (bpf_probe_read_kernel(rec->build_id, n, note + 16))
			return;
		rec->build_id_len = n;
		rec->build_id_status = BT_BID_OK;
		return;
	}
}

/* Attached only where the kernel has modules (the loader checks for the tracepoint's BTF). */
SEC("tp_btf/module_load")
int BPF_PROG(on_module_load, struct module *mod)
{
	struct bt_rec_module *rec;
	if (!RESERVE(rec, BT_REC_MODULE))
		return 0;
	struct module___old *old = (void *)mod;
	if (bpf_core_field_exists(mod->mem)) {
		rec->base = (__u64)BPF_CORE_READ(mod, mem[0].base);
		rec->size = BPF_CORE_READ(mod, mem[0].size);
	} else if (bpf_core_field_exists(old->core_layout)) {
		rec->base = (__u64)BPF_CORE_READ(old, core_layout.base);
		rec->size = BPF_CORE_READ(old, core_layout.size);
	} else {
		rec->base = 0;
		rec->size = 0;
	}
	__builtin_memset(rec->pad, 0, sizeof(rec->pad));
	rec->pad2 = 0;
	__builtin_memset(rec->build_id, 0, sizeof(rec->build_id));
	if (bpf_probe_read_kernel_str(rec->name, sizeof(rec->name), mod->name) < 0)
		rec->name[0] = '\0';
	module_build_id(mod, rec);
	bpf_ringbuf_submit(rec, 0);
	return 0;
}
