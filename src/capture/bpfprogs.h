/* bpfprogs.h - the BPF programs loaded in the kernel, named by their JIT address ranges from the
 * kernel's own program information (BPF_OBJ_GET_INFO_BY_FD), as kallsyms names them
 * ("bpf_prog_TAG_NAME"): a program loaded during a session gets its name by listing the programs
 * again, which costs a few system calls per new program, not a read of all of kallsyms. */
#ifndef BT_BPFPROGS_H
#define BT_BPFPROGS_H

#include <stdint.h>

struct bt_bpfprogs;

int bt_bpfprogs_new(struct bt_bpfprogs **out);
void bt_bpfprogs_free(struct bt_bpfprogs *p);

/* Lists the loaded programs again: information is read only for programs not seen before, and
 * those unloaded since are forgotten. Returns how many programs are known, or -errno. */
int bt_bpfprogs_refresh(struct bt_bpfprogs *p);

/* The name of the program (or subprogram) whose JIT code holds addr, and addr's offset in it; NULL
 * when none does. Valid until the next refresh. */
const char *bt_bpfprogs_lookup(const struct bt_bpfprogs *p, uint64_t addr, uint64_t *off);

/* Program listings made so far, and program information reads. */
uint64_t bt_bpfprogs_listings(const struct bt_bpfprogs *p);

#endif
