/* pyoffsets.c - the offsets tables. Each figure is the field's offset on x86_64 (LP64), laid out
 * from CPython's own headers of that version (Include/... in its source tree, as python3.X-dev
 * installs them under include/python3.X); tests/unit/symsrc/test_pyoffsets.c checks every figure
 * against the DWARF of the interpreter (Debian's python3.11-dbg, and each libpython3.X.so built
 * with debug information). */
#include "symsrc/pyoffsets.h"

#include <errno.h>
#include <string.h>

/* PyASCIIObject (Include/cpython/unicodeobject.h) up to 3.11: PyObject_HEAD (0-15), Py_ssize_t
 * length (16), Py_hash_t hash (24), the state bit-fields in an unsigned int (32: interned:2, kind:3,
 * compact:1, ascii:1, ready:1), wchar_t *wstr (40): 48 bytes; PyCompactUnicodeObject adds
 * utf8_length, utf8 and wstr_length: 72. 3.12 dropped wstr and wstr_length (40 and 56 bytes) and
 * ready (statically_allocated in its place). PyVarObject (Include/object.h): ob_size (16);
 * PyBytesObject (Include/cpython/bytesobject.h): ob_base (0-23), ob_shash (24), ob_sval (32). */
#define STRINGS_UP_TO_311 .str_length = 16, .str_state = 32, .state_kind = 2, .state_compact = 5, \
	.state_ascii = 6, .ascii_data = 48, .compact_data = 72, .var_size = 16, .bytes_data = 32
#define STRINGS_FROM_312 .str_length = 16, .str_state = 32, .state_kind = 2, .state_compact = 5, \
	.state_ascii = 6, .ascii_data = 40, .compact_data = 56, .var_size = 16, .bytes_data = 32

/* 3.8 and 3.9 share every figure read here. */
#define PY38_39(mi) \
	.major = 3, .minor = mi, .tid = BT_PY_TID_PTHREAD, .chain = BT_PY_CHAIN_OBJECTS, \
	.instr = BT_PY_INSTR_LASTI, .lines = BT_PY_LINES_LNOTAB, \
	/* struct pyruntimestate (Include/internal/pycore_pystate.h in 3.8, pycore_runtime.h in 3.9): \
	 * four ints (0-15), finalizing (16), struct pyinterpreters { mutex (24); head (32); ... } */ \
	.runtime_interp_head = 32, \
	/* struct _is (pycore_pystate.h, pycore_interp.h): next (0), tstate_head (8) */ \
	.interp_next = 0, .interp_threads_head = 8, \
	/* struct _ts (Include/cpython/pystate.h): prev (0), next (8), interp (16), frame (24), ... \
	 * async_exc (168), thread_id (176): PyThread_get_thread_ident(), i.e. pthread_self() */ \
	.ts_next = 8, .ts_tid = 176, .ts_frame = 24, .cframe_current = BT_PY_NO_FIELD, \
	/* PyFrameObject (Include/frameobject.h, cpython/frameobject.h): PyObject_VAR_HEAD (0-23), \
	 * f_back (24), f_code (32), six pointers (40-87), two chars, f_gen (96), int f_lasti (104) */ \
	.frame_code = 32, .frame_previous = 24, .frame_instr = 104, .frame_entry = BT_PY_NO_FIELD, \
	/* PyCodeObject (Include/code.h, cpython/code.h): PyObject_HEAD (0-15), six ints (16-39), \
	 * co_firstlineno (40), co_code (48), six pointers (56-103), co_filename (104), co_name (112), \
	 * co_lnotab (120) */ \
	.code_filename = 104, .code_name = 112, .code_qualname = BT_PY_NO_FIELD, .code_linetable = 120, \
	.code_firstlineno = 40, .code_adaptive = BT_PY_NO_FIELD, \
	STRINGS_UP_TO_311

static const struct bt_py_offsets py38 = { PY38_39(8) };
static const struct bt_py_offsets py39 = { PY38_39(9) };

