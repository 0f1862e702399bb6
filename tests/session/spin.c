/* spin.c - waits argv[1] seconds (or, when argv[1] is a path, until that file exists), burns argv[2]
 * seconds of its own CPU time, prints the CPU time it used in all, and exits: a workload whose CPU
 * time is known exactly, however loaded the machine. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn(double secs)
{
	volatile unsigned long x = 0;
	double end = cpu_now() + secs;
	while (cpu_now() < end)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * i;
}

int main(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] == '/') {
		for (int i = 0; i < 12000 && access(argv[1], F_OK) != 0; i++)
			usleep(10000);
	} else {
		usleep((useconds_t)(atof(argc > 1 ? argv[1] : "1") * 1e6));
	}
	burn(atof(argc > 2 ? argv[2] : "2"));
	printf("%.6f\n", cpu_now());
	return 0;
}
