/* guestlib.c - a shared library for the in-guest workload, built twice: linked at start
 * (libvmguest.so) and dlopen()ed while buildtrace watches (libvmlate.so, -DLATE), so that both the
 * initial snapshot and a mapping made after attach are checked. */
#include <unistd.h>

#ifdef LATE
#define WORK vmlate_work
#else
#define WORK vmguest_work
#endif

__attribute__((noinline)) unsigned long WORK(unsigned long n)
{
	unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++) {
		acc += (unsigned long)getppid() ^ i;   /* a syscall per round, for kernel stacks */
		__asm__ volatile("" : "+r"(acc));
	}
	return acc;
}
