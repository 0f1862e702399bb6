/* verlib.c - one library path, two versions (built with -DVER=1 and -DVER=2): each version's hot
 * function has its own name and sits at a different offset, so symbols taken from the wrong version
 * show up as the wrong name. */
#include <stdint.h>

static volatile uint64_t sink;

#if VER == 2
/* Shifts every following function so offsets differ between the versions. */
__attribute__((noinline, used)) void verlib_v2_padding(void)
{
	for (int i = 0; i < 64; i++)
		sink += (uint64_t)i * 0x9e3779b97f4a7c15ULL;
	__asm__ volatile(".skip 4096, 0x90");
}
#define SPIN verlib_spin_v2
#else
#define SPIN verlib_spin_v1
#endif

__attribute__((noinline)) void SPIN(unsigned n)
{
	uint64_t x = sink;
	for (unsigned i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

/* The entry point both versions share. */
__attribute__((noinline)) void verlib_work(unsigned n)
{
	SPIN(n);
}
