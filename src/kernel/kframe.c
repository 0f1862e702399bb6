/* kframe.c - kernel frame naming for the live session and `buildtrace symbolize` alike: kallsyms
 * first, as it covers the image, modules and BPF programs; a module's .ko for what it lacks. */
#include "kernel/kframe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int bt_kframe_name(const struct bt_kdyn *dyn, const struct bt_kallsyms *ks, struct bt_kmods *mods,
		   int64_t mod, uint64_t addr, struct bt_kframe *out)
{
	memset(out, 0, sizeof(*out));
	if (dyn && (out->name = bt_kdyn_lookup(dyn, addr, &out->off)) != NULL)
		return 0;
	out->mod = mod >= 0 && mod <= UINT32_MAX ? bt_kmods_get(mods, (uint32_t)mod) : NULL;
	const struct bt_ksym *k = ks ? bt_kallsyms_lookup(ks, addr, &out->off) : NULL;
	/* In a module, only that module's symbols: one loaded after kallsyms was read would otherwise
	 * take the name of the symbol below it in a neighbour. */
	if (k && out->mod && (!k->module || strcmp(k->module, out->mod->mod.name) != 0))
		k = NULL;
	if (k) {
		out->name = k->name;
		out->ksym = k;
		out->provisional = k->module && !strcmp(k->module, "bpf") && !(dyn && dyn->announced);
		return 0;
	}
	/* A module's frame that kallsyms does not name: its .ko file, when it is the same build. */
	if (out->mod)
		out->name = bt_kmods_symbolize(mods, (uint32_t)mod, addr, &out->off);
	if (out->name)
		return 0;
	out->off = 0;
	if (out->mod)
		snprintf(out->placeholder, sizeof(out->placeholder), "[%s]", out->mod->mod.name);
	else
		snprintf(out->placeholder, sizeof(out->placeholder), "%s", BT_KFRAME_IMAGE);
	return -ENOENT;
}
