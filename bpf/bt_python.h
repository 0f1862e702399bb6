/* bt_python.h - the sampler's walk of CPython's own frame chain: for a process userspace found to
 * run an interpreter (py_procs), the sampled thread's thread state (found by its thread id in the
 * interpreters' thread lists, then remembered), and from its current frame outwards each frame's
 * code object and instruction, into a BT_REC_PYSTACK record. Bounded in threads and frames; a
 * read that fails (a page not resident) ends the walk, and the record says so.
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
	__u32 nstid;
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
	__u64 ntid = 0;
	if (bt_py_read(&ntid, t->ts + p->ts_native_tid)) {
		t->err = BT_PY_WALK_FAULT;
		return 1;
	}
	if (ntid == t->nstid) {
		t->found = t->ts;
		return 1;
	}
	if (bt_py_read(&t->ts, t->ts + p->ts_next)) {
		t->err = BT_PY_WALK_FAULT;
		return 1;
	}
	return 0;
}

/* The thread state of thread nstid: BT_PY_WALK_DONE with *out set, or why not. */
static __always_inline int bt_py_tstate(const struct bt_py_proc *p, __u32 tgid, __u32 tid, __u32 nstid,
					__u64 now, __u64 *out)
{
	struct bt_py_thread *t = bpf_map_lookup_elem(&py_threads, &tid);
	if (t && t->tgid == tgid) {
		__u64 ntid = 0;
		if (t->tstate && !bt_py_read(&ntid, t->tstate + p->ts_native_tid) && ntid == nstid) {
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
	struct bt_py_tsearch srch = { .p = p, .interp = interp, .ts = ts, .nstid = nstid };
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

static long bt_py_frame_step(__u64 i, void *ctx)
{
	struct bt_py_fwalk *w = ctx;
	const struct bt_py_proc *p = w->p;
	struct bt_py_scratch *s = w->s;
	if (!w->frame) {
		w->walk = BT_PY_WALK_DONE;
		return 1;
	}
	/* checked by the loader too; here for the verifier */
	__u32 fc = p->frame_code, fp = p->frame_previous, fi = p->frame_prev_instr, fe = p->frame_is_entry;
	if (i >= BT_PY_MAX_FRAMES || fc > BT_PY_FRAME_BYTES - 8 || fp > BT_PY_FRAME_BYTES - 8 ||
	    fi > BT_PY_FRAME_BYTES - 8 || fe > BT_PY_FRAME_BYTES - 1) {
		w->walk = BT_PY_WALK_FAULT;
		return 1;
	}
	if (bpf_probe_read_user(s->frame, BT_PY_FRAME_BYTES, (const void *)w->frame)) {
		w->walk = BT_PY_WALK_FAULT;
		return 1;
	}
	struct bt_py_frame *f = &s->rec.frames[i];
	__builtin_memcpy(&f->code, s->frame + fc, 8);
	__builtin_memcpy(&f->instr, s->frame + fi, 8);
	__builtin_memcpy(&w->frame, s->frame + fp, 8);
	f->is_entry = s->frame[fe];
	if (bt_py_read(&f->tag, f->code + p->code_tag)) {
		w->walk = BT_PY_WALK_FAULT;
		return 1;
	}
	w->n = (__u32)i + 1;
	return 0;
}

/* From the thread state's current frame outwards, into s->rec.frames; *n frames read. */
static __always_inline int bt_py_frames(const struct bt_py_proc *p, __u64 ts, struct bt_py_scratch *s,
					__u32 *n)
{
	__u64 cframe = 0, frame = 0;
	if (bt_py_read(&cframe, ts + p->ts_cframe))
		return BT_PY_WALK_FAULT;
	if (!cframe)
		return BT_PY_WALK_IDLE;
	if (bt_py_read(&frame, cframe + p->cframe_current))
		return BT_PY_WALK_FAULT;
	if (!frame)
		return BT_PY_WALK_IDLE;
	struct bt_py_fwalk w = { .p = p, .s = s, .frame = frame, .walk = -1 };
	bpf_loop(BT_PY_MAX_FRAMES, bt_py_frame_step, &w, 0);
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

/* The Python frames of the current thread, when its process runs an interpreter userspace knows. */
static __always_inline void bt_py_sample(__u32 tgid, __u32 tid, __u64 now)
{
	struct bt_py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!p)
		return;
	__u32 zero = 0;
	struct bt_py_scratch *s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s)
		return;
	__u64 ts = 0;
	__u32 n = 0;
	int walk = bt_py_tstate(p, tgid, tid, bt_py_ns_tid(bpf_get_current_task_btf()), now, &ts);
	if (walk == BT_PY_WALK_DONE)
		walk = bt_py_frames(p, ts, s, &n);
	if (n > BT_PY_MAX_FRAMES)
		return;
	struct bt_rec_pystack *r = &s->rec;
	r->pid = tgid;
	r->tid = tid;
	r->n = n;
	r->walk = walk;
	r->pad = 0;
	__u32 len = offsetof(struct bt_rec_pystack, frames) + n * sizeof(struct bt_py_frame);
	fill_hdr(&r->hdr, BT_REC_PYSTACK, len);
	r->hdr.time_ns = now;
	if (bpf_ringbuf_output(&events, r, len, BPF_RB_NO_WAKEUP))
		count(BT_CNT_DROP_BASE + BT_REC_PYSTACK);
}

#endif
