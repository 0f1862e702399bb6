#define _GNU_SOURCE
/* trhost.c - links libtrlib.so (tests/progs/trlib.c): prints "ready PID", waits for SIGUSR1, calls
 * trlib_work argv[1] times and prints how many calls it made (the oracle for trace's counts). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void trlib_work(int i);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&set, &sig);
	for (int i = 0; i < n; i++)
		trlib_work(i);
	printf("calls: %d\n", n);
	return 0;
}
