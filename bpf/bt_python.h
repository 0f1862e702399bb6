/* bt_python.h - the sampler's walk of CPython's own frame chain: for a process userspace found to
 * run an interpreter (py_procs), the sampled thread's thread state (found by its thread id, or by
 * its thread pointer before 3.11, in the interpreters' thread lists, then remembered), and from its
 * current frame outwards each frame's code object and instruction, into a BT_REC_PYSTACK record.
 * The layouts of 3.8 to 3.13 differ in offsets and in three ways the loader's flags say: how a
 * thread state names its thread, whether its frame is reached through a _PyCFrame, and how a C call
 * of the eval loop is marked in the chain. Bounded in threads and frames; a read that fails (a page
 * not resident) ends the walk, and the record says so.
 * Included by buildtrace.bpf.c after its ring buffer, counters and record helpers. */
#ifndef BT_PYTHON_H
#define BT_PYTHON_H

#define BT_PY_MAX_THREADS 256            /* thread states looked at to find a thread's */
#define BT_PY_RETRY_NS 100000000ULL      /* a thread without one is looked for again after this */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct bt_py_proc);
} py_procs SEC(".maps");

/* A thread's thread state as last found (0: none, as of checked_ns), keyed by its tid. */
struct bt_py_thread {
	__u64 tstate;
	__u64 checked_ns;
	__u32 tgid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct bt_py_thread);
} py_threads SEC(".maps");

struct bt_py_scratch {
	struct bt_rec_pystack rec;
	__u8 frame[BT_PY_FRAME_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_py_scratch);
} py_scratch SEC(".maps");

static __always_inline int bt_py_read(__u64 *v, __u64 addr)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/* The task's thread id in its own pid namespace: what CPython's native_thread_id holds. */
static __always_inline __u32 bt_py_ns_tid(struct task_struct *task)
{
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = { 0 };
	__u64 at = (__u64)pid + bpf_core_field_offset(struct pid, numbers) +
		   (__u64)level * bpf_core_type_size(struct upid);
	if (bpf_probe_read_kernel(&up, sizeof(up), (const void *)at))
		return 0;
	return up.nr;
}

/* The search of the interpreters' thread lists for a thread, and the walk of a frame chain, a
 * step per bpf_loop round: the verifier checks a step until it sees nothing new, instead of
 * following each of the rounds a bounded loop could take from each state of the sampling program
 * (76,000 instructions of the verifier's, most of the sampler's). */
struct bt_py_tsearch {
	const struct bt_py_proc *p;
	__u64 interp, ts, found;
	__u64 want;     /* the thread's id as its thread state holds it */
	int err;
};

static long bt_py_thread_step(__u64 i, void *ctx)
{
	struct bt_py_tsearch *t = ctx;
	const struct bt_py_proc *p = t->p;
	if (!t->interp)
		return 1;
	if (!t->ts) {  /* the next interpreter's threads */
		if (bt_py_read(&t->interp, t->interp + p->interp_next) || !t->interp ||
		    bt_py_read(&t->ts, t->interp + p->interp_threads_head))
			return 1;
		return 0;
	}
	__u64 id = 0;
	if (bt_py_read(&id, t->ts + p->ts_tid)) {
		t->err = BT_PY_WALK_FAULT;
		return 1;
	}
	if (id == t->want) {
		t->found = t->ts;
		return 1;
	}
	if (bt_py_read(&t->ts, t->ts + p->ts_next)) {
		t->err = BT_PY_WALK_FAULT;
		return 1;
	}
	return 0;
}

/* What the current thread's thread state holds as its id: the thread id in its own pid namespace
 * (native_thread_id), or before 3.11 pthread_self() (thread_id), the thread pointer, which is the
 * fs base on x86_64. */
static __always_inline __u64 bt_py_want(const struct bt_py_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	if (p->flags & BT_PY_F_PTHREAD_TID)
		return BPF_CORE_READ(task, thread.fsbase);
	return bt_py_ns_tid(task);
}

