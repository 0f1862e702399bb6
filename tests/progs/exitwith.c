/* exitwith.c - a command for `buildtrace -- COMMAND` tests: main calls exitwith_work until the
 * process has used argv[1] seconds of CPU (fractions allowed), then exits with status argv[2]. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void exitwith_work(void)
{
	for (int i = 0; i < 100000; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	double want = argc > 1 ? atof(argv[1]) : 0.5;
	while (cpu_s() < want)
		exitwith_work();
	return argc > 2 ? atoi(argv[2]) : 0;
}
