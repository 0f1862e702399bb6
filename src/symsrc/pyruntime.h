/* pyruntime.h - what a CPython interpreter's file (python3.X, libpython3.X.so) says of itself
 * through the symbols it exports: its version (Py_Version), where its runtime state is
 * (_PyRuntime), and the range of the eval loop (_PyEval_EvalFrameDefault). No process is read. */
#ifndef BT_PYRUNTIME_H
#define BT_PYRUNTIME_H

#include <stdint.h>

struct bt_pyruntime {
	unsigned major, minor, micro;
	uint64_t runtime_vaddr;          /* _PyRuntime */
	uint64_t eval_offset, eval_size; /* _PyEval_EvalFrameDefault, as a file offset */
	uint64_t text_vaddr, text_offset;  /* the executable PT_LOAD segment */
};

/* Reads the ELF file fd. 0; -ENOENT when it is no CPython interpreter (none of these symbols);
 * -ENOTSUP when it is one without Py_Version (before 3.11); -ENOEXEC, -errno. */
int bt_pyruntime_read(int fd, struct bt_pyruntime *out);

/* Where _PyRuntime is in a process whose mapping of the file's executable segment starts at start
 * with file offset pgoff. */
uint64_t bt_pyruntime_addr(const struct bt_pyruntime *r, uint64_t start, uint64_t pgoff);

#endif
