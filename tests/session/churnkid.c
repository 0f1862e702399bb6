/* churnkid.c - a short-lived workload built without frame pointers (-O2 -fomit-frame-pointer), for
 * the stacks a profiler must walk from a process's first sample, and in a library from its first
 * samples after each dlopen:
 *   churnkid burn MS           main -> burn_outer -> burn_mid -> burn_leaf for MS ms of CPU time,
 *                              then exits
 *   churnkid dlopen LIB MS N   N rounds of: dlopen(LIB), main -> dl_round -> lib_burn (-> lib_mid
 *                              -> lib_leaf, churnlib.c) for MS ms of CPU time, dlclose */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) double burn_leaf(double until)
{
	volatile double acc = 0;
	while (cpu_ms() < until)
		for (int i = 0; i < 10000; i++)
			acc += i * 0.5;
	return acc;
}

__attribute__((noinline)) double burn_mid(double until)
{
	return burn_leaf(until) + 1;
}

__attribute__((noinline)) double burn_outer(double ms)
{
	return burn_mid(cpu_ms() + ms) + 1;
}

__attribute__((noinline)) int dl_round(const char *lib, double ms)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	double (*burn)(double) = (double (*)(double))dlsym(h, "lib_burn");
	int r = burn && burn(ms) >= 0 ? 0 : -1;
	dlclose(h);
	return r;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "burn"))
		return burn_outer(atof(argv[2])) < 0;
	if (argc == 5 && !strcmp(argv[1], "dlopen")) {
		double ms = atof(argv[3]);
		for (long i = atol(argv[4]); i > 0; i--)
			if (dl_round(argv[2], ms))
				return 1;
		return 0;
	}
	fprintf(stderr, "usage: churnkid burn MS | churnkid dlopen LIB MS ROUNDS\n");
	return 2;
}
