/* hostile.c - a profiled process that chooses hostile text, for the tests of what reaches the
 * operator's terminal: its comm is argv[1] (set after exec, any bytes the kernel keeps), and it runs
 * code from anonymous executable memory that its perf map (/tmp/perf-PID.map) names argv[2], for
 * argv[3] seconds (default 30). The map is removed as it exits. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static char map[64];

static void gone(int sig)
{
	unlink(map);
	_exit(128 + sig);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int secs = argc > 3 ? atoi(argv[3]) : 30;
	prctl(PR_SET_NAME, argv[1]);
	/* mov ecx, 65536; 1: dec ecx; jnz 1b; ret */
	static const unsigned char code[] = { 0xb9, 0x00, 0x00, 0x01, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(map, "we");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx %s\n", (unsigned long)p, sizeof(code), argv[2]);
	fclose(f);
	signal(SIGTERM, gone);
	signal(SIGINT, gone);
	void (*jit)(void) = (void (*)(void))p;
	time_t end = time(NULL) + secs;
	while (time(NULL) < end)
		jit();
	unlink(map);
	return 0;
}
