/* minidebuginfo.h - MiniDebugInfo: the xz-compressed ELF in a binary's .gnu_debugdata section that
 * carries the function symbols .dynsym lacks (Fedora and others ship binaries with it). */
#ifndef BT_MINIDEBUGINFO_H
#define BT_MINIDEBUGINFO_H

#include "elf/elffile.h"
#include "elf/symtab.h"

/* The largest decompressed .gnu_debugdata accepted. */
#define BT_MINIDEBUGINFO_MAX ((size_t)256 << 20)

/* One symbol table holding both the embedded ELF's .symtab and binary's own .dynsym. Its PT_LOAD
 * layout is the embedded file's, which is usually unusable (a debug-only file): callers translate
 * offsets with binary's layout. 0, -ENODATA (no .gnu_debugdata, or no function symbols), -EINVAL
 * (corrupt section), or -errno. */
int bt_minidebuginfo_load(struct bt_elf *binary, struct bt_symtab **out);

#endif