/* The thread state of the thread whose id is want: BT_PY_WALK_DONE with *out set, or why not. */
static __always_inline int bt_py_tstate(const struct bt_py_proc *p, __u32 tgid, __u32 tid, __u64 want,
					__u64 now, __u64 *out)
{
	struct bt_py_thread *t = bpf_map_lookup_elem(&py_threads, &tid);
	if (t && t->tgid == tgid) {
		__u64 id = 0;
		if (t->tstate && !bt_py_read(&id, t->tstate + p->ts_tid) && id == want) {
			*out = t->tstate;
			return BT_PY_WALK_DONE;
		}
		if (!t->tstate && now - t->checked_ns < BT_PY_RETRY_NS)
			return BT_PY_WALK_NO_THREAD;
	}
	__u64 interp = 0, ts = 0, found = 0;
	if (bt_py_read(&interp, p->interp_head))
		return BT_PY_WALK_FAULT;
	if (interp && bt_py_read(&ts, interp + p->interp_threads_head))
		return BT_PY_WALK_FAULT;
	bool started = ts != 0;
	struct bt_py_tsearch srch = { .p = p, .interp = interp, .ts = ts, .want = want };
	bpf_loop(BT_PY_MAX_THREADS, bt_py_thread_step, &srch, 0);
	if (srch.err)
		return srch.err;
	found = srch.found;
	/* An interpreter that has no thread yet (it is starting) is asked again at the next sample. */
	if (!found && !started)
		return BT_PY_WALK_NO_THREAD;
	struct bt_py_thread nt = { .tstate = found, .checked_ns = now, .tgid = tgid };
	bpf_map_update_elem(&py_threads, &tid, &nt, BPF_ANY);
	if (!found)
		return BT_PY_WALK_NO_THREAD;
	*out = found;
	return BT_PY_WALK_DONE;
}

struct bt_py_fwalk {
	const struct bt_py_proc *p;
	struct bt_py_scratch *s;
	__u64 frame;
	__u32 n;
	int walk;
};

static __always_inline int bt_py_stop(struct bt_py_fwalk *w, int walk)
{
	w->walk = walk;
	return 1;
}

static long bt_py_frame_step(__u64 i, void *ctx)
{
	struct bt_py_fwalk *w = ctx;
	const struct bt_py_proc *p = w->p;
	struct bt_py_scratch *s = w->s;
	if (!w->frame)
		return bt_py_stop(w, BT_PY_WALK_DONE);
	/* checked by the loader too; here for the verifier */
	__u32 fc = p->frame_code, fp = p->frame_previous, fi = p->frame_instr, fe = p->frame_entry;
	__u32 fb = p->frame_bytes, n = w->n;
	if (fc > BT_PY_FRAME_BYTES - 8 || fp > BT_PY_FRAME_BYTES - 8 || fi > BT_PY_FRAME_BYTES - 8 ||
	    fe > BT_PY_FRAME_BYTES - 1 || fb > BT_PY_FRAME_BYTES || n > BT_PY_MAX_FRAMES)
		return bt_py_stop(w, BT_PY_WALK_FAULT);
	if (bpf_probe_read_user(s->frame, fb, (const void *)w->frame))
		return bt_py_stop(w, BT_PY_WALK_FAULT);
	__u64 code, instr;
	__u8 entry = s->frame[fe];
	__builtin_memcpy(&code, s->frame + fc, 8);
	__builtin_memcpy(&instr, s->frame + fi, 8);
	__builtin_memcpy(&w->frame, s->frame + fp, 8);
	if (p->entry == BT_PY_ENTRY_OWNER && entry == p->entry_owner) {
		/* a C call's own entry frame: the frame inner to it is the first that call ran */
		if (n > 0 && n <= BT_PY_MAX_FRAMES)
			s->rec.frames[n - 1].is_entry = 1;
		return 0;
	}
	if (n >= BT_PY_MAX_FRAMES) {
		w->frame = 1;  /* a frame is left out */
		return bt_py_stop(w, BT_PY_WALK_TRUNCATED);
	}
	struct bt_py_frame *f = &s->rec.frames[n];
	f->code = code;
	f->is_entry = p->entry == BT_PY_ENTRY_EVERY || (p->entry == BT_PY_ENTRY_FLAG && entry);
	if (p->flags & BT_PY_F_INSTR_PTR) {
		/* the byte offset into the instructions, which cannot be past 2 GiB */
		__s64 off = (__s64)(instr - code - p->code_adaptive);
		f->instr = off < -0x40000000LL || off > 0x40000000LL ? -1 : (__s32)off;
	} else {
		f->instr = (__s32)instr;
	}
	if (bt_py_read(&f->tag, code + p->code_tag))
		return bt_py_stop(w, BT_PY_WALK_FAULT);
	w->n = n + 1;
	return 0;
}

