/* demangle.h - C++ (Itanium ABI, also Rust legacy) symbol demangling. */
#ifndef BT_DEMANGLE_H
#define BT_DEMANGLE_H

/* A malloc'ed demangled form of name, or NULL when name is not mangled (or on failure). */
char *bt_demangle(const char *name);

#endif