/* CPython 3.10 */
static const struct bt_py_offsets py310 = {
	.major = 3, .minor = 10, .tid = BT_PY_TID_PTHREAD, .chain = BT_PY_CHAIN_OBJECTS,
	.instr = BT_PY_INSTR_LASTI_UNITS, .lines = BT_PY_LINES_310,
	/* Include/internal/pycore_runtime.h: as 3.9's */
	.runtime_interp_head = 32,
	/* Include/internal/pycore_interp.h: as 3.9's */
	.interp_next = 0,
	.interp_threads_head = 8,
	/* Include/cpython/pystate.h, struct _ts: frame (24), four ints (32-47), cframe (48), ...,
	 * thread_id (176); the frame is the thread state's own, not its CFrame's */
	.ts_next = 8,
	.ts_tid = 176,
	.ts_frame = 24,
	.cframe_current = BT_PY_NO_FIELD,
	/* Include/cpython/frameobject.h, struct _frame: f_back (24), f_code (32), four pointers
	 * (40-71), f_trace (72), int f_stackdepth (80), two chars, f_gen (88), int f_lasti (96): the
	 * index of the last instruction, in code units */
	.frame_code = 32,
	.frame_previous = 24,
	.frame_instr = 96,
	.frame_entry = BT_PY_NO_FIELD,
	/* Include/cpython/code.h: as 3.9's, with co_linetable (120) where co_lnotab was */
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = BT_PY_NO_FIELD,
	.code_linetable = 120,
	.code_firstlineno = 40,
	.code_adaptive = BT_PY_NO_FIELD,
	STRINGS_UP_TO_311,
};

/* CPython 3.11 */
static const struct bt_py_offsets py311 = {
	.major = 3, .minor = 11, .tid = BT_PY_TID_NATIVE, .chain = BT_PY_CHAIN_FLAG,
	.instr = BT_PY_INSTR_POINTER, .lines = BT_PY_LINES_LOCATIONS,
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
	.ts_tid = 160,
	.ts_frame = 56,
	/* Include/cpython/pystate.h, struct _PyCFrame: uint8_t use_tracing (0), current_frame (8). */
	.cframe_current = 8,
	/* Include/internal/pycore_frame.h, struct _PyInterpreterFrame: f_func, f_globals, f_builtins,
	 * f_locals (0-31), f_code (32), frame_obj (40), previous (48), prev_instr (56), int stacktop
	 * (64), bool is_entry (68), char owner (69). */
	.frame_code = 32,
	.frame_previous = 48,
	.frame_instr = 56,
	.frame_entry = 68,
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
	STRINGS_UP_TO_311,
};

/* CPython 3.12 */
static const struct bt_py_offsets py312 = {
	.major = 3, .minor = 12, .tid = BT_PY_TID_NATIVE, .chain = BT_PY_CHAIN_OWNER,
	.instr = BT_PY_INSTR_POINTER, .lines = BT_PY_LINES_LOCATIONS,
	/* Include/internal/pycore_runtime.h: as 3.11's */
	.runtime_interp_head = 40,
	/* Include/internal/pycore_interp.h, struct _is: next (0), int id (8), ..., struct pythreads
	 * { next_unique_id (64); head (72); ... } */
	.interp_next = 0,
	.interp_threads_head = 72,
	/* Include/cpython/pystate.h, struct _ts: prev, next, interp (0-23), the _status bit-fields
	 * (24), six ints (28-51), cframe (56), four pointers (64-95), current_exception (96),
	 * exc_info (104), dict (112), gilstate_counter (120), async_exc (128), thread_id (136),
	 * native_thread_id (144). */
	.ts_next = 8,
	.ts_tid = 144,
	.ts_frame = 56,
	/* struct _PyCFrame: current_frame (0), previous (8) */
	.cframe_current = 0,
	/* Include/internal/pycore_frame.h, struct _PyInterpreterFrame: f_code (0), previous (8),
	 * f_funcobj, f_globals, f_builtins, f_locals, frame_obj (16-55), prev_instr (56), int stacktop
	 * (64), uint16_t return_offset (68), char owner (70) */
	.frame_code = 0,
	.frame_previous = 8,
	.frame_instr = 56,
	.frame_entry = 70,
	/* Include/cpython/code.h, _PyCode_DEF: PyObject_VAR_HEAD (0-23), three pointers (24-47),
	 * ints co_flags, co_argcount, co_posonlyargcount, co_kwonlyargcount, co_stacksize (48-67),
	 * co_firstlineno (68), six ints (72-95), co_localsplusnames (96), co_localspluskinds (104),
	 * co_filename (112), co_name (120), co_qualname (128), co_linetable (136), co_weakreflist,
	 * _co_cached, _co_instrumentation_version, _co_monitoring (144-175), int _co_firsttraceable
	 * (176), co_extra (184), co_code_adaptive (192) */
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_firstlineno = 68,
	.code_adaptive = 192,
	STRINGS_FROM_312,
};

