/* bt_maps.h - keys and values of the BPF maps the loader also reads or writes (build-id cache,
 * snapshot jobs), shared by bpf/ and src/capture.c: fixed-width types only. */
#ifndef BT_MAPS_H
#define BT_MAPS_H

#ifndef __BPF__
#include <linux/types.h>
#endif
#include "bt_proto.h"

/* A file version as the kernel sees it: the key of the build-id cache. */
struct bt_file_key {
	__u64 ino;
	__u64 mtime_ns;
	__u32 dev;
	__u32 pad;
};

/* A build-id read result, also the value of the build-id cache. */
struct bt_bid {
	__u8 status;  /* enum bt_bid_status */
	__u8 len;
	__u8 id[BT_BUILD_ID_MAX];
};

/* A build-id read the snapshot queued: where the file's ELF header is mapped in which process. */
struct bt_elf_job {
	__u64 base;   /* where the file's first byte is mapped */
	__u64 limit;  /* bytes from base known to be the file's */
	__u32 tgid;
	__u32 pad;
};

/* The one read elf_read does per run; done tells the loader it found the process. */
struct bt_elf_req {
	struct bt_elf_job job;
	struct bt_file_key key;
	__u32 done;
	__u32 round;  /* copied into the result */
};

/* A read's result within one snapshot; status PENDING: the process chosen to read it was gone. */
struct bt_fresh {
	struct bt_bid bid;
	__u16 pad;
	__u32 round;  /* the read round that produced it */
};

/* Off-CPU time: a watched thread off a CPU now (the value of offcpu_threads, keyed by its tid).
 * start is when it left (0: it runs), woke when it became runnable again (0: not yet; start when it
 * was preempted), key its stack and state the state it left in (BT_OFFCPU_SLEEP or _UNINT; RUNQ
 * when preempted). */
struct bt_offcpu_thread {
	__u64 start;
	__u64 woke;
	__u64 key;
	__u32 tgid;
	__u32 state;
};

/* What off-CPU time is summed under (offcpu_sums_a and _b), and the sum. */
struct bt_offcpu_key {
	__u64 key;
	__u32 tgid;
	__u32 tid;
	__u32 state;
	__u32 pad;
};

struct bt_offcpu_sum {
	__u64 ns;
	__u64 blocks;
};

#endif
