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

int bt_call_graph_parse(const char *s, bool *dwarf, unsigned *ustack_bytes)
{
	if (!s)
		return -EINVAL;
	if (!strcmp(s, "fp")) {
		*dwarf = false;
		*ustack_bytes = 0;
		return 0;
	}
	if (strncmp(s, "dwarf", 5) || (s[5] && s[5] != ','))
		return -EINVAL;
	unsigned long n = 0;
	if (s[5] == ',') {
		const char *digits = s + 6;
		char *end;
		if (*digits < '0' || *digits > '9')
			return -EINVAL;
		errno = 0;
		n = strtoul(digits, &end, 10);
		if (errno || *end || !bt_call_graph_size_ok(n))
			return -EINVAL;
	}
	*dwarf = true;
	*ustack_bytes = (unsigned)n;
	return 0;
}
