/* unwjobs.c - one worker thread, a queue of jobs in and a queue of results out, an eventfd that
 * says results wait. A table comes from the store when it has a valid one, else from the file,
 * whose build-id is checked first (the file at a path may have been replaced). */
#include "capture/unwjobs.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "elf/buildid.h"

#define WORKER_NICE 5

struct bt_unwjobs {
	struct bt_unwtables_store store;
	bool have_store;
	pthread_t thread;
	bool running;
	bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct bt_unwjob *todo, **todo_tail;
	struct bt_unwjob *done, **done_tail;
	size_t pending;     /* submitted, not taken */
	int efd;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The table of an ELF image in memory (the vDSO: the same image, and build-id, in every process of
 * a kernel). */
static int from_image(struct bt_unwjob *job)
{
	struct bt_elf *be = NULL;
	int err = bt_elf_open_mem(job->image, job->image_len, &be);
	if (!err)
		err = bt_elf_layout(be, &job->lay);
	bt_elf_close(be);
	if (!err)
		err = bt_ehtable_compile_mem(job->image, job->image_len, &job->t);
	return err;
}

static int from_file(struct bt_unwjob *job)
{
	if (job->fd < 0)
		return -ENOENT;
	struct bt_build_id id;
	if (bt_buildid_from_fd(job->fd, &id) != 0 || id.len != job->bid_len || memcmp(id.data, job->bid, id.len))
		return -ESTALE;   /* not (or no longer) the file of that build-id */
	struct bt_elf *be = NULL;
	int err = bt_elf_open_fd(job->fd, &be);
	if (!err)
		err = bt_elf_layout(be, &job->lay);
	bt_elf_close(be);
	if (!err)
		err = bt_ehtable_compile(job->fd, &job->t);
	return err;
}

static void make(struct bt_unwjobs *j, struct bt_unwjob *job)
{
	int r = j->have_store ? j->store.load(j->store.ctx, job->bid, job->bid_len, &job->t, &job->lay) : -ENOENT;
	if (r == 0) {
		job->from_cache = true;
		job->err = 0;
		return;
	}
	job->refused = r == -EBADMSG;
	uint64_t t0 = mono_ns();
	job->err = job->image ? from_image(job) : from_file(job);
	job->compile_ns = mono_ns() - t0;
	if (!job->err && j->have_store)
		job->stored = j->store.save(j->store.ctx, job->bid, job->bid_len, job->path, &job->t, &job->lay) == 0;
}

static void finish(struct bt_unwjobs *j, struct bt_unwjob *job)
{
	if (job->fd >= 0) {
		close(job->fd);
		job->fd = -1;
	}
	job->next = NULL;
	*j->done_tail = job;
	j->done_tail = &job->next;
	uint64_t one = 1;
	ssize_t w = write(j->efd, &one, sizeof(one));
	(void)w;
	pthread_cond_broadcast(&j->cv);
}

/* The next job, NULL when there is none (or the thread is to stop); j->mu held. */
static struct bt_unwjob *next_job(struct bt_unwjobs *j)
{
	struct bt_unwjob *job = j->todo;
	if (job) {
		j->todo = job->next;
		if (!j->todo)
			j->todo_tail = &j->todo;
	}
	return job;
}

static void *worker(void *arg)
{
	struct bt_unwjobs *j = arg;
	/* Compiling a large table takes a CPU for a second: it yields to the thread that reads the
	 * ring buffer, and to the profiled machine's own work. */
	setpriority(PRIO_PROCESS, (id_t)gettid(), WORKER_NICE);
	pthread_mutex_lock(&j->mu);
	for (;;) {
		while (!j->stop && !j->todo)
			pthread_cond_wait(&j->cv, &j->mu);
		if (j->stop)
			break;
		struct bt_unwjob *job = next_job(j);
		pthread_mutex_unlock(&j->mu);
		make(j, job);
		pthread_mutex_lock(&j->mu);
		finish(j, job);
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

int bt_unwjobs_new(const struct bt_unwtables_store *store, struct bt_unwjobs **out)
{
	struct bt_unwjobs *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (j->efd < 0) {
		int err = -errno;
		free(j);
		return err;
	}
	if (store && store->load && store->save) {
		j->store = *store;
		j->have_store = true;
	}
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	j->todo_tail = &j->todo;
	j->done_tail = &j->done;
	*out = j;
	return 0;
}

int bt_unwjobs_start(struct bt_unwjobs *j)
{
	if (!j || j->running)
		return 0;
	int err = pthread_create(&j->thread, NULL, worker, j);
	if (err)
		return -err;
	j->running = true;
	return 0;
}

void bt_unwjobs_submit(struct bt_unwjobs *j, struct bt_unwjob *job)
{
	job->next = NULL;
	pthread_mutex_lock(&j->mu);
	*j->todo_tail = job;
	j->todo_tail = &job->next;
	j->pending++;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

void bt_unwjobs_run_here(struct bt_unwjobs *j)
{
	pthread_mutex_lock(&j->mu);
	struct bt_unwjob *job;
	while (!j->running && (job = next_job(j)) != NULL) {
		pthread_mutex_unlock(&j->mu);
		make(j, job);
		pthread_mutex_lock(&j->mu);
		finish(j, job);
	}
	pthread_mutex_unlock(&j->mu);
}

struct bt_unwjob *bt_unwjobs_take(struct bt_unwjobs *j)
{
	pthread_mutex_lock(&j->mu);
	struct bt_unwjob *job = j->done;
	if (job) {
		j->done = job->next;
		if (!j->done)
			j->done_tail = &j->done;
		j->pending--;
	} else {
		uint64_t v;
		ssize_t r = read(j->efd, &v, sizeof(v));   /* nothing waits: no longer readable */
		(void)r;
	}
	pthread_mutex_unlock(&j->mu);
	return job;
}

int bt_unwjobs_fd(const struct bt_unwjobs *j)
{
	return j ? j->efd : -1;
}

size_t bt_unwjobs_pending(const struct bt_unwjobs *j)
{
	return j ? j->pending : 0;
}

bool bt_unwjobs_wait(struct bt_unwjobs *j, int timeout_ms)
{
	if (!j->running)
		bt_unwjobs_run_here(j);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&j->mu);
	/* pending and none done: one is queued or being made */
	while (!j->done && j->pending && pthread_cond_timedwait(&j->cv, &j->mu, &ts) == 0)
		;
	bool have = j->done != NULL;
	pthread_mutex_unlock(&j->mu);
	return have;
}

void bt_unwjobs_free_job(struct bt_unwjob *job)
{
	if (!job)
		return;
	if (job->fd >= 0)
		close(job->fd);
	bt_ehtable_free(&job->t);
	free(job);
}

static void free_list(struct bt_unwjob *job)
{
	while (job) {
		struct bt_unwjob *next = job->next;
		bt_unwjobs_free_job(job);
		job = next;
	}
}

void bt_unwjobs_free(struct bt_unwjobs *j)
{
	if (!j)
		return;
	if (j->running) {
		pthread_mutex_lock(&j->mu);
		j->stop = true;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		pthread_join(j->thread, NULL);
	}
	free_list(j->todo);
	free_list(j->done);
	close(j->efd);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	free(j);
}
