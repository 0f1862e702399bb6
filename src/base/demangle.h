/* demangle.h - C++ (Itanium ABI, also Rust legacy) symbol demangling. */
#ifndef BT_DEMANGLE_H
#define BT_DEMANGLE_H

/* Demangled names longer than this are not produced: the name stays mangled. */
#define BT_DEMANGLE_MAX_OUT (64 * 1024)

/* A malloc'ed demangled form of name, or NULL when name is not mangled, is invalid, would demangle
 * to more than BT_DEMANGLE_MAX_OUT bytes, or on failure. Time and memory are bounded by the
 * name's length and that limit. */
char *bt_demangle(const char *name);

#endif
