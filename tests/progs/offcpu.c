/* offcpu.c - threads that each alternate 100 ms of computing (CPU time, however long that takes on
 * a busy machine) with 100 ms blocked: "sleeper" in nanosleep, "reader" in a read on a pipe that
 * "waker" writes to 100 ms after the reader asks (waker sleeps in nanosleep meanwhile). Each thread
 * is named, and each phase is a function of its own, so every blocking stack is told apart.
 *
 *   offcpu [SECONDS]             the threads start at once and run for SECONDS (default: until killed)
 *   offcpu GO SECONDS            they start once the file GO exists (and a tenth of a second more),
 *                                run for SECONDS, and each prints its own accounting as it ends:
 *                                "NAME TID T0 T1 RUN0 RUN1 WAIT0 WAIT1" (CLOCK_MONOTONIC ns, and its
 *                                /proc/thread-self/schedstat's run and run-queue ns at both times)
 * Prints the tids (sleeper reader waker) once the threads run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PHASE_NS 100000000L

static int ask[2], answer[2];
static volatile unsigned long sink;
static pid_t tids[3];
static long end_ns;              /* CLOCK_MONOTONIC: the threads stop here; 0: never */

static long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

struct account {
	long t, run, wait;
};

/* This thread's time now and the kernel's run and run-queue time of it. */
static void account(struct account *a)
{
	char buf[128] = "";
	FILE *f = fopen("/proc/thread-self/schedstat", "re");
	if (!f || !fgets(buf, sizeof(buf), f))
		exit(1);
	fclose(f);
	a->t = mono_ns();
	if (sscanf(buf, "%ld %ld", &a->run, &a->wait) != 2)
		exit(1);
}

static void report(const char *name, const struct account *a)
{
	struct account b;
	account(&b);
	printf("%s %d %ld %ld %ld %ld %ld %ld\n", name, (int)syscall(SYS_gettid), a->t, b.t, a->run, b.run,
	       a->wait, b.wait);
	fflush(stdout);
}

static int going(void)
{
	return !end_ns || mono_ns() < end_ns;
}

static long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

__attribute__((noinline)) static void compute_phase(void)
{
	long end = cpu_ns() + PHASE_NS;
	while (cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i * 2654435761u;
}

__attribute__((noinline)) static void sleep_phase(void)
{
	struct timespec ts = { 0, PHASE_NS };
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void read_phase(void)
{
	char c = 'a';
	if (write(ask[1], &c, 1) != 1 || read(answer[0], &c, 1) != 1)
		exit(1);
}

__attribute__((noinline)) static void wake_phase(void)
{
	char c;
	if (read(ask[0], &c, 1) != 1)
		exit(1);
	struct timespec ts = { 0, PHASE_NS };
	nanosleep(&ts, NULL);
	if (write(answer[1], &c, 1) != 1)
		exit(1);
}

static void *sleeper(void *arg)
{
	prctl(PR_SET_NAME, "sleeper");
	struct account a;
	account(&a);
	tids[0] = (pid_t)syscall(SYS_gettid);
	while (going()) {
		compute_phase();
		sleep_phase();
	}
	report("sleeper", &a);
	return arg;
}

static void *reader(void *arg)
{
	prctl(PR_SET_NAME, "reader");
	struct account a;
	account(&a);
	tids[1] = (pid_t)syscall(SYS_gettid);
	while (going()) {
		compute_phase();
		read_phase();
	}
	report("reader", &a);
	char c = 0;   /* the waker's last round ends too */
	if (write(ask[1], &c, 1) != 1)
		exit(1);
	return arg;
}

static void *waker(void *arg)
{
	prctl(PR_SET_NAME, "waker");
	tids[2] = (pid_t)syscall(SYS_gettid);
	while (going())
		wake_phase();
	return arg;
}

int main(int argc, char **argv)
{
	const char *go = argc > 2 ? argv[1] : NULL;
	double secs = argc > 1 ? atof(argv[argc > 2 ? 2 : 1]) : 0;
	if (go) {
		while (access(go, F_OK) != 0)
			usleep(10000);
		usleep(100000);
	}
	if (go && secs > 0)
		end_ns = mono_ns() + (long)(secs * 1e9);
	pthread_t t[3];
	if (pipe(ask) || pipe(answer) || pthread_create(&t[0], NULL, sleeper, NULL) ||
	    pthread_create(&t[1], NULL, reader, NULL) || pthread_create(&t[2], NULL, waker, NULL))
		return 1;
	while (!tids[0] || !tids[1] || !tids[2])
		usleep(1000);
	printf("%d %d %d\n", tids[0], tids[1], tids[2]);
	fflush(stdout);
	if (go) {
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		pause();   /* the process stays, its threads done, until the session ends */
		return 0;
	}
	if (secs > 0) {
		usleep((useconds_t)(secs * 1e6));
		return 0;
	}
	for (;;)
		pause();
}
