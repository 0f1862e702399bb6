/* clockloop.c - asks for the time in a loop, through clock_gettime, whose work is done in the vDSO:
 * the leaf of nearly every sample is there. */
#include <time.h>

__attribute__((noinline)) static long now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_nsec;
}

int main(void)
{
	volatile long sum = 0;
	for (;;)
		sum += now();
}
