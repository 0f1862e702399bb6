/* nofp.c - a program built without frame pointers (-O2 -fomit-frame-pointer) for the unwinding
 * tests: main -> run -> fill_and_sort -> sort_block -> qsort (libc) -> cmp, and main -> run ->
 * fp_layer (nofp_fp.c, built with frame pointers) -> nofp_leaf, back in code without them.
 * Runs argv[1] seconds; with a second argument "vdso", in main -> vdso_loop -> clock_gettime (the
 * vDSO, which is no file) instead; with "signal", in main -> signal_loop -> nofp_leaf with a
 * profiling timer whose handler (on_tick -> tick_work) takes a good part of the time, on top of
 * whatever it interrupted (a shallow stack: the signal frame and all fit in the 8 KiB copied);
 * with "deep", in main -> deep_loop -> descend x DEPTH -> nofp_leaf, a stack of about 28 KiB (with
 * "deep200", a recursion 200 calls deep, about 52 KiB and more frames than the kernel's 127); with
 * "plt PLT_OFF SLOT_OFF", in main -> plt_loop -> rand@plt, spinning in the PLT entry (see plt_loop);
 * with "realign", in main -> realign_loop -> rbx_spin, whose CFA only rbx knows. */
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int fp_layer(int n);

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	for (int i = 0; i < 20; i++)
		x = x * 1.0000001 + 1e-9;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) void sort_block(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
}

__attribute__((noinline)) void fill_and_sort(double *v, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (double)rand_r(&seed) / RAND_MAX;
	sort_block(v, n);
}

__attribute__((noinline)) int nofp_leaf(int n)
{
	volatile double acc = 0;
	for (int i = 0; i < n; i++)
		acc += (double)i * 0.5;
	return (int)acc;
}

__attribute__((noinline)) void run(double secs)
{
	static double v[20000];
	time_t end = time(NULL) + (time_t)secs;
	unsigned s = 1;
	volatile int sink = 0;
	while (time(NULL) < end) {
		fill_and_sort(v, 20000, s++);
		sink += fp_layer(2000000);
	}
}

__attribute__((noinline)) void vdso_loop(double secs)
{
	struct timespec now, end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)secs;
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
}

__attribute__((noinline)) void signal_loop(double secs)
{
	time_t end = time(NULL) + (time_t)secs;
	volatile int sink = 0;
	while (time(NULL) < end)
		sink += nofp_leaf(200000);
}

#define DEPTH 110

/* About 260 bytes of stack per call: DEPTH of them need far more than 8 KiB, and fewer frames
 * than a stack holds (127). */
__attribute__((noinline)) int descend(int n)
{
	volatile char pad[240];
	pad[0] = (char)n;
	if (n == 0)
		return nofp_leaf(200000);
	return descend(n - 1) + pad[0];
}

__attribute__((noinline)) void deep_loop(double secs, int depth)
{
	time_t end = time(NULL) + (time_t)secs;
	volatile int sink = 0;
	while (time(NULL) < end)
		sink += descend(depth);
}

__attribute__((noinline)) void tick_work(void)
{
	volatile double acc = 0;
	for (int i = 0; i < 400000; i++)
		acc += (double)i * 0.25;
}

__attribute__((noinline)) void on_tick(int sig)
{
	(void)sig;
	tick_work();
}

static void leave(int sig)
{
	(void)sig;
	_exit(0);
}

/* Spins in a PLT entry: rand's GOT slot (still unresolved: nothing called rand before) is pointed
 * at rand's own PLT entry, whose jump through the slot then goes to itself, so every sample is in
 * the entry, called from here. plt_off and slot_off: the entry's and the slot's addresses less
 * plt_loop's (objdump tells). Exits after secs of CPU time (a loaded machine only makes it take
 * longer). */
__attribute__((noinline)) void plt_loop(double secs, long plt_off, long slot_off)
{
	const char *base = (const char *)(uintptr_t)plt_loop;
	signal(SIGPROF, leave);
	struct itimerval it = { { 0, 0 }, { (time_t)secs, (long)((secs - (time_t)secs) * 1e6) } };
	setitimer(ITIMER_PROF, &it, NULL);
	*(const void *volatile *)(uintptr_t)(base + slot_off) = base + plt_off;
	rand();
	__asm__ volatile("");  /* a call, not a tail jump: plt_loop stays the caller */
}

/* Spins n times with its stack realigned, its CFA kept in rbx (as -mstackrealign code does) and
 * described so: a walk from inside needs the sampled rbx. */
void rbx_spin(long n);
__asm__(".text\n"
	".globl rbx_spin\n"
	".type rbx_spin, @function\n"
	"rbx_spin:\n"
	".cfi_startproc\n"
	"push %rbx\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset rbx, -16\n"
	"mov %rsp, %rbx\n"
	".cfi_def_cfa_register rbx\n"
	"and $-64, %rsp\n"
	"1: dec %rdi\n"
	"jnz 1b\n"
	"mov %rbx, %rsp\n"
	".cfi_def_cfa_register rsp\n"
	"pop %rbx\n"
	".cfi_def_cfa_offset 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size rbx_spin, .-rbx_spin\n");

__attribute__((noinline)) void realign_loop(double secs)
{
	time_t end = time(NULL) + (time_t)secs;
	while (time(NULL) < end)
		rbx_spin(1000000);
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	if (argc > 2 && !strcmp(argv[2], "signal")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_tick;
		sigaction(SIGPROF, &sa, NULL);
		struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
		setitimer(ITIMER_PROF, &it, NULL);
	}
	if (argc > 2 && !strcmp(argv[2], "vdso"))
		vdso_loop(secs);
	else if (argc > 2 && !strcmp(argv[2], "signal"))
		signal_loop(secs);
	else if (argc > 2 && !strcmp(argv[2], "deep"))
		deep_loop(secs, DEPTH);
	else if (argc > 2 && !strcmp(argv[2], "deep200"))
		deep_loop(secs, 200);
	else if (argc > 2 && !strcmp(argv[2], "realign"))
		realign_loop(secs);
	else if (argc > 2 && !strcmp(argv[2], "plt"))
		plt_loop(secs, argc > 4 ? strtol(argv[3], NULL, 0) : 0, argc > 4 ? strtol(argv[4], NULL, 0) : 0);
	else
		run(secs);
	return 0;
}
