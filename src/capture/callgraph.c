/* callgraph.c - parses the call-graph mode. */
#include "capture/callgraph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "bt_proto.h"

bool bt_call_graph_size_ok(unsigned long n)
{
	return n >= BT_USTACK_MIN && n <= BT_USTACK_MAX && n % 8 == 0;
}

/* ",SIZE" after a copy mode's name, or nothing: the bytes (0 for the default). */
static int parse_size(const char *s, unsigned long *n)
{
	*n = 0;
	if (!*s)
		return 0;
	if (*s != ',' || s[1] < '0' || s[1] > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	*n = strtoul(s + 1, &end, 10);
	if (errno || *end || !bt_call_graph_size_ok(*n))
		return -EINVAL;
	return 0;
}

int bt_call_graph_parse(const char *s, bool *dwarf, unsigned *ustack_bytes, bool *bpf)
{
	if (!s)
		return -EINVAL;
	bool want_bpf = false, want_copy = false;
	unsigned long n = 0;
	if (!strcmp(s, "fp")) {
		/* neither */
	} else if (!strcmp(s, "dwarf-bpf") || (!strcmp(s, "dwarf") && BT_CALL_GRAPH_DWARF_IS_BPF)) {
		want_bpf = true;
	} else if (!strncmp(s, "dwarf-copy", 10) && !parse_size(s + 10, &n)) {
		want_copy = true;
	} else if (!strncmp(s, "dwarf", 5) && (s[5] == ',' || s[5] == '\0') && !parse_size(s + 5, &n)) {
		want_copy = true;
	} else {
		return -EINVAL;
	}
	*dwarf = want_copy;
	*bpf = want_bpf;
	*ustack_bytes = (unsigned)n;
	return 0;
}
