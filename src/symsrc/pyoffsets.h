/* pyoffsets.h - where CPython keeps what a profiler reads of a running interpreter: the offsets of
 * the fields of its runtime, thread states, frames, code objects and strings, per version, each
 * figure with where it comes from (checked against the interpreter's DWARF by a test). */
#ifndef BT_PYOFFSETS_H
#define BT_PYOFFSETS_H

#include <stddef.h>
#include <stdint.h>

struct bt_py_offsets {
	unsigned major, minor;
	/* _PyRuntimeState (struct pyruntimestate) */
	uint16_t runtime_interp_head;    /* interpreters.head: the newest interpreter */
	/* PyInterpreterState (struct _is) */
	uint16_t interp_next;
	uint16_t interp_threads_head;    /* threads.head: the newest thread state */
	/* PyThreadState (struct _ts) */
	uint16_t ts_next;
	uint16_t ts_native_tid;          /* the thread's id as gettid() gave it, in its pid namespace */
	uint16_t ts_cframe;
	/* _PyCFrame */
	uint16_t cframe_current;         /* current_frame: the innermost _PyInterpreterFrame */
	/* _PyInterpreterFrame */
	uint16_t frame_code;             /* f_code */
	uint16_t frame_previous;
	uint16_t frame_prev_instr;       /* the code unit before the next instruction */
	uint16_t frame_is_entry;         /* a bool: the first frame of a C call of the eval loop */
	/* PyCodeObject */
	uint16_t code_filename, code_name, code_qualname, code_linetable;
	uint16_t code_firstlineno;       /* an int, and the int after it: read with each frame */
	uint16_t code_adaptive;          /* co_code_adaptive: the instructions prev_instr points into */
	/* PyASCIIObject, PyCompactUnicodeObject */
	uint16_t str_length, str_state;
	uint16_t state_kind, state_compact, state_ascii;  /* bit numbers in state: 3, 1 and 1 bits */
	uint16_t ascii_data;             /* sizeof(PyASCIIObject): where a compact ASCII string's bytes are */
	uint16_t compact_data;           /* sizeof(PyCompactUnicodeObject): other compact strings */
	/* PyVarObject, PyBytesObject */
	uint16_t var_size;               /* ob_size */
	uint16_t bytes_data;             /* ob_sval */
};

/* The table for CPython major.minor, or NULL when it has none. */
const struct bt_py_offsets *bt_pyoffsets_get(unsigned major, unsigned minor);

/* One figure of the table named as CPython's DWARF names it, for checking the table against it. */
struct bt_py_field {
	const char *type;     /* a struct's tag or a typedef's name */
	const char *member;   /* a member, nested ones joined by '.'; "sizeof": the type's size; the
			       * figure of a bit-field is its bit number in the unit holding it */
	size_t where;         /* the figure: offsetof(struct bt_py_offsets, ...) */
};
const struct bt_py_field *bt_pyoffsets_fields(size_t *n);

static inline unsigned bt_pyoffsets_value(const struct bt_py_offsets *o, const struct bt_py_field *f)
{
	return *(const uint16_t *)(const void *)((const char *)o + f->where);
}

#endif
