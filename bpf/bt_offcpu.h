/* bt_offcpu.h - off-CPU time of the watched threads. Each time one leaves a CPU its stack is taken
 * (as a sample's: kernel, user and Python frames) and named by a 64-bit hash of it; the time until
 * it runs again is summed in the kernel per (process, thread, stack, state), into the one of two
 * maps userspace is not reading (it swaps them at each cut), the whole block when it ends. A stack's frames go into the ring
 * buffer only the first time its hash is met, so userspace names them with the mappings of that
 * moment. From the switch-out to the wakeup a thread is in the state it left in (asleep, or
 * waiting uninterruptibly), from the wakeup to the switch-in it waits for a CPU, as one preempted
 * does from the start: the kernel's own split between sleep time and run-queue delay.
 * Included by buildtrace.bpf.c after the sampler; attached only when off-CPU time is asked for. */
#ifndef BT_OFFCPU_H
#define BT_OFFCPU_H

/* Set by the loader: the states whose time is summed (1 << enum bt_offcpu_state), the shortest
 * time off a CPU that is counted, and how many stacks a CPU takes per window at most (0: no bound);
 * a thread that leaves a CPU beyond that is counted without its stack. */
const volatile __u32 offcpu_states = BT_OFFCPU_ALL_STATES;
const volatile __u64 offcpu_min_ns = 0;
const volatile __u32 offcpu_walks_per_window = 0;
#define BT_OFFCPU_WINDOW_SHIFT 24   /* a window of 2^24 ns, 16.8 ms */

/* Time is counted from here on (CLOCK_MONOTONIC ns; 0: not yet), set once by the loader. At each
 * cut it reads the sums of the map it swapped out and counts the time of the threads still off a CPU
 * up to the cut itself, taking that back from their sums later (capture/offcpu.c). */
__u64 offcpu_t0 = 0;

#define BT_TASK_UNINTERRUPTIBLE 0x2
#define BT_TASK_DEAD 0x80
#define BT_TASK_NOLOAD 0x400

/* tid -> the thread's block in progress (bt_maps.h). Entries are made when a watched thread first
 * leaves a CPU and go with the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);   /* the loader sizes it */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct bt_offcpu_thread);
} offcpu_threads SEC(".maps");

/* The sums, two maps of one kind: offcpu_sums holds the one being written. Preallocated: each cut
 * empties one, and the next interval's first sums all come at once, which elements allocated as
 * they are needed would not always find room for. */
struct bt_offcpu_sums_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);   /* the loader sizes them */
	__type(key, struct bt_offcpu_key);
	__type(value, struct bt_offcpu_sum);
} offcpu_sums_a SEC(".maps"), offcpu_sums_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct bt_offcpu_sums_map);
} offcpu_sums SEC(".maps");

/* Stack keys whose frames userspace has: a stack forgotten here is written again. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);   /* the loader sizes it */
	__type(key, __u64);
	__type(value, __u8);
} offcpu_known SEC(".maps");

/* A stack is assembled here, then only its used part is copied into the ring buffer: slot 0 at a
 * switch, slot 1 in the iterator that begins counting (a switch may preempt it on its CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct bt_rec_offcpu_stack);
} offcpu_buf SEC(".maps");

struct bt_offcpu_budget {
	__u64 window;
	__u32 used;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_offcpu_budget);
} offcpu_budget SEC(".maps");

static __always_inline void count_n(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		__sync_fetch_and_add(v, n);
}

/* ---- the stack's key ------------------------------------------------------------------------ */

static __always_inline __u64 bt_mix(__u64 h, __u64 v)
{
	h ^= v * 0xff51afd7ed558ccdULL;
	h = (h << 27 | h >> 37) * 5 + 0x52dce729;
	return h;
}

struct bt_offcpu_hash {
	const __u64 *v;
	__u32 n;        /* words at v */
	__u32 pad;
	__u64 h;
};

