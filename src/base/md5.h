/* md5.h - the MD5 digest (RFC 1321): what Prometheus' hashmod relabeling hashes label values with,
 * so that a rule shards targets as Prometheus would. Not for anything that needs a secure hash. */
#ifndef BT_MD5_H
#define BT_MD5_H

#include <stddef.h>
#include <stdint.h>

/* The 16-byte MD5 digest of data[0..len) into out. */
void bt_md5(const void *data, size_t len, uint8_t out[16]);

#endif
