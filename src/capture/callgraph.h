/* callgraph.h - the call-graph mode as users write it (record's --call-graph, the agent's
 * call-graph key): frame pointers, call frame information walked in BPF from compiled tables, or
 * call frame information applied in userspace to a stack copy of some size. */
#ifndef BT_CALLGRAPH_H
#define BT_CALLGRAPH_H

#include <stdbool.h>

/* "fp"; "dwarf-bpf" (*bpf: the walk in BPF); "dwarf-copy" or "dwarf-copy,SIZE" (*dwarf: a stack
 * copy of SIZE bytes per sample, as perf takes it: a multiple of 8 from BT_USTACK_MIN to
 * BT_USTACK_MAX); "dwarf" is the default of those two, and "dwarf,SIZE" the copy. *ustack_bytes
 * is 0 for the default size. 0, or -EINVAL when s is none of these (nothing set then). */
int bt_call_graph_parse(const char *s, bool *dwarf, unsigned *ustack_bytes, bool *bpf);

/* Whether n bytes of stack per sample can be asked for: a multiple of 8 from BT_USTACK_MIN to
 * BT_USTACK_MAX. */
bool bt_call_graph_size_ok(unsigned long n);

/* What "dwarf" alone means: the BPF walk (true) or the stack copy. The walk: as complete on every
 * test program, as cheap in BPF at usual depths, nothing to unwind in userspace and a fiftieth of
 * the ring buffer bytes (README, Call graphs). */
#define BT_CALL_GRAPH_DWARF_IS_BPF true

#endif
