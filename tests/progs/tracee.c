#define _GNU_SOURCE
/* tracee.c - the program `buildtrace trace` tests count: main calls tracee_outer, which calls
 * tracee_hit argv[1] times, and prints how many calls it made (the oracle for trace's counts).
 * With argv[2] "wait" it first prints "ready PID" and waits for SIGUSR1, so a tracer can attach to
 * it with -p before the calls begin. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void tracee_hit(int i)
{
	sink += (unsigned long)i;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) int tracee_outer(int n)
{
	int calls = 0;
	for (int i = 0; i < n; i++, calls++)
		tracee_hit(i);
	return calls;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	if (argc > 2 && !strcmp(argv[2], "wait")) {
		sigset_t set;
		int sig;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	printf("calls: %d\n", tracee_outer(n));
	return 0;
}
