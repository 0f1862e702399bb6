/* recqueue.h - a queue of variable-sized records between one thread that appends and one that
 * takes, in memory mapped by the megabyte and given back as it is taken: what lets the ring buffer
 * be emptied as fast as the kernel fills it while its records wait for a slower consumer. */
#ifndef BT_RECQUEUE_H
#define BT_RECQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_recq;

/* At most max_bytes queued for records pushed as droppable (others are always taken). 0 or -errno. */
int bt_recq_new(size_t max_bytes, struct bt_recq **out);
void bt_recq_free(struct bt_recq *q);

/* Appends a copy of len bytes. -ENOSPC when droppable and the queue holds max_bytes (counted as
 * dropped), -ENOMEM. */
int bt_recq_push(struct bt_recq *q, const void *rec, size_t len, bool droppable);

/* The oldest record (8-byte aligned, valid until it is popped) and its length, or NULL. */
const void *bt_recq_peek(struct bt_recq *q, size_t *len);
/* Forgets the oldest record. */
void bt_recq_pop(struct bt_recq *q);

/* Bytes queued, the most ever queued, and the droppable records refused. */
size_t bt_recq_bytes(struct bt_recq *q);
size_t bt_recq_peak(struct bt_recq *q);
uint64_t bt_recq_dropped(struct bt_recq *q);

#endif
