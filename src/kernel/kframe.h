/* kframe.h - the one rule naming a running-kernel address: the code the kernel announced there
 * (BPF programs loaded during the session); else kallsyms' symbol, restricted to the module the
 * address is in; else that module's .ko symbols when it is the same build; else none. */
#ifndef BT_KFRAME_H
#define BT_KFRAME_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/kallsyms.h"
#include "kernel/kdyn.h"
#include "kernel/kmods.h"

/* The kernel image's name where none is known, as perf names it; a module's is "[NAME]". */
#define BT_KFRAME_IMAGE "[kernel.kallsyms]"

struct bt_kframe {
	const char *name;               /* the function, or NULL when nothing names the address */
	uint64_t off;                   /* the address less the function's start (named only) */
	const struct bt_kmod_ver *mod;  /* the module version it lies in; NULL: the kernel image */
	const struct bt_ksym *ksym;     /* the kallsyms symbol that named it, NULL for a .ko name */
	/* A BPF program's name from kallsyms while the kernel announces nothing: programs come and
	 * go and kallsyms gives no sizes, so one loaded after kallsyms was read would take the name
	 * of the program below it. */
	bool provisional;
	char placeholder[BT_KMOD_NAME_LEN + 3];  /* "[NAME]" or BT_KFRAME_IMAGE, for unnamed frames */
};

/* Names addr, which lies in module version mod of mods (an id; -1: the kernel image, or no module
 * known there). dyn may be NULL (nothing announced), ks too (kallsyms unreadable); a module's .ko
 * file is read on first use.
 * Fills *out and returns 0 when named, -ENOENT when not (out->placeholder still names the module or
 * the kernel image). */
int bt_kframe_name(const struct bt_kdyn *dyn, const struct bt_kallsyms *ks, struct bt_kmods *mods,
		   int64_t mod, uint64_t addr, struct bt_kframe *out);

#endif
