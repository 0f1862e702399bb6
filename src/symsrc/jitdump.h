/* jitdump.h - jitdump files (jit-PID.dump, the format perf inject reads; written by Node's
 * --perf-prof and the JVM's and LLVM's agents): code load and move records, read as they are
 * appended, into a perf map table (name, address, size). Knows nothing of processes. */
#ifndef BT_JITDUMP_H
#define BT_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/htab.h"
#include "symsrc/perfmap.h"

#define BT_JITDUMP_MAGIC 0x4A695444u    /* "JiTD" in the writer's byte order */
#define BT_JITDUMP_HEADER_MAX 4096u     /* a larger file header is refused */
#define BT_JITDUMP_RECORD_MAX (256u << 20) /* a larger record (its code included) ends reading */

enum bt_jitdump_rec {
	BT_JITDUMP_CODE_LOAD = 0,
	BT_JITDUMP_CODE_MOVE = 1,
	BT_JITDUMP_CODE_DEBUG_INFO = 2,
	BT_JITDUMP_CODE_CLOSE = 3,
	BT_JITDUMP_CODE_UNWINDING_INFO = 4,
};

struct bt_jitdump_code {
	uint64_t index;      /* the writer's code_index */
	uint32_t name_off;   /* in the table's names */
};

struct bt_jitdump {
	bool have_header;
	bool swapped;        /* written in the other byte order */
	int error;           /* 0, or why nothing more is read: -EINVAL not a jitdump, -EBADMSG corrupt */
	uint64_t bytes;      /* consumed: the header and complete records */
	uint64_t loads, moves, others;
	uint64_t bad_records; /* load or move records that name nothing (skipped, counted) */
	struct bt_jitdump_code *codes;  /* every code load: a move finds its name here */
	size_t ncodes, codes_cap;
	struct bt_htab index;           /* code_index -> codes[] */
};

void bt_jitdump_init(struct bt_jitdump *d);
void bt_jitdump_free(struct bt_jitdump *d);

/* Takes the header and the complete records of buf[0..len): the input's next bytes, of which avail
 * (>= len) exist (a record whose code lies beyond buf is taken when its name is in buf and all of it
 * exists). Loads and moves go into out. *used gets the bytes consumed, which may pass len. 0 (also
 * when it stopped at an unfinished record), -EINVAL when the input is no jitdump, -EBADMSG when a
 * record's size is impossible (nothing after it can be trusted), -ENOMEM. */
int bt_jitdump_parse(struct bt_jitdump *d, const uint8_t *buf, size_t len, uint64_t avail,
		     struct bt_perfmap *out, size_t *used);

/* Reads fd from offset d->bytes to its end, as bt_jitdump_parse. 0 or -errno. */
int bt_jitdump_read_fd(struct bt_jitdump *d, int fd, struct bt_perfmap *out);

#endif
