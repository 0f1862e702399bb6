/* esc.h - hostile text made safe to print: names and paths come from profiled processes and may
 * hold any bytes, escape sequences for the operator's terminal (clear the screen, set its title,
 * write its clipboard) and newlines that forge lines included. Control characters (below 0x20,
 * DEL, and U+0080..U+009F, the C1 controls), and bytes that start no valid UTF-8 character, are
 * written as \xHH (two lowercase hex digits per byte), a backslash as \\, every other byte as it
 * is: the escaped text is valid UTF-8 without a control character, and bt_unesc (as Python's
 * codecs.escape_decode) gives the original bytes back. */
#ifndef BT_ESC_H
#define BT_ESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether s (n bytes) holds anything that is escaped. */
bool bt_esc_needed(const char *s, size_t n);

/* The bytes s (n bytes) takes once escaped. */
size_t bt_esc_len(const char *s, size_t n);

/* Writes s (n bytes) escaped; what fwrite returns is not checked (see ferror). */
void bt_esc_write(FILE *f, const char *s, size_t n);

/* s escaped into buf (len bytes, NUL-terminated, cut at a whole character or escape when short).
 * Returns buf. */
char *bt_esc_str(char *buf, size_t len, const char *s);

/* s escaped into a new malloc'ed string, or NULL (errno ENOMEM). */
char *bt_esc_dup(const char *s);

/* Undoes the escaping in place: \\ and \xHH (but \x00, which a C string cannot hold) become the
 * byte they stand for; any other backslash stays as it is. The new length. */
size_t bt_unesc(char *s);

#endif
