/* threads.c - starts three threads that block, then exits the whole group from the main thread
 * while they are alive: four threads exit, one process. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *block(void *arg)
{
	pause();
	return arg;
}

int main(void)
{
	pthread_t t;
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t, NULL, block, NULL) != 0)
			return 1;
	usleep(300000);
	exit(0);
}