/* From the thread state's current frame outwards, into s->rec.frames; *n frames read. */
static __always_inline int bt_py_frames(const struct bt_py_proc *p, __u64 ts, struct bt_py_scratch *s,
					__u32 *n)
{
	__u64 frame = 0;
	if (bt_py_read(&frame, ts + p->ts_frame))
		return BT_PY_WALK_FAULT;
	if ((p->flags & BT_PY_F_CFRAME) && frame && bt_py_read(&frame, frame + p->cframe_current))
		return BT_PY_WALK_FAULT;
	if (!frame)
		return BT_PY_WALK_IDLE;
	struct bt_py_fwalk w = { .p = p, .s = s, .frame = frame, .walk = -1 };
	/* room for an entry frame between every two frames (3.12+) */
	bpf_loop(2 * BT_PY_MAX_FRAMES, bt_py_frame_step, &w, 0);
	*n = w.n;
	if (w.walk >= 0)
		return w.walk;
	return w.frame ? BT_PY_WALK_TRUNCATED : BT_PY_WALK_DONE;
}

/* A forked child runs its parent's interpreter from its first instruction: walked from then on,
 * without waiting for userspace to say so. */
static __always_inline void bt_py_fork(__u32 parent, __u32 child)
{
	struct bt_py_proc *p = bpf_map_lookup_elem(&py_procs, &parent);
	if (p)
		bpf_map_update_elem(&py_procs, &child, p, BPF_ANY);
}

/* exec replaced the image: its interpreter, if any, is gone. */
static __always_inline void bt_py_exec(__u32 tgid)
{
	bpf_map_delete_elem(&py_procs, &tgid);
}

/* The Python frames of the current thread into the per-CPU scratch record, when its process runs
 * an interpreter userspace knows: the record's length (0: none) and where it is. */
static __always_inline __u32 bt_py_walk(__u32 tgid, __u32 tid, __u64 now, struct bt_rec_pystack **out)
{
	struct bt_py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!p)
		return 0;
	__u32 zero = 0;
	struct bt_py_scratch *s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s)
		return 0;
	__u64 ts = 0;
	__u32 n = 0;
	int walk = bt_py_tstate(p, tgid, tid, bt_py_want(p), now, &ts);
	if (walk == BT_PY_WALK_DONE)
		walk = bt_py_frames(p, ts, s, &n);
	if (n > BT_PY_MAX_FRAMES)
		return 0;
	struct bt_rec_pystack *r = &s->rec;
	r->pid = tgid;
	r->tid = tid;
	r->n = n;
	r->walk = walk;
	r->pad = 0;
	__u32 len = offsetof(struct bt_rec_pystack, frames) + n * sizeof(struct bt_py_frame);
	fill_hdr(&r->hdr, BT_REC_PYSTACK, len);
	r->hdr.time_ns = now;
	*out = r;
	return len;
}

/* The Python frames of the current thread, when its process runs an interpreter userspace knows. */
static __always_inline void bt_py_sample(__u32 tgid, __u32 tid, __u64 now)
{
	struct bt_rec_pystack *r = NULL;
	__u32 len = bt_py_walk(tgid, tid, now, &r);
	if (len && r && bpf_ringbuf_output(&events, r, len, BPF_RB_NO_WAKEUP))
		count(BT_CNT_DROP_BASE + BT_REC_PYSTACK);
}

#endif
