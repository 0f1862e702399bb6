/* forker.c - on SIGUSR1 starts a thread that exits at once, then forks a child that execs argv[1]
 * (the threads program), waits for it and sleeps on; exits after 30 s. The capture tests use it to
 * see fork, exec and exit records, and that thread exits are not process exits. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void *quick(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigwait(&set, &sig);
	pthread_t t;
	if (pthread_create(&t, NULL, quick, NULL) == 0)
		pthread_join(t, NULL);
	pid_t child = fork();
	if (child == 0) {
		execl(argv[1], argv[1], (char *)NULL);
		_exit(127);
	}
	if (child > 0)
		waitpid(child, NULL, 0);
	sleep(30);
	return 0;
}
