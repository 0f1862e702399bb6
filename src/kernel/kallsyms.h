/* kallsyms.h - kernel symbols from /proc/kallsyms: loaded once, sorted, looked up by address,
 * with the module each belongs to; detects addresses hidden by kptr_restrict. */
#ifndef BT_KALLSYMS_H
#define BT_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct bt_ksym {
	uint64_t addr;
	const char *name;
	const char *module;  /* NULL for the kernel image itself, else e.g. "nls_ascii" or "bpf" */
};

struct bt_kallsyms;

/* Loads ROOT/proc/kallsyms (root "" for the real one), text symbols (t, T, w, W) only.
 * Returns 0, -EACCES when every address reads as zero (kptr_restrict, or not privileged), -EINVAL
 * for a malformed line, -ENODATA when there is no text symbol, or another -errno. */
int bt_kallsyms_load(const char *root, struct bt_kallsyms **out);
/* Parses a kallsyms-format buffer (for tests and fuzzing); same returns. */
int bt_kallsyms_parse(const char *buf, size_t len, struct bt_kallsyms **out);
void bt_kallsyms_free(struct bt_kallsyms *ks);

/* Lines are at most this long; longer ones make the whole buffer -EINVAL (not kallsyms). */
#define BT_KALLSYMS_LINE_MAX 1024

/* No kernel function is anywhere near 1 MiB long, so an address further than that past the symbol
 * below it lies in a hole (between the kernel image and the module area, past the last module...)
 * and is not attributed to any symbol. */
#define BT_KALLSYMS_MAX_GAP (1u << 20)

size_t bt_kallsyms_count(const struct bt_kallsyms *ks);
/* The symbol at or below addr (and addr - sym->addr in *off); NULL when addr is below the first
 * symbol or above the symbol below it (the last one included) by more than BT_KALLSYMS_MAX_GAP.
 * Aliases at one address resolve to one name: global before weak before local, then fewer leading
 * underscores, then the lexically smallest. */
const struct bt_ksym *bt_kallsyms_lookup(const struct bt_kallsyms *ks, uint64_t addr, uint64_t *off);
/* Address of a symbol by name (the lowest, when several local symbols share it), or 0. */
uint64_t bt_kallsyms_addr(const struct bt_kallsyms *ks, const char *name);

/* The memory the table holds, in bytes. */
size_t bt_kallsyms_bytes(const struct bt_kallsyms *k);

#endif
