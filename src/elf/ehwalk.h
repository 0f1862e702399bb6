/* ehwalk.h - the BPF stack walker's frame step (bpf/bt_unwind.h) in C: a caller's registers from a
 * frame's registers and the compiled rule holding at its pc (ehtable.h), for the stacks the sampler
 * leaves to userspace to finish, walked exactly as the sampler walks them. x86_64. */
#ifndef BT_EHWALK_H
#define BT_EHWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bt_proto.h"

/* The registers of one frame, as the sampler's walk keeps them. */
struct bt_ehwalk_regs {
	uint64_t pc, sp, bp, bx;
	bool exact;       /* pc is where the thread was, not a return address */
	bool next_exact;  /* so is the caller's (the frame is a signal trampoline) */
};

/* Reads len bytes of the stack at addr into buf: false when they are not there (not copied). */
typedef bool (*bt_ehwalk_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* One frame up: r becomes the caller's registers by rule (NULL or BT_UNW_NONE: by frame pointer).
 * true when the walk goes on; false when it ends here, with *flags saying why (BT_UWALK_DONE at
 * the outermost frame, BT_UWALK_READ when a read failed; no flag: no progress or a bad rule).
 * BT_UWALK_FP is added when the frame pointer was followed. */
bool bt_ehwalk_step(struct bt_ehwalk_regs *r, const struct bt_unw_rule *rule, bt_ehwalk_read_fn read,
		    void *ctx, uint32_t *flags);

#endif
