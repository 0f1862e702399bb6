/* churnlib.c - the library churnkid dlopens, built without frame pointers: lib_burn -> lib_mid ->
 * lib_leaf, spinning for the CPU time asked. */
#include <time.h>

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) double lib_leaf(double until)
{
	volatile double acc = 0;
	while (cpu_ms() < until)
		for (int i = 0; i < 10000; i++)
			acc += i * 0.5;
	return acc;
}

__attribute__((noinline)) double lib_mid(double until)
{
	return lib_leaf(until) + 1;
}

double lib_burn(double ms)
{
	return lib_mid(cpu_ms() + ms) + 1;
}
