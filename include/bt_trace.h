/* bt_trace.h - what the loader of bpf/trace.bpf.c and the BPF side share: each probe's
 * configuration (how its key argument is read) and the key of the in-kernel counts of keyed probes.
 * Fixed-width types only, sizes pinned by _Static_assert. */
#ifndef BT_TRACE_H
#define BT_TRACE_H

#ifndef __BPF__
#include <linux/types.h>
#endif

#define BT_TRACE_MAX_PROBES 64   /* probes of one session (the cookie of each attachment) */
#define BT_TRACE_KEY_STR 64      /* bytes of a string key, NUL included */
#define BT_TRACE_NREGS 21        /* the uapi struct pt_regs, x86_64: 21 words */
/* a hit's sample carries its probe + 1 as its record's tag (bt_proto.h) */
#define BT_TRACE_TAG(probe) ((probe) + 1)

/* Where an argument is, as a marker's argument spec gives it. */
enum bt_trace_arg_kind {
	BT_TARG_NONE = 0,   /* no key: hits are counted per stack through the ring buffer */
	BT_TARG_REG = 1,    /* in register reg */
	BT_TARG_MEM = 2,    /* in memory at reg + off */
	BT_TARG_CONST = 3,  /* the constant off */
};

/* flags */
#define BT_TPROBE_STR 0x1     /* the argument is a pointer to a NUL-terminated string: the key */
#define BT_TPROBE_SIGNED 0x2  /* the argument is signed: sign-extended from size bytes */
#define BT_TPROBE_LATENCY 0x4 /* entry times are kept for the probe's return (its histogram) */

struct bt_trace_probe_cfg {
	__u8 kind;     /* enum bt_trace_arg_kind */
	__u8 reg;      /* index of the register in the uapi pt_regs (r15 = 0 ... ss = 20) */
	__u8 size;     /* 1, 2, 4 or 8 bytes */
	__u8 flags;
	__u32 pad;
	__s64 off;
};

/* The key of a keyed probe's count: which probe, which process, and the argument's value. */
struct bt_trace_key {
	__u32 probe;
	__u32 pid;
	char comm[16];
	__s64 ival;                  /* an integer key; 0 for a string */
	char str[BT_TRACE_KEY_STR];  /* a string key, NUL-padded; empty for an integer */
};

/* Per-probe counters (per-CPU array index probe * BT_TCNT_MAX + counter). */
enum bt_trace_counter {
	BT_TCNT_HITS = 0,      /* hits of a watched process */
	BT_TCNT_LOST = 1,      /* hits not delivered: the ring buffer or the key table was full */
	BT_TCNT_BADARG = 2,    /* keyed hits whose argument could not be read */
	BT_TCNT_UNMATCHED = 3, /* returns whose entry was not seen (or was forgotten) */
	BT_TCNT_MAX = 4,
};

/* Latency histograms: per probe, bucket b counts calls that took [2^b, 2^(b+1)) ns (b = 0: under
 * 2 ns), in a per-CPU array at index probe * BT_TRACE_LAT_BUCKETS + b. */
#define BT_TRACE_LAT_BUCKETS 64

/* An entry waiting for its return: the thread and the probe. */
struct bt_trace_lat_key {
	__u32 tid;
	__u32 probe;
};

/* Configuration the loader writes into the object's read-only data. */
#define BT_TCFG_ALL 0x1      /* every process, not only the watched set */
#define BT_TCFG_DWARF 0x2    /* copy user registers and stack with each hit (BT_REC_USTACK) */

_Static_assert(sizeof(struct bt_trace_probe_cfg) == 16, "bt_trace_probe_cfg size");
_Static_assert(sizeof(struct bt_trace_key) == 8 + 16 + 8 + BT_TRACE_KEY_STR, "bt_trace_key size");

#endif
