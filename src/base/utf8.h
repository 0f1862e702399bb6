/* utf8.h - what counts as one valid UTF-8 character, for the writers of formats that must be valid
 * Unicode (JSON, SVG) while names (comms, symbols, paths) are whatever bytes a program chose. */
#ifndef BT_UTF8_H
#define BT_UTF8_H

#include <stddef.h>

/* Length (1 to 4) of the valid UTF-8 sequence that starts s, at most n bytes long; 0 when s does not
 * start one (a stray continuation byte, a truncated sequence, an overlong form, a surrogate, a value
 * past U+10FFFF) or n is 0. */
size_t bt_utf8_len(const void *s, size_t n);

#endif