static long bt_offcpu_hash_step(__u64 i, void *ctx)
{
	struct bt_offcpu_hash *x = ctx;
	if (i >= x->n || i >= 2 * BT_MAX_STACK)
		return 1;
	x->h = bt_mix(x->h, x->v[i]);
	return 0;
}

static long bt_offcpu_hash_py(__u64 i, void *ctx)
{
	struct bt_offcpu_hash *x = ctx;
	const struct bt_py_frame *f = (const void *)x->v;
	if (i >= x->n || i >= BT_PY_MAX_FRAMES)
		return 1;
	x->h = bt_mix(bt_mix(x->h, f[i].code), f[i].instr ^ ((__u64)f[i].is_entry << 63));
	return 0;
}

/* What tells a stack apart: the process, the thread's name and cgroup, every frame (and Python
 * frame) and how the walks ended. Never one of the frameless keys below BT_OFFCPU_KEY_FIRST. */
static __always_inline __u64 bt_offcpu_hash(const struct bt_rec_sample *r, const struct bt_rec_pystack *py)
{
	__u64 comm[2];
	__builtin_memcpy(comm, r->comm, sizeof(comm));
	struct bt_offcpu_hash x = { .v = r->ips, .n = (__u32)r->kern_n + r->user_n,
				    .h = 0x6a09e667f3bcc908ULL };
	x.h = bt_mix(x.h, r->pid);
	x.h = bt_mix(x.h, comm[0]);
	x.h = bt_mix(x.h, comm[1]);
	x.h = bt_mix(x.h, r->cgroup_id);
	x.h = bt_mix(x.h, (__u64)r->kern_n << 48 | (__u64)r->user_n << 32 | (__u32)r->user_err);
	bpf_loop(2 * BT_MAX_STACK, bt_offcpu_hash_step, &x, 0);
	if (py) {
		x.v = (const __u64 *)py->frames;
		x.n = py->n;
		x.h = bt_mix(x.h, (__u64)py->n << 16 | py->walk);
		bpf_loop(BT_PY_MAX_FRAMES, bt_offcpu_hash_py, &x, 0);
	}
	__u64 h = x.h;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h < BT_OFFCPU_KEY_FIRST ? h + BT_OFFCPU_KEY_FIRST : h;
}

/* Whether this CPU may take one more stack in the current window. */
static __always_inline bool bt_offcpu_budget(__u64 now)
{
	if (!offcpu_walks_per_window)
		return true;
	__u32 zero = 0;
	struct bt_offcpu_budget *b = bpf_map_lookup_elem(&offcpu_budget, &zero);
	if (!b)
		return true;
	__u64 w = now >> BT_OFFCPU_WINDOW_SHIFT;
	if (b->window != w) {
		b->window = w;
		b->used = 0;
	}
	if (b->used >= offcpu_walks_per_window)
		return false;
	b->used++;
	return true;
}

/* The stack in d (its sample part len bytes, the Python frames of py before it), as its key; its
 * frames written first when the key is new. A stack whose frames could not be written is written
 * again the next time. */
static __always_inline __u64 bt_offcpu_emit(struct bt_rec_offcpu_stack *d, __u32 len, struct bt_rec_pystack *py,
					    __u32 pylen, __u64 now)
{
	__u64 key = bt_offcpu_hash(&d->s, pylen ? py : NULL);
	if (bpf_map_lookup_elem(&offcpu_known, &key))
		return key;
	/* the Python frames first, as before a sample: without them the frames would be wrong. The
	 * reader is woken once the buffer is half full, as by the sampler. */
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 wake = avail > bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (pylen && py && bpf_ringbuf_output(&events, py, pylen, BPF_RB_NO_WAKEUP)) {
		count(BT_CNT_DROP_BASE + BT_REC_PYSTACK);
		return key;
	}
	__u8 flags = d->hdr.tag;
	fill_hdr(&d->s.hdr, BT_REC_OFFCPU_STACK, len);
	d->s.hdr.time_ns = now;
	d->key = key;
	__u32 total = offsetof(struct bt_rec_offcpu_stack, s) + len;
	if (total > sizeof(*d))
		return key;
	fill_hdr(&d->hdr, BT_REC_OFFCPU_STACK, total);
	d->hdr.time_ns = now;
	d->hdr.tag = flags;
	if (bpf_ringbuf_output(&events, d, total, wake)) {
		count(BT_CNT_DROP_BASE + BT_REC_OFFCPU_STACK);
		return key;
	}
	__u8 one = 1;
	bpf_map_update_elem(&offcpu_known, &key, &one, BPF_ANY);
	count(BT_CNT_OFFCPU_STACKS);
	return key;
}

