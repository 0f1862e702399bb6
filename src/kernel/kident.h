/* kident.h - the running kernel's identity: its build-id and its loaded modules (name, base, size,
 * build-id), and whether a vmlinux or module file on disk is the exact one running. */
#ifndef BT_KIDENT_H
#define BT_KIDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "elf/buildid.h"

/* Every path below is ROOT + an absolute path; root "" means this machine, a temporary directory
 * holding fake sys/, proc/, boot/ ... trees makes it testable. */

/* Walks a raw sequence of ELF notes (what /sys/kernel/notes and /sys/module/NAME/notes/ files hold:
 * Elf_Nhdr, name, desc, each padded to 4 bytes; 8-byte padding is accepted too) for the GNU build-id
 * (type 3, name "GNU"). 0, -ENODATA (well-formed, no build-id) or -EINVAL (malformed). */
int bt_kident_parse_notes(const void *buf, size_t len, struct bt_build_id *out);

/* The running kernel's build-id, from ROOT/sys/kernel/notes. 0, -ENODATA or -errno. */
int bt_kident_kernel_build_id(const char *root, struct bt_build_id *out);

/* The running kernel's release (uname -r), from ROOT/proc/sys/kernel/osrelease. 0 or -errno
 * (-ENAMETOOLONG when it does not fit in buf). */
int bt_kident_release(const char *root, char *buf, size_t len);

#define BT_KMOD_NAME_LEN 56  /* the kernel's MODULE_NAME_LEN on 64-bit */

struct bt_kmodule {
	char name[BT_KMOD_NAME_LEN];
	uint64_t base;                 /* 0 when addresses are hidden */
	uint64_t size;
	struct bt_build_id build_id;   /* len 0 when build_id_err is set */
	int build_id_err;              /* why the build-id could not be read: -errno, else 0 */
};

struct bt_kmodules {
	struct bt_kmodule *mods;       /* sorted by base, then name */
	size_t n;
	/* Every base read as 0: /proc/modules hides addresses from readers without CAP_SYSLOG (or
	 * kptr_restrict=2), so no address can be attributed to a module. */
	bool addrs_hidden;
};

/* A module's build-id, from ROOT/sys/module/NAME/notes/.note.gnu.build-id. 0, -ENODATA, -EINVAL
 * (bad name or malformed note) or -errno (-ENOENT: no such module, or one built without notes). */
int bt_kident_module_build_id(const char *root, const char *name, struct bt_build_id *out);

/* Called once per module by bt_kident_module_notes; a non-zero return ends the walk. */
typedef int (*bt_kident_module_fn)(void *ctx, const char *name, const struct bt_build_id *build_id);
/* Every module under ROOT/sys/module whose notes carry a build-id, in directory order, without
 * needing /proc/modules: fn(ctx, name, build-id) for each. Built-in modules have a directory there
 * too but no notes, and entries that are not module names are passed over. 0, fn's non-zero return,
 * or -errno (-ENOENT: no ROOT/sys/module). */
int bt_kident_module_notes(const char *root, bt_kident_module_fn fn, void *ctx);

/* The loaded modules from ROOT/proc/modules, each with its build-id (a module whose build-id cannot
 * be read is kept, with build_id_err set). 0, -ENOENT (no /proc/modules: a kernel without module
 * support, where out is set to an empty list), -EINVAL (malformed line), -ENOMEM or -errno. */
int bt_kident_modules_load(const char *root, struct bt_kmodules *out);
/* Same from a /proc/modules-format buffer; build-ids are read from ROOT/sys/module when root is not
 * NULL, left unread (build_id_err -ENOENT) when it is. */
int bt_kident_modules_parse(const char *buf, size_t len, const char *root, struct bt_kmodules *out);
void bt_kident_modules_free(struct bt_kmodules *m);

const struct bt_kmodule *bt_kident_module_by_name(const struct bt_kmodules *m, const char *name);
/* The module whose [base, base + size) holds addr; NULL (errno ENOENT) when none, or when addresses
 * are hidden (errno EACCES). */
const struct bt_kmodule *bt_kident_module_at(const struct bt_kmodules *m, uint64_t addr);

/* A vmlinux (or module) file can give line info for the running kernel only when it carries the
 * running build-id. 0 when it does, -ESTALE when its build-id differs, else what bt_buildid_from_path
 * returns: -ENOEXEC for a file that is not ELF (a compressed vmlinuz boot image), -ENODATA for one
 * without build-id, -ENOENT ... */
int bt_kident_vmlinux_matches(const char *path, const struct bt_build_id *running);
/* A module file, compressed (.ko.xz, .ko.zst, .ko.gz) or not, against a loaded module's build-id.
 * Same returns; a loaded module without a build-id matches nothing (-ENODATA). */
int bt_kident_module_file_matches(const char *path, const struct bt_build_id *loaded);

/* The idx-th place a vmlinux for release is looked for, root included: ROOT/usr/lib/debug/boot/
 * vmlinux-REL, ROOT/usr/lib/debug/lib/modules/REL/vmlinux, ROOT/boot/vmlinux-REL,
 * ROOT/lib/modules/REL/build/vmlinux. 0, -ENOENT past the last, -ENAMETOOLONG. */
int bt_kident_vmlinux_candidate(const char *root, const char *release, unsigned idx, char *buf,
				size_t len);

/* The vmlinux to use for the running kernel (release and build-id read under root): the override
 * (--vmlinux PATH, used as given, never replaced by a search) when not NULL, else the first search
 * candidate whose build-id matches. 0 with its path in buf; -ENOENT when no candidate exists,
 * -ESTALE when some exist but none matches (or the override does not match), or another -errno for
 * the override (-ENOEXEC when it is not ELF). */
int bt_kident_find_vmlinux(const char *root, const char *override, char *buf, size_t len);

/* A file for the loaded module name (as /proc/modules spells it; '-' and '_' are the same in file
 * names) that carries build-id loaded: searched under ROOT/usr/lib/debug/lib/modules/REL first (debug
 * info), then ROOT/lib/modules/REL, compressed files included. 0 with the path in buf, -ENOENT when no
 * file has that name, -ESTALE when some have it but none matches, -EINVAL for a bad name. */
int bt_kident_find_module_file(const char *root, const char *release, const char *name,
			       const struct bt_build_id *loaded, char *buf, size_t len);

#endif
