/* kbtf.h - the ids of a few named types in a BTF file (the kernel's /sys/kernel/btf/vmlinux),
 * found by one walk over its type headers, without building an index of every type: the loader's
 * feature checks ask for two names, and a whole parse of the kernel's 6 MB cost a profile's start
 * as much as verifying its sampler. */
#ifndef BT_KBTF_H
#define BT_KBTF_H

#include <stddef.h>

struct bt_kbtf_query {
	const char *name;
	int kind;   /* BTF_KIND_* */
	int id;     /* out: the first type of that name and kind, or -ENOENT */
};

/* Answers the n queries from the BTF file at path (native byte order, no split BTF). 0, or
 * -errno: the file's own (-ENOENT...), -EPROTO for a file that is not BTF or is cut short or has
 * a kind this reader does not know, -ENOMEM. */
int bt_kbtf_find(const char *path, struct bt_kbtf_query *q, size_t n);

#endif