/* The Python frames of the current thread into the per-CPU scratch record (bt_py_walk): their
 * record's length, 0 for none. A global function, for the switch's frame (bt_offcpu_left). */
__noinline int bt_offcpu_py(__u32 tgid, __u32 tid, __u64 now)
{
	struct bt_rec_pystack *py = NULL;
	__u32 len = bt_py_walk(tgid, tid, now, &py);
	return py ? (int)len : 0;
}

/* The current thread's stack, as its key (bt_offcpu_emit). */
static __always_inline __u64 bt_offcpu_stack(void *ctx, __u32 tgid, __u32 tid, __u64 now)
{
	__u32 zero = 0;
	struct bt_rec_offcpu_stack *d = bpf_map_lookup_elem(&offcpu_buf, &zero);
	if (!d)
		return BT_OFFCPU_KEY_UNWALKED;
	struct bt_rec_pystack *py = NULL;
	__u32 pylen = 0;
	if (cfg_flags & BT_CFG_PYTHON) {
		int l = bt_offcpu_py(tgid, tid, now);
		struct bt_py_scratch *s = l > 0 ? bpf_map_lookup_elem(&py_scratch, &zero) : NULL;
		if (s && l <= (int)sizeof(s->rec)) {
			py = &s->rec;
			pylen = (__u32)l;
		}
	}
	__u32 len = take_stack(ctx, &d->s, tgid, tid, true, now, false);
	return bt_offcpu_emit(d, len, py, pylen, now);
}

/* ---- the sums ------------------------------------------------------------------------------- */

/* ns more in the given state for thread tid in the stack of key (and blocks more times). */
static __always_inline void bt_offcpu_add(__u64 key, __u32 tgid, __u32 tid, __u32 state, __u64 ns,
					  __u64 blocks)
{
	if (!ns || state >= BT_OFFCPU_NSTATES || !(offcpu_states & (1u << state)))
		return;
	__u32 zero = 0;
	void *sums = bpf_map_lookup_elem(&offcpu_sums, &zero);
	if (!sums)
		return;
	struct bt_offcpu_key k = { .key = key, .tgid = tgid, .tid = tid, .state = state };
	struct bt_offcpu_sum *v = bpf_map_lookup_elem(sums, &k);
	if (!v) {
		struct bt_offcpu_sum n = { .ns = ns, .blocks = blocks };
		if (!bpf_map_update_elem(sums, &k, &n, BPF_NOEXIST))
			return;
		v = bpf_map_lookup_elem(sums, &k);  /* made meanwhile, else the map is full */
		if (!v) {
			count(BT_CNT_OFFCPU_LOST);
			count_n(BT_CNT_OFFCPU_LOST_NS, ns);
			return;
		}
	}
	__sync_fetch_and_add(&v->ns, ns);
	if (blocks)
		__sync_fetch_and_add(&v->blocks, blocks);
}

/* The part of [from, to) from t0 on. */
static __always_inline __u64 bt_offcpu_span(__u64 from, __u64 to, __u64 t0)
{
	if (from < t0)
		from = t0;
	return to > from ? to - from : 0;
}

