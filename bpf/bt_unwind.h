/* bt_unwind.h - the user stack walk in BPF from the unwind tables userspace compiles per build-id
 * (src/elf/ehtable.c) and loads into unw_rows and unw_rules, with each process's executable
 * mappings in unw_procs (src/capture/unwtables.c): per frame, the mapping of the pc, its table's
 * row and rule, the caller's CFA, return address and rbp. Code without CFI (JIT code, files
 * without a table to be had) is walked by frame pointer. Where the walk meets a process or a file
 * whose entry or table userspace has not loaded yet, it stops and copies what userspace needs to
 * walk on with the same table once it has it (BT_REC_UCONT): the frame's registers and the stack
 * above it. The sample says how it went (BT_UWALK_*). Frames are written as the kernel's
 * frame-pointer walk writes them: pcs, innermost first. */
#ifndef BT_UNWIND_H
#define BT_UNWIND_H

/* Rows of every loaded table; the loader sizes it (1 when the walk is not used). Mappable:
 * userspace copies a table's rows in, instead of an update per row. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BT_UNW_ROWS_MAX);
	__type(key, __u32);
	__type(value, struct bt_unw_row);
} unw_rows SEC(".maps");

/* The rules rows name, shared by every table (rule 0: no CFI). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BT_UNW_RULES_MAX);
	__type(key, __u32);
	__type(value, struct bt_unw_rule);
} unw_rules SEC(".maps");

/* A continuation is assembled here, in the slot of the CPU it is taken on (too big for the stack,
 * and for a per-CPU map's 32 KiB values), then its used part is output. The loader sets one slot
 * per possible CPU. */
struct bt_unw_cont {
	__u8 buf[sizeof(struct bt_rec_ucont) + BT_UCONT_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_unw_cont);
} unw_cont SEC(".maps");

/* tgid -> its executable mappings and their tables. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct bt_unw_proc);
} unw_procs SEC(".maps");

/* The registers of the frame being walked, and what its step found: scalars only, so that a
 * global function may take them (bt_unw_caller). */
struct bt_unw_regs {
	__u64 pc, sp, bp, bx;
	struct bt_unw_rule row;  /* the rule holding at pc; cfa BT_UNW_NONE: none, frame pointers */
	__u32 flags;             /* BT_UWALK_* */
	__u32 exact;             /* pc is where the thread was (the first frame), not a return address */
	__u32 next_exact;        /* so is the caller's (a signal frame's interrupted pc) */
	__u32 pad;
};

/* Memory no file is mapped at (JIT code), as the kernel told the walk. */
struct bt_unw_anon {
	__u64 start, end;
	__u32 asked;             /* the kernel was asked (it answers once per sample) */
	__u32 pad;
};

struct bt_unw_walk {
	struct bt_unw_regs g;
	__u64 *ips;              /* the sample's frames (2 * BT_MAX_STACK), user ones from base on */
	struct bt_unw_proc *proc;
	__u32 base;              /* kernel frames before the user ones */
	__u32 n;                 /* user frames written */
	struct bt_unw_map last;  /* the mapping of the previous frame: callers are often in it too */
	struct bt_unw_anon anon;
};

/* The search of a process's mappings, a step per bpf_loop round: the verifier checks a step
 * once, with bounds it does not know, instead of following every index into the array it could
 * take. (The search of the rows goes through map lookups, whose keys it does not follow.) */
struct bt_unw_search {
	const struct bt_unw_proc *proc;
	__u64 key;
	__u32 lo, hi;
};

