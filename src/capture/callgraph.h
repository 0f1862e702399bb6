/* callgraph.h - the call-graph mode as users write it (record's --call-graph, the agent's
 * call-graph key): frame pointers, or call frame information with a stack copy of some size. */
#ifndef BT_CALLGRAPH_H
#define BT_CALLGRAPH_H

#include <stdbool.h>

/* "fp", "dwarf", or "dwarf,SIZE" (bytes of stack copied per sample, as perf takes it: a multiple of
 * 8 from BT_USTACK_MIN to BT_USTACK_MAX). *ustack_bytes is 0 for the default size. 0, or -EINVAL
 * when s is none of these. */
int bt_call_graph_parse(const char *s, bool *dwarf, unsigned *ustack_bytes);

/* Whether n bytes of stack per sample can be asked for: a multiple of 8 from BT_USTACK_MIN to
 * BT_USTACK_MAX. */
bool bt_call_graph_size_ok(unsigned long n);

#endif