/* Thread tid runs again at now: its block is summed, the part before the wakeup in the state it
 * left in, the rest as waiting for a CPU. */
static __always_inline void bt_offcpu_in(__u32 tid, __u64 now)
{
	struct bt_offcpu_thread *t = bpf_map_lookup_elem(&offcpu_threads, &tid);
	if (!t || !t->start)
		return;
	__u64 start = t->start, woke = t->woke, t0 = offcpu_t0;
	t->start = 0;
	t->woke = 0;
	if (!t0 || now < start || now - start < offcpu_min_ns)
		return;
	if (!woke || woke > now)
		woke = now;   /* no wakeup seen: all of it in the state it left in */
	if (t->state == BT_OFFCPU_RUNQ) {
		bt_offcpu_add(t->key, t->tgid, tid, BT_OFFCPU_RUNQ, bt_offcpu_span(start, now, t0), 1);
		return;
	}
	bt_offcpu_add(t->key, t->tgid, tid, t->state, bt_offcpu_span(start, woke, t0), 1);
	bt_offcpu_add(t->key, t->tgid, tid, BT_OFFCPU_RUNQ, bt_offcpu_span(woke, now, t0), 0);
}

/* The state a thread leaves a CPU in: runnable when preempted (or woken before it was switched
 * out), else uninterruptible (idle kernel threads aside) or asleep. */
static __always_inline __u32 bt_offcpu_state(bool preempt, unsigned int prev_state)
{
	if (preempt || prev_state == 0)
		return BT_OFFCPU_RUNQ;
	if ((prev_state & BT_TASK_UNINTERRUPTIBLE) && !(prev_state & BT_TASK_NOLOAD))
		return BT_OFFCPU_UNINT;
	return BT_OFFCPU_SLEEP;
}

/* Thread tid of process tgid left its CPU at now, in state, its stack key: its entry. A global
 * function: its locals stay out of the switch's frame, which with the stack walk's calls below it
 * must fit, all frames together, in the 512 bytes 6.1's verifier allows. */
__noinline int bt_offcpu_left(__u32 tid, __u32 tgid, __u64 key, __u32 state, __u64 now)
{
	struct bt_offcpu_thread *t = bpf_map_lookup_elem(&offcpu_threads, &tid);
	if (t) {
		t->woke = state == BT_OFFCPU_RUNQ ? now : 0;
		t->key = key;
		t->tgid = tgid;
		t->state = state;
		t->start = now;
		return 0;
	}
	struct bt_offcpu_thread nt = { .start = now, .woke = state == BT_OFFCPU_RUNQ ? now : 0, .key = key,
				       .tgid = tgid, .state = state };
	if (bpf_map_update_elem(&offcpu_threads, &tid, &nt, BPF_NOEXIST))
		count(BT_CNT_OFFCPU_NO_THREAD);
	return 0;
}

/* The current thread (prev) leaves its CPU at now. Kernel threads are nobody's work here. */
static __always_inline void bt_offcpu_out(void *ctx, struct task_struct *prev, bool preempt,
					  unsigned int prev_state, __u64 now)
{
	__u32 tid = prev->pid, tgid = prev->tgid;
	if (!tid || (prev->flags & BT_PF_KTHREAD))
		return;
	if (prev_state & BT_TASK_DEAD) {   /* its last switch: it never runs again */
		bpf_map_delete_elem(&offcpu_threads, &tid);
		return;
	}
	/* a process the session dropped (a relabel rule) is not counted off a CPU either */
	if (!is_watched(tgid) || ((cfg_flags & BT_CFG_SKIP) && skip_sample(tgid)))
		return;
	__u32 state = bt_offcpu_state(preempt, prev_state);
	/* a blocked thread waits for a CPU once woken: that part may be what is asked for */
	if (!(offcpu_states & (1u << state)) &&
	    (state == BT_OFFCPU_RUNQ || !(offcpu_states & (1u << BT_OFFCPU_RUNQ))))
		return;
	count(BT_CNT_OFFCPU_BLOCKS);
	__u64 key = BT_OFFCPU_KEY_UNWALKED;
	if (bt_offcpu_budget(now))
		key = bt_offcpu_stack(ctx, tgid, tid, now);
	else
		count(BT_CNT_OFFCPU_UNWALKED);
	bt_offcpu_left(tid, tgid, key, state, now);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 in = next->pid;
	if (in)
		bt_offcpu_in(in, now);
	bt_offcpu_out(ctx, prev, preempt, prev_state, now);
	return 0;
}

