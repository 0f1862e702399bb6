/* ehtable.h - the call frame information of one ELF file (.eh_frame, else .debug_frame) compiled
 * into the compact table the BPF stack walker reads: rows sorted by address, each naming the rule
 * that says how the caller's CFA, return address, rbp and rbx are found (struct bt_unw_row and
 * struct bt_unw_rule of bt_proto.h). x86_64. */
#ifndef BT_EHTABLE_H
#define BT_EHTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bt_proto.h"
#include "base/htab.h"

/* Distinct rules, each under its index: one table's, or those of every table the walker has. */
struct bt_unw_ruleset {
	struct bt_unw_rule *rules;
	size_t n, cap;
	struct bt_htab index;
};
void bt_unw_ruleset_init(struct bt_unw_ruleset *s);
void bt_unw_ruleset_free(struct bt_unw_ruleset *s);
/* The index of rule (its pad ignored), added when new (*added says so): at most BT_UNW_RULES_MAX
 * rules (-E2BIG beyond), or -ENOMEM. */
int64_t bt_unw_ruleset_intern(struct bt_unw_ruleset *s, const struct bt_unw_rule *rule, bool *added);
/* Takes back the rule added last. */
void bt_unw_ruleset_pop(struct bt_unw_ruleset *s);

struct bt_ehtable {
	uint64_t base;              /* the address row pcs are relative to */
	struct bt_unw_row *rows;    /* n rows sorted by pc, each naming one of rules; the last one's
				     * is BT_UNW_NONE */
	size_t n;
	struct bt_unw_rule *rules;  /* nrules distinct rules; rules[0] is BT_UNW_NONE */
	size_t nrules;
	size_t fdes;                /* FDEs read */
	size_t bad;                 /* rows of a rule the walker does not evaluate (BT_UNW_BAD) */
	bool debug_frame;           /* compiled from .debug_frame (there was no .eh_frame) */
};

/* Compiles the CFI of the ELF file open as fd (read with pread, fd left open).
 * 0, -ENODATA (no CFI, or none describing any code), -ENOEXEC (not ELF or malformed CFI),
 * -E2BIG (the code it covers spans more than 4 GiB, or it has more FDEs, rows or distinct rules
 * than any real file: 2^20, BT_UNW_ROWS_MAX and BT_UNW_RULES_MAX), -ENOMEM. */
int bt_ehtable_compile(int fd, struct bt_ehtable *out);
/* The same from an ELF image in memory (e.g. the vDSO). */
int bt_ehtable_compile_mem(const void *buf, size_t len, struct bt_ehtable *out);
void bt_ehtable_free(struct bt_ehtable *t);

/* The rule holding for an address (as the file's symbols express it); NULL below the first row. */
const struct bt_unw_rule *bt_ehtable_lookup(const struct bt_ehtable *t, uint64_t vaddr);

/* Bytes its rows and rules take. */
size_t bt_ehtable_bytes(const struct bt_ehtable *t);

#endif
