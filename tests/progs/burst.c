#define _GNU_SOURCE
/* burst.c - a workload with a moment in it, for the per-sample outputs: two threads sleep argv[1]
 * ms, then each burns argv[2] ms of its own CPU time (burst_a, burst_b), then the process sleeps
 * argv[3] ms more. The burst's bounds on CLOCK_MONOTONIC (ns, from the first thread's start to the
 * last one's end) are written to the file argv[4] as "START END". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static long burst_ms;
static unsigned long long first_start, last_end;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long long ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void note(unsigned long long start, unsigned long long end)
{
	pthread_mutex_lock(&lock);
	if (!first_start || start < first_start)
		first_start = start;
	if (end > last_end)
		last_end = end;
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void burn(void)
{
	unsigned long long until = ns(CLOCK_THREAD_CPUTIME_ID) + (unsigned long long)burst_ms * 1000000ULL;
	while (ns(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
}

__attribute__((noinline)) void burst_a(void)
{
	unsigned long long start = ns(CLOCK_MONOTONIC);
	burn();
	note(start, ns(CLOCK_MONOTONIC));
}

__attribute__((noinline)) void burst_b(void)
{
	unsigned long long start = ns(CLOCK_MONOTONIC);
	burn();
	note(start, ns(CLOCK_MONOTONIC));
}

static long wait_ms;

static void *thread_b(void *arg)
{
	usleep((useconds_t)wait_ms * 1000);
	burst_b();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	wait_ms = atol(argv[1]);
	burst_ms = atol(argv[2]);
	pthread_t t;
	if (pthread_create(&t, NULL, thread_b, NULL) != 0)
		return 1;
	usleep((useconds_t)wait_ms * 1000);
	burst_a();
	pthread_join(t, NULL);
	FILE *f = fopen(argv[4], "w");
	if (!f)
		return 1;
	fprintf(f, "%llu %llu\n", first_start, last_end);
	fclose(f);
	usleep((useconds_t)atol(argv[3]) * 1000);
	return 0;
}
