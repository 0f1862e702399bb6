/* pyoffsets.h - where CPython keeps what a profiler reads of a running interpreter: the offsets of
 * the fields of its runtime, thread states, frames, code objects and strings, per version (3.8 to
 * 3.13), each figure with where it comes from (checked against the interpreter's DWARF by a test),
 * and the layout 3.13 describes itself in (_Py_DebugOffsets), read over its own table. */
#ifndef BT_PYOFFSETS_H
#define BT_PYOFFSETS_H

#include <stddef.h>
#include <stdint.h>

/* How a thread state names its thread. */
enum bt_py_tid {
	BT_PY_TID_NATIVE = 0,   /* native_thread_id (3.11+): gettid() in the thread's pid namespace */
	BT_PY_TID_PTHREAD = 1,  /* thread_id only (3.8-3.10): pthread_self(), the thread pointer */
};

/* How the frame chain is laid out and where each C call of the eval loop begins in it. */
enum bt_py_chain {
	BT_PY_CHAIN_OBJECTS = 0,  /* 3.8-3.10: frame objects (thread state's frame, f_back), each run by
				   * a C call of its own */
	BT_PY_CHAIN_FLAG = 1,     /* 3.11: _PyInterpreterFrame (through the _PyCFrame), is_entry marks
				   * the first of a C call */
	BT_PY_CHAIN_OWNER = 2,    /* 3.12+: each C call pushes an entry frame of its own, owner
				   * FRAME_OWNED_BY_CSTACK, outer to its first frame (3.12 through the
				   * _PyCFrame, 3.13 from the thread state's current_frame) */
};

/* What a frame says of its instruction. */
enum bt_py_instr {
	BT_PY_INSTR_LASTI = 0,     /* 3.8-3.9: f_lasti, the byte offset of the last instruction */
	BT_PY_INSTR_LASTI_UNITS,   /* 3.10: f_lasti in code units (2 bytes) */
	BT_PY_INSTR_POINTER,       /* 3.11+: a pointer into co_code_adaptive (prev_instr, instr_ptr) */
};

/* How a code object maps instructions to lines. */
enum bt_py_lines {
	BT_PY_LINES_LNOTAB = 0,    /* 3.8-3.9: co_lnotab */
	BT_PY_LINES_310,           /* 3.10: co_linetable, (bytes, line delta) pairs */
	BT_PY_LINES_LOCATIONS,     /* 3.11+: co_linetable, the location table */
};

#define BT_PY_NO_FIELD 0xffff   /* a field this version does not have */

struct bt_py_offsets {
	unsigned major, minor;
	uint8_t tid, chain, instr, lines;  /* enum bt_py_tid, bt_py_chain, bt_py_instr, bt_py_lines */
	/* _PyRuntimeState (struct pyruntimestate) */
	uint16_t runtime_interp_head;    /* interpreters.head: the newest interpreter */
	/* PyInterpreterState (struct _is) */
	uint16_t interp_next;
	uint16_t interp_threads_head;    /* threads.head (3.8-3.10: tstate_head): the newest thread state */
	/* PyThreadState (struct _ts) */
	uint16_t ts_next;
	uint16_t ts_tid;                 /* native_thread_id, or thread_id (see tid) */
	uint16_t ts_frame;               /* frame (3.8-3.10), cframe (3.11-3.12), current_frame (3.13) */
	/* _PyCFrame (3.11-3.12; else BT_PY_NO_FIELD) */
	uint16_t cframe_current;         /* current_frame: the innermost _PyInterpreterFrame */
	/* PyFrameObject (3.8-3.10), _PyInterpreterFrame (3.11+) */
	uint16_t frame_code;             /* f_code (3.13: f_executable) */
	uint16_t frame_previous;         /* f_back, previous */
	uint16_t frame_instr;            /* f_lasti, prev_instr (3.13: instr_ptr); see instr */
	uint16_t frame_entry;            /* is_entry (3.11), owner (3.12+); BT_PY_NO_FIELD before */
	/* PyCodeObject */
	uint16_t code_filename, code_name;
	uint16_t code_qualname;          /* 3.11+; BT_PY_NO_FIELD before (the name stands in) */
	uint16_t code_linetable;         /* co_lnotab (3.8-3.9), co_linetable; see lines */
	uint16_t code_firstlineno;       /* an int, and the 4 bytes after it: read with each frame */
	uint16_t code_adaptive;          /* co_code_adaptive (3.11+): the instructions instr points into */
	/* PyASCIIObject, PyCompactUnicodeObject */
	uint16_t str_length, str_state;
	uint16_t state_kind, state_compact, state_ascii;  /* bit numbers in state: 3, 1 and 1 bits */
	uint16_t ascii_data;             /* sizeof(PyASCIIObject): where a compact ASCII string's bytes are */
	uint16_t compact_data;           /* sizeof(PyCompactUnicodeObject): other compact strings */
	/* PyVarObject, PyBytesObject */
	uint16_t var_size;               /* ob_size */
	uint16_t bytes_data;             /* ob_sval */
};

/* The value of _PyInterpreterFrame.owner of an entry frame (FRAME_OWNED_BY_CSTACK, 3.12-3.13). */
#define BT_PY_OWNED_BY_CSTACK 3

/* The table for CPython major.minor, or NULL when it has none. */
const struct bt_py_offsets *bt_pyoffsets_get(unsigned major, unsigned minor);

/* Bytes of a code object to read for every field the table names (first line, names, tables). */
unsigned bt_pyoffsets_code_bytes(const struct bt_py_offsets *o);

/* _Py_DebugOffsets, as 3.13 lays it out at the start of _PyRuntime: the bytes it takes. */
#define BT_PY_DEBUG_OFFSETS_BYTES 584

/* The table of a 3.13 interpreter whose _PyRuntime starts with d[0..len) (the "xdebugpy" cookie,
 * PY_VERSION_HEX, then the offsets): *out is the built-in table of its version with every figure the
 * interpreter gives replaced by its own. 0; -ENOENT when d holds no such description; -ENOTSUP for
 * a version whose description this does not read (other than 3.13, or free-threaded); -EINVAL when
 * a figure is out of range, or lays out an object larger than it is read in. */
int bt_pyoffsets_from_debug(const uint8_t *d, size_t len, struct bt_py_offsets *out);

/* One figure of the table named as CPython's DWARF names it, for checking the table against it. */
struct bt_py_field {
	const char *type;     /* a struct's tag or a typedef's name */
	const char *member;   /* a member, nested ones joined by '.'; "sizeof": the type's size; the
			       * figure of a bit-field is its bit number in the unit holding it */
	size_t where;         /* the figure: offsetof(struct bt_py_offsets, ...) */
};
/* The figures of o's version, as its DWARF names them. */
const struct bt_py_field *bt_pyoffsets_fields(const struct bt_py_offsets *o, size_t *n);

/* Where 3.13's _Py_DebugOffsets keeps each figure bt_pyoffsets_from_debug reads: the figure's
 * member in it (type "_Py_DebugOffsets") and its byte offset there, a uint64_t. */
struct bt_py_debug_field {
	struct bt_py_field f;
	unsigned at;
};
const struct bt_py_debug_field *bt_pyoffsets_debug_fields(size_t *n);

static inline unsigned bt_pyoffsets_value(const struct bt_py_offsets *o, const struct bt_py_field *f)
{
	return *(const uint16_t *)(const void *)((const char *)o + f->where);
}

#endif
