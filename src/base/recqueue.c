/* recqueue.c - a list of mapped chunks, each a run of [length, bytes padded to 8] records; the
 * taker reads a record in place without the lock (the appender only writes past it) and frees a
 * chunk once it has taken all of it. */
#include "base/recqueue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK (1u << 20)
#define HDR 8

struct chunk {
	struct chunk *next;
	size_t size;         /* bytes mapped, this header included */
	size_t head, tail;   /* offsets of the next record to take and of the free room */
};

struct bt_recq {
	pthread_mutex_t mu;
	struct chunk *first, *last;
	size_t bytes, peak, max_bytes;
	uint64_t dropped;
};

static size_t room(size_t len)
{
	return HDR + ((len + 7) & ~(size_t)7);
}

int bt_recq_new(size_t max_bytes, struct bt_recq **out)
{
	struct bt_recq *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->mu, NULL);
	q->max_bytes = max_bytes;
	*out = q;
	return 0;
}

void bt_recq_free(struct bt_recq *q)
{
	if (!q)
		return;
	for (struct chunk *c = q->first, *next; c; c = next) {
		next = c->next;
		munmap(c, c->size);
	}
	pthread_mutex_destroy(&q->mu);
	free(q);
}

static struct chunk *new_chunk(size_t need)
{
	size_t size = sizeof(struct chunk) + need > CHUNK ? sizeof(struct chunk) + need : CHUNK;
	struct chunk *c = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	c->next = NULL;
	c->size = size;
	c->head = c->tail = sizeof(struct chunk);
	return c;
}

int bt_recq_push(struct bt_recq *q, const void *rec, size_t len, bool droppable)
{
	size_t need = room(len);
	pthread_mutex_lock(&q->mu);
	if (droppable && q->bytes + need > q->max_bytes) {
		q->dropped++;
		pthread_mutex_unlock(&q->mu);
		return -ENOSPC;
	}
	struct chunk *c = q->last;
	if (!c || c->size - c->tail < need) {
		struct chunk *n = new_chunk(need);
		if (!n) {
			pthread_mutex_unlock(&q->mu);
			return -ENOMEM;
		}
		if (c)
			c->next = n;
		else
			q->first = n;
		q->last = c = n;
	}
	uint8_t *at = (uint8_t *)c + c->tail;
	uint64_t l = len;
	memcpy(at, &l, sizeof(l));
	memcpy(at + HDR, rec, len);
	c->tail += need;
	q->bytes += need;
	if (q->bytes > q->peak)
		q->peak = q->bytes;
	pthread_mutex_unlock(&q->mu);
	return 0;
}

const void *bt_recq_peek(struct bt_recq *q, size_t *len)
{
	pthread_mutex_lock(&q->mu);
	struct chunk *c = q->first;
	/* chunks taken whole are given back, but for the last, where the appender writes */
	while (c && c->head == c->tail && c->next) {
		q->first = c->next;
		munmap(c, c->size);
		c = q->first;
	}
	const uint8_t *rec = NULL;
	if (c && c->head < c->tail) {
		uint64_t l;
		memcpy(&l, (uint8_t *)c + c->head, sizeof(l));
		*len = (size_t)l;
		rec = (uint8_t *)c + c->head + HDR;
	}
	pthread_mutex_unlock(&q->mu);
	return rec;
}

void bt_recq_pop(struct bt_recq *q)
{
	pthread_mutex_lock(&q->mu);
	struct chunk *c = q->first;
	if (c && c->head < c->tail) {
		uint64_t l;
		memcpy(&l, (uint8_t *)c + c->head, sizeof(l));
		size_t need = room((size_t)l);
		c->head += need;
		q->bytes -= need;
		if (c->head == c->tail && !c->next) {
			/* the last chunk, empty: written again from its start */
			c->head = c->tail = sizeof(struct chunk);
			if (c->size > CHUNK) {   /* one record's outsize chunk is not kept */
				munmap(c, c->size);
				q->first = q->last = NULL;
			}
		}
	}
	pthread_mutex_unlock(&q->mu);
}

size_t bt_recq_bytes(struct bt_recq *q)
{
	pthread_mutex_lock(&q->mu);
	size_t n = q->bytes;
	pthread_mutex_unlock(&q->mu);
	return n;
}

size_t bt_recq_peak(struct bt_recq *q)
{
	pthread_mutex_lock(&q->mu);
	size_t n = q->peak;
	pthread_mutex_unlock(&q->mu);
	return n;
}

uint64_t bt_recq_dropped(struct bt_recq *q)
{
	pthread_mutex_lock(&q->mu);
	uint64_t n = q->dropped;
	pthread_mutex_unlock(&q->mu);
	return n;
}
