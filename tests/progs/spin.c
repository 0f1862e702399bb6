/* spin.c - a process for the capture tests: its main thread spins in a fixed chain of named
 * functions (spin_outer -> spin_middle -> spin_inner) and a second thread lives in read()
 * syscalls, so samples carry user stacks and kernel stacks. Runs for argv[1] seconds (fractions
 * allowed; default 30). */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

__attribute__((noinline)) void spin_inner(void)
{
	for (int i = 0; i < 100000; i++)
		sink += i;
}

__attribute__((noinline)) void spin_middle(void)
{
	spin_inner();
	sink++;
}

__attribute__((noinline)) void spin_outer(void)
{
	spin_middle();
	sink++;
}

static void *reader(void *arg)
{
	static char buf[1 << 16];
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		return arg;
	for (;;)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	return arg;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 30;
	pthread_t t;
	if (pthread_create(&t, NULL, reader, NULL) != 0)
		return 1;
	double end = now_s() + secs;
	while (now_s() < end)
		spin_outer();
	return 0;
}
