/* pyoffsets.c - the offsets table. Each figure is the field's offset on x86_64 (LP64), laid out
 * from CPython's own headers of that version (Include/... in its source tree, as Debian's
 * python3.X-dev installs them under /usr/include/python3.X); tests/unit/symsrc/test_pyoffsets.c
 * checks every figure against the DWARF of Debian's python3.X-dbg. */
#include "symsrc/pyoffsets.h"

/* CPython 3.11 */
static const struct bt_py_offsets py311 = {
	.major = 3, .minor = 11,
	/* Include/internal/pycore_runtime.h, struct pyruntimestate: five ints (0-19), _finalizing, an
	 * _Py_atomic_address (24), then struct pyinterpreters { mutex (32); head (40); ... }. */
	.runtime_interp_head = 40,
	/* Include/internal/pycore_interp.h, struct _is: next (0), struct pythreads { uint64_t
	 * next_unique_id (8); PyThreadState *head (16); ... }. */
	.interp_next = 0,
	.interp_threads_head = 16,
	/* Include/cpython/pystate.h, struct _ts: prev (0), next (8), interp (16), seven ints (24-51),
	 * cframe (56), four pointers (64-95), three curexc_* (96-119), exc_info (120), dict (128),
	 * gilstate_counter (136), async_exc (144), thread_id (152), native_thread_id (160). */
	.ts_next = 8,
	.ts_native_tid = 160,
	.ts_cframe = 56,
	/* Include/cpython/pystate.h, struct _PyCFrame: uint8_t use_tracing (0), current_frame (8). */
	.cframe_current = 8,
	/* Include/internal/pycore_frame.h, struct _PyInterpreterFrame: f_func, f_globals, f_builtins,
	 * f_locals (0-31), f_code (32), frame_obj (40), previous (48), prev_instr (56), int stacktop
	 * (64), bool is_entry (68), char owner (69). */
	.frame_code = 32,
	.frame_previous = 48,
	.frame_prev_instr = 56,
	.frame_is_entry = 68,
	/* Include/cpython/code.h, _PyCode_DEF: PyObject_VAR_HEAD (0-23), co_consts, co_names,
	 * co_exceptiontable (24-47), int co_flags (48), two shorts (52-55), ints co_argcount,
	 * co_posonlyargcount, co_kwonlyargcount, co_stacksize (56-71), co_firstlineno (72), five ints
	 * (76-95), co_localsplusnames (96), co_localspluskinds (104), co_filename (112), co_name (120),
	 * co_qualname (128), co_linetable (136), co_weakreflist (144), _co_code (152), _co_linearray
	 * (160), int _co_firsttraceable (168), co_extra (176), co_code_adaptive (184). */
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_firstlineno = 72,
	.code_adaptive = 184,
	/* Include/cpython/unicodeobject.h, PyASCIIObject: PyObject_HEAD (0-15), Py_ssize_t length
	 * (16), Py_hash_t hash (24), the state bit-fields in an unsigned int (32), wchar_t *wstr (40):
	 * 48 bytes; PyCompactUnicodeObject adds utf8_length, utf8 and wstr_length: 72 bytes. */
	.str_length = 16,
	.str_state = 32,
	/* the same struct's state: unsigned interned:2, kind:3, compact:1, ascii:1, ready:1 */
	.state_kind = 2,
	.state_compact = 5,
	.state_ascii = 6,
	.ascii_data = 48,
	.compact_data = 72,
	/* Include/object.h, PyVarObject: PyObject ob_base (0-15), ob_size (16);
	 * Include/cpython/bytesobject.h, PyBytesObject: ob_base (0-23), ob_shash (24), ob_sval (32). */
	.var_size = 16,
	.bytes_data = 32,
};

static const struct bt_py_offsets *const tables[] = { &py311 };

const struct bt_py_offsets *bt_pyoffsets_get(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i]->major == major && tables[i]->minor == minor)
			return tables[i];
	return NULL;
}

#define F(type, member, field) { type, member, offsetof(struct bt_py_offsets, field) }
static const struct bt_py_field fields[] = {
	F("pyruntimestate", "interpreters.head", runtime_interp_head),
	F("_is", "next", interp_next),
	F("_is", "threads.head", interp_threads_head),
	F("_ts", "next", ts_next),
	F("_ts", "native_thread_id", ts_native_tid),
	F("_ts", "cframe", ts_cframe),
	F("_PyCFrame", "current_frame", cframe_current),
	F("_PyInterpreterFrame", "f_code", frame_code),
	F("_PyInterpreterFrame", "previous", frame_previous),
	F("_PyInterpreterFrame", "prev_instr", frame_prev_instr),
	F("_PyInterpreterFrame", "is_entry", frame_is_entry),
	F("PyCodeObject", "co_filename", code_filename),
	F("PyCodeObject", "co_name", code_name),
	F("PyCodeObject", "co_qualname", code_qualname),
	F("PyCodeObject", "co_linetable", code_linetable),
	F("PyCodeObject", "co_firstlineno", code_firstlineno),
	F("PyCodeObject", "co_code_adaptive", code_adaptive),
	F("PyASCIIObject", "length", str_length),
	F("PyASCIIObject", "state", str_state),
	F("PyASCIIObject", "state.kind", state_kind),
	F("PyASCIIObject", "state.compact", state_compact),
	F("PyASCIIObject", "state.ascii", state_ascii),
	F("PyASCIIObject", "sizeof", ascii_data),
	F("PyCompactUnicodeObject", "sizeof", compact_data),
	F("PyVarObject", "ob_size", var_size),
	F("PyBytesObject", "ob_sval", bytes_data),
};
#undef F

const struct bt_py_field *bt_pyoffsets_fields(size_t *n)
{
	*n = sizeof(fields) / sizeof(fields[0]);
	return fields;
}
