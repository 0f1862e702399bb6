/* records.h - the ring buffer records' sizes and validity: the one check every consumer makes before
 * it reads a record's fields. */
#ifndef BT_RECORDS_H
#define BT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include "bt_proto.h"

/* The size of a record of this type (a newer producer may write longer ones, never shorter); for a
 * sample, the fixed part before its ips. 0 for a type this build does not know. */
size_t bt_rec_min_size(unsigned type);

/* Whether the len bytes at h hold a whole record this build can read: a header of this protocol
 * version, a known type, a size within len and not below the type's, counts that stay within the
 * record's arrays and strings that are terminated. */
bool bt_rec_valid(const struct bt_rec_hdr *h, size_t len);

#endif
