// SPDX-License-Identifier: GPL-2.0
/* trace.bpf.c - the probes of `buildtrace trace`: a uprobe program that counts each hit of a
 * watched process, either as a stack sample in the session's ring buffer (read and named like the
 * sampler's) or, for a probe keyed by a marker argument, in a table of counts kept here; and a
 * uretprobe program that adds each call's duration to its probe's latency histogram. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bt_proto.h"
#include "bt_trace.h"

char LICENSE[] SEC("license") = "GPL";

#define BT_EEXIST 17

/* BT_TCFG_* bits and the stack bytes copied per hit, set by the loader before load. */
const volatile __u32 cfg_flags = 0;
const volatile __u32 ustack_bytes = BT_USTACK_BYTES;

/* The session's ring buffer and watched set: the loader gives this object the capture's maps. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} watched SEC(".maps");

/* Each probe's configuration, indexed by the attachment's cookie. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BT_TRACE_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct bt_trace_probe_cfg);
} probe_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_TRACE_MAX_PROBES * BT_TCNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} tcounters SEC(".maps");

/* Counts of keyed probes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct bt_trace_key);
	__type(value, __u64);
} keyed SEC(".maps");

/* Entry times waiting for their return, and the histograms. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct bt_trace_lat_key);
	__type(value, __u64);
} lat_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BT_TRACE_MAX_PROBES * BT_TRACE_LAT_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} lat_hist SEC(".maps");

/* Too big for the BPF stack: the sample and the key are assembled here. */
struct bt_trace_scratch {
	struct bt_rec_sample rec;
	struct bt_trace_key key;
	__u64 regs[BT_TRACE_NREGS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bt_trace_scratch);
} scratch SEC(".maps");

