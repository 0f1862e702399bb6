/* membudget.c - see membudget.h. */
#include "base/membudget.h"

bool bt_membudget_take(struct bt_membudget *b, uint64_t n)
{
	if (!b)
		return true;
	if (b->max && (b->used > b->max || n > b->max - b->used)) {
		b->refused++;
		b->refused_bytes += n;
		return false;
	}
	b->used += n;
	return true;
}

void bt_membudget_give(struct bt_membudget *b, uint64_t n)
{
	if (b)
		b->used = n > b->used ? 0 : b->used - n;
}

void bt_membudget_charge(struct bt_membudget *b, uint64_t n)
{
	if (b)
		b->used += n;
}