static long bt_unw_map_step(__u64 i, void *ctx)
{
	struct bt_unw_search *s = ctx;
	__u64 lo = s->lo, hi = s->hi;
	if (lo >= hi)
		return 1;
	__u64 mid = lo + (hi - lo) / 2;
	if (mid >= BT_UNW_MAPS_MAX)
		return 1;
	if (s->proc->maps[mid].start <= s->key)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

/* The index of the mapping of p holding pc, or -1. A global function: the search's bpf_loop is
 * then checked once, not again for every state of the walk's own loop it would be nested in
 * (120 times, 5,000 instructions). */
__noinline int bt_unw_map_index(const struct bt_unw_proc *p, __u64 pc)
{
	if (!p)
		return -1;
	struct bt_unw_search s = { .proc = p, .key = pc, .lo = 0, .hi = p->n };
	bpf_loop(8, bt_unw_map_step, &s, 0);   /* 2^8 > BT_UNW_MAPS_MAX */
	__u64 idx = (__u64)s.lo - 1;
	if (s.lo == 0 || idx >= BT_UNW_MAPS_MAX || idx >= p->n || pc >= p->maps[idx].end)
		return -1;
	return (int)idx;
}

/* The mapping holding pc, or NULL. */
static __always_inline const struct bt_unw_map *bt_unw_find_map(const struct bt_unw_proc *p, __u64 pc)
{
	int i = bt_unw_map_index(p, pc);
	barrier_var(i);   /* the compiler knows the bound from the callee; the verifier does not */
	if (i < 0 || i >= BT_UNW_MAPS_MAX)
		return NULL;
	return &p->maps[i];
}

/* The index of the row of the table [lo, hi) holding key (an address relative to the table's
 * base), or -1. A global function: the verifier checks it once, with arguments it knows only by
 * type, instead of once for every state a walk step can reach it in, which took it most of a
 * second for the sampling program. */
__noinline int bt_unw_row_index(__u32 lo, __u32 hi, __u32 key)
{
	__u32 first = lo;
	for (int k = 0; k < BT_UNW_SEARCH_STEPS; k++) {
		if (lo >= hi)
			break;
		__u32 mid = lo + (hi - lo) / 2;
		const struct bt_unw_row *r = bpf_map_lookup_elem(&unw_rows, &mid);
		if (!r)
			return -1;
		if (r->pc <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == first ? -1 : (int)(lo - 1);
}

/* The rule of the row of the table [lo, hi) holding key into *out: 1, or 0 when there is none.
 * A global function, checked once. */
__noinline int bt_unw_find_rule(__u32 lo, __u32 hi, __u32 key, struct bt_unw_rule *out)
{
	int i = bt_unw_row_index(lo, hi, key);
	if (i < 0 || !out)
		return 0;
	__u32 idx = (__u32)i;
	const struct bt_unw_row *r = bpf_map_lookup_elem(&unw_rows, &idx);
	if (!r)
		return 0;
	idx = r->rule;
	const struct bt_unw_rule *rule = bpf_map_lookup_elem(&unw_rules, &idx);
	if (!rule)
		return 0;
	*out = *rule;
	return 1;
}

/* The caller by frame pointer: [rbp] is the caller's rbp, [rbp + 8] the return address. An rbp
 * of 0 marks the outermost frame (the ABI has the entry code clear it: ld.so's entry has no CFI
 * to say so). */
static __always_inline bool bt_unw_fp(struct bt_unw_regs *w, __u64 *cfa, __u64 *ra)
{
	__u64 fr[2];
	if (!w->bp)
		w->flags |= BT_UWALK_DONE;
	if (w->bp < w->sp || bpf_probe_read_user(fr, sizeof(fr), (void *)w->bp))
		return false;
	*cfa = w->bp + 16;
	*ra = fr[1];
	w->bp = fr[0];
	w->flags |= BT_UWALK_FP;
	return true;
}

/* A callee-saved register of the caller by its rule in the callee's row (c: the callee's CFA). */
static __always_inline bool bt_unw_restore(struct bt_unw_regs *w, __u8 kind, __s16 off, __u64 c, __u64 *reg)
{
	if (kind == BT_UNW_RBP_CFA) {
		if (bpf_probe_read_user(reg, sizeof(*reg), (void *)(c + (__s64)off))) {
			w->flags |= BT_UWALK_READ;
			return false;
		}
	} else if (kind == BT_UNW_RBP_LOST) {
		*reg = 0;
	}
	return true;
}

/* Out of a signal trampoline: the interrupted thread's registers from the sigcontext the kernel
 * pushed; its pc is where it was, not a return address. */
static __always_inline bool bt_unw_signal(struct bt_unw_regs *w, const struct bt_unw_rule *r,
					  __u64 *cfa, __u64 *ra)
{
	__u64 sprip[2], bp, bx;
	if (bpf_probe_read_user(sprip, sizeof(sprip), (void *)(w->sp + (__s64)r->cfa_off)) ||
	    bpf_probe_read_user(&bp, sizeof(bp), (void *)(w->sp + (__s64)r->rbp_off)) ||
	    bpf_probe_read_user(&bx, sizeof(bx), (void *)(w->sp + (__s64)r->rbx_off))) {
		w->flags |= BT_UWALK_READ;
		return false;
	}
	*cfa = sprip[0];
	*ra = sprip[1];
	w->bp = bp;
	w->bx = bx;
	w->next_exact = 1;
	return true;
}

/* The caller by a table row; false when the walk ends here (flags say why). */
static __always_inline bool bt_unw_row_step(struct bt_unw_regs *w, const struct bt_unw_rule *r,
					    __u64 *cfa, __u64 *ra)
{
	__u64 c;
	switch (r->cfa) {
	case BT_UNW_CFA_RSP:
		c = w->sp + (__s64)r->cfa_off;
		break;
	case BT_UNW_CFA_RBP:
		c = w->bp + (__s64)r->cfa_off;
		break;
	case BT_UNW_CFA_RBX:
		c = w->bx + (__s64)r->cfa_off;
		break;
	case BT_UNW_CFA_PLT:
		c = w->sp + (__s64)r->cfa_off + ((w->pc & 15) >= (__u64)r->rbp_off ? 8 : 0);
		break;
	case BT_UNW_CFA_DEREF:
		if (bpf_probe_read_user(&c, sizeof(c), (void *)(w->bp + (__s64)r->cfa_off))) {
			w->flags |= BT_UWALK_READ;
			return false;
		}
		break;
	case BT_UNW_SIGNAL:
		return bt_unw_signal(w, r, cfa, ra);
	case BT_UNW_END:
		w->flags |= BT_UWALK_DONE;
		return false;
	default:
		return bt_unw_fp(w, cfa, ra);
	}
	if (!bt_unw_restore(w, r->rbx, r->rbx_off, c, &w->bx))
		return false;
	*cfa = c;
	if (r->rbp == BT_UNW_RBP_CFA && r->rbp_off == -16) {
		/* the usual prologue: rbp pushed right below the return address, one read for both */
		__u64 pair[2];
		if (bpf_probe_read_user(pair, sizeof(pair), (void *)(c - 16))) {
			w->flags |= BT_UWALK_READ;
			return false;
		}
		w->bp = pair[0];
		*ra = pair[1];
		return true;
	}
	if (bpf_probe_read_user(ra, sizeof(*ra), (void *)(c - 8))) {
		w->flags |= BT_UWALK_READ;
		return false;
	}
	return r->cfa == BT_UNW_CFA_PLT || bt_unw_restore(w, r->rbp, r->rbp_off, c, &w->bp);
}

/* One frame up, by the row in g (or by frame pointer): g becomes the caller's registers. 1 when
 * the walk goes on, 0 when it ends here (flags say why). A global function: the verifier checks
 * it once, with registers it knows only by type, instead of once for every state the walk can
 * reach it in (each case of the row times each state of the walk's loop), which took it most of
 * a second for the sampling program. */
__noinline int bt_unw_caller(struct bt_unw_regs *g)
{
	if (!g)
		return 0;
	__u64 cfa = 0, ra = 0;
	struct bt_unw_rule r = g->row;
	bool ok = r.cfa != BT_UNW_NONE ? bt_unw_row_step(g, &r, &cfa, &ra) : bt_unw_fp(g, &cfa, &ra);
	/* The stack grows down: each caller's frame lies above its callee's. */
	if (!ok || cfa <= g->sp || ra == 0)
		return 0;
	g->sp = cfa;
	g->pc = ra;
	g->exact = g->next_exact;
	g->next_exact = 0;
	return 1;
}

struct bt_unw_vma {
	__u64 start, end;
	__u32 file;   /* a file is mapped there, or it is the vDSO: there is CFI to be had */
	__u32 found;
};

static long bt_unw_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct bt_unw_vma *v = data;
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->file = vma->vm_file != NULL || vma->vm_start == (__u64)BPF_CORE_READ(vma, vm_mm, context.vdso);
	v->found = 1;
	return 0;
}

/* What the kernel has at pc, a pc in no mapping userspace described: 1 a file (or the vDSO),
 * whose table userspace can give; 0 anonymous memory (JIT code: frame pointers), its range in v;
 * -1 unknown (the lookup cannot run twice in one sample, or the mm was busy). Inlined in its two
 * (global) callers: the lookup's context must be on the stack, and one frame less keeps the
 * deepest call chain within the 512 bytes of stack that 6.1's verifier allows all frames together. */
static __always_inline int bt_unw_vma_kind(__u64 pc, struct bt_unw_vma *v)
{
	v->found = 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, bt_unw_vma_cb, v, 0) || !v->found)
		return -1;
	return v->file ? 1 : 0;
}

