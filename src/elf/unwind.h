/* unwind.h - user stacks without frame pointers: the call frame information (.eh_frame, else
 * .debug_frame) of each file, compiled into rules cached by address range, applied to a sample's
 * registers and copy of the top of its stack (x86_64). */
#ifndef BT_UNWIND_H
#define BT_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_cfi;

/* Opens the CFI of the ELF file open as fd (duplicated). 0, -ENODATA (no CFI), -ENOEXEC, -errno. */
int bt_cfi_open(int fd, struct bt_cfi **out);
/* The same from an ELF image in memory (e.g. the vDSO), which must outlive the handle. */
int bt_cfi_open_mem(const void *buf, size_t len, struct bt_cfi **out);
void bt_cfi_close(struct bt_cfi *c);
/* The address (as the file's CFI and symbols express it) of a file offset; 0 or -ERANGE. */
int bt_cfi_offset_to_vaddr(const struct bt_cfi *c, uint64_t offset, uint64_t *vaddr);
/* Rules compiled so far (they are cached per address range). */
size_t bt_cfi_cached(const struct bt_cfi *c);
/* The memory it holds, in bytes: the compiled rules, and the sections libdw reads them from. */
size_t bt_cfi_bytes(const struct bt_cfi *c);

struct bt_unwind_regs {
	uint64_t ip, sp, bp;
	/* The callee-saved registers a frame's CFI may be based on (a realigned stack keeps its CFA in
	 * rbx): used only when have_saved says they hold the thread's values. */
	uint64_t bx, r12, r13, r14, r15;
	bool have_saved;
};

/* The CFI for a pc of the process, and bias such that pc - bias is the address the CFI expects.
 * 0, or -ENOENT when no file with CFI is mapped there (the walk then follows the frame pointer),
 * or -EAGAIN when a file is mapped there whose CFI cannot be had yet (its build-id is not known):
 * the walk stops there rather than guess with a frame pointer the file may not keep. */
typedef int (*bt_unwind_find_fn)(void *ctx, uint64_t pc, struct bt_cfi **cfi, uint64_t *bias);

enum bt_unwind_stop {
	BT_UNWIND_END = 0,     /* the outermost frame: CFI says there is no caller */
	BT_UNWIND_NO_CFI,      /* a pc no CFI covers, and no frame pointer to follow */
	BT_UNWIND_STACK,       /* a read beyond the copied part of the stack */
	BT_UNWIND_BAD,         /* an expression that cannot be evaluated, or no progress */
	BT_UNWIND_MAX,         /* max frames written */
};

/* What a walk starts from: a sample's registers and copy of the top of its stack, and where the CFI
 * of each pc it meets is found. */
struct bt_unwind_in {
	struct bt_unwind_regs regs;
	const uint8_t *stack;    /* len bytes copied from regs.sp upwards */
	size_t len;
	bt_unwind_find_fn find;
	void *ctx;               /* passed to find */
};

/* Where a walk writes its frames: the caller sets ips, exact and max; bt_unwind sets n and why. */
struct bt_unwind_out {
	uint64_t *ips;           /* max entries, innermost first */
	uint8_t *exact;          /* max entries, or NULL: not wanted */
	size_t max;
	size_t n;                /* ips (and exact) written: >= 1 when max >= 1 */
	enum bt_unwind_stop why; /* what ended the walk */
};

/* Walks the stack: ips[0] is regs.ip, then each caller's return address. Where no CFI covers a pc,
 * the frame pointer chain is followed instead. exact gets, per ip, 1 when it is where the thread
 * was rather than a return address: ips[0], and the pc a signal interrupted (the frame beyond a
 * signal trampoline, as its CFI marks it); a return address is named by the call before it, an
 * exact pc by itself. Allocates nothing once the rules for the pcs met are cached. */
void bt_unwind(const struct bt_unwind_in *in, struct bt_unwind_out *out);

#endif
