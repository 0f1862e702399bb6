/* dlopener.c - loads a shared library when the capture tests say so.
 *   dlopener LIB now      dlopen(LIB) at once
 *   dlopener LIB signal   dlopen(LIB) on SIGUSR1
 * then calls its btdl_work() until SIGUSR2, which dlclose()s it; exits after 30 s.
 *   dlopener LIB segment  maps only LIB's second page, executable, with nothing mapped where the
 *                         file's first page would be: its ELF header is not in memory. */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int map_segment_only(const char *lib)
{
	long pg = sysconf(_SC_PAGESIZE);
	int fd = open(lib, O_RDONLY);
	if (fd < 0)
		return 1;
	/* Reserve three pages, give back the first two, put the file's page 1 in the third. */
	char *area = mmap(NULL, 3 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || munmap(area, 2 * pg) != 0)
		return 1;
	if (mmap(area + 2 * pg, pg, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, pg) == MAP_FAILED)
		return 1;
	close(fd);
	sleep(30);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (strcmp(argv[2], "segment") == 0)
		return map_segment_only(argv[1]);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (strcmp(argv[2], "signal") == 0) {
		int sig;
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, SIGUSR1);
		sigwait(&one, &sig);
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		return 1;
	unsigned long (*work)(int) = (unsigned long (*)(int))dlsym(h, "btdl_work");
	if (!work)
		return 1;
	time_t end = time(NULL) + 30;
	struct timespec zero = { 0, 0 };
	sigset_t two;
	sigemptyset(&two);
	sigaddset(&two, SIGUSR2);
	while (time(NULL) < end) {
		if (h && sigtimedwait(&two, NULL, &zero) == SIGUSR2) {
			dlclose(h);
			h = NULL;
		}
		if (h)
			work(100000);
		else
			usleep(10000);
	}
	return 0;
}
