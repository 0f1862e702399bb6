/* verhost.c - calls verlib_work() until killed (or for argv[2] seconds); argv[1] names the process
 * (its comm), so each process's stacks can be told apart in folded output. */
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

void verlib_work(unsigned n);

__attribute__((noinline)) static void host_loop(double secs)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		verlib_work(100000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (secs <= 0 || (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		prctl(PR_SET_NAME, argv[1]);
	host_loop(argc > 2 ? atof(argv[2]) : 0);
	return 0;
}
