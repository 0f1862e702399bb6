/* bt_unwind.h - the user stack walk in BPF from the unwind tables userspace compiles per build-id
 * (src/elf/ehtable.c) and loads into unw_rows, with each process's executable mappings in
 * unw_procs (src/capture/unwtables.c): per frame, the mapping of the pc, its table's row, the
 * caller's CFA, return address and rbp. A pc without a table is walked by frame pointer and the
 * sample says so (BT_UWALK_*). Frames are written as the kernel's frame-pointer walk writes them:
 * pcs, innermost first. */
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
	struct bt_unw_row row;   /* the row holding pc; cfa BT_UNW_NONE: none, frame pointers */
	__u32 flags;             /* BT_UWALK_* */
	__u32 exact;             /* pc is where the thread was (the first frame), not a return address */
	__u32 next_exact;        /* so is the caller's (a signal frame's interrupted pc) */
	__u32 pad;
};

struct bt_unw_walk {
	struct bt_unw_regs g;
	__u64 *ips;              /* the sample's frames (2 * BT_MAX_STACK), user ones from base on */
	struct bt_unw_proc *proc;
	__u32 base;              /* kernel frames before the user ones */
	__u32 n;                 /* user frames written */
	struct bt_unw_map last;  /* the mapping of the previous frame: callers are often in it too */
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

/* The row of the table [lo, hi) holding key, or NULL. */
static __always_inline const struct bt_unw_row *bt_unw_find_row(__u32 lo, __u32 hi, __u32 key)
{
	int i = bt_unw_row_index(lo, hi, key);
	if (i < 0)
		return NULL;
	__u32 idx = (__u32)i;
	return bpf_map_lookup_elem(&unw_rows, &idx);
}

/* The caller by frame pointer: [rbp] is the caller's rbp, [rbp + 8] the return address. */
static __always_inline bool bt_unw_fp(struct bt_unw_regs *w, __u64 *cfa, __u64 *ra)
{
	__u64 fr[2];
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
static __always_inline bool bt_unw_signal(struct bt_unw_regs *w, const struct bt_unw_row *r,
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
static __always_inline bool bt_unw_row_step(struct bt_unw_regs *w, const struct bt_unw_row *r,
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
	struct bt_unw_row r = g->row;
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
	const struct bt_unw_row *r = NULL;
	if (!m)
		w->g.flags |= BT_UWALK_NO_MAP;
	else if (m->row_lo == m->row_hi && m->row_lo != BT_UNW_NO_CFI)
		w->g.flags |= BT_UWALK_NO_TABLE;
	else if (m->row_lo < m->row_hi && look - m->adj <= 0xffffffffULL)
		r = bt_unw_find_row(m->row_lo, m->row_hi, (__u32)(look - m->adj));
	if (r)
		w->g.row = *r;
	else
		w->g.row.cfa = BT_UNW_NONE;
	return bt_unw_caller(&w->g) ? 0 : 1;
}

/* Walks the user stack of the current task from its user registers into rec->ips[kn ...], with
 * the tables of process tgid: as deep as the room the kn kernel frames leave (2 * BT_MAX_STACK -
 * kn, more than the kernel's walk takes, for deep recursions). The frames written, with the walk's
 * flags in rec->user_err; -1 when the process has no entry (or no user registers). A global
 * function: the verifier checks the walk once, not again for each state the sample reaches it in
 * (24 of them, from the kernel stack's cases). */
__noinline int bt_unw_walk_tables(struct bt_rec_sample *rec, __u32 tgid, __u32 kn)
{
	if (!rec)
		return -1;
	struct bt_unw_proc *proc = bpf_map_lookup_elem(&unw_procs, &tgid);
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = task->mm ? (struct pt_regs *)bpf_task_pt_regs(task) : NULL;
	if (!proc || !regs)
		return -1;
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
	bpf_loop(2 * BT_MAX_STACK, bt_unw_step, &w, 0);
	rec->user_err = (__s32)w.g.flags;
	return (int)w.n;
}

/* The user frames of the sample in rec, after its kn kernel ones: walked by the tables, or by the
 * kernel's frame-pointer walk for a process without an entry. Flags into rec->user_err. */
static __always_inline __u32 bt_unw_walk(void *ctx, __u32 tgid, struct bt_rec_sample *rec, __u32 kn)
{
	int n = bt_unw_walk_tables(rec, tgid, kn);
	barrier_var(n);
	if (n >= 0)
		return n <= 2 * BT_MAX_STACK ? n : 2 * BT_MAX_STACK;
	rec->user_err = BT_UWALK_NO_PROC;
	if (kn > BT_MAX_STACK)
		return 0;
	long r = bpf_get_stack(ctx, &rec->ips[kn], BT_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
	return r > 0 ? r / sizeof(__u64) : 0;
}

#endif