/* Whether a pc in no known mapping is walked by frame pointer (anonymous memory: JIT code): 1; 0
 * when the walk stops there for userspace, which may know the mapping by now (a library just
 * loaded). A global function, checked once. */
__noinline int bt_unw_is_anon(struct bt_unw_anon *a, __u64 pc)
{
	if (!a)
		return 0;
	if (pc >= a->start && pc < a->end)
		return 1;
	if (a->asked)
		return 0;
	a->asked = 1;
	struct bt_unw_vma v = { 0 };
	if (bt_unw_vma_kind(pc, &v) != 0)
		return 0;
	a->start = v.start;
	a->end = v.end;
	return 1;
}

static long bt_unw_step(__u64 i, void *ctx)
{
	struct bt_unw_walk *w = ctx;
	__u32 n = w->n;
	__u64 idx = (__u64)w->base + n;
	if (idx >= 2 * BT_MAX_STACK) {
		w->g.flags |= BT_UWALK_MAX;
		return 1;
	}
	w->ips[idx] = w->g.pc;
	w->n = n + 1;
	__u64 look = w->g.exact ? w->g.pc : w->g.pc - 1;
	const struct bt_unw_map *m = &w->last;
	if (look < m->start || look >= m->end) {
		m = bt_unw_find_map(w->proc, look);
		if (m)
			w->last = *m;
	}
	int found = 0;
	if (!m) {
		w->g.flags |= BT_UWALK_NO_MAP;
		if (!bt_unw_is_anon(&w->anon, look)) {
			w->g.flags |= BT_UWALK_CONT;
			return 1;
		}
	} else if (m->row_lo == m->row_hi && m->row_lo != BT_UNW_NO_CFI) {
		w->g.flags |= BT_UWALK_NO_TABLE | BT_UWALK_CONT;
		return 1;
	} else if (m->row_lo < m->row_hi && look - m->adj <= 0xffffffffULL) {
		found = bt_unw_find_rule(m->row_lo, m->row_hi, (__u32)(look - m->adj), &w->g.row);
	}
	if (!found)
		w->g.row.cfa = BT_UNW_NONE;
	return bt_unw_caller(&w->g) ? 0 : 1;
}

