/* syscalls.c - a syscall-heavy workload for `make bench`: N calls of getppid(), about the cheapest
 * system call there is, so that whatever a profiler adds to each call shows. */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	for (long i = 0; i < n; i++)
		getppid();
	return 0;
}