/* A blocked thread made runnable: from now on it waits for a CPU. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct bt_offcpu_thread *t = bpf_map_lookup_elem(&offcpu_threads, &tid);
	if (t && t->start && !t->woke)
		t->woke = bpf_ktime_get_ns();
	return 0;
}

/* The kernel stack of a task off a CPU since before counting began (its user stack is another
 * process's memory, out of reach here), as a stack key flagged BT_OFFCPU_STACK_EARLY; without it,
 * BT_OFFCPU_KEY_EARLY. */
static __always_inline __u64 bt_offcpu_early_stack(struct task_struct *task, __u32 tgid, __u32 tid, __u64 now)
{
	__u32 one = 1;
	struct bt_rec_offcpu_stack *d = bpf_map_lookup_elem(&offcpu_buf, &one);
	if (!d || !(cfg_flags & BT_CFG_KERNEL))
		return BT_OFFCPU_KEY_EARLY;
	struct bt_rec_sample *r = &d->s;
	long n = bpf_get_task_stack(task, r->ips, BT_MAX_STACK * sizeof(__u64), 0);
	if (n <= 0)
		return BT_OFFCPU_KEY_EARLY;
	__u32 kn = n / sizeof(__u64);
	if (kn > BT_MAX_STACK)
		kn = BT_MAX_STACK;
	r->pid = tgid;
	r->tid = tid;
	r->cpu = bpf_get_smp_processor_id();
	r->kern_n = kn;
	r->user_n = 0;
	r->kern_err = 0;
	r->user_err = -1;   /* no user frames taken: a key apart from any walk's */
	/* its cgroup, as bpf_get_current_cgroup_id would say were it running (cgroup v2's id) */
	r->cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	if (bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), task->comm) < 0)
		r->comm[0] = '\0';
	d->hdr.tag = BT_OFFCPU_STACK_EARLY;
	__u64 key = bt_offcpu_emit(d, offsetof(struct bt_rec_sample, ips) + kn * sizeof(__u64), NULL, 0, now);
	d->hdr.tag = 0;
	return key;
}

/* Run once when counting begins (offcpu_t0 set): the watched threads off a CPU already, whose
 * switch was not seen, are counted from then on, with their kernel stacks. */
SEC("iter/task")
int offcpu_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	if (!task || (task->flags & BT_PF_KTHREAD) || task->on_cpu || !is_watched(task->tgid))
		return 0;
	__u32 tid = task->pid, tgid = task->tgid;
	__u64 t0 = offcpu_t0;
	if (!t0 || !tid || bpf_map_lookup_elem(&offcpu_threads, &tid))
		return 0;
	__u32 state = bt_offcpu_state(false, task->__state);
	struct bt_offcpu_thread nt = { .start = t0, .woke = state == BT_OFFCPU_RUNQ ? t0 : 0,
				       .key = bt_offcpu_early_stack(task, tgid, tid, t0), .tgid = tgid,
				       .state = state };
	bpf_map_update_elem(&offcpu_threads, &tid, &nt, BPF_NOEXIST);
	return 0;
}

/* A thread that exits takes its entry with it. */
static __always_inline void bt_offcpu_exit(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	bpf_map_delete_elem(&offcpu_threads, &tid);
}

#endif