static __always_inline void tcount(__u32 probe, __u32 what)
{
	__u32 idx = probe * BT_TCNT_MAX + what;
	__u64 *v = bpf_map_lookup_elem(&tcounters, &idx);
	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline bool is_watched(__u32 tgid)
{
	if (cfg_flags & BT_TCFG_ALL)
		return true;
	return bpf_map_lookup_elem(&watched, &tgid) != NULL;
}

static __always_inline void fill_hdr(struct bt_rec_hdr *h, __u16 type, __u32 size, __u64 now)
{
	h->type = type;
	h->version = BT_PROTO_VERSION;
	h->tag = 0;
	h->size = size;
	h->time_ns = now;
}

/* The registers at the probe and the top of the stack, for the unwinder in userspace. */
static __always_inline bool copy_user_stack(struct pt_regs *ctx, __u32 tgid, __u32 tid, __u64 now)
{
	__u32 size = sizeof(struct bt_rec_ustack) + ustack_bytes;
	struct bt_rec_ustack *u = bpf_ringbuf_reserve(&events, size, 0);
	if (!u)
		return false;
	fill_hdr(&u->hdr, BT_REC_USTACK, size, now);
	u->pid = tgid;
	u->tid = tid;
	u->ip = PT_REGS_IP(ctx);
	u->sp = PT_REGS_SP(ctx);
	u->bp = PT_REGS_FP(ctx);
	u->bx = BPF_CORE_READ(ctx, bx);
	u->r12 = BPF_CORE_READ(ctx, r12);
	u->r13 = BPF_CORE_READ(ctx, r13);
	u->r14 = BPF_CORE_READ(ctx, r14);
	u->r15 = BPF_CORE_READ(ctx, r15);
	u->pad = 0;
	const void *sp = (const void *)u->sp;
	__u32 len = 0;
	if (bpf_probe_read_user(u->data, ustack_bytes, sp) == 0) {
		len = ustack_bytes;
	} else {
		/* Near the stack's end a read crossing it fails whole: halves until one fits. */
#pragma unroll
		for (int i = 1; i < 6; i++) {
			__u32 l = ustack_bytes >> i;
			if (l < BT_USTACK_MIN)
				break;
			if (bpf_probe_read_user(u->data, l, sp) == 0) {
				len = l;
				break;
			}
		}
	}
	u->len = len;
	bpf_ringbuf_submit(u, BPF_RB_NO_WAKEUP);
	return true;
}

/* One hit as a sample of its user stack: leaf first, the probed instruction. */
static __always_inline void emit_sample(struct pt_regs *ctx, struct bt_trace_scratch *s, __u32 probe,
					__u32 tgid, __u32 tid)
{
	__u64 now = bpf_ktime_get_ns();
	if ((cfg_flags & BT_TCFG_DWARF) && !copy_user_stack(ctx, tgid, tid, now)) {
		tcount(probe, BT_TCNT_LOST);
		return;
	}
	struct bt_rec_sample *rec = &s->rec;
	rec->pid = tgid;
	rec->tid = tid;
	rec->cpu = bpf_get_smp_processor_id();
	rec->kern_n = 0;
	rec->kern_err = 0;
	rec->user_err = 0;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	rec->cgroup_id = bpf_get_current_cgroup_id();
	__u32 un = 0;
	long r = bpf_get_stack(ctx, rec->ips, BT_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
	if (r < 0)
		rec->user_err = r;
	else
		un = r / sizeof(__u64);
	if (un > BT_MAX_STACK)
		un = BT_MAX_STACK;
	rec->user_n = un;
	__u32 len = offsetof(struct bt_rec_sample, ips) + un * sizeof(__u64);
	fill_hdr(&rec->hdr, BT_REC_SAMPLE, len, now);
	rec->hdr.tag = BT_TRACE_TAG(probe);   /* a hit the queue drops is counted lost for its probe */
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	if (bpf_ringbuf_output(&events, rec, len, avail > size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		tcount(probe, BT_TCNT_LOST);
}

/* The argument's value as the marker's spec describes it; false when it cannot be read. */
static __always_inline bool read_arg(struct pt_regs *ctx, struct bt_trace_scratch *s,
				     const struct bt_trace_probe_cfg *c, __u64 *out)
{
	__u64 v = 0;
	if (c->kind == BT_TARG_CONST) {
		*out = (__u64)c->off;
		return true;
	}
	if (bpf_probe_read_kernel(s->regs, sizeof(s->regs), ctx))
		return false;
	__u32 reg = c->reg;
	if (reg >= BT_TRACE_NREGS)
		return false;
	v = s->regs[reg];
	if (c->kind == BT_TARG_MEM) {
		__u64 addr = v + (__u64)c->off;
		__u32 sz = c->size;
		v = 0;
		/* only the argument's own bytes: the next ones may be past the end of its page */
		if (sz == 0 || sz > 8 || bpf_probe_read_user(&v, sz, (const void *)addr))
			return false;
	}
	switch (c->size) {
	case 1:
		v = (c->flags & BT_TPROBE_SIGNED) ? (__u64)(__s64)(__s8)v : (__u8)v;
		break;
	case 2:
		v = (c->flags & BT_TPROBE_SIGNED) ? (__u64)(__s64)(__s16)v : (__u16)v;
		break;
	case 4:
		v = (c->flags & BT_TPROBE_SIGNED) ? (__u64)(__s64)(__s32)v : (__u32)v;
		break;
	}
	*out = v;
	return true;
}

/* One hit of a keyed probe: its count in the table, under the argument's value. */
static __always_inline void count_key(struct pt_regs *ctx, struct bt_trace_scratch *s,
				      const struct bt_trace_probe_cfg *c, __u32 probe, __u32 tgid)
{
	struct bt_trace_key *k = &s->key;
	__builtin_memset(k, 0, sizeof(*k));
	k->probe = probe;
	k->pid = tgid;
	bpf_get_current_comm(k->comm, sizeof(k->comm));
	__u64 v;
	if (!read_arg(ctx, s, c, &v)) {
		tcount(probe, BT_TCNT_BADARG);
		return;
	}
	if (c->flags & BT_TPROBE_STR) {
		if (bpf_probe_read_user_str(k->str, sizeof(k->str), (const void *)v) < 0) {
			tcount(probe, BT_TCNT_BADARG);
			return;
		}
	} else {
		k->ival = (__s64)v;
	}
	__u64 *n = bpf_map_lookup_elem(&keyed, k);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	__u64 one = 1;
	long err = bpf_map_update_elem(&keyed, k, &one, BPF_NOEXIST);
	if (err == -BT_EEXIST && (n = bpf_map_lookup_elem(&keyed, k)))
		__sync_fetch_and_add(n, 1);
	else if (err)
		tcount(probe, BT_TCNT_LOST);
}

SEC("uprobe")
int on_hit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	if (!is_watched(tgid))
		return 0;
	__u32 probe = (__u32)bpf_get_attach_cookie(ctx);
	const struct bt_trace_probe_cfg *c = bpf_map_lookup_elem(&probe_cfg, &probe);
	__u32 zero = 0;
	struct bt_trace_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	if (!c || !s || probe >= BT_TRACE_MAX_PROBES)
		return 0;
	tcount(probe, BT_TCNT_HITS);
	if (c->flags & BT_TPROBE_LATENCY) {
		struct bt_trace_lat_key lk = { .tid = tid, .probe = probe };
		__u64 now = bpf_ktime_get_ns();
		bpf_map_update_elem(&lat_start, &lk, &now, BPF_ANY);
	}
	if (c->kind != BT_TARG_NONE)
		count_key(ctx, s, c, probe, tgid);
	else
		emit_sample(ctx, s, probe, tgid, tid);
	return 0;
}

SEC("uretprobe")
int on_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	if (!is_watched(tgid))
		return 0;
	__u32 probe = (__u32)bpf_get_attach_cookie(ctx);
	if (probe >= BT_TRACE_MAX_PROBES)
		return 0;
	struct bt_trace_lat_key lk = { .tid = tid, .probe = probe };
	__u64 *t0 = bpf_map_lookup_elem(&lat_start, &lk);
	if (!t0) {
		tcount(probe, BT_TCNT_UNMATCHED);
		return 0;
	}
	__u64 d = bpf_ktime_get_ns() - *t0;
	bpf_map_delete_elem(&lat_start, &lk);
	/* the bucket: floor(log2(d)), 0 for d < 2 */
	__u32 b = 0;
	if (d >> 32) { d >>= 32; b += 32; }
	if (d >> 16) { d >>= 16; b += 16; }
	if (d >> 8) { d >>= 8; b += 8; }
	if (d >> 4) { d >>= 4; b += 4; }
	if (d >> 2) { d >>= 2; b += 2; }
	if (d >> 1) b += 1;
	__u32 idx = probe * BT_TRACE_LAT_BUCKETS + (b & (BT_TRACE_LAT_BUCKETS - 1));
	__u64 *v = bpf_map_lookup_elem(&lat_hist, &idx);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}
