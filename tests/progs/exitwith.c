#define _GNU_SOURCE
/* exitwith.c - a command for `buildtrace -- COMMAND` tests: main calls exitwith_work until the
 * process has used argv[1] seconds of CPU (fractions allowed), then exits with status argv[2].
 * With argv[3] "thread", a second thread named bt-other spins in exitwith_other meanwhile. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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

__attribute__((noinline)) void exitwith_other(void)
{
	for (int i = 0; i < 100000; i++)
		sink += i;
}

static void *other(void *arg)
{
	for (;;)
		exitwith_other();
	return arg;
}

int main(int argc, char **argv)
{
	double want = argc > 1 ? atof(argv[1]) : 0.5;
	pthread_t t;
	if (argc > 3 && !strcmp(argv[3], "thread")) {
		if (pthread_create(&t, NULL, other, NULL) != 0)
			return 1;
		pthread_setname_np(t, "bt-other");
	}
	while (cpu_s() < want)
		exitwith_work();
	return argc > 2 ? atoi(argv[2]) : 0;
}