/* CPython 3.13 (its _Py_DebugOffsets give the same figures, and override these when read) */
static const struct bt_py_offsets py313 = {
	.major = 3, .minor = 13, .tid = BT_PY_TID_NATIVE, .chain = BT_PY_CHAIN_OWNER,
	.instr = BT_PY_INSTR_POINTER, .lines = BT_PY_LINES_LOCATIONS,
	/* Include/internal/pycore_runtime.h, struct pyruntimestate: _Py_DebugOffsets debug_offsets
	 * (0-583), ints and the _finalizing pointers (584-631), struct pyinterpreters { mutex;
	 * head (632); ... } */
	.runtime_interp_head = 632,
	/* Include/internal/pycore_interp.h, struct _is: ceval, the eval breaker and the GC state
	 * first (0-7263), next (7264), int64_t id (7272), ..., struct pythreads { next_unique_id
	 * (7336); head (7344); ... } */
	.interp_next = 7264,
	.interp_threads_head = 7344,
	/* Include/cpython/pystate.h, struct _ts: prev, next, interp, eval_breaker (0-31), _status
	 * (32), nine ints (36-71), current_frame (72): no _PyCFrame any more; ..., thread_id (152),
	 * native_thread_id (160) */
	.ts_next = 8,
	.ts_tid = 160,
	.ts_frame = 72,
	.cframe_current = BT_PY_NO_FIELD,
	/* Include/internal/pycore_frame.h, struct _PyInterpreterFrame: f_executable (0), previous
	 * (8), f_funcobj, f_globals, f_builtins, f_locals, frame_obj (16-55), instr_ptr (56): the
	 * instruction running or about to, int stacktop (64), return_offset (68), char owner (70) */
	.frame_code = 0,
	.frame_previous = 8,
	.frame_instr = 56,
	.frame_entry = 70,
	/* Include/cpython/code.h: as 3.12's up to co_weakreflist (144); co_executors, _co_cached,
	 * _co_instrumentation_version, _co_monitoring (152-183), int _co_firsttraceable (184),
	 * co_extra (192), co_code_adaptive (200) */
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_firstlineno = 68,
	.code_adaptive = 200,
	STRINGS_FROM_312,
};

static const struct bt_py_offsets *const tables[] = { &py38, &py39, &py310, &py311, &py312, &py313 };

const struct bt_py_offsets *bt_pyoffsets_get(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i]->major == major && tables[i]->minor == minor)
			return tables[i];
	return NULL;
}

unsigned bt_pyoffsets_code_bytes(const struct bt_py_offsets *o)
{
	const uint16_t f[] = { o->code_filename, o->code_name, o->code_qualname, o->code_linetable,
			       o->code_firstlineno };
	unsigned end = 0;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i] != BT_PY_NO_FIELD && f[i] + 8u > end)
			end = f[i] + 8u;
	return end;
}

/* ---- _Py_DebugOffsets --------------------------------------------------------------------- */

/* Where 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h) keeps each figure this reads:
 * a uint64_t per figure, sub-structs of it named as DWARF names them. */
