/* guestprog.c - the in-guest workload: spins through a linked library for SECONDS seconds and,
 * once the file TRIGGER exists, dlopen()s a second library and spins through it too. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

unsigned long vmguest_work(unsigned long n);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: guestprog SECONDS TRIGGER LIBRARY\n");
		return 2;
	}
	double end = now() + atof(argv[1]);
	unsigned long (*late)(unsigned long) = NULL;
	unsigned long acc = 0;
	while (now() < end) {
		acc += vmguest_work(1000);
		if (!late && access(argv[2], F_OK) == 0) {
			void *h = dlopen(argv[3], RTLD_NOW);
			if (!h) {
				fprintf(stderr, "guestprog: %s\n", dlerror());
				return 1;
			}
			late = (unsigned long (*)(unsigned long))dlsym(h, "vmlate_work");
			if (!late)
				return 1;
			printf("guestprog: loaded %s\n", argv[3]);
			fflush(stdout);
		}
		if (late)
			acc += late(1000);
	}
	return acc == 42;  /* keeps the work from being optimised away */
}
