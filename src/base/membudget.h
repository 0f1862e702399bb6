/* membudget.h - memory whose amount the profiled processes choose (their perf maps, jitdumps, Python
 * code objects), bounded in total across all of them: a holder takes its bytes before it keeps
 * them and gives them back when it frees them; what is refused is counted, never an error. One
 * thread's (the session's). */
#ifndef BT_MEMBUDGET_H
#define BT_MEMBUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct bt_membudget {
	uint64_t max;            /* 0: no bound */
	uint64_t used;
	uint64_t refused;        /* takes refused */
	uint64_t refused_bytes;  /* and the bytes they asked for */
};

/* Whether n more bytes fit; when they do they are counted as used. A NULL budget takes anything. */
bool bt_membudget_take(struct bt_membudget *b, uint64_t n);

/* n bytes already kept, counted whether or not they fit (what a holder learns only once it has
 * read them: the bound is then passed by one such amount at most, as the next take is refused). */
void bt_membudget_charge(struct bt_membudget *b, uint64_t n);

/* n bytes taken earlier are free again. */
void bt_membudget_give(struct bt_membudget *b, uint64_t n);

#endif
