/* inl.c - fixture program for symbol-source and DWARF tests: out-of-line functions with inlined
 * helpers two levels deep, a static function, and a loop that keeps them all alive. With a second
 * argument it repeats the work for that many seconds, for profiles of it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "inl.h"

static inline __attribute__((always_inline)) unsigned fx_step(unsigned x, unsigned k)
{
	unsigned y = fx_round(x, k);
	return y + (unsigned)k * 7u;
}

__attribute__((noinline)) static unsigned fx_local(unsigned x)
{
	return fx_mix(x) * 3u + 1u;
}

__attribute__((noinline)) unsigned fx_outer(unsigned x, unsigned k)
{
	unsigned acc = 0;
	for (unsigned i = 0; i < k; i++)
		acc += fx_step(x + acc, i);
	return acc;
}

__attribute__((noinline)) unsigned fx_caller(unsigned x)
{
	return fx_outer(x, 5) ^ fx_local(x);
}

int main(int argc, char **argv)
{
	unsigned seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 1u;
	if (argc > 2) {
		time_t end = time(NULL) + atoi(argv[2]);
		volatile unsigned sink = 0;
		while (time(NULL) < end)
			for (int i = 0; i < 100000; i++)
				sink += fx_caller(seed++);
	}
	printf("%u\n", fx_caller(seed));
	return 0;
}