/* The user stack from sp up into data: all of it up to top (where the stack's mapping ends, 0 when
 * unknown) when that fits in BT_UCONT_BYTES; else as much of BT_UCONT_BYTES as can be read (a read
 * crossing the stack's end fails whole: halves are tried). The bytes copied. */
static __always_inline __u32 bt_unw_copy_stack(__u8 *data, __u64 sp, __u64 top)
{
	/* 64-bit sizes: a 32-bit one is checked in a truncated copy of the register it is used in */
	__u64 want = BT_UCONT_BYTES;
	if (top > sp && top - sp < BT_UCONT_BYTES)
		want = top - sp;
	barrier_var(want);
	if (want > BT_UCONT_BYTES)
		return 0;
	if (bpf_probe_read_user(data, want, (const void *)sp) == 0)
		return (__u32)want;
#pragma unroll
	for (int i = 1; i < 8; i++) {
		__u64 l = BT_UCONT_BYTES >> i;
		if (l < want && bpf_probe_read_user(data, l, (const void *)sp) == 0)
			return (__u32)l;
	}
	return 0;
}

/* The continuation of a walk that stopped at g (its last frame written), before the sample. A
 * global function: checked once, not in every state the walk ends in. */
__noinline int bt_unw_cont(const struct bt_unw_regs *g, __u32 tgid, __u32 tid, __u64 now, __u32 vma_asked)
{
	if (!g)
		return 0;
	__u32 cpu = bpf_get_smp_processor_id();
	struct bt_unw_cont *c = bpf_map_lookup_elem(&unw_cont, &cpu);
	if (!c)
		return 0;
	struct bt_rec_ucont *u = (struct bt_rec_ucont *)c->buf;
	/* The stack's end: the main thread's stack starts below its start_stack; another thread's
	 * ends with its mapping, asked of the kernel when the sample has not asked it already (it
	 * answers once per sample). */
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 top = tid == tgid ? BPF_CORE_READ(task, mm, start_stack) : 0;
	struct bt_unw_vma v = { 0 };
	if (!top && !vma_asked && bt_unw_vma_kind(g->sp, &v) >= 0)
		top = v.end;
	__u32 len = bt_unw_copy_stack(c->buf + sizeof(*u), g->sp, top);
	u->hdr.type = BT_REC_UCONT;
	u->hdr.version = BT_PROTO_VERSION;
	u->hdr.tag = 0;
	u->hdr.time_ns = now;
	u->pid = tgid;
	u->tid = tid;
	u->pc = g->pc;
	u->sp = g->sp;
	u->bp = g->bp;
	u->bx = g->bx;
	u->exact = g->exact;
	u->len = len;
	__u32 size = sizeof(*u) + len;
	u->hdr.size = size;
	barrier_var(size);
	if (size > sizeof(*c))
		return 0;
	if (bpf_ringbuf_output(&events, c, size, BPF_RB_NO_WAKEUP))
		count(BT_CNT_DROP_BASE + BT_REC_UCONT);
	return 0;
}