#define D(member, field) { "_Py_DebugOffsets", member, offsetof(struct bt_py_offsets, field) }
static const struct bt_py_debug_field debug313[] = {
	{ D("runtime_state.interpreters_head", runtime_interp_head), 40 },
	{ D("interpreter_state.next", interp_next), 64 },
	{ D("interpreter_state.threads_head", interp_threads_head), 72 },
	{ D("thread_state.next", ts_next), 168 },
	{ D("thread_state.current_frame", ts_frame), 184 },
	{ D("thread_state.native_thread_id", ts_tid), 200 },
	{ D("interpreter_frame.previous", frame_previous), 232 },
	{ D("interpreter_frame.executable", frame_code), 240 },
	{ D("interpreter_frame.instr_ptr", frame_instr), 248 },
	{ D("interpreter_frame.owner", frame_entry), 264 },
	{ D("code_object.filename", code_filename), 280 },
	{ D("code_object.name", code_name), 288 },
	{ D("code_object.qualname", code_qualname), 296 },
	{ D("code_object.linetable", code_linetable), 304 },
	{ D("code_object.firstlineno", code_firstlineno), 312 },
	{ D("code_object.co_code_adaptive", code_adaptive), 344 },
	{ D("bytes_object.ob_size", var_size), 520 },
	{ D("bytes_object.ob_sval", bytes_data), 528 },
	{ D("unicode_object.state", str_state), 544 },
	{ D("unicode_object.length", str_length), 552 },
	{ D("unicode_object.asciiobject_size", ascii_data), 560 },
};
#undef D
#define DEBUG_VERSION_AT 8
#define DEBUG_FREE_THREADED_AT 16

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

int bt_pyoffsets_from_debug(const uint8_t *d, size_t len, struct bt_py_offsets *out)
{
	if (len < BT_PY_DEBUG_OFFSETS_BYTES || memcmp(d, "xdebugpy", 8) != 0)
		return -ENOENT;
	uint64_t v = get64(d + DEBUG_VERSION_AT);
	unsigned major = (unsigned)(v >> 24) & 0xff, minor = (unsigned)(v >> 16) & 0xff;
	/* the description's own layout changes with the version: only 3.13's is read here; a
	 * free-threaded build lays out its objects otherwise */
	const struct bt_py_offsets *base = bt_pyoffsets_get(major, minor);
	if (major != 3 || minor != 13 || !base || get64(d + DEBUG_FREE_THREADED_AT) != 0)
		return -ENOTSUP;
	struct bt_py_offsets o = *base;
	for (size_t i = 0; i < sizeof(debug313) / sizeof(debug313[0]); i++) {
		uint64_t fig = get64(d + debug313[i].at);
		if (fig >= BT_PY_NO_FIELD)
			return -EINVAL;
		*(uint16_t *)(void *)((char *)&o + debug313[i].f.where) = (uint16_t)fig;
	}
	/* PyCompactUnicodeObject is PyASCIIObject and two more words (utf8_length, utf8) */
	o.compact_data = (uint16_t)(o.ascii_data + (base->compact_data - base->ascii_data));
	/* the figures come from a file the profiled process maps: the objects they lay out must be
	 * of the sizes the readers read them in */
	unsigned code_end = bt_pyoffsets_code_bytes(&o);
	if (code_end > 256 || o.code_adaptive > 1024 || o.str_length + 8u > o.ascii_data ||
	    o.str_state + 4u > o.ascii_data || o.compact_data > 128 || o.var_size + 8u > o.bytes_data ||
	    o.bytes_data > 64)
		return -EINVAL;
	*out = o;
	return 0;
}

const struct bt_py_debug_field *bt_pyoffsets_debug_fields(size_t *n)
{
	*n = sizeof(debug313) / sizeof(debug313[0]);
	return debug313;
}

/* ---- the figures by their DWARF names ----------------------------------------------------- */

#define F(type, member, field) { type, member, offsetof(struct bt_py_offsets, field) }
#define STRING_FIELDS \
	F("PyASCIIObject", "length", str_length), F("PyASCIIObject", "state", str_state), \
	F("PyASCIIObject", "state.kind", state_kind), F("PyASCIIObject", "state.compact", state_compact), \
	F("PyASCIIObject", "state.ascii", state_ascii), F("PyASCIIObject", "sizeof", ascii_data), \
	F("PyCompactUnicodeObject", "sizeof", compact_data), F("PyVarObject", "ob_size", var_size), \
	F("PyBytesObject", "ob_sval", bytes_data)

static const struct bt_py_field fields38[] = {
	F("pyruntimestate", "interpreters.head", runtime_interp_head),
	F("_is", "next", interp_next),
	F("_is", "tstate_head", interp_threads_head),
	F("_ts", "next", ts_next),
	F("_ts", "thread_id", ts_tid),
	F("_ts", "frame", ts_frame),
	F("_frame", "f_code", frame_code),
	F("_frame", "f_back", frame_previous),
	F("_frame", "f_lasti", frame_instr),
	F("PyCodeObject", "co_filename", code_filename),
	F("PyCodeObject", "co_name", code_name),
	F("PyCodeObject", "co_lnotab", code_linetable),
	F("PyCodeObject", "co_firstlineno", code_firstlineno),
	STRING_FIELDS,
};

