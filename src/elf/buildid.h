/* buildid.h - GNU build-ids: read from ELF files (by fd, buffer or path, compressed modules included),
 * printed as hex, parsed from hex, compared. */
#ifndef BT_BUILDID_H
#define BT_BUILDID_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define BT_BUILD_ID_MAXLEN 64  /* --build-id=0xHEX allows any length; sha1 is 20, md5 16 */

struct bt_build_id {
	uint8_t len;   /* 0: none */
	uint8_t data[BT_BUILD_ID_MAXLEN];
};

/* All return 0, -ENODATA (a valid ELF file without a GNU build-id note), -ENOEXEC (not ELF, or
 * malformed), or another -errno. Notes are found in PT_NOTE segments and SHT_NOTE sections, with
 * 4- or 8-byte alignment, in 32- and 64-bit files of either endianness. */
int bt_buildid_from_mem(const void *buf, size_t len, struct bt_build_id *out);
int bt_buildid_from_fd(int fd, struct bt_build_id *out);
/* Opens path without blocking or following a final symlink into a non-regular file; files compressed
 * with xz, zstd or gzip (e.g. kernel modules .ko.xz) are decompressed first, detected by content. */
int bt_buildid_from_path(const char *path, struct bt_build_id *out);

/* Lowercase hex into buf (needs 2*len+1 bytes); returns buf ("" when len is 0 or buf too small). */
char *bt_buildid_hex(const struct bt_build_id *id, char *buf, size_t len);
/* Parses hex (even number of digits, 2..128); 0 or -EINVAL. */
int bt_buildid_parse_hex(const char *hex, struct bt_build_id *out);
bool bt_buildid_eq(const struct bt_build_id *a, const struct bt_build_id *b);

#endif
