/* decompress.h - whole-buffer decompression of xz, zstd and gzip data, recognised by magic bytes,
 * for compressed kernel modules and MiniDebugInfo (.gnu_debugdata). */
#ifndef BT_DECOMPRESS_H
#define BT_DECOMPRESS_H

#include <stddef.h>

enum bt_compression { BT_COMP_NONE = 0, BT_COMP_XZ, BT_COMP_ZSTD, BT_COMP_GZIP };

enum bt_compression bt_compression_detect(const void *buf, size_t len);

/* Decompresses buf into a malloc'ed *out of *outlen bytes, refusing output larger than max_out
 * (-EFBIG). Returns 0, -EINVAL (not compressed / corrupt), -ENOMEM, -EFBIG. */
int bt_decompress(const void *buf, size_t len, size_t max_out, void **out, size_t *outlen);

#endif
