/* hostile.c - a profiled process that chooses hostile text, for the tests of what reaches the
 * operator's terminal, and a map that floods the profiler's memory: its comm is argv[1] (set after
 * exec, any bytes the kernel keeps), and it runs code from anonymous executable memory that its perf
 * map (/tmp/perf-PID.map) names argv[2], for argv[3] seconds (default 30); the map then has argv[4]
 * more lines (default 0), each naming other code with a name of 40 bytes. The map is removed as it
 * exits. */
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
	unsigned long extra = argc > 4 ? strtoul(argv[4], NULL, 10) : 0;
	for (unsigned long i = 0; i < extra; i++)
		fprintf(f, "%lx 10 flood_%034lu\n", 0x100000000000UL + 16 * i, i);
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