/* Walks the user stack of the current task from its user registers into rec->ips[kn ...], with
 * the tables of process tgid: as deep as the room the kn kernel frames leave (2 * BT_MAX_STACK -
 * kn, more than the kernel's walk takes, for deep recursions). A process without an entry is not
 * walked at all: its first frame and a continuation. The frames written, with the walk's flags in
 * rec->user_err; 0 for a task without user registers. A global function: the verifier checks the
 * walk once, not again for each state the sample reaches it in (24 of them, from the kernel
 * stack's cases). */
__noinline int bt_unw_walk_tables(struct bt_rec_sample *rec, __u32 kn, __u32 cont)
{
	if (!rec)
		return 0;
	__u32 tgid = rec->pid;
	struct bt_unw_proc *proc = bpf_map_lookup_elem(&unw_procs, &tgid);
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = task->mm ? (struct pt_regs *)bpf_task_pt_regs(task) : NULL;
	if (!regs)
		return 0;
	struct bt_unw_walk w = {
		.g = {
			.pc = BPF_CORE_READ(regs, ip),
			.sp = BPF_CORE_READ(regs, sp),
			.bp = BPF_CORE_READ(regs, bp),
			.bx = BPF_CORE_READ(regs, bx),
			.exact = 1,
		},
		.ips = rec->ips,
		.proc = proc,
		.base = kn,
	};
	if (proc) {
		bpf_loop(2 * BT_MAX_STACK, bt_unw_step, &w, 0);
	} else if (kn < 2 * BT_MAX_STACK) {
		rec->ips[kn] = w.g.pc;
		w.n = 1;
		w.g.flags = BT_UWALK_NO_PROC | BT_UWALK_CONT;
	}
	if ((w.g.flags & BT_UWALK_CONT) && cont)
		bt_unw_cont(&w.g, tgid, rec->tid, rec->hdr.time_ns, w.anon.asked);
	else
		w.g.flags &= ~BT_UWALK_CONT;
	rec->user_err = (__s32)w.g.flags;
	return (int)w.n;
}

/* The user frames of the sample in rec (its pid, tid and time set), after its kn kernel ones,
 * walked by the tables; flags into rec->user_err. cont: a walk stopped for a table not loaded yet
 * is left to userspace (BT_REC_UCONT before the sample); else its frames end there. */
static __always_inline __u32 bt_unw_walk(struct bt_rec_sample *rec, __u32 kn, bool cont)
{
	int n = bt_unw_walk_tables(rec, kn, cont);
	barrier_var(n);
	return n >= 0 && n <= 2 * BT_MAX_STACK ? n : 0;
}

#endif
