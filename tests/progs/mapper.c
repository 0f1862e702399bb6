/* mapper.c - keeps its mmap lock busy for the capture tests: two threads change page protections
 * in a loop (each change takes the lock for writing) while the main thread maps and unmaps the
 * executable segment of the library argv[1]. Exits after argv[2] seconds (default 30). */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void *flip(void *arg)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (;;) {
		mprotect(p, pg, PROT_READ | PROT_WRITE);
		mprotect(p, pg, PROT_READ);
	}
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int secs = argc > 2 ? atoi(argv[2]) : 30;
	long pg = sysconf(_SC_PAGESIZE);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 1;
	pthread_t t;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t, NULL, flip, NULL) != 0)
			return 1;
	time_t end = time(NULL) + secs;
	while (time(NULL) < end) {
		/* The whole file, then its second page executable over it, as ld.so does. */
		char *base = mmap(NULL, 4 * pg, PROT_READ, MAP_PRIVATE, fd, 0);
		if (base == MAP_FAILED)
			return 1;
		mmap(base + pg, pg, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, pg);
		usleep(1000);
		munmap(base, 4 * pg);
	}
	return 0;
}