static const struct bt_py_field fields310[] = {
	F("pyruntimestate", "interpreters.head", runtime_interp_head),
	F("_is", "next", interp_next),
	F("_is", "tstate_head", interp_threads_head),
	F("_ts", "next", ts_next),
	F("_ts", "thread_id", ts_tid),
	F("_ts", "frame", ts_frame),
	F("_frame", "f_code", frame_code),
	F("_frame", "f_back", frame_previous),
	F("_frame", "f_lasti", frame_instr),
	F("PyCodeObject", "co_filename", code_filename),
	F("PyCodeObject", "co_name", code_name),
	F("PyCodeObject", "co_linetable", code_linetable),
	F("PyCodeObject", "co_firstlineno", code_firstlineno),
	STRING_FIELDS,
};

#define CODE_FIELDS_311 \
	F("PyCodeObject", "co_filename", code_filename), F("PyCodeObject", "co_name", code_name), \
	F("PyCodeObject", "co_qualname", code_qualname), F("PyCodeObject", "co_linetable", code_linetable), \
	F("PyCodeObject", "co_firstlineno", code_firstlineno), \
	F("PyCodeObject", "co_code_adaptive", code_adaptive)

static const struct bt_py_field fields311[] = {
	F("pyruntimestate", "interpreters.head", runtime_interp_head),
	F("_is", "next", interp_next),
	F("_is", "threads.head", interp_threads_head),
	F("_ts", "next", ts_next),
	F("_ts", "native_thread_id", ts_tid),
	F("_ts", "cframe", ts_frame),
	F("_PyCFrame", "current_frame", cframe_current),
	F("_PyInterpreterFrame", "f_code", frame_code),
	F("_PyInterpreterFrame", "previous", frame_previous),
	F("_PyInterpreterFrame", "prev_instr", frame_instr),
	F("_PyInterpreterFrame", "is_entry", frame_entry),
	CODE_FIELDS_311,
	STRING_FIELDS,
};

static const struct bt_py_field fields312[] = {
	F("pyruntimestate", "interpreters.head", runtime_interp_head),
	F("_is", "next", interp_next),
	F("_is", "threads.head", interp_threads_head),
	F("_ts", "next", ts_next),
	F("_ts", "native_thread_id", ts_tid),
	F("_ts", "cframe", ts_frame),
	F("_PyCFrame", "current_frame", cframe_current),
	F("_PyInterpreterFrame", "f_code", frame_code),
	F("_PyInterpreterFrame", "previous", frame_previous),
	F("_PyInterpreterFrame", "prev_instr", frame_instr),
	F("_PyInterpreterFrame", "owner", frame_entry),
	CODE_FIELDS_311,
	STRING_FIELDS,
};

static const struct bt_py_field fields313[] = {
	F("pyruntimestate", "interpreters.head", runtime_interp_head),
	F("_is", "next", interp_next),
	F("_is", "threads.head", interp_threads_head),
	F("_ts", "next", ts_next),
	F("_ts", "native_thread_id", ts_tid),
	F("_ts", "current_frame", ts_frame),
	F("_PyInterpreterFrame", "f_executable", frame_code),
	F("_PyInterpreterFrame", "previous", frame_previous),
	F("_PyInterpreterFrame", "instr_ptr", frame_instr),
	F("_PyInterpreterFrame", "owner", frame_entry),
	CODE_FIELDS_311,
	STRING_FIELDS,
};
#undef F

#define N(a) (sizeof(a) / sizeof((a)[0]))

const struct bt_py_field *bt_pyoffsets_fields(const struct bt_py_offsets *o, size_t *n)
{
	switch (o->minor) {
	case 8:
	case 9:
		*n = N(fields38);
		return fields38;
	case 10:
		*n = N(fields310);
		return fields310;
	case 11:
		*n = N(fields311);
		return fields311;
	case 12:
		*n = N(fields312);
		return fields312;
	default:
		*n = N(fields313);
		return fields313;
	}
}
