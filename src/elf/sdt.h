/* sdt.h - SystemTap/USDT markers of one ELF file (.note.stapsdt): provider, name, the marker's
 * address and its semaphore's (moved as .stapsdt.base says when the file was prelinked), and the
 * argument specs ("-4@%eax", "8@-16(%rbp)", "8@$5") parsed into where each argument is. x86_64. */
#ifndef BT_SDT_H
#define BT_SDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elffile.h"

#define BT_SDT_MAX_ARGS 12
#define BT_SDT_NAME_LEN 128

enum bt_sdt_loc { BT_SDT_REG = 1, BT_SDT_MEM = 2, BT_SDT_CONST = 3 };

/* One argument: size bytes (1, 2, 4, 8), signed when the spec's size was negative; in register
 * reg, in memory at reg + off, or the constant off. reg numbers the x86_64 registers in the order
 * of the kernel's uapi struct pt_regs (r15 = 0, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax,
 * rcx, rdx, rsi, rdi, orig_rax, rip, cs, eflags, rsp = 19, ss). */
struct bt_sdt_arg {
	uint8_t loc;     /* enum bt_sdt_loc */
	uint8_t size;
	bool is_signed;
	uint8_t reg;
	int64_t off;
};

struct bt_sdt_marker {
	char provider[BT_SDT_NAME_LEN];
	char name[BT_SDT_NAME_LEN];
	uint64_t pc;         /* the marker's address, as symbols are expressed */
	uint64_t semaphore;  /* the semaphore's address; 0: none */
	char args[512];      /* the spec as written */
};

/* Calls fn for each marker of e; fn's non-zero return stops the walk and is returned. 0 (also for
 * a file without markers), -ENOEXEC for a malformed note section, or -errno. */
int bt_sdt_foreach(struct bt_elf *e, int (*fn)(void *ctx, const struct bt_sdt_marker *m), void *ctx);

/* The marker provider:name of e. 0, -ENOENT when there is none, or -errno. */
int bt_sdt_find(struct bt_elf *e, const char *provider, const char *name, struct bt_sdt_marker *out);

/* Parses an argument spec (space-separated arguments) into args (at most max); *n gets how many.
 * 0, -EINVAL for a spec that is not understood, -ENOTSUP for forms read at no fixed place
 * (%rip-relative, indexed memory, segment registers). */
int bt_sdt_parse_args(const char *spec, struct bt_sdt_arg *args, size_t max, size_t *n);

/* The register number (see bt_sdt_arg) of an AT&T register name without its '%' ("eax", "r12d");
 * -EINVAL when unknown. */
int bt_sdt_reg(const char *name, size_t len);

#endif
