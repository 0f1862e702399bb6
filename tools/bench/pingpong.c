/* pingpong.c - the context-switch-heavy workload of `make bench`'s off-CPU part: two threads pass
 * one byte back and forth over two pipes N times, each blocking in read() until the other writes,
 * so every round trip is two switches off a CPU and two wakeups. Prints the wall and CPU seconds
 * the round trips took. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];

static double now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
static long rounds;

static void *ponger(void *arg)
{
	char c;
	for (long i = 0; i < rounds; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			exit(1);
	return arg;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 100000;
	double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	pthread_t t;
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, ponger, NULL))
		return 1;
	char c = 'x';
	for (long i = 0; i < rounds; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
	pthread_join(t, NULL);
	/* its own wall and CPU seconds: a profiler's start and end are not the workload's */
	printf("%.6f %.6f\n", now(CLOCK_MONOTONIC) - t0, now(CLOCK_PROCESS_CPUTIME_ID) - c0);
	return 0;
}
