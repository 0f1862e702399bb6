/* grow.h - growing an array to hold a number of elements: the capacity doubles from a first size,
 * so appending n elements one by one reallocates O(log n) times. */
#ifndef BT_GROW_H
#define BT_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes *arr (of *cap elements of elem bytes) hold at least need elements, first being the
 * capacity of an empty array: 0, or -ENOMEM (the array as it was). */
static inline int bt_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : first;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

#endif
