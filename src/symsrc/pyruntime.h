/* pyruntime.h - what a CPython interpreter's file (python3.X, libpython3.X.so) says of itself: its
 * version (Py_Version from 3.11 on; before, the version its name gives, found in its read-only data
 * as Py_GetVersion's PY_VERSION), where its runtime state is (_PyRuntime), the range of the eval
 * loop (_PyEval_EvalFrameDefault), and from 3.13 on the layout it describes at the start of its
 * runtime state (_Py_DebugOffsets, initialized data of the file). No process is read. */
#ifndef BT_PYRUNTIME_H
#define BT_PYRUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include "symsrc/pyoffsets.h"

struct bt_pyruntime {
	unsigned major, minor, micro;    /* 0.0.0 when unknown */
	uint64_t runtime_vaddr;          /* _PyRuntime */
	uint64_t eval_offset, eval_size; /* _PyEval_EvalFrameDefault, as a file offset */
	uint64_t text_vaddr, text_offset;  /* the executable PT_LOAD segment */
	bool have_debug;                 /* debug is the interpreter's own description of its layout */
	struct bt_py_offsets debug;
};

/* Reads the ELF file fd, whose base name is name (the version of an interpreter before 3.11 is
 * taken from it, and confirmed by the file's own PY_VERSION). 0 for an interpreter this can read;
 * -ENOENT when it is no CPython interpreter (it exports no Py_GetVersion); -ENOTSUP for one it
 * cannot (a version without an offsets table, without _PyRuntime or the eval loop, whose version
 * is unknown, or whose own description of its layout is one this does not read: major and minor
 * say which when known); -ENOEXEC, -errno. */
int bt_pyruntime_read(int fd, const char *name, struct bt_pyruntime *out);

/* The offsets to read the interpreter with: its own description, else the table of its version
 * (NULL: none). */
const struct bt_py_offsets *bt_pyruntime_offsets(const struct bt_pyruntime *r);

/* The major.minor a file name gives ("python3.9", "libpython3.10d.so.1.0"): 0, or -ENOENT. */
int bt_pyruntime_name_version(const char *name, unsigned *major, unsigned *minor);

/* Where _PyRuntime is in a process whose mapping of the file's executable segment starts at start
 * with file offset pgoff. */
uint64_t bt_pyruntime_addr(const struct bt_pyruntime *r, uint64_t start, uint64_t pgoff);

#endif
